-- rpiv_todo.nvim.edit: the user's own edits of the list shown (what `:Todos add/start/
-- done/delete` run) and the `User RpivTodoUserEdit` event each one that applied fires.
-- Requires nothing of the rest of the front end.

---@helptext rpiv_todo-surprises-edits verbatim
--- Your edits are not seen by the model by itself.
---     `:Todos add` and friends change the list; the model learns of it when
---     its next call returns the list, or when your front end records the edit
---     (|RpivTodoUserEdit|).

local M = {}
local H = {}

H.last_edit = nil -- data of the latest RpivTodoUserEdit

---rpiv_todo.nvim.edit (the caller attached the front end).
---@param params table tool arguments
---@return rpiv_todo.Result
function M.edit(params)
  local session = require("rpiv_todo.session")
  local id = session.foreground_id()
  -- As the user: the agent's next reply names what the user changed.
  local result = session.foreground():execute(params, "user")
  local text = result.content and result.content[1] and result.content[1].text or ""
  local opts = { title = require("rpiv_todo.nvim.options").config.notify_title }
  if result.details and result.details.error ~= nil then
    vim.notify(text, vim.log.levels.WARN, opts)
    return result
  end
  vim.notify(text, vim.log.levels.INFO, opts)
  H.last_edit = { session = id, params = params, result = result }
  local failed = H.fire_user_edit()
  if failed ~= nil then
    vim.notify("(rpiv_todo) a User RpivTodoUserEdit handler failed: " .. failed, vim.log.levels.ERROR, opts)
  end
  return result
end

---Fire `User RpivTodoUserEdit` so that every handler runs whatever another one does:
---the event runs under `:silent!` for errors (emsg_silent), where a failing handler is
---neither shown (no traceback, no hit-enter prompt) nor turned into an exception that
---would skip the later handlers and raise out of a caller's `pcall(vim.cmd, ...)`. The
---edit itself is already made. Returns the failure's first line (the last handler that
---failed), or nil.
---@return string|nil
function H.fire_user_edit()
  local before = vim.v.errmsg
  vim.v.errmsg = ""
  local run = "lua require('rpiv_todo.nvim.edit').exec_user_edit()"
  if vim.api.nvim_cmd ~= nil then
    -- Errors silenced, messages not: a handler's own output still shows.
    vim.api.nvim_cmd({ cmd = "lua", args = { run:sub(5) }, mods = { emsg_silent = true } }, {})
  else
    vim.cmd("silent! " .. run)
  end
  local err = vim.v.errmsg
  vim.v.errmsg = before
  if err == "" then
    return nil
  end
  -- The first line, without Neovim's prefix for a Lua callback's error.
  err = err:match("^[^\n]*"):gsub("^Error executing lua callback: ", ""):gsub("^Lua callback: ", "")
  return err
end

---Run the User RpivTodoUserEdit handlers (through H.fire_user_edit only).
function M.exec_user_edit()
  local fire = { pattern = "RpivTodoUserEdit", modeline = false }
  if vim.fn.has("nvim-0.8") == 1 then
    fire.data = H.last_edit
  end
  vim.api.nvim_exec_autocmds("User", fire)
end

---rpiv_todo.nvim.last_user_edit.
---@return table|nil
function M.last_user_edit()
  return H.last_edit
end

return M
