-- rpiv_todo.session: one todo list per agent session, and the lifecycle a host drives.
--
-- Each session wraps its own `core.list()` handle, so one session can never read or change
-- another's tasks. On session start, compaction or a branch change the host hands over its
-- branch entries and the list is rebuilt by replay (the last todo tool result on the
-- branch holds the whole snapshot). Nothing is written to disk unless asked:
-- `session:save(path)` / `session:load(path)` do it on demand, and a restore hook
-- (`set_restore`, used by rpiv_todo.persist) may fill a session when it is created.
-- Listeners (the overlay, persistence) hear about replays, loads, executed calls,
-- shutdowns and foreground changes.

local M = {}
local H = {}

-- The session a tool call runs in when its context names none; also the foreground
-- session until the host picks another.
M.DEFAULT_ID = "default"

---@type table<string, rpiv_todo.Session>
H.sessions = {}
H.foreground = M.DEFAULT_ID
---@type fun(event: rpiv_todo.SessionEvent, id: string, session: rpiv_todo.Session?)[]
H.listeners = {}
-- Called with each session as it is created (see M.set_restore); nil: sessions start empty.
---@type fun(session: rpiv_todo.Session)|nil
H.restore = nil

---@return table
function H.core()
  return require("rpiv_todo.native")
end

---@param id any
---@param what string
---@return string
function H.check_id(id, what)
  if type(id) == "number" then
    return tostring(id)
  end
  if type(id) ~= "string" or id == "" then
    error("(rpiv_todo) " .. what .. ": expected a non-empty string session id, got " .. type(id), 0)
  end
  return id
end

---@param event rpiv_todo.SessionEvent
---@param id string
---@param session rpiv_todo.Session?
---@param params any the call's arguments, for "executed"
function H.emit(event, id, session, params)
  local listeners = H.listeners
  for i = 1, #listeners do
    listeners[i](event, id, session, params)
  end
end

---@class rpiv_todo.Session
---@field id string
---@field list userdata the core list handle (list:apply, list:apply_json, list:state, list:replace)
local Session = {}
Session.__index = Session

---Run one tool call in this session.
---@param params table|string the tool arguments, as a table or a JSON string
---@return rpiv_todo.Result
function Session:execute(params)
  local result = self.list:apply(params)
  H.emit("executed", self.id, self, params)
  return result
end

---Run one tool call given and answered as JSON text (the fast path: no Lua tables built).
---@param params_json string
---@return string result_json
function Session:execute_json(params_json)
  local out = self.list:apply_json(params_json)
  H.emit("executed", self.id, self, params_json)
  return out
end

---Rebuild the list from the host's branch entries (array of tables, or a JSON string).
---@param entries table|string
---@return rpiv_todo.State
function Session:replay(entries)
  local state = H.core().replay(entries)
  self.list:replace(state)
  H.emit("replayed", self.id, self)
  return state
end

---The current snapshot `{ tasks, nextId }`.
---@return rpiv_todo.State
function Session:state()
  return self.list:state()
end

---Save the list to `path`, atomically: the file holds the old list or the new one, whole,
---whatever happens during the write. The directory must exist.
---@param path string
---@return true|nil ok
---@return string|nil err names the path and what went wrong
function Session:save(path)
  return H.core().save(path, self.list)
end

---Replace the list with the one saved at `path`. On failure (missing, unreadable or
---malformed file, a list that breaks the rules) the list is unchanged.
---@param path string
---@return rpiv_todo.State|nil state
---@return string|nil err names the path and what is wrong
---@return string|nil kind what kind of failure (core.load's: "missing", "not_file", "too_large", "io", "invalid")
function Session:load(path)
  local state, err, kind = H.core().load(path)
  if state == nil then
    return nil, err, kind
  end
  self.list:replace(state)
  H.emit("loaded", self.id, self)
  return state
end

---The session for `id`, created empty on first use.
---@param id? string defaults to "default"
---@return rpiv_todo.Session
function M.get(id)
  if id == nil then
    id = M.DEFAULT_ID
  end
  id = H.check_id(id, "session")
  local session = H.sessions[id]
  if session == nil then
    session = setmetatable({ id = id, list = H.core().list(nil) }, Session)
    H.sessions[id] = session
    local restore = H.restore
    if restore ~= nil then
      -- A failing hook must not break the tool call that created the session.
      pcall(restore, session)
    end
  end
  return session
end

---Set the hook that fills each session as it is created (rpiv_todo.persist restores the
---saved list with `session:load`); nil removes it. A host that replays history replaces
---whatever the hook loaded: replay wins.
---@param fn fun(session: rpiv_todo.Session)|nil
function M.set_restore(fn)
  if fn ~= nil and type(fn) ~= "function" then
    error("(rpiv_todo) set_restore: expected a function or nil", 0)
  end
  H.restore = fn
end

---Does a list exist for `id` (without creating one)?
---@param id string
---@return boolean
function M.exists(id)
  return H.sessions[H.check_id(id, "session")] ~= nil
end

---Name the session the UI shows, or read it. Returns the foreground session.
---@param id? string
---@return rpiv_todo.Session
function M.foreground(id)
  if id ~= nil then
    id = H.check_id(id, "foreground")
    if id ~= H.foreground then
      H.foreground = id
      H.emit("foreground", id, M.get(id))
    end
  end
  return M.get(H.foreground)
end

---The foreground session's id.
---@return string
function M.foreground_id()
  return H.foreground
end

-- Lifecycle: the host calls these with its branch entries; all three rebuild by replay.

---@param id string
---@param entries table|string
---@return rpiv_todo.State
function M.on_session_start(id, entries)
  return M.get(id):replay(entries or {})
end

---@param id string
---@param entries table|string
---@return rpiv_todo.State
function M.on_compaction(id, entries)
  return M.get(id):replay(entries or {})
end

---@param id string
---@param entries table|string
---@return rpiv_todo.State
function M.on_branch_change(id, entries)
  return M.get(id):replay(entries or {})
end

---Forget the session's list (the host's session ended). A later `get(id)` starts empty.
---@param id string
function M.shutdown(id)
  id = H.check_id(id, "shutdown")
  if H.sessions[id] ~= nil then
    H.sessions[id] = nil
    H.emit("shutdown", id, nil)
  end
end

---Listen to session events: fn(event, id, session, params) with event one of "executed"
---(params: the call's arguments, a table or JSON text), "replayed", "loaded"
---(session:load), "shutdown", "foreground". Returns a function that removes the listener.
---@param fn fun(event: rpiv_todo.SessionEvent, id: string, session: rpiv_todo.Session?)
---@return fun()
function M.listen(fn)
  if type(fn) ~= "function" then
    error("(rpiv_todo) listen: expected a function", 0)
  end
  return require("rpiv_todo.common").add_listener(H.listeners, fn)
end

---Drop every session and listener (tests; a host reloading its config from scratch).
function M.reset()
  H.sessions = {}
  H.foreground = M.DEFAULT_ID
  H.listeners = {}
  H.restore = nil
end

return M
