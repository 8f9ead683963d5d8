-- tests/lua/changes_spec.lua: one list, several writers, each told once what the others
-- changed since its last call (list:apply(params, by), list:changes, the list file's log).
-- scripts/test.sh runs it per flavour; by hand from the crate root:
--   lua5.4 tests/lua/changes_spec.lua      (also luajit, lua5.1)

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local core = require("rpiv_todo.core")
local H = {}

function H.text(result)
  return result.content[1].text
end

function H.read(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("*a")
  f:close()
  return text
end

T.test("the agent hears once of the user's changes; the user never of its own", function()
  local list = core.list()
  for _, s in ipairs({ "Parse", "Check", "Emit", "Ship" }) do
    list:apply({ action = "create", subject = s })
  end
  T.eq(
    H.text(list:apply({ action = "update", id = 2, status = "completed" }, "user")),
    "Updated #2 (pending → completed)",
    "the user's reply is the tool's"
  )
  T.eq(
    H.text(list:apply({ action = "create", subject = "Write the changelog" }, "user")),
    "Created #5: Write the changelog (pending)",
    "nothing about its own change"
  )
  local r = list:apply({ action = "update", id = 1, status = "in_progress" })
  T.eq(
    H.text(r),
    'Updated #1 (pending → in_progress)\n(Changed by others since your last call: #2 completed by the user; #5 "Write the changelog" added by the user.)',
    "the agent's next reply names both, after its own text"
  )
  T.eq(r.details.error, nil, "still a success")
  T.eq(H.text(list:apply({ action = "get", id = 1 })):find("Changed by others", 1, true), nil, "told once")
  T.eq(
    H.text(list:apply({ action = "list" }, "user")),
    "[in_progress] #1 Parse\n[completed] #2 Check\n[pending] #3 Emit\n[pending] #4 Ship\n[pending] #5 Write the changelog\n(Changed by others since your last call: #1 started by another program.)",
    "the user hears of the agent"
  )
end)

T.test("a rejected call still gets the note, and the JSON path the same text", function()
  local list = core.list()
  list:apply_json('{"action":"create","subject":"a"}')
  list:apply({ action = "delete", id = 1 }, "codex")
  local out = list:apply_json('{"action":"update","id":1,"status":"completed"}')
  T.contains(out, [[Error: ]], "rejected")
  T.contains(out, [[\n(Changed by others since your last call: #1 deleted by codex.)"]], "with the note")
end)

T.test("list:changes tells a writer before its next call, once", function()
  local list = core.list()
  list:set_writer("codecompanion")
  list:apply({ action = "create", subject = "a" })
  T.eq(list:changes(), nil, "nothing new")
  list:apply({ action = "update", id = 1, status = "in_progress" }, "user")
  T.eq(list:changes(), "(Changed by others since your last call: #1 started by the user.)", "the user's change")
  T.eq(list:changes(), nil, "once")
  list:apply({ action = "create", subject = "b" })
  T.eq(
    list:changes("user"),
    '(Changed by others since your last call: #2 "b" added by codecompanion.)',
    "the user hears of the agent's create"
  )
  T.eq(list:changes("codex"), nil, "a writer's first look: nothing to compare with")
end)

T.test("writers in two handles on one file hear each other through the file's log", function()
  local dir = T.tempdir()
  local path = dir .. "/l.json"
  local a, b = core.list(), core.list()
  a:bind(path)
  b:bind(path)
  b:set_writer("codex")
  T.eq(H.text(a:apply({ action = "create", subject = "one" })), "Created #1: one (pending)", "a")
  T.eq(H.text(b:apply({ action = "create", subject = "two" })), "Created #2: two (pending)", "b's first call: no note")
  T.eq(H.text(b:apply({ action = "delete", id = 1 })), "Deleted #1: one", "b: a changed nothing since")
  T.eq(
    H.text(a:apply({ action = "update", id = 2, status = "in_progress" })),
    'Updated #2 (pending → in_progress)\n(Changed by others since your last call: #2 "two" added by codex; #1 deleted by codex.)',
    "a hears of both"
  )
  local file = H.read(path)
  T.contains(file, '"log":{"epoch":"', "the log is in the file")
  T.contains(file, '"by":"codex","action":"delete","id":1', "with its writer and action")
  -- A program that keeps no log writes the file: a's next reply says only that it changed.
  local state = assert(core.load(path))
  assert(core.save(path, state))
  T.eq(
    H.text(a:apply({ action = "get", id = 2 })):match("\n(.*)$"),
    "(The list was changed by another program since your last call; call list to see it.)",
    "a log that began again"
  )
end)

T.test("a writer's name is checked", function()
  local list = core.list()
  T.raises(function()
    list:apply({ action = "list" }, {})
  end, "by: expected a writer's name (a string) or nil, got table", "a table")
  T.raises(function()
    list:apply_json('{"action":"list"}', "")
  end, "by: expected a writer's name of 1 to 64 bytes", "empty")
  T.raises(function()
    list:set_writer(string.rep("x", 65))
  end, "by: expected a writer's name of 1 to 64 bytes", "too long")
  T.eq(#list, 0, "nothing changed")
end)

T.finish()
