-- tests/nvim/child.lua: start a child Neovim that runs one file through
-- scripts/nvim-runner.lua, with an environment the calling spec controls, and hand back
-- what the child wrote as JSON to RPIV_OUT. Used by persist_spec.lua and locale_spec.lua
-- (loaded with dofile; not a spec of its own, no _spec suffix).
--
-- The child is v:progpath (the same Neovim as the spec), headless, with no user config,
-- shada or plugins, and without the variables that would tie it to this Neovim or leak
-- a Lua path in (NVIM, NVIM_LISTEN_ADDRESS, VIMINIT, LUA_PATH, LUA_CPATH).

local M = {}
local H = {}

-- Variables no child inherits.
H.UNSET = { "NVIM", "NVIM_LISTEN_ADDRESS", "VIMINIT", "LUA_PATH", "LUA_CPATH" }

---@class rpiv_todo.test.Child
---@field root string the repository (RPIV_ROOT)
---@field file string the file the child runs, relative to `root`
---@field unset? string[] more variables to remove from its environment
---@field vars? table<string, string> variables to set (RPIV_OUT, RPIV_ROOT, RPIV_SPEC win)
---@field cwd? string the directory it starts in (default: this Neovim's)
---@field label? string names the child in the error
---@field kill_after? integer seconds after which the child is killed (SIGKILL), for a
---  test of something that used to hang: a hang then fails the test instead of the run

---Run a child Neovim; raise (at `level`, default 2) when it fails or writes nothing.
---@param opts rpiv_todo.test.Child
---@param level? integer
---@return table what the child recorded
function M.run(opts, level)
  local outfile = vim.fn.tempname()
  local cmd = { "env" }
  if opts.cwd ~= nil then
    cmd = { "sh", "-c", 'cd "$0" && exec "$@"', opts.cwd, "env" }
  end
  if opts.kill_after ~= nil then
    table.insert(cmd, 1, tostring(opts.kill_after))
    table.insert(cmd, 1, "KILL")
    table.insert(cmd, 1, "-s")
    table.insert(cmd, 1, "timeout")
  end
  for _, list in ipairs({ opts.unset or {}, H.UNSET }) do
    for _, name in ipairs(list) do
      cmd[#cmd + 1] = "-u"
      cmd[#cmd + 1] = name
    end
  end
  local vars = {}
  for k, v in pairs(opts.vars or {}) do
    vars[k] = v
  end
  vars.RPIV_OUT = outfile
  vars.RPIV_ROOT = opts.root
  vars.RPIV_SPEC = opts.root .. "/" .. opts.file
  for k, v in pairs(vars) do
    cmd[#cmd + 1] = k .. "=" .. v
  end
  for _, arg in ipairs({
    vim.v.progpath,
    "--headless",
    "-u",
    "NONE",
    "-i",
    "NONE",
    "--noplugin",
    "-c",
    "luafile " .. opts.root .. "/scripts/nvim-runner.lua",
  }) do
    cmd[#cmd + 1] = arg
  end
  local output = vim.fn.system(cmd)
  local status = vim.v.shell_error
  local ok, text = pcall(vim.fn.readfile, outfile)
  vim.fn.delete(outfile)
  if status ~= 0 or not ok or #text == 0 then
    local name = opts.label and ("child Neovim (" .. opts.label .. ")") or "child Neovim"
    error(name .. " failed (status " .. status .. "): " .. output, (level or 2) + 1)
  end
  return vim.json.decode(table.concat(text, "\n"))
end

return M
