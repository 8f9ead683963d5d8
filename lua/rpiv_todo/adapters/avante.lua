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
-- calls `func(input, opts)` with the decoded arguments and sends the returned string to the
-- model, or the error string as a failed tool result. avante puts `Error: ` before that
-- string itself (its OpenAI provider, and its tool log), so the error returned here is the
-- message without the prefix. avante has no separate system prompt for custom tools, so
-- the prompt snippet and the guidelines are appended to the description.
--
-- JSON null: the Claude and Gemini providers hand null over as vim.NIL, and
-- `{"metadata":{"a":null}}` deletes the key as documented. avante's OpenAI provider
-- decodes streamed arguments with its own JsonParser, which turns null into nil, so there
-- the key is simply absent and nothing is deleted: a limit of avante (its
-- libs/jsonparser.lua), not something this adapter can see or repair.
--
-- Sessions: each avante chat has its own list, named after the chat's history file
-- (`avante:<path>`). avante's `session_ctx` lives for one request only (the sidebar makes a
-- new one for every prompt), so it names the list only when no sidebar is there (avante.llm
-- driven directly). End of turn: avante has no hook a tool can use; `M.reminder()` gives
-- the current chat's reminder for avante's `system_prompt` function (see there). Plain Lua
-- apart from those lookups, which are guarded.

local M = {}
local H = {}

-- Property order in the field list: the one the strict schema lists them in (the action
-- first, then what most calls carry).
H.ORDER = require("rpiv_todo.tool").PROPERTY_ORDER

---@class rpiv_todo.AvanteOptions
---@field session? string|fun(opts: table): string|nil the session a call runs in (a function receives avante's opts); default: one per chat

H.OPTIONS = {
  { "session", "a session id string or a function returning one", require("rpiv_todo.adapters.options").is_session },
}

-- Lists of avante requests made without a sidebar, one per session context (weak keys).
H.contexts = setmetatable({}, { __mode = "k" })
H.context_count = 0

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

---The chat of the current avante sidebar, named after its history file.
---@return string|nil
function H.sidebar_session()
  local ok, avante = pcall(require, "avante")
  if not ok or type(avante) ~= "table" or type(avante.get) ~= "function" then
    return nil
  end
  local got, sidebar = pcall(avante.get, false)
  local history = got and type(sidebar) == "table" and sidebar.chat_history or nil
  if type(history) ~= "table" or type(history.filename) ~= "string" then
    return nil
  end
  local bufnr = type(sidebar.code) == "table" and sidebar.code.bufnr or nil
  local found, path = pcall(function()
    return tostring(require("avante.path").history.get_filepath(bufnr, history.filename))
  end)
  return "avante:" .. (found and path or history.filename)
end

---The session a call runs in: the option, else the sidebar's chat, else one per session
---context, else nil ("default").
---@param option any
---@param avante_opts any
---@return string|nil
function H.session(option, avante_opts)
  if type(option) == "function" then
    return option(avante_opts)
  elseif option ~= nil then
    return option
  end
  local id = H.sidebar_session()
  if id ~= nil then
    return id
  end
  local ctx = type(avante_opts) == "table" and avante_opts.session_ctx or nil
  if type(ctx) ~= "table" then
    return nil
  end
  id = H.contexts[ctx]
  if id == nil then
    H.context_count = H.context_count + 1
    id = "avante:request-" .. H.context_count
    H.contexts[ctx] = id
  end
  return id
end

---The reminder for the current avante chat (see `todo.reminder`): text naming its tasks
---left in_progress, or nil. avante has no end-of-turn hook for tools; its `system_prompt`
---option may be a function, called for every request, which can return this:
---`system_prompt = function() return require("rpiv_todo.adapters.avante").reminder() or "" end`.
---@param opts? rpiv_todo.AvanteOptions the options given to `tool()` (for a `session` option)
---@return string|nil
function M.reminder(opts)
  opts = require("rpiv_todo.adapters.options").check("avante", opts, H.OPTIONS)
  local id = H.session(opts.session, nil)
  local sessions = require("rpiv_todo.session")
  if id == nil or not sessions.exists(id) then
    return nil
  end
  return require("rpiv_todo").reminder(id)
end

---The avante custom tool. The spec is built now, from the current rpiv_todo.setup().
---@param opts? rpiv_todo.AvanteOptions
---@return table tool { name, description, param, returns, func }
function M.tool(opts)
  opts = require("rpiv_todo.adapters.options").check("avante", opts, H.OPTIONS)
  local session = opts.session
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
        -- avante writes its own "Error: " before it.
        return nil, (text:gsub("^Error: ", "", 1))
      end
      return text, nil
    end,
  }
end

return M
