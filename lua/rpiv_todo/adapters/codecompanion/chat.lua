-- rpiv_todo.adapters.codecompanion.chat: what the codecompanion adapter reads from and
-- writes into a chat: the session id its messages keep (and the list restored from
-- them), the completed `todo` calls, the tool output, and the hidden messages it adds
-- (the end-of-turn reminder, the list after a compaction). Plain Lua.

---@helptext rpiv_todo-adapters-codecompanion verbatim
--- codecompanion.nvim                          *rpiv_todo-adapters-codecompanion*
--- >
---     require("codecompanion").setup({
---       interactions = { chat = { tools = {
---         todo = {
---           description = "Keep a task list for multi-step work",
---           callback = function()
---             return require("rpiv_todo.adapters.codecompanion").tool()
---           end,
---         },
---         opts = { default_tools = { "todo" } },  -- or @{todo} in a prompt
---       } } },
---     })
--- <
---     (`strategies` instead of `interactions` in releases before v18.)
--- A chat has the tool only when it is added: `default_tools` offers it in
--- every chat; without it, type `@{todo}` in a prompt. A plain prompt sends no
--- tools otherwise.
---
--- Options of `tool()`:
---   session   function(tools, chat) or an id. codecompanion calls a tool's
---             `cmds` with its Tools coordinator (`tools.chat` is the chat),
---             not with the tool.
---   strict    "auto" (default): the strict-mode schema (|rpiv_todo-strict|)
---             whenever the chat's adapter forces OpenAI strict mode
---             (openai_responses, Copilot on /responses), the normal one
---             otherwise; true: always; false: never.
---   reminder  true (default): when a turn ends with tasks left in_progress,
---             `todo.reminder()` is added to the chat as a hidden message.
---
--- Each tool message carries only its own call's result (codecompanion hands
--- the output handlers every result or error of the turn). A chat holds one
--- reminder at most: the previous one goes when a turn ends. A new prompt marks
--- a new turn for the panel. Whether the adapter forces strict mode is read
--- from what it already holds (name, URL, the model's entry); its model list
--- function is never called, since for openai_compatible it is a blocking
--- `GET /v1/models`.

local M = {}
local H = {}

-- The tag of the hidden reminder messages in a chat.
M.REMINDER_TAG = "rpiv_todo_reminder"
-- The tag of the hidden message that puts the list back in view after a compaction.
M.LIST_TAG = "rpiv_todo_list"

-- The session id of each chat this editor has seen (weak keys: forgotten with the chat),
-- and the live chat that holds each id (weak values).
H.keys = setmetatable({}, { __mode = "k" })
H.holders = setmetatable({}, { __mode = "v" })

---The `_meta.rpiv_todo` record of a message, or nil.
---@param m any
---@return table|nil
function H.record(m)
  local meta = type(m) == "table" and type(m._meta) == "table" and m._meta or nil
  return meta ~= nil and type(meta.rpiv_todo) == "table" and meta.rpiv_todo or nil
end

---What a chat's messages say about its list: the session id they carry (the newest
---`_meta.rpiv_todo.session`), the list of the newest list message (`{ tasks, nextId }`)
---and that message's position (0 when there is none).
---@param messages any
---@return string|nil id
---@return table|nil snapshot
---@return integer at
function M.history_key(messages)
  local id, snapshot, at = nil, nil, 0
  if type(messages) ~= "table" then
    return nil, nil, 0
  end
  for i = #messages, 1, -1 do
    local rec = H.record(messages[i])
    if rec ~= nil then
      if id == nil and type(rec.session) == "string" and rec.session ~= "" then
        id = rec.session
      end
      if snapshot == nil and messages[i]._meta.tag == M.LIST_TAG and type(rec.tasks) == "table" then
        snapshot, at = { tasks = rec.tasks, nextId = rec.nextId }, i
      end
      if id ~= nil and snapshot ~= nil then
        break
      end
    end
  end
  return id, snapshot, at
end

---The default session of a chat: the id its messages carry (a chat reopened from its saved
---messages), else an id made for it the first time it is seen. A chat's own `id` is
---`math.random(10000000)`, the same for the first chat of every Neovim (Neovim does not
---seed math.random), so it cannot name a list. A reopened chat gets its list back from its
---last list message and the `todo` calls after it. Two open chats never share an id: a
---copy of a chat that is open already gets an id of its own (a chat whose buffer is gone
---is not open: reopened in the same editor, the chat keeps its id).
---@param chat table
---@return string
function M.session_of(chat)
  local id = H.keys[chat]
  if id == nil then
    local common = require("rpiv_todo.adapters.common")
    local kept, snapshot, at = M.history_key(chat.messages)
    id = kept
    local holder = id ~= nil and H.holders[id] or nil
    if id == nil or (holder ~= nil and holder ~= chat and H.open(holder)) then
      id = common.unique_id("codecompanion")
    end
    H.keys[chat], H.holders[id] = id, chat
    common.restore(id, M.completed_calls(chat.messages, at), snapshot)
  end
  return id
end

---Is this chat still open: its buffer valid (any chat outside Neovim, or without a buffer)?
---@param chat table
---@return boolean
function H.open(chat)
  return require("rpiv_todo.host").buf_valid(chat.bufnr)
end

---The arguments of the completed `todo` calls in a chat's messages, oldest first: calls
---(`tools.calls` of the model's messages after position {after}, default 0) whose result
---message (`tools.call_id`) is there.
---@param messages any
---@param after? integer
---@return table[]
function M.completed_calls(messages, after)
  if type(messages) ~= "table" then
    return {}
  end
  after = after or 0
  local answered = {}
  for _, m in ipairs(messages) do
    local call_id = type(m) == "table" and type(m.tools) == "table" and m.tools.call_id or nil
    if call_id ~= nil then
      answered[call_id] = true
    end
  end
  local calls = {}
  for i = after + 1, #messages do
    local m = messages[i]
    local list = type(m) == "table" and type(m.tools) == "table" and m.tools.calls or nil
    for _, call in ipairs(type(list) == "table" and list or {}) do
      local fn = type(call) == "table" and call["function"] or nil
      local done = type(call) == "table" and (answered[call.id or false] or answered[call.call_id or false])
      if type(fn) == "table" and fn.name == "todo" and done and fn.arguments ~= nil then
        calls[#calls + 1] = fn.arguments
      end
    end
  end
  return calls
end

---The text of one entry codecompanion collected: a string, a `{ status, data }` table, or
---a list of lines.
---@param item any
---@return string
function H.entry_text(item)
  if type(item) == "string" then
    return item
  end
  if type(item) ~= "table" then
    return item == nil and "" or tostring(item)
  end
  if item.data ~= nil then
    return H.entry_text(item.data)
  end
  local parts = {}
  for i = 1, #item do
    parts[i] = H.entry_text(item[i])
  end
  return table.concat(parts, "\n")
end

---This call's own text from what codecompanion hands to an output handler: the last
---entry (the orchestrator appends the call's result just before calling the handler;
---earlier entries belong to earlier calls of the turn).
---@param out any
---@return string
function M.own_text(out)
  if type(out) == "table" and out.data == nil and #out > 0 then
    return H.entry_text(out[#out])
  end
  return H.entry_text(out)
end

---Normalize both output signatures to (chat, text).
---v18+: (self, output, meta) with meta.tools.chat; before: (self, tools, cmd, output).
---@return table|nil chat, string text
function M.output_args(a, b, c)
  if type(a) == "table" and a.chat ~= nil and c ~= nil then
    return a.chat, M.own_text(c)
  end
  local tools = type(b) == "table" and b.tools or nil
  return M.chat_of(tools), M.own_text(a)
end

---@param self table the tool
---@param chat table|nil
---@param text string
---@param stamp boolean keep the chat's session id in the result message
function M.add_output(self, chat, text, stamp)
  if chat == nil or type(chat.add_tool_output) ~= "function" then
    return
  end
  chat:add_tool_output(self, text)
  local call = type(self) == "table" and type(self.function_call) == "table" and self.function_call.id or nil
  if not stamp or call == nil or type(chat.messages) ~= "table" then
    return
  end
  for i = #chat.messages, 1, -1 do
    local m = chat.messages[i]
    if type(m) == "table" and type(m.tools) == "table" and m.tools.call_id == call then
      m._meta = type(m._meta) == "table" and m._meta or {}
      m._meta.rpiv_todo = { session = M.session_of(chat) }
      return
    end
  end
end

---Is `m` a message this adapter added (`tag`: one tag; nil: the reminder or the list)?
---@param m any
---@param tag? string
---@return boolean
function M.ours(m, tag)
  local t = type(m) == "table" and type(m._meta) == "table" and m._meta.tag or nil
  if tag ~= nil then
    return t == tag
  end
  return t == M.REMINDER_TAG or t == M.LIST_TAG
end

---`messages` without the reminder messages (the same table when it holds none).
---@param messages table
---@return table
function M.without_reminders(messages)
  local kept = {}
  for _, m in ipairs(messages) do
    if not M.ours(m, M.REMINDER_TAG) then
      kept[#kept + 1] = m
    end
  end
  return #kept ~= #messages and kept or messages
end

---Remove the chat's reminder messages.
---@param chat table
function M.drop_reminders(chat)
  if type(chat.messages) == "table" then
    chat.messages = M.without_reminders(chat.messages)
  end
end

---The list of the chat's newest list message (`{ tasks, nextId }`), or nil.
---@param chat table
---@return table|nil
function M.shown_list(chat)
  local _, snapshot = M.history_key(chat.messages)
  return snapshot
end

---Was the request just submitted a new prompt, not the tool results going back to the
---model? Its last message (this adapter's own hidden messages aside) is then the user's
---(a tool result carries `tools.call_id`, whatever its role: Anthropic's are user
---messages).
---@param messages any
---@return boolean
function M.is_new_prompt(messages)
  local last = nil
  if type(messages) == "table" then
    for i = #messages, 1, -1 do
      if not M.ours(messages[i]) then
        last = messages[i]
        break
      end
    end
  end
  if type(last) ~= "table" or last.role ~= "user" then
    return false
  end
  return not (type(last.tools) == "table" and last.tools.call_id ~= nil)
end

---The chat a Tools coordinator belongs to.
---@param tools any
---@return table|nil
function M.chat_of(tools)
  if type(tools) == "table" and type(tools.chat) == "table" then
    return tools.chat
  end
  return nil
end

---The session id this editor gave `chat`, or nil before it was first seen.
---@param chat table
---@return string|nil
function M.known_session(chat)
  return H.keys[chat]
end

return M
