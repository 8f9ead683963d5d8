-- rpiv_todo.installed: where `require("rpiv_todo.nvim.install").run()` puts the native module,
-- and the record it leaves. Plain Lua (5.1, 5.4, LuaJIT): the loader (rpiv_todo.native)
-- reads the record before any native code exists, in or out of Neovim.
--
-- The installer writes into `<plugin>/lib/`:
--   rpiv_todo_core-<version>-<sha256 prefix>.<ext>   the module, never rewritten once there
--   installed.txt                                    which of them is current, `key=value` lines
-- A new install always gets a new file name (its version and content hash), then
-- installed.txt is replaced in one rename, so a Neovim that has the old module loaded keeps
-- a file nobody writes to, and a failed install leaves the record as it was.

local M = {}

-- The Lua scripts' version (rpiv_todo.native checks the core against it); Cargo.toml's
-- [package] version and every release's v<version> folder are the same string.
M.VERSION = "0.1.0"

-- The record's file name inside lib/.
M.RECORD = "installed.txt"
-- The keys of the record, in the order they are written.
M.KEYS = { "version", "file", "sha256", "source", "url", "triple", "flavour" }

---The plugin's root (the folder holding lua/rpiv_todo/), absolute when it can be found;
---nil when these scripts do not come from files (a Rust host compiles them in).
---@return string|nil
function M.root()
  local info = debug.getinfo(1, "S")
  local source = info and info.source or ""
  if source:sub(1, 1) ~= "@" then
    return nil
  end
  local path = source:sub(2)
  if path:sub(1, 1) ~= "/" and not path:match("^%a:[/\\]") then
    -- Relative to the working directory (rpiv_todo.host asks libuv in Neovim: the loader
    -- may run inside a libuv callback, where Vimscript functions are not allowed).
    local cwd = require("rpiv_todo.host").cwd()
    if cwd ~= nil and cwd ~= "" then
      path = cwd .. "/" .. path:gsub("^%./", "")
    end
  end
  return path:match("^(.*)[/\\]lua[/\\]rpiv_todo[/\\]installed%.lua$")
end

---The folder the installer writes to: `<plugin>/lib`, or nil when the root is unknown.
---@return string|nil
function M.dir()
  local root = M.root()
  return root and (root .. "/lib") or nil
end

---Parse a record's text: `key=value` lines; unknown keys are kept, blank lines and
---`#` comments skipped.
---@param text string
---@return table<string, string>
function M.parse(text)
  local record = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    line = line:gsub("\r$", "")
    local key, value = line:match("^([%w_]+)=(.*)$")
    if key then
      record[key] = value
    end
  end
  return record
end

---A record as text (the keys of M.KEYS in order, then the others sorted).
---@param record table<string, string>
---@return string
function M.format(record)
  local lines, seen = { "# written by require('rpiv_todo.nvim.install').run(); do not edit" }, {}
  for _, key in ipairs(M.KEYS) do
    if record[key] ~= nil then
      lines[#lines + 1] = key .. "=" .. tostring(record[key])
      seen[key] = true
    end
  end
  local rest = {}
  for key in pairs(record) do
    if not seen[key] then
      rest[#rest + 1] = key
    end
  end
  table.sort(rest)
  for _, key in ipairs(rest) do
    lines[#lines + 1] = key .. "=" .. tostring(record[key])
  end
  return table.concat(lines, "\n") .. "\n"
end

---A record in the lib folder (the module's, `M.RECORD`, unless `name` says another, such
---as the MCP server's), with `path` (the absolute path of the file it names) added; nil
---when nothing was installed (or the record cannot be read) and the reason.
---@param dir? string the lib folder (default M.dir())
---@param name? string the record's file name (default M.RECORD)
---@return table<string, string>|nil record, string|nil why
function M.read(dir, name)
  dir, name = dir or M.dir(), name or M.RECORD
  if dir == nil then
    return nil, "the plugin's folder is unknown"
  end
  local file = io.open(dir .. "/" .. name, "rb")
  if not file then
    return nil, "no " .. dir .. "/" .. name
  end
  local text = file:read("*a") or ""
  file:close()
  local record = M.parse(text)
  if not record.version or not record.file or record.file == "" or record.file:find("[/\\]") then
    return nil, dir .. "/" .. name .. " is incomplete"
  end
  record.path = dir .. "/" .. record.file
  return record
end

---Load the installed module when the record names this flavour and the Lua scripts'
---version, and make it `rpiv_todo.core`. Returns the core; or nil, why ("version" when
---the record is for another version, else the loader's error) and the record; or nil
---alone when there is no record for this flavour.
---@param flavour string the running interpreter's (luajit, lua51, lua54)
---@return table|nil core, string|nil why, table|nil record
function M.load(flavour)
  local record = M.read()
  if record == nil or (record.flavour ~= nil and record.flavour ~= flavour) then
    return nil, nil, nil
  end
  if record.version ~= M.VERSION then
    return nil, "version", record
  end
  local open, err = package.loadlib(record.path, "luaopen_rpiv_todo_core")
  if not open then
    return nil, "cannot load " .. record.path .. ": " .. tostring(err), record
  end
  local ok, core = pcall(open, "rpiv_todo.core", record.path)
  if not ok or type(core) ~= "table" then
    return nil, "cannot load " .. record.path .. ": " .. tostring(core), record
  end
  M.loaded = { path = record.path, source = record.source, version = core.version }
  package.loaded["rpiv_todo.core"] = core
  return core, nil, record
end

-- What the loader used, for :checkhealth: { path, source, version } or nil.
M.loaded = nil

return M
