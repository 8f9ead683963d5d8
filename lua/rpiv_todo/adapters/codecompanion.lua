-- rpiv_todo.adapters.codecompanion: the `todo` tool as a codecompanion.nvim tool.
--
--   require("codecompanion").setup({
--     interactions = { chat = { tools = {   -- `strategies = { chat = { tools = {` before v18
--       todo = {
--         description = "Keep a task list for multi-step work",
--         callback = function() return require("rpiv_todo.adapters.codecompanion").tool() end,
--       },
--     } } },
--   })
--
-- What codecompanion does with it (checked against v17.33 and v19.22): it sends `schema`
-- (an OpenAI function definition) and `system_prompt` to the model, calls each of `cmds` as
-- fn(tools, args, opts) where `tools` is its Tools coordinator (runner.lua; `tools.chat` is
-- the chat) and `args` the decoded arguments (JSON null as vim.NIL), then hands the
-- collected output to `output.success` or `output.error`, which put the text into the chat
-- for the model. Those lists are turn-wide in places (v19 passes every error of the turn,
-- v17 every result), so each message carries only the last entry: the call's own result.
-- Both output signatures are handled: (self, output, meta) from v18 on, (self, tools, cmd,
-- output) before.
--
-- Sessions: each chat has its own list (`codecompanion:<time>-<pid>-<n>`, made for it when
-- first seen: codecompanion's own chat id comes from an unseeded math.random) unless
-- `session` says otherwise. The id is kept in the chat's own messages (`_meta.rpiv_todo`
-- of each todo result and of the list message below), so a chat reopened from its saved
-- messages, in this editor or after a restart, gets the same id (and, with `persist`, the
-- same file), and its list back from the last list message and the `todo` calls after it.
-- Compaction: codecompanion fires `User CodeCompanionChatCompacting` when it summarizes a
-- chat (`/compact`, its context management) and when the adapter's response carries a
-- compaction (`meta.compaction`: Anthropic, OpenAI responses). The next request the chat
-- sends gets the list in compact form (`todo.on_compaction`) as a hidden user message
-- tagged `rpiv_todo_list`, after the summary; it stays in the chat as it is, carrying the
-- whole list in `_meta.rpiv_todo` for a restore. Strict mode: codecompanion's openai_responses adapter (and
-- Copilot's responses endpoint) rewrites every tool schema into OpenAI's strict form in
-- place, which a free-form metadata object cannot pass; with `strict = "auto"` (the
-- default) the chat's schema is switched to rpiv_todo's own strict form whenever the
-- chat's adapter is one of those, and back when it changes. That is decided from what the
-- adapter already holds, never by asking it for its models (which may be a blocking HTTP
-- request). Calls are accepted in either form. Turns: a request that starts with a new
-- prompt in a chat with the tool marks a new turn for the panel, so completed tasks fall
-- away (the tool results going back to the model continue the same turn). End of turn: when
-- a turn ends with tasks left in_progress, `todo.reminder()` is added to the chat as a
-- hidden user message, so the model reads it with the next request; a chat holds one at
-- most, none while the list is still the one a compaction put in view, and the request
-- that carries the list after a compaction carries no reminder. The panel shows the list of the chat in the current window. All that listens to
-- codecompanion's User events, so it runs only inside Neovim; the rest is plain Lua.

local M = {}
local H = {}

-- The filetype of codecompanion's chat windows: Neovim's panel keeps off them
-- (adapters.common).
M.chat_filetypes = { "codecompanion" }

---@class rpiv_todo.CodeCompanionOptions
---@field session? string|fun(tools: table, chat: table|nil): string|nil the session a call runs in (a function receives codecompanion's Tools coordinator and the chat); default: one per chat
---@field strict? boolean|"auto" the strict-mode form of the schema: always, never, or when the chat's adapter forces strict mode (default "auto")
---@field reminder? boolean add the end-of-turn reminder to the chat (default true)

local options = require("rpiv_todo.adapters.options")

H.OPTIONS = {
  { "session", "a session id string or a function(tools, chat) returning one", options.is_session },
  {
    "strict",
    'true, false or "auto"',
    function(v)
      return type(v) == "boolean" or v == "auto"
    end,
  },
  { "reminder", "a boolean", options.is_boolean },
}

-- Adapters whose requests force OpenAI's strict mode on every tool (by name).
M.STRICT_ADAPTERS = { openai_responses = true }

-- What the adapter reads from and writes into a chat (rpiv_todo.adapters.codecompanion.chat).
local chat_io = require("rpiv_todo.adapters.codecompanion.chat")
M.REMINDER_TAG = chat_io.REMINDER_TAG
M.LIST_TAG = chat_io.LIST_TAG
-- The hidden message that tells the model what other writers changed.
M.CHANGES_TAG = "rpiv_todo_changes"
M.history_key = chat_io.history_key
M.session_of = chat_io.session_of
M.completed_calls = chat_io.completed_calls
M.own_text = chat_io.own_text
M.is_new_prompt = chat_io.is_new_prompt

-- The schemas this module handed out, with the options they were made with (weak keys:
-- a schema is forgotten with its chat).
H.schemas = setmetatable({}, { __mode = "k" })

---The system prompt: the prompt snippet and the guidelines.
---@param spec rpiv_todo.ToolSpec
---@return string
function M.system_prompt(spec)
  local parts = { "## Todo tool (`" .. spec.name .. "`)", "", spec.prompt_snippet, "" }
  for _, line in ipairs(spec.prompt_guidelines) do
    parts[#parts + 1] = "- " .. line
  end
  return table.concat(parts, "\n")
end

---Does this codecompanion adapter force strict mode on tool schemas? openai_responses
---does, and so does any adapter that sends to a `/responses` endpoint, or whose current
---model is served there (Copilot's responses models).
---@param adapter any
---@return boolean
function M.forces_strict(adapter)
  if type(adapter) ~= "table" then
    return false
  end
  if M.STRICT_ADAPTERS[adapter.name] then
    return true
  end
  if type(adapter.url) == "string" and adapter.url:find("/responses$") ~= nil then
    return true
  end
  return H.model_endpoint(adapter) == "responses"
end

---The endpoint the adapter's current model is served on, from what the adapter already
---holds: the model's info (Copilot's adapter keeps `model.info`, the entry of its model list,
---once it has resolved the model) or a model list given as a table. A `choices` function is
---never called: an adapter may answer it with a blocking HTTP request (openai_compatible's
---`GET /v1/models` ignores `async`), and this runs on the main loop. nil when unknown.
---@param adapter table
---@return string|nil
function H.model_endpoint(adapter)
  local ok, endpoint = pcall(function()
    local info = type(adapter.model) == "table" and adapter.model.info or nil
    if type(info) == "table" and type(info.endpoint) == "string" then
      return info.endpoint
    end
    local model = adapter.schema.model
    local name = type(adapter.model) == "table" and adapter.model.name or nil
    if type(name) ~= "string" then
      name = model.default
    end
    local choices = model.choices
    local choice = type(name) == "string" and type(choices) == "table" and choices[name] or nil
    return type(choice) == "table" and choice.endpoint or nil
  end)
  return ok and type(endpoint) == "string" and endpoint or nil
end

---Put the normal or the strict form of the parameters into a registered schema, in place
---(codecompanion keeps a reference to it). For an adapter that forces strict mode the
---parameters also say `strict = true`, which codecompanion reads as "already strict" and
---leaves alone (it sends only type, properties, required and additionalProperties).
---@param schema table the tool's `schema` ({ type = "function", ["function"] = ... })
---@param strict boolean
---@param forced boolean the adapter forces strict mode
function M.set_form(schema, strict, forced)
  local tool = require("rpiv_todo.tool")
  local fn = schema["function"]
  if strict then
    fn.parameters = tool.strict_parameters()
    if forced then
      fn.parameters.strict = true
    end
  else
    fn.parameters = tool.parameters()
  end
  fn.strict = strict
end

---The session id for a call or a chat.
---@param option any the `session` option
---@param tools table|nil codecompanion's Tools coordinator
---@param chat table|nil
---@return string|nil
function H.session_id(option, tools, chat)
  if type(option) == "function" then
    return option(tools, chat)
  elseif option ~= nil then
    return option
  end
  if type(chat) == "table" then
    return chat_io.session_of(chat)
  end
  return nil
end

---The chat of a chat buffer, through codecompanion's own lookup.
---@param bufnr any
---@return table|nil
function H.chat(bufnr)
  if type(bufnr) ~= "number" then
    return nil
  end
  local ok, cc = pcall(require, "codecompanion")
  if not ok or type(cc) ~= "table" or type(cc.buf_get_chat) ~= "function" then
    return nil
  end
  local found, chat = pcall(cc.buf_get_chat, bufnr)
  if found and type(chat) == "table" and chat.bufnr == bufnr then
    return chat
  end
  return nil
end

---Our schemas registered in a chat, with their options.
---@param chat table
---@return table<table, rpiv_todo.CodeCompanionOptions>
function H.registered(chat)
  local found = {}
  local registry = type(chat.tool_registry) == "table" and chat.tool_registry or nil
  for _, schema in pairs(registry and type(registry.schemas) == "table" and registry.schemas or {}) do
    if H.schemas[schema] ~= nil then
      found[schema] = H.schemas[schema]
    end
  end
  return found
end

---Give the chat's todo schema the form its adapter needs.
---@param chat table
function H.refresh(chat)
  local forced = M.forces_strict(chat.adapter)
  for schema, opts in pairs(H.registered(chat)) do
    local strict = opts.strict
    if strict == nil or strict == "auto" then
      strict = forced
    end
    M.set_form(schema, strict, forced)
  end
end

-- The name the model's calls in a chat go by as a writer of the list.
H.WRITER = "codecompanion"

---The session of {chat}'s todo list and the tool's options, when the chat holds the tool
---and that session exists; nil otherwise.
---@param chat table
---@return string|nil id
---@return table|nil opts
function H.chat_session(chat)
  local _, opts = next(H.registered(chat))
  if opts == nil then
    return nil
  end
  local sessions = require("rpiv_todo.session")
  local id = H.session_id(opts.session, chat.tools, chat) or sessions.DEFAULT_ID
  if not sessions.exists(id) then
    return nil
  end
  return id, opts
end

-- Per chat (weak keys): how many compactions codecompanion announced, and the record of
-- the last list put back after one (rpiv_todo.adapters.common.compaction).
H.compactions = setmetatable({}, { __mode = "k" })
H.shown = setmetatable({}, { __mode = "k" })

---A request of a compacted chat is about to go: the list in compact form goes into the
---chat as a hidden user message (kept there as it is) and at the end of this request's
---`payload`, and no reminder goes with it. A compaction codecompanion runs itself applies
---its summary before this request; one the adapter's response carried is followed by it.
---@param chat table
---@param payload any the request's `{ messages, ... }` (built already: changed in place)
function H.after_compaction(chat, payload)
  local key = H.compactions[chat]
  if key == nil or chat._compacting then
    return
  end
  local id, opts = H.chat_session(chat)
  if id == nil then
    H.shown[chat] = { key = key }
    return
  end
  local shown, fresh = require("rpiv_todo.adapters.common").compaction(H.shown[chat], key, id)
  H.shown[chat] = shown
  if not fresh then
    return
  end
  chat_io.drop_reminders(chat)
  local sent = type(payload) == "table" and type(payload.messages) == "table" and payload.messages or nil
  if sent ~= nil then
    payload.messages = chat_io.without_reminders(sent)
    sent = payload.messages
  end
  if shown.text == nil or type(chat.add_message) ~= "function" then
    return
  end
  local record = { tasks = shown.tasks, nextId = shown.nextId }
  if opts.session == nil then
    record.session = id
  end
  H.send_hidden(chat, sent, shown.text, { tag = M.LIST_TAG, rpiv_todo = record })
end

---A hidden user message in {chat}, kept there, and the same at the end of the request being
---sent ({sent}: the payload's messages, or nil when there is none to change).
---@param chat table
---@param sent table|nil
---@param text string
---@param meta table
function H.send_hidden(chat, sent, text, meta)
  chat:add_message({ role = "user", content = text }, { visible = false, _meta = meta })
  local added = chat.messages[#chat.messages]
  if sent ~= nil and chat_io.ours(added, meta.tag) then
    -- The payload holds shallow copies with the adapter's role names.
    local copy = {}
    for k, v in pairs(added) do
      copy[k] = v
    end
    local ok, mapped = pcall(function()
      return chat.adapter:map_roles({ copy })
    end)
    sent[#sent + 1] = ok and type(mapped) == "table" and mapped[1] or copy
  end
end

---A request of {chat} is about to go: what other writers (the user's `:Todos` edits, an
---agent in a terminal on the same file) changed since the model's last call goes with it,
---once, as a hidden user message; its next tool reply then repeats none of it.
---@param chat table
---@param payload any
function H.tell_changes(chat, payload)
  local id = H.chat_session(chat)
  if id == nil or type(chat.add_message) ~= "function" then
    return
  end
  local list = require("rpiv_todo.session").get(id).list
  list:set_writer(H.WRITER)
  local note = list:changes()
  if note == nil then
    return
  end
  local sent = type(payload) == "table" and type(payload.messages) == "table" and payload.messages or nil
  H.send_hidden(chat, sent, note, { tag = M.CHANGES_TAG })
end

---At the end of a turn: the reminder as a hidden user message, when tasks are left
---in_progress in the chat's list. A chat holds at most one: the previous reminder goes
---first (it is stale either way: repeated, or about tasks that are settled now).
---@param chat table
function H.remind(chat)
  for _, opts in pairs(H.registered(chat)) do
    if opts.reminder ~= false then
      chat_io.drop_reminders(chat)
      local id = H.session_id(opts.session, chat.tools, chat)
      local sessions = require("rpiv_todo.session")
      id = id or sessions.DEFAULT_ID
      local common = require("rpiv_todo.adapters.common")
      if sessions.exists(id) and not common.unchanged(id, chat_io.shown_list(chat)) then
        local text = require("rpiv_todo").reminder(id)
        if text ~= nil and type(chat.add_message) == "function" then
          chat:add_message({ role = "user", content = text }, { visible = false, _meta = { tag = M.REMINDER_TAG } })
        end
      end
      return
    end
  end
end

---The session the panel should show while `bufnr` is current: that chat's list, when the
---buffer is a codecompanion chat holding the todo tool (nil otherwise).
---@param bufnr integer
---@return string|nil
function M.buffer_session(bufnr)
  if package.loaded["codecompanion"] == nil then
    return nil -- never load codecompanion for a window check
  end
  local chat = H.chat(bufnr)
  if chat == nil then
    return nil
  end
  local _, opts = next(H.registered(chat))
  if opts == nil then
    return chat_io.known_session(chat)
  end
  return H.session_id(opts.session, chat.tools, chat)
end

---A request of `chat` is about to be built: give the schema the form the adapter needs
---now (once per chat: codecompanion keeps its callbacks with the chat).
---@param chat table
function H.watch(chat)
  if H.watched[chat] or type(chat.add_callback) ~= "function" then
    return
  end
  H.watched[chat] = true
  chat:add_callback("on_submitted", function(c, data)
    pcall(H.refresh, c) -- codecompanion calls back with (chat, data)
    pcall(H.after_compaction, c, type(data) == "table" and data.payload or nil)
    pcall(H.tell_changes, c, type(data) == "table" and data.payload or nil)
  end)
end
H.watched = setmetatable({}, { __mode = "k" })

---Listen to codecompanion's events, once: a tool added to a chat or a change of adapter or
---model sets the schema's form (again just before each request is built); a request
---starting marks a new turn for the panel (completed tasks fall away); a compaction puts
---the list in the next request; the end of a turn adds the reminder. The panel shows the list of the chat in the current window. Inside
---Neovim only.
function H.listen()
  if H.listening then
    return
  end
  H.listening = require("rpiv_todo.host").on_user_event("rpiv_todo.codecompanion", H.EVENTS, function(data, event)
    local chat = H.chat(type(data) == "table" and data.bufnr or nil)
    if chat ~= nil then
      H.on_event[event](chat)
    end
  end)
  if H.listening then
    require("rpiv_todo").register_chat("codecompanion", M.buffer_session)
  end
end

-- What each of codecompanion's User events does with its chat.
H.on_event = {
  CodeCompanionChatToolAdded = function(chat)
    H.refresh(chat)
    H.watch(chat)
  end,
  CodeCompanionChatSubmitted = function(chat)
    local _, opts = next(H.registered(chat))
    if opts ~= nil and chat_io.is_new_prompt(chat.messages) then
      local id = H.session_id(opts.session, chat.tools, chat)
      require("rpiv_todo").turn_started(id or require("rpiv_todo.session").DEFAULT_ID)
    end
  end,
  CodeCompanionChatCompacting = function(chat)
    if next(H.registered(chat)) ~= nil then
      H.compactions[chat] = (H.compactions[chat] or 0) + 1
      H.watch(chat)
    end
  end,
  CodeCompanionChatDone = function(chat)
    H.remind(chat)
  end,
}
H.on_event.CodeCompanionChatAdapter = H.on_event.CodeCompanionChatToolAdded
H.on_event.CodeCompanionChatModel = H.on_event.CodeCompanionChatToolAdded

H.EVENTS = {
  "CodeCompanionChatToolAdded",
  "CodeCompanionChatAdapter",
  "CodeCompanionChatModel",
  "CodeCompanionChatSubmitted",
  "CodeCompanionChatCompacting",
  "CodeCompanionChatDone",
}

---The codecompanion tool. The spec is built now, from the current rpiv_todo.setup().
---@param opts? rpiv_todo.CodeCompanionOptions
---@return table tool { name, schema, system_prompt, cmds, output }
function M.tool(opts)
  opts = options.check("codecompanion", opts, H.OPTIONS)
  local spec = require("rpiv_todo").tool()
  local tool = require("rpiv_todo.tool")
  local schema = {
    type = "function",
    ["function"] = {
      name = spec.name,
      description = spec.description,
      parameters = spec.parameters,
      strict = false,
    },
  }
  if opts.strict == true then
    M.set_form(schema, true, false)
  end
  H.schemas[schema] = opts
  H.listen()
  return {
    name = spec.name,
    schema = schema,
    system_prompt = M.system_prompt(spec),
    cmds = {
      ---@param tools table codecompanion's Tools coordinator (`tools.chat` is the chat)
      ---@param args table|string the decoded arguments, normal or strict form (JSON text also works)
      ---@return { status: "success"|"error", data: string }
      function(tools, args, _)
        local id = H.session_id(opts.session, tools, chat_io.chat_of(tools))
        local result = tool.execute_strict(args, { session = id, by = H.WRITER })
        local text, failed = require("rpiv_todo.adapters.common").outcome(result)
        if failed then
          return { status = "error", data = text }
        end
        return { status = "success", data = text }
      end,
    },
    output = {
      success = function(self, a, b, c)
        local chat, text = chat_io.output_args(a, b, c)
        chat_io.add_output(self, chat, text, opts.session == nil)
      end,
      error = function(self, a, b, c)
        local chat, text = chat_io.output_args(a, b, c)
        chat_io.add_output(self, chat, text, opts.session == nil)
      end,
    },
  }
end

return M
