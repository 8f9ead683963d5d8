-- tests/lua/compaction_spec.lua: `todo.on_compaction(id, entries)` keeps the list a
-- session holds when the compacted branch has no newer todo result, and hands back the
-- list in compact form, shaped as replay reads a todo result. scripts/test.sh runs it per
-- flavour; by hand, from the crate root: luajit tests/lua/compaction_spec.lua (also
-- lua5.1, lua5.4) with lua/rpiv_todo/core.so built for that interpreter.
--
-- The scenario: turn 1 creates #1 Write the parser, #2 Test the parser (blocked by #1)
-- and #3 Document the parser, and completes #1; the conversation is compacted (the summary
-- names no task); turn 2 sets #2 in_progress and creates #4.

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local H = {}

local todo = require("rpiv_todo")

T.before_each(function()
  todo.sessions.reset()
  todo.setup({ locale = "en" })
end)

H.TURN1 = {
  { action = "create", subject = "Write the parser" },
  { action = "create", subject = "Test the parser", blockedBy = { 1 } },
  { action = "create", subject = "Document the parser" },
  { action = "update", id = 1, status = "completed" },
}

H.SUMMARY = { type = "message", message = { role = "user", content = "Summary: we planned the parser work." } }

---Run calls in session `id`, appending each result to `branch` as a host keeps it.
function H.run(id, calls, branch)
  local texts = {}
  for _, params in ipairs(calls) do
    local r = todo.session(id):execute(params)
    texts[#texts + 1] = r.content[1].text
    if branch ~= nil then
      branch[#branch + 1] = {
        type = "message",
        message = { role = "toolResult", toolName = "todo", content = r.content, details = r.details },
      }
    end
  end
  return texts
end

function H.text(r)
  return r.content[1].text
end

function H.count_replays(id)
  local count = { n = 0 }
  local stop = todo.listen(function(event, from)
    if event == "replayed" and from == id then
      count.n = count.n + 1
    end
  end)
  return count, stop
end

H.COMPACT = table.concat({
  "The todo list as it stands (the conversation before this point was summarized): 3 tasks"
    .. " (1 completed, 2 pending).",
  "Open tasks:",
  "[pending] #2 Test the parser ⛓ #1",
  "[pending] #3 Document the parser",
  "Keep using these ids with the todo tool; `list` shows every task.",
}, "\n")

H.LIST_AFTER = table.concat({
  "[completed] #1 Write the parser",
  "[in_progress] #2 Test the parser ⛓ #1",
  "[pending] #3 Document the parser",
  "[pending] #4 Benchmark the parser",
}, "\n")

T.test("a compacted branch without the todo results keeps the list, and the list comes back", function()
  H.run("s", H.TURN1)
  local replays, stop = H.count_replays("s")
  -- What the host keeps after compaction: the summary, no todo result.
  local message = todo.on_compaction("s", { H.SUMMARY })
  stop()
  T.eq(replays.n, 0, "nothing replayed over the held list")
  T.eq(message.role, "toolResult", "role")
  T.eq(message.toolName, "todo", "toolName")
  T.eq(#message.content, 1, "one content part")
  T.eq(message.content[1].type, "text", "text part")
  T.eq(message.content[1].text, H.COMPACT, "the compact form")
  T.eq(message.details.nextId, 4, "details: nextId")
  T.eq(#message.details.tasks, 3, "details: every task")
  T.eq(message.details.tasks[1].status, "completed", "details: #1 completed")
  T.same(message.details.tasks[2].blockedBy, { 1 }, "details: #2's blocker")
  -- Turn 2 runs on the list the session kept.
  T.same(
    H.run("s", {
      { action = "update", id = 2, status = "in_progress" },
      { action = "create", subject = "Benchmark the parser" },
    }),
    { "Updated #2 (pending → in_progress)", "Created #4: Benchmark the parser (pending)" },
    "turn 2"
  )
  T.eq(H.text(todo.session("s"):execute({ action = "list" })), H.LIST_AFTER, "list")
end)

T.test("nil, JSON text and an empty branch keep the list too", function()
  H.run("s", H.TURN1)
  for _, entries in ipairs({ false, "[]", "[" .. '{"type":"compaction","summary":"planned"}' .. "]", {} }) do
    local message = todo.on_compaction("s", entries or nil)
    T.eq(message.content[1].text, H.COMPACT, "compact form for " .. tostring(entries))
    T.eq(#todo.session("s"):state().tasks, 3, "three tasks kept for " .. tostring(entries))
  end
end)

T.test("a branch that kept only an older todo result does not roll the list back", function()
  local branch = { { type = "message", message = { role = "user", content = "plan it" } } }
  H.run("s", { H.TURN1[1] }, branch) -- the only result the compaction keeps: #1 alone
  H.run("s", { H.TURN1[2], H.TURN1[3], H.TURN1[4] })
  H.run("s", { { action = "update", id = 2, status = "in_progress" } })
  local before = todo.session("s"):state()
  local message = todo.on_compaction("s", branch)
  T.same(todo.session("s"):state(), before, "the held list")
  T.eq(#message.details.tasks, 3, "three tasks in the message")
  -- Same tasks, only pending ⇄ in_progress differs: which is newer cannot be told; held.
  local older = {
    {
      type = "message",
      message = {
        role = "toolResult",
        toolName = "todo",
        details = {
          tasks = {
            { id = 1, subject = "Write the parser", status = "completed" },
            { id = 2, subject = "Test the parser", status = "pending", blockedBy = { 1 } },
            { id = 3, subject = "Document the parser", status = "pending" },
          },
          nextId = 4,
        },
      },
    },
  }
  todo.on_compaction("s", older)
  T.eq(todo.session("s"):state().tasks[2].status, "in_progress", "#2 stays in progress")
end)

T.test("a branch whose last snapshot is the same list or a newer one is replayed", function()
  local branch = {}
  H.run("s", H.TURN1, branch)
  local replays, stop = H.count_replays("s")
  local message = todo.on_compaction("s", branch) -- the branch kept every result: same list
  T.eq(replays.n, 1, "the same list: replayed, as before")
  T.eq(message.content[1].text, H.COMPACT, "compact form")
  -- Another process moved on (more tasks, #2 done): provably newer, taken.
  local newer = {
    type = "message",
    message = {
      role = "toolResult",
      toolName = "todo",
      details = {
        tasks = {
          { id = 1, subject = "Write the parser", status = "completed" },
          { id = 2, subject = "Test the parser", status = "completed", blockedBy = { 1 } },
          { id = 3, subject = "Document the parser", status = "pending" },
          { id = 4, subject = "Ship it", status = "pending" },
        },
        nextId = 5,
      },
    },
  }
  branch[#branch + 1] = newer
  message = todo.on_compaction("s", branch)
  stop()
  T.eq(replays.n, 2, "the newer list: replayed")
  T.eq(todo.session("s"):state().nextId, 5, "nextId from the branch")
  T.eq(
    message.content[1].text,
    "The todo list as it stands (the conversation before this point was summarized): 4 tasks"
      .. " (2 completed, 2 pending).\nOpen tasks:\n[pending] #3 Document the parser\n[pending] #4 Ship it"
      .. "\nKeep using these ids with the todo tool; `list` shows every task.",
    "compact form of the newer list"
  )
end)

T.test("a session just created takes the branch's list; an empty list gives nil", function()
  local branch = {}
  H.run("old", H.TURN1, branch)
  local message = todo.on_compaction("fresh", branch)
  T.eq(message.content[1].text, H.COMPACT, "compact form")
  T.eq(todo.session("fresh"):state().nextId, 4, "rebuilt")
  T.eq(todo.on_compaction("empty", { H.SUMMARY }), nil, "no task: nil")
  T.eq(#todo.session("empty"):state().tasks, 0, "still empty")
end)

T.test("the message, kept on the branch, rebuilds every task on a reload", function()
  H.run("s", H.TURN1)
  local message = todo.on_compaction("s", { H.SUMMARY })
  -- The host keeps the summary and the message; turn 2's results follow.
  local branch = { H.SUMMARY, { type = "message", message = message } }
  H.run("s", {
    { action = "update", id = 2, status = "in_progress" },
    { action = "create", subject = "Benchmark the parser" },
  }, branch)
  todo.sessions.reset() -- the reload
  todo.on_session_start("s", branch)
  T.eq(H.text(todo.session("s"):execute({ action = "list" })), H.LIST_AFTER, "list after the reload")
  T.eq(H.text(todo.session("s"):execute({ action = "create", subject = "Next" })), "Created #5: Next (pending)")
  -- Only the message and the summary (turn 2 not on the branch yet): the list of turn 1.
  todo.sessions.reset()
  todo.on_session_start("s", { H.SUMMARY, { type = "message", message = message } })
  T.eq(todo.session("s"):state().nextId, 4, "from the message alone")
  T.eq(#todo.session("s"):state().tasks, 3, "three tasks")
end)

T.test("the compact form counts every status and shows blockers and activeForm", function()
  H.run("s", {
    { action = "create", subject = "A" },
    { action = "create", subject = "B", blockedBy = { 1 } },
    { action = "create", subject = "C" },
    { action = "create", subject = "D", blockedBy = { 1, 2 } },
    { action = "update", id = 1, status = "in_progress", activeForm = "Doing A" },
    { action = "delete", id = 3 },
  })
  local message = todo.on_compaction("s")
  T.eq(
    message.content[1].text,
    "The todo list as it stands (the conversation before this point was summarized): 3 tasks"
      .. " (1 in progress, 2 pending, 1 deleted).\nOpen tasks:\n[in_progress] #1 A (Doing A)\n"
      .. "[pending] #2 B ⛓ #1\n[pending] #4 D ⛓ #1,#2"
      .. "\nKeep using these ids with the todo tool; `list` shows every task.",
    "compact form"
  )
  H.run("s", {
    { action = "update", id = 1, status = "completed" },
    { action = "update", id = 2, status = "completed" },
    { action = "update", id = 4, status = "completed" },
  })
  T.eq(
    todo.on_compaction("s").content[1].text,
    "The todo list as it stands (the conversation before this point was summarized): 3 tasks"
      .. " (3 completed, 1 deleted).\nNo open tasks."
      .. "\nKeep using these ids with the todo tool; `list` shows every task.",
    "nothing open"
  )
end)

T.test("compact_text says the conversation was summarized only when it was", function()
  local compaction = require("rpiv_todo.session.compaction")
  local state = { tasks = { { id = 1, subject = "Write the parser", status = "pending" } }, nextId = 2 }
  local body = "1 task (1 pending).\nOpen tasks:\n[pending] #1 Write the parser"
    .. "\nKeep using these ids with the todo tool; `list` shows every task."
  local summarized = "The todo list as it stands (the conversation before this point was summarized): "
  T.eq(compaction.compact_text(state), summarized .. body, "after a compaction (the default)")
  T.eq(compaction.compact_text(state, { summarized = true }), summarized .. body, "summarized = true")
  T.eq(
    compaction.compact_text(state, { summarized = false }),
    "The todo list as it stands: " .. body,
    "a start, a resume or a /clear"
  )
end)

T.finish()
