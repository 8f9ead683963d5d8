-- rpiv_todo.nvim.listing: the text of the list window (:Todos) and the session ids as a
-- person sees them. Requires nothing of the rest of the front end.

local M = {}

---@return table
local function sessions()
  return require("rpiv_todo.session")
end

---The foreground session, or nil while it has no list yet (looking must not create one:
---a host may check which sessions exist).
---@return rpiv_todo.Session|nil
function M.shown_session()
  local session = sessions()
  local id = session.foreground_id()
  if not session.exists(id) then
    return nil
  end
  return session.get(id)
end

---A session id as the user sees it: control characters (a NUL, which Vim functions
---refuse with E976, an escape) written as `\x00`, and cut to 40 columns.
---@param id string
---@return string
function M.shown_id(id)
  local shown = tostring(id):gsub("[%z\1-\31\127]", function(c)
    return string.format("\\x%02x", c:byte())
  end)
  if #shown > 40 then
    shown = require("rpiv_todo.native").truncate(shown, 40, "…")
  end
  return shown
end

---The list window's lines and title, or nil when the list is empty; then the text
---and its level. Rows are cut to what the widest window can show (the editor's width
---less the border), so long task texts cost what fits on the screen.
---@return string[]|nil lines
---@return string title
---@return string text
---@return string level
function M.list_text()
  local session = sessions()
  local state = M.shown_session() or { tasks = {} }
  -- One snapshot for the text and the counts (each one copies every task's text).
  if type(state.state) == "function" then
    state = state:state()
  end
  local width = math.max(20, vim.o.columns - 6)
  local command = require("rpiv_todo.command")
  local text, level = command.todos(state, { interactive = true, width = width })
  local _, counts = command.group(state)
  local title = require("rpiv_todo.i18n").t("overlay-heading")
  local id = session.foreground_id()
  if id ~= session.DEFAULT_ID then
    title = title .. " · " .. M.shown_id(id)
  end
  if counts.total == 0 or level ~= "info" then
    return nil, title, text, level
  end
  local lines = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    lines[#lines + 1] = line
  end
  return lines, title, text, level
end

return M
