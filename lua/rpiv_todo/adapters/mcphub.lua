-- rpiv_todo.adapters.mcphub: the `todo` tool as a native MCP server of mcphub.nvim, which
-- hands it to every chat plugin mcphub serves (avante, codecompanion, CopilotChat).
--
--   require("mcphub").setup({ ... })
--   require("rpiv_todo.adapters.mcphub").register()
--
-- It adds the native server `rpiv_todo` with:
--   * the tool `todo`: `inputSchema` is the tool's JSON Schema and its description carries
--     the prompt snippet and the guidelines (a chat plugin shows the model nothing else of a
--     server's tool); the handler answers with the reply text, or, for a rejected call,
--     with mcphub's error response (`isError = true`, the `Error: ...` text), the list
--     unchanged;
--   * the resource `rpiv_todo://todos`: the list as `/todos` shows it.
--
-- Sessions: mcphub tells a native server which chat plugin called (`req.caller`). A call
-- from codecompanion runs in that chat's list (`session_of(chat)`, the same list the
-- codecompanion adapter uses), one from avante in the list of the sidebar's chat
-- (`avante:<history file>`), one from CopilotChat in the list of its current chat (see the
-- copilotchat adapter). Anything else (mcphub's own UI, a caller mcphub does not name) uses
-- one list per working directory: `mcphub:<cwd>`. The `session` option decides instead.
-- Runs inside Neovim only (mcphub is a Neovim plugin); mcphub is looked up, guarded.

---@helptext rpiv_todo-adapters-mcphub verbatim
--- mcphub.nvim                                        *rpiv_todo-adapters-mcphub*
--- >
---     require("rpiv_todo.adapters.mcphub").register()
--- <
--- adds the native MCP server `rpiv_todo` (tool `todo`, resource
--- `rpiv_todo://todos` with the |:Todos| text) that mcphub hands to avante,
--- codecompanion and CopilotChat. A rejected call is an error response. A call
--- uses the calling chat's list when mcphub names the chat (codecompanion,
--- avante, CopilotChat), else `mcphub:<cwd>`. Options: `session` (a string, or
--- function(req)), `server`.

local M = {}
local H = {}

local options = require("rpiv_todo.adapters.options")

---@class rpiv_todo.McphubOptions
---@field session? string|fun(req: table): string|nil the session a call runs in (a function receives mcphub's request); default: the calling chat's, else one per working directory
---@field server? string the native server's name (default "rpiv_todo")

H.OPTIONS = {
  { "session", "a session id string or a function(req) returning one", options.is_session },
  { "server", "a non-empty string", options.is_name },
}

-- The native server's name, and the URI of the /todos resource.
M.SERVER = "rpiv_todo"
M.TODOS_URI = "rpiv_todo://todos"

---The description mcphub hands to the chat: the prompt snippet, the tool description and
---the guidelines.
---@param spec rpiv_todo.ToolSpec
---@return string
function M.description(spec)
  return require("rpiv_todo.adapters.copilotchat").description(spec)
end

---The list of a codecompanion chat: the codecompanion adapter's own name for it, so a chat
---that calls through mcphub and through the adapter keeps one list.
---@param tools any codecompanion's Tools coordinator (`tools.chat`) or the chat
---@return string|nil
function H.codecompanion(tools)
  local chat = type(tools) == "table" and (type(tools.chat) == "table" and tools.chat or tools) or nil
  if chat == nil then
    return nil
  end
  return require("rpiv_todo.adapters.codecompanion").session_of(chat)
end

---The list of an avante sidebar's chat: the avante adapter's own name for it.
---@param sidebar any
---@return string|nil
function H.avante(sidebar)
  if type(sidebar) ~= "table" then
    return nil
  end
  return require("rpiv_todo.adapters.avante").sidebar_session(sidebar)
end

---The list of CopilotChat's current chat.
---@param module any the CopilotChat module mcphub passes
---@return string|nil
function H.copilotchat(module)
  local ok, chat = pcall(function()
    return module.chat
  end)
  if not ok then
    return nil
  end
  return require("rpiv_todo.adapters.copilotchat").chat_session(chat)
end

---The working directory's list.
---@return string
function H.cwd_session()
  local host = require("rpiv_todo.host")
  local cwd = host.editor() and host.cwd() or nil
  return "mcphub:" .. (type(cwd) == "string" and cwd or "")
end

---The session of a request: the caller's chat when mcphub names it, else the working
---directory's.
---@param req any mcphub's ToolRequest or ResourceRequest
---@return string
function M.session_of(req)
  local caller = type(req) == "table" and type(req.caller) == "table" and req.caller or {}
  local id
  if caller.type == "codecompanion" then
    id = H.codecompanion(caller.codecompanion)
  elseif caller.type == "avante" then
    id = H.avante(caller.avante)
  elseif caller.type == "copilotchat" then
    id = H.copilotchat(caller.copilotchat)
  end
  return id or H.cwd_session()
end

---@param option any
---@param req table
---@return string|nil
function H.session(option, req)
  if type(option) == "function" then
    return option(req)
  elseif option ~= nil then
    return option
  end
  return M.session_of(req)
end

---The server definition mcphub registers: `{ name, displayName, description, capabilities }`.
---The spec is built now, from the current rpiv_todo.setup().
---@param opts? rpiv_todo.McphubOptions
---@return table def
function M.server(opts)
  opts = options.check("mcphub", opts, H.OPTIONS)
  local session = opts.session
  local todo = require("rpiv_todo")
  local spec = todo.tool()
  local tool = {
    name = spec.name,
    description = M.description(spec),
    inputSchema = spec.parameters,
    ---@param req table mcphub's ToolRequest (`params`: the arguments, `caller`: who called)
    ---@param res table mcphub's ToolResponse
    handler = function(req, res)
      local result = spec.execute(req.params or {}, { session = H.session(session, req), by = "mcphub" })
      local first = result.content and result.content[1]
      local text = type(first) == "table" and first.text or ""
      if result.details and result.details.error ~= nil then
        return res:error(text)
      end
      return res:text(text):send()
    end,
  }
  local resource = {
    name = "todos",
    uri = M.TODOS_URI,
    description = "The todo list of the calling chat, as /todos shows it",
    mimeType = "text/plain",
    handler = function(req, res)
      local id = H.session(session, req)
      local state = require("rpiv_todo.session").get(id):state()
      local text = todo.command.todos(state, { interactive = true })
      return res:text(text, "text/plain"):send()
    end,
  }
  return {
    name = opts.server or M.SERVER,
    displayName = "rpiv_todo",
    description = "A task list the model keeps across a long session (the todo tool)",
    capabilities = { tools = { tool }, resources = { resource }, resourceTemplates = {}, prompts = {} },
  }
end

---Add the native server to mcphub. Registering again (a second call, a reloaded config)
---keeps the server mcphub already has.
---@param opts? rpiv_todo.McphubOptions
---@return table|nil server mcphub's NativeServer, nil when mcphub is not installed
---@return string|nil err
function M.register(opts)
  local def = M.server(opts)
  local ok, mcphub = pcall(require, "mcphub")
  if not ok or type(mcphub) ~= "table" or type(mcphub.add_server) ~= "function" then
    return nil, "(rpiv_todo) mcphub: mcphub.nvim is not installed (require('mcphub') failed)"
  end
  local existing = type(mcphub.is_native_server) == "function" and mcphub.is_native_server(def.name) or nil
  if existing then
    return existing
  end
  local server = mcphub.add_server(def.name, def)
  if server == nil then
    return nil, "(rpiv_todo) mcphub: mcphub refused the server " .. def.name
  end
  return server
end

return M
