-- tests/lua/overlay_spec.lua: the overlay (lua/rpiv_todo/overlay/) through the public
-- Lua contract, under a real interpreter and the built core.so:
--   luajit tests/lua/overlay_spec.lua    (also lua5.1, lua5.4; from the repository root)
-- Covers every recorded case of tests/fixtures/overlay-cases.jsonl, the live lifecycle,
-- options, layout overrides, themes and display-width truncation. Exits 1 on failure.

-- scripts/test.sh sets LUA_PATH/LUA_CPATH (each flavour's own build) and RPIV_ROOT; run by
-- hand, tests/harness.lua points the paths at the checkout and lua/rpiv_todo/core.so.
local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")

-- cjson first: the core adopts cjson's array metatable when cjson is already loaded.
local json_ok, cjson = pcall(require, "cjson")
if json_ok and cjson.decode_array_with_array_mt then
  cjson.decode_array_with_array_mt(true) -- `[]` stays an array, as the JSON says
end
local decode = json_ok and cjson.decode or require("json").decode

local core = require("rpiv_todo.core")
local overlay = require("rpiv_todo.overlay")

local test, eq, ok, show = T.test, T.same, T.ok, T.show

-- Under valgrind (scripts/test.sh sets RPIV_VALGRIND; it runs 20-50x slower) the two
-- loops that repeat the same work run fewer times: every 8th recorded case in every theme
-- and mode, and 10 dropped subjects of 1 MiB instead of 100 (10 MiB kept would still show).
local VALGRIND = os.getenv("RPIV_VALGRIND") ~= nil
local CASE_STEP = VALGRIND and 8 or 1
local BIG_SUBJECTS = VALGRIND and 10 or 100

-- ---------------------------------------------------------------------------
-- Helpers
-- ---------------------------------------------------------------------------

local function read_lines(path)
  local f = assert(io.open(path, "rb"))
  local out = {}
  for line in f:lines() do
    if line ~= "" then
      out[#out + 1] = line
    end
  end
  f:close()
  return out
end

local function strip_sgr(s)
  return (s:gsub("\27%[[%d;]*m", ""))
end

local function spans_text(line)
  local parts = {}
  for i = 1, #line do
    parts[i] = line[i][1]
  end
  return table.concat(parts)
end

local function task(id, status, subject, extra)
  local t = { id = id, status = status, subject = subject or ("task " .. id) }
  for k, v in pairs(extra or {}) do
    t[k] = v
  end
  return t
end

local function ids_of(list)
  local out = {}
  for i = 1, #list do
    out[i] = math.floor(list[i].id)
  end
  return out
end

-- ---------------------------------------------------------------------------
-- Recorded cases
-- ---------------------------------------------------------------------------

local cases_path = T.fixture("overlay-cases.jsonl")
local cases = {}
for i, line in ipairs(read_lines(cases_path)) do
  cases[i] = decode(line)
end

local function case_opts(c, extra)
  local o = { width = 1000, max_widget_lines = c.maxWidgetLines, collapsed = c.collapsed, collapse_key = c.collapseKey }
  for k, v in pairs(extra or {}) do
    o[k] = v
  end
  return o
end

test("every recorded overlay case renders byte for byte", function()
  ok(#cases == 160, "160 recorded cases, got " .. #cases)
  for i, c in ipairs(cases) do
    local lines = overlay.render({ tasks = c.tasks, nextId = c.nextId }, case_opts(c))
    eq(lines, c.lines, "case " .. i)
  end
end)

test("every recorded case renders the same from a core.list handle (the fast path)", function()
  for i, c in ipairs(cases) do
    local list = core.list({ tasks = c.tasks, nextId = c.nextId })
    eq(overlay.render(list, case_opts(c)), c.lines, "case " .. i)
  end
end)

test("a list handle's layout carries the heading counts and showIds", function()
  local list =
    core.list({ tasks = { task(1, "completed", "a"), task(2, "pending", "b"), task(3, "deleted", "c") }, nextId = 4 })
  local l = core._overlay_layout(list, 11)
  eq(l.counts.total, 2, "total")
  eq(l.counts.completed, 1, "completed")
  eq(l.counts.pending, 1, "pending")
  eq(l.showIds, false, "showIds")
  -- Ids the live overlay retired are left out of counts and rows.
  local h = core._overlay_layout(list, 11, { [1] = true })
  eq(h.counts.total, 1, "total without retired")
  eq(ids_of(h.visible), { 2 }, "visible without retired")
end)

test("every recorded case selects the same rows through core._overlay_layout", function()
  local n = 0
  for i, c in ipairs(cases) do
    if not c.collapsed then
      local l = core._overlay_layout({ tasks = c.tasks, nextId = c.nextId }, c.budget)
      eq(ids_of(l.visible), c.layout.visible, "case " .. i .. " visible")
      eq(l.hiddenCompleted, c.layout.hiddenCompleted, "case " .. i .. " hiddenCompleted")
      eq(l.truncatedTail, c.layout.truncatedTail, "case " .. i .. " truncatedTail")
      n = n + 1
    end
  end
  eq(n, 150, "non-collapsed cases")
end)

test("the ANSI theme uses basic SGR only and strips back to the recorded plain lines", function()
  -- Basic attributes and the 16-color foregrounds, each with its own reset.
  local allowed = {}
  for _, p in ipairs({ "0", "1", "2", "9", "22", "29", "31", "32", "33", "35", "36", "39", "90" }) do
    allowed[p] = true
  end
  local colored = 0
  for i, c in ipairs(cases) do
    local lines = overlay.render({ tasks = c.tasks, nextId = c.nextId }, case_opts(c, { theme = overlay.themes.ansi }))
    eq(#lines, #c.lines, "case " .. i .. " line count")
    for j, line in ipairs(lines) do
      for params in line:gmatch("\27%[([%d;]*)m") do
        ok(allowed[params], "case " .. i .. ": SGR " .. show(params) .. " in " .. show(line))
        colored = colored + 1
      end
      eq(strip_sgr(line), c.lines[j], "case " .. i .. " line " .. j)
    end
  end
  ok(colored > 1000, "the ANSI theme colors the lines: " .. colored .. " SGR sequences")
end)

test("the ANSI theme colors something (it is not the plain theme)", function()
  local lines = overlay.render({ tasks = { task(1, "in_progress", "Build") }, nextId = 2 }, { theme = "ansi" })
  ok(lines[1]:find("\27[", 1, true), "heading carries SGR")
  ok(lines[2]:find("\27[", 1, true), "row carries SGR")
end)

test("the segments theme concatenates to the recorded plain lines", function()
  local groups, used = {}, {}
  for _, g in pairs(overlay.groups) do
    groups[g] = true
  end
  for i, c in ipairs(cases) do
    local lines =
      overlay.render({ tasks = c.tasks, nextId = c.nextId }, case_opts(c, { theme = overlay.themes.segments }))
    eq(#lines, #c.lines, "case " .. i .. " line count")
    for j, line in ipairs(lines) do
      ok(type(line) == "table", "segments line is a table")
      for _, seg in ipairs(line) do
        ok(type(seg[1]) == "string", "segment text is a string")
        ok(seg[2] == nil or groups[seg[2]], "known group: " .. tostring(seg[2]))
        if seg[2] ~= nil then
          used[seg[2]] = true
        end
      end
      eq(spans_text(line), c.lines[j], "case " .. i .. " line " .. j)
    end
  end
  eq(used, {
    RpivTodoAccent = true,
    RpivTodoDim = true,
    RpivTodoMuted = true,
    RpivTodoText = true,
    RpivTodoWarning = true,
    RpivTodoSuccess = true,
  }, "the groups the recorded cases use")
end)

test("segments name their highlight groups RpivTodo<Color>", function()
  eq(overlay.groups, {
    accent = "RpivTodoAccent",
    dim = "RpivTodoDim",
    muted = "RpivTodoMuted",
    text = "RpivTodoText",
    warning = "RpivTodoWarning",
    success = "RpivTodoSuccess",
    error = "RpivTodoError",
    toolTitle = "RpivTodoToolTitle",
  })
  local lines = overlay.render({ tasks = { task(1, "completed", "Done") }, nextId = 2 }, { theme = "segments" })
  -- "✓ Done": glyph in success, subject struck through.
  local row = lines[2]
  local seen_success, seen_strike = false, false
  for _, seg in ipairs(row) do
    if seg[1] == "✓" and seg[2] == "RpivTodoSuccess" then
      seen_success = true
    end
    if seg[1] == "Done" and seg.strikethrough then
      seen_strike = true
    end
  end
  ok(seen_success, "completed glyph in RpivTodoSuccess")
  ok(seen_strike, "completed subject struck through")
end)

-- ---------------------------------------------------------------------------
-- Options (lenient per render)
-- ---------------------------------------------------------------------------

local function pending_list(n)
  local tasks = {}
  for i = 1, n do
    tasks[i] = task(i, "pending")
  end
  return { tasks = tasks, nextId = n + 1 }
end

test("max_widget_lines that is not a number or below 3 means 12", function()
  local state = pending_list(20)
  for _, bad in ipairs({ "5", 2, 0, -1, true, 0 / 0, {} }) do
    local lines = overlay.render(state, { max_widget_lines = bad })
    -- heading + 10 rows + summary + spacer
    eq(#lines, 13, "max_widget_lines = " .. tostring(bad))
    eq(lines[12], "└─ +10 more (10 pending)", "summary for " .. tostring(bad))
  end
  local lines = overlay.render(state, { max_widget_lines = 3 })
  eq(lines, { "● Todos (0/20)", "├─ ○ task 1", "└─ +19 more (19 pending)", "" })
end)

test("an invalid collapse key means ctrl+shift+t and off shows a static label", function()
  local state = pending_list(1)
  local function hint(key)
    return overlay.render(state, { collapsed = true, collapse_key = key })[2]
  end
  eq(hint(nil), "└─ ctrl+shift+t to expand")
  eq(hint("ctrl+"), "└─ ctrl+shift+t to expand")
  eq(hint("hyper+k"), "└─ ctrl+shift+t to expand")
  eq(hint(42), "└─ ctrl+shift+t to expand")
  eq(hint(""), "└─ ctrl+shift+t to expand")
  eq(hint("ctrl+ctrl+t"), "└─ ctrl+shift+t to expand")
  eq(hint(" OFF "), "└─ collapsed")
  eq(hint("  Alt+O "), "└─ alt+o to expand")
  eq(hint("OFF"), "└─ collapsed")
end)

test("collapse keys follow the grammar", function()
  local cases_ = {
    { "ctrl+shift+t", "ctrl+shift+t" },
    { " Ctrl+Shift+T ", "ctrl+shift+t" },
    { "alt+o", "alt+o" },
    { "super+f12", "super+f12" },
    { "f1", "f1" },
    { "x", "x" },
    { "ctrl+]", "ctrl+]" },
    { "ctrl+pagedown", "ctrl+pagedown" },
    { "shift+alt+ctrl+super+escape", "shift+alt+ctrl+super+escape" },
    { "off", "off" },
    { " Off ", "off" },
    { "", nil },
    { "   ", nil },
    { "ctrl+ctrl+t", nil },
    { "ctr+t", nil },
    { "ctrl++", nil },
    { "+t", nil },
    { "ctrl+t+", nil },
    { "ctrl+f13", nil },
    { "ctrl+tt", nil },
    { "ctrl+ ", nil },
    { "t+ctrl", nil },
    { "ctrl+é", nil },
    { 5, nil },
    { false, nil },
  }
  for _, c in ipairs(cases_) do
    eq(overlay.normalize_collapse_key(c[1]), c[2], "key " .. show(c[1]))
  end
end)

test("width cuts lines with an ellipsis", function()
  local state = { tasks = { task(1, "pending", "abcdefghij") }, nextId = 2 }
  eq(overlay.render(state, { width = 10 }), { "● Todos (…", "└─ ○ abcd…", "" })
end)

-- ---------------------------------------------------------------------------
-- Layout overrides
-- ---------------------------------------------------------------------------

local one_of_each = {
  tasks = {
    task(1, "completed", "Write spec"),
    task(2, "in_progress", "Build", { activeForm = "Building" }),
    task(3, "pending", "Ship", { blockedBy = { 2 } }),
    task(4, "deleted", "Gone"),
  },
  nextId = 5,
}

test("the default layout writes the documented lines", function()
  eq(overlay.render(one_of_each), {
    "● Todos (1/3)",
    "├─ ✓ #1 Write spec",
    "├─ ◐ #2 Build (Building)",
    "└─ ○ #3 Ship ⛓ #2",
    "",
  })
end)

test("a row override replaces rows only and can call the default", function()
  local lines = overlay.render(one_of_each, {
    layout = {
      row = function(ctx, row)
        return "[" .. row.status .. "] " .. overlay.default_layout.row(ctx, row)
      end,
    },
  })
  eq(lines, {
    "● Todos (1/3)",
    "├─ [completed] ✓ #1 Write spec",
    "├─ [in_progress] ◐ #2 Build (Building)",
    "└─ [pending] ○ #3 Ship ⛓ #2",
    "",
  })
end)

test("glyphs merge key by key and the spacer can be dropped", function()
  local lines = overlay.render(one_of_each, {
    layout = {
      glyphs = { completed = "x" },
      spacer = function()
        return nil
      end,
    },
  })
  eq(
    lines,
    { "● Todos (1/3)", "├─ x #1 Write spec", "├─ ◐ #2 Build (Building)", "└─ ○ #3 Ship ⛓ #2" }
  )
end)

test("a layout override may be a function of the defaults", function()
  local lines = overlay.render(one_of_each, {
    collapsed = true,
    layout = function(default)
      return {
        collapsed_hint = function(ctx)
          return "(" .. default.collapsed_hint(ctx) .. ")"
        end,
      }
    end,
  })
  eq(lines, { "● Todos (1/3)", "└─ (ctrl+shift+t to expand)", "" })
end)

test("row text reaches overrides sanitized, the raw task alongside", function()
  local state = { tasks = { task(1, "in_progress", "a\27[31mb", { activeForm = "c\nd" }) }, nextId = 2 }
  local seen
  overlay.render(state, {
    layout = {
      row = function(_, row)
        seen = row
        return "x"
      end,
    },
  })
  eq(seen.subject, "ab")
  eq(seen.activeForm, "c d")
  eq(seen.task.subject, "a\27[31mb")
end)

test("summary override receives the hidden counts", function()
  local got
  overlay.render(pending_list(5), {
    max_widget_lines = 3,
    layout = {
      summary = function(_, hidden)
        got = hidden
        return "more"
      end,
    },
  })
  eq(got, { count = 4, completed = 0, pending = 4 })
end)

test("check_layout accepts overrides and names what is wrong", function()
  eq(overlay.check_layout({ row = function() end }), true)
  eq(overlay.check_layout(function() end), true)
  eq(select(2, overlay.check_layout({ row = "x" })), "row: expected a function")
  ok(select(2, overlay.check_layout({ rows = function() end })):find("rows: unknown layout key", 1, true))
  eq(
    select(2, overlay.check_layout({ glyphs = { pending = 1 } })),
    "glyphs: expected strings for pending, in_progress, completed"
  )
  eq(select(2, overlay.check_layout(3)), "expected a table of layout functions or a function")
end)

-- ---------------------------------------------------------------------------
-- The live overlay
-- ---------------------------------------------------------------------------

local function find_line(lines, text)
  for _, l in ipairs(lines) do
    if l:find(text, 1, true) then
      return true
    end
  end
  return false
end

test("a completed task stays for the turn it was seen in, then hides", function()
  local ov = overlay.new()
  local state = { tasks = { task(1, "pending", "Plan"), task(2, "pending", "Code") }, nextId = 3 }
  eq(ov:render(state, 80), { "● Todos (0/2)", "├─ ○ Plan", "└─ ○ Code", "" })
  ov:turn_started()
  state.tasks[1] = task(1, "completed", "Plan")
  eq(ov:render(state, 80), { "● Todos (1/2)", "├─ ✓ Plan", "└─ ○ Code", "" })
  eq(
    ov:render(state, 80),
    { "● Todos (1/2)", "├─ ✓ Plan", "└─ ○ Code", "" },
    "still there within the turn"
  )
  ov:turn_started()
  -- Hidden tasks leave the counts too: the panel shows what is left.
  eq(ov:render(state, 80), { "● Todos (0/1)", "└─ ○ Code", "" })
end)

test("a completed task never shown survives the turn change", function()
  local ov = overlay.new()
  local state = { tasks = { task(1, "completed", "Plan"), task(2, "pending", "Code") }, nextId = 3 }
  ov:toggle_collapse()
  eq(ov:render(state, 80), { "● Todos (1/2)", "└─ ctrl+shift+t to expand", "" })
  ov:turn_started()
  ov:toggle_collapse()
  eq(ov:render(state, 80), { "● Todos (1/2)", "├─ ✓ Plan", "└─ ○ Code", "" })
end)

test("when every task has hidden the panel is empty", function()
  local ov = overlay.new()
  local state = { tasks = { task(1, "completed", "Plan") }, nextId = 2 }
  eq(ov:render(state, 80), { "○ Todos (1/1)", "└─ ✓ Plan", "" })
  ov:turn_started()
  eq(ov:render(state, 80), {})
end)

test("reset (replay) shows hidden completed tasks again", function()
  local ov = overlay.new()
  local state = { tasks = { task(1, "completed", "Plan"), task(2, "pending", "Code") }, nextId = 3 }
  ov:render(state, 80)
  ov:turn_started()
  eq(ov:render(state, 80), { "● Todos (0/1)", "└─ ○ Code", "" })
  ov:reset()
  eq(ov:render(state, 80), { "● Todos (1/2)", "├─ ✓ Plan", "└─ ○ Code", "" })
end)

test("a shrinking nextId (clear) resets what was hidden", function()
  local ov = overlay.new()
  ov:render({ tasks = { task(1, "completed", "Old"), task(2, "pending", "Old 2") }, nextId = 3 }, 80)
  ov:turn_started()
  -- After clear the list restarts at #1; the new #1 is a different task.
  local fresh = { tasks = { task(1, "completed", "New") }, nextId = 2 }
  eq(ov:render(fresh, 80), { "○ Todos (1/1)", "└─ ✓ New", "" })
end)

test("an id that stops being completed is forgotten", function()
  local ov = overlay.new()
  ov:render({ tasks = { task(1, "completed", "A"), task(2, "pending", "B") }, nextId = 3 }, 80)
  ov:turn_started()
  -- Deleted and gone from the list: the id must not stay hidden forever.
  ov:render({ tasks = { task(1, "deleted", "A"), task(2, "pending", "B") }, nextId = 3 }, 80)
  eq(ov:hidden_ids(), {})
end)

test("collapse toggles with a custom key in the hint, and off shows collapsed", function()
  local state =
    { tasks = { task(1, "pending"), task(2, "in_progress", "Two", { activeForm = "Doing two" }) }, nextId = 3 }
  local ov = overlay.new({ collapse_key = " Alt+O " })
  eq(ov:toggle_collapse(), true)
  eq(ov:render(state, 80), { "● Todos (0/2)", "└─ alt+o to expand", "" })
  eq(ov:toggle_collapse(), false)
  eq(ov:render(state, 80), { "● Todos (0/2)", "├─ ○ task 1", "└─ ◐ Two (Doing two)", "" })
  local off = overlay.new({ collapse_key = "off" })
  off:toggle_collapse()
  eq(off:render(state, 80), { "● Todos (0/2)", "└─ collapsed", "" })
  -- A key that does not parse: the default key's hint.
  local bad = overlay.new({ collapse_key = "hyper+o" })
  bad:toggle_collapse()
  eq(bad:render(state, 80), { "● Todos (0/2)", "└─ ctrl+shift+t to expand", "" })
end)

test("collapsed with nothing to show renders nothing", function()
  local ov = overlay.new()
  ov:toggle_collapse()
  eq(ov:render({ tasks = { task(1, "deleted") }, nextId = 2 }, 80), {})
  eq(ov:render(nil, 80), {})
end)

test("expanded shows every task with no summary", function()
  local state = pending_list(20)
  state.tasks[5] = task(5, "completed")
  state.tasks[6] = task(6, "deleted", "tombstone")
  local ov = overlay.new({ max_widget_lines = 5 })
  local normal = {
    "● Todos (1/19)",
    "├─ ○ task 1",
    "├─ ○ task 2",
    "├─ ○ task 3",
    "└─ +16 more (1 completed, 15 pending)",
    "",
  }
  local lines = ov:render(state, 80)
  eq(lines, normal)
  ov:set_expanded(true)
  lines = ov:render(state, 80)
  eq(#lines, 1 + 19 + 1)
  eq(lines[1], "● Todos (1/19)")
  eq(lines[2], "├─ ○ task 1")
  eq(lines[6], "├─ ✓ task 5")
  eq(lines[20], "└─ ○ task 20")
  ok(not find_line(lines, "more"), "no summary row")
  ok(not find_line(lines, "tombstone"), "no tombstone")
  ov:set_expanded(false)
  eq(ov:render(state, 80), normal, "back to normal")
end)

test("deleted tasks are never shown, in any mode", function()
  local state =
    { tasks = { task(1, "deleted", "ghost"), task(2, "pending", "real"), task(3, "deleted", "ghost") }, nextId = 4 }
  for _, o in ipairs({ {}, { expanded = true }, { max_widget_lines = 3 } }) do
    local lines = overlay.render(state, o)
    eq(lines, { "● Todos (0/1)", "└─ ○ real", "" })
  end
end)

test("the heading counts the panel's tasks; /todos keeps the full account", function()
  -- The decision is recorded in overlay/init.lua's header.
  local todo = require("rpiv_todo")
  todo.sessions.reset()
  todo.setup({ locale = "en" })
  local s, ov = todo.session("count"), overlay.new()
  for i = 1, 6 do
    s:execute({ action = "create", subject = "Step " .. i })
  end
  for i = 1, 4 do
    s:execute({ action = "update", id = i, status = "completed" })
  end
  eq(ov:render(s, 80)[1], "● Todos (4/6)", "first seen: all count")
  ov:turn_started()
  eq(ov:render(s, 80), { "● Todos (0/2)", "├─ ○ Step 5", "└─ ○ Step 6", "" })
  s:execute({ action = "update", id = 5, status = "completed" })
  s:execute({ action = "update", id = 6, status = "completed" })
  eq(ov:render(s, 80), { "○ Todos (2/2)", "├─ ✓ Step 5", "└─ ✓ Step 6", "" })
  ok((todo.command.todos(s)):find("^6/6 completed\n"), "/todos counts every task")
end)

test("the live overlay renders a core.list handle and a session like their state", function()
  local todo = require("rpiv_todo")
  todo.sessions.reset()
  local s = todo.session("handles")
  s:execute({ action = "create", subject = "One" })
  s:execute({ action = "update", id = 1, status = "completed" })
  local want = { "○ Todos (1/1)", "└─ ✓ One", "" }
  eq(overlay.new():render(s, 80), want, "session")
  eq(overlay.new():render(s.list, 80), want, "core.list handle")
  eq(overlay.new():render(core.null, 80), {}, "a userdata that is not a list")
  local ov = overlay.new()
  ov:render(s.list, 80)
  ov:turn_started()
  eq(ov:render(s.list, 80), {}, "a handle's completed task hides after its turn")
end)

-- One overlay path: a list handle's rows are built natively, a state table's in Lua from
-- the tasks the native selection picked. Every mode and theme must give the same lines.
local function same_lines(a, b, what)
  local function text(lines)
    local out = {}
    for i, line in ipairs(lines) do
      out[i] = type(line) == "table" and (spans_text(line) .. "|" .. show(line)) or line
    end
    return out
  end
  if type(a[1]) == "table" or type(b[1]) == "table" then
    -- Segments: compare text, groups and styles of every segment.
    eq(#a, #b, what .. ": line count")
    for i = 1, #a do
      eq(#a[i], #b[i], what .. ": segments of line " .. i)
      for j = 1, #a[i] do
        local x, y = a[i][j], b[i][j]
        eq({ x[1], x[2] or "", x.bold or false, x.strikethrough or false }, {
          y[1],
          y[2] or "",
          y.bold or false,
          y.strikethrough or false,
        }, what .. ": line " .. i .. " segment " .. j)
      end
    end
  else
    eq(text(a), text(b), what)
  end
end

test("every recorded case renders the same from a list handle and a state, in every theme and mode", function()
  local n, ran = 0, 0
  for i = 1, #cases, CASE_STEP do
    local c = cases[i]
    ran = ran + 1
    local state = { tasks = c.tasks, nextId = c.nextId }
    local list = core.list(state)
    for _, theme in ipairs({ "plain", "ansi", "segments" }) do
      for _, mode in ipairs({ {}, { collapsed = true }, { expanded = true }, { width = 24 } }) do
        local o = case_opts(c, { theme = theme })
        for k, v in pairs(mode) do
          o[k] = v
        end
        local from_list, from_state = overlay.render(list, o), overlay.render(state, o)
        same_lines(from_list, from_state, "case " .. i .. " " .. theme)
        if theme == "plain" and next(mode) == nil then
          eq(from_list, c.lines, "case " .. i .. " recorded")
        end
        n = n + 1
      end
    end
  end
  eq(n, ran * 12, "every combination ran")
  eq(ran, math.ceil(#cases / CASE_STEP), "every case in the sample")
end)

test("a row override gets the whole task from a list handle as from a state", function()
  local state = {
    tasks = {
      task(1, "in_progress", "a\27[31mb", { activeForm = "c\nd", description = "desc", owner = "me" }),
      task(2, "pending", "p", { blockedBy = { 1 }, metadata = { k = "v" } }),
    },
    nextId = 3,
  }
  local function seen_rows(source)
    local rows = {}
    overlay.render(source, {
      layout = {
        row = function(_, row)
          rows[#rows + 1] = row
          return "x"
        end,
      },
    })
    return rows
  end
  local a, b = seen_rows(core.list(state)), seen_rows(state)
  eq(#a, 2, "two rows")
  for i = 1, 2 do
    eq(a[i].subject, b[i].subject, "subject " .. i)
    eq(a[i].activeForm, b[i].activeForm, "activeForm " .. i)
    eq(a[i].blockedBy, b[i].blockedBy, "blockedBy " .. i)
    eq(a[i].task, b[i].task, "task " .. i)
  end
  eq(a[1].subject, "ab")
  eq(a[1].task.subject, "a\27[31mb")
  eq(a[2].task.metadata, { k = "v" })
end)

-- Three live overlays made with the same options, and a function that does one thing to
-- each (a session, its list handle and its snapshot are painted by one each).
local function three_overlays(opts)
  local ovs = { overlay.new(opts), overlay.new(opts), overlay.new(opts) }
  return ovs, function(fn)
    for k = 1, 3 do
      fn(ovs[k])
    end
  end
end

test("a live overlay paints the same from a session, its list handle and its snapshot, turn after turn", function()
  local todo = require("rpiv_todo")
  todo.sessions.reset()
  local s = todo.session("lockstep")
  for _, theme in ipairs({ "plain", "ansi", "segments" }) do
    s.list:replace(nil)
    local ovs, each = three_overlays({ theme = theme, max_widget_lines = 6 })
    local steps = 0
    local function paint(what)
      local a = ovs[1]:render(s, 60)
      local b = ovs[2]:render(s.list, 60)
      local c = ovs[3]:render(s:state(), 60)
      same_lines(a, b, theme .. " session vs handle after " .. what)
      same_lines(a, c, theme .. " session vs snapshot after " .. what)
      steps = steps + 1
      return a
    end
    for i = 1, 9 do
      s:execute({ action = "create", subject = "Task " .. i, activeForm = "Doing " .. i })
      paint("create " .. i)
    end
    s:execute({ action = "update", id = 5, addBlockedBy = { 4 } })
    paint("blockedBy")
    for _, id in ipairs({ 1, 2, 3 }) do
      s:execute({ action = "update", id = id, status = "completed" })
      paint("complete " .. id)
    end
    each(function(ov)
      ov:turn_started()
    end)
    local lines = paint("turn 2")
    -- #1-#3 were seen in turn 1: they left rows and counts.
    local heading = type(lines[1]) == "table" and spans_text(lines[1]) or strip_sgr(lines[1])
    eq(heading, "● Todos (0/6)", theme .. " heading after the turn")
    s:execute({ action = "update", id = 4, status = "in_progress" })
    s:execute({ action = "update", id = 4, status = "completed" })
    s:execute({ action = "delete", id = 6 })
    paint("turn 2 work")
    each(function(ov)
      ov:toggle_collapse()
    end)
    paint("collapsed")
    each(function(ov)
      ov:turn_started()
    end)
    paint("collapsed, turn 3")
    each(function(ov)
      ov:toggle_collapse()
      ov:set_expanded(true)
    end)
    lines = paint("expanded, turn 3")
    heading = type(lines[1]) == "table" and spans_text(lines[1]) or strip_sgr(lines[1])
    -- #4 completed in turn 2 and was seen there; it hides in turn 3.
    eq(heading, "● Todos (0/4)", theme .. " heading in turn 3")
    eq(ovs[1]:hidden_ids(), { 1, 2, 3, 4 }, theme .. " hidden ids")
    eq(ovs[2]:hidden_ids(), ovs[1]:hidden_ids(), theme .. " handle's hidden ids")
    eq(ovs[3]:hidden_ids(), ovs[1]:hidden_ids(), theme .. " snapshot's hidden ids")
    s:execute({ action = "clear" })
    s:execute({ action = "create", subject = "Fresh" })
    s:execute({ action = "update", id = 1, status = "completed" })
    lines = paint("clear")
    eq(#lines, 3, theme .. " a new #1 after clear is shown")
    ok(steps >= 19, "steps ran")
  end
end)

test("rows drop their #ids once the only waiting task hides, from a state as from a handle", function()
  local state = {
    tasks = { task(1, "pending", "a"), task(2, "completed", "b", { blockedBy = { 1 } }), task(3, "pending", "c") },
    nextId = 4,
  }
  for _, source in ipairs({ state, core.list(state) }) do
    local ov = overlay.new()
    eq(
      ov:render(source, 80),
      { "● Todos (1/3)", "├─ ○ #1 a", "├─ ✓ #2 b ⛓ #1", "└─ ○ #3 c", "" },
      type(source)
    )
    ov:turn_started()
    eq(
      ov:render(source, 80),
      { "● Todos (0/2)", "├─ ○ a", "└─ ○ c", "" },
      type(source) .. " after the turn"
    )
    -- The stateless render's fixed set of ids to leave out works the same way.
    eq(overlay.render(source, { hidden = { [2] = true } }), { "● Todos (0/2)", "├─ ○ a", "└─ ○ c", "" })
  end
end)

test("the render memos let a dropped 1 MiB subject be collected (issue 9)", function()
  local list = core.list()
  list:apply({ action = "create", subject = "small" })
  local ov = overlay.new({ theme = "ansi" })
  ov:render(list, 80)
  overlay.render(list:state(), { width = 80 })
  collectgarbage("collect")
  collectgarbage("collect")
  local base = collectgarbage("count")
  do -- the subjects go out of scope here: only the memos could keep them
    local big = string.rep("a", 1024 * 1024)
    for i = 1, BIG_SUBJECTS do
      local subject = big .. i .. "\27[31m"
      -- A host's snapshot: a tool call may not set a subject this long (src/limits.rs).
      list:replace({ tasks = { { id = 1, subject = subject, status = "pending" } }, nextId = 2 })
      ov:render(list, 80)
      overlay.render(list, { width = 80, theme = "segments" })
      overlay.render(list:state(), { width = 80 })
      overlay.render(list:state())
    end
  end
  list:apply({ action = "clear" })
  ov:render(list, 80)
  collectgarbage("collect")
  collectgarbage("collect")
  local grown = collectgarbage("count") - base
  ok(grown < 2048, string.format("the Lua heap grew by %.0f KiB after clear (memos kept dropped text)", grown))
end)

test("UI words follow a locale change at the next render", function()
  local i18n = require("rpiv_todo.i18n")
  local list = core.list({ tasks = { task(1, "pending", "a"), task(2, "pending", "b"), task(3, "pending", "c") } })
  local o = { max_widget_lines = 3 }
  i18n.set_locale("en")
  eq(overlay.render(list, o), { "● Todos (0/3)", "├─ ○ a", "└─ +2 more (2 pending)", "" }, "en")
  i18n.set_locale("de")
  local de = overlay.render(list, o)
  eq(de[1], "● Aufgaben (0/3)", "de heading")
  ok(de[3]:find("2 offen", 1, true), "de summary: " .. de[3])
  i18n.set_locale("en")
  eq(overlay.render(list, o)[1], "● Todos (0/3)", "back to en")
  i18n.reset()
end)

test("setup options reach renders; per-render options win", function()
  local todo = require("rpiv_todo")
  local state = pending_list(8)
  todo.setup({ locale = "en", max_widget_lines = 4, collapse_key = "Ctrl+Y" })
  eq(
    overlay.render(state),
    { "● Todos (0/8)", "├─ ○ task 1", "├─ ○ task 2", "└─ +6 more (6 pending)", "" }
  )
  eq(overlay.render(state, { collapsed = true }), { "● Todos (0/8)", "└─ ctrl+y to expand", "" })
  eq(
    overlay.render(state, { max_widget_lines = 3, collapsed = false }),
    { "● Todos (0/8)", "├─ ○ task 1", "└─ +7 more (7 pending)", "" }
  )
  local ov = overlay.new()
  ov:toggle_collapse()
  eq(ov:render(state, 80), { "● Todos (0/8)", "└─ ctrl+y to expand", "" }, "a live overlay")
  todo.setup({ locale = "en" })
  eq(#overlay.render(state), 10, "back to the default 12: heading, 8 rows, spacer")
  todo.setup({ locale = "en", overlay = { theme = "ansi" } })
  eq(overlay.render(state)[1], "\27[36m●\27[39m \27[1m\27[36mTodos (0/8)\27[39m\27[22m", "setup's theme")
  todo.setup({ locale = "en" })
  eq(overlay.render(state)[1], "● Todos (0/8)", "the plain theme again")
end)

-- ---------------------------------------------------------------------------
-- Display width
-- ---------------------------------------------------------------------------

local wide_state = {
  tasks = {
    task(1, "in_progress", "汉字の表示テスト 한국어 完成", { activeForm = "写作中 ✍️" }),
    task(2, "pending", "emoji 👨‍👩‍👧 family 🚀🚀 rocket", { blockedBy = { 1 } }),
    task(3, "completed", "combining e\204\129e\204\129e\204\129 marks a\204\136o\204\136"),
    task(4, "pending", "ansi \27[31mred\27[0m and \27]8;;http://x\27\\link\27]8;;\27\\ text"),
    task(5, "pending", "flags 🇺🇸🇯🇵 and zwj 🏳️‍🌈 done"),
    task(6, "pending", string.rep("long ", 40)),
  },
  nextId = 7,
}

test("no line is wider than the width, cut lines end with the ellipsis", function()
  local full = overlay.render(wide_state, { max_widget_lines = 20 })
  for w = 1, 120 do
    local plain = overlay.render(wide_state, { width = w, max_widget_lines = 20 })
    local ansi = overlay.render(wide_state, { width = w, max_widget_lines = 20, theme = "ansi" })
    local segs = overlay.render(wide_state, { width = w, max_widget_lines = 20, theme = "segments" })
    eq(#plain, #full, "line count at width " .. w)
    for i, line in ipairs(plain) do
      local where = " (width " .. w .. ", line " .. i .. ")"
      ok(core.width(line) <= w, "plain line too wide" .. where .. ": " .. show(line))
      if core.width(full[i]) > w then
        ok(line:sub(-#"…") == "…", "cut line ends with the ellipsis" .. where)
        local kept = line:sub(1, #line - #"…")
        eq(full[i]:sub(1, #kept), kept, "cut line is a prefix of the full line" .. where)
      else
        eq(line, full[i], "line that fits is untouched" .. where)
      end
      ok(core.width(ansi[i]) <= w, "ansi line too wide" .. where)
      eq(strip_sgr(ansi[i]), line, "ansi strips to plain" .. where)
      eq(spans_text(segs[i]), line, "segments join to plain" .. where)
    end
  end
end)

test("model text cannot inject escapes into any theme", function()
  for _, theme in ipairs({ "plain", "segments" }) do
    local lines = overlay.render(wide_state, { theme = theme, max_widget_lines = 20 })
    for _, line in ipairs(lines) do
      local s = type(line) == "table" and spans_text(line) or line
      ok(not s:find("\27", 1, true), "no ESC in " .. theme .. " line " .. show(s))
    end
  end
  eq(overlay.render(wide_state, { max_widget_lines = 20 })[5], "├─ ○ #4 ansi red and link text")
end)

test("the text memos are bounded: a full memo starts over and keeps the entry that filled it", function()
  local text = require("rpiv_todo.overlay.text")
  local native = require("rpiv_todo.native")
  local real_truncate, real_sanitize = native.truncate, native.sanitize_display
  local cuts, cleans = 0, 0
  native.truncate = function(...)
    cuts = cuts + 1
    return real_truncate(...)
  end
  native.sanitize_display = function(...)
    cleans = cleans + 1
    return real_sanitize(...)
  end
  local saved_bytes = text.MEMO_BYTES
  local passed, err = pcall(function()
    text.clear()
    text.MEMO_BYTES = 100 -- each line and its cut below cost 30 + 10 bytes
    local function line(i)
      return string.format("line %02d abcdefghijklmnopqrstu", i)
    end
    eq(text.truncate(line(1), 8), "line 01…", "cut")
    eq(text.truncate(line(1), 8), "line 01…", "cut again")
    eq(cuts, 1, "the second cut came from the memo")
    eq(text.truncate(line(2), 8), "line 02…", "second line")
    eq(cuts, 2, "second line cut natively")
    -- 40 + 40 + 40 > 100: the third line empties the memo and is remembered afresh.
    eq(text.truncate(line(3), 8), "line 03…", "third line")
    eq(text.truncate(line(3), 8), "line 03…", "third line again")
    eq(cuts, 3, "the line that filled the memo is remembered")
    eq(text.truncate(line(1), 8), "line 01…", "first line after the reset")
    eq(cuts, 4, "the first line was forgotten")
    -- The same for sanitize: a bidi mark (U+202E) takes the native path.
    local function dirty(i)
      return string.format("task %02d \226\128\174mark abcdefghij", i)
    end
    eq(text.sanitize(dirty(1)), "task 01 mark abcdefghij", "bidi mark dropped")
    eq(text.sanitize(dirty(1)), "task 01 mark abcdefghij", "sanitize again")
    eq(cleans, 1, "the second sanitize came from the memo")
    eq(text.sanitize(dirty(2)), "task 02 mark abcdefghij", "second text")
    eq(text.sanitize(dirty(3)), "task 03 mark abcdefghij", "third text")
    eq(text.sanitize(dirty(3)), "task 03 mark abcdefghij", "third text again")
    eq(cleans, 3, "the text that filled the memo is remembered")
    eq(text.sanitize(dirty(1)), "task 01 mark abcdefghij", "first text after the reset")
    eq(cleans, 4, "the first text was forgotten")
  end)
  native.truncate, native.sanitize_display = real_truncate, real_sanitize
  text.MEMO_BYTES = saved_bytes
  text.clear()
  assert(passed, err)
end)

test("a list handle's rows are reused while its tasks show the same, and redrawn after any change", function()
  local list = core.list({
    tasks = { task(1, "pending", "one"), task(2, "in_progress", "two", { activeForm = "doing two" }) },
    nextId = 3,
  })
  local rows = core.overlay_view(list, 11)
  eq(#rows, 2, "two rows")
  ok(rawequal(core.overlay_view(list, 11), rows), "the same rows for the same list and budget")
  local _, counts_a = core.overlay_view(list, 11)
  local _, counts_b = core.overlay_view(list, 11)
  ok(not rawequal(counts_a, counts_b), "counts are a new table every time")
  eq(counts_b, { total = 2, pending = 1, in_progress = 1, completed = 0 })
  ok(not rawequal(core.overlay_view(list, 10), rows), "another budget draws again")
  ok(not rawequal(core.overlay_view(list, 11, nil, false, true), rows), "rows with tasks are new")
  local with_task = core.overlay_view(list, 11, nil, false, true)
  ok(not rawequal(core.overlay_view(list, 11, nil, false, true), with_task), "every time")
  ok(not rawequal(core.overlay_view(list, 11, {}), core.overlay_view(list, 11, {})), "a table of ids: new rows")
  local live = core.overlay_live()
  ok(not rawequal(core.overlay_view(list, 11, live), core.overlay_view(list, 11, live)), "a live memory: new rows")

  local function subjects()
    local out = {}
    for i, row in ipairs((core.overlay_view(list, 11))) do
      out[i] = row.subject .. ":" .. row.status
    end
    return out
  end
  eq(subjects(), { "one:pending", "two:in_progress" })
  list:apply({ action = "update", id = 1, status = "completed" })
  eq(subjects(), { "one:completed", "two:in_progress" }, "after apply")
  list:apply_json('{"action":"create","subject":"three"}')
  eq(subjects(), { "one:completed", "two:in_progress", "three:pending" }, "after apply_json")
  list:apply({ action = "get", id = 3 })
  eq(subjects(), { "one:completed", "two:in_progress", "three:pending" }, "after a call that changes nothing")
  list:replace({ tasks = { task(7, "pending", "seven") }, nextId = 8 })
  eq(subjects(), { "seven:pending" }, "after replace")
  eq(overlay.render(list, { width = 80 }), { "● Todos (0/1)", "└─ ○ seven", "" })
  -- After a change, each row whose task shows the same is the same table; the rest are new.
  list:replace({
    tasks = { task(1, "pending", "one"), task(2, "pending", "two"), task(3, "pending", "three") },
    nextId = 4,
  })
  local before = core.overlay_view(list, 11)
  list:apply({ action = "update", id = 2, status = "in_progress", activeForm = "doing two" })
  local after = core.overlay_view(list, 11)
  ok(not rawequal(after, before), "a new rows table")
  ok(rawequal(after[1], before[1]) and rawequal(after[3], before[3]), "unchanged tasks keep their rows")
  ok(not rawequal(after[2], before[2]), "the changed task gets a new row")
  eq(after[2], { id = 2, status = "in_progress", subject = "two", activeForm = "doing two" })
  eq(before[2], { id = 2, status = "pending", subject = "two" }, "the earlier row is left as it was")
  list:apply({ action = "update", id = 3, subject = "three\27[31m!" })
  local third = core.overlay_view(list, 10)
  eq(third[3].subject, "three!", "a new subject, sanitized")
  ok(rawequal(third[1], after[1]), "and the first row still reused under another budget")
  -- A live memory hides what was seen: rows are still reused for the tasks still shown.
  local mem = core.overlay_live()
  local seen = core.overlay_view(list, 11, mem)
  ok(rawequal(seen[1], third[1]), "reused with a live memory too")
  list:replace(nil)
  eq(#core.overlay_view(list, 11), 0, "after replace with nothing")
  eq(overlay.render(list, { width = 80 }), {}, "nothing to draw")
end)

-- ---------------------------------------------------------------------------
-- Empty and stateless
-- ---------------------------------------------------------------------------

test("nothing to show renders no lines, so the host hides the panel", function()
  local only_deleted = { tasks = { task(1, "deleted"), task(2, "deleted") }, nextId = 3 }
  local done = { tasks = { task(1, "completed", "Done") }, nextId = 2 }
  local ov = overlay.new()
  local shown = #ov:render(done, 80)
  ov:turn_started()
  local collapsed = overlay.new()
  collapsed:toggle_collapse()
  eq({
    #overlay.render(nil),
    #overlay.render({ tasks = {}, nextId = 1 }),
    #overlay.render(only_deleted, { expanded = true }),
    #overlay.render(only_deleted, { collapsed = true }),
    #overlay.render(core.list(nil)),
    shown,
    #ov:render(done, 80),
    #collapsed:render(only_deleted, 80),
  }, { 0, 0, 0, 0, 0, 3, 0, 0 })
end)

test("render is stateless: the same state gives the same lines", function()
  local state = { tasks = { task(1, "completed", "Plan"), task(2, "pending", "Code") }, nextId = 3 }
  local want = { "● Todos (1/2)", "├─ ✓ Plan", "└─ ○ Code", "" }
  eq(overlay.render(state, { width = 80 }), want, "first")
  eq(overlay.render(state, { width = 80 }), want, "second")
end)

-- ---------------------------------------------------------------------------
-- The live overlay in the session layer
-- ---------------------------------------------------------------------------

test("the heading's total is always the rows plus the summary", function()
  local todo = require("rpiv_todo")
  todo.sessions.reset()
  todo.setup({ locale = "en" })
  local s, ov, frames = todo.session("long"), overlay.new({ max_widget_lines = 5 }), {}
  -- (heading total, rows, "+N more") of each frame.
  local function frame()
    local lines = ov:render(s, 200)
    if #lines == 0 then
      frames[#frames + 1] = { 0, 0, 0 }
      return
    end
    local total = tonumber(lines[1]:match("/(%d+)%)"))
    local rows, more = 0, 0
    for i = 2, #lines - 1 do
      local n = lines[i]:match("^└─ %+(%d+) more")
      if n then
        more = tonumber(n)
      else
        rows = rows + 1
      end
    end
    frames[#frames + 1] = { total, rows, more }
  end
  for i = 1, 9 do
    s:execute({ action = "create", subject = "T" .. i })
  end
  frame()
  for i = 1, 9 do
    s:execute({ action = "update", id = i, status = "completed" })
    frame()
    if i % 3 == 0 then
      ov:turn_started()
      frame()
    end
  end
  ok(#frames > 10, "frames: " .. #frames)
  for n, f in ipairs(frames) do
    eq(f[1], f[2] + f[3], "frame " .. n .. ": " .. show(f))
  end
  eq(frames[1], { 9, 3, 6 }, "budget 4 rows: three rows and the summary")
  eq(frames[#frames], { 0, 0, 0 }, "all hidden: no panel")
end)

test("replay through the session layer resets what the attached overlay hid", function()
  local todo = require("rpiv_todo")
  todo.sessions.reset()
  todo.setup({ locale = "en" })
  local s, ov = todo.session("default"), overlay.new()
  local detach = todo.attach_overlay(ov)
  local branch = {}
  for _, p in ipairs({
    { action = "create", subject = "Plan" },
    { action = "create", subject = "Code" },
    { action = "update", id = 1, status = "completed" },
  }) do
    local r = s:execute(p)
    branch[#branch + 1] =
      { type = "message", message = { role = "toolResult", toolName = "todo", details = r.details } }
  end
  local full = { "● Todos (1/2)", "├─ ✓ Plan", "└─ ○ Code", "" }
  local hidden = { "● Todos (0/1)", "└─ ○ Code", "" }
  eq(ov:render(s, 80), full, "first seen")
  ov:turn_started()
  eq(ov:render(s, 80), hidden, "the next turn")
  todo.on_compaction("default", branch) -- replay: Plan shows again
  eq(ov:render(s, 80), full, "after compaction")
  ov:turn_started()
  eq(ov:render(s, 80), hidden, "the turn after")
  todo.on_session_start("other", branch) -- not the foreground: no reset
  eq(ov:render(s, 80), hidden, "another session started")
  todo.on_branch_change("default", branch) -- the foreground again: reset
  eq(ov:render(s, 80), full, "after a branch change")
  ov:turn_started()
  detach()
  todo.on_compaction("default", branch) -- detached: nothing happens
  eq(ov:render(s, 80), hidden, "detached")
end)

test("a foreground change and a shutdown reset the attached overlay", function()
  local todo = require("rpiv_todo")
  todo.sessions.reset()
  todo.setup({ locale = "en" })
  local ov = overlay.new()
  local detach = todo.attach_overlay(ov)
  local a = todo.session("a")
  a:execute({ action = "create", subject = "A1" })
  a:execute({ action = "create", subject = "A2" })
  a:execute({ action = "update", id = 1, status = "completed" })
  todo.foreground("a")
  ov:render(todo.foreground(), 80)
  ov:turn_started()
  eq(ov:render(todo.foreground(), 80)[1], "● Todos (0/1)", "A1 hidden after its turn")
  todo.foreground("b")
  todo.foreground("a")
  eq(ov:render(todo.foreground(), 80)[1], "● Todos (1/2)", "back in the foreground: reset")
  ov:turn_started()
  eq(ov:render(todo.foreground(), 80)[1], "● Todos (0/1)", "hidden again")
  todo.shutdown("a")
  eq(#ov:render(todo.foreground(), 80), 0, "after shutdown")
  detach()
  todo.foreground("default")
end)

test("a clear that shrinks nextId in a session resets what was hidden", function()
  local todo = require("rpiv_todo")
  todo.sessions.reset()
  todo.setup({ locale = "en" })
  local s, ov = todo.session("c"), overlay.new()
  s:execute({ action = "create", subject = "Old" })
  s:execute({ action = "create", subject = "Old 2" })
  s:execute({ action = "update", id = 1, status = "completed" })
  ov:render(s, 80)
  ov:turn_started()
  eq(ov:render(s, 80), { "● Todos (0/1)", "└─ ○ Old 2", "" })
  s:execute({ action = "clear" })
  eq(ov:render(s, 80), {}, "cleared: no panel")
  s:execute({ action = "create", subject = "New" })
  s:execute({ action = "update", id = 1, status = "completed" })
  -- The new #1 is a different task: it is shown, not hidden as the old #1 was.
  eq(ov:render(s, 80), { "○ Todos (1/1)", "└─ ✓ New", "" })
end)

test("a live paint of a session, its list handle and its snapshot reads frame by frame", function()
  local todo = require("rpiv_todo")
  todo.sessions.reset()
  todo.setup({ locale = "en" })
  local s = todo.session("frames")
  local ovs, each = three_overlays({ max_widget_lines = 5 })
  local frames = {}
  local function paint()
    local a = table.concat(ovs[1]:render(s, 50), "\n")
    eq(table.concat(ovs[2]:render(s.list, 50), "\n"), a, "the list handle, frame " .. #frames + 1)
    eq(table.concat(ovs[3]:render(s:state(), 50), "\n"), a, "the snapshot, frame " .. #frames + 1)
    frames[#frames + 1] = a
  end
  for i = 1, 6 do
    s:execute({ action = "create", subject = "T" .. i })
  end
  s:execute({ action = "update", id = 3, addBlockedBy = { 2 } })
  paint()
  s:execute({ action = "update", id = 1, status = "completed" })
  s:execute({ action = "update", id = 2, status = "completed" })
  paint()
  each(function(ov)
    ov:turn_started()
  end)
  paint()
  each(function(ov)
    ov:toggle_collapse()
  end)
  s:execute({ action = "update", id = 4, status = "completed" })
  paint()
  each(function(ov)
    ov:turn_started()
    ov:toggle_collapse()
    ov:set_expanded(true)
  end)
  paint()
  eq(frames, {
    "● Todos (0/6)\n├─ ○ #1 T1\n├─ ○ #2 T2\n├─ ○ #3 T3 ⛓ #2\n└─ +3 more (3 pending)\n",
    -- Four rows: three and the summary; both completed tasks make room first.
    "● Todos (2/6)\n├─ ○ #3 T3 ⛓ #2\n├─ ○ #4 T4\n├─ ○ #5 T5\n└─ +3 more (2 completed, 1 pending)\n",
    -- #1 and #2 were counted in the first turn: they leave rows and counts, and the four
    -- left fit.
    "● Todos (0/4)\n├─ ○ #3 T3 ⛓ #2\n├─ ○ #4 T4\n├─ ○ #5 T5\n└─ ○ #6 T6\n",
    -- Collapsed: #4 completes but is not seen, so it stays after the next turn.
    "● Todos (1/4)\n└─ ctrl+shift+t to expand\n",
    "● Todos (1/4)\n├─ ○ #3 T3 ⛓ #2\n├─ ✓ #4 T4\n├─ ○ #5 T5\n└─ ○ #6 T6\n",
  })
end)

-- ---------------------------------------------------------------------------
-- Layout overrides through setup and themes
-- ---------------------------------------------------------------------------

test("setup's overlay as a function receives the defaults and can call them", function()
  local todo = require("rpiv_todo")
  local state = {
    tasks = { task(1, "in_progress", "Build", { activeForm = "Building" }), task(2, "pending", "Ship") },
    nextId = 3,
  }
  todo.setup({
    locale = "en",
    overlay = function(default)
      return {
        heading = function(ctx)
          return "[" .. default.heading(ctx) .. "]"
        end,
        row = function(ctx, row)
          return default.row(ctx, row) .. (row.status == "pending" and " (next)" or "")
        end,
        glyphs = { pending = "·" },
      }
    end,
  })
  eq(
    overlay.render(state, { width = 80 }),
    { "[● Todos (0/2)]", "├─ ◐ Build (Building)", "└─ · Ship (next)", "" },
    "custom"
  )
  todo.setup({ locale = "en" })
  eq(
    overlay.render(state, { width = 80 }),
    { "● Todos (0/2)", "├─ ◐ Build (Building)", "└─ ○ Ship", "" },
    "restored"
  )
end)

test("a table override merges over the defaults with any theme", function()
  local state = {
    tasks = { task(1, "completed", "Spec"), task(2, "pending", "Ship", { blockedBy = { 1 } }) },
    nextId = 3,
  }
  local layout = {
    summary = function()
      return "unused"
    end,
    row = function(ctx, row)
      return ctx.theme.fg("accent", "#" .. row.id) .. " " .. overlay.default_layout.row(ctx, row)
    end,
  }
  local function render(theme)
    return overlay.render(state, { theme = theme, layout = layout })
  end
  local want = { "● Todos (1/2)", "├─ #1 ✓ #1 Spec", "└─ #2 ○ #2 Ship ⛓ #1", "" }
  eq(render(nil), want, "plain")
  local ansi = render("ansi")
  local stripped, joined = {}, {}
  for i, line in ipairs(ansi) do
    stripped[i] = strip_sgr(line)
  end
  eq(stripped, want, "ansi without its SGR")
  eq(ansi[2]:sub(1, #"\27[2m├─\27[22m \27[36m#1\27[39m"), "\27[2m├─\27[22m \27[36m#1\27[39m", "ansi row")
  for i, line in ipairs(render("segments")) do
    joined[i] = spans_text(line)
  end
  eq(joined, want, "segments joined")
end)

test("a cut ANSI line never splits an escape and closes its style", function()
  local state = {
    tasks = { task(1, "in_progress", "Write the token-bucket limiter module", { activeForm = "Writing it" }) },
    nextId = 2,
  }
  local row = overlay.render(state, { width = 20, theme = "ansi" })[2]
  eq(strip_sgr(row), "└─ ◐ Write the toke…")
  eq(row:sub(-#"…\27[0m"), "…\27[0m", "ends with the ellipsis and a reset")
  -- Every ESC starts a whole SGR sequence.
  local escapes, whole = select(2, row:gsub("\27", "")), select(2, row:gsub("\27%[[%d;]*m", ""))
  eq(whole, escapes, "whole sequences in " .. show(row))
end)

T.finish("overlay_spec")
