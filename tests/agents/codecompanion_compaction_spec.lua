-- tests/agents/codecompanion_compaction_spec.lua: a codecompanion v19 chat compacted
-- (`/compact`: compaction.compact) keeps its list, the first request after the compaction
-- carries the list once, and a restarted Neovim that reopens the chat from its saved
-- messages finds the list, with and without `persist`. codecompanion talks HTTP
-- (plenary.curl, curl) to the scripted server on 127.0.0.1 (tests/agents/server.py).
--
-- Each Neovim of the story is a child (tests/nvim/child.lua runs this file again with
-- RPIV_PHASE set) in one scratch project directory with its own XDG_STATE_HOME:
--   session   persist on; turn 1 creates #1 Write the parser, #2 Test the parser (blocked
--             by #1), #3 Document the parser, and completes #1; /compact (the summary names
--             no task); turn 2 sets #2 in_progress and creates #4. The chat's messages are
--             written to a file, as a history extension saves them.
--   restart   a new Neovim (persist off, then on) opens a chat with those messages; the
--             model calls list, then creates a task.
--   adapter   the compaction an adapter's response carries (`meta.compaction`: OpenAI's
--             Responses API, here openai_responses against the same server): turn 2's
--             answer is compacted and holds the calls; the request that sends their results
--             carries the list. A restart then reopens that chat too.
--
--   RPIV_DEPS   folder with the pinned plugins (default ../shared/deps from the repo)
--
-- Without the plugins the spec raises "skipped: ...": it never passes without running.

-- test.sh needs: plenary.nvim codecompanion.nvim

local ROOT = os.getenv("RPIV_ROOT")
local A = dofile(ROOT .. "/tests/agents/common.lua")
local H = {}

local S = A.STORY

---JSON-safe copy of a chat's messages (what a history extension writes): functions and
---other values JSON cannot hold are left out.
function H.plain(v, depth)
  depth = depth or 0
  if type(v) == "table" and depth < 40 then
    local out = {}
    for k, x in pairs(v) do
      if type(k) == "string" or type(k) == "number" then
        out[k] = H.plain(x, depth + 1)
      end
    end
    return out
  elseif type(v) == "string" or type(v) == "number" or type(v) == "boolean" then
    return v
  end
  return nil
end

---codecompanion with the todo tool (the README's setup) and the scripted server (its chat
---completions, or with `responses` its Responses API); rpiv_todo with or without persist.
function H.setup(server, persist, responses)
  A.setup_todo(persist)
  local cc = require("codecompanion")
  cc.setup({
    adapters = {
      http = {
        scripted = function()
          if responses then
            return require("codecompanion.adapters").extend("openai_responses", {
              url = server.url .. "/v1/responses",
              env = {
                api_key = function()
                  return "sk-test-not-a-key"
                end,
              },
            })
          end
          return require("codecompanion.adapters").extend("openai_compatible", {
            env = {
              url = function()
                return server.url
              end,
              api_key = function()
                return "sk-test-not-a-key"
              end,
            },
            schema = { model = { default = "scripted-model" } },
          })
        end,
      },
    },
    interactions = {
      chat = {
        adapter = "scripted",
        tools = {
          todo = {
            description = "Keep a task list for multi-step work",
            callback = function()
              return require("rpiv_todo.adapters.codecompanion").tool()
            end,
          },
          opts = { default_tools = { "todo" } },
        },
        -- Its automatic context management asks for the model list (a blocking GET);
        -- the compaction here is the one /compact runs.
        opts = { context_management = { enabled = false } },
      },
    },
    opts = { log_level = "ERROR" },
  })
  H.done = 0
  vim.api.nvim_create_autocmd("User", {
    pattern = "CodeCompanionChatDone",
    callback = function()
      H.done = H.done + 1
    end,
  })
  return cc
end

---Run `start()` and wait until the server has `n` more requests and codecompanion has
---finished the turn. Returns the new requests' bodies.
function H.turn(server, what, n, start)
  local before_posts, before_done = #server.posts(), H.done
  start()
  local ok = vim.wait(10000, function()
    return #server.posts() >= before_posts + n and H.done > before_done
  end, 10)
  if not ok then
    error(string.format("timed out in %s: %d of %d requests", what, #server.posts() - before_posts, n), 2)
  end
  local bodies = {}
  for i, r in ipairs(vim.list_slice(server.posts(), before_posts + 1, #server.posts())) do
    bodies[i] = r.body
  end
  return bodies
end

function H.prompt(server, chat, text, n)
  return H.turn(server, "the prompt " .. text, n, function()
    chat:add_buf_message({ role = "user", content = text })
    chat:submit()
  end)
end

---The child's part: one Neovim of the story; what it saw goes into `out`.
function H.child(phase, out)
  A.require_deps({ "plenary.nvim", "codecompanion.nvim" })
  local persist = os.getenv("RPIV_PERSIST") == "1"
  local adapter = require("rpiv_todo.adapters.codecompanion")
  out.files_before = A.saved_files()
  if phase == "adapter" then
    local server = A.start_server({
      S.TURN1,
      { text = "The parser is written." },
      vim.tbl_extend("force", S.TURN2, { compaction = true }), -- the server compacted
      { text = "Testing now." },
    }, "never")
    local cc = H.setup(server, persist, true)
    local chat
    out.turn1 = H.turn(server, "turn 1", 2, function()
      chat = cc.chat({ messages = { { role = "user", content = "Plan the parser work" } }, auto_submit = true })
    end)
    out.turn2 = H.prompt(server, chat, "Go on", 2)
    out.session = adapter.session_of(chat)
    vim.fn.writefile({ vim.json.encode(H.plain(chat.messages)) }, os.getenv("RPIV_HISTORY"), "b")
    server.stop()
    out.files = A.saved_files()
    -- In this editor: a copy of the open chat is another chat (a list of its own); the
    -- chat closed and opened again from its messages is the same chat.
    local copy = cc.chat({ messages = H.plain(chat.messages), auto_submit = false })
    out.copy_session = adapter.session_of(copy)
    copy:close()
    chat:close()
    local reopened = cc.chat({ messages = H.plain(chat.messages), auto_submit = false })
    out.reopened_session = adapter.session_of(reopened)
    out.reopened_list = require("rpiv_todo").session(out.reopened_session):execute({ action = "list" }).content[1].text
    return
  elseif phase == "session" then
    local server = A.start_server({
      S.TURN1,
      { text = "The parser is written; the tests and the docs are next." },
      { text = S.SUMMARY }, -- the summary (a background request)
      { text = "Ready to go on." }, -- the request after the compaction
      S.TURN2,
      { text = "Testing now." },
    }, "never")
    local cc = H.setup(server, persist)
    local chat
    out.turn1 = H.turn(server, "turn 1", 2, function()
      chat = cc.chat({ messages = { { role = "user", content = "Plan the parser work" } }, auto_submit = true })
    end)
    out.compaction = H.turn(server, "the compaction", 2, function()
      local compaction = require("codecompanion.interactions.chat.context_management.compaction")
      assert(compaction.compact(chat, { min_token_savings = 0 }), "compaction did not start")
    end)
    out.turn2 = H.prompt(server, chat, "Go on", 2)
    out.session = adapter.session_of(chat)
    out.list_messages = 0
    for _, m in ipairs(chat.messages) do
      if m._meta and m._meta.tag == adapter.LIST_TAG then
        out.list_messages = out.list_messages + 1
      end
    end
    vim.fn.writefile({ vim.json.encode(H.plain(chat.messages)) }, os.getenv("RPIV_HISTORY"), "b")
    server.stop()
    out.files = A.saved_files()
    -- In this editor: a copy of the open chat is another chat (a list of its own); the
    -- chat closed and opened again from its messages is the same chat.
    local copy = cc.chat({ messages = H.plain(chat.messages), auto_submit = false })
    out.copy_session = adapter.session_of(copy)
    copy:close()
    chat:close()
    local reopened = cc.chat({ messages = H.plain(chat.messages), auto_submit = false })
    out.reopened_session = adapter.session_of(reopened)
    out.reopened_list = require("rpiv_todo").session(out.reopened_session):execute({ action = "list" }).content[1].text
    return
  else
    -- Call ids of its own: the chat's history holds the first server's.
    local server = A.start_server({ S.TURN3, { text = "Listed." } }, "never", "again")
    local cc = H.setup(server, persist)
    local messages = vim.json.decode(table.concat(vim.fn.readfile(os.getenv("RPIV_HISTORY"), "b"), "\n"))
    local chat = cc.chat({ messages = messages, auto_submit = false })
    out.turn3 = H.prompt(server, chat, "Where are we?", 2)
    out.session = adapter.session_of(chat)
    if persist then
      out.file = require("rpiv_todo.persist").path(out.session)
    end
    server.stop()
  end
  out.files = A.saved_files()
end

if A.child_phase(H.child) then
  return
end

-- The parent: runs the children and checks what they saw.
local T = dofile(ROOT .. "/tests/harness.lua")
local Child = dofile(ROOT .. "/tests/nvim/child.lua")
A.require_deps({ "plenary.nvim", "codecompanion.nvim" })

local project, state = T.tempdir(), T.tempdir()
local scratch = T.tempdir()
local history, adapter_history = scratch .. "/chat.json", scratch .. "/adapter-chat.json"

-- Each restart starts from the saved lists the first Neovim left (a copy).
local function run(phase, persist, messages_file)
  local saved = state
  if phase ~= "session" then
    saved = T.tempdir()
    T.sh("cp -a '" .. state .. "/.' '" .. saved .. "'")
  end
  local out = Child.run({
    root = ROOT,
    file = "tests/agents/codecompanion_compaction_spec.lua",
    cwd = project,
    vars = {
      RPIV_PHASE = phase,
      RPIV_PERSIST = persist and "1" or "0",
      RPIV_HISTORY = messages_file or history,
      RPIV_DEPS = A.deps(),
      XDG_STATE_HOME = saved,
    },
    label = phase .. (persist and " (persist)" or ""),
  }, 2)
  if out.error ~= nil then
    error(phase .. ": " .. out.error, 2)
  end
  return out
end

-- How often `needle` occurs in the request's messages (codecompanion's carry their text
-- as a string).
local function count_in(body, needle)
  return A.count_in(body, needle, function(content)
    return type(content) == "string" and content or ""
  end)
end

local SESSION = run("session", true)
local LIST_AFTER = table.concat({
  "[completed] #1 Write the parser",
  "[in_progress] #2 Test the parser ⛓ #1",
  "[pending] #3 Document the parser",
  "[pending] #4 Benchmark the parser",
}, "\n")

T.test("codecompanion v19: turn 1 makes the list", function()
  local results = A.tool_results(SESSION.turn1[2])
  T.eq(results["call_1_2"], "Created #2: Test the parser (pending)", "#2")
  T.eq(results["call_1_4"], "Updated #1 (pending → completed)", "#1 completed")
end)

T.test("codecompanion v19: the first request after the compaction carries the list once", function()
  local summary_request, after = SESSION.compaction[1], SESSION.compaction[2]
  T.ok(count_in(summary_request, "summary of the conversation") > 0, "the summary request")
  T.eq(count_in(summary_request, "Write the parser") > 0, true, "the summarizer saw turn 1")
  T.eq(count_in(after, S.SUMMARY), 1, "the summary is in it")
  T.eq(count_in(after, S.LIST_MARK), 1, "the list, once")
  T.eq(count_in(after, "Reminder from the todo tool"), 0, "no reminder with it")
  T.eq(count_in(after, "Created #"), 0, "turn 1's results are gone")
  local last = after.messages[#after.messages]
  T.eq(last.role, "user", "the list is the last message")
  T.eq(
    last.content,
    "The todo list as it stands (the conversation before this point was summarized): 3 tasks"
      .. " (1 completed, 2 pending).\nOpen tasks:\n[pending] #2 Test the parser ⛓ #1\n"
      .. "[pending] #3 Document the parser\nKeep using these ids with the todo tool; `list` shows every task.",
    "the compact form"
  )
end)

T.test("codecompanion v19: turn 2 runs on the kept list, which stays in view as it was", function()
  local results = A.tool_results(SESSION.turn2[2])
  T.eq(results["call_5_1"], "Updated #2 (pending → in_progress)", "update")
  T.eq(results["call_5_2"], "Created #4: Benchmark the parser (pending)", "create")
  for i, body in ipairs(SESSION.turn2) do
    T.eq(count_in(body, S.LIST_MARK), 1, "turn 2 request " .. i .. ": the list once, as it was")
    T.eq(count_in(body, "[pending] #2 Test the parser"), 1, "turn 2 request " .. i .. ": the rendering kept")
  end
  T.eq(SESSION.list_messages, 1, "one list message in the chat")
  T.eq(#SESSION.files, 1, "one saved list")
end)

T.test("codecompanion v19: a copy of an open chat is another list; the chat reopened is the same", function()
  T.ok(SESSION.copy_session ~= SESSION.session, "the copy's own id")
  T.eq(SESSION.reopened_session, SESSION.session, "closed and opened again: the same id")
  T.eq(SESSION.reopened_list, LIST_AFTER, "and the same list")
end)

for _, persist in ipairs({ false, true }) do
  local label = persist and "with persist" or "without persist"
  T.test("codecompanion v19: after a restart the reopened chat finds its list, " .. label, function()
    local out = run("restart", persist)
    local results = A.tool_results(out.turn3[2])
    T.eq(results["again_1_1"], LIST_AFTER, "list")
    T.eq(results["again_1_2"], "Created #5: Release the parser (pending)", "the next create")
    T.eq(out.session, SESSION.session, "the same session id")
    if persist then
      T.eq(vim.fn.fnamemodify(out.file, ":t"), SESSION.files[1], "the saved file of the first Neovim")
    end
    T.same(out.files, out.files_before, "one saved list for the chat, not one per reopen")
  end)
end

-- The items of a Responses API request: the list messages' positions, the compaction
-- item's, and the function call outputs by call id.
local function responses_input(body)
  local lists, compaction, outputs = {}, nil, {}
  for i, item in ipairs(body.input or {}) do
    if item.type == "compaction" then
      compaction = i
    elseif item.type == "function_call_output" then
      outputs[item.call_id] = item.output
    elseif type(item.content) == "string" and item.content:find(S.LIST_MARK, 1, true) then
      lists[#lists + 1] = i
    end
  end
  return lists, compaction, outputs
end

local ADAPTER = run("adapter", false, adapter_history)

T.test("codecompanion v19: a compaction in the adapter's response puts the list once in the next request", function()
  local lists, compaction = responses_input(ADAPTER.turn2[1])
  T.eq(#lists, 0, "no list before the compaction")
  T.eq(compaction, nil, "no compaction item yet")
  local after = ADAPTER.turn2[2]
  local outputs
  lists, compaction, outputs = responses_input(after)
  T.eq(outputs["call_3_1"], "Updated #2 (pending → in_progress)", "turn 2: update")
  T.eq(outputs["call_3_2"], "Created #4: Benchmark the parser (pending)", "turn 2: create")
  T.eq(#lists, 1, "the list, once")
  T.ok(compaction ~= nil and lists[1] > compaction, "after the compaction item (the server drops what is before)")
  T.eq(lists[1], #after.input, "after the results of the compacted answer's calls")
  T.eq(
    after.input[lists[1]].content,
    "The todo list as it stands (the conversation before this point was summarized): 4 tasks"
      .. " (1 completed, 1 in progress, 2 pending).\nOpen tasks:\n[in_progress] #2 Test the parser ⛓ #1\n"
      .. "[pending] #3 Document the parser\n[pending] #4 Benchmark the parser\n"
      .. "Keep using these ids with the todo tool; `list` shows every task.",
    "the compact form"
  )
  T.eq(after.input[lists[1]].role, "user", "a user message")
end)

T.test("codecompanion v19: after a restart the chat compacted by the adapter finds its list", function()
  local out = run("restart", false, adapter_history)
  local results = A.tool_results(out.turn3[2])
  T.eq(results["again_1_1"], LIST_AFTER, "list")
  T.eq(results["again_1_2"], "Created #5: Release the parser (pending)", "the next create")
  T.eq(out.session, ADAPTER.session, "the same session id")
end)

T.finish("codecompanion v19 compaction")
