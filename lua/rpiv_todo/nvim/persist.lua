-- rpiv_todo.nvim.persist: the editor's side of keeping lists on disk, and the language
-- picker.
--
--   require("rpiv_todo.nvim").setup({ persist = true })
--     each session's list is saved after every change to stdpath("state")/rpiv_todo/,
--     one file per working directory and session, and restored when the session is first
--     used in a new Neovim, unless the host replays its history for it (replay wins);
--     persist = false (the default) reads and writes nothing
--   :Todos file         where the shown session's list is saved (and whether it exists)
--   :TodosLanguage [xx] pick the UI language (vim.ui.select over the nine locales, or the
--                       code given); the pick is saved to rpiv-i18n's locale.json, which
--                       every later start reads
--
-- The files are written by rpiv_todo.persist through core.save: atomically, so a crash
-- or a kill at any moment leaves the old list or the new one, whole. The working
-- directory is Neovim's global one (:cd; a :tcd or :lcd does not change it), read when a
-- session is first used.
-- nvim.lua calls `register_option(nv)`, commands.lua `register_commands(commands)`,
-- health.lua `health(report)`.

local M = {}
local H = {}

-- The nine locales as people find them in a list: the code, then the language's own name.
M.LANGUAGE_NAMES = {
  de = "Deutsch",
  en = "English",
  es = "Español",
  fr = "Français",
  pt = "Português",
  ["pt-BR"] = "Português (Brasil)",
  ru = "Русский",
  uk = "Українська",
  zh = "中文",
}

H.cwd = nil -- Neovim's global working directory, kept current by DirChanged
H.augroup = "RpivTodoPersist"

---@param msg string
---@param level integer
function H.notify(msg, level)
  local title = "rpiv_todo"
  local ok, nv = pcall(require, "rpiv_todo.nvim")
  if ok and type(nv.config) == "table" and type(nv.config.notify_title) == "string" then
    title = nv.config.notify_title
  end
  vim.notify(msg, level, { title = title })
end

---The directory the lists go in: stdpath("state")/rpiv_todo. Neovim 0.7 has no "state"
---path; there it is the one 0.8 and later use ($XDG_STATE_HOME/nvim, else
---~/.local/state/nvim), so an upgrade finds the same files.
---@return string
function M.dir()
  local ok, state = pcall(vim.fn.stdpath, "state")
  if not ok or type(state) ~= "string" or state == "" then
    local xdg = os.getenv("XDG_STATE_HOME")
    if xdg == nil or xdg == "" or xdg:sub(1, 1) ~= "/" then
      xdg = (os.getenv("HOME") or "") .. "/.local/state"
    end
    state = xdg .. "/nvim"
  end
  return state .. "/rpiv_todo"
end

---Turn persistence on or off (the `persist` option's apply).
---@param on boolean
function M.apply(on)
  local persist = require("rpiv_todo.persist")
  pcall(vim.api.nvim_del_augroup_by_name, H.augroup)
  if not on then
    persist.disable()
    return
  end
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
  -- The list saved for this directory shows at once, not only after the next tool call:
  -- the shown session is used now (which restores it) when it has a file.
  local session = require("rpiv_todo.session")
  local id = session.foreground_id()
  local path = persist.path(id)
  if not session.exists(id) and path ~= nil and (vim.uv or vim.loop).fs_stat(path) ~= nil then
    session.get(id)
  end
end

---Register the `persist` option of require("rpiv_todo.nvim").setup (called by nvim.lua).
---@param nv table the rpiv_todo.nvim module
function M.register_option(nv)
  nv.register_option("persist", false, function(v)
    if type(v) ~= "boolean" then
      return "expected a boolean"
    end
  end, function(value)
    M.apply(value == true)
  end)
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

---Switch the UI language to `code` and save the pick; tell the user either way.
---@param code string
---@return boolean ok
function M.pick(code)
  local ok, err = require("rpiv_todo").set_locale(code, { persist = true })
  local nv = require("rpiv_todo.nvim")
  if nv.attached() then
    nv.refresh()
  end
  if ok then
    H.notify(
      "language: " .. code .. " (saved to " .. tostring(require("rpiv_todo.i18n").locale_file()) .. ")",
      vim.log.levels.INFO
    )
    return true
  end
  H.notify("language: " .. tostring(err), vim.log.levels.WARN)
  return false
end

---:TodosLanguage: with a code, switch to it; without, offer the nine through vim.ui.select.
---@param args string
function M.language_command(args)
  args = (args or ""):gsub("^%s+", ""):gsub("%s+$", "")
  if args ~= "" then
    M.pick(args)
    return
  end
  local current = require("rpiv_todo").locale()
  vim.ui.select(require("rpiv_todo.i18n").locales(), {
    prompt = "rpiv_todo language",
    format_item = function(code)
      local name = M.LANGUAGE_NAMES[code] or code
      return code .. "  " .. name .. (code == current and "  (current)" or "")
    end,
  }, function(choice)
    if choice ~= nil then
      M.pick(choice)
    end
  end)
end

---Completion of :TodosLanguage: the locale codes starting with `arglead`; never raises.
---@param arglead string
---@return string[]
function M.complete_language(arglead)
  local ok, codes = pcall(function()
    return require("rpiv_todo.i18n").locales()
  end)
  local out = {}
  for _, c in ipairs(ok and codes or {}) do
    if c:sub(1, #(arglead or "")) == (arglead or "") then
      out[#out + 1] = c
    end
  end
  return out
end

---Register :Todos file and :TodosLanguage (called by commands.lua while it loads).
---@param commands table the rpiv_todo.nvim.commands module
function M.register_commands(commands)
  commands.register("file", {
    usage = "file",
    run = function()
      local text, level = M.file_report()
      H.notify(text, level)
    end,
  })
  commands.register_command("TodosLanguage", function(opts)
    local ok, err = pcall(M.language_command, opts.args)
    if not ok then
      vim.notify(tostring(err), vim.log.levels.ERROR, { title = "rpiv_todo" })
    end
  end, {
    nargs = "?",
    complete = M.complete_language,
    desc = "rpiv_todo: pick the UI language (saved to rpiv-i18n's locale.json)",
  })
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
