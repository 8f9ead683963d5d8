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
-- Sessions: each avante chat has its own list, `avante:<time>-<pid>-<n>`, made for it the
-- first time it is seen with messages and kept in the chat's history, which avante saves
-- to its history file: `rpiv_todo = { session, tasks, nextId }` beside its own fields, the
-- list updated after every call. A chat reopened after a restart finds its id there (and,
-- with `persist`, its file) and its list, whatever avante did to its messages (its message
-- uuids come from an unseeded math.random, so a restarted editor makes the same ones again
-- and overwrites old messages with new ones); a chat saved before that record existed gets
-- its list back from the `todo` calls in its history. A cleared chat (no messages left)
-- starts a new list. avante's `session_ctx` lives for one request only (the sidebar makes
-- a new one for every prompt), so it names the list only when no sidebar is there
-- (avante.llm driven directly). A new prompt (`User AvanteInputSubmitted`) starts a new
-- turn for the panel, which shows the list of the chat whose sidebar holds the cursor.
-- End of turn and compaction: avante has no hook a tool can use, and no message can be
-- added to its requests; `M.reminder()` gives what its `system_prompt` function should
-- append: after avante summarized the chat into its memory, the list in compact form as it
-- was then (rendered once, kept in the record, so every later request carries the same
-- text), and the end-of-turn reminder once the list has changed since (see there). Plain
-- Lua apart from those lookups, which are guarded.

---@helptext rpiv_todo-adapters-avante verbatim
--- avante.nvim                                        *rpiv_todo-adapters-avante*
--- >
---     require("avante").setup({
---       -- avante's own todo tools off: one todo tool for the model
---       disabled_tools = { "read_todos", "write_todos" },
---       custom_tools = function()
---         return { require("rpiv_todo.adapters.avante").tool() }
---       end,
---       system_prompt = function()     -- the end-of-turn reminder
---         return require("rpiv_todo.adapters.avante").reminder() or ""
---       end,
---     })
--- <
--- A rejected call returns `nil, "<message>"`: avante writes `Error: ` before
--- it. avante has no end-of-turn hook for tools; its `system_prompt` function
--- runs for every request, and `reminder()` gives the current chat's reminder
--- (nil when nothing is in progress).
---
--- JSON null: avante's OpenAI provider turns null into nil while it parses the
--- streamed arguments, so there `{"metadata":{"a":null}}` deletes nothing. The
--- Claude and Gemini providers keep it (as |vim.NIL|) and the key is deleted.
--- Not something the adapter can see or repair.

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
  if field.type == "array" and type(schema.items) == "table" and schema.items.type == "object" then
    -- `tasks`: avante converts `items` like a field of its own, so it needs a name; an
    -- object field without sub-fields is sent as a bare object.
    field.items = { name = "task", type = "object", description = "the fields of one create or update call" }
  elseif field.type == "array" and type(schema.items) == "table" then
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

---The tool description with the prompt snippet before it and the guidelines after it
---(`rpiv_todo.tool.definition` for a host without instructions): each said once.
---@param spec rpiv_todo.ToolSpec
---@return string
function M.description(spec)
  return require("rpiv_todo.tool").definition(spec, { instructions = false }).description
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

-- The field of avante's chat history that holds this adapter's record.
M.RECORD = "rpiv_todo"

---The record a chat history holds (a table), after dropping that of a cleared chat:
---avante's clear empties the messages and keeps every other field.
---@param history table
---@return table|nil
function H.record(history)
  local rec = history[M.RECORD]
  if type(rec) ~= "table" then
    return nil
  end
  if type(history.messages) ~= "table" or #history.messages == 0 then
    history[M.RECORD] = nil
    return nil
  end
  return rec
end

---The chat of an avante sidebar (the current tab's by default): the id its history keeps,
---else one made for it now and kept there (`avante:<history file>` while it has no
---message: nothing has been asked in it). The first time this editor sees a chat, its
---list is rebuilt: from the record's list, else (a chat saved before the record existed)
---from the `todo` calls in its history, unless the session holds a list already (one
---restored from disk, or calls already made in this editor).
---@param sidebar? table
---@return string|nil
function H.sidebar_session(sidebar)
  sidebar = sidebar or H.sidebar()
  local history = type(sidebar) == "table" and sidebar.chat_history or nil
  if type(history) ~= "table" or type(history.filename) ~= "string" then
    return nil
  end
  local rec = H.record(history)
  local id = rec ~= nil and type(rec.session) == "string" and rec.session ~= "" and rec.session or nil
  if id == nil then
    if type(history.messages) ~= "table" or #history.messages == 0 then
      local bufnr = type(sidebar.code) == "table" and sidebar.code.bufnr or nil
      local found, path = pcall(function()
        return tostring(require("avante.path").history.get_filepath(bufnr, history.filename))
      end)
      return "avante:" .. (found and path or history.filename)
    end
    id = require("rpiv_todo.adapters.common").unique_id("avante")
    rec = rec or {}
    rec.session = id
    history[M.RECORD] = rec
  end
  if not H.seen[id] then
    H.seen[id] = true
    local common = require("rpiv_todo.adapters.common")
    if type(rec.tasks) == "table" then
      common.restore(id, {}, { tasks = rec.tasks, nextId = rec.nextId })
    else
      common.restore(id, M.completed_calls(history.messages))
    end
  end
  return id
end
H.seen = {}

---After a call in session `id`: the current sidebar's record, when that chat is `id`'s,
---gets the list (avante saves it with the history as the call's result goes in).
---@param id string|nil
function H.keep_list(id)
  local sidebar = H.sidebar()
  local history = type(sidebar) == "table" and sidebar.chat_history or nil
  local rec = type(history) == "table" and H.record(history) or nil
  if id == nil or rec == nil or rec.session ~= id then
    return
  end
  local state = require("rpiv_todo.session").get(id):state()
  rec.tasks, rec.nextId = state.tasks, state.nextId
end

---The list in compact form that the current chat's memory summary calls for, or nil (no
---summary, or no task in session `id`). The first time a summary
---is seen (avante summarized the chat: `/compact`, or its context window filling up)
---`todo.on_compaction(id)` renders it, and the record keeps that text and the list it
---shows until the next summary.
---@param id string
---@return string|nil text
---@return string|nil shown the list the text shows, as JSON text
function H.compacted_list(id)
  local sidebar = H.sidebar()
  local history = type(sidebar) == "table" and sidebar.chat_history or nil
  local memory = type(history) == "table" and history.memory or nil
  if type(memory) ~= "table" or type(memory.content) ~= "string" or memory.content == "" then
    return nil
  end
  local rec = H.record(history)
  if rec == nil then
    if type(history.messages) ~= "table" or #history.messages == 0 then
      return nil
    end
    rec = {}
    history[M.RECORD] = rec
  end
  local key = require("rpiv_todo.native").sha256(
    table.concat(
      { memory.content, tostring(memory.last_message_uuid), tostring(memory.last_summarized_timestamp) },
      "\0"
    )
  )
  local seen, fresh = require("rpiv_todo.adapters.common").compaction(rec.compaction, key, id)
  if fresh then
    if seen.text ~= nil then
      seen.list = require("rpiv_todo.session").get(id).list:state_json()
    end
    -- The list is kept as JSON text (`list`), not as tables: the record goes into the
    -- chat's history file.
    seen.tasks, seen.nextId = nil, nil
    rec.compaction = seen
  end
  if type(seen.text) ~= "string" then
    return nil
  end
  return seen.text, type(seen.list) == "string" and seen.list or nil
end

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
  if H.listening then
    return
  end
  -- The prompt is the chat's first message when the chat is new, and it is not in the
  -- history yet: a new chat's list does not exist yet, and has nothing to hide.
  H.listening = require("rpiv_todo.host").on_user_event("rpiv_todo.avante", { "AvanteInputSubmitted" }, function()
    require("rpiv_todo").turn_started(H.sidebar_session())
  end)
  if H.listening then
    require("rpiv_todo").register_chat("avante", M.buffer_session)
  end
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

---What the current avante chat's requests should carry in the system prompt, or nil.
---avante has no end-of-turn hook for tools and no way to add a message to a request; its
---`system_prompt` option may be a function, called for every request, which can return
---this: `system_prompt = function() return require("rpiv_todo.adapters.avante").reminder()
---or "" end`. After avante summarized the chat into its memory: the list in compact form
---(`todo.on_compaction`), rendered when the summary was first seen and the same text in
---every later request; then, once the list has changed since, the end-of-turn reminder
---too (`todo.reminder`: its tasks left in_progress). Without a summary: the reminder. And
---once, what other writers changed since the model's last call (`list:changes`).
---@param opts? rpiv_todo.AvanteOptions the options given to `tool()` (for a `session` option)
---@return string|nil
function M.reminder(opts)
  opts = require("rpiv_todo.adapters.options").check("avante", opts, H.OPTIONS)
  local id = H.session(opts.session, nil)
  local sessions = require("rpiv_todo.session")
  if id == nil or not sessions.exists(id) then
    return nil
  end
  -- This runs inside avante's request building: nothing here may raise into it.
  local ok, list, shown = pcall(H.compacted_list, id)
  if not ok then
    list, shown = nil, nil
  end
  local reminder = require("rpiv_todo").reminder(id)
  -- What other writers (the user's :Todos edits, an agent on the same file) changed since
  -- the model's last call: in this request, once.
  local told, note = pcall(function()
    local l = sessions.get(id).list
    l:set_writer("avante")
    return l:changes()
  end)
  note = told and note or nil
  local text
  if list == nil then
    text = reminder
  elseif reminder == nil or require("rpiv_todo.adapters.common").unchanged(id, shown) then
    text = list
  else
    text = list .. "\n\n" .. reminder
  end
  if note == nil then
    return text
  end
  return text == nil and note or (text .. "\n\n" .. note)
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
      local id = H.session(session, avante_opts)
      local result = spec.execute(input, { session = id, by = "avante" })
      pcall(H.keep_list, id)
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
