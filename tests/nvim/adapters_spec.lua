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
  local called = {}
  local stop = todo.listen(function(event, id)
    if event == "executed" then
      called[#called + 1] = id
    end
  end)
  local tool = avante.tool()
  -- What avante does with the model's tool_use input before calling func.
  local input = vim.json.decode('{"action":"create","subject":"From avante","metadata":{"k":null}}')
  local result, err = tool.func(input, { session_ctx = {}, tool_use_id = "toolu_9", streaming = false })
  stop()
  T.eq(result, "Created #1: From avante (pending)", "result")
  T.eq(err, nil, "error")
  T.eq(#called, 1, "one call")
  T.eq(called[1]:sub(1, 7), "avante:", "a list of avante's own, not the shared default")
  -- The panel shows the list of the chat that called (pinned here: the test must not rely
  -- on which session the panel follows by default).
  require("rpiv_todo.nvim").foreground(called[1])
  local win, buf = require("rpiv_todo.nvim").window()
  T.eq(type(win), "number", "overlay window")
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  T.eq(vim.trim(lines[1]), "● Todos (0/1)", "heading")
  T.eq(vim.trim(lines[2]), "└─ ○ From avante", "row")
end)

T.test("JSON null decoded by vim.json deletes a metadata key through codecompanion", function()
  local tool = codecompanion.tool()
  local cmd = tool.cmds[1]
  local tools = { chat = { id = 77, bufnr = 1 } } -- codecompanion's Tools coordinator
  cmd(tools, vim.json.decode('{"action":"create","subject":"From codecompanion"}'), {})
  cmd(tools, vim.json.decode('{"action":"update","id":1,"metadata":{"a":1,"b":2}}'), {})
  local out = cmd(tools, vim.json.decode('{"action":"update","id":1,"metadata":{"a":null}}'), {})
  T.eq(out.status, "success", "status")
  T.eq(out.data, "Updated #1", "data")
  local meta = todo.session("codecompanion:77"):state().tasks[1].metadata
  T.eq(meta.a, nil, "a deleted")
  T.eq(meta.b, 2, "b kept")
  -- The strict form's metadata text, decoded by vim.json first: its null deletes too.
  cmd(tools, vim.json.decode('{"action":"update","id":1,"metadata":"{\\"b\\":null}","owner":null}'), {})
  T.eq(todo.session("codecompanion:77"):state().tasks[1].metadata, nil, "b deleted (and the empty record dropped)")
end)

T.test("vim.json writes both schema forms as valid JSON Schema objects (no [] where an object belongs)", function()
  for _, spec in ipairs({ todo.tool(), todo.tool({ strict = true }) }) do
    local text = vim.json.encode(spec.parameters)
    T.eq(text:find("[]", 1, true), nil, "no empty array in " .. text:sub(1, 40))
    local back = vim.json.decode(text)
    T.eq(type(back.properties.metadata), "table", "metadata property")
  end
  local normal = vim.json.decode(vim.json.encode(todo.tool().parameters))
  T.eq(normal.properties.metadata.additionalProperties, true, "free-form metadata")
end)

T.test("the plain-Lua adapter spec passes inside Neovim", function()
  dofile(T.root() .. "/tests/lua/adapters_spec.lua")
end)

T.finish()
