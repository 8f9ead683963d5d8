-- rpiv_todo.host: the few things the plain modules need from the process that runs them,
-- in one place. Inside Neovim they come from `vim`; anywhere else (a plain interpreter, a
-- Rust host) each has a plain answer: nothing is shown, nothing is scheduled, the working
-- directory is $PWD. The plain modules (the loader, the setup, the adapters) call these
-- instead of looking for `vim` themselves, so this file and the front end (nvim/) are
-- the only Lua that touches it.
--
--   host.editor()                     true inside Neovim
--   host.notify(msg, "error")         a notification in Neovim; false elsewhere
--   host.deprecated(what, instead)    one notice per old name (Neovim's :checkhealth vim.deprecated)
--   host.schedule(fn)                 fn on the main loop's next turn; false elsewhere
--   host.cwd()                        the working directory (safe in a luv callback)
--   host.pid()                        the process id, or nil
--   host.null()                       the JSON null of the host (vim.NIL), or nil
--   host.on_user_event(group, patterns, fn)   fn(data) on `User <pattern>` autocommands
--   host.buf_valid(bufnr)             is that buffer still there (true elsewhere)
--   host.register_editor(part)        what the editor adds to setup(): plugin/rpiv_todo.lua
--   host.editor_part()                 calls it when it loads; the plain layer asks for it here
--                                     and never requires the editor's modules itself

local M = {}
local H = {}

---The editor's `vim`, or nil outside Neovim.
---@return table|nil
function H.vim()
  local v = rawget(_G, "vim")
  if type(v) == "table" and type(v.api) == "table" then
    return v
  end
  return nil
end

---Is this process Neovim?
---@return boolean
function M.editor()
  return H.vim() ~= nil
end

---Show `msg` to the person at `level` ("error", "warn" or "info") with the plugin's
---title; false when there is nobody to show it to (outside Neovim).
---@param msg string
---@param level "error"|"warn"|"info"
---@return boolean shown
function M.notify(msg, level)
  local v = H.vim()
  if v == nil or type(v.notify) ~= "function" then
    return false
  end
  local levels = v.log and v.log.levels or {}
  local code = ({ error = levels.ERROR, warn = levels.WARN, info = levels.INFO })[level]
  v.notify(msg, code, { title = "rpiv_todo" })
  return true
end

-- The deprecated names already reported (once each per process).
H.deprecated = {}

-- The release that removes the deprecated aliases.
M.REMOVED_IN = "0.3.0"

---A deprecated name was used: tell the person once per name, through Neovim's
---`vim.deprecate` (listed by `:checkhealth vim.deprecated`), else a warning; nothing
---outside Neovim (a plain host has nobody to show it to, and nothing goes to stderr).
---@param what string the old name, e.g. `require("rpiv_todo.nvim").turn_started`
---@param instead string its one public name
function M.deprecated(what, instead)
  if H.deprecated[what] then
    return
  end
  H.deprecated[what] = true
  local v = H.vim()
  if v == nil then
    return
  end
  if type(v.deprecate) == "function" then
    pcall(v.deprecate, what, instead, M.REMOVED_IN, "rpiv_todo", false)
  else
    M.notify(
      "(rpiv_todo) " .. what .. " is deprecated: use " .. instead .. " (removed in " .. M.REMOVED_IN .. ")",
      "warn"
    )
  end
end

---Run `fn` on the main loop's next turn; false outside Neovim (nothing runs).
---@param fn function
---@return boolean scheduled
function M.schedule(fn)
  local v = H.vim()
  if v == nil or type(v.schedule) ~= "function" then
    return false
  end
  v.schedule(fn)
  return true
end

---The working directory: libuv's in Neovim (allowed inside a luv callback), else $PWD.
---@return string|nil
function M.cwd()
  local v = H.vim()
  local uv = v ~= nil and (v.uv or v.loop) or nil
  if uv ~= nil and type(uv.cwd) == "function" then
    local ok, cwd = pcall(uv.cwd)
    if ok and type(cwd) == "string" then
      return cwd
    end
  end
  return os.getenv("PWD")
end

---The process id, when the host knows it.
---@return integer|nil
function M.pid()
  local v = H.vim()
  local uv = v ~= nil and (v.uv or v.loop) or nil
  if uv ~= nil and type(uv.os_getpid) == "function" then
    local ok, pid = pcall(uv.os_getpid)
    if ok then
      return pid
    end
  end
  return nil
end

---The value the host's JSON decoder gives a null (vim.NIL), or nil.
---@return any
function M.null()
  local v = H.vim()
  return v ~= nil and v.NIL or nil
end

---Call `fn(data)` on each `User` autocommand whose pattern is one of `patterns` (in an
---augroup of that name, cleared first). False outside Neovim: nothing will fire.
---@param group string
---@param patterns string[]
---@param fn fun(data: any, event: string)
---@return boolean listening
function M.on_user_event(group, patterns, fn)
  local v = H.vim()
  if v == nil then
    return false
  end
  local id = v.api.nvim_create_augroup(group, { clear = true })
  v.api.nvim_create_autocmd("User", {
    group = id,
    pattern = patterns,
    callback = function(ev)
      fn(ev.data, ev.match)
    end,
  })
  return true
end

---What the editor adds to the plain layer (plugin/rpiv_todo.lua registers it).
---@class rpiv_todo.EditorPart
---@field options fun(): table its options module (their checks and defaults)
---@field configure fun(opts: table) applies them
---@field foreground? fun(...): rpiv_todo.Session `rpiv_todo.foreground` with the panel's pin

-- What the editor registered (rpiv_todo.EditorPart), or nil.
H.editor_part = nil

---The editor's part of `setup()`, registered by plugin/rpiv_todo.lua when Neovim loads the
---plugin: `options()` gives its options module (their checks and defaults), `configure(opts)`
---applies them, `foreground(...)` is `rpiv_todo.foreground` with the panel's pin. The plain
---modules never require the editor's modules; they ask here.
---@param part rpiv_todo.EditorPart
function M.register_editor(part)
  H.editor_part = part
end

---The editor's part of `setup()` (see `register_editor`), or nil outside Neovim. A config
---that calls setup() before Neovim sourced the plugin file (init.lua runs first for a
---start package) has it sourced now.
---@return rpiv_todo.EditorPart|nil
function M.editor_part()
  local v = H.vim()
  if v == nil then
    return nil
  end
  if H.editor_part == nil then
    pcall(v.cmd, "runtime plugin/rpiv_todo.lua")
  end
  return H.editor_part
end

---Is buffer `bufnr` still there? True outside Neovim (nothing closes there).
---@param bufnr any
---@return boolean
function M.buf_valid(bufnr)
  local v = H.vim()
  if v == nil or type(bufnr) ~= "number" then
    return true
  end
  return v.api.nvim_buf_is_valid(bufnr)
end

return M
