-- tests/shared/nvim_user.lua: the user, in a Neovim with `persist = true`, editing the list
-- the agents share, for tests/shared/writers.py's notes case: `:Todos add`, `:Todos done`,
-- then the checklist buffer (`:Todos edit`, one line changed, `:w`). Each notification is
-- written to W_OUT as JSON (a list of strings), then it quits.
--
--   W_ROOT the repository   W_OUT the notifications file

local root = assert(os.getenv("W_ROOT"), "W_ROOT")
vim.opt.runtimepath:prepend(root)
vim.cmd("runtime plugin/rpiv_todo.lua")
require("rpiv_todo").setup({ locale = "en", persist = true })

local notes = {}
vim.notify = function(msg)
  notes[#notes + 1] = msg
end

vim.cmd("Todos add Write the changelog")
vim.cmd("Todos done 1")
vim.cmd("Todos edit")
local buf = vim.api.nvim_get_current_buf()
local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
for i, line in ipairs(lines) do
  if line:find("#2 Write the changelog", 1, true) then
    lines[i] = line:gsub("%[ %]", "[/]")
  end
end
vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
vim.cmd("write")

local f = assert(io.open(assert(os.getenv("W_OUT"), "W_OUT"), "w"))
f:write(vim.json.encode(notes))
f:close()
vim.cmd("qa!")
