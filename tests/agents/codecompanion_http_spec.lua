-- tests/agents/codecompanion_http_spec.lua: the README's codecompanion setup, run as a user
-- runs it, against a scripted OpenAI-compatible server on 127.0.0.1 (tests/agents/server.py)
-- over codecompanion's own HTTP client (plenary.curl, curl): the model's tool calls arrive
-- as a real stream, codecompanion runs the tool and sends the results back, and the server
-- records every request it gets. The server never answers a model list (`GET /v1/models`),
-- as a dead endpoint would not.
--
--   RPIV_DEPS            folder with the pinned plugins (default ../shared/deps from the repo)
--   RPIV_CODECOMPANION   codecompanion.nvim (v19, default) or codecompanion.nvim-v17
--
-- Without the plugins the spec raises "skipped: ...": it never passes without running.

-- test.sh needs: plenary.nvim
-- test.sh each: RPIV_CODECOMPANION=codecompanion.nvim codecompanion.nvim-v17

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local A = dofile(T.root() .. "/tests/agents/common.lua")

local cc_dir = os.getenv("RPIV_CODECOMPANION") or "codecompanion.nvim"
A.require_deps({ "plenary.nvim", cc_dir })
local V17 = cc_dir:find("v17", 1, true) ~= nil
local label = (V17 and "codecompanion-v17" or "codecompanion-v19") .. " over HTTP"

-- The model's answers, one per chat request, in the order the tests below make them.
local CREATE_TWO = {
  tool_calls = {
    { "todo", '{"action":"create","subject":"Write the parser","activeForm":"Writing it"}' },
    { "todo", '{"action":"create","subject":"Test the parser"}' },
    { "todo", '{"action":"update","id":1,"status":"in_progress"}' },
  },
}
local server = A.start_server({
  CREATE_TWO, -- prompt 1, first request
  { text = "I started on the parser." }, -- prompt 1, the tool results
  { text = "Still on it." }, -- prompt 2
  { tool_calls = { { "todo", '{"action":"update","id":1,"status":"completed"}' } } }, -- prompt 3
  { text = "The parser is written." }, -- prompt 3, the tool result
  { text = "You are welcome." }, -- prompt 4
  { tool_calls = { { "todo", '{"action":"create","subject":"Other chat task"}' } } }, -- chat 2
  { text = "Noted." },
}, "never")

local todo = require("rpiv_todo")
todo.setup({ locale = "en" })
vim.cmd("runtime plugin/rpiv_todo.lua")

-- The README's block runs as written; only the model endpoint is added to what it passes
-- to codecompanion's setup (and, before v18, `interactions` is named `strategies`).
local cc = require("codecompanion")
local real_setup = cc.setup
cc.setup = function(config)
  config.adapters = {
    http = {
      scripted = function()
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
  }
  config.interactions.chat.adapter = "scripted"
  -- codecompanion v19's own context management asks the adapter for its model list after
  -- each response (adapters/shared.lua: context_window, manages_own_context), which for
  -- openai_compatible is a blocking GET /v1/models. Off, so that any GET the server sees
  -- is one rpiv_todo made.
  config.interactions.chat.opts = { context_management = { enabled = false } }
  if V17 then
    config.strategies, config.interactions = config.interactions, nil
  end
  config.opts = { log_level = "ERROR" }
  return real_setup(config)
end
local snippet = A.readme_snippet("readme-test: codecompanion")
assert(loadstring(snippet, "README.md codecompanion block"))()
cc.setup = real_setup

local done = 0
vim.api.nvim_create_autocmd("User", {
  pattern = "CodeCompanionChatDone",
  callback = function()
    done = done + 1
  end,
})

-- Submit `prompt` in `chat` (a new chat when nil) and wait until codecompanion has finished
-- `turns` exchanges with the server. Returns the chat and the requests this prompt made.
local function prompt(chat, text, requests_made)
  local before_posts, before_done = #server.posts(), done
  if chat == nil then
    chat = cc.chat({ messages = { { role = "user", content = text } }, auto_submit = true })
  else
    chat:add_buf_message({ role = "user", content = text })
    chat:submit()
  end
  local ok = vim.wait(5000, function()
    return #server.posts() >= before_posts + requests_made and done > before_done
  end, 10)
  if not ok then
    error(
      string.format(
        "timed out waiting for %d request(s) for the prompt %q: %d made, %d done",
        requests_made,
        text,
        #server.posts() - before_posts,
        done - before_done
      ),
      2
    )
  end
  local posts = server.posts()
  return chat, vim.list_slice(posts, before_posts + 1, #posts)
end

local function panel_lines()
  local win, buf = require("rpiv_todo.nvim").window()
  if win == nil then
    return {}
  end
  return vim.tbl_map(vim.trim, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
end

local function reminders(body)
  local n = 0
  for _, m in ipairs(body.messages or {}) do
    if type(m.content) == "string" and m.content:find("Reminder from the todo tool", 1, true) then
      n = n + 1
    end
  end
  return n
end

local CHAT1, CHAT2

T.test(label .. ": the README's setup sends the tool with a plain prompt, and the panel shows the list", function()
  local chat, posts = prompt(nil, "Plan the parser work", 2)
  CHAT1 = chat
  T.eq(posts[1].path, "/v1/chat/completions", "chat request")
  local tool = A.find_tool(posts[1].body, "todo")
  T.ok(tool ~= nil, "the todo tool is offered without @{todo}")
  T.eq(tool["function"].strict, false, "normal form for chat completions")
  local results = A.tool_results(posts[2].body)
  T.eq(results["call_1_1"], "Created #1: Write the parser (pending)", "first result")
  T.eq(results["call_1_2"], "Created #2: Test the parser (pending)", "second result")
  T.eq(results["call_1_3"], "Updated #1 (pending → in_progress)", "third result")
  T.same(panel_lines(), {
    "● Todos (0/2)",
    "├─ ◐ Write the parser (Writing it)",
    "└─ ○ Test the parser",
  }, "panel")
end)

T.test(label .. ": no model list is asked for (strict mode is decided without HTTP)", function()
  local gets = vim.tbl_filter(function(r)
    return r.method == "GET"
  end, server.requests())
  T.eq(#gets, 0, "GET requests the server received")
end)

T.test(label .. ": one reminder in the chat at a time", function()
  -- Prompt 1 ended with #1 in progress: a reminder. Prompt 2 ends the same way: the
  -- reminder is replaced, so prompt 3's request carries exactly one.
  local _, second = prompt(CHAT1, "Go on", 1)
  T.eq(reminders(second[1].body), 1, "prompt 2's request")
  local _, third = prompt(CHAT1, "Finish the parser", 2)
  T.eq(reminders(third[1].body), 1, "prompt 3's request")
  T.eq(A.tool_results(third[2].body)["call_4_1"], "Updated #1 (in_progress → completed)", "completed")
  local tagged = 0
  for _, m in ipairs(CHAT1.messages) do
    tagged = tagged + ((m._meta and m._meta.tag == "rpiv_todo_reminder") and 1 or 0)
  end
  T.eq(tagged, 0, "nothing in progress after prompt 3: no reminder left")
end)

T.test(label .. ": a completed task shows until the next prompt, then falls away", function()
  T.same(panel_lines(), {
    "● Todos (1/2)",
    "├─ ✓ Write the parser",
    "└─ ○ Test the parser",
  }, "right after the turn that completed it")
  -- The next prompt: its request marks a new turn.
  prompt(CHAT1, "Thanks", 1)
  T.same(panel_lines(), { "● Todos (0/1)", "└─ ○ Test the parser" }, "after the next prompt")
end)

T.test(label .. ": the panel shows the list of the chat in the current window", function()
  local chat, posts = prompt(nil, "Something else", 2)
  CHAT2 = chat
  T.eq(A.tool_results(posts[2].body)["call_7_1"], "Created #1: Other chat task (pending)", "chat 2's own list")
  local cc_mod = require("rpiv_todo.adapters.codecompanion")
  T.ok(cc_mod.session_of(CHAT1) ~= cc_mod.session_of(CHAT2), "two lists")
  -- A plain window: the latest call (chat 2).
  vim.cmd("botright new")
  local plain = vim.api.nvim_get_current_win()
  T.same(panel_lines(), { "● Todos (0/1)", "└─ ○ Other chat task" }, "plain window: the latest call")
  -- Chat 1's buffer in a window: chat 1's list, though chat 2 made the latest call.
  vim.cmd("sbuffer " .. CHAT1.bufnr)
  T.same(panel_lines(), { "● Todos (0/1)", "└─ ○ Test the parser" }, "chat 1's window")
  vim.cmd("sbuffer " .. CHAT2.bufnr)
  T.same(panel_lines(), { "● Todos (0/1)", "└─ ○ Other chat task" }, "chat 2's window")
  -- A pin wins over the window.
  require("rpiv_todo").foreground(cc_mod.session_of(CHAT1))
  T.same(panel_lines(), { "● Todos (0/1)", "└─ ○ Test the parser" }, "pinned chat 1 in chat 2's window")
  require("rpiv_todo").foreground(nil)
  T.same(panel_lines(), { "● Todos (0/1)", "└─ ○ Other chat task" }, "unpinned: chat 2's window again")
  vim.api.nvim_set_current_win(plain)
  T.same(panel_lines(), { "● Todos (0/1)", "└─ ○ Other chat task" }, "back in the plain window")
end)

T.test(label .. ": two chats never share an id, whatever math.random says", function()
  -- codecompanion names chats math.random(10000000), which Neovim does not seed: the
  -- first chat of every editor gets the same number. Force that collision.
  local cc_mod = require("rpiv_todo.adapters.codecompanion")
  local fake_a, fake_b = { id = 42, messages = {} }, { id = 42, messages = {} }
  T.ok(cc_mod.session_of(fake_a) ~= cc_mod.session_of(fake_b), "same chat id, two sessions")
  T.eq(cc_mod.session_of(fake_a), cc_mod.session_of(fake_a), "stable for one chat")
end)

T.test(label .. ": a chat opened with earlier messages gets its list back", function()
  -- What a history extension hands to codecompanion.chat(): the messages of a chat of an
  -- earlier session, tool calls and results included.
  -- (codecompanion.chat() submits a chat given messages unless told not to.)
  local restored = cc.chat({ messages = vim.deepcopy(CHAT1.messages), auto_submit = false })
  local id = require("rpiv_todo.adapters.codecompanion").session_of(restored)
  local state = todo.session(id):state()
  T.eq(#state.tasks, 2, "two tasks")
  T.eq(state.tasks[1].status, "completed", "#1 completed")
  T.eq(state.tasks[2].subject, "Test the parser", "#2")
  T.eq(state.nextId, 3, "nextId")
end)

T.test(label .. ": every request the server got is one the tests made", function()
  T.eq(#server.requests(), 8, "requests")
end)

server.stop()
T.note(#server.requests() .. " requests served by tests/agents/server.py on 127.0.0.1")
T.finish(label)
