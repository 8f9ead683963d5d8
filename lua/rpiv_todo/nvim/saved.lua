-- rpiv_todo.nvim.saved: the lists of this working directory on disk, as a person meets
-- them: the most recent one shown at startup, the :Todos sessions picker, :Todos prune
-- and the automatic prune, the usage figures of :checkhealth. rpiv_todo.nvim.persist
-- (the `persist` option) turns keeping lists on and watches the files.

local M = {}
local H = {}

-- With persist, saved lists not changed for this many days go (0: never); the
-- persist_max_age_days option sets it.
M.max_age_days = 30

---@param msg string
---@param level integer
function H.notify(msg, level)
  vim.notify(msg, level, { title = require("rpiv_todo.nvim.options").config.notify_title })
end

---@return table
function H.uv()
  return vim.uv or vim.loop
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
  local frontend = require("rpiv_todo.nvim.frontend")
  require("rpiv_todo.session").get(item.id)
  if pin then
    frontend.foreground(item.id)
  else
    frontend.follow(item.id)
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
      ':Todos sessions: lists are not saved to disk (require("rpiv_todo").setup({ persist = true }) keeps them)',
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
    H.notify(
      ":Todos sessions: no saved lists for " .. tostring(require("rpiv_todo.persist").key()),
      vim.log.levels.INFO
    )
    return
  end
  vim.ui.select(items, {
    prompt = "rpiv_todo: saved lists of " .. tostring(require("rpiv_todo.persist").key()),
    format_item = M.format_item,
  }, function(item)
    if item == nil then
      return
    end
    H.show(item, true)
    require("rpiv_todo.nvim.frontend").todos()
  end)
end

-- ---------------------------------------------------------------------------
-- The state directory's policy: ended sessions go (rpiv_todo.persist), old lists go
-- ---------------------------------------------------------------------------

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
function M.auto_prune()
  local days = M.max_age_days
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
  local days = M.max_age_days
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
function M.size(bytes)
  if bytes < 1024 then
    return bytes .. " B"
  elseif bytes < 1024 * 1024 then
    return string.format("%.1f KiB", bytes / 1024)
  end
  return string.format("%.1f MiB", bytes / 1024 / 1024)
end

return M
