-- tests/nvim/locale_child.lua: run by tests/nvim/locale_spec.lua in a child Neovim whose
-- environment the spec controls (RPIV_TODO_LOCALE, XDG_CONFIG_HOME, LC_ALL, LANG, ...),
-- through scripts/nvim-runner.lua. Not a spec of its own (no _spec suffix).
--
-- It sources the plugin, makes four tool calls with a 3-line overlay (so the summary row
-- shows), then records the float's lines, :Todos, v:lang, rpiv_todo.locale(), the
-- :checkhealth locale line and everything written to the message area, as JSON in the
-- file named by RPIV_OUT. With RPIV_LANGUAGE set it then types `:language messages <it>`
-- (as keys, so the command line's events fire as they do for a person), records the
-- panel right away, makes one more call and records the repainted lines as well.

local out = {}
local H = {}

vim.cmd("runtime plugin/rpiv_todo.lua")

H.notes = {}
vim.notify = function(msg, level)
  H.notes[#H.notes + 1] = { msg = msg, level = level }
end

-- The panel's lines without the blank padding column on each side.
function H.lines()
  local win, buf = require("rpiv_todo.nvim").window()
  if not win then
    return {}
  end
  local lines = {}
  for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    lines[i] = line:sub(2, -2)
  end
  return lines
end

function H.messages()
  return vim.api.nvim_exec("messages", true)
end

out.lang_at_start = vim.v.lang
local todo = require("rpiv_todo")
todo.setup({ max_widget_lines = 3 }) -- no locale: the chain decides
local run = todo.tool().execute
run({ action = "create", subject = "A" })
run({ action = "create", subject = "B" })
run({ action = "create", subject = "C" })
run({ action = "create", subject = "D" })
run({ action = "update", id = 4, status = "in_progress" })
run({ action = "update", id = 4, status = "completed" })
run({ action = "update", id = 1, status = "in_progress" })
out.lines = H.lines()
vim.cmd("Todos")
local listwin = require("rpiv_todo.nvim.listwin")
local lwin, lbuf = listwin.window()
if lwin then
  out.todos = table.concat(vim.api.nvim_buf_get_lines(lbuf, 0, -1, false), "\n")
  listwin.close()
else
  out.todos = H.notes[1] and H.notes[1].msg or nil
end
out.locale = todo.locale()
out.messages = H.messages()
out.errmsg = vim.v.errmsg

vim.cmd("checkhealth rpiv_todo")
for _, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
  if line:find("UI locale:", 1, true) then
    out.health = line
  end
end
vim.cmd("bwipeout!")

local language = os.getenv("RPIV_LANGUAGE")
if language then
  vim.v.errmsg = ""
  vim.api.nvim_feedkeys(":language messages " .. language .. "\r", "xt", false)
  out.language_ok = vim.v.errmsg == ""
  out.language_err = vim.v.errmsg
  out.lang_after = vim.v.lang
  -- The repaint is scheduled after the command line closes: let the main loop run it.
  vim.wait(1000, function()
    return (H.lines()[1] or ""):find("Todos", 1, true) ~= nil
  end)
  out.lines_now = H.lines()
  run({ action = "list" })
  out.lines_after = H.lines()
  out.locale_after = todo.locale()
end

local file = assert(io.open(assert(os.getenv("RPIV_OUT"), "RPIV_OUT"), "w"))
file:write(vim.json.encode(out))
file:close()
