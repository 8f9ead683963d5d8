-- rpiv_todo.nvim.autocmds: the autocommands of the attached front end, in one augroup.
-- The front end hands over what each one runs.

local M = {}
local H = {}

---CursorMoved, CursorMovedI, WinScrolled: repaint when the panel must move.
---@param paint fun()
---@return fun()
function H.repaint_if_moved(paint)
  return function()
    local ok, move = pcall(require("rpiv_todo.nvim.panel").needs_move)
    if ok and move then
      paint()
    end
  end
end

---Create the augroup `name` (cleared first) and its autocommands.
---@param name string
---@param on { paint: fun(), follow_window: fun(), colors: fun(), check_locale: fun(), exiting: fun() }
function M.create(name, on)
  local group = vim.api.nvim_create_augroup(name, { clear = true })
  local function au(events, callback)
    vim.api.nvim_create_autocmd(events, { group = group, callback = callback })
  end
  -- Re-anchor when windows come, go, change size or show another buffer. WinResized is
  -- 0.9+; before it, WinScrolled fires on a size change too (and VimResized for the
  -- whole editor).
  local events = { "VimResized", "TabEnter", "WinEnter", "BufWinEnter", "FileType" }
  if vim.fn.exists("##WinResized") == 1 then
    events[#events + 1] = "WinResized"
  end
  au(events, on.paint)
  -- The panel shows the list of the chat in the current window (session.register_chat);
  -- a buffer that gets its filetype may have become a chat.
  au({ "WinEnter", "BufEnter", "FileType" }, on.follow_window)
  -- Out of the cursor's way: only when the cursor reaches the panel, its preferred place
  -- is free again, or its window changed size (a cheap check on every cursor move).
  au({ "CursorMoved", "CursorMovedI", "WinScrolled" }, H.repaint_if_moved(on.paint))
  au("ColorScheme", on.colors)
  vim.api.nvim_create_autocmd("OptionSet", {
    group = group,
    pattern = { "background", "termguicolors" },
    callback = on.colors,
  })
  au("WinClosed", function(args)
    local closed = tonumber(args.match)
    if closed ~= nil then
      -- Our own float (`:only`, `:fclose`) or any other window: the layout is settled
      -- only after this event, so the repaint waits for the main loop.
      require("rpiv_todo.nvim.panel").on_win_closed(closed)
      vim.schedule(on.paint)
    end
  end)
  -- `:language messages xx` has no event of its own: look again once a command line
  -- has run, and when the editor gets the focus back.
  au({ "CmdlineLeave", "FocusGained" }, function()
    vim.schedule(on.check_locale)
  end)
  au("VimLeavePre", on.exiting)
end

return M
