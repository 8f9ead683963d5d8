-- tests/lua/long_text_spec.lua: a view of the list looks at what fits its width, not at
-- whole texts (issue 19, item 8). 200 tasks with 100 KB subjects made :Todos take
-- 560 ms: every subject was sanitized and measured whole, to show 80 columns of it.
-- Checked without timing: the native calls that sanitize, measure and cut text are
-- wrapped, and the longest text any of them was handed is recorded. By hand:
--   luajit tests/lua/long_text_spec.lua      (also lua5.1, lua5.4)

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local H = {}

local todo = require("rpiv_todo")
local core = require("rpiv_todo.core")
local native = require("rpiv_todo.native")
todo.setup({ locale = "en" })

-- The longest string handed to the wrapped native functions since the last reset.
H.longest = 0
for _, name in ipairs({ "sanitize_display", "truncate", "width" }) do
  local f = native[name]
  native[name] = function(text, ...)
    if type(text) == "string" and #text > H.longest then
      H.longest = #text
    end
    return f(text, ...)
  end
end

-- 200 tasks, each subject and activeForm 100 KB (a host's snapshot: a tool call may not
-- add texts this long), with a character sanitize drops so the fast path cannot skip it.
function H.state()
  local tasks = {}
  for i = 1, 200 do
    tasks[i] = {
      id = i,
      subject = i .. " \1" .. string.rep("long subject ", 8000),
      status = i % 2 == 0 and "in_progress" or "pending",
      activeForm = string.rep("working ", 12800),
    }
  end
  return { tasks = tasks, nextId = 201 }
end

-- What a 80-column line may look at: its subject and its activeForm, each 80 columns of
-- 4 bytes and 64 for dropped escapes, and the row's own prefix (glyphs, the id, the tree
-- lines), well under 200 bytes.
H.BOUND = 2 * (80 * 4 + 64) + 200

T.test("/todos with a width cuts each row and looks at no more than the row shows", function()
  H.longest = 0
  local text = todo.command.todos(H.state(), { width = 80 })
  local rows = 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    T.eq(core.width(line) <= 80, true, "a line of " .. core.width(line) .. " columns")
    rows = rows + 1
  end
  T.eq(rows, 203, "header, two sections, 200 rows")
  T.eq(H.longest <= H.BOUND, true, "longest text handed to the core: " .. H.longest .. " bytes")
  -- The start of a row is what it always was.
  local first = text:match("\n(  ○ #1 [^\n]*)")
  T.eq(first:sub(1, #"  ○ #1 1 long subject"), "  ○ #1 1 long subject", "row #1")
  T.eq(first:sub(-3), "…", "cut with an ellipsis")
end)

T.test("without a width /todos is the whole text, as before", function()
  local text = todo.command.todos({
    tasks = { { id = 1, subject = string.rep("x", 300), status = "pending" } },
    nextId = 2,
  })
  T.eq(text, "1 pending\n── Pending ──\n  ○ #1 " .. string.rep("x", 300), "whole")
  T.raises(function()
    todo.command.todos(H.state(), { width = 0 })
  end, "(rpiv_todo) todos: opts.width must be a positive integer or nil", "a bad width")
end)

T.test("the overlay of a state or a list handle looks at what its width shows", function()
  local state = H.state()
  local list = core.list(state)
  for _, source in ipairs({ state, list }) do
    H.longest = 0
    local lines = todo.overlay.render(source, { width = 80 })
    T.eq(#lines, 13, type(source) .. ": twelve lines and the spacer")
    for _, line in ipairs(lines) do
      T.eq(core.width(line) <= 80, true, type(source) .. ": " .. core.width(line) .. " columns")
    end
    T.eq(H.longest <= H.BOUND, true, type(source) .. ": longest text handed to the core: " .. H.longest)
    T.eq(lines[2]:sub(1, #"├─ ○ 1 long subject"), "├─ ○ 1 long subject", type(source) .. ": first row")
    T.eq(lines[2]:sub(-3), "…", type(source) .. ": cut with an ellipsis")
  end
end)

-- The layer clips a list handle's rows only when the native view says some text may be
-- too long: one long activeForm among short subjects is enough, in a stateless render and
-- in a live overlay (whose rows go through its memo).
T.test("one long activeForm among short texts is clipped too, stateless and live", function()
  local tasks = {}
  for i = 1, 20 do
    tasks[i] = { id = i, subject = "short " .. i, status = "pending" }
  end
  tasks[3].status = "in_progress"
  tasks[3].activeForm = "\1" .. string.rep("working ", 12800)
  local state = { tasks = tasks, nextId = 21 }
  local session = todo.session("long-text-live")
  session.list:replace(state)
  local ov = todo.overlay.new({ max_widget_lines = 12, theme = "plain" })
  local renders = {
    stateless = function()
      return todo.overlay.render(core.list(state), { width = 80 })
    end,
    live = function()
      return ov:render(session, 80)
    end,
  }
  for _, name in ipairs({ "stateless", "live", "live" }) do
    H.longest = 0
    local lines = renders[name]()
    T.eq(H.longest <= H.BOUND, true, name .. ": longest text handed to the core: " .. H.longest)
    local row = lines[4]
    T.eq(core.width(row) <= 80, true, name .. ": " .. row)
    T.eq(row:find("working working", 1, true) ~= nil, true, name .. ": " .. row)
    T.eq(row:sub(-3), "…", name .. ": cut with an ellipsis")
  end
end)

T.finish()
