-- rpiv_todo.nvim: the Neovim front end's public functions, for agent front ends and users.
--
--   require("rpiv_todo").setup({ position = "top" })  -- the tool's and the editor's options
--   local nv = require("rpiv_todo.nvim")
--   nv.execute({ action = "create", subject = "Write the parser" }, { session = "chat-1" })
--   nv.replay("chat-1", messages)             -- rebuild a session from the host's history
--   local todo = require("rpiv_todo")         -- these are the facade's, in every host:
--   todo.turn_started("chat-1")               -- a new turn in chat-1: its completed tasks fall away
--   todo.register_chat("my-agent", lookup)    -- lookup(bufnr) -> the session of a chat buffer
--   todo.foreground("chat-1")                 -- pin the session the panel shows
--   todo.foreground(nil)                      -- follow the chat window / latest call (default)
-- (nv.turn_started, nv.register_chat and nv.foreground are deprecated aliases of those.)
--
-- The front end, one file per concern: frontend.lua (attaching, the panel's session,
-- painting; internal), setup.lua (the editor's part of setup()), options.lua (every
-- option, its check and doc line), autocmds.lua, keys.lua (the collapse key), locale.lua
-- (v:lang to the locale chain), panel.lua and listwin.lua (the windows), listing.lua (the
-- list window's text), edit.lua (your own edits, RpivTodoUserEdit), highlights.lua,
-- commands.lua (every user command), persist.lua and saved.lua (lists on disk),
-- language.lua (the language picker). Extensions add options with
-- `require("rpiv_todo.nvim.options").register(name, default, check, apply)`, :Todos
-- subcommands with `require("rpiv_todo.nvim.commands").register` and whole commands with
-- `.register_command`.

---@helptext rpiv_todo-setup-alias
---`require("rpiv_todo.nvim").setup({opts})` is deprecated: the editor's options go to
---|rpiv_todo.setup()| with the tool's own. The old call still puts them in force (the
---tool's options stay as they are; a wrong one is reported as `nvim.<key>`), after one
---deprecation notice per session.

---@helptext rpiv_todo-api
---Agent front ends drive the list through `require("rpiv_todo.nvim")`. A session is
---any string id; "default" is used when none is given. The tool spec itself (name,
---description, JSON Schema, prompt text, execute) is `require("rpiv_todo").tool()`.

---@helptext RpivTodoUserEdit
---Fired after each edit of yours that applied, with `data = { session = id, params =
---<the call>, result = <the result> }` (Neovim 0.8+; on 0.7 autocommands carry no
---data: read |rpiv_todo.nvim.last_user_edit()|). A handler that fails does not undo the
---edit or stop the others: every handler runs, and one error notification per edit names
---the event and the failure's first line (no traceback, no hit-enter prompt); nothing
---raises, also under `pcall(vim.cmd, "Todos done 3")`.
---
---The model does not see your edits unless the agent front end tells it; these put a
---note in the chat it reads next:
---
---codecompanion.nvim (the adapter's `session_of(chat)` names a chat's list):
--->
---vim.api.nvim_create_autocmd("User", {
---  pattern = "RpivTodoUserEdit",
---  callback = function(args)
---    local edit = args.data
---    local cc = require("rpiv_todo.adapters.codecompanion")
---    for _, item in ipairs(require("codecompanion").buf_get_chat()) do
---      if cc.session_of(item.chat) == edit.session then
---        item.chat:add_message({
---          role = "user",
---          content = "I changed the todo list myself: "
---            .. vim.json.encode(edit.params) .. " -> "
---            .. edit.result.content[1].text,
---        }, { visible = false })
---      end
---    end
---  end,
---})
---<
---avante.nvim (sessions are `avante:<history file>#...`; this adds to the history of
---the sidebar in the current tab page, which avante saves):
--->
---vim.api.nvim_create_autocmd("User", {
---  pattern = "RpivTodoUserEdit",
---  callback = function(args)
---    local edit = args.data
---    local sidebar = require("avante").get(false)
---    if not sidebar or not edit.session:match("^avante:") then return end
---    local Message = require("avante.history.message")
---    sidebar:add_history_messages({
---      Message:new("user", "I changed the todo list myself: "
---        .. vim.json.encode(edit.params) .. " -> "
---        .. edit.result.content[1].text, { visible = false }),
---    })
---  end,
---})
---<
---A host that rebuilds lists with |rpiv_todo.nvim.replay()| keeps an edit by storing
---`{ role = "toolResult", toolName = "todo", details = edit.result.details }` among
---the messages it replays: `details` is the whole list after the edit, like a tool
---result's.

---@helptext rpiv_todo-startup
--- Nothing happens at startup beyond defining the commands: the front end
--- attaches (panel, autocommands, highlight groups, key mapping) on the first
--- tool call of any session, or on the first use of a command or API function.

local M = {}
local H = {}

local options = require("rpiv_todo.nvim.options")

-- The editor options: their defaults, and the ones in force (rpiv_todo.nvim.options).
M.defaults = options.defaults
M.config = options.config

---@return table rpiv_todo.nvim.frontend
function H.frontend()
  return require("rpiv_todo.nvim.frontend")
end

---Attach the front end (panel, autocommands, the user commands) and return it.
---@return table rpiv_todo.nvim.frontend
function H.attach()
  require("rpiv_todo.nvim.setup").attach()
  return H.frontend()
end

---Branch entries as the core expects them: host messages (`{ role, toolName, details }`)
---are wrapped as `{ type = "message", message = ... }`; entries and JSON text pass as is.
---@param messages table|string
---@return table|string
function H.entries(messages)
  if type(messages) ~= "table" then
    return messages
  end
  local out = {}
  for i = 1, #messages do
    local m = messages[i]
    if type(m) == "table" and m.type == nil and m.role ~= nil then
      out[i] = { type = "message", message = m }
    else
      out[i] = m
    end
  end
  return out
end

---Deprecated: the editor's options go to `require("rpiv_todo").setup()` with the tool's
---own. This call still applies them (the tool's options stay as they are), after one
---notice.
---@param opts? rpiv_todo.NvimOptions
---@return table the module
function M.setup(opts)
  require("rpiv_todo.nvim.setup").deprecated(opts)
  return M
end

---Run one tool call (a table, or JSON text) in session `ctx.session` and repaint.
---Returns the result `{ content = {{ type, text }}, details }`; `content[1].text` is
---what the model reads. JSON null (|vim.NIL|) in `metadata` deletes that key.
---(`require("rpiv_todo").tool().execute` is the same without the explicit repaint;
---the panel listens to both.)
---@param params table|string the tool arguments, as a table or JSON text
---@param ctx? rpiv_todo.ToolContext
---@return rpiv_todo.Result
function M.execute(params, ctx)
  H.attach()
  return require("rpiv_todo.tool").execute(params, ctx)
end

---Deprecated (removed in 0.3.0): `require("rpiv_todo").turn_started(id)`.
---@param id? string
function M.turn_started(id)
  require("rpiv_todo.host").deprecated('require("rpiv_todo.nvim").turn_started', 'require("rpiv_todo").turn_started')
  H.attach()
  require("rpiv_todo").turn_started(id)
end

---Deprecated (removed in 0.3.0): `require("rpiv_todo").register_chat(name, lookup)`.
---@param name string
---@param lookup fun(bufnr: integer): string|nil
function M.register_chat(name, lookup)
  require("rpiv_todo.host").deprecated('require("rpiv_todo.nvim").register_chat', 'require("rpiv_todo").register_chat')
  require("rpiv_todo").register_chat(name, lookup)
end

---Rebuild session {id} from the host's history: branch entries, or plain messages
---`{ role = "toolResult", toolName = "todo", details = ... }` (the last todo result
---wins). Returns the state.
---@param id string session id
---@param messages table|string
---@return rpiv_todo.State
function M.replay(id, messages)
  local frontend = H.attach()
  local state = require("rpiv_todo.session").get(id):replay(H.entries(messages or {}))
  frontend.request_paint()
  return state
end

---Deprecated (removed in 0.3.0): `require("rpiv_todo").foreground(...)`, which pins the
---panel the same way in Neovim.
---@param ... string|nil
---@return rpiv_todo.Session
function M.foreground(...)
  require("rpiv_todo.host").deprecated('require("rpiv_todo.nvim").foreground', 'require("rpiv_todo").foreground')
  return H.attach().foreground(...)
end

---Show session {id} as if a tool call had just run in it: the panel moves to it unless a
---session is pinned (what a saved list at startup and a list another program changed do,
---|rpiv_todo-persist|).
---@param id string
function M.follow(id)
  H.attach().follow(id)
end

---The user's own edit of the session shown (what `:Todos add/start/done/delete`
---run): through the reducer, a warning when rejected, else a confirmation and
---|RpivTodoUserEdit|. Returns the result.
---@param params table tool arguments
---@return rpiv_todo.Result
function M.edit(params)
  H.attach()
  return require("rpiv_todo.nvim.edit").edit(params)
end

---The data of the latest |RpivTodoUserEdit| (`{ session, params, result }`), or nil
---before the first: Neovim 0.7's autocommands carry no `data`.
---@return table|nil
function M.last_user_edit()
  return require("rpiv_todo.nvim.edit").last_user_edit()
end

---Put the panel over window {win}; nil follows the current window.
---@param win integer|nil
function M.set_win(win)
  H.attach().set_win(win)
end

---Same as |:TodosToggle|: collapse the panel to its heading and one hint line, or
---expand it again; with nothing to show it says so and changes nothing. Returns
---whether it is collapsed.
---@return boolean collapsed
function M.toggle()
  return H.attach().toggle()
end

---Same as `:Todos hide`: turn the panel off until `show()`; tool calls go on.
function M.hide()
  H.attach().hide()
end

---Same as `:Todos show`: turn the panel on again.
function M.show()
  H.attach().show()
end

---Same as |:Todos|: the list of the session shown, grouped by status, in a window
---(an empty list is a notification). Returns the text and its level ("info" or
---"error").
---@return string text
---@return string level "info" | "error"
function M.todos()
  return H.attach().todos()
end

---The panel's floating window and its buffer, or nil when hidden.
---@return integer|nil win
---@return integer|nil buf
function M.window()
  return require("rpiv_todo.nvim.panel").window()
end

return M
