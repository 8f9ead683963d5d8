-- tests/nvim/panel_spec.lua: where the panel goes, in headless Neovim 0.7.2 and current
-- (through scripts/nvim-runner.lua). Positions are read back from Neovim
-- (nvim_win_get_position of the window under the float, the float's config, winline()
-- for the cursor's screen row), never computed by the code under test:
--   * max_widget_lines rows at most (no spacer line);
--   * the bottom-right corner of the current window by default, and each `position`;
--   * it follows the windows: :vsplit, <C-w>h, another :vsplit (never wider than the
--     window under it), :only, a resize, :tabnew;
--   * it keeps out of help, quickfix and excluded windows (and the option turns that off);
--   * it never covers the cursor line: cursor at the bottom (normal and insert mode), at
--     the top, and in a window too short for either edge (it shrinks, with a summary row);
--   * border, winblend, max_width and padding.

local N = dofile(os.getenv("RPIV_ROOT") .. "/tests/nvim/helpers.lua")
local T = N.T
local H = {}

N.plugin()
vim.o.columns = 100
vim.o.lines = 30

local nv = require("rpiv_todo.nvim")

---A fresh front end with `opts` for rpiv_todo.nvim, and one window holding 200 lines.
function H.reset(opts, setup)
  require("rpiv_todo.nvim.frontend").detach()
  vim.cmd("silent! tabonly!")
  vim.cmd("silent! only!")
  vim.cmd("enew!")
  vim.api.nvim_buf_set_lines(0, 0, -1, false, vim.fn.map(vim.fn.range(1, 200), '"line " . v:val'))
  N.fresh(setup, opts)
end

function H.tasks(n, session)
  for i = 1, n do
    nv.execute({ action = "create", subject = "Task " .. i }, { session = session })
  end
end

-- 0.7 returns float positions boxed as { [false] = n, [true] = 3 }.
function H.num(v)
  if type(v) == "table" then
    return v[false]
  end
  return v
end

---Columns (and rows) a float's border takes: 0 or 2 (0.12 lists eight empty strings for none).
function H.border_size(border)
  if type(border) == "string" then
    return (border == "" or border == "none") and 0 or 2
  end
  if type(border) ~= "table" then
    return 0
  end
  for _, part in ipairs(border) do
    local char = type(part) == "table" and part[1] or part
    if char ~= "" then
      return 2
    end
  end
  return 0
end

---The float's box on the screen and the box of the window under it. The window's place
---comes from nvim_win_get_position; the float's from its config (row/col relative to
---that window): a headless Neovim has no screen to draw on, so it does not recompute a
---float's screen position (tests/screen/ reads the real screen).
---@return table float { row, col, width, height }
---@return table under { row, col, width, height, win }
function H.boxes()
  local win = nv.window()
  if not win then
    error("no panel", 2)
  end
  local cfg = vim.api.nvim_win_get_config(win)
  T.eq(cfg.relative, "win", "relative to a window")
  T.eq(cfg.anchor, "NW", "placed by its top-left corner")
  local under = cfg.win
  local upos = vim.api.nvim_win_get_position(under)
  local border = H.border_size(cfg.border)
  return {
    row = upos[1] + H.num(cfg.row),
    col = upos[2] + H.num(cfg.col),
    width = vim.api.nvim_win_get_width(win) + border,
    height = vim.api.nvim_win_get_height(win) + border,
  }, {
    row = upos[1],
    col = upos[2],
    width = vim.api.nvim_win_get_width(under),
    height = vim.api.nvim_win_get_height(under),
    win = under,
  }
end

---Fail unless the float lies inside the window under it.
function H.inside(what)
  local f, u = H.boxes()
  T.ok(f.col >= u.col and f.col + f.width <= u.col + u.width, what .. ": columns inside the window")
  T.ok(f.row >= u.row and f.row + f.height <= u.row + u.height, what .. ": rows inside the window")
  return f, u
end

---The cursor's screen row in the current window (0-based, from the window's top).
function H.cursor_row()
  return vim.fn.winline() - 1
end

---Fail if the float covers the cursor's screen row.
function H.clear_of_cursor(what)
  local f, u = H.boxes()
  local cursor = u.row + vim.fn.winline() - 1
  T.ok(cursor < f.row or cursor >= f.row + f.height, what .. ": cursor row " .. cursor .. " not under the panel")
  return f, u
end

---Keys as typed, then the cursor events Neovim fires before it waits for the next key
---(a headless nvim_feedkeys returns before its main loop would fire them).
function H.keys(keys, flags)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), flags or "xt", false)
  local insert = vim.api.nvim_get_mode().mode == "i"
  vim.cmd("doautocmd <nomodeline> " .. (insert and "CursorMovedI" or "CursorMoved"))
end

-- Let scheduled repaints (WinClosed) run.
function H.settle()
  vim.wait(200, function()
    return false
  end)
end

function H.option(win, name)
  if vim.fn.has("nvim-0.8") == 1 then
    return vim.api.nvim_get_option_value(name, { win = win })
  end
  return vim.api.nvim_win_get_option(win, name)
end

T.test("max_widget_lines = 12 gives 12 rows: no spacer line in the editor", function()
  H.reset()
  H.tasks(20)
  local win, buf = nv.window()
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  T.eq(#lines, 12, "lines")
  T.eq(vim.api.nvim_win_get_height(win), 12, "rows")
  T.eq(vim.trim(lines[12]), "└─ +10 more (10 pending)", "the summary row is the last")
  H.reset(nil, { locale = "en", max_widget_lines = 3 })
  H.tasks(5)
  T.eq(vim.api.nvim_win_get_height((nv.window())), 3, "max_widget_lines = 3: 3 rows")
end)

T.test("by default the panel sits in the bottom-right corner of the current window", function()
  H.reset()
  H.tasks(3)
  local f, u = H.boxes()
  T.eq(u.win, vim.api.nvim_get_current_win(), "over the current window")
  T.eq(f.row + f.height, u.row + u.height, "bottom edges meet")
  T.eq(f.col + f.width, u.col + u.width, "right edges meet")
  T.eq(vim.api.nvim_win_get_config((nv.window())).focusable, false, "not focusable")
end)

T.test("each position puts it in that corner or at that edge", function()
  local cases = {
    { "top-left", "top", "left" },
    { "top-right", "top", "right" },
    { "bottom-left", "bottom", "left" },
    { "bottom-right", "bottom", "right" },
    { "top", "top", "center" },
    { "bottom", "bottom", "center" },
  }
  for _, c in ipairs(cases) do
    H.reset({ position = c[1] })
    H.tasks(3)
    -- The cursor on a middle line: out of every edge's way.
    vim.api.nvim_win_set_cursor(0, { 12, 0 })
    require("rpiv_todo.nvim.frontend").refresh()
    local f, u = H.boxes()
    if c[2] == "top" then
      T.eq(f.row, u.row, c[1] .. ": top edge")
    else
      T.eq(f.row + f.height, u.row + u.height, c[1] .. ": bottom edge")
    end
    if c[3] == "left" then
      T.eq(f.col, u.col, c[1] .. ": left edge")
    elseif c[3] == "right" then
      T.eq(f.col + f.width, u.col + u.width, c[1] .. ": right edge")
    else
      T.ok(math.abs((f.col - u.col) - (u.col + u.width - f.col - f.width)) <= 1, c[1] .. ": centred")
    end
  end
end)

T.test("it follows the windows: :vsplit, <C-w>h, another :vsplit, :only", function()
  H.reset()
  H.tasks(3)
  local first = vim.api.nvim_get_current_win()
  vim.cmd("vsplit")
  local left = vim.api.nvim_get_current_win()
  T.ok(left ~= first, "a new window")
  local _, u = H.inside(":vsplit")
  T.eq(u.win, left, "over the new current window")
  vim.cmd("wincmd l")
  _, u = H.inside("<C-w>l")
  T.eq(u.win, first, "over the window entered")
  vim.cmd("wincmd h")
  _, u = H.inside("<C-w>h")
  T.eq(u.win, left, "back over the left one")
  vim.cmd("vsplit")
  vim.cmd("vsplit")
  local f
  f, u = H.inside("two more :vsplit")
  T.ok(u.width < 40, "narrow window (" .. u.width .. " columns)")
  T.ok(f.width <= u.width, "never wider than the window")
  vim.cmd("only")
  H.settle()
  T.ok(nv.window() ~= nil, "back after :only without a tool call")
  f, u = H.inside(":only")
  T.eq(u.win, vim.api.nvim_get_current_win(), "over the one window left")
  T.eq(f.col + f.width, u.col + u.width, "in its corner")
end)

T.test("a resized window takes the panel with it", function()
  H.reset()
  nv.execute({ action = "create", subject = string.rep("wide ", 15) })
  vim.cmd("vsplit")
  local wide = H.boxes()
  vim.cmd("vertical resize 30")
  -- Neovim fires WinResized (0.9+; WinScrolled before) from its main loop, before it
  -- redraws; headless, with nothing to redraw, fire it as that loop would.
  vim.cmd("doautocmd <nomodeline> " .. (vim.fn.exists("##WinResized") == 1 and "WinResized" or "WinScrolled"))
  local f, u = H.inside("after :vertical resize 30")
  T.eq(u.width, 30, "window width")
  T.ok(f.width <= 30 and f.width < wide.width, "narrower panel")
end)

T.test("the panel follows the user to another tab page", function()
  H.reset()
  H.tasks(2)
  vim.cmd("tabnew")
  local _, u = H.inside(":tabnew")
  T.eq(vim.api.nvim_win_get_tabpage(u.win), vim.api.nvim_get_current_tabpage(), "in the new tab page")
  vim.cmd("tabclose")
  _, u = H.inside(":tabclose")
  T.eq(vim.api.nvim_win_get_tabpage(u.win), vim.api.nvim_get_current_tabpage(), "back")
end)

T.test("it stays out of :help and quickfix windows, over the window being edited", function()
  H.reset()
  H.tasks(2)
  local editing = vim.api.nvim_get_current_win()
  vim.cmd("help help")
  T.eq(vim.bo.buftype, "help", "in a help window")
  local _, u = H.inside(":help")
  T.eq(u.win, editing, "still over the edited window")
  vim.cmd("helpclose")
  vim.fn.setqflist({ { filename = "x", lnum = 1, text = "t" } })
  vim.cmd("copen")
  T.eq(vim.bo.buftype, "quickfix", "in the quickfix window")
  _, u = H.inside(":copen")
  T.eq(u.win, editing, "still over the edited window")
  vim.cmd("cclose")
end)

T.test("windows of the agent's chat input are excluded by filetype; the option can change that", function()
  H.reset()
  H.tasks(2)
  local editing = vim.api.nvim_get_current_win()
  vim.cmd("split")
  vim.cmd("enew")
  vim.bo.filetype = "codecompanion"
  local chat = vim.api.nvim_get_current_win()
  local _, u = H.inside("codecompanion chat")
  T.eq(u.win, editing, "not over the chat")
  vim.bo.filetype = "AvanteInput"
  require("rpiv_todo.nvim.frontend").refresh()
  _, u = H.inside("avante input")
  T.eq(u.win, editing, "not over avante's input")
  nv.setup({ exclude = { filetypes = {} } })
  _, u = H.inside("nothing excluded")
  T.eq(u.win, chat, "over the chat once nothing is excluded")
  nv.setup({
    exclude = function()
      return true
    end,
  })
  T.eq(nv.window(), nil, "every window excluded: no panel")
  nv.setup({})
  vim.cmd("close!")
end)

T.test(":checkhealth is never covered", function()
  H.reset()
  H.tasks(2)
  vim.cmd("checkhealth rpiv_todo")
  local win = nv.window()
  if win then
    local under = vim.api.nvim_win_get_config(win).win
    local buf = vim.api.nvim_win_get_buf(under)
    T.ok(vim.api.nvim_buf_get_option(buf, "filetype") ~= "checkhealth", "not over the health report")
  else
    T.note("no eligible window in the health tab page: the panel is hidden there")
  end
  T.ok(vim.bo.filetype == "checkhealth", "the report is the current buffer")
  vim.cmd("bwipeout!")
end)

T.test("it never covers the cursor line: bottom (normal and insert mode), top, back", function()
  H.reset()
  H.tasks(5)
  local f = H.clear_of_cursor("cursor at the top")
  local _, u = H.boxes()
  T.eq(f.row + f.height, u.row + u.height, "at the bottom while the cursor is at the top")
  H.keys("L")
  T.eq(H.cursor_row(), u.height - 1, "cursor on the last row")
  f = H.clear_of_cursor("after L")
  T.eq(f.row, u.row, "moved to the top")
  T.eq(f.col + f.width, u.col + u.width, "still on the right")
  H.keys("gg")
  f = H.clear_of_cursor("after gg")
  T.eq(f.row + f.height, u.row + u.height, "back at the bottom")
  -- `L` then `A` and typing, as a person adds to the last visible line (insert mode
  -- itself, CursorMovedI, is read off a real screen in tests/screen/).
  H.keys("LA typing<Esc>")
  f = H.clear_of_cursor("typed on the last row")
  T.eq(f.row, u.row, "at the top after typing there")
  vim.cmd("doautocmd <nomodeline> CursorMovedI")
  f = H.clear_of_cursor("CursorMovedI")
  T.eq(f.row, u.row, "CursorMovedI keeps it there")
  H.keys("gg")
  f = H.clear_of_cursor("after <Esc>gg")
  T.eq(f.row + f.height, u.row + u.height, "back at the bottom")
end)

T.test("in a window too short for either edge it shrinks beside the cursor, with a summary row", function()
  H.reset()
  H.tasks(10)
  vim.cmd("split")
  vim.cmd("resize 10")
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.cmd("normal! zt")
  vim.api.nvim_win_set_cursor(0, { 5, 0 }) -- screen row 4 of 10
  require("rpiv_todo.nvim.frontend").refresh()
  local f, u = H.clear_of_cursor("short window")
  T.eq(u.height, 10, "window height")
  T.eq(f.row, u.row + 5, "below the cursor")
  T.eq(f.height, 5, "the five rows below it")
  local _, buf = nv.window()
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  T.eq(vim.trim(lines[#lines]), "└─ +7 more (7 pending)", "the summary counts what does not fit")
  vim.cmd("close")
end)

T.test("with avoid_cursor = false it stays put", function()
  H.reset({ avoid_cursor = false })
  H.tasks(3)
  H.keys("L")
  local f, u = H.boxes()
  T.eq(f.row + f.height, u.row + u.height, "still at the bottom")
end)

T.test("border, winblend, max_width and padding", function()
  H.reset({ border = "single", winblend = 20, padding = 2 })
  nv.execute({ action = "create", subject = string.rep("long subject ", 20) })
  local win, buf = nv.window()
  local f, u = H.inside("with a border")
  T.eq(f.col + f.width, u.col + u.width, "the border's right edge on the window's")
  T.eq(H.option(win, "winblend"), 20, "winblend")
  local line = vim.api.nvim_buf_get_lines(buf, 0, -1, false)[2]
  T.eq(line:sub(1, 2 + #"└"), "  └", "two columns of padding")
  T.ok(vim.fn.strdisplaywidth(line) <= u.width - 2, "cut to fit inside the border")
  H.reset({ max_width = 40, padding = 0 })
  nv.execute({ action = "create", subject = string.rep("long subject ", 20) })
  f = H.inside("max_width = 40")
  T.eq(f.width, 40, "40 columns")
  buf = select(2, nv.window())
  T.eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false)[1]:sub(1, #"●"), "●", "no padding")
  H.reset({ max_width = 0.5 })
  nv.execute({ action = "create", subject = string.rep("long subject ", 20) })
  f, u = H.inside("max_width = 0.5")
  T.eq(f.width, math.floor(u.width / 2), "half the window")
  T.contains(H.option((nv.window()), "winhighlight"), "Normal:RpivTodoNormal", "its own background group")
end)

T.finish()
