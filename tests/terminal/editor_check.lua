-- tests/terminal/editor_check.lua: what a Neovim opened in the agent's project shows, for
-- tests/terminal/run.py. It runs through scripts/nvim-runner.lua in a headless Neovim with
-- the same HOME as the agent (so the same stdpath("state")), cds into RPIV_PROJECT, runs
-- setup({ persist = true }) and writes to RPIV_OUT, as JSON: the file persist reads the
-- list from (`path`) and the panel's text once it shows a task (`panel`, "" when it never
-- did within 5 s). The checks are run.py's.
-- luacheck: globals vim

local H = {}

H.project = assert(os.getenv("RPIV_PROJECT"), "set RPIV_PROJECT")
H.out = assert(os.getenv("RPIV_OUT"), "set RPIV_OUT")

vim.cmd("cd " .. vim.fn.fnameescape(H.project))
vim.cmd("runtime plugin/rpiv_todo.lua")
require("rpiv_todo").setup({ locale = "en" })
local nv = require("rpiv_todo.nvim")
nv.setup({ persist = true })

---The panel's text ("" while hidden).
---@return string
function H.panel()
  local win, buf = nv.window()
  return win and table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") or ""
end

vim.wait(5000, function()
  return H.panel():find("#", 1, true) ~= nil
end, 20)

local file = assert(io.open(H.out, "w"))
file:write(vim.json.encode({ path = require("rpiv_todo.persist").path() or "", panel = H.panel() }))
file:close()
