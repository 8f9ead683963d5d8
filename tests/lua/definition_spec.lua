-- tests/lua/definition_spec.lua: the tool as a host with one description field sends it
-- (`tool.definition`), and the schema as JSON text in one fixed order (`tool.to_json`,
-- `tool.parameters_json`): the same bytes at every start, so a provider's prompt cache keeps
-- the tool between sessions. Runs in every interpreter; by hand:
--   lua5.4 tests/lua/definition_spec.lua      (also luajit, lua5.1)

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local H = {}

local has_cjson, cjson = pcall(require, "cjson")
H.json = has_cjson and cjson or dofile(T.root() .. "/tests/lua/json.lua")

local todo = require("rpiv_todo")
local tool = require("rpiv_todo.tool")

T.before_each(function()
  todo.sessions.reset()
  todo.setup({ locale = "en" })
end)

-- What a fresh interpreter prints: the MCP definition and both schemas' JSON text.
H.PRINT = [[
local tool = require("rpiv_todo.tool")
local d = tool.definition(require("rpiv_todo").tool())
io.write(d.description, "\0", d.instructions, "\0", d.parameters_json, "\0", tool.parameters_json(true))
]]

---The output of `H.PRINT` in a new process of this interpreter, with this process's paths.
---@return string
function H.fresh()
  local prelude = string.format("package.path = %q; package.cpath = %q;", package.path, package.cpath)
  local interpreter = arg and arg[-1] or "lua"
  local pipe = assert(io.popen(interpreter .. " -e " .. H.shell(prelude .. H.PRINT:gsub("\n", " "))))
  local out = pipe:read("*a")
  pipe:close()
  return out
end

function H.shell(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

T.test("two fresh interpreter processes write the same tool text, byte for byte", function()
  local first, second = H.fresh(), H.fresh()
  T.ok(#first > 2000, "the first process wrote the definition: " .. #first .. " bytes")
  T.eq(second, first, "the second process")
  local d = tool.definition(todo.tool())
  T.eq(
    first,
    d.description .. "\0" .. d.instructions .. "\0" .. d.parameters_json .. "\0" .. tool.parameters_json(true),
    "this process"
  )
end)

T.test("the schema's JSON text lists the properties in the fixed order, action first", function()
  local text = tool.parameters_json()
  local order = {}
  local properties = text:match('^{"type":"object","properties":(%b{}),"required":%["action"%]}$')
  T.ok(properties ~= nil, "type, properties, required: " .. text:sub(1, 60))
  for name in properties:gmatch('"([%w]+)":{"type"') do
    if name ~= "items" then
      order[#order + 1] = name
    end
  end
  T.same(order, {
    "action",
    "subject",
    "description",
    "activeForm",
    "status",
    "id",
    "blockedBy",
    "addBlockedBy",
    "removeBlockedBy",
    "owner",
    "metadata",
    "includeDeleted",
    "tasks",
  }, "properties")
  local action = '{"action":{"type":"string","enum":["create","update","list","get","delete","clear"]},'
  T.eq(properties:sub(1, #action), action, "action")
  -- The text is the table: decoded, it is what parameters() returns.
  T.same(H.json.decode(text), tool.parameters(), "decoded")
  T.same(H.json.decode(tool.parameters_json(true)), tool.strict_parameters(), "the strict form, decoded")
  local strict = tool.parameters_json(true)
  T.ok(strict:find('"required":["action","subject","description",', 1, true) ~= nil, "strict required order")
  T.ok(strict:find('"additionalProperties":false}$') ~= nil, "strict: additionalProperties last")
end)

T.test("to_json: keywords in a fixed order, unknown keys by name, JSON escapes", function()
  T.eq(
    tool.to_json({
      zeta = 1,
      required = { "b" },
      properties = { tasks = { type = "array" }, zz = {}, action = { description = "d", type = "string" } },
      type = "object",
      additionalProperties = false,
      alpha = 2.5,
    }),
    '{"type":"object","properties":{"action":{"type":"string","description":"d"},"tasks":{"type":"array"},'
      .. '"zz":{}},"required":["b"],"additionalProperties":false,"alpha":2.5,"zeta":1}'
  )
  T.eq(tool.to_json({ description = 'a"b\\c\n\1\t⇄' }), '{"description":"a\\"b\\\\c\\n\\u0001\\t⇄"}', "escapes")
  T.eq(tool.to_json({ 1, true, "x", { n = -3 } }), '[1,true,"x",{"n":-3}]', "an array")
  T.raises(function()
    tool.to_json({ f = print })
  end, "a function has no JSON form")
  T.raises(function()
    tool.to_json({ [1] = 1, [3] = 3 })
  end, "a table that is neither an array 1..n nor has only string keys")
end)

T.test("definition: the snippet once, as instructions or at the head of the description", function()
  local spec = todo.tool()
  local d = tool.definition(spec)
  T.eq(d.name, "todo", "name")
  T.eq(d.title, "Todo", "title")
  T.eq(d.instructions, spec.prompt_snippet, "instructions")
  T.eq(d.description:find(spec.prompt_snippet, 1, true), nil, "no snippet in the description")
  T.eq(
    d.description,
    spec.description .. "\n\nGuidelines:\n- " .. table.concat(spec.prompt_guidelines, "\n- "),
    "description and guidelines"
  )
  local without = tool.definition(spec, { instructions = false })
  T.eq(without.instructions, nil, "no instructions")
  T.eq(without.description, spec.prompt_snippet .. "\n\n" .. d.description, "the snippet heads the description")
  T.eq(without.parameters_json, d.parameters_json, "the same schema")
end)

T.test("a host's guidance is what definition sends, and the long form is still there", function()
  todo.setup({ guidance = { prompt_guidelines = require("rpiv_todo.guidance").long } })
  local d = tool.definition(todo.tool())
  T.eq(#require("rpiv_todo.guidance").long, 8, "eight long guidelines")
  T.contains(d.description, "The status machine: pending ⇄ in_progress, either of them → completed", "long form")
  T.contains(d.description, "list hides deleted tasks; pass includeDeleted: true to see them.", "long form")
  todo.setup({ guidance = { prompt_snippet = "Track work.", prompt_guidelines = { "Only this." } } })
  d = tool.definition(todo.tool())
  T.eq(d.instructions, "Track work.", "the host's snippet")
  T.eq(d.description:sub(-24), "Guidelines:\n- Only this.", "the host's guidelines")
end)

T.test("the strict form's description says what null means, once", function()
  local strict = todo.tool({ strict = true })
  T.eq(strict.description, tool.description .. "\nEvery field is present: null means not given.", "strict")
  T.eq(todo.tool().description, tool.description, "normal")
  T.eq(tool.definition(strict).parameters_json, tool.parameters_json(true), "the strict schema")
end)

T.finish()
