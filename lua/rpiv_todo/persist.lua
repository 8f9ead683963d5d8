-- rpiv_todo.persist: each session's list kept in a file, for hosts that keep no history
-- (an editor restarted without its chat). Plain Lua; the host says where the files go and
-- what keeps lists apart (the working directory). The Neovim front end drives it with
-- `require("rpiv_todo.nvim").setup({ persist = true })` (rpiv_todo/nvim/persist.lua).
--
--   local persist = require("rpiv_todo.persist")
--   persist.enable({ dir = "/home/me/.local/state/nvim/rpiv_todo", key = "/home/me/project" })
--
-- While enabled:
--   * a session's file is fixed the first time the session is used in this process (or
--     the first event after enabling); enabling again with the same directory (a second
--     setup()) keeps every fixed file, so a :cd never sends a list to another file;
--   * a session starts from its file the first time it is used (through `session:load`);
--     a host that then replays its history replaces that list, and the replayed list is
--     saved: replay wins;
--   * after every change (a tool call that changed the list, a replay) the list is saved
--     with `core.save`: atomic, the file holds the old list or the new one, whole;
--   * another process may write the same file (a second editor, the MCP server). Before
--     each save the file is read again: when it is no longer the list this process last
--     read or wrote, this process's own changes since then (the calls it acknowledged,
--     kept in a journal) are replayed through the reducer on top of the other list, and
--     that is saved. A task this process created gets the other list's next id when its
--     id was taken meanwhile ("#2 is now #3"), later calls of the journal follow the new
--     ids, and a call that the other list no longer allows is left out; both are reported
--     through on_error, never silent. After the write the file is read back; when yet
--     another writer came in between, the merge runs again. `check(id)` does the same for
--     a host that watches the file (Neovim does): a change made elsewhere is taken in;
--   * a missing file is an empty list. A file whose content is not a list (kind
--     "invalid") is moved aside to `<file>.unreadable-<time>[-n]`, a name that never
--     replaces another, and the session starts empty. Any other failure (permission, a
--     transient I/O error, not a regular file, too large) leaves the file alone: the
--     session starts empty but is not written over it; the next change tries the file
--     again and merges into it once it reads;
--   * `shutdown(id)` of a session (the host ended it) removes its file, unless another
--     process changed it since;
--   * a failure never raises into a tool call: it goes to `on_error(message)`, once per
--     distinct message (merge reports every time), and is kept in `status().last_error`.
--
-- One file per key and session: `<key part>@<id part>.json`. Each part is its text with
-- every byte outside [A-Za-z0-9._-] written as %XX (`/home/me/project`, session
-- `default`: `%2Fhome%2Fme%2Fproject@default.json`); a part longer than its limit
-- (key 120 bytes, id 64 once escaped) is `~` and the SHA-256 of the text in hex. The
-- escaping is one-to-one and never writes `~`, so two keys or ids share a name only if
-- they share a SHA-256. The longest name is 191 bytes. `file_name`, `parse_name`,
-- `key_prefix` and `sha256` are for other programs that share the files (the MCP server).

local M = {}
local H = {}

-- Options of `enable()`.
---@class rpiv_todo.PersistOptions
---@field dir string directory the files go in; it must exist
---@field key string|fun(): string what keeps lists apart (the working directory); read when a session is first used
---@field on_error? fun(message: string) told about failures and merges (a save that failed, an unreadable file, another writer)

M.defaults = {
  -- The directory the files go in (required; the host creates it).
  dir = nil,
  -- What keeps lists apart: a string, or a function returning one, called when a session
  -- is first used (required).
  key = nil,
  -- Called with a message for each distinct failure, and for each merge with another
  -- writer's list; nil: only status() knows.
  on_error = nil,
}

-- Longest escaped key and session id kept readable in a file name; longer ones are hashed.
H.MAX_KEY = 120
H.MAX_ID = 64
-- Merges tried in one save before giving up (each means yet another writer came in).
H.MAX_ROUNDS = 4

H.options = nil -- the options while enabled, nil while disabled
H.paths = {} -- session id -> its file, fixed when the session is first used
H.saved = {} -- session id -> the list's JSON text as last saved or loaded
H.seen = {} -- session ids that had their chance to be restored in this process
H.sync = {} -- session id -> { base, base_state, journal, force } (see H.record)
H.reported = {} -- messages already passed to on_error
H.last_error = nil
H.stop = nil -- removes the session listener
H.quiet = nil -- the session whose list this module is replacing (restore, reload, merge)

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

-- ---------------------------------------------------------------------------
-- File names
-- ---------------------------------------------------------------------------

---@param s string
---@return string
function H.escape(s)
  return (s:gsub("[^A-Za-z0-9._%-]", function(c)
    return string.format("%%%02X", c:byte())
  end))
end

---The SHA-256 of {s}, 64 lowercase hex digits (rpiv_todo.sha256).
---@param s string
---@return string
function M.sha256(s)
  return require("rpiv_todo.sha256")(s)
end

---One part of a file name: the escaped text, or `~` and its SHA-256 when too long.
---@param s string
---@param limit integer
---@return string
function H.part(s, limit)
  local escaped = H.escape(s)
  if #escaped <= limit then
    return escaped
  end
  return "~" .. M.sha256(s)
end

---What every file name of {key}'s lists starts with (`<key part>@`).
---@param key string
---@return string
function M.key_prefix(key)
  return H.part(key, H.MAX_KEY) .. "@"
end

---The file name of session {id}'s list under {key}, the naming other programs share:
---one-to-one up to SHA-256, at most 191 bytes (see the header of persist.lua).
---@param key string
---@param id string
---@return string
function M.file_name(key, id)
  return M.key_prefix(key) .. H.part(id, H.MAX_ID) .. ".json"
end

---Read a file name written by `file_name`: its key part, its id part and the session id
---(nil when the id was hashed). nil for any other name (temporary files, files moved
---aside).
---@param name string
---@return string|nil key_part
---@return string|nil id_part
---@return string|nil id
function M.parse_name(name)
  local key_part, id_part = name:match("^([^@]+)@([^@]+)%.json$")
  if key_part == nil or key_part:sub(1, 1) == "." then
    return nil
  end
  local id = nil
  if id_part:sub(1, 1) ~= "~" then
    id = id_part:gsub("%%(%x%x)", function(hex)
      return string.char(tonumber(hex, 16))
    end)
  end
  return key_part, id_part, id
end

-- ---------------------------------------------------------------------------
-- Reports
-- ---------------------------------------------------------------------------

---@param message string
---@param always? boolean report even when the same message was reported before
function H.report(message, always)
  message = "(rpiv_todo) persist: " .. message
  H.last_error = message
  if H.reported[message] and not always then
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
-- Reading, merging, writing
-- ---------------------------------------------------------------------------

---The sync record of a session: `base` is the list's JSON text as this process last read
---or wrote the file (false: no file; nil: unknown, the file could not be read),
---`base_state` the same list as a state; `journal` the calls this process acknowledged
---since (their params, in order); `force`: the next save replaces the file whole (a
---host's replay or load wins).
---@param id string
---@return table
function H.record(id)
  local rec = H.sync[id]
  if rec == nil then
    rec = { base = nil, base_state = nil, journal = {}, force = false }
    H.sync[id] = rec
  end
  return rec
end

---A state's JSON text, comparable with `list:state_json()`.
---@param state table
---@return string
function H.text(state)
  return H.core().list(state):state_json()
end

---Read the file: the state and its text, `false` when missing; nil, err, kind otherwise.
---@param path string
---@return table|false|nil state
---@return string|nil text_or_err
---@return string|nil kind
function H.read(path)
  local state, err, kind = H.core().load(path)
  if state ~= nil then
    return state, H.text(state)
  end
  if kind == "missing" then
    return false
  end
  return nil, tostring(err), kind
end

---A name beside `path` that no file has yet: `<path>.unreadable-<time>`, then `-2`, ...
---@param path string
---@return string
function H.aside_name(path)
  local base = path .. ".unreadable-" .. os.date("!%Y%m%dT%H%M%SZ")
  local name = base
  for n = 2, 1000 do
    local f = io.open(name, "rb")
    if f == nil then
      return name
    end
    f:close()
    name = base .. "-" .. n
  end
  return name
end

---Move an invalid file aside. True when moved.
---@param path string
---@param err string
---@param id string
---@return boolean
function H.move_aside(path, err, id)
  local aside = H.aside_name(path)
  local moved, why = os.rename(path, aside)
  if moved then
    H.report(err .. "; kept as " .. aside .. ", and session " .. id .. " starts from an empty list")
    return true
  end
  H.report(err .. "; it could not be moved aside (" .. tostring(why) .. "), so session " .. id .. " is not saved")
  return false
end

---Deep copy of plain params (cycles cut: such a call is rejected and never journaled).
---@param v any
---@param depth? integer
---@return any
function H.copy(v, depth)
  if type(v) ~= "table" or (depth or 0) > 70 then
    return v
  end
  local out = {}
  for k, x in pairs(v) do
    out[k] = H.copy(x, (depth or 0) + 1)
  end
  return setmetatable(out, getmetatable(v))
end

---Params with the ids of tasks this process created renamed through `map`.
---@param params table
---@param map table<number, number>
---@return table
function H.remap(params, map)
  local p = H.copy(params)
  if type(p.id) == "number" and map[p.id] then
    p.id = map[p.id]
  end
  for _, field in ipairs({ "blockedBy", "addBlockedBy", "removeBlockedBy" }) do
    local list = p[field]
    if type(list) == "table" then
      for i = 1, #list do
        if map[list[i]] then
          list[i] = map[list[i]]
        end
      end
    end
  end
  return p
end

---Replay this process's journal on `other` (the list another process wrote). Each call is
---first replayed on the base it was made on, which gives the id a create handed out;
---then on the other list, where the id may differ. Later calls follow the new ids.
---@param rec table
---@param other table state
---@return table merged state
---@return string[] renumbered "#3 is now #5"
---@return string[] dropped "update #2: Error: ..."
function H.merge(rec, other)
  local core = H.core()
  local old = core.list(rec.base_state or nil)
  local new = core.list(other)
  local map, renumbered, dropped = {}, {}, {}
  for _, params in ipairs(rec.journal) do
    local before = old:apply(params)
    local echo = type(before.details.params) == "table" and before.details.params or params
    local r = new:apply(H.remap(echo, map))
    local text = r.content and r.content[1] and r.content[1].text or ""
    if r.details.error ~= nil then
      local what = tostring(echo.action)
      if echo.id ~= nil then
        what = what .. " #" .. tostring(echo.id)
      elseif echo.subject ~= nil then
        what = what .. " " .. string.format("%q", tostring(echo.subject))
      end
      dropped[#dropped + 1] = what .. ": " .. text
    elseif echo.action == "create" then
      local was, now = before.details.nextId - 1, r.details.nextId - 1
      if was ~= now then
        map[was] = now
        renumbered[#renumbered + 1] = "#" .. string.format("%d", was) .. " is now #" .. string.format("%d", now)
      end
    end
  end
  return new:state(), renumbered, dropped
end

---Does `list` (a state) still hold every task of `mine` (same id and subject)? Then it was
---written by someone who had read `mine`.
---@param list table
---@param mine table
---@return boolean
function H.includes(list, mine)
  local have = {}
  for _, t in ipairs(list.tasks or {}) do
    have[t.id] = t.subject
  end
  for _, t in ipairs(mine.tasks or {}) do
    if have[t.id] ~= t.subject then
      return false
    end
  end
  return true
end

---Put `state` into the session's list (the panel repaints: the session emits "replayed").
---@param session rpiv_todo.Session
---@param state table
function H.replace(session, state)
  H.quiet = session.id
  pcall(session.replay, session, {
    {
      type = "message",
      message = { role = "toolResult", toolName = "todo", details = { tasks = state.tasks, nextId = state.nextId } },
    },
  })
  H.quiet = nil
end

---Tell the user that another process's list was merged with this one's changes.
---@param id string
---@param path string
---@param rec table
---@param renumbered string[]
---@param dropped string[]
function H.report_merge(id, path, rec, renumbered, dropped)
  local n = #rec.journal
  local parts = {
    path
      .. " was changed by another program since this editor last read it; "
      .. n
      .. (n == 1 and " change" or " changes")
      .. " of session "
      .. id
      .. " made here "
      .. (n == 1 and "was" or "were")
      .. " applied on top of its list",
  }
  if #renumbered > 0 then
    parts[#parts + 1] = "ids taken there: " .. table.concat(renumbered, ", ")
  end
  if #dropped > 0 then
    parts[#parts + 1] = "not possible on that list, left out: " .. table.concat(dropped, "; ")
  end
  H.report(table.concat(parts, "; "), true)
end

---Take the file's list `other` (read as `other_text`) into the session: adopt it when
---nothing was changed here since the base, else merge the journal on top of it.
---@return boolean changed_here the session's list now differs from the file
function H.take(session, rec, path, other, other_text)
  local id = session.id
  if #rec.journal == 0 and not rec.force then
    rec.base, rec.base_state = other_text, other
    H.saved[id] = other_text
    if session.list:state_json() ~= other_text then
      H.replace(session, other)
    end
    return false
  end
  if rec.force then
    return true -- a replay or a host's load wins over the file
  end
  local merged, renumbered, dropped = H.merge(rec, other)
  H.report_merge(id, path, rec, renumbered, dropped)
  rec.base, rec.base_state, rec.journal = other_text, other, {}
  H.replace(session, merged)
  return true
end

---Save a session's list when it changed since the last save or load, merging with what
---another process wrote meanwhile.
---@param session rpiv_todo.Session
function H.save(session)
  local id = session.id
  local path = M.path(id)
  if path == nil then
    return
  end
  local rec = H.record(id)
  local core = H.core()
  for _ = 1, H.MAX_ROUNDS do
    local text = session.list:state_json()
    if H.saved[id] == text and not rec.force then
      return
    end
    local other, other_text, kind = H.read(path)
    if other == nil then
      if kind == "invalid" then
        if not H.move_aside(path, other_text, id) then
          return
        end
        other = false
      else
        -- Unreadable for now (permission, I/O, not a file, too large): never written over.
        H.report(other_text .. "; session " .. id .. " is kept in memory and saved once the file reads again")
        return
      end
    end
    if other ~= false and other_text == text then
      -- The file already holds this list (another process made the same change).
      rec.base, rec.base_state, rec.journal, rec.force = text, other, {}, false
      H.saved[id] = text
      return
    end
    if other ~= false and other_text ~= rec.base then
      H.take(session, rec, path, other, other_text)
      text = session.list:state_json()
    end
    local ok, err = core.save(path, session.list)
    if not ok then
      H.report(tostring(err))
      return
    end
    -- Read back: a writer that renamed its file in between would otherwise go unseen.
    local back, back_text = H.read(path)
    local mine = session.list:state()
    if back ~= nil and (back == false or back_text == text) then
      rec.base, rec.base_state, rec.journal, rec.force = text, mine, {}, false
      H.saved[id] = text
      return
    end
    if back == nil then
      return
    end
    if H.includes(back, mine) then
      -- The other writer read ours first: its list already holds our changes.
      rec.base, rec.base_state, rec.journal, rec.force = text, mine, {}, false
      H.take(session, rec, path, back, back_text)
      return
    end
    -- Our write was replaced by one made without it: merge again on top of that (a
    -- replay's list, forced, is written again).
  end
  H.report(path .. ": other programs kept writing it; session " .. id .. " is saved at its next change")
end

---Take in what another process wrote to session {id}'s file now (a host calls this when
---it sees the file change). Nothing happens when the file holds what this process last
---read or wrote. Returns what happened: "unchanged", "reloaded", "merged", "missing",
---"unreadable" or "none".
---@param id string
---@return string what "unchanged", "reloaded", "merged", "missing", "unreadable", "none"
function M.check(id)
  if H.options == nil or not H.session().exists(id) then
    return "none"
  end
  local path = M.path(id)
  if path == nil then
    return "none"
  end
  local session = H.session().get(id)
  local rec = H.record(id)
  local other, other_text, kind = H.read(path)
  if other == false then
    -- Removed elsewhere (a prune, a session shut down there): the list stays here and is
    -- written again at its next change.
    rec.base, rec.base_state = false, nil
    return "missing"
  end
  if other == nil then
    if kind ~= "io" then
      H.report(other_text)
    end
    return "unreadable"
  end
  if other_text == rec.base then
    return "unchanged"
  end
  if H.take(session, rec, path, other, other_text) then
    H.save(session)
    return "merged"
  end
  return "reloaded"
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
  local rec = H.record(id)
  H.quiet = id
  local called, state, err, kind = pcall(session.load, session, path)
  H.quiet = nil
  if not called then
    H.report(tostring(state))
    return
  end
  if state ~= nil then
    rec.base, rec.base_state = H.text(state), state
    H.saved[id] = rec.base
    return
  end
  if kind == "missing" then
    rec.base, rec.base_state = false, nil
    H.saved[id] = session.list:state_json()
    return
  end
  -- The session starts empty: a call that changes nothing is not a change to save.
  H.saved[id] = session.list:state_json()
  if kind == "invalid" then
    if H.move_aside(path, tostring(err), id) then
      rec.base, rec.base_state = false, nil
    end
    return
  end
  -- Any other failure: the file may hold a good list this process cannot read now. The
  -- session starts empty; its changes are journaled and merged into the file once it reads.
  H.report(tostring(err) .. "; session " .. id .. " starts empty and is saved once the file reads again")
end

---@param event string
---@param id string
---@param session rpiv_todo.Session|nil
---@param params any the call's arguments ("executed")
function H.on_event(event, id, session, params)
  if H.options == nil or H.quiet == id then
    return
  end
  if not H.seen[id] then
    -- A session used before persistence was enabled keeps its list: no restore over it,
    -- and its list replaces the file at the next save.
    H.seen[id] = true
    H.record(id).force = true
  end
  M.path(id) -- the file is fixed at the session's first event
  if event == "executed" and session ~= nil then
    if session.list:state_json() ~= H.saved[id] then
      local journal = H.record(id).journal
      journal[#journal + 1] = H.copy(params)
      H.save(session)
    end
  elseif (event == "replayed" or event == "loaded") and session ~= nil then
    H.record(id).force = true -- the host's list wins over the file
    H.save(session)
  elseif event == "shutdown" then
    H.forget(id)
  end
end

---The host ended session `id`: its file goes too, unless another process changed it since
---this one last read or wrote it.
---@param id string
function H.forget(id)
  local path, rec = H.paths[id], H.sync[id]
  H.saved[id], H.sync[id] = nil, nil
  if path == nil or rec == nil or rec.base == nil then
    return
  end
  local _, text = H.read(path)
  if text ~= nil and text == rec.base then
    os.remove(path)
  end
end

---What `persist = true` uses (|rpiv_todo-persist|), for other hosts: keep each
---session's list in a file of {opts}.dir, named from {opts}.key and the session id, saved
---after every change and restored on the session's first use (a replay wins).
---{opts}.on_error(message) hears of a failed save. Enabling again with the same directory
---replaces the key function and on_error but keeps every session's fixed file and what
---was read; another directory starts over.
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
  local dir = opts.dir:gsub("(.)/+$", "%1")
  if H.options ~= nil and H.options.dir == dir then
    H.options.key, H.options.on_error = opts.key, opts.on_error
    return
  end
  M.disable()
  H.options = { dir = dir, key = opts.key, on_error = opts.on_error }
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
  H.paths, H.saved, H.seen, H.sync, H.reported = {}, {}, {}, {}, {}
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
