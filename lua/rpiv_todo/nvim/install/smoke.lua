-- rpiv_todo.nvim.install.smoke: try a downloaded or built file once before it is put in place:
-- the module loaded with package.loadlib, the server run with `--version`; each must say
-- it is this version (and the module that it is built for LuaJIT).
-- Neovim glue: the server runs through rpiv_todo.nvim.install.proc, its mode is set with
-- libuv.

local proc = require("rpiv_todo.nvim.install.proc")

local M = {}

---Load the file once (package.loadlib, then its luaopen_) and check what it says it is.
---@param path string
---@param version string the Lua scripts' version
---@return table|nil core, string|nil err
function M.load_module(path, version)
  local open, err = package.loadlib(path, "luaopen_rpiv_todo_core")
  if not open then
    return nil, "package.loadlib refused it: " .. tostring(err)
  end
  local ok, core = pcall(open, "rpiv_todo.core", path)
  if not ok then
    return nil, "its luaopen_rpiv_todo_core raised: " .. tostring(core)
  end
  if type(core) ~= "table" then
    return nil, "its luaopen_rpiv_todo_core returned " .. type(core) .. ", not the module table"
  end
  if core.version ~= version then
    return nil, "it is version " .. tostring(core.version) .. ", but the Lua scripts are version " .. version
  end
  if core.flavour ~= "luajit" then
    return nil, "it is built for " .. tostring(core.flavour) .. ", but Neovim runs LuaJIT"
  end
  return core
end

---Run the server once (`--version`) and check what it says it is.
---@param path string
---@param version string the Lua scripts' version
---@return true|nil ok, string|nil err
function M.run_server(path, version)
  local uv = vim.uv or vim.loop
  -- rwxr-xr-x: curl and io.open write files without the executable bit.
  uv.fs_chmod(path, 493)
  local code, output = proc.run({ path, "--version" })
  if code == nil then
    return nil, "it does not run: " .. output
  end
  output = output:gsub("%s+$", "")
  if code ~= 0 then
    return nil, "`" .. path .. " --version` exited with " .. code .. ": " .. output:sub(1, 300)
  end
  if output ~= "rpiv_todo_mcp " .. version then
    return nil, "it says " .. string.format("%q", output:sub(1, 200)) .. ", not rpiv_todo_mcp " .. version
  end
  return true
end

return M
