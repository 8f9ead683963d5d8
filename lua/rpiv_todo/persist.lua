-- rpiv_todo.persist: each session's list kept in a file, for hosts that keep no history
-- (an editor restarted without its chat). Plain Lua; the host says where the files go and
-- what keeps lists apart (the working directory). The Neovim front end drives it with
-- `require("rpiv_todo").setup({ persist = true })` in Neovim (rpiv_todo/nvim/persist.lua).
--
--   local persist = require("rpiv_todo.persist")
--   persist.enable({ dir = "/home/me/.local/state/nvim/rpiv_todo", key = "/home/me/project" })
--
-- While enabled:
--   * a session's file is fixed the first time the session is used in this process (or
--     the first event after enabling); enabling again with the same directory (a second
--     setup()) keeps every fixed file, so a :cd never sends a list to another file;
--   * a session starts from its file the first time it is used; a host that then replays
--     its history (or loads a file) replaces that list, and the file with it: replay wins;
--   * the session's core list is bound to the file (`list:bind`), so every tool call that
--     may change it is one transaction in the core: under a lock beside the file
--     (`.<file>.lock`), applied to the newest list there (another editor's, the MCP
--     server's), written atomically, and answered only once saved. The ids in a reply are
--     the ids in the file. A save that fails, or a lock another program holds longer than
--     `wait_ms`, is the call's in-band error (`Error: ...; nothing was changed`), and the
--     list stays as it was;
--   * `check(id)` takes in another program's change for a host that watches the file
--     (Neovim does); the core reads the file only when its generation moved;
--   * a missing file is an empty list. A file whose content is not a list is moved aside to
--     `<file>.unreadable-<time>[-n]`, a name that never replaces another, and the session
--     starts empty. Any other failure (permission, a transient I/O error, not a regular
--     file, too large) leaves the file alone, and each change is refused until it reads;
--   * `shutdown(id)` of a session (the host ended it) removes its file, unless another
--     process changed it since;
--   * a failure never raises into a tool call: the model reads it in the reply, and
--     `on_error(message)` hears it too (once per distinct message); `status().last_error`
--     keeps the last.
--
-- One file per key and session: `<key part>@<id part>.json`. Each part is its text with
-- every byte outside [A-Za-z0-9._-] written as %XX (`/home/me/project`, session
-- `default`: `%2Fhome%2Fme%2Fproject@default.json`); a part longer than its limit
-- (key 120 bytes, id 64 once escaped) is `~` and the SHA-256 of the text in hex. The
-- escaping is one-to-one and never writes `~`, so two keys or ids share a name only if
-- they share a SHA-256. The longest name is 191 bytes. `file_name`, `parse_name`,
-- `key_prefix` and `sha256` are the core's (src/naming.rs, which the MCP server uses), for
-- other Lua code that shares the files.

local M = {}
local H = {}

-- Options of `enable()`.
---@class rpiv_todo.PersistOptions
---@field dir string directory the files go in; it must exist
---@field key string|fun(): string what keeps lists apart (the working directory); read when a session is first used
---@field on_error? fun(message: string) told about failures (a save that failed, a file moved aside)
---@field wait_ms? number how long a call waits for another program's lock, in milliseconds (default 100)

M.defaults = {
  -- The directory the files go in (required; the host creates it).
  dir = nil,
  -- What keeps lists apart: a string, or a function returning one, called when a session
  -- is first used (required).
  key = nil,
  -- Called with a message for each distinct failure; nil: only status() knows.
  on_error = nil,
  -- How long a call waits for another program's lock before it is refused in-band
  -- ("try again"), in milliseconds. An editor's loop waits at most this long.
  wait_ms = 100,
}

H.options = nil -- the options while enabled, nil while disabled
H.paths = {} -- session id -> its file, fixed when the session is first used
H.seen = {} -- session ids that had their chance to be restored in this process
H.lists = {} -- session id -> its core list, bound to its file
H.reported = {} -- messages already passed to on_error
H.last_error = nil
H.stop = nil -- removes the session listener

---@return table
function H.session()
  return require("rpiv_todo.session")
end

-- ---------------------------------------------------------------------------
-- File names
-- ---------------------------------------------------------------------------

-- The names are the core's alone (`core.file_name`, `core.key_prefix`, `core.parse_name`,
-- `core.sha256`: src/naming.rs), which the MCP server uses too, so every program names a
-- list's file by one code. Without the core these raise its "not built" message.

---The naming: the core (rpiv_todo.native; its stand-in raises when the module is missing).
---@return table
function H.naming()
  return require("rpiv_todo.native")
end

---The SHA-256 of {s}, 64 lowercase hex digits.
---@param s string
---@return string
function M.sha256(s)
  return H.naming().sha256(s)
end

---What every file name of {key}'s lists starts with (`<key part>@`).
---@param key string
---@return string
function M.key_prefix(key)
  return H.naming().key_prefix(key)
end

---The file name of session {id}'s list under {key}, the naming other programs share:
---one-to-one up to SHA-256, at most 191 bytes (see the header of persist.lua).
---@param key string
---@param id string
---@return string
function M.file_name(key, id)
  return H.naming().file_name(key, id)
end

---Read a file name written by `file_name`: its key part, its id part and the session id
---(nil when the id was hashed). nil for any other name (temporary files, files moved
---aside).
---@param name string
---@return string|nil key_part
---@return string|nil id_part
---@return string|nil id
function M.parse_name(name)
  return H.naming().parse_name(name)
end

-- ---------------------------------------------------------------------------
-- Reports
-- ---------------------------------------------------------------------------

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

-- ---------------------------------------------------------------------------
-- Paths
-- ---------------------------------------------------------------------------

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
    local key = M.key()
    if key == nil then
      return nil
    end
    path = options.dir .. "/" .. M.file_name(key, id)
    H.paths[id] = path
  end
  return path
end

---The key now (the key function's answer), or nil (reported) when it fails.
---@return string|nil
function M.key()
  local options = H.options
  if options == nil then
    return nil
  end
  local key = options.key
  if type(key) == "function" then
    local ok, k = pcall(key)
    if not ok or type(k) ~= "string" or k == "" then
      H.report("the key function failed: " .. tostring(k))
      return nil
    end
    key = k
  end
  return key
end

---Tie session `id` to `path` (a saved list the user picked whose session id could not be
---read from its name). Only before the session is first used.
---@param id string
---@param path string
function M.adopt(id, path)
  if H.options ~= nil and H.paths[id] == nil then
    H.paths[id] = path
  end
end

-- ---------------------------------------------------------------------------
-- Binding sessions to their files
-- ---------------------------------------------------------------------------

---Pass on what the core noticed about a session's file (a failed save, a file moved aside).
---@param list userdata
function H.drain(list)
  for _, message in ipairs(list:notices()) do
    H.report(message)
  end
end

---Keep session {session}'s list in its file: bind the core list to it, then take in the
---file's list, or, for a session used before persistence was enabled ({own}), write its
---list over the file.
---@param session rpiv_todo.Session
---@param own? boolean
function H.bind(session, own)
  local id = session.id
  local path = M.path(id)
  if path == nil then
    return
  end
  local list = session.list
  list:bind(path, { wait_ms = H.options.wait_ms })
  H.lists[id] = list
  if own then
    list:write()
    H.drain(list)
    return
  end
  local what, err, kind = session:sync()
  if what == nil and kind == "invalid" then
    -- Moved aside by the write, which then saves the empty list in its place.
    list:write()
  elseif what == nil then
    -- The file may hold a good list this process cannot read now: never written over;
    -- every change is refused in-band until it reads again.
    H.report(tostring(err) .. "; session " .. id .. " is not saved until the file reads again")
  end
  H.drain(list)
end

---Take in what another process wrote to session {id}'s file now (a host calls this when
---it sees the file change; the core reads it only when its generation moved). Returns
---what happened: "unchanged", "reloaded", "missing", "unreadable" or "none".
---@param id string
---@return string what "unchanged", "reloaded", "missing", "unreadable", "none"
function M.check(id)
  if H.options == nil or not H.session().exists(id) then
    return "none"
  end
  local session = H.session().get(id)
  if H.lists[id] == nil then
    if H.seen[id] or #session.list > 0 then
      return "none" -- its list replaces the file at its next change (see H.on_event)
    end
    -- A session made, empty, before persistence was enabled (the panel's foreground
    -- session): it starts from its file now, as a new one would.
    H.seen[id] = true
    H.bind(session)
    return H.lists[id] ~= nil and #session.list > 0 and "reloaded" or "none"
  end
  local what, err, kind = session:sync()
  if what == nil then
    if kind ~= "io" and kind ~= "busy" then
      H.report(tostring(err))
    end
    return "unreadable"
  end
  return what
end

---The restore hook of rpiv_todo.session: a new session starts from its file.
---@param session rpiv_todo.Session
function H.restore(session)
  if H.options == nil or H.seen[session.id] then
    return
  end
  H.seen[session.id] = true
  H.bind(session)
end

---@param event string
---@param id string
---@param session rpiv_todo.Session|nil
function H.on_event(event, id, session)
  if H.options == nil then
    return
  end
  if event == "shutdown" then
    H.forget(id)
    return
  end
  if session == nil then
    return
  end
  if not H.seen[id] then
    -- A session used before persistence was enabled keeps its list, which replaces the file.
    H.seen[id] = true
    H.bind(session, true)
    return
  end
  local list = H.lists[id]
  if list ~= nil then
    H.drain(list)
  end
end

---The host ended session `id`: its file goes too, unless another process changed it since
---this one last read or wrote it.
---@param id string
function H.forget(id)
  local list = H.lists[id]
  H.lists[id], H.seen[id] = nil, nil
  if list ~= nil then
    list:unbind(true)
  end
end

-- The checks of enable()'s options (rpiv_todo.options_check): nil when fine.
H.ENABLE_CHECKS = {
  dir = function(v)
    if type(v) ~= "string" or v == "" then
      return "expected the path of an existing directory"
    end
  end,
  key = function(v)
    if type(v) ~= "function" and (type(v) ~= "string" or v == "") then
      return "expected a non-empty string or a function returning one"
    end
  end,
  on_error = function(v)
    if type(v) ~= "function" then
      return "expected a function or nil"
    end
  end,
  wait_ms = function(v)
    if type(v) ~= "number" or v ~= v or v < 0 or v > 60000 then
      return "expected a number of milliseconds from 0 to 60000, or nil"
    end
  end,
}

---What `persist = true` uses (|rpiv_todo-persist|), for other hosts: keep each
---session's list in a file of {opts}.dir, named from {opts}.key and the session id, and
---restore it on the session's first use (a replay wins). Every change is one transaction
---on the file (see the header of persist.lua); {opts}.wait_ms bounds the wait for another
---program's lock (default 100). {opts}.on_error(message) hears of a failed save or a file
---moved aside. Enabling again with the same directory replaces the key function,
---on_error and wait_ms but keeps every session's fixed file; another directory starts over.
---@param opts rpiv_todo.PersistOptions
function M.enable(opts)
  require("rpiv_todo.options_check").check(opts, {
    prefix = "persist.",
    names = { "dir", "key", "on_error", "wait_ms" },
    checks = H.ENABLE_CHECKS,
    nil_checked = { dir = true, key = true },
    required = true,
    not_table = "persist.enable: expected a table of options { dir, key, on_error, wait_ms }",
  })
  local wait_ms = opts.wait_ms
  local dir = opts.dir:gsub("(.)/+$", "%1")
  if H.options ~= nil and H.options.dir == dir then
    H.options.key, H.options.on_error = opts.key, opts.on_error
    if wait_ms ~= nil and wait_ms ~= H.options.wait_ms then
      H.options.wait_ms = wait_ms
      for id, list in pairs(H.lists) do
        list:bind(H.paths[id], { wait_ms = wait_ms })
      end
    end
    return
  end
  M.disable()
  H.options = { dir = dir, key = opts.key, on_error = opts.on_error, wait_ms = wait_ms or M.defaults.wait_ms }
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
  for _, list in pairs(H.lists) do
    pcall(list.unbind, list)
  end
  H.options = nil
  H.paths, H.seen, H.lists, H.reported = {}, {}, {}, {}
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
