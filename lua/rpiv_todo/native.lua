-- rpiv_todo.native: the one guarded load of the native module `rpiv_todo.core`. Every
-- script that needs the core requires this instead, so a missing build says how to make
-- one, and a stale build (whose reducer may disagree with these scripts) is refused,
-- whichever module a host loads first. Returns the core table itself.
--
-- A missing build names the plugin's absolute path and the exact command that builds it
-- for the running interpreter. Outside Neovim that is an error. Inside Neovim it is one
-- notification instead, and the module loads with a stand-in core whose functions raise
-- that short message when used: `require("rpiv_todo").setup({})` in a config then does
-- not stop the rest of the config with a traceback, and :checkhealth rpiv_todo still
-- reports the missing library.

local M = {}
local H = {}

-- The Lua scripts' version; the native core must report the same one.
M.VERSION = "0.1.0"

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
  local vim = rawget(_G, "vim")
  if vim ~= nil and type(vim.fn) == "table" then
    path = vim.fn.fnamemodify(path, ":p")
  elseif path:sub(1, 1) ~= "/" and not path:match("^%a:[/\\]") then
    local cwd = os.getenv("PWD")
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

local ok, core = pcall(require, "rpiv_todo.core")
if not ok then
  local cause = tostring(core)
  local vim = rawget(_G, "vim")
  if vim ~= nil and type(vim.notify) == "function" then
    local short = "(rpiv_todo) core: the native module is not built. Build it with\n  "
      .. M.build_command()
      .. "\n(needs cargo; :checkhealth rpiv_todo says more)"
    local reason = H.reason(cause)
    if reason ~= nil then
      short = short .. "\nCause: " .. reason
    end
    vim.notify(short, vim.log.levels.ERROR, { title = "rpiv_todo" })
    local function missing()
      error(short, 0)
    end
    -- Everything the scripts use raises the same short message: a function when called,
    -- a value export (array_mt, flavour) as soon as it is read, since a stand-in value
    -- would fail later with an error about something else (setmetatable, say).
    return setmetatable({ version = M.VERSION, missing = short, null = vim.NIL }, {
      __index = function(_, key)
        if H.VALUE_EXPORTS[key] then
          missing()
        end
        return missing
      end,
    })
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
if type(core) ~= "table" or core.version ~= M.VERSION then
  error(
    "(rpiv_todo) core: native module version "
      .. tostring(type(core) == "table" and core.version or core)
      .. " does not match the Lua scripts' "
      .. M.VERSION
      .. "; rebuild lua/rpiv_todo/core.so with  "
      .. M.build_command(),
    0
  )
end

return core
