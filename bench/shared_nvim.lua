-- bench/shared_nvim.lua: a persisted tool call through the Neovim front end (panel painted)
-- on a list of 1,000 tasks, beside the same call's bare atomic write (core.save of the same
-- list). Prints median and max in ms; asserts nothing. scripts/bench.sh runs it:
--   XDG_STATE_HOME=$(mktemp -d) nvim --headless -u NONE -i NONE --noplugin \
--     -c "set rtp^=$PWD" -c "luafile bench/shared_nvim.lua"
vim.cmd("runtime plugin/rpiv_todo.lua")
require("rpiv_todo").setup({ locale = "en", persist = true })
local nv = require("rpiv_todo.nvim")
local core = require("rpiv_todo.core")
local uv = vim.uv or vim.loop
local n, calls = 1000, 40
for i = 1, n do
  nv.execute({ action = "create", subject = "Task number " .. i, description = "A task of the bench list" })
end
local bare = vim.fn.tempname()
local list = core.list(require("rpiv_todo.session").get("default"):state())
local t_call, t_write = {}, {}
for i = 1, calls do
  local params = { action = "update", id = i, status = "in_progress" }
  local t0 = uv.hrtime()
  nv.execute(params)
  local t1 = uv.hrtime()
  list:apply(params)
  assert(core.save(bare, list))
  local t2 = uv.hrtime()
  t_call[#t_call + 1], t_write[#t_write + 1] = (t1 - t0) / 1e6, (t2 - t1) / 1e6
end
local function stats(xs)
  table.sort(xs)
  return xs[math.floor((#xs + 1) / 2)], xs[#xs]
end
local cm, cx = stats(t_call)
local wm, wx = stats(t_write)
io.stdout:write(
  string.format(
    "Neovim %s, persisted call on %d tasks (panel painted), ms median / max: %.3f / %.3f; the bare write (apply + core.save): %.3f / %.3f\n",
    vim.version and string.format("%d.%d.%d", vim.version().major, vim.version().minor, vim.version().patch) or "?",
    n,
    cm,
    cx,
    wm,
    wx
  )
)
vim.cmd("qall!")
