-- rpiv_todo.tool.schema: the JSON Schemas of the `todo` tool's parameters, in the normal
-- form (same structure as the TypeScript original's, rpiv-todo: properties, types, enums,
-- required, plus `tasks`, this project's batch form) and in the strict form OpenAI's
-- strict mode accepts, and both as JSON text in one fixed order. Everything here is read
-- by the model: English, never localized.
--
-- The normal form carries no property descriptions: what each field means is said once,
-- in the tool's description (tool/init.lua) and guidelines (guidance.lua).

---@helptext rpiv_todo-strict verbatim
--- Strict mode                                                *rpiv_todo-strict*
---
--- `require("rpiv_todo").tool({ strict = true })` is the form OpenAI's strict
--- mode accepts: every property required, optional ones nullable (null: not
--- given), `additionalProperties = false`, metadata as JSON text. Its `execute`
--- converts calls back in the native core (serde_json, as for every JSON
--- argument) and then runs them like any other call, so both forms accept and
--- refuse the same input and give the same results: metadata integers past
--- 2^53 stay exact, a lone surrogate escape (`\ud800`) is refused. Metadata
--- text that is not a JSON object is answered in-band, the list unchanged.

local M = {}
local H = {}

-- The tool's name, as the model calls it, and its label for a host's UI.
M.NAME = "todo"
M.LABEL = "Todo"

-- Property order: in the JSON text, in the strict form's `required`, and in avante's field
-- list (the action first, then what most calls carry).
M.PROPERTY_ORDER = {
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
}

-- The fields one item of `tasks` may carry (those of a single create or update call), in
-- the same order.
M.TASK_PROPERTY_ORDER = {
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
}

---One property's schema, without a description.
---@param name string
---@return table
function H.property(name)
  if name == "action" then
    return { type = "string", enum = { "create", "update", "list", "get", "delete", "clear" } }
  elseif name == "status" then
    return { type = "string", enum = { "pending", "in_progress", "completed", "deleted" } }
  elseif name == "blockedBy" or name == "addBlockedBy" or name == "removeBlockedBy" then
    return { type = "array", items = { type = "number" } }
  elseif name == "id" then
    return { type = "number" }
  elseif name == "includeDeleted" then
    return { type = "boolean" }
  elseif name == "metadata" then
    -- Free-form: any keys, any values. Said with `additionalProperties = true` rather
    -- than an empty sub-schema, because an empty Lua table has no JSON kind of its own
    -- (vim.json writes `[]`, cjson `{}`) and `[]` is not a schema.
    return { type = "object", additionalProperties = true }
  elseif name == "tasks" then
    -- Each item holds the fields of one create or update call; the description says so,
    -- and the core checks them (naming `tasks[2].subject`), so the schema stays bare.
    return { type = "array", items = { type = "object" } }
  end
  return { type = "string" }
end

---The parameter schema (JSON Schema). Built fresh on each call so a host may change its copy.
---@return table
function M.parameters()
  local properties = {}
  for _, name in ipairs(M.PROPERTY_ORDER) do
    properties[name] = H.property(name)
  end
  return { type = "object", required = { "action" }, properties = properties }
end

-- The strict form: what OpenAI's strict mode accepts (and what codecompanion's
-- openai_responses adapter forces on every tool). Every object lists all its properties in
-- `required` and sets `additionalProperties = false`, so each optional field is nullable
-- (null: not given) and the free-form metadata travels as JSON text. `from_strict` turns
-- such a call back into the normal form (in the core) before the reducer sees it.

M.STRICT_METADATA_DESCRIPTION = 'A JSON object written as text, e.g. "{"area":"parser"}".'

-- What the strict form adds to the tool's description.
M.STRICT_NOTE = "Every field is present: null means not given."

---One property in the strict form.
---@param name string
---@param prop table the normal form's
---@return table
function H.strict_property(name, prop)
  if name == "action" then
    return prop
  elseif name == "metadata" then
    return { type = { "string", "null" }, description = M.STRICT_METADATA_DESCRIPTION }
  elseif prop.enum then
    -- A nullable enum: `type = {"string","null"}` beside an enum without null would
    -- still refuse null, and a null inside the enum has no encoder-neutral Lua value.
    return { anyOf = { { type = prop.type, enum = prop.enum }, { type = "null" } } }
  elseif name == "tasks" then
    -- Strict mode wants every object's properties listed: an item's are those of one call.
    local item = {}
    for _, field in ipairs(M.TASK_PROPERTY_ORDER) do
      item[field] = H.property(field)
    end
    return { type = { "array", "null" }, items = H.strict_object(item, M.TASK_PROPERTY_ORDER) }
  elseif prop.type == "array" then
    return { type = { "array", "null" }, items = prop.items }
  end
  return { type = { prop.type, "null" } }
end

---An object schema in the strict form: every property required, none other allowed.
---@param normal table<string, table> the normal form's properties
---@param order string[]
---@return table
function H.strict_object(normal, order)
  local properties, required = {}, {}
  for i, name in ipairs(order) do
    properties[name] = H.strict_property(name, normal[name])
    required[i] = name
  end
  return { type = "object", properties = properties, required = required, additionalProperties = false }
end

---The parameter schema in the strict-mode form: every property required, optional ones
---nullable (null means "not given"), `additionalProperties = false`, metadata as JSON text.
---Built fresh on each call.
---@return table
function M.strict_parameters()
  return H.strict_object(M.parameters().properties, M.PROPERTY_ORDER)
end

-- JSON text in one fixed order. A Lua table has no order of its own (and Lua 5.4 seeds its
-- string hashes per process), so a schema converted by a host's encoder can come out in a
-- different order at every start; a model provider's prompt cache then misses on every
-- new session. These functions write the same bytes for the same schema, every time.

-- Schema keywords, in the order they are written; unknown keys follow, sorted by name.
H.KEYWORD_ORDER = {
  "type",
  "enum",
  "anyOf",
  "items",
  "properties",
  "required",
  "additionalProperties",
  "description",
}

---@param order string[]
---@return table<string, integer>
function H.rank_of(order)
  local rank = {}
  for i, name in ipairs(order) do
    rank[name] = i
  end
  return rank
end

H.KEYWORD_RANK = H.rank_of(H.KEYWORD_ORDER)
H.PROPERTY_RANK = H.rank_of(M.PROPERTY_ORDER)

H.ESCAPES =
  { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

---@param s string
---@return string
function H.string(s)
  return '"'
    .. s:gsub('[%c"\\]', function(c)
      return H.ESCAPES[c] or string.format("\\u%04x", c:byte())
    end)
    .. '"'
end

---The keys of `t` in the order `rank` gives, unknown ones after, sorted by name.
---@param t table
---@param rank table<string, integer>
---@return string[]
function H.keys(t, rank)
  local keys = {}
  for k in pairs(t) do
    if type(k) ~= "string" then
      error("(rpiv_todo) schema_json: a table that is neither an array 1..n nor has only string keys", 0)
    end
    keys[#keys + 1] = k
  end
  table.sort(keys, function(a, b)
    local ra, rb = rank[a] or math.huge, rank[b] or math.huge
    if ra ~= rb then
      return ra < rb
    end
    return a < b
  end)
  return keys
end

---@param v any
---@param in_properties boolean whether `v` is a `properties` object (keys are field names)
---@param out string[]
function H.encode(v, in_properties, out)
  local kind = type(v)
  if kind == "string" then
    out[#out + 1] = H.string(v)
  elseif kind == "boolean" then
    out[#out + 1] = tostring(v)
  elseif kind == "number" then
    if v ~= v or v == math.huge or v == -math.huge then
      error("(rpiv_todo) schema_json: a number JSON cannot hold: " .. tostring(v), 0)
    end
    out[#out + 1] = (v == math.floor(v) and math.abs(v) < 2 ^ 53) and string.format("%d", v)
      or string.format("%.17g", v)
  elseif kind == "table" then
    local n = #v
    if n > 0 and H.is_array(v, n) then
      out[#out + 1] = "["
      for i = 1, n do
        if i > 1 then
          out[#out + 1] = ","
        end
        H.encode(v[i], false, out)
      end
      out[#out + 1] = "]"
    else
      out[#out + 1] = "{"
      for i, k in ipairs(H.keys(v, in_properties and H.PROPERTY_RANK or H.KEYWORD_RANK)) do
        if i > 1 then
          out[#out + 1] = ","
        end
        out[#out + 1] = H.string(k)
        out[#out + 1] = ":"
        H.encode(v[k], not in_properties and k == "properties", out)
      end
      out[#out + 1] = "}"
    end
  else
    error("(rpiv_todo) schema_json: a " .. kind .. " has no JSON form", 0)
  end
end

---Whether `t` holds exactly the keys 1..n.
---@param t table
---@param n integer
---@return boolean
function H.is_array(t, n)
  local count = 0
  for _ in pairs(t) do
    count = count + 1
  end
  return count == n
end

---A schema (or any JSON-shaped table) as JSON text in a fixed order: schema keywords as
---`type`, `enum`, `anyOf`, `items`, `properties`, `required`, `additionalProperties`,
---`description`; the fields of a `properties` object as `PROPERTY_ORDER` (`action`
---first); unknown keys after, sorted by name. No spaces, non-ASCII text as UTF-8.
---The same table gives the same bytes in every process and interpreter.
---@param schema table
---@return string
function M.to_json(schema)
  local out = {}
  H.encode(schema, false, out)
  return table.concat(out)
end

---The parameter schema as JSON text in the fixed order of `to_json`: what a host that
---sends JSON (the MCP server) should send, so that the tool's text is the same at every
---start. `strict`: the strict-mode form.
---@param strict? boolean
---@return string
function M.parameters_json(strict)
  return M.to_json(strict and M.strict_parameters() or M.parameters())
end

return M
