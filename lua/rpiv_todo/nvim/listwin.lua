-- rpiv_todo.nvim.listwin: the :Todos window, the whole list grouped by status.
--
-- A scratch buffer (filetype `rpiv_todo`) in a floating window in the middle of the
-- editor, entered so it can be scrolled and read; `q` or <Esc> closes it, and so does
-- leaving it. While it is open it follows the list: a tool call or an edit repaints it.
-- The text is the `/todos` text (rpiv_todo.command.todos) in the UI locale.

local M = {}
local H = {}

H.ns = vim.api.nvim_create_namespace("rpiv_todo_list")
H.win = nil
H.buf = nil

-- Row glyph -> the colour the panel gives that status.
H.GLYPH_GROUP = { ["○"] = "RpivTodoDim", ["◐"] = "RpivTodoWarning", ["✓"] = "RpivTodoSuccess" }

---Is the window open?
---@return integer|nil win
---@return integer|nil buf
function M.window()
  if H.win ~= nil and vim.api.nvim_win_is_valid(H.win) then
    return H.win, H.buf
  end
  return nil, nil
end

function M.close()
  local win = H.win
  H.win = nil
  if win ~= nil and vim.api.nvim_win_is_valid(win) then
    pcall(vim.api.nvim_win_close, win, true)
  end
end

---@param buf integer
---@param lines string[]
function H.fill(buf, lines)
  local set = require("rpiv_todo.nvim.panel").set_option
  set(buf, "buf", "modifiable", true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  set(buf, "buf", "modifiable", false)
  vim.api.nvim_buf_clear_namespace(buf, H.ns, 0, -1)
  for i, line in ipairs(lines) do
    local group
    local stop = #line
    if i == 1 then
      group = "RpivTodoAccent"
    elseif line:sub(1, #"──") == "──" then
      group = "RpivTodoToolTitle"
    else
      local glyph = line:match("^  ([^ ]+) ")
      group = glyph and H.GLYPH_GROUP[glyph]
      stop = glyph and (2 + #glyph) or stop
    end
    if group then
      vim.api.nvim_buf_set_extmark(buf, H.ns, i - 1, 0, { end_col = stop, hl_group = group })
    end
  end
end

---The window's size and place for `lines` in the middle of the editor.
---@param lines string[]
---@param title string
---@return table config for nvim_open_win / nvim_win_set_config
function H.config(lines, title)
  local widest = vim.fn.strdisplaywidth(title) + 2
  for _, l in ipairs(lines) do
    widest = math.max(widest, vim.fn.strdisplaywidth(l))
  end
  local cols, rows = vim.o.columns, vim.o.lines - vim.o.cmdheight - 1
  local width = math.max(20, math.min(widest + 1, cols - 4))
  local height = math.max(1, math.min(#lines, rows - 4))
  local config = {
    relative = "editor",
    row = math.max(0, math.floor((rows - height) / 2) - 1),
    col = math.max(0, math.floor((cols - width) / 2)),
    width = width,
    height = height,
    border = "rounded",
    zindex = 70,
  }
  if vim.fn.has("nvim-0.9") == 1 then
    config.title = " " .. title .. " "
    config.title_pos = "center"
  end
  return config
end

---Open (or refresh) the window with `lines`.
---@param lines string[]
---@param title string e.g. "Todos · chat-1"
---@return integer win
---@return integer buf
function M.open(lines, title)
  local set = require("rpiv_todo.nvim.panel").set_option
  if H.buf == nil or not vim.api.nvim_buf_is_valid(H.buf) then
    H.buf = vim.api.nvim_create_buf(false, true)
    set(H.buf, "buf", "bufhidden", "hide")
    set(H.buf, "buf", "filetype", "rpiv_todo")
    for _, lhs in ipairs({ "q", "<Esc>" }) do
      vim.keymap.set("n", lhs, M.close, { buffer = H.buf, nowait = true, silent = true, desc = "close the todo list" })
    end
  end
  H.fill(H.buf, lines)
  local config = H.config(lines, title)
  if M.window() then
    vim.api.nvim_win_set_config(H.win, config)
    vim.api.nvim_set_current_win(H.win)
  else
    H.win = vim.api.nvim_open_win(H.buf, true, config)
    set(H.win, "win", "winhighlight", "Normal:RpivTodoNormal,NormalFloat:RpivTodoNormal,FloatBorder:RpivTodoBorder")
    set(H.win, "win", "wrap", false)
    set(H.win, "win", "cursorline", true)
    local win = H.win
    -- Leaving the window closes it, like other pop-up lists.
    local group = vim.api.nvim_create_augroup("RpivTodoList", { clear = true })
    vim.api.nvim_create_autocmd("WinLeave", {
      group = group,
      buffer = H.buf,
      once = true,
      callback = function()
        if H.win == win then
          vim.schedule(M.close)
        end
      end,
    })
  end
  return H.win, H.buf
end

---Repaint the open window (after a tool call or an edit); nothing when it is closed.
---@param lines string[]
---@param title string
function M.update(lines, title)
  if not M.window() then
    return
  end
  H.fill(H.buf, lines)
  vim.api.nvim_win_set_config(H.win, H.config(lines, title))
end

return M
