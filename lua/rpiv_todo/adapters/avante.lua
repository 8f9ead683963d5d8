-- rpiv_todo.adapters.avante: the `todo` tool as an avante.nvim custom tool.
--
--   require("avante").setup({
--     custom_tools = function()
--       return { require("rpiv_todo.adapters.avante").tool() }
--     end,
--   })
--
-- avante describes a tool's arguments as a list of fields ({ name, type, description,
-- optional, choices?, items? }) and turns them into the provider's JSON Schema itself; it
-- calls `func(input, opts)` with the decoded arguments (JSON null as vim.NIL) and sends the
-- returned string to the model, or the error string as a failed tool result. avante has no
-- separate system prompt for custom tools, so the prompt snippet and the guidelines are
-- appended to the description. Plain Lua: no `vim.*` here.

local M = {}
local H = {}

-- Property order in the field list: the action first, then what most calls carry.
H.ORDER = {
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
}

---@class rpiv_todo.AvanteOptions
---@field session? string|fun(opts: table): string|nil the session a call runs in (a function receives avante's opts); nil: "default"

---@param schema table a JSON Schema property
---@param name string
---@param optional boolean
---@return table field
function H.field(name, schema, optional)
  local field = {
    name = name,
    type = schema.type or "string",
    description = schema.description or name,
    optional = optional,
  }
  if type(schema.enum) == "table" then
    local choices = {}
    for i, v in ipairs(schema.enum) do
      choices[i] = v
    end
    field.choices = choices
  end
  if field.type == "array" and type(schema.items) == "table" then
    -- avante converts `items` like a field of its own, so it needs a name.
    field.items = { name = "id", type = schema.items.type or "number", description = "a task id" }
  end
  return field
end

---The JSON Schema's properties as avante fields (known properties in a fixed order,
---then any others sorted by name).
---@param parameters table the tool's JSON Schema
---@return table[] fields
function M.fields(parameters)
  local props = parameters.properties or {}
  local required = {}
  for _, name in ipairs(parameters.required or {}) do
    required[name] = true
  end
  local fields, seen = {}, {}
  for _, name in ipairs(H.ORDER) do
    if props[name] ~= nil then
      fields[#fields + 1] = H.field(name, props[name], not required[name])
      seen[name] = true
    end
  end
  local rest = {}
  for name in pairs(props) do
    if not seen[name] then
      rest[#rest + 1] = name
    end
  end
  table.sort(rest)
  for _, name in ipairs(rest) do
    fields[#fields + 1] = H.field(name, props[name], not required[name])
  end
  return fields
end

---The tool description with the prompt snippet and guidelines appended.
---@param spec rpiv_todo.ToolSpec
---@return string
function M.description(spec)
  local parts = { spec.description, "", spec.prompt_snippet, "", "Guidelines:" }
  for _, line in ipairs(spec.prompt_guidelines) do
    parts[#parts + 1] = "- " .. line
  end
  return table.concat(parts, "\n")
end

---@param option any
---@param avante_opts any
---@return string|nil
function H.session(option, avante_opts)
  if type(option) == "function" then
    return option(avante_opts)
  end
  return option
end

---The avante custom tool. The spec is built now, from the current rpiv_todo.setup().
---@param opts? rpiv_todo.AvanteOptions
---@return table tool { name, description, param, returns, func }
function M.tool(opts)
  opts = opts or {}
  if type(opts) ~= "table" then
    error("(rpiv_todo) avante: expected a table of options { session }", 0)
  end
  local session = opts.session
  if session ~= nil and type(session) ~= "string" and type(session) ~= "function" then
    error("(rpiv_todo) avante: session: expected a session id string or a function returning one", 0)
  end
  local spec = require("rpiv_todo").tool()
  return {
    name = spec.name,
    description = M.description(spec),
    param = { type = "table", fields = M.fields(spec.parameters) },
    returns = {
      { name = "result", description = "The tool's reply: what changed, or the list", type = "string" },
      {
        name = "error",
        description = "Why the call was rejected (the list is unchanged)",
        type = "string",
        optional = true,
      },
    },
    ---@param input table|string the arguments (decoded by avante; JSON text also works)
    ---@param avante_opts? table { on_log, on_complete, session_ctx, tool_use_id, ... }
    ---@return string|nil result
    ---@return string|nil error
    func = function(input, avante_opts)
      local result = spec.execute(input, { session = H.session(session, avante_opts) })
      local first = result.content and result.content[1]
      local text = type(first) == "table" and first.text or ""
      if result.details and result.details.error ~= nil then
        return nil, text
      end
      return text, nil
    end,
  }
end

return M
