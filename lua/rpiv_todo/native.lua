-- rpiv_todo.native: the one guarded load of the native module `rpiv_todo.core`. Every
-- script that needs the core requires this instead, so a missing build says how to make
-- one, and a stale build (whose reducer may disagree with these scripts) is refused,
-- whichever module a host loads first. Returns the core table itself.
--
-- A missing build names the plugin's absolute path and the exact command that builds it
-- for the running interpreter. Outside an editor that is an error. In Neovim (rpiv_todo.host) it is one
-- notification instead, and the module loads with a stand-in core whose functions raise
-- that short message when used: `require("rpiv_todo").setup({})` in a config then does
-- not stop the rest of the config with a traceback, and :checkhealth rpiv_todo still
-- reports the missing library.
--
-- Where it looks: a core already loaded or preloaded (Rust hosts); the module that
-- `require("rpiv_todo.nvim.install").run()` (:TodosInstall) put in <plugin>/lib under a
-- versioned name (rpiv_todo.installed reads its record); then `require`'s own search
-- (lua/rpiv_todo/core.so on 'runtimepath', package.cpath). A module of another version
-- than these scripts gives one message naming both versions and :TodosInstall.

---@helptext rpiv_todo-install-missing verbatim
--- When the library is missing, Neovim shows one error notification with the
--- plugin's absolute path and the exact command to run, e.g.
--- >
---     (rpiv_todo) core: the native module is not built. Install it with
---     :TodosInstall, or build it with
---       cd /home/me/src/rpiv_todo && scripts/build-module.sh luajit
---     (needs cargo; :checkhealth rpiv_todo says more)
--- <
--- and the rest of your config keeps running: `require("rpiv_todo")` and
--- `setup()` still work, and only using the list (a tool call, |:Todos|) raises
--- that same short message. A library built from another version than the Lua
--- scripts gives one notification naming both versions and |:TodosInstall|.
--- |:checkhealth| reports both. (Outside Neovim, a missing library is an error
--- with the same command.)

local M = {}
local H = {}

-- The Lua scripts' version (kept in rpiv_todo.installed, which the installer reads too);
-- the native core must report the same one.
M.VERSION = require("rpiv_todo.installed").VERSION

---The running interpreter's build flavour (what scripts/build-module.sh takes).
---@return string
function H.flavour()
  if type(rawget(_G, "jit")) == "table" then
    return "luajit"
  end
  if _VERSION == "Lua 5.4" then
    return "lua54"
  end
  if _VERSION == "Lua 5.1" then
    return "lua51"
  end
  return "<luajit|lua51|lua54>"
end

---The plugin's root (the folder holding lua/rpiv_todo/), as an absolute path when known.
---@return string
function H.root()
  local info = debug.getinfo(1, "S")
  local source = info and info.source or ""
  local path = source:sub(1, 1) == "@" and source:sub(2) or nil
  if path == nil then
    return "<the plugin's folder>"
  end
  if path:sub(1, 1) ~= "/" and not path:match("^%a:[/\\]") then
    local cwd = require("rpiv_todo.host").cwd()
    if cwd ~= nil and cwd ~= "" then
      path = cwd .. "/" .. path:gsub("^%./", "")
    end
  end
  local root = path:match("^(.*)[/\\]lua[/\\]rpiv_todo[/\\]native%.lua$")
  return root or "<the plugin's folder>"
end

---The command that builds the module for this interpreter, from anywhere.
---@return string
function M.build_command()
  local root = H.root()
  local quoted = root
  if root:find("[^%w%./_%-]") and root:sub(1, 1) ~= "<" then
    quoted = "'" .. root:gsub("'", "'\\''") .. "'"
  end
  return "cd " .. quoted .. " && scripts/build-module.sh " .. H.flavour()
end

---The first line of a loader error that is not the "module not found" search list (a
---library that exists but does not load: wrong flavour, missing symbol).
---@param cause string
---@return string|nil
function H.reason(cause)
  if cause:find("module 'rpiv_todo.core' not found", 1, true) then
    return nil
  end
  return (cause:match("^[^\n]*"))
end

-- The core's exports that are values, not functions (see meta/core.lua); `version` and
-- `null` the stand-in below has.
H.VALUE_EXPORTS = { array_mt = true, flavour = true }

-- The message for a module of another version: both versions and the fix.
function H.mismatch(found, where)
  return "(rpiv_todo) core: the native module"
    .. (where and (" " .. where) or "")
    .. " is version "
    .. tostring(found)
    .. ", but the Lua scripts are version "
    .. M.VERSION
    .. ". Run :TodosInstall in Neovim (or require('rpiv_todo.nvim.install').run()) to fetch the matching one,"
    .. " or rebuild it with  "
    .. M.build_command()
end

---The short form of a load failure, for a person in an editor: the fix first, the cause
---in one line.
---@param cause string
---@param mismatch boolean the module is of another version (its message is short already)
---@return string
function H.short(cause, mismatch)
  if mismatch then
    return cause
  end
  local short = "(rpiv_todo) core: the native module is not built. Install it with :TodosInstall,"
    .. " or build it with\n  "
    .. M.build_command()
    .. "\n(needs cargo; :checkhealth rpiv_todo says more)"
  local reason = H.reason(cause)
  if reason ~= nil then
    short = short .. "\nCause: " .. reason
  end
  return short
end

---A core whose every function raises `short`, and whose value exports (array_mt, flavour)
---raise as soon as they are read: a stand-in value would fail later with an error about
---something else (setmetatable, say).
---@param short string
---@param null any the host's JSON null
---@return table
function H.stand_in(short, null)
  local function missing()
    error(short, 0)
  end
  return setmetatable({ version = M.VERSION, missing = short, null = null }, {
    __index = function(_, key)
      if H.VALUE_EXPORTS[key] then
        missing()
      end
      return missing
    end,
  })
end

local ok, core, stale, broken
-- Already loaded, or preloaded by a Rust host: that one; else the installed module first
-- (what :TodosInstall put in place), then the search paths (a build at
-- lua/rpiv_todo/core.so, package.cpath).
if package.loaded["rpiv_todo.core"] == nil and package.preload["rpiv_todo.core"] == nil then
  local why, record
  core, why, record = require("rpiv_todo.installed").load(H.flavour())
  if why == "version" then
    stale = record
  elseif why ~= nil then
    broken = why
  end
  ok = core ~= nil
end
if not ok then
  ok, core = pcall(require, "rpiv_todo.core")
  if not ok and stale ~= nil then
    core = H.mismatch(stale.version, "installed at " .. stale.path)
  elseif not ok and broken ~= nil then
    core = "the installed module does not load (" .. broken .. "); run :TodosInstall again"
  end
  if ok and type(core) == "table" and core.version ~= M.VERSION and stale ~= nil then
    -- Both the installed one and the one on the search path are stale: name the
    -- installed one, which :TodosInstall replaces.
    ok, core = false, H.mismatch(stale.version, "installed at " .. stale.path)
  end
end
if ok and type(core) == "table" and core.version ~= M.VERSION then
  ok, core = false, H.mismatch(core.version, nil)
end
if not ok then
  local cause = tostring(core)
  local mismatch = cause:find("Lua scripts are version", 1, true) ~= nil
  local host = require("rpiv_todo.host")
  if host.editor() then
    -- In an editor the error is shown once and the scripts load with a stand-in core.
    local short = H.short(cause, mismatch)
    host.notify(short, "error")
    return H.stand_in(short, host.null())
  end
  if mismatch then
    error(cause, 0)
  end
  error(
    "(rpiv_todo) core: the native module rpiv_todo.core could not be loaded. Build it with\n  "
      .. M.build_command()
      .. "\nwhich runs  cargo build --release --lib --no-default-features --features module,<flavour>\n"
      .. "and puts the library at lua/rpiv_todo/core.so. Rust hosts call rpiv_todo::preload(&lua).\n"
      .. "Cause: "
      .. cause,
    0
  )
end

return core
