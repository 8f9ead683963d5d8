-- rpiv_todo.nvim.panel: the floating window that shows the foreground session's list.
--
-- Where it goes (see :help rpiv_todo-panel):
--   * over one ordinary window of the current tab page: the current window, unless that
--     one is excluded (help, health, quickfix, prompt buffers, the agent's own chat input
--     and other floats) — then the window it was over, else the largest eligible one;
--   * in the corner or at the edge `position` names, never wider than that window, and
--     never over the cursor line: when the cursor comes under it, it moves to the other
--     edge (top <-> bottom), and when neither edge is free it takes the larger free side
--     and shows fewer rows (the overlay's summary row counts what is left out);
--   * no spacer line: `max_widget_lines` rows at most, heading included.
-- The owner (rpiv_todo.nvim.frontend) calls `paint()` after tool calls and on window
-- events, and `needs_move()` on CursorMoved/WinScrolled (cheap: it repaints only when the
-- cursor reaches the panel or frees its preferred place). The buffer's lines are written
-- by rpiv_todo.nvim.panelbuf, only where they changed.

---@helptext rpiv_todo-overlay verbatim
--- A floating window shows the list of one session: a heading with the count of
--- completed tasks, one row per task (○ pending, ◐ in progress, ✓ completed),
--- and a summary row when the list is longer than `max_widget_lines`. It never
--- takes focus and the cursor cannot enter it. It is hidden when nothing is
--- left to show, and repainted after each tool call and each setup().
--- Completed tasks stay visible for the turn in which they were completed and
--- hide once the host marks the next turn (|rpiv_todo.turn_started()|):
--- the codecompanion and avante adapters mark one at each new prompt. What the
--- panel showed is remembered per session, so going back to a chat does not
--- bring its earlier completed tasks back.

---@helptext rpiv_todo-panel-session verbatim
--- Which session                                       *rpiv_todo-panel-session*
--- Agent plugins keep one list per chat. While the current window shows a chat
--- of a front end that names its chats (codecompanion's chat buffer, any window
--- of avante's sidebar; others through |rpiv_todo.register_chat()|), the
--- panel (and |:Todos|) shows that chat's list. Anywhere else it shows the
--- session of the most recent tool call. A host may pin one with
--- |rpiv_todo.foreground()|; `foreground(nil)` goes back to following.

---@helptext rpiv_todo-surprises-follow verbatim
--- Outside a chat window the panel follows the latest call.
---     In a chat's window the panel shows that chat's list; in any other
---     window, the list of whichever chat's agent called the tool last. Pin
---     one with |rpiv_todo.foreground()|.

local M = {}
local H = {}

local panelbuf = require("rpiv_todo.nvim.panelbuf")

-- State of the float.
H.float = nil -- the float's configuration as last set: it moves only when this changes
H.win = nil -- the floating window, nil while hidden
H.anchor = nil -- the window it sits over
H.placed = nil -- { anchor, top, bottom, vertical, preferred_free } rows it covers, 0-based
H.closing = false -- we are closing it ourselves (WinClosed must not repaint)
H.blend = nil -- the winblend the float has (set when it differs from the option)

---Set a window or buffer option, on every Neovim (rpiv_todo.nvim.panelbuf.set_option).
M.set_option = panelbuf.set_option

---@param handle integer
---@param kind "win"|"buf"
---@param name string
---@return any
function H.get_option(handle, kind, name)
  if panelbuf.has_08() then
    return vim.api.nvim_get_option_value(name, { [kind] = handle })
  elseif kind == "win" then
    return vim.api.nvim_win_get_option(handle, name)
  end
  return vim.api.nvim_buf_get_option(handle, name)
end

---Is `win` a floating window?
---@param win integer
---@return boolean
function M.is_float(win)
  return vim.api.nvim_win_get_config(win).relative ~= ""
end

---May the panel sit over `win`? Floats never; excluded filetypes/buftypes, or what the
---user's `exclude` function says, not either.
---@param win integer
---@param config table rpiv_todo.nvim config
---@return boolean
function M.eligible(win, config)
  if not vim.api.nvim_win_is_valid(win) or win == H.win or M.is_float(win) then
    return false
  end
  local buf = vim.api.nvim_win_get_buf(win)
  local exclude = config.exclude
  if type(exclude) == "function" then
    local ok, skip = pcall(exclude, win, buf)
    return not (ok and skip)
  end
  if type(exclude) ~= "table" then
    return true
  end
  local ft = H.get_option(buf, "buf", "filetype")
  local bt = H.get_option(buf, "buf", "buftype")
  for _, f in ipairs(exclude.filetypes or {}) do
    if f == ft then
      return false
    end
  end
  for _, b in ipairs(exclude.buftypes or {}) do
    if b == bt then
      return false
    end
  end
  return true
end

---The window the panel goes over, or nil (nothing eligible in this tab page).
---@param config table
---@return integer|nil
function M.target(config)
  local win = config.win
  if type(win) == "function" then
    local ok, w = pcall(win)
    win = ok and w or nil
  end
  if win ~= nil and win ~= 0 then
    -- A host-named window is used as is (the host knows where it wants the list).
    if type(win) == "number" and vim.api.nvim_win_is_valid(win) and win ~= H.win then
      return win
    end
    return nil
  end
  local current = vim.api.nvim_get_current_win()
  if M.eligible(current, config) then
    return current
  end
  local tab = vim.api.nvim_get_current_tabpage()
  local anchor = H.anchor
  if
    anchor ~= nil
    and vim.api.nvim_win_is_valid(anchor)
    and vim.api.nvim_win_get_tabpage(anchor) == tab
    and M.eligible(anchor, config)
  then
    return anchor
  end
  local best, area = nil, -1
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
    if M.eligible(w, config) then
      local a = vim.api.nvim_win_get_width(w) * vim.api.nvim_win_get_height(w)
      if a > area then
        best, area = w, a
      end
    end
  end
  return best
end

---Is float configuration `a` the one `b` the window has?
---@param a table
---@param b table|nil
---@return boolean
function H.same_float(a, b)
  if b == nil then
    return false
  end
  for _, k in ipairs(H.FLOAT_KEYS) do
    if a[k] ~= b[k] then
      return false
    end
  end
  return true
end

H.FLOAT_KEYS = { "relative", "win", "anchor", "row", "col", "width", "height", "focusable", "zindex", "border" }

---Close the float (it comes back at the next paint).
function M.hide()
  local win = H.win
  H.win, H.anchor, H.placed, H.float = nil, nil, nil, nil
  if win ~= nil and vim.api.nvim_win_is_valid(win) then
    H.closing = true
    pcall(vim.api.nvim_win_close, win, true)
    H.closing = false
  end
end

---The float was closed by someone else (`:only`, `:fclose`): forget it. Returns true
---when it was ours and a repaint should bring it back.
---@param closed integer
---@return boolean
function M.on_win_closed(closed)
  if closed == H.win and not H.closing then
    H.win, H.anchor, H.placed, H.float = nil, nil, nil, nil
    return true
  end
  return closed == H.anchor
end

---Columns the border takes on each axis.
---@param border any
---@return integer
function H.border_size(border)
  if border == nil or border == "none" or border == "" then
    return 0
  end
  if border == "shadow" then
    return 1 -- right and bottom only; counted once per axis
  end
  return 2
end

---The screen row (0-based, inside the window) of `win`'s cursor line.
---@param win integer
---@return integer|nil
function H.cursor_row(win)
  if win == vim.api.nvim_get_current_win() then
    return vim.fn.winline() - 1
  end
  local ok, row = pcall(vim.api.nvim_win_call, win, vim.fn.winline)
  if not ok or type(row) ~= "number" then
    return nil
  end
  return row - 1
end

---Split a position into its vertical and horizontal parts.
---@param position string
---@return string vertical "top"|"bottom"
---@return string horizontal "left"|"right"|"center"
function M.split_position(position)
  local v, h = position:match("^(%a+)%-(%a+)$")
  if v then
    return v, h
  end
  return position, "center"
end

---Lines of the overlay for a height budget (nil: the configured one).
---@param ov table rpiv_todo.Overlay
---@param state any
---@param width integer
---@param budget integer|nil
---@return table[]
function H.render(ov, state, width, budget)
  return ov:render(state, width, budget)
end

---Where the panel goes: the rows it takes for `height` rows at `vertical`, given the
---cursor's row. Returns vertical, top row, and the rows available when it had to shrink.
---@param vertical string preferred edge
---@param height integer rows with the border
---@param win_h integer
---@param cursor integer|nil
---@return string vertical
---@return integer|nil room rows available (nil: the whole height fits)
function M.choose_edge(vertical, height, win_h, cursor)
  if cursor == nil or cursor < 0 or cursor >= win_h then
    return vertical, nil
  end
  local function covers(v)
    local top = v == "top" and 0 or win_h - height
    return cursor >= top and cursor < top + height
  end
  if not covers(vertical) then
    return vertical, nil
  end
  local other = vertical == "top" and "bottom" or "top"
  if not covers(other) then
    return other, nil
  end
  -- Neither edge is free: the larger side of the cursor, shrunk to fit.
  local above, below = cursor, win_h - cursor - 1
  if above > below then
    return "top", above
  elseif below > above then
    return "bottom", below
  end
  return vertical, above
end

-- What Neovim answers while no window may be opened or moved: a window is closing (E242,
-- e.g. inside the WinEnter that an agent's sidebar closing triggers), a buffer is closing
-- (E1159), or an autocommand holds the layout (E1312).
H.LAYOUT_LOCKED = { "E242:", "E1159:", "E1312:" }

---Is {err} one of the errors of a layout that cannot change now?
---@param err any
---@return boolean
function H.locked(err)
  local text = tostring(err)
  for _, code in ipairs(H.LAYOUT_LOCKED) do
    if text:find(code, 1, true) then
      return true
    end
  end
  return false
end

---Paint the panel. `ctx` comes from rpiv_todo.nvim.frontend:
---  { config, ov, state, hint_layout } — `state` is what ov:render accepts.
---Returns "later" when no window may be opened or moved right now (a window or a buffer is
---closing): nothing was changed, and the caller paints again once that is over. While
---Neovim exits nothing is painted.
---@param ctx table
---@return "later"|nil
function M.paint(ctx)
  local exiting = vim.v.exiting
  if exiting ~= nil and exiting ~= vim.NIL then
    return nil
  end
  local config = ctx.config
  if ctx.state == nil then
    M.hide() -- no list yet: nothing to show, and no window to look for
    return
  end
  local target = M.target(config)
  if target == nil then
    M.hide()
    return
  end
  local win_w = vim.api.nvim_win_get_width(target)
  local win_h = vim.api.nvim_win_get_height(target)
  local bsize = H.border_size(config.border)
  local pad = config.padding
  local max_w = win_w - bsize
  local mw = config.max_width
  if type(mw) == "number" then
    if mw <= 1 then
      mw = math.floor(win_w * mw)
    end
    max_w = math.min(max_w, mw)
  end
  local render_w = max_w - 2 * pad
  if render_w < 8 then
    M.hide() -- too narrow to say anything
    return
  end
  local lines = H.render(ctx.ov, ctx.state, render_w, nil)
  if #lines == 0 then
    M.hide()
    return
  end
  local vertical, horizontal = M.split_position(config.position)
  local cursor = nil
  if config.avoid_cursor then
    cursor = H.cursor_row(target)
  end
  local configured = #lines
  local height = math.min(#lines + bsize, win_h)
  local edge, room = M.choose_edge(vertical, height, win_h, cursor)
  if room ~= nil or #lines + bsize > win_h then
    room = room or win_h
    local budget = room - bsize
    if budget < 3 then
      M.hide() -- no room beside the cursor line
      return
    end
    lines = H.render(ctx.ov, ctx.state, render_w, math.min(budget, configured))
    height = #lines + bsize
  end

  local texts, ranges = {}, {}
  local text_w = 1
  for i = 1, #lines do
    texts[i], ranges[i] = panelbuf.flatten(lines[i], pad)
    text_w = math.max(text_w, vim.api.nvim_strwidth(texts[i]))
  end
  text_w = math.min(text_w, max_w)
  local buf = panelbuf.ensure()
  panelbuf.write(buf, texts, ranges)

  local outer_w = text_w + bsize
  local col = 0
  if horizontal == "right" then
    col = win_w - outer_w
  elseif horizontal == "center" then
    col = math.floor((win_w - outer_w) / 2)
  end
  local row = edge == "top" and 0 or win_h - height
  local float = {
    relative = "win",
    win = target,
    anchor = "NW",
    row = row,
    col = math.max(0, col),
    width = text_w,
    height = #texts,
    focusable = false,
    zindex = config.zindex,
  }
  if bsize > 0 then
    float.border = config.border
  end
  if
    H.win ~= nil
    and vim.api.nvim_win_is_valid(H.win)
    and vim.api.nvim_win_get_tabpage(H.win) ~= vim.api.nvim_win_get_tabpage(target)
  then
    M.hide() -- a float cannot move to another tab page: open a new one there
  end
  if H.win ~= nil and vim.api.nvim_win_is_valid(H.win) then
    if not H.same_float(float, H.float) then
      local ok, err = pcall(vim.api.nvim_win_set_config, H.win, float)
      if not ok then
        if H.locked(err) then
          return "later"
        end
        error(err, 0)
      end
    end
  else
    float.style = "minimal"
    float.noautocmd = true
    local ok, win = pcall(vim.api.nvim_open_win, buf, false, float)
    if not ok then
      if H.locked(win) then
        return "later"
      end
      error(win, 0)
    end
    H.win = win
    float.style, float.noautocmd = nil, nil
    H.blend = nil
    M.set_option(H.win, "win", "wrap", false)
    M.set_option(
      H.win,
      "win",
      "winhighlight",
      "Normal:RpivTodoNormal,NormalFloat:RpivTodoNormal,FloatBorder:RpivTodoBorder,EndOfBuffer:RpivTodoNormal"
    )
  end
  -- Window options are set when the window opens or the option changed, not every paint.
  if H.blend ~= config.winblend then
    M.set_option(H.win, "win", "winblend", config.winblend)
    H.blend = config.winblend
  end
  H.float = float
  H.anchor = target
  local pref_top = vertical == "top" and 0 or win_h - math.min(configured + bsize, win_h)
  H.placed = {
    anchor = target,
    top = row,
    bottom = row + height - 1,
    vertical = vertical,
    -- rows the panel would take at its preferred edge at full size
    pref_top = pref_top,
    pref_bottom = pref_top + math.min(configured + bsize, win_h) - 1,
    moved = edge ~= vertical or #lines < configured,
    win_w = win_w,
    win_h = win_h,
  }
end

---After the cursor moved, the window scrolled or changed size: does the panel need to move?
---@return boolean
function M.needs_move()
  local placed = H.placed
  if placed == nil or H.win == nil then
    return false
  end
  if not vim.api.nvim_win_is_valid(placed.anchor) then
    return true
  end
  -- A size change (WinScrolled reports those too before 0.9 has WinResized).
  if
    vim.api.nvim_win_get_width(placed.anchor) ~= placed.win_w
    or vim.api.nvim_win_get_height(placed.anchor) ~= placed.win_h
  then
    return true
  end
  local cursor = H.cursor_row(placed.anchor)
  if cursor == nil then
    return false
  end
  if cursor >= placed.top and cursor <= placed.bottom then
    return true
  end
  -- Moved away earlier: go back once the preferred place is free again.
  return placed.moved and (cursor < placed.pref_top or cursor > placed.pref_bottom)
end

---The floating window and its buffer, nil while hidden.
---@return integer|nil win
---@return integer|nil buf
function M.window()
  if H.win ~= nil and vim.api.nvim_win_is_valid(H.win) then
    return H.win, panelbuf.buf()
  end
  return nil, nil
end

---The window the panel sits over (nil while hidden).
---@return integer|nil
function M.anchor()
  if M.window() then
    return H.anchor
  end
  return nil
end

return M
