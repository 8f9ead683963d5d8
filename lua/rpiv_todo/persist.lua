-- rpiv_todo.persist: each session's list kept in a file, for hosts that keep no history
-- (an editor restarted without its chat). Plain Lua; the host says where the files go and
-- what keeps lists apart (the working directory). The Neovim front end drives it with
-- `require("rpiv_todo.nvim").setup({ persist = true })` (rpiv_todo/nvim/persist.lua).
--
--   local persist = require("rpiv_todo.persist")
--   persist.enable({ dir = "/home/me/.local/state/nvim/rpiv_todo", key = "/home/me/project" })
--
-- While enabled:
--   * a session starts from its file the first time it is used in this process (through
--     `session:load`); a host that then replays its history replaces that list, and the
--     replayed list is saved: replay wins;
--   * after every change (a tool call that changed the list, a replay) the list is saved
--     with `core.save`: atomic, the file holds the old list or the new one, whole;
--   * a file that exists but cannot be read as a list is never overwritten: it is moved
--     aside to `<file>.unreadable` (and reported), and the session starts empty;
--   * a failure never raises into a tool call: it goes to `on_error(message)`, once per
--     distinct message, and is kept in `status().last_error`.
-- One file per key and session: `<key>@<session id>.json`, with every byte outside
-- [A-Za-z0-9._-] written as %XX (`/home/me/project`, session `default`:
-- `%2Fhome%2Fme%2Fproject@default.json`); a name longer than 200 bytes keeps its end and
-- a hash of the whole.

local M = {}
local H = {}

-- Options of `enable()`.
---@class rpiv_todo.PersistOptions
---@field dir string directory the files go in; it must exist
---@field key string|fun(): string what keeps lists apart (the working directory); read when a session is first used
---@field on_error? fun(message: string) told about failures (a save that failed, an unreadable file)

M.defaults = {
  -- The directory the files go in (required; the host creates it).
  dir = nil,
  -- What keeps lists apart: a string, or a function returning one, called when a session
  -- is first used (required).
  key = nil,
  -- Called with a message for each distinct failure; nil: only status() knows.
  on_error = nil,
}

-- Longest file name written (most filesystems allow 255 bytes).
H.MAX_NAME = 200

H.options = nil -- the options while enabled, nil while disabled
H.paths = {} -- session id -> its file, fixed when the session is first used
H.saved = {} -- session id -> the list's JSON text as last saved or loaded
H.seen = {} -- session ids that had their chance to be restored in this process
H.kept_out = {} -- session ids whose unreadable file could not be moved aside: never saved
H.reported = {} -- messages already passed to on_error
H.last_error = nil
H.stop = nil -- removes the session listener
H.restoring = nil -- the session whose file the restore hook is loading

---@return table
function H.core()
  return require("rpiv_todo.native")
end

---@return table
function H.session()
  return require("rpiv_todo.session")
end

---@param key string
---@param expected string
function H.fail(key, expected)
  error("(rpiv_todo) persist." .. key .. ": " .. expected, 0)
end

---@param s string
---@return string
function H.escape(s)
  return (s:gsub("[^A-Za-z0-9._%-]", function(c)
    return string.format("%%%02X", c:byte())
  end))
end

-- djb2 modulo 2^32: exact in Lua 5.1's doubles as in 5.4's integers.
---@param s string
---@return string eight hex digits
function H.hash(s)
  local h = 5381
  for i = 1, #s do
    h = (h * 33 + s:byte(i)) % 4294967296
  end
  return string.format("%08x", h)
end

---The file name of session `id`'s list under `key`.
---@param key string
---@param id string
---@return string
function M.file_name(key, id)
  local name = H.escape(key) .. "@" .. H.escape(id)
  if #name > H.MAX_NAME then
    name = H.hash(key .. "\0" .. id) .. "~" .. name:sub(-(H.MAX_NAME - 9))
  end
  return name .. ".json"
end

---@param message string
function H.report(message)
  message = "(rpiv_todo) persist: " .. message
  H.last_error = message
  if H.reported[message] then
    return
  end
  H.reported[message] = true
  local on_error = H.options and H.options.on_error
  if on_error ~= nil then
    pcall(on_error, message)
  end
end

---The file session {id}'s list is saved to (fixed when the session is first used;
---default: the foreground session), or nil while disabled.
---@param id? string defaults to the foreground session
---@return string|nil
function M.path(id)
  local options = H.options
  if options == nil then
    return nil
  end
  if id == nil then
    id = H.session().foreground_id()
  end
  id = tostring(id)
  local path = H.paths[id]
  if path == nil then
    local key = options.key
    if type(key) == "function" then
      local ok, k = pcall(key)
      if not ok or type(k) ~= "string" then
        H.report("the key function failed: " .. tostring(k))
        return nil
      end
      key = k
    end
    path = options.dir .. "/" .. M.file_name(key, id)
    H.paths[id] = path
  end
  return path
end

---The restore hook of rpiv_todo.session: a new session starts from its file.
---@param session rpiv_todo.Session
function H.restore(session)
  local id = session.id
  if H.options == nil or H.seen[id] then
    return
  end
  H.seen[id] = true
  local path = M.path(id)
  if path == nil then
    return
  end
  H.restoring = id
  local called, state, err = pcall(session.load, session, path)
  H.restoring = nil
  if not called then
    H.report(tostring(state))
    return
  end
  if state ~= nil or tostring(err):sub(-#": no such file") == ": no such file" then
    return -- restored, or nothing saved yet for this directory and session
  end
  local aside = path .. ".unreadable"
  local moved, why = os.rename(path, aside)
  if moved then
    H.report(tostring(err) .. "; kept as " .. aside .. ", and session " .. id .. " starts empty")
  else
    H.kept_out[id] = true
    H.report(
      tostring(err) .. "; it could not be moved aside (" .. tostring(why) .. "), so session " .. id .. " is not saved"
    )
  end
end

---Save a session's list when it changed since the last save or load.
---@param session rpiv_todo.Session
function H.save(session)
  local id = session.id
  if H.kept_out[id] then
    return
  end
  local path = M.path(id)
  if path == nil then
    return
  end
  local text = session.list:state_json()
  if H.saved[id] == text then
    return
  end
  local ok, err = H.core().save(path, session.list)
  if ok then
    H.saved[id] = text
  else
    H.report(tostring(err))
  end
end

---@param event string
---@param id string
---@param session rpiv_todo.Session|nil
function H.on_event(event, id, session)
  if H.options == nil then
    return
  end
  -- A session used before persistence was enabled keeps its list: no restore over it.
  H.seen[id] = true
  if event == "executed" or event == "replayed" then
    H.save(session)
  elseif event == "loaded" and session ~= nil then
    if H.restoring == id then
      H.saved[id] = session.list:state_json() -- the list is the file: nothing to write
    else
      H.save(session) -- the host loaded another file: a change like any other
    end
  elseif event == "shutdown" then
    H.saved[id] = nil
  end
end

---What `persist = true` uses (|rpiv_todo-persist|), for other hosts: keep each
---session's list in a file of {opts}.dir, named from {opts}.key and the session id, saved
---after every change and restored on the session's first use (a replay wins).
---{opts}.on_error(message) hears of a failed save. Enabling again replaces the options.
---@param opts rpiv_todo.PersistOptions
function M.enable(opts)
  if type(opts) ~= "table" then
    H.fail("enable", "expected a table of options { dir, key, on_error }")
  end
  for k in pairs(opts) do
    if k ~= "dir" and k ~= "key" and k ~= "on_error" then
      H.fail(tostring(k), "unknown option (expected dir, key, on_error)")
    end
  end
  if type(opts.dir) ~= "string" or opts.dir == "" then
    H.fail("dir", "expected the path of an existing directory")
  end
  if type(opts.key) ~= "function" and (type(opts.key) ~= "string" or opts.key == "") then
    H.fail("key", "expected a non-empty string or a function returning one")
  end
  if opts.on_error ~= nil and type(opts.on_error) ~= "function" then
    H.fail("on_error", "expected a function or nil")
  end
  M.disable()
  H.options = {
    dir = (opts.dir:gsub("(.)/+$", "%1")),
    key = opts.key,
    on_error = opts.on_error,
  }
  local session = H.session()
  session.set_restore(H.restore)
  H.stop = session.listen(H.on_event)
end

---Stop: nothing more is read or written (the files stay).
function M.disable()
  if H.stop ~= nil then
    H.stop()
    H.stop = nil
  end
  if H.options ~= nil then
    H.session().set_restore(nil)
  end
  H.options = nil
  H.paths, H.saved, H.seen, H.kept_out, H.reported = {}, {}, {}, {}, {}
  H.last_error = nil
end

---@class rpiv_todo.PersistStatus
---@field enabled boolean
---@field dir string|nil
---@field files table<string, string> session id -> file, for the sessions used so far
---@field last_error string|nil

---What persistence is doing, for |:checkhealth| and |:Todos-file|: `{ enabled, dir,
---files, last_error }`, `files` mapping each session used so far to its file.
---@return rpiv_todo.PersistStatus
function M.status()
  local files = {}
  for id, path in pairs(H.paths) do
    files[id] = path
  end
  return {
    enabled = H.options ~= nil,
    dir = H.options and H.options.dir or nil,
    files = files,
    last_error = H.last_error,
  }
end

return M
