-- tests/lua/escapes_spec.lua: what a person reads never carries terminal escapes, controls
-- or bidi controls, whatever the model or a host wrote (issue 9, reliability); and a host's
-- snapshot is repaired or refused, never taken half-broken. From a real interpreter against
-- the built module; by hand, from the crate root:
--   lua5.4 tests/lua/escapes_spec.lua      (also luajit, lua5.1)

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local core = require("rpiv_todo.core")
local H = {}

-- An OSC title, a clear-screen CSI, RIGHT-TO-LEFT OVERRIDE (U+202E), ARABIC LETTER MARK
-- (U+061C), LEFT-TO-RIGHT ISOLATE (U+2066) and the C1 CSI (U+009B) with its parameters.
H.HOSTILE = "\27]0;pwned\7\27[2J\226\128\174\216\156\226\129\166\194\15531m"

-- The UTF-8 of what a terminal or a chat could act on: C0 and C1 controls, DEL, and every
-- Bidi_Control character (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069).
H.UNSAFE = {
  "[\1-\31\127]",
  "\194[\128-\159]",
  "\216\156",
  "\226\128[\142\143]",
  "\226\128[\170-\174]",
  "\226\129[\166-\169]",
}

-- Fail when `s` holds NUL or anything H.UNSAFE names.
function H.harmless(s, what)
  T.eq(type(s), "string", what)
  T.ok(not s:find("\0", 1, true), what .. ": a NUL in " .. T.show(s))
  for _, pattern in ipairs(H.UNSAFE) do
    local at = s:find(pattern)
    T.ok(not at, what .. ": an unsafe character at byte " .. tostring(at) .. " of " .. T.show(s))
  end
end

function H.text(result)
  return result.content[1].text
end

T.test("the check itself finds each character of the hostile text", function()
  for _, bad in ipairs({
    "\27",
    "\7",
    "\0",
    "\127",
    "\226\128\174",
    "\216\156",
    "\226\129\166",
    "\194\155",
    "\226\128\142",
  }) do
    T.ok(not pcall(H.harmless, "a" .. bad .. "b", "probe"), T.show(bad) .. " passed the check")
  end
  H.harmless("plain text · ✓ ◐ 汉字", "safe text")
end)

T.test("a rejected call never echoes the model's keys raw", function()
  local list = core.list()
  list:apply({ action = "create", subject = "a" })
  -- The table path names the field with the model's metadata key (a function value is
  -- what it refuses); nested, at the top level and as an unknown action.
  local results = {
    list:apply({ action = "create", subject = "s", metadata = { [H.HOSTILE] = print } }),
    list:apply({ action = "update", id = 1, metadata = { k = { [H.HOSTILE] = { print } } } }),
    list:apply({ action = H.HOSTILE }),
    list:apply({ action = "get", id = H.HOSTILE }),
    list:apply({ [H.HOSTILE] = 1 }),
    (core.apply(nil, { action = "create", subject = "s", metadata = { [H.HOSTILE] = print } })),
  }
  for i, r in ipairs(results) do
    T.eq(H.text(r):sub(1, 7), "Error: ", "call " .. i)
    H.harmless(H.text(r), "call " .. i)
    if r.details.error ~= nil then
      H.harmless(r.details.error, "call " .. i .. " details.error")
    end
  end
  -- The key is still named, with the OSC, the CSIs and the bidi controls gone.
  T.eq(H.text(results[1]), "Error: metadata.: expected a JSON value, got a function")
end)

T.test("success replies and the display sanitizer drop every bidi control", function()
  local list = core.list()
  local created = list:apply({ action = "create", subject = "x" .. H.HOSTILE .. "y", activeForm = H.HOSTILE })
  list:apply({ action = "update", id = 1, status = "in_progress", owner = H.HOSTILE, description = H.HOSTILE })
  for name, r in pairs({
    created = created,
    get = list:apply({ action = "get", id = 1 }),
    list = list:apply({ action = "list" }),
  }) do
    -- Line breaks between the reply's own lines are the reply's; model text has none.
    for line in (H.text(r) .. "\n"):gmatch("([^\n]*)\n") do
      H.harmless(line, name)
    end
  end
  T.eq(H.text(created), "Created #1: xy (pending)")
  T.eq(core.sanitize_display("a\216\156b"), "ab")
  -- core.sanitize keeps the original's behaviour (a recorded case keeps U+061C).
  T.eq(core.sanitize("a\216\156b"), "a\216\156b")
end)

T.test("a host's error message is made harmless too", function()
  local ok, err = pcall(core.list, {
    tasks = { { id = 1, subject = "a", status = "pending", metadata = { [H.HOSTILE] = print } } },
    nextId = 2,
  })
  T.ok(not ok, "core.list accepted a function in metadata")
  err = tostring(err)
  T.contains(err, "rpiv_todo.core.list: ")
  H.harmless(err:match("^[^\n]*"), "the first line")
end)

T.test("a host's snapshot is repaired or refused; replay returns only what core.list accepts", function()
  -- nextId not past the largest id: raised past it, no second #5.
  local list = core.list('{"tasks":[{"id":5,"subject":"a","status":"pending"}],"nextId":5}')
  T.eq(H.text(list:apply({ action = "create", subject = "b" })), "Created #6: b (pending)")
  T.eq(list:next_id(), 7)
  T.raises(function()
    core.list(
      '{"tasks":[{"id":1,"subject":"a","status":"pending"},{"id":1,"subject":"b","status":"pending"}],"nextId":2}'
    )
  end, "rpiv_todo.core.list: state: tasks[2].id: #1 is already the id of tasks[1]")
  T.raises(function()
    core.apply({
      tasks = {
        { id = 1, subject = "a", status = "pending", blockedBy = { 2 } },
        { id = 2, subject = "b", status = "pending", blockedBy = { 1 } },
      },
      nextId = 3,
    }, { action = "list" })
  end, "rpiv_todo.core.apply: state: tasks: the blockedBy edges form a cycle")
  -- The newest todo result carries a dangling blockedBy: replay skips it.
  local function entry(details)
    return { type = "message", message = { role = "toolResult", toolName = "todo", details = details } }
  end
  local state = core.replay({
    entry({ tasks = { { id = 1, subject = "ok", status = "pending" } }, nextId = 2 }),
    entry({ tasks = { { id = 1, subject = "bad", status = "pending", blockedBy = { 9 } } }, nextId = 2 }),
  })
  T.eq(#state.tasks, 1)
  T.eq(state.tasks[1].subject, "ok")
  T.eq(state.nextId, 2)
end)

T.finish("escapes_spec")
