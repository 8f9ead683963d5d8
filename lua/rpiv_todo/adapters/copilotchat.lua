-- rpiv_todo.adapters.copilotchat: the `todo` tool as a CopilotChat.nvim function.
--
--   require("CopilotChat").setup({
--     functions = require("rpiv_todo.adapters.copilotchat").functions(),
--     tools = { "rpiv_todo" },           -- or `@rpiv_todo` in a prompt
--     trusted_tools = { "rpiv_todo" },   -- optional: run todo calls without asking
--   })
--
-- CopilotChat keeps its tools in the `functions` table of its config, keyed by name. For each
-- it sends `description` and `schema` to the model, runs `resolve(input, source)` with the
-- decoded arguments, and hands the model the `data` of the resources `resolve` returns. A
-- function that fails raises a Lua error: CopilotChat catches it and gives the model the
-- message (or, with `stop_on_function_failure`, stops and shows it in an ```error block).
-- So a rejected call raises its `Error: ...` text, and the list is unchanged. CopilotChat has
-- no separate system prompt for a function, so the prompt snippet and the guidelines are
-- appended to the description. Its JSON decoder turns null into nil (`luanil`), so
-- `{"metadata":{"a":null}}` arrives without the key: nothing is deleted.
--
-- Sessions: CopilotChat has one chat window. A chat is known by the id of its first message
-- with text (the user's first prompt):
-- `:CopilotChatReset` (or a new prompt with `clear_chat_on_new_prompt`) starts a new chat
-- with a new first message, so a new list; `:CopilotChatLoad name` brings back the messages
-- of a saved chat with their ids, so a loaded chat gets its own list, the same one every
-- time it is loaded (and, with `persist = true`, across restarts). The `session` option
-- names the list instead. Plain Lua; CopilotChat itself is only looked up, guarded.

---@helptext rpiv_todo-adapters-copilotchat verbatim
--- CopilotChat.nvim                              *rpiv_todo-adapters-copilotchat*
--- >
---     require("CopilotChat").setup({
---       functions = require("rpiv_todo.adapters.copilotchat").functions(),
---       tools = "rpiv_todo",              -- or @rpiv_todo in a prompt
---       trusted_tools = { "rpiv_todo" },  -- optional: no question per call
---     })
--- <
--- One function, `todo` (group `rpiv_todo`): the guidance is in its
--- description, `resolve` returns the reply as a resource, and a rejected call
--- raises its `Error: ...` text, which CopilotChat gives the model as the
--- result. A chat is known by the id of its first prompt: `:CopilotChatReset`
--- starts a new list, a chat loaded with `:CopilotChatLoad name` gets its own
--- back. Options: `session` (a string, or function(source, chat)), `group`.

local M = {}
local H = {}

local options = require("rpiv_todo.adapters.options")

---@class rpiv_todo.CopilotChatOptions
---@field session? string|fun(source: table|nil, chat: table|nil): string|nil the session a call runs in (a function receives CopilotChat's source and chat); default: one per chat
---@field group? string the CopilotChat group the function belongs to (default "rpiv_todo")

H.OPTIONS = {
  { "session", "a session id string or a function(source, chat) returning one", options.is_session },
  { "group", "a non-empty string", options.is_name },
}

-- The group of the function: `@rpiv_todo` in a prompt or `tools = "rpiv_todo"` enables it.
M.GROUP = "rpiv_todo"

-- The session id prefix of CopilotChat's chats.
M.PREFIX = "copilotchat:"

---The description CopilotChat sends: the prompt snippet, the tool description and the
---guidelines, each once (`rpiv_todo.tool.definition` for a host without instructions).
---@param spec rpiv_todo.ToolSpec
---@return string
function M.description(spec)
  return require("rpiv_todo.tool").definition(spec, { instructions = false }).description
end

-- The filetype of CopilotChat's chat window: Neovim's panel keeps off it by default.
M.chat_filetypes = { "copilot-chat" }

---CopilotChat's chat, when CopilotChat is loaded.
---@return table|nil
function H.chat()
  local loaded = package.loaded["CopilotChat"]
  if type(loaded) ~= "table" then
    return nil
  end
  local ok, chat = pcall(function()
    return loaded.chat
  end)
  return ok and type(chat) == "table" and chat or nil
end

---The session of a chat: named after the id of its first message with text, which a reset
---replaces and a load brings back. (CopilotChat starts every chat, a loaded one too, with an
---empty user message of a fresh id; a new chat's prompt then fills that message in place.)
---@param chat table|nil
---@return string|nil
function M.chat_session(chat)
  if type(chat) ~= "table" or type(chat.get_messages) ~= "function" then
    return nil
  end
  local ok, messages = pcall(chat.get_messages, chat)
  if not ok or type(messages) ~= "table" then
    return nil
  end
  for _, message in ipairs(messages) do
    local id = type(message) == "table" and message.id or nil
    local content = type(message) == "table" and message.content or nil
    if type(content) == "string" and content:find("%S") ~= nil then
      if (type(id) == "string" and id ~= "") or type(id) == "number" then
        return M.PREFIX .. tostring(id)
      end
      return nil
    end
  end
  return nil
end

---The session the panel shows while `bufnr` is current: the chat's, when the buffer is
---CopilotChat's chat window (nil otherwise).
---@param bufnr integer
---@return string|nil
function M.buffer_session(bufnr)
  local chat = H.chat()
  if chat ~= nil and chat.bufnr == bufnr then
    return M.chat_session(chat)
  end
  return nil
end

---The session a call runs in: the option, else the chat's own, else nil ("default").
---@param option any
---@param source any
---@return string|nil
function H.session(option, source)
  local chat = H.chat()
  if type(option) == "function" then
    return option(source, chat)
  elseif option ~= nil then
    return option
  end
  return M.chat_session(chat)
end

---The entries to merge into CopilotChat's `functions` config: `{ todo = { ... } }`. The spec
---is built now, from the current rpiv_todo.setup().
---@param opts? rpiv_todo.CopilotChatOptions
---@return table<string, table> functions
function M.functions(opts)
  opts = options.check("copilotchat", opts, H.OPTIONS)
  local session = opts.session
  local spec = require("rpiv_todo").tool()
  require("rpiv_todo").register_chat("copilotchat", M.buffer_session)
  return {
    [spec.name] = {
      group = opts.group or M.GROUP,
      description = M.description(spec),
      schema = spec.parameters,
      ---@param input table|string the decoded arguments (JSON text also works)
      ---@param source? table CopilotChat's source (the buffer and window the chat is about)
      ---@return table[] resources { { data, name, mimetype } }: the reply
      resolve = function(input, source)
        local result = spec.execute(input, { session = H.session(session, source), by = "copilotchat" })
        local first = result.content and result.content[1]
        local text = type(first) == "table" and first.text or ""
        if result.details and result.details.error ~= nil then
          error(text, 0)
        end
        return { { data = text, name = spec.name, mimetype = "text/plain" } }
      end,
    },
  }
end

return M
