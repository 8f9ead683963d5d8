-- rpiv_todo.nvim.persist: the editor's side of keeping lists on disk.
--
--   require("rpiv_todo.nvim").setup({ persist = true })
--     each session's list is saved after every change to stdpath("state")/rpiv_todo/,
--     one file per working directory and session, and restored when the session is first
--     used in a new Neovim, unless the host replays its history for it (replay wins);
--     persist = false (the default) reads and writes nothing
--   :Todos file         where the shown session's list is saved (and whether it exists)
--   :Todos sessions     the saved lists of this directory, to pick one
--   :Todos prune [days] remove saved lists not changed for that long
--
-- The files are written by rpiv_todo.persist through core.save: atomically, so a crash
-- or a kill at any moment leaves the old list or the new one, whole. The working
-- directory is Neovim's global one (:cd; a :tcd or :lcd does not change it), read when a
-- session is first used.
-- The `persist` option (rpiv_todo.nvim.options) calls `apply`; the :Todos subcommands
-- (rpiv_todo.nvim.commands) call `file_report`, `sessions_command` and `prune_command`;
-- health.lua calls `health(report)`.

local M = {}
local H = {}

H.cwd = nil -- Neovim's global working directory, kept current by DirChanged
H.augroup = "RpivTodoPersist"

---@param msg string
---@param level integer
function H.notify(msg, level)
  vim.notify(msg, level, { title = require("rpiv_todo.nvim.options").config.notify_title })
end

---Is `path` absolute (/x, or C:\x and C:/x on Windows)?
---@param path string
---@return boolean
function H.absolute(path)
  return path:sub(1, 1) == "/" or path:match("^%a:[/\\]") ~= nil
end

---The directory the lists go in: stdpath("state")/rpiv_todo. Neovim 0.7 has no "state"
---path; there it is the one 0.8 and later use ($XDG_STATE_HOME/nvim, else
---~/.local/state/nvim), so an upgrade finds the same files. A relative XDG_STATE_HOME is
---ignored, as the XDG spec says (Neovim would put the lists inside the project).
---@return string
function M.dir()
  local ok, state = pcall(vim.fn.stdpath, "state")
  if not ok or type(state) ~= "string" or not H.absolute(state) then
    local xdg = os.getenv("XDG_STATE_HOME")
    if xdg == nil or not H.absolute(xdg) then
      xdg = (os.getenv("HOME") or "") .. "/.local/state"
    end
    state = xdg .. "/nvim"
  end
  return state .. "/rpiv_todo"
end

-- How the file of this directory's lists is watched for other programs' changes:
-- "auto" (vim.uv fs_event on the directory, polling every 500 ms where that cannot
-- start), "poll", or "off". Set before setup() (tests use "poll" and "off").
M.watch_method = "auto"
-- How often the poll looks, in milliseconds.
M.poll_interval = 500

---@return table
function H.uv()
  return vim.uv or vim.loop
end

---Turn persistence on or off (the `persist` option's apply). A second setup() keeps the
---files sessions already use (rpiv_todo.persist keeps them when the directory is the same).
---@param on boolean
---@param config? table the front end's config (persist_max_age_days)
function M.apply(on, config)
  local persist = require("rpiv_todo.persist")
  if config ~= nil then
    H.max_age_days = config.persist_max_age_days
  end
  if not on then
    pcall(vim.api.nvim_del_augroup_by_name, H.augroup)
    H.unwatch()
    persist.disable()
    return
  end
  local first = not persist.status().enabled
  local dir = M.dir()
  -- mkdir() raises on failure in some versions and returns 0 in others; a directory that
  -- cannot be made shows up as a failed save, reported by on_error.
  pcall(vim.fn.mkdir, dir, "p")
  H.cwd = vim.fn.getcwd(-1, -1)
  -- Tool calls may come from a luv callback, where vim.fn is off limits: the key is read
  -- from this cache, kept current on the main loop.
  local group = vim.api.nvim_create_augroup(H.augroup, { clear = true })
  vim.api.nvim_create_autocmd("DirChanged", {
    group = group,
    pattern = "global",
    callback = function()
      H.cwd = vim.fn.getcwd(-1, -1)
    end,
  })
  vim.api.nvim_create_autocmd("VimLeavePre", { group = group, callback = H.unwatch })
  persist.enable({
    dir = dir,
    key = function()
      return H.cwd
    end,
    on_error = function(message)
      vim.schedule(function()
        H.notify(message, vim.log.levels.WARN)
      end)
    end,
  })
  H.watch(dir)
  if first then
    M.show_recent()
    vim.schedule(H.auto_prune)
  end
end

-- ---------------------------------------------------------------------------
-- Saved lists: this directory's, the most recent one, the picker
-- ---------------------------------------------------------------------------

---@class rpiv_todo.SavedList
---@field path string
---@field name string
---@field id string the session it belongs to (a stand-in when its id was hashed)
---@field mtime integer seconds
---@field state? table the list, once read
---@field open? integer pending and in progress
---@field done? integer completed
---@field total? integer not deleted

---The names in `dir` (files only; nothing when it cannot be read).
---@param dir string
---@return string[]
function H.scan(dir)
  local out = {}
  local handle = H.uv().fs_scandir(dir)
  if handle == nil then
    return out
  end
  while true do
    local name, kind = H.uv().fs_scandir_next(handle)
    if name == nil then
      break
    end
    if kind == nil or kind == "file" then
      out[#out + 1] = name
    end
  end
  return out
end

---The saved lists of this working directory, newest first (not read yet).
---@return rpiv_todo.SavedList[]
function M.saved_lists()
  local persist = require("rpiv_todo.persist")
  local status = persist.status()
  local key = persist.key()
  if not status.enabled or key == nil then
    return {}
  end
  local prefix = persist.key_prefix(key)
  local out = {}
  for _, name in ipairs(H.scan(status.dir)) do
    if name:sub(1, #prefix) == prefix then
      local _, id_part, id = persist.parse_name(name)
      if id_part ~= nil then
        local path = status.dir .. "/" .. name
        local stat = H.uv().fs_stat(path)
        if stat ~= nil and stat.type == "file" then
          out[#out + 1] = {
            path = path,
            name = name,
            id = id or ("saved-" .. id_part:sub(2, 13)),
            hashed = id == nil,
            mtime = stat.mtime.sec,
          }
        end
      end
    end
  end
  table.sort(out, function(a, b)
    if a.mtime ~= b.mtime then
      return a.mtime > b.mtime
    end
    return a.name < b.name
  end)
  return out
end

---Read a saved list and count its tasks; false when it cannot be read.
---@param item rpiv_todo.SavedList
---@return boolean
function H.read(item)
  local state = require("rpiv_todo.native").load(item.path)
  if state == nil then
    return false
  end
  local open, done, total, title = 0, 0, 0, nil
  for _, t in ipairs(state.tasks or {}) do
    if t.status ~= "deleted" then
      total = total + 1
    end
    if t.status == "pending" or t.status == "in_progress" then
      open = open + 1
      title = title or t.subject
    elseif t.status == "completed" then
      done = done + 1
    end
  end
  item.state, item.open, item.done, item.total, item.title = state, open, done, total, title
  return true
end

---Show session `item.id` (restored from its file on first use) in the panel and :Todos.
---@param item rpiv_todo.SavedList
---@param pin boolean keep the panel on it (a pick) or follow the next tool call (startup)
function H.show(item, pin)
  local persist = require("rpiv_todo.persist")
  if item.hashed then
    persist.adopt(item.id, item.path)
  end
  local nv = require("rpiv_todo.nvim")
  require("rpiv_todo.session").get(item.id)
  if pin then
    nv.foreground(item.id)
  else
    nv.follow(item.id)
  end
end

---At startup: the most recently changed list of this working directory that has
---unfinished tasks shows in the panel (and in :Todos); the front end's next call in that
---session continues it. When there is none, the default session's list shows if it
---exists. Returns the session shown, or nil.
---@return string|nil
function M.show_recent()
  local session = require("rpiv_todo.session")
  if session.exists(session.foreground_id()) then
    return nil -- a session in use (persist turned on late) keeps the panel
  end
  for _, item in ipairs(M.saved_lists()) do
    if H.read(item) and item.open > 0 then
      if not session.exists(item.id) then
        H.show(item, false)
      end
      return item.id
    end
  end
  local id = session.foreground_id()
  local path = require("rpiv_todo.persist").path(id)
  if not session.exists(id) and path ~= nil and H.uv().fs_stat(path) ~= nil then
    session.get(id)
    return id
  end
  return nil
end

---One line of the :Todos sessions picker.
---@param item rpiv_todo.SavedList
---@return string
function M.format_item(item)
  local title = item.title or "(nothing open)"
  title = require("rpiv_todo.native").sanitize(title)
  if vim.fn.strchars(title) > 60 then
    title = vim.fn.strcharpart(title, 0, 59) .. "…"
  end
  return string.format(
    "%s · %d/%d done, %d open · %s · session %s",
    title,
    item.done,
    item.total,
    item.open,
    os.date("%Y-%m-%d %H:%M", item.mtime),
    vim.fn.strtrans(item.id)
  )
end

---:Todos sessions: pick one of this directory's saved lists (vim.ui.select); the chosen
---one shows in the panel and the list window, pinned (`foreground(nil)` follows tool
---calls again).
function M.sessions_command()
  if not require("rpiv_todo.persist").status().enabled then
    H.notify(
      ':Todos sessions: lists are not saved to disk (require("rpiv_todo.nvim").setup({ persist = true }) keeps them)',
      vim.log.levels.INFO
    )
    return
  end
  local items = {}
  for _, item in ipairs(M.saved_lists()) do
    if H.read(item) then
      items[#items + 1] = item
    end
  end
  if #items == 0 then
    H.notify(":Todos sessions: no saved lists for " .. tostring(H.cwd), vim.log.levels.INFO)
    return
  end
  vim.ui.select(
    items,
    { prompt = "rpiv_todo: saved lists of " .. tostring(H.cwd), format_item = M.format_item },
    function(item)
      if item == nil then
        return
      end
      H.show(item, true)
      require("rpiv_todo.nvim").todos()
    end
  )
end

-- ---------------------------------------------------------------------------
-- The state directory's policy: ended sessions go (rpiv_todo.persist), old lists go
-- ---------------------------------------------------------------------------

H.max_age_days = 30
H.PRUNE_STAMP = ".last-prune"

---Is `name` one of ours (a list, or a list moved aside as unreadable)?
---@param name string
---@return boolean
function H.ours(name)
  if require("rpiv_todo.persist").parse_name(name) ~= nil then
    return true
  end
  return name:match("^[^.].*%.json%.unreadable%-[%dTZ%-]+$") ~= nil
end

-- What a save killed before its rename left beside a list (`.<name>.<6 random>.tmp`);
-- removed by the prune once older than this (a save takes milliseconds).
H.STALE_TEMPORARY = 3600

---Is `name` a temporary file a killed save left?
---@param name string
---@return boolean
function H.temporary(name)
  return name:match("^%..+%.json%.%w%w%w%w%w%w%.tmp$") ~= nil
end

---Remove the saved lists (of every directory) not changed for `days` days, except those of
---sessions open in this editor, and temporary files killed saves left. Returns how many
---lists were removed and kept.
---@param days number
---@return integer removed
---@return integer kept
function M.prune(days)
  local persist = require("rpiv_todo.persist")
  local status = persist.status()
  local dir = status.dir or M.dir()
  local live = {}
  for _, path in pairs(status.files) do
    live[path] = true
  end
  local limit = os.time() - days * 86400
  local removed, kept = 0, 0
  for _, name in ipairs(H.scan(dir)) do
    if H.temporary(name) then
      local stat = H.uv().fs_stat(dir .. "/" .. name)
      if stat ~= nil and stat.type == "file" and os.time() - stat.mtime.sec > H.STALE_TEMPORARY then
        os.remove(dir .. "/" .. name)
      end
    elseif H.ours(name) then
      local path = dir .. "/" .. name
      local stat = H.uv().fs_stat(path)
      if stat ~= nil and stat.type == "file" and stat.mtime.sec < limit and not live[path] then
        if os.remove(path) then
          removed = removed + 1
        else
          kept = kept + 1
        end
      else
        kept = kept + 1
      end
    end
  end
  return removed, kept
end

---At startup, at most once a day: prune with the persist_max_age_days limit (0: never).
function H.auto_prune()
  local days = H.max_age_days
  if type(days) ~= "number" or days <= 0 then
    return
  end
  local dir = require("rpiv_todo.persist").status().dir
  if dir == nil then
    return
  end
  local stamp = dir .. "/" .. H.PRUNE_STAMP
  local stat = H.uv().fs_stat(stamp)
  if stat ~= nil and os.time() - stat.mtime.sec < 86400 then
    return
  end
  pcall(M.prune, days)
  local f = io.open(stamp, "w")
  if f ~= nil then
    f:write(os.date("!%Y-%m-%dT%H:%M:%SZ"), "\n")
    f:close()
  end
end

---:Todos prune [days]: remove saved lists not changed for that many days (default: the
---persist_max_age_days option, 30).
---@param rest string
function M.prune_command(rest)
  local days = H.max_age_days
  if rest ~= "" then
    days = rest:match("^%d+$") and tonumber(rest) or nil
    if days == nil then
      H.notify(":Todos prune: expected a number of days, e.g. :Todos prune 30, got " .. rest, vim.log.levels.WARN)
      return
    end
  end
  if type(days) ~= "number" or days <= 0 then
    days = 30
  end
  local removed, kept = M.prune(days)
  H.notify(
    string.format(
      ":Todos prune: removed %d saved %s not changed for %d days (%d kept) in %s",
      removed,
      removed == 1 and "list" or "lists",
      days,
      kept,
      require("rpiv_todo.persist").status().dir or M.dir()
    ),
    vim.log.levels.INFO
  )
end

-- ---------------------------------------------------------------------------
-- Watching: another program's change reaches the panel within a second
-- ---------------------------------------------------------------------------

H.watcher = nil -- { event = uv fs_event handle or nil, timer = uv timer or nil, dir, sigs }

---The sessions to watch: every one with a file, the shown one and this directory's
---"default" (the session an agent outside the editor, the MCP server, writes).
---@return table<string, string> id -> path
function H.watched()
  local persist = require("rpiv_todo.persist")
  local files = persist.status().files
  local session = require("rpiv_todo.session")
  for _, id in ipairs({ session.foreground_id(), session.DEFAULT_ID }) do
    if files[id] == nil then
      files[id] = persist.path(id)
    end
  end
  return files
end

---A file's identity now (changes with every write: a save renames a new file in).
---@param path string
---@return string
function H.signature(path)
  local stat = H.uv().fs_stat(path)
  if stat == nil then
    return "-"
  end
  return table.concat({ stat.mtime.sec, stat.mtime.nsec or 0, stat.size, stat.ino or 0 }, ":")
end

---Session `id`'s file changed: take it in (a session not used yet here is restored from
---it), and the panel follows it like the session of a tool call, unless one is pinned.
---Our own saves change the file too; those come back "unchanged".
---@param id string
function H.changed(id)
  local persist = require("rpiv_todo.persist")
  local session = require("rpiv_todo.session")
  if session.exists(id) then
    local what = persist.check(id)
    if what == "reloaded" then
      require("rpiv_todo.nvim").follow(id)
    end
    return
  end
  local path = persist.path(id)
  if path ~= nil and H.uv().fs_stat(path) ~= nil then
    session.get(id) -- restored from the file
    require("rpiv_todo.nvim").follow(id)
  end
end

---The session a file of this working directory belongs to (adopting a hashed one), or nil.
---@param name string
---@return string|nil
function H.session_of(name)
  local persist = require("rpiv_todo.persist")
  local key = persist.key()
  if key == nil then
    return nil
  end
  local prefix = persist.key_prefix(key)
  if name:sub(1, #prefix) ~= prefix then
    return nil
  end
  local _, id_part, id = persist.parse_name(name)
  if id_part == nil then
    return nil
  end
  if id == nil then
    id = "saved-" .. id_part:sub(2, 13)
    persist.adopt(id, persist.status().dir .. "/" .. name)
  end
  return id
end

---Look at the watched files (on the main loop).
---@param name? string the file name an fs_event reported; nil: every watched file
function H.look(name)
  local w = H.watcher
  if w == nil or not require("rpiv_todo.persist").status().enabled then
    return
  end
  local watched = H.watched()
  -- fs_event names the file: any list of this directory, even one not used here yet.
  local named = name and H.session_of(name)
  if named ~= nil and watched[named] == nil then
    watched[named] = require("rpiv_todo.persist").path(named)
  end
  local session = require("rpiv_todo.session")
  for id, path in pairs(watched) do
    if name == nil or path:sub(-#name - 1) == "/" .. name then
      -- A session bound to its file asks the core, which compares generations (a change
      -- that keeps size and mtime is seen); the signature only finds new files.
      local sig = session.exists(id) and "bound" or H.signature(path)
      if sig == "bound" or sig ~= w.sigs[id] then
        w.sigs[id] = sig
        local ok, err = pcall(H.changed, id)
        if not ok then
          H.notify("(rpiv_todo) persist: " .. tostring(err), vim.log.levels.WARN)
        end
      end
    end
  end
end

---Start watching `dir` (again: the previous watch stops).
---@param dir string
function H.watch(dir)
  if H.watcher ~= nil and H.watcher.dir == dir then
    return
  end
  H.unwatch()
  if M.watch_method == "off" then
    return
  end
  local uv = H.uv()
  local w = { dir = dir, sigs = {} }
  for id, path in pairs(H.watched()) do
    w.sigs[id] = H.signature(path)
  end
  H.watcher = w
  if M.watch_method ~= "poll" and uv.new_fs_event ~= nil then
    local handle = uv.new_fs_event()
    if handle ~= nil then
      local pending = {}
      local ok = handle:start(dir, {}, function(err, name)
        if err ~= nil then
          return
        end
        local k = name or ""
        if pending[k] then
          return
        end
        pending[k] = true
        vim.schedule(function()
          pending[k] = nil
          H.look(name)
        end)
      end)
      if ok then
        w.event = handle
        w.method = "fs_event"
        return
      end
      pcall(handle.close, handle)
    end
  end
  local timer = uv.new_timer()
  w.timer = timer
  w.method = "poll"
  timer:start(M.poll_interval, M.poll_interval, function()
    vim.schedule(function()
      H.look(nil)
    end)
  end)
end

---Stop watching.
function H.unwatch()
  local w = H.watcher
  H.watcher = nil
  if w == nil then
    return
  end
  for _, handle in ipairs({ w.event or false, w.timer or false }) do
    if handle then
      pcall(function()
        if handle.stop then
          handle:stop()
        end
        handle:close()
      end)
    end
  end
end

---How the directory is watched now: "fs_event", "poll" or nil (not watched).
---@return string|nil
function M.watching()
  return H.watcher and H.watcher.method or nil
end

---The text of :Todos file.
---@return string text
---@return integer level
function M.file_report()
  local persist = require("rpiv_todo.persist")
  local session = require("rpiv_todo.session")
  local id = session.foreground_id()
  local status = persist.status()
  if not status.enabled then
    return 'lists are not saved to disk (require("rpiv_todo.nvim").setup({ persist = true }) keeps them across restarts); the UI language is saved to '
      .. tostring(require("rpiv_todo.i18n").locale_file()),
      vim.log.levels.INFO
  end
  local path = persist.path(id)
  local lines = {}
  if path == nil then
    lines[1] = "session " .. id .. ": no file (" .. tostring(status.last_error) .. ")"
  else
    local exists = (vim.uv or vim.loop).fs_stat(path) ~= nil
    lines[1] = "session " .. id .. ": " .. path .. (exists and "" or " (not written yet: no change so far)")
  end
  if status.last_error ~= nil then
    lines[#lines + 1] = "last failure: " .. status.last_error
  end
  return table.concat(lines, "\n"), status.last_error and vim.log.levels.WARN or vim.log.levels.INFO
end

---The persistence section of :checkhealth rpiv_todo. Never raises: a core that cannot
---answer (a stale build) is a warning here, the library section says why.
---@param report table start/ok/info/warn/error
function M.health(report)
  report.start("rpiv_todo: files")
  local ok, err = pcall(H.health, report)
  if not ok then
    report.warn("the files could not be checked: " .. tostring(err))
  end
end

---The state directory's lists (and lists kept aside): how many, their bytes, and how many
---are this working directory's.
---@param dir string
---@return integer count
---@return integer bytes
---@return integer lists
function M.usage(dir)
  local count, bytes = 0, 0
  for _, name in ipairs(H.scan(dir)) do
    local stat = H.ours(name) and H.uv().fs_stat(dir .. "/" .. name)
    if stat and stat.type == "file" then
      count = count + 1
      bytes = bytes + stat.size
    end
  end
  return count, bytes, #M.saved_lists()
end

---@param bytes integer
---@return string
function H.size(bytes)
  if bytes < 1024 then
    return bytes .. " B"
  elseif bytes < 1024 * 1024 then
    return string.format("%.1f KiB", bytes / 1024)
  end
  return string.format("%.1f MiB", bytes / 1024 / 1024)
end

---@param report table
function H.health(report)
  local persist = require("rpiv_todo.persist")
  local status = persist.status()
  if status.enabled then
    report.ok("lists are saved after every change in " .. tostring(status.dir))
    local path = persist.path(require("rpiv_todo.session").foreground_id())
    if path ~= nil then
      local exists = (vim.uv or vim.loop).fs_stat(path) ~= nil
      report.info("this directory's list: " .. path .. (exists and "" or " (not written yet)"))
    end
    local count, bytes, lists = M.usage(status.dir)
    report.info(
      string.format(
        "state directory: %d %s, %s in all (%d saved %s of this directory; lists not changed for %s days are removed, :Todos prune)",
        count,
        count == 1 and "list" or "lists",
        H.size(bytes),
        lists,
        lists == 1 and "list" or "lists",
        tostring(H.max_age_days)
      )
    )
    local watching = M.watching()
    report.info(
      watching and ("other programs' changes to these lists are followed (" .. watching .. ")")
        or "other programs' changes are not watched; each change here still starts from the newest list in the file"
    )
    if status.last_error ~= nil then
      report.warn(status.last_error, { "check that the directory exists and is writable" })
    end
  else
    report.info(
      'lists are not saved to disk (persist = false); require("rpiv_todo.nvim").setup({ persist = true }) keeps them across restarts in '
        .. M.dir()
    )
  end
  local file = require("rpiv_todo.i18n").locale_file()
  report.info(":TodosLanguage saves the UI language to " .. tostring(file))
end

return M
