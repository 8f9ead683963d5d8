-- rpiv_todo.nvim.persist: the editor's side of keeping lists on disk.
--
--   require("rpiv_todo").setup({ persist = true })
--     each session's list is saved after every change to stdpath("state")/rpiv_todo/,
--     one file per working directory and session, and restored when the session is first
--     used in a new Neovim, unless the host replays its history for it (replay wins);
--     persist = false (the default) reads and writes nothing
--   :Todos file         where the shown session's list is saved (and whether it exists)
--   :Todos sessions, :Todos prune [days]   rpiv_todo.nvim.saved
--
-- The files are written by rpiv_todo.persist through core.save: atomically, so a crash
-- or a kill at any moment leaves the old list or the new one, whole. The working
-- directory is Neovim's global one (:cd; a :tcd or :lcd does not change it), read when a
-- session is first used.
-- rpiv_todo.nvim.setup calls `apply` for the `persist` option; :Todos file
-- (rpiv_todo.nvim.commands) calls `file_report`; health.lua calls `health(report)`.

---@helptext rpiv_todo-persist verbatim
--- With `require("rpiv_todo").setup({ persist = true })` each session's
--- list is saved after every change to a file under
--- `stdpath("state")/rpiv_todo/` (Neovim 0.7: `$XDG_STATE_HOME/nvim/rpiv_todo/`,
--- the same place; a relative $XDG_STATE_HOME is ignored, as the XDG spec says,
--- and ~/.local/state is used), one file per working directory (the global
--- one, |:cd|) and session: `%2Fhome%2Fme%2Fproject@default.json` for session
--- "default" in /home/me/project. A directory or session id too long for a
--- file name (120 and 64 bytes once escaped) is written as `~` and its
--- SHA-256, so two sessions never share a file. |:Todos-file| and
--- |:checkhealth| show the file.
---
--- A session's file is fixed when the session is first used: a |:cd| or a
--- second `setup()` later does not move it (new sessions take the new
--- directory). A session's list is restored from its file the first time the
--- session is used in a new Neovim, unless the front end replays the chat's
--- history for it: replay wins, and the replayed list is saved.
---
--- Restarts. At startup the most recently changed list of this directory that
--- still has unfinished tasks shows in the panel and in |:Todos|; the front
--- end's next call in that session (the same chat) continues it. Other saved
--- lists are a |:Todos-sessions| away.
---
--- Two editors, or an editor and the MCP server. Both may use the same file.
--- Every change is one transaction in the core: it takes a lock on a file
--- beside the list (`.<file>.lock`), reads the list again when another
--- program wrote it since (a generation number in the file says so, whatever
--- its size and time), applies the call to that newest list, writes it
--- atomically, releases the lock, and only then answers. The ids in a reply
--- are the ids in the file; nothing acknowledged on either side is lost,
--- undone or renumbered. A lock held by another program for more than 100 ms
--- (`wait_ms`), or a save that fails, is the call's error ("... nothing was
--- changed; try again"): the model reads it, a notification says it, and the
--- list stays as it was. No Lua code runs while the lock is held, and the
--- system releases it when a process dies. On NFS the lock holds only where
--- the server runs a lock manager.
--- Besides, the files are watched (`vim.uv` fs events, polling every 500 ms
--- where those cannot start): when another program changes a list of this
--- directory, the list is reloaded (parsed in the core, only when its
--- generation moved) and the panel follows it within a second, as it follows
--- the session of a tool call (unless a session is pinned). The poll looks at
--- the sessions in use here, the shown one and "default" (the MCP server's);
--- fs events see any list of this directory. Fs events cannot start when the
--- kernel's inotify limits are used up (EMFILE, ENOSPC); `:checkhealth
--- rpiv_todo` then says "poll" and why.
---
--- Files that are not what they should be. A missing file is an empty list. A
--- file whose content is not a list (empty, truncated, not JSON, breaking the
--- list's rules) is moved aside to `<file>.unreadable-<UTC time>` (`-2`, `-3`
--- when that name is taken: an earlier one is never replaced), the session
--- starts empty, and a notification says so. Any other failure (permission,
--- too many open files, an I/O error, a directory or a pipe at the path, a
--- file too large to be a list) leaves the file where it is, never written
--- over: each change is refused in-band until it reads again. A save that
--- fails (a full disk, a directory that is not writable) is an error reply
--- and one notification; nothing is claimed that the file does not hold.
---
--- Each save is atomic: a temporary file beside the target is written, synced
--- and renamed over it, so a crash or a kill at any moment leaves the old list
--- or the new one, whole, never a mix.
---
--- The state directory. A session the front end ends
--- (`require("rpiv_todo").shutdown(id)`) takes its file with it, unless
--- another program changed it since. Lists not changed for
--- `persist_max_age_days` (30) days are removed at startup (at most once a
--- day; the lists of sessions open in this editor stay), and |:Todos-prune|
--- does it on demand. |:checkhealth| counts the lists and their size.

local M = {}
local H = {}

H.cwd = nil -- Neovim's global working directory, kept current by DirChanged
H.augroup = "RpivTodoPersist"

---@param msg string
---@param level integer
function H.notify(msg, level)
  vim.notify(msg, level, { title = require("rpiv_todo.nvim.options").config.notify_title })
end

-- How the file of this directory's lists is watched for other programs' changes:
-- "auto" (vim.uv fs_event on the directory, polling every 500 ms where that cannot
-- start), "poll", or "off". Set before setup() (tests use "poll" and "off").
M.watch_method = "auto"
-- How often the poll looks, in milliseconds.
M.poll_interval = 500

---The directory the lists go in (rpiv_todo.nvim.saved.dir).
M.dir = require("rpiv_todo.nvim.saved").dir

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
    require("rpiv_todo.nvim.saved").max_age_days = config.persist_max_age_days
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
  -- cannot be made shows up as a failed save, reported by on_error. 0700 (448): the
  -- file names spell out project paths, which other users have no business reading.
  pcall(vim.fn.mkdir, dir, "p", 448)
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
    local saved = require("rpiv_todo.nvim.saved")
    saved.show_recent()
    vim.schedule(saved.auto_prune)
  end
end

-- ---------------------------------------------------------------------------
-- Watching: another program's change reaches the panel within a second
-- ---------------------------------------------------------------------------

H.watcher = nil -- { event = uv fs_event handle or nil, timer = uv timer or nil, dir, sigs, method, why }

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
      require("rpiv_todo.nvim.frontend").follow(id)
    end
    return
  end
  local path = persist.path(id)
  if path ~= nil and H.uv().fs_stat(path) ~= nil then
    session.get(id) -- restored from the file
    require("rpiv_todo.nvim.frontend").follow(id)
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
  if M.watch_method ~= "poll" then
    local handle, err = nil, "this luv has no fs_event"
    if uv.new_fs_event ~= nil then
      handle, err = uv.new_fs_event()
    end
    if handle ~= nil then
      local pending = {}
      local ok, start_err = handle:start(dir, {}, function(event_err, name)
        if event_err ~= nil then
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
      err = tostring(start_err)
      pcall(handle.close, handle)
    end
    -- The kernel may refuse a watch (EMFILE or ENOSPC once inotify's per-user limits are
    -- used up): polling still follows the other programs, and health says why.
    w.why = err
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

---How the directory is watched now: "fs_event", "poll" or nil (not watched); with
---"poll" under watch_method "auto", also why fs_event could not start.
---@return string|nil method
---@return string|nil why
function M.watching()
  local w = H.watcher
  if w == nil then
    return nil
  end
  return w.method, w.why
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
    return 'lists are not saved to disk (require("rpiv_todo").setup({ persist = true }) keeps them across restarts); the UI language is saved to '
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
    local saved = require("rpiv_todo.nvim.saved")
    local count, bytes, lists = saved.usage(status.dir)
    report.info(
      string.format(
        "state directory: %d %s, %s in all (%d saved %s of this directory; lists not changed for %s days are removed, :Todos prune)",
        count,
        count == 1 and "list" or "lists",
        saved.size(bytes),
        lists,
        lists == 1 and "list" or "lists",
        tostring(saved.max_age_days)
      )
    )
    local watching, why = M.watching()
    report.info(
      watching
          and ("other programs' changes to these lists are followed (" .. watching .. (why and (": fs_event could not start, " .. why) or "") .. ")")
        or "other programs' changes are not watched; each change here still starts from the newest list in the file"
    )
    if status.last_error ~= nil then
      report.warn(status.last_error, { "check that the directory exists and is writable" })
    end
  else
    report.info(
      'lists are not saved to disk (persist = false); require("rpiv_todo").setup({ persist = true }) keeps them across restarts in '
        .. M.dir()
    )
  end
  local file = require("rpiv_todo.i18n").locale_file()
  report.info(":TodosLanguage saves the UI language to " .. tostring(file))
end

return M
