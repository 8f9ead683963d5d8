-- tests/nvim/adapters_spec.lua: the adapters inside Neovim, where avante.nvim and
-- codecompanion.nvim call them: arguments decoded by vim.json (JSON null arrives as
-- vim.NIL), and the overlay repainted after an adapter's call. Runs the plain-Lua adapter
-- spec (tests/lua/adapters_spec.lua) here too.

local N = dofile(os.getenv("RPIV_ROOT") .. "/tests/nvim/helpers.lua")
local T = N.T

N.plugin()

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
  require("rpiv_todo").foreground(called[1])
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
  local meta = todo.session(codecompanion.session_of(tools.chat)):state().tasks[1].metadata
  T.eq(meta.a, nil, "a deleted")
  T.eq(meta.b, 2, "b kept")
  -- The strict form's metadata text, decoded by vim.json first: its null deletes too.
  cmd(tools, vim.json.decode('{"action":"update","id":1,"metadata":"{\\"b\\":null}","owner":null}'), {})
  T.eq(
    todo.session(codecompanion.session_of(tools.chat)):state().tasks[1].metadata,
    nil,
    "b deleted (and the empty record dropped)"
  )
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

-- A canonical text of a JSON-like value (sorted keys, every null alike), to compare two
-- results as JSON values.
local function canon(v)
  if v == nil or v == vim.NIL or (type(v) == "userdata" and v == todo.core.null) then
    return "null"
  elseif type(v) == "table" then
    local keys = vim.tbl_keys(v)
    if #keys == #v then
      local parts = {}
      for i = 1, #v do
        parts[i] = canon(v[i])
      end
      return "[" .. table.concat(parts, ",") .. "]"
    end
    table.sort(keys, function(a, b)
      return tostring(a) < tostring(b)
    end)
    local parts = {}
    for i, k in ipairs(keys) do
      parts[i] = string.format("%q", tostring(k)) .. ":" .. canon(v[k])
    end
    return "{" .. table.concat(parts, ",") .. "}"
  elseif type(v) == "string" then
    return string.format("%q", v)
  end
  return tostring(v)
end

-- JSON text of a decoded value with object keys sorted, the order the normal form's table
-- path stores metadata in (a Lua table has none). The strict form's metadata text keeps
-- the order it is written in, as JSON text does in the normal form, so the two forms are
-- compared on the same order.
local function sorted_json(v)
  if type(v) ~= "table" or next(v) == nil then
    return vim.json.encode(v)
  end
  local parts = {}
  if (vim.islist or vim.tbl_islist)(v) then
    for i = 1, #v do
      parts[i] = sorted_json(v[i])
    end
    return "[" .. table.concat(parts, ",") .. "]"
  end
  local keys = vim.tbl_keys(v)
  table.sort(keys)
  for i, k in ipairs(keys) do
    parts[i] = vim.json.encode(k) .. ":" .. sorted_json(v[k])
  end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- A normal-form call in the strict form, as a model in strict mode writes it: every
-- property present (null: not given), metadata as JSON text.
local function to_strict(params)
  local out = {}
  for _, name in ipairs(require("rpiv_todo.tool").PROPERTY_ORDER) do
    out[name] = vim.NIL
  end
  for k, v in pairs(params) do
    out[k] = v
  end
  if type(params.metadata) == "table" then
    out.metadata = sorted_json(params.metadata)
  end
  return out
end

local islist = vim.islist or vim.tbl_islist

-- Can the strict form say this call? (No top-level null, metadata absent or an object.)
local function expressible(params)
  if type(params) ~= "table" or islist(params) and next(params) ~= nil then
    return false
  end
  for _, v in pairs(params) do
    if v == vim.NIL then
      return false
    end
  end
  local meta = params.metadata
  return meta == nil or (type(meta) == "table" and (next(meta) == nil or not islist(meta)))
end

T.test("recorded traces: every call converted to the strict form gives the normal form's result", function()
  local traces = T.fixture_lines("reducer-traces.jsonl", vim.json.decode)
  local normal, strict = todo.tool(), todo.tool({ strict = true })
  local compared, skipped, matched, order_only = 0, 0, 0, 0
  for n, trace in ipairs(traces) do
    local a, b = "eq-normal-" .. n, "eq-strict-" .. n
    for i, step in ipairs(trace.steps) do
      local where = trace.name .. " step " .. i
      if expressible(step.params) then
        local want = normal.execute(step.params, { session = a })
        local got = strict.execute(to_strict(step.params), { session = b })
        T.eq(got.content[1].text, want.content[1].text, where .. " content")
        -- Against the recording itself: a Lua table has no key order, which the original's
        -- "No change" check compares (metadata as JSON text), so only a metadata update can
        -- differ, and only between "No change" and "Updated".
        if want.content[1].text == step.content then
          matched = matched + 1
        else
          local pair = { want.content[1].text, step.content }
          table.sort(pair)
          T.eq(type(step.params.metadata), "table", where .. ": differs from the recording only with metadata")
          T.ok(pair[1]:match("^No change") ~= nil, where .. ": one side says No change (" .. pair[1] .. ")")
          T.ok(pair[2]:match("^Updated #%d+$") ~= nil, where .. ": the other Updated (" .. pair[2] .. ")")
          order_only = order_only + 1
        end
        T.eq(canon(got.details), canon(want.details), where .. " details")
        compared = compared + 1
      else
        -- Not sayable in strict mode: both lists take the normal call, to stay in step.
        normal.execute(step.params, { session = a })
        normal.execute(step.params, { session = b })
        skipped = skipped + 1
      end
    end
  end
  T.note(
    string.format(
      "%d recorded calls compared in both forms (%d as recorded, %d differ by metadata key order only), %d not expressible in the strict form",
      compared,
      matched,
      order_only,
      skipped
    )
  )
  T.ok(compared > 1000, "most recorded calls compared (" .. compared .. ")")
end)

T.test("the plain-Lua adapter spec passes inside Neovim", function()
  dofile(T.root() .. "/tests/lua/adapters_spec.lua")
end)

T.finish()
