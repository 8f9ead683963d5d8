-- tests/nvim/todos_once_spec.lua: :Todos builds the `/todos` text of the shown list once,
-- and shows that text in its window.

local N = dofile(os.getenv("RPIV_ROOT") .. "/tests/nvim/helpers.lua")
local T = N.T

N.plugin()
vim.notify = function() end

T.test(":Todos builds the /todos text once and shows it", function()
  local todo = require("rpiv_todo")
  todo.setup({ locale = "en" })
  local nv = require("rpiv_todo.nvim")
  nv.execute({ action = "create", subject = "Write the parser" })
  local command = todo.command
  local real = command.todos
  local calls = 0
  command.todos = function(...)
    calls = calls + 1
    return real(...)
  end
  local ok, err = pcall(vim.cmd, "Todos")
  command.todos = real
  T.eq(ok, true, "ran: " .. tostring(err))
  T.eq(calls, 1, "the /todos text was built once")
  local win, buf = require("rpiv_todo.nvim.listwin").window()
  T.eq(type(win), "number", "the list window is open")
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  T.contains(table.concat(lines, "\n"), "#1 Write the parser", "the task in the window")
  vim.api.nvim_win_close(win, true)
end)

T.finish()
