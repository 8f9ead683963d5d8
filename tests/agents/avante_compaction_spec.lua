-- tests/agents/avante_compaction_spec.lua: an avante chat summarized into its memory
-- (`/compact`: Sidebar:compact_history_messages) keeps its list, the first request after the summary carries
-- the list once (through the `system_prompt` function of the README's setup), and a
-- restarted Neovim that reopens the chat from avante's history file finds the list, with
-- and without `persist`. avante's OpenAI provider talks HTTP (plenary.curl, curl) to the
-- scripted server on 127.0.0.1 (tests/agents/server.py); avante's prompt renderer (a Rust
-- library, avante_templates) is not built here: a stand-in renders the system prompt and
-- the memory.
--
-- Each Neovim of the story is a child (tests/nvim/child.lua runs this file again with
-- RPIV_PHASE set) in one scratch project directory, with one avante history folder and
-- its own XDG_STATE_HOME:
--   session   persist on; turn 1 creates #1 Write the parser, #2 Test the parser (blocked
--             by #1), #3 Document the parser, and completes #1; /compact (the summary
--             names no task); turn 2 sets #2 in_progress and creates #4.
--   restart   a new Neovim asks in the same chat: the model calls list, then creates a
--             task. As avante runs (math.random unseeded), then seeded with persist off
--             and on.
--
--   RPIV_DEPS   folder with the pinned plugins (default ../shared/deps from the repo)
--
-- Without the plugins the spec raises "skipped: ...": it never passes without running.

-- test.sh needs: avante.nvim plenary.nvim nui.nvim

local ROOT = os.getenv("RPIV_ROOT")
local A = dofile(ROOT .. "/tests/agents/common.lua")
local H = {}

local S = A.STORY

function H.finish(result)
  return { tool_calls = { { "attempt_completion", vim.json.encode({ result = result }) } } }
end

H.replies = {}

---avante with the README's setup, the scripted server and a history folder shared by the
---children; rpiv_todo with or without persist.
function H.setup(server, persist)
  package.preload["avante_templates"] = function()
    return {
      initialize = function() end,
      render = function(template, context)
        if tostring(template):find("_memory", 1, true) then
          return "<memory>" .. tostring(context and context.memory) .. "</memory>"
        end
        return "You are a helpful assistant (system prompt stand-in)."
      end,
    }
  end
  vim.env.OPENAI_API_KEY = "sk-test-not-a-key"
  A.setup_todo(persist)
  require("avante").setup({
    provider = "openai",
    providers = {
      openai = { endpoint = server.url .. "/v1", model = "scripted-model", timeout = 10000 },
    },
    history = { storage_path = os.getenv("RPIV_AVANTE_HISTORY") },
    behaviour = { auto_approve_tool_permissions = true, auto_suggestions = false },
    disabled_tools = { "read_todos", "write_todos" },
    custom_tools = function()
      -- The README's tool, with what it answers avante recorded: after a restart avante
      -- may put the new messages over old ones (see the restart test), so a reply cannot
      -- always be read back from the next request.
      local tool = require("rpiv_todo.adapters.avante").tool()
      local func = tool.func
      tool.func = function(input, opts)
        local result, err = func(input, opts)
        H.replies[#H.replies + 1] = result or ("Error: " .. tostring(err))
        return result, err
      end
      return { tool }
    end,
    system_prompt = function()
      return require("rpiv_todo.adapters.avante").reminder() or ""
    end,
  })
  H.code_buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(H.code_buf, 0, -1, false, { "print('hello')" })
end

---Ask in the sidebar and wait until the server has answered `n` more requests and avante
---has stopped generating. Returns the new requests' bodies.
function H.ask(server, question, n)
  local before = #server.posts()
  -- Asked from the code window, as a user does: asked from the sidebar, avante reopens it.
  vim.api.nvim_set_current_win(vim.fn.bufwinid(H.code_buf))
  require("avante.api").ask({ question = question, without_selection = true })
  local ok = vim.wait(10000, function()
    local sidebar = require("avante").get(false)
    return #server.posts() >= before + n and sidebar ~= nil and not sidebar.is_generating
  end, 20)
  if not ok then
    error(string.format("timed out: %d of %d requests for %q", #server.posts() - before, n, question), 2)
  end
  local bodies = {}
  for i, r in ipairs(vim.list_slice(server.posts(), before + 1, #server.posts())) do
    bodies[i] = r.body
  end
  return bodies
end

---The child's part: one Neovim of the story; what it saw goes into `out`.
function H.child(phase, out)
  A.require_deps({ "plenary.nvim", "nui.nvim", "avante.nvim" })
  local persist = os.getenv("RPIV_PERSIST") == "1"
  local server
  if phase == "session" then
    server = A.start_server({
      S.TURN1,
      H.finish("The parser is written."),
      { text = S.SUMMARY }, -- the summary request
      S.TURN2, -- the first request after it
      H.finish("Testing now."),
    }, "never")
    H.setup(server, persist)
    out.turn1 = H.ask(server, "Plan the parser work", 2)
    -- What avante's /compact runs.
    local sidebar = require("avante").get(false)
    local before = #server.posts()
    sidebar:compact_history_messages()
    A.wait_for(function()
      return sidebar.chat_history.memory ~= nil and sidebar.current_state ~= "compacting"
    end, "the memory summary")
    out.summary = server.posts()[before + 1].body
    out.turn2 = H.ask(server, "Go on", 2)
    out.replies = H.replies
  else
    if os.getenv("RPIV_SEED") ~= nil then
      math.randomseed(tonumber(os.getenv("RPIV_SEED")))
    end
    server = A.start_server({ S.TURN3, H.finish("Listed.") }, "never", "again")
    H.setup(server, persist)
    out.turn3 = H.ask(server, "Where are we?", 2)
    out.replies = H.replies
  end
  local record = require("avante").get(false).chat_history.rpiv_todo
  out.session = out.session or (record and record.session)
  if persist then
    out.file = require("rpiv_todo.persist").path(out.session)
  end
  out.files = A.saved_files()
  server.stop()
  -- avante writes its history file a second after the last change (a debounce).
  vim.wait(1500, function()
    return false
  end)
end

if A.child_phase(H.child) then
  return
end

-- The parent: runs the children and checks what they saw.
local T = dofile(ROOT .. "/tests/harness.lua")
local Child = dofile(ROOT .. "/tests/nvim/child.lua")
A.require_deps({ "plenary.nvim", "nui.nvim", "avante.nvim" })

local project, state, avante_history = T.tempdir(), T.tempdir(), T.tempdir()

-- Each restart starts from what the first Neovim left: a copy of the history folder and
-- of the saved lists.
local function run(phase, persist, seed)
  local history, saved = avante_history, state
  if phase ~= "session" then
    history, saved = T.tempdir(), T.tempdir()
    T.sh("cp -a '" .. avante_history .. "/.' '" .. history .. "'")
    T.sh("cp -a '" .. state .. "/.' '" .. saved .. "'")
  end
  local out = Child.run({
    root = ROOT,
    file = "tests/agents/avante_compaction_spec.lua",
    cwd = project,
    vars = {
      RPIV_PHASE = phase,
      RPIV_PERSIST = persist and "1" or "0",
      RPIV_SEED = seed,
      RPIV_AVANTE_HISTORY = history,
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

local count_in = A.count_in

local SESSION = run("session", true)
local LIST_AFTER = table.concat({
  "[completed] #1 Write the parser",
  "[in_progress] #2 Test the parser ⛓ #1",
  "[pending] #3 Document the parser",
  "[pending] #4 Benchmark the parser",
}, "\n")
local COMPACT = "The todo list as it stands (the conversation before this point was summarized): 3 tasks"
  .. " (1 completed, 2 pending).\nOpen tasks:\n[pending] #2 Test the parser ⛓ #1\n"
  .. "[pending] #3 Document the parser\nKeep using these ids with the todo tool; `list` shows every task."

T.test("avante: turn 1 makes the list", function()
  local results = A.tool_results(SESSION.turn1[2])
  T.eq(results["call_1_2"], "Created #2: Test the parser (pending)", "#2")
  T.eq(results["call_1_4"], "Updated #1 (pending → completed)", "#1 completed")
end)

T.test("avante: the first request after the memory summary carries the list once", function()
  local summary_request, after = SESSION.summary, SESSION.turn2[1]
  T.ok(count_in(summary_request, "Here is the conversation so far") > 0, "the summary request")
  T.eq(count_in(summary_request, S.LIST_MARK), 0, "no list before the summary")
  T.eq(count_in(after, "<memory>" .. S.SUMMARY .. "</memory>"), 1, "the memory is in it")
  T.eq(count_in(after, S.LIST_MARK), 1, "the list, once")
  T.eq(count_in(after, COMPACT), 1, "the compact form")
  T.eq(count_in(after, "Reminder from the todo tool"), 0, "no reminder with it")
  T.eq(count_in(after, "Created #"), 0, "turn 1's results are not in it")
  T.eq(count_in(after, "Go on"), 1, "the prompt")
end)

T.test("avante: turn 2 runs on the kept list, which stays in view as it was", function()
  local results = A.tool_results(SESSION.turn2[2])
  T.eq(results["call_4_1"], "Updated #2 (pending → in_progress)", "update")
  T.eq(results["call_4_2"], "Created #4: Benchmark the parser (pending)", "create")
  T.eq(count_in(SESSION.turn2[2], COMPACT), 1, "the rendering kept")
  T.ok(type(SESSION.session) == "string" and SESSION.session:find("^avante:") ~= nil, "session id kept in the history")
  T.eq(#SESSION.files, 1, "one saved list")
end)

T.test("avante: after a restart (math.random unseeded) the reopened chat's list is whole", function()
  -- avante's message uuids come from math.random, which Neovim does not seed: the
  -- restarted Neovim makes the first one's uuids again, and avante puts each new message
  -- over the old one with the same uuid (its history keeps one message per uuid). The
  -- calls still run on the chat's whole list: its id and list are in the history record.
  local out = run("restart", false, nil)
  T.eq(out.session, SESSION.session, "the same session id")
  T.same(out.replies, { LIST_AFTER, "Created #5: Release the parser (pending)" }, "list, then the next create")
  if count_in(out.turn3[1], "Where are we?") == 0 then
    T.note("avante put the restarted Neovim's messages over old ones (reused uuids): not in its requests")
  end
end)

for i, persist in ipairs({ false, true }) do
  local label = persist and "with persist" or "without persist"
  T.test("avante: after a restart the model's list and create see the whole list, " .. label, function()
    local out = run("restart", persist, tostring(1000 + i))
    T.eq(count_in(out.turn3[1], "Where are we?"), 1, "the prompt")
    T.eq(count_in(out.turn3[1], COMPACT), 1, "the list as rendered at the summary, kept")
    T.same(out.replies, { LIST_AFTER, "Created #5: Release the parser (pending)" }, "list, then the next create")
    local results = A.tool_results(out.turn3[2])
    T.eq(results["again_1_1"], LIST_AFTER, "list, in the next request")
    T.eq(results["again_1_2"], "Created #5: Release the parser (pending)", "create, in the next request")
    T.eq(out.session, SESSION.session, "the same session id")
    if persist then
      T.eq(vim.fn.fnamemodify(out.file, ":t"), SESSION.files[1], "the saved file of the first Neovim")
    end
    T.same(out.files, SESSION.files, "one saved list for the chat, not one per reopen")
  end)
end

T.finish("avante compaction")
