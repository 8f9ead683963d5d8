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
-- Sessions: each avante chat has its own list, named after the chat's history file and the
-- time of its first message (`avante:<path>#<when>`: avante reuses file names); a chat
-- reopened after a restart gets its list back from the `todo` calls in its history.
-- avante's `session_ctx` lives for one request only (the sidebar makes a new one for every
-- prompt), so it names the list only when no sidebar is there (avante.llm driven
-- directly). A new prompt (`User AvanteInputSubmitted`) starts a new turn for the panel,
-- which shows the list of the chat whose sidebar holds the cursor. End of turn: avante has
-- no hook a tool can use; `M.reminder()` gives the current chat's reminder for avante's
-- `system_prompt` function (see there). Plain Lua apart from those lookups, which are
-- guarded.

local M = {}
local H = {}

-- The filetypes of avante's windows: Neovim's panel keeps off them (adapters.common).
M.chat_filetypes = {
  "Avante",
  "AvanteInput",
  "AvanteSelectedFiles",
  "AvanteSelectedCode",
  "AvanteTodos",
  "AvantePromptInput",
  "AvanteConfirm",
}

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

---The current tab's avante sidebar, without loading avante.
---@return table|nil
function H.sidebar()
  if package.loaded["avante"] == nil then
    return nil
  end
  local avante = package.loaded["avante"]
  if type(avante) ~= "table" or type(avante.get) ~= "function" then
    return nil
  end
  local got, sidebar = pcall(avante.get, false)
  return got and type(sidebar) == "table" and sidebar or nil
end

---When the chat began: the timestamp and uuid of its first message ("" for an empty chat).
---A history file's name is reused (avante names a new chat after the number of files), and
---a cleared chat keeps its file, so the name alone does not tell two chats apart.
---@param history table
---@return string
function H.chat_start(history)
  local first = type(history.messages) == "table" and history.messages[1] or nil
  if type(first) ~= "table" then
    return ""
  end
  return tostring(first.timestamp or "") .. "/" .. tostring(first.uuid or "")
end

---The chat of an avante sidebar (the current tab's by default): `avante:<history file>#<when
---it began>` (`avante:<history file>` while it has no message). The first time this editor sees a chat with `todo` calls in its history and no
---list of its own (a chat reopened after a restart), its list is rebuilt from those calls.
---@param sidebar? table
---@return string|nil
function H.sidebar_session(sidebar)
  sidebar = sidebar or H.sidebar()
  local history = type(sidebar) == "table" and sidebar.chat_history or nil
  if type(history) ~= "table" or type(history.filename) ~= "string" then
    return nil
  end
  local bufnr = type(sidebar.code) == "table" and sidebar.code.bufnr or nil
  local found, path = pcall(function()
    return tostring(require("avante.path").history.get_filepath(bufnr, history.filename))
  end)
  local id = "avante:" .. (found and path or history.filename)
  local start = H.chat_start(history)
  if start ~= "" then
    id = id .. "#" .. start
  end
  if not H.seen[id] then
    H.seen[id] = true
    require("rpiv_todo.adapters.common").restore(id, M.completed_calls(history.messages))
  end
  return id
end
H.seen = {}

---The list of an avante sidebar's chat, as calls from that sidebar name it (nil when the
---sidebar has no history yet). mcphub's adapter uses it for calls avante makes through
---mcphub.
---@param sidebar table
---@return string|nil
function M.sidebar_session(sidebar)
  return H.sidebar_session(sidebar)
end

---The arguments of the completed `todo` calls in avante's history messages, oldest first:
---`tool_use` blocks named todo whose `tool_result` is there.
---@param messages any avante.HistoryMessage[]
---@return table[]
function M.completed_calls(messages)
  if type(messages) ~= "table" then
    return {}
  end
  local function blocks(m)
    local content = type(m) == "table" and type(m.message) == "table" and m.message.content or nil
    return type(content) == "table" and content or {}
  end
  local answered = {}
  for _, m in ipairs(messages) do
    for _, block in ipairs(blocks(m)) do
      if type(block) == "table" and block.type == "tool_result" and block.tool_use_id ~= nil then
        answered[block.tool_use_id] = true
      end
    end
  end
  local calls = {}
  for _, m in ipairs(messages) do
    for _, block in ipairs(blocks(m)) do
      if
        type(block) == "table"
        and block.type == "tool_use"
        and block.name == "todo"
        and answered[block.id or false]
      then
        calls[#calls + 1] = block.input
      end
    end
  end
  return calls
end

---The session the panel should show while `bufnr` is current: the chat's, when the buffer
---is one of the current tab's avante sidebar windows (nil otherwise).
---@param bufnr integer
---@return string|nil
function M.buffer_session(bufnr)
  local sidebar = H.sidebar()
  local containers = type(sidebar) == "table" and sidebar.containers or nil
  for _, container in pairs(type(containers) == "table" and containers or {}) do
    if type(container) == "table" and container.bufnr == bufnr then
      return H.sidebar_session(sidebar)
    end
  end
  return nil
end

---Inside Neovim, once: a new prompt marks a new turn for the panel (completed tasks fall
---away), and the panel shows the list of the chat in the current window.
function H.listen()
  local vim_ = rawget(_G, "vim")
  if H.listening or type(vim_) ~= "table" or type(vim_.api) ~= "table" then
    return
  end
  H.listening = true
  local group = vim_.api.nvim_create_augroup("rpiv_todo.avante", { clear = true })
  vim_.api.nvim_create_autocmd("User", {
    group = group,
    pattern = "AvanteInputSubmitted",
    callback = function()
      -- The prompt is the chat's first message when the chat is new, and it is not in the
      -- history yet: a new chat's list does not exist yet, and has nothing to hide.
      require("rpiv_todo.nvim").turn_started(H.sidebar_session())
    end,
  })
  require("rpiv_todo.adapters.common").register_chat("avante", M.buffer_session)
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
  H.listen()
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
      local text, failed = require("rpiv_todo.adapters.common").outcome(result)
      if failed then
        -- avante writes its own "Error: " before it.
        return nil, (text:gsub("^Error: ", "", 1))
      end
      return text, nil
    end,
  }
end

return M
