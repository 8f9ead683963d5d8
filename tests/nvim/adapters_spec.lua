-- tests/nvim/adapters_spec.lua: the adapters inside Neovim, where avante.nvim and
-- codecompanion.nvim call them: arguments decoded by vim.json (JSON null arrives as
-- vim.NIL), and the overlay repainted after an adapter's call. Runs the plain-Lua adapter
-- spec (tests/lua/adapters_spec.lua) here too.

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")

vim.cmd("runtime plugin/rpiv_todo.lua")

local todo = require("rpiv_todo")
local avante = require("rpiv_todo.adapters.avante")
local codecompanion = require("rpiv_todo.adapters.codecompanion")

T.test("an avante call opens the overlay (the plugin attaches on the first call)", function()
  todo.setup({ locale = "en" })
  local tool = avante.tool()
  -- What avante does with the model's tool_use input before calling func.
  local input = vim.json.decode('{"action":"create","subject":"From avante","metadata":{"k":null}}')
  local result, err = tool.func(input, { session_ctx = {}, tool_use_id = "toolu_9", streaming = false })
  T.eq(result, "Created #1: From avante (pending)", "result")
  T.eq(err, nil, "error")
  local win, buf = require("rpiv_todo.nvim").window()
  T.eq(type(win), "number", "overlay window")
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  T.eq(lines[1], "● Todos (0/1)", "heading")
  T.eq(lines[2], "└─ ○ From avante", "row")
end)

T.test("JSON null decoded by vim.json deletes a metadata key through codecompanion", function()
  local tool = codecompanion.tool()
  local cmd = tool.cmds[1]
  cmd(tool, vim.json.decode('{"action":"update","id":1,"metadata":{"a":1,"b":2}}'), {})
  local out = cmd(tool, vim.json.decode('{"action":"update","id":1,"metadata":{"a":null}}'), {})
  T.eq(out.status, "success", "status")
  T.eq(out.data, "Updated #1", "data")
  local meta = todo.session():state().tasks[1].metadata
  T.eq(meta.a, nil, "a deleted")
  T.eq(meta.b, 2, "b kept")
  local lines = vim.api.nvim_buf_get_lines(select(2, require("rpiv_todo.nvim").window()), 0, -1, false)
  T.eq(lines[2], "└─ ○ From avante", "still painted")
end)

T.test("the plain-Lua adapter spec passes inside Neovim", function()
  dofile(T.root() .. "/tests/lua/adapters_spec.lua")
end)

T.finish()
