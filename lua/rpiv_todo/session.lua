-- rpiv_todo.session: one todo list per agent session, and the lifecycle a host drives.
--
-- Each session wraps its own `core.list()` handle, so one session can never read or change
-- another's tasks. On session start, compaction or a branch change the host hands over its
-- branch entries and the list is rebuilt by replay (the last todo tool result on the
-- branch holds the whole snapshot; a compaction keeps the held list unless the branch's is
-- newer, and hands back the list for the model). Nothing is written to disk unless asked:
-- `session:save(path)` / `session:load(path)` do it on demand, and a restore hook
-- (`set_restore`, used by rpiv_todo.persist) may fill a session when it is created.
-- Listeners (the overlay, persistence) hear about replays, loads, executed calls,
-- shutdowns and foreground changes. Each runs protected: by the time it hears of a call
-- the list has changed, so a failing listener must neither turn that call into an error
-- nor keep the listeners after it (persistence's save) from running. Its error goes to
-- the error reporters (`on_listener_error`), once per listener and message.

---@helptext rpiv_todo-listen-errors
---`require("rpiv_todo").listen(fn)` calls `fn(event, id, session)` after every tool call,
---replay, load, shutdown and foreground change. A listener runs protected: when it raises,
---the tool call it heard about still answers as it would have, and the listeners after it
---(the panel, saving with |rpiv_todo-persist|) still run. The plugin file shows its error
---with |vim.notify()| at WARN level, from the main loop, once per listener and message (a
---listener failing the same way on every call is shown once). Outside Neovim the error is
---dropped unless the host asks for it: `require("rpiv_todo").on_listener_error(function(message,
---info) ... end)` (`info = { event, session, error, listener }`; returns a function that
---removes it).

local M = {}
local H = {}

-- The session a tool call runs in when its context names none; also the foreground
-- session until the host picks another.
M.DEFAULT_ID = "default"

---@type table<string, rpiv_todo.Session>
H.sessions = {}
H.foreground = M.DEFAULT_ID
-- Called with each session as it is created (see M.set_restore); nil: sessions start empty.
---@type fun(session: rpiv_todo.Session)|nil
H.restore = nil

---@return table
function H.core()
  return require("rpiv_todo.native")
end

-- Who hears of the sessions' events (rpiv_todo.session.events).
H.events = require("rpiv_todo.session.events")
H.emit = H.events.emit

---@return table
function H.compaction()
  return require("rpiv_todo.session.compaction")
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

---@class rpiv_todo.Session
---@field id string
---@field list userdata the core list handle (list:apply, list:apply_json, list:state, list:replace)
local Session = {}
Session.__index = Session

---Run one tool call in this session. {by} names its writer ("user" for the user's own
---edits; nil: the session's agent): other writers' next replies say what it changed.
---@param params table|string the tool arguments, as a table or a JSON string
---@param by? string the writer
---@return rpiv_todo.Result
function Session:execute(params, by)
  local result = self.list:apply(params, by)
  H.emit("executed", self.id, self, params)
  return result
end

---Run one tool call in the strict form (`todo.tool({ strict = true })`: nulls for "not
---given", metadata as JSON text), converted by the core and then run like `execute`.
---@param params table|string the tool arguments, as a table or a JSON string
---@return rpiv_todo.Result
function Session:execute_strict(params)
  local result = H.core().from_strict(params, self.list)
  -- Listeners get the call as the result echoes it (`details.params`: the normal form the
  -- core converted it to), without converting it a second time.
  local details = type(result) == "table" and result.details or nil
  H.emit("executed", self.id, self, type(details) == "table" and details.params or nil)
  return result
end

---Run one tool call given and answered as JSON text (the fast path: no Lua tables built).
---@param params_json string
---@param by? string the writer (see `execute`)
---@return string result_json
function Session:execute_json(params_json, by)
  local out = self.list:apply_json(params_json, by)
  H.emit("executed", self.id, self, params_json)
  return out
end

---Rebuild the list from the host's branch entries (array of tables, or a JSON string).
---@param entries table|string
---@return rpiv_todo.State
function Session:replay(entries)
  return H.adopt(self, H.core().replay(entries))
end

---Make {state} (a replay's result) the session's list and tell the listeners.
---@param session rpiv_todo.Session
---@param state rpiv_todo.State
---@return rpiv_todo.State
function H.adopt(session, state)
  session.list:replace(state)
  H.emit("replayed", session.id, session)
  return state
end

---Take in another program's change to the file this session's list is bound to
---(rpiv_todo.persist binds it): "unchanged", "reloaded" (listeners hear "reloaded"),
---"missing", or nil, the error and its kind.
---@return string|nil what
---@return string|nil err
---@return string|nil kind
function Session:sync()
  local what, err, kind = self.list:sync()
  if what == "reloaded" then
    H.emit("reloaded", self.id, self)
  end
  return what, err, kind
end

---The current snapshot `{ tasks, nextId }`.
---@return rpiv_todo.State
function Session:state()
  return self.list:state()
end

---`core.save` for a session (`require("rpiv_todo").session(id)`): true, or nil and the
---error. The file holds the old list or the new one, whole, whatever happens during the
---write. The directory must exist.
---@param path string
---@return true|nil ok
---@return string|nil err names the path and what went wrong
---@return rpiv_todo.FileFailure|nil kind what kind of failure (see core.load)
function Session:save(path)
  return H.core().save(path, self.list)
end

---`core.load` for a session: replace its list with the one saved at {path} and return
---the state, or nil and the error; a failed load (missing, unreadable or malformed file,
---a list that breaks the rules) leaves the list as it was.
---@param path string
---@return rpiv_todo.State|nil state
---@return string|nil err names the path and what is wrong
---@return rpiv_todo.FileFailure|nil kind "missing", "not_file", "too_large", "io" or "invalid"
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

-- Lifecycle: the host calls these with its branch entries; a session start and a branch
-- change rebuild by replay, a compaction keeps the held list unless the branch's is newer.

---@param id string
---@param entries table|string
---@return rpiv_todo.State
function M.on_session_start(id, entries)
  return M.get(id):replay(entries or {})
end

---@class rpiv_todo.CompactionMessage
---@field role "toolResult"
---@field toolName "todo"
---@field content { type: "text", text: string }[] the list in compact form, for the model
---@field details { tasks: rpiv_todo.Task[], nextId: integer } the whole list (replay reads it)

---The host compacted session `id`'s conversation. {entries} is the branch as it is now
---(an array of entries or JSON text, as for `on_session_start`; nil: none). The list the
---session holds stays unless the branch's last todo result is the same list or a newer
---one (then the branch is replayed): a branch that lost the todo results, or kept only
---older ones, empties or rolls back nothing.
---
---Returns the message that puts the list back in the model's view, or nil when the list
---has no task: `{ role = "toolResult", toolName = "todo", content = { { type = "text",
---text } }, details = { tasks, nextId } }`. `text` is the compact form (the counts, then
---each open task's id, subject, status and blockers); render it into the model's context
---once, as a user or system message (no tool call answers it), and keep that message as it
---is in later requests. `details` is the whole list, shaped as replay reads a todo result:
---a host that keeps the message on its branch as `{ type = "message", message = <it> }`
---rebuilds every task from it on a reload.
---@param id string
---@param entries? table|string
---@return rpiv_todo.CompactionMessage|nil
function M.on_compaction(id, entries)
  local session = M.get(id)
  local core = H.core()
  local branch = core.replay(entries or {})
  -- Nothing held and nothing on the branch: no replay (it would only announce an empty list).
  local empty = #session.list == 0 and #branch.tasks == 0
  if not empty and H.compaction().newer(session.list, branch) then
    H.adopt(session, branch)
  end
  local state = session:state()
  if #state.tasks == 0 then
    return nil
  end
  return {
    role = "toolResult",
    toolName = "todo",
    content = { { type = "text", text = H.compaction().compact_text(state) } },
    details = { tasks = state.tasks, nextId = state.nextId },
  }
end

---A snapshot from a state table, a session (anything with `:state()`), or nil for the
---foreground session. Anything else raises `(rpiv_todo) <what>: expected ...`.
---@param source any
---@param what string the caller's name in the error
---@return rpiv_todo.State
function M.state_of(source, what)
  if source == nil then
    return M.foreground():state()
  end
  if type(source) == "table" and type(source.state) == "function" then
    return source:state()
  end
  if type(source) ~= "table" then
    error("(rpiv_todo) " .. what .. ": expected a state { tasks, nextId }, a session or nil, got " .. type(source), 0)
  end
  return source
end

-- Chat front ends (adapters) and what they tell a UI: which session each chat buffer
-- shows, and when a new turn starts. Both are session events, so an adapter needs no
-- front end: a UI that listens (the Neovim panel) follows them.

-- name -> fun(bufnr): id|nil, the chat front ends that said which session a buffer shows.
---@type table<string, fun(bufnr: integer): string|nil>
H.chats = {}

---Let a chat front end name the session of its chat buffers: `lookup(bufnr)` returns the
---session id of the chat in that buffer, or nil for a buffer that is not one of its
---chats (nil {lookup} removes the front end's). Listeners hear `("chat", name)`.
---@param name string the front end ("codecompanion", "avante", ...)
---@param lookup fun(bufnr: integer): string|nil
function M.register_chat(name, lookup)
  if type(name) ~= "string" or (lookup ~= nil and type(lookup) ~= "function") then
    error("(rpiv_todo) register_chat: expected a name and a function(bufnr) or nil", 0)
  end
  H.chats[name] = lookup
  H.emit("chat", name, nil)
end

---The session of the chat shown in buffer `bufnr`, when a chat front end knows it.
---@param bufnr integer
---@return string|nil
function M.chat_session(bufnr)
  for _, lookup in pairs(H.chats) do
    local ok, id = pcall(lookup, bufnr)
    if ok and type(id) == "string" and id ~= "" then
      return id
    end
  end
  return nil
end

---Does any chat front end name the sessions of its buffers?
---@return boolean
function M.has_chats()
  return next(H.chats) ~= nil
end

---A new agent turn began in session {id} (nil: in every session). Listeners hear
---`("turn_started", id)` (id nil for every session): a UI hides the completed tasks it
---already showed.
---@param id? string
function M.turn_started(id)
  if id ~= nil then
    id = H.check_id(id, "turn_started")
  end
  H.emit("turn_started", id, nil)
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

-- Listening: `listen(fn)` and `on_listener_error(fn)` (rpiv_todo.session.events).
M.listen = H.events.listen
M.on_listener_error = H.events.on_listener_error

---Drop every session, listener and error reporter (tests; a host reloading its config
---from scratch). The chat front ends' registrations stay: each registers once, when its
---tool is made.
function M.reset()
  H.sessions = {}
  H.foreground = M.DEFAULT_ID
  H.events.reset()
  H.restore = nil
end

return M
