-- tests/nvim/overlay_spec.lua: the plugin in a headless Neovim (0.7.2 and current), loaded
-- from 'runtimepath': the floating panel follows tool calls, collapses, hides, repaints
-- on resize and colorscheme change, vim.NIL in metadata is JSON null, and a normal call
-- writes nothing to the message area. (Placement: panel_spec.lua.) Run through
-- scripts/nvim-runner.lua:
--   RPIV_ROOT=$PWD RPIV_SPEC=tests/nvim/overlay_spec.lua \
--     nvim --headless -u NONE -i NONE --noplugin -c "luafile scripts/nvim-runner.lua"
-- Expected lines are the overlay render (overlay.lua, the plain theme) and the panel
-- format of the TypeScript original (rpiv-todo), without the terminal's spacer line (the editor has
-- none), each line framed by the panel's one blank column of padding.

local N = dofile(os.getenv("RPIV_ROOT") .. "/tests/nvim/helpers.lua")
local T = N.T
local H = {}

N.plugin()

local todo = require("rpiv_todo")
local nv = require("rpiv_todo.nvim")

---Fresh sessions and a freshly attached front end.
H.reset = N.fresh

-- The panel's lines without the padding column on each side (which must be blank).
function H.lines()
  local win, buf = nv.window()
  if not win then
    return nil
  end
  local out = {}
  for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if line:sub(1, 1) ~= " " or line:sub(-1) ~= " " then
      error("line " .. i .. " is not padded: " .. string.format("%q", line), 2)
    end
    out[i] = line:sub(2, -2)
  end
  return out
end

function H.same_lines(got, want, what)
  if got == nil then
    error(what .. ": no overlay window", 2)
  end
  if #got ~= #want then
    error(
      string.format(
        "%s: %d lines, want %d:\n  %s\nwant\n  %s",
        what,
        #got,
        #want,
        table.concat(got, "\n  "),
        table.concat(want, "\n  ")
      ),
      2
    )
  end
  for i = 1, #want do
    if got[i] ~= want[i] then
      error(string.format("%s: line %d is %q, want %q", what, i, got[i], want[i]), 2)
    end
  end
end

-- The plain-text render of the foreground list at the target window's width less the
-- padding, without the spacer line.
function H.render(opts)
  local o = { width = vim.api.nvim_win_get_width(0) - 2, theme = "plain" }
  for k, v in pairs(opts or {}) do
    o[k] = v
  end
  local lines = todo.overlay.render(todo.foreground():state(), o)
  T.eq(lines[#lines], "", "the terminal render ends with the spacer")
  lines[#lines] = nil
  return lines
end

function H.floats()
  local n = 0
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= "" then
      n = n + 1
    end
  end
  return n
end

-- 0.7 returns float positions boxed as { [false] = n, [true] = 3 }.
function H.num(v)
  if type(v) == "table" then
    return v[false]
  end
  return v
end

-- The GUI foreground of a group (nvim_get_hl from 0.9, nvim_get_hl_by_name before).
function H.guifg(group)
  if vim.api.nvim_get_hl then
    return vim.api.nvim_get_hl(0, { name = group }).fg
  end
  return vim.api.nvim_get_hl_by_name(group, true).foreground
end

function H.two_tasks(execute)
  execute = execute or nv.execute
  execute({ action = "create", subject = "Write the parser" })
  execute({ action = "create", subject = "Test it", blockedBy = { 1 } })
  execute({ action = "update", id = 1, status = "in_progress", activeForm = "Writing" })
end

T.test("the plugin loads from runtimepath and defines its commands", function()
  T.eq(#vim.api.nvim_get_runtime_file("plugin/rpiv_todo.lua", true) >= 1, true, "plugin file on rtp")
  T.eq(#vim.api.nvim_get_runtime_file("lua/rpiv_todo/core.so", true) >= 1, true, "core.so on rtp")
  T.eq(vim.fn.exists(":Todos"), 2, ":Todos")
  T.eq(vim.fn.exists(":TodosToggle"), 2, ":TodosToggle")
  T.eq(todo.core.flavour, "luajit", "flavour")
  T.eq(todo.core.version, T.cargo_version(), "core version equals Cargo.toml")
end)

T.test("a tool call through the plain tool spec opens the overlay (plugin attaches on first call)", function()
  todo.setup({ locale = "en" })
  H.two_tasks(todo.tool().execute)
  local want = { "● Todos (0/2)", "├─ ◐ #1 Write the parser (Writing)", "└─ ○ #2 Test it ⛓ #1" }
  H.same_lines(H.lines(), want, "panel")
  H.same_lines(H.lines(), H.render(), "equals the render")
end)

T.test("the float is unfocusable, in the current window's bottom-right corner, sized to its lines", function()
  H.reset()
  local current = vim.api.nvim_get_current_win()
  H.two_tasks()
  local win, buf = nv.window()
  T.eq(type(win), "number", "window exists")
  local cfg = vim.api.nvim_win_get_config(win)
  T.eq(cfg.relative, "win", "relative")
  T.eq(cfg.win, current, "anchored to the current window")
  T.eq(cfg.anchor, "NW", "anchor")
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  T.eq(H.num(cfg.row), vim.api.nvim_win_get_height(current) - #lines, "on the bottom edge")
  T.eq(H.num(cfg.col), vim.api.nvim_win_get_width(current) - cfg.width, "on the right edge")
  T.eq(cfg.focusable, false, "focusable")
  T.eq(cfg.height, #lines, "height = line count")
  local widest = 0
  for _, l in ipairs(lines) do
    widest = math.max(widest, vim.fn.strdisplaywidth(l))
  end
  T.eq(cfg.width, widest, "width = widest line")
  T.eq(vim.api.nvim_get_current_win(), current, "focus stays in the editor")
  T.eq(H.floats(), 1, "one float")
end)

T.test("the overlay is painted with RpivTodo* groups linked to standard groups", function()
  H.reset()
  H.two_tasks()
  local _, buf = nv.window()
  local ns = vim.api.nvim_create_namespace("rpiv_todo")
  local groups = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
    groups[m[4].hl_group] = true
  end
  for _, g in ipairs({ "RpivTodoAccent", "RpivTodoDim", "RpivTodoWarning", "RpivTodoBold" }) do
    T.eq(groups[g], true, g .. " used")
  end
  local function link(group)
    return vim.fn.synIDattr(vim.fn.synIDtrans(vim.fn.hlID(group)), "name")
  end
  T.eq(link("RpivTodoAccent"), "Special", "RpivTodoAccent link")
  -- Muted follows Comment, with a grey of its own in a colour kind Comment has none in.
  local function fg(group)
    return vim.fn.synIDattr(vim.fn.synIDtrans(vim.fn.hlID(group)), "fg#", "gui")
  end
  T.eq(fg("RpivTodoMuted"), fg("Comment"), "RpivTodoMuted: Comment's GUI colour")
end)

T.test("each tool call repaints; deleting the last task closes the float", function()
  H.reset()
  nv.execute({ action = "create", subject = "Only task" })
  H.same_lines(H.lines(), { "● Todos (0/1)", "└─ ○ Only task" }, "one task")
  nv.execute({ action = "update", id = 1, subject = "Renamed" })
  H.same_lines(H.lines(), { "● Todos (0/1)", "└─ ○ Renamed" }, "repainted")
  nv.execute({ action = "delete", id = 1 })
  T.eq(nv.window(), nil, "no window")
  T.eq(H.floats(), 0, "no float left")
  nv.execute({ action = "create", subject = "Back" })
  -- Tombstones are not counted, and no row waits on another: no ids.
  H.same_lines(H.lines(), { "● Todos (0/1)", "└─ ○ Back" }, "shown again")
end)

T.test(":TodosToggle collapses and expands; the collapse key is mapped to it", function()
  H.reset()
  H.two_tasks()
  vim.cmd("TodosToggle")
  H.same_lines(H.lines(), { "● Todos (0/2)", "└─ <C-S-t> to expand" }, "collapsed")
  H.same_lines(
    H.lines(),
    H.render({
      collapsed = true,
      layout = {
        collapsed_hint = function()
          return "<C-S-t> to expand"
        end,
      },
    }),
    "collapsed equals the render with the editor's hint"
  )
  vim.cmd("TodosToggle")
  H.same_lines(H.lines(), H.render(), "expanded again")
  T.eq(require("rpiv_todo.nvim.frontend").mapped_key(), "<C-S-t>", "mapped key")
  T.eq(
    vim.fn.maparg("<C-S-t>", "n") ~= ""
      or vim.fn.hasmapto("TodosToggle") == 1
      or #vim.fn.maparg("<C-S-t>", "n", false, true) > 0,
    true,
    "normal-mode mapping exists"
  )
  local m = vim.fn.maparg("<C-S-t>", "i", false, true)
  T.eq(type(m) == "table" and m.lhs ~= nil, true, "insert-mode mapping exists")
  todo.setup({ locale = "en", collapse_key = "alt+x" })
  nv.execute({ action = "list" })
  T.eq(require("rpiv_todo.nvim.frontend").mapped_key(), "<M-x>", "remapped after setup")
  T.eq(vim.fn.maparg("<C-S-t>", "n"), "", "old mapping removed")
  todo.setup({ locale = "en", collapse_key = "off" })
  nv.toggle()
  H.same_lines(H.lines(), { "● Todos (0/2)", "└─ :TodosToggle to expand" }, "collapsed with the key off")
  T.eq(require("rpiv_todo.nvim.frontend").mapped_key(), nil, "nothing mapped when off")
  nv.toggle()
end)

T.test("the collapse key maps to Neovim notation; bare characters are not mapped", function()
  local cases = {
    { "ctrl+shift+t", "<C-S-t>" },
    { "alt+x", "<M-x>" },
    { "super+k", "<D-k>" },
    { "ctrl+<", "<C-lt>" },
    { "f5", "<F5>" },
    { "ctrl+pageup", "<C-PageUp>" },
    { "escape", "<Esc>" },
    { "t", nil },
    { "off", nil },
    { "clear", nil },
  }
  for _, c in ipairs(cases) do
    T.eq(require("rpiv_todo.nvim.frontend").key_notation(c[1]), c[2], c[1])
  end
end)

T.test("completed tasks stay for the turn they were seen in, then hide", function()
  H.reset()
  H.two_tasks()
  nv.execute({ action = "update", id = 1, status = "completed" })
  H.same_lines(
    H.lines(),
    { "● Todos (1/2)", "├─ ✓ #1 Write the parser", "└─ ○ #2 Test it ⛓ #1" },
    "same turn"
  )
  require("rpiv_todo").turn_started()
  -- Tasks hidden after their turn are left out of the counts too.
  H.same_lines(H.lines(), { "● Todos (0/1)", "└─ ○ #2 Test it ⛓ #1" }, "next turn")
end)

T.test("replay from host messages and choosing the foreground session", function()
  H.reset()
  nv.execute({ action = "create", subject = "In default" })
  local messages = {
    { role = "user", content = "plan it" },
    {
      role = "toolResult",
      toolName = "todo",
      details = {
        action = "create",
        params = {},
        nextId = 3,
        tasks = {
          { id = 1, subject = "Replayed one", status = "completed" },
          { id = 2, subject = "Replayed two", status = "pending" },
        },
      },
    },
  }
  local state = nv.replay("chat-2", messages)
  T.eq(#state.tasks, 2, "replayed tasks")
  T.eq(state.nextId, 3, "replayed nextId")
  H.same_lines(H.lines(), { "● Todos (0/1)", "└─ ○ In default" }, "default still shown")
  require("rpiv_todo").foreground("chat-2")
  H.same_lines(H.lines(), { "● Todos (1/2)", "├─ ✓ Replayed one", "└─ ○ Replayed two" }, "chat-2 shown")
  nv.execute({ action = "create", subject = "Elsewhere" })
  H.same_lines(
    H.lines(),
    { "● Todos (1/2)", "├─ ✓ Replayed one", "└─ ○ Replayed two" },
    "a call in another session does not change it"
  )
  require("rpiv_todo").foreground("default")
end)

T.test("VimResized repaints at the new width", function()
  H.reset()
  nv.execute({ action = "create", subject = string.rep("long subject ", 12) })
  local before = vim.o.columns
  vim.o.columns = 40
  vim.cmd("doautocmd VimResized")
  local win = nv.window()
  T.eq(vim.api.nvim_win_get_config(win).width <= 40, true, "fits 40 columns")
  H.same_lines(H.lines(), H.render(), "truncated like the render")
  T.eq(vim.fn.strdisplaywidth(H.lines()[2]) <= vim.api.nvim_win_get_width(0), true, "row cut to the window")
  vim.o.columns = before
  vim.cmd("doautocmd VimResized")
  H.same_lines(H.lines(), H.render(), "wide again")
end)

T.test("ColorScheme brings the groups back and a user's definition wins", function()
  H.reset()
  H.two_tasks()
  vim.cmd("highlight clear")
  vim.cmd("highlight RpivTodoMuted guifg=#ff0000")
  vim.cmd("doautocmd ColorScheme")
  T.eq(vim.fn.synIDattr(vim.fn.synIDtrans(vim.fn.hlID("RpivTodoAccent")), "name"), "Special", "link restored")
  T.eq(H.guifg("RpivTodoMuted"), 0xff0000, "user color kept")
  T.eq(nv.window() ~= nil, true, "still shown")
end)

T.test("vim.NIL in metadata is JSON null: the key is deleted", function()
  H.reset()
  nv.execute({ action = "create", subject = "M", metadata = { keep = "yes", drop = 1 } })
  local result = nv.execute({ action = "update", id = 1, metadata = { drop = vim.NIL } })
  T.eq(result.content[1].text, "Updated #1", "content")
  local meta = todo.session():state().tasks[1].metadata
  T.eq(meta.keep, "yes", "kept key")
  T.eq(meta.drop, nil, "deleted key")
  T.eq(result.details.tasks[1].metadata.drop, nil, "details snapshot too")
  -- The same through the JSON path, with null decoded by the core.
  nv.execute('{"action":"update","id":1,"metadata":{"keep":null,"new":2}}')
  meta = todo.session():state().tasks[1].metadata
  T.eq(meta.keep, nil, "deleted through JSON")
  T.eq(meta.new, 2, "added through JSON")
end)

T.test("a normal call writes nothing to the message area", function()
  H.reset()
  local before = vim.api.nvim_exec("messages", true)
  vim.v.errmsg = ""
  H.two_tasks()
  nv.execute({ action = "update", id = 2, status = "in_progress" })
  nv.execute({ action = "get", id = 9 }) -- a rejected call is in-band, not a message
  require("rpiv_todo").turn_started()
  nv.toggle()
  nv.toggle()
  local after = vim.api.nvim_exec("messages", true)
  T.eq(after, before, ":messages unchanged")
  T.eq(vim.v.errmsg, "", "v:errmsg")
end)

T.test("the overlay follows a host-named window", function()
  H.reset()
  local first = vim.api.nvim_get_current_win()
  vim.cmd("split")
  local second = vim.api.nvim_get_current_win()
  nv.set_win(first)
  nv.execute({ action = "create", subject = "Anchored" })
  local win = nv.window()
  T.eq(vim.api.nvim_win_get_config(win).win, first, "anchored to the named window")
  T.eq(vim.api.nvim_get_current_win(), second, "focus unchanged")
  nv.set_win(nil)
  vim.cmd("close")
  require("rpiv_todo.nvim.frontend").refresh()
  T.eq(vim.api.nvim_win_get_config((nv.window())).win, first, "follows the current window again")
end)

T.test("the overlay follows the user to another tab page", function()
  H.reset()
  nv.execute({ action = "create", subject = "Everywhere" })
  local first = vim.api.nvim_get_current_tabpage()
  vim.cmd("tabnew")
  local win = nv.window()
  T.eq(vim.api.nvim_win_get_tabpage(win), vim.api.nvim_get_current_tabpage(), "float in the new tab")
  H.same_lines(H.lines(), { "● Todos (0/1)", "└─ ○ Everywhere" }, "same panel")
  vim.cmd("tabclose")
  T.eq(vim.api.nvim_get_current_tabpage(), first, "back")
  win = nv.window()
  T.eq(win ~= nil and vim.api.nvim_win_get_tabpage(win) == first, true, "float back in the first tab")
end)

T.test("nvim.setup is strict", function()
  local ok, err = pcall(nv.setup, { zindex = 0 })
  T.eq(ok, false, "zindex 0 refused")
  T.contains(err, "(rpiv_todo) nvim.zindex:", "message")
  ok, err = pcall(nv.setup, { colour = "red" })
  T.eq(ok, false, "unknown key refused")
  T.contains(err, "(rpiv_todo) nvim.colour: unknown option", "unknown key")
  nv.setup({})
end)

T.finish()
