-- tests/agents/avante_spec.lua: the `todo` tool inside the real avante.nvim (headless Neovim
-- 0.12), driven through `require("avante.llm").stream`: plenary.curl is replaced by a
-- recorder that answers each request with a scripted stream of Server-Sent Events (the
-- model's tool calls), so avante's own provider parses them, `process_tool_use` runs the
-- custom tool's `func`, and the results go into the next request, which is recorded too.
-- Nothing leaves the process. avante's prompt renderer (a Rust library, avante_templates)
-- only renders the system prompt; a stand-in renders a fixed text.
--
--   RPIV_DEPS     folder with the pinned plugins (default ../shared/deps from the repo)
--   RPIV_CAPTURE  folder to write the request bodies and ACP notifications to, for
--                 tests/agents/check_requests.py
--
-- Without the plugins the spec raises "skipped: ...": it never passes without running.

-- test.sh needs: avante.nvim plenary.nvim nui.nvim
-- test.sh capture: yes

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local A = dofile(T.root() .. "/tests/agents/common.lua")

A.require_deps({ "plenary.nvim", "nui.nvim", "avante.nvim" })

package.preload["avante_templates"] = function()
  return {
    initialize = function() end,
    render = function()
      return "You are a helpful assistant (system prompt stand-in)."
    end,
  }
end

local requests = A.stub_curl("avante")

-- The scripted answers, one per request, as SSE lines (OpenAI chat completions).
local answers = {}
local function tool_call_events(calls)
  local lines = {}
  for i, arguments in ipairs(calls) do
    local delta = {
      tool_calls = {
        {
          index = i - 1,
          id = "call_" .. i .. "_" .. #requests,
          type = "function",
          ["function"] = { name = "todo", arguments = arguments },
        },
      },
    }
    lines[#lines + 1] = "data: " .. vim.json.encode({ choices = { { index = 0, delta = delta } } })
  end
  lines[#lines + 1] = "data: "
    .. vim.json.encode({ choices = { { index = 0, delta = vim.empty_dict(), finish_reason = "tool_calls" } } })
  lines[#lines + 1] = "data: [DONE]"
  return lines
end
local function text_events(text)
  return {
    "data: " .. vim.json.encode({ choices = { { index = 0, delta = { content = text } } } }),
    "data: " .. vim.json.encode({ choices = { { index = 0, delta = vim.empty_dict(), finish_reason = "stop" } } }),
    "data: [DONE]",
  }
end

A.replies = function(opts, rec)
  if rec.method ~= "post" or type(opts.stream) ~= "function" then
    return
  end
  local lines = table.remove(answers, 1) or text_events("Done.")
  for _, line in ipairs(lines) do
    opts.stream(nil, line)
  end
  vim.schedule(function()
    opts.callback({ status = 200, headers = {}, body = "" })
  end)
end

vim.env.OPENAI_API_KEY = "sk-test-not-a-key"
vim.env.AVANTE_OPENAI_API_KEY = "sk-test-not-a-key"
vim.env.ANTHROPIC_API_KEY = "sk-ant-test-not-a-key"

local todo = require("rpiv_todo")
todo.setup({ locale = "en" })
vim.cmd("runtime plugin/rpiv_todo.lua")

local Config = require("avante.config")
Config.setup({
  provider = "openai",
  mode = "legacy",
  providers = { openai = { model = "gpt-4o", endpoint = "https://api.openai.com/v1" } },
  custom_tools = function()
    return { require("rpiv_todo.adapters.avante").tool() }
  end,
  history = { storage_path = vim.fn.tempname() },
})
-- Caches (the prompt templates avante copies) under stdpath("cache"), not the project.
require("avante.path").setup()
local llm = require("avante.llm")
local LLMTools = require("avante.llm_tools")
local History = require("avante.history")

-- One chat as the sidebar keeps it: its history, what avante adds to it, and a stream.
local function new_chat()
  local chat = { history = {}, tool_logs = {}, stopped = nil }
  function chat.on_messages_add(messages)
    for _, m in ipairs(messages) do
      local replaced = false
      for i, h in ipairs(chat.history) do
        if h.uuid == m.uuid then
          chat.history[i] = m
          replaced = true
        end
      end
      if not replaced then
        chat.history[#chat.history + 1] = m
      end
    end
  end
  function chat.get_history_messages(opts)
    return vim.tbl_filter(function(m)
      return not m.just_for_display and (opts and opts.all or m.state ~= "generating")
    end, chat.history)
  end
  -- One user prompt; `script` is the model's answers to the requests this prompt makes.
  function chat.ask(prompt, script)
    for _, lines in ipairs(script) do
      answers[#answers + 1] = lines
    end
    chat.on_messages_add({ History.Message:new("user", prompt, { is_user_submission = true }) })
    local done = false
    local before = #requests
    llm.stream({
      ask = true,
      code_lang = "lua",
      session_ctx = chat.session_ctx or {},
      history_messages = chat.get_history_messages(),
      get_history_messages = chat.get_history_messages,
      on_messages_add = chat.on_messages_add,
      on_state_change = function() end,
      on_start = function() end,
      on_chunk = function() end,
      on_tool_log = function(_, name, log, state)
        chat.tool_logs[#chat.tool_logs + 1] = { name = name, log = log, state = state }
      end,
      on_stop = function(stop)
        chat.stopped = stop
        done = stop.reason == "complete" or stop.reason == "error" or stop.reason == "cancelled"
      end,
      tools = LLMTools.get_tools(prompt, chat.history),
    })
    A.wait_for(function()
      return done
    end, "the end of the avante turn")
    return { unpack(requests, before + 1) }
  end
  return chat
end

-- The tool results avante sends in a request body (chat completions), by call id.
local function results(req)
  local out = {}
  for _, m in ipairs(req.body.messages or {}) do
    if m.role == "tool" then
      out[m.tool_call_id] = m.content
    end
  end
  return out
end

-- The call ids of the tool calls the model made in the answer to request `n`.
local function ids_of(n, count)
  local ids = {}
  for i = 1, count do
    ids[i] = "call_" .. i .. "_" .. n
  end
  return ids
end

local chat = new_chat()
chat.session_ctx = {}

T.test("avante: the request carries the todo tool with a valid schema", function()
  local sent =
    chat.ask("Plan the parser work", { tool_call_events({ '{"action":"create","subject":"Write the parser"}' }) })
  T.eq(#sent, 2, "two requests: the prompt, then the tool result")
  local tool = A.find_tool(sent[1].body, "todo")
  T.ok(tool ~= nil, "todo in tools")
  local params = tool["function"].parameters
  T.eq(params.properties.action.enum[1], "create", "action enum")
  T.eq(params.properties.metadata.type, "object", "metadata object")
  T.eq(params.required[1], "action", "action required")
  T.eq(chat.stopped.reason, "complete", "the turn completed")
  A.FIRST = sent
end)

T.test("avante: one create runs through process_tool_use and its result goes to the model", function()
  local got = results(A.FIRST[2])
  T.eq(got[ids_of(0, 1)[1]], "Created #1: Write the parser (pending)", "tool result in the next request")
end)

T.test("avante: an error reaches the model once prefixed", function()
  local sent = chat.ask("Look at #99", { tool_call_events({ '{"action":"get","id":99}' }) })
  local n = #requests - #sent
  T.eq(results(sent[2])[ids_of(n, 1)[1]], "Error: #99 not found", "one Error: prefix (avante adds it)")
end)

T.test("avante: six calls in one turn, errors between them, each result only its own", function()
  local sent = chat.ask("Do six things", {
    tool_call_events({
      '{"action":"create","subject":"Test the parser"}',
      '{"action":"get","id":42}',
      '{"action":"update","id":1,"status":"in_progress"}',
      '{"action":"update","id":77,"status":"completed"}',
      '{"action":"create","subject":"Document it","blockedBy":[2]}',
      '{"action":"delete","id":99}',
    }),
  })
  local n = #requests - #sent
  local ids = ids_of(n, 6)
  local got = results(sent[2])
  local want = {
    "Created #2: Test the parser (pending)",
    "Error: #42 not found",
    "Updated #1 (pending → in_progress)",
    "Error: #77 not found",
    "Created #3: Document it (pending)",
    "Error: #99 not found",
  }
  for i, text in ipairs(want) do
    T.eq(got[ids[i]], text, "result " .. i)
  end
end)

T.test("avante: the calls landed in this chat's own list, and the overlay shows it", function()
  local called
  local stop = todo.listen(function(event, id)
    if event == "executed" then
      called = id
    end
  end)
  chat.ask("List them", { tool_call_events({ '{"action":"list"}' }) })
  stop()
  T.contains(called or "", "avante:", "an avante list")
  T.eq(#todo.session(called):state().tasks, 3, "three tasks")
  T.eq(#todo.session("default"):state().tasks, 0, "nothing in a shared default list")
  -- The panel follows the session of the latest call: this chat's list.
  local win, buf = require("rpiv_todo.nvim").window()
  T.eq(type(win), "number", "overlay window")
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  T.eq(vim.trim(lines[1]), "● Todos (0/3)", "heading")
  A.SESSION = called
end)

T.test(
  "avante: the OpenAI provider drops JSON null (documented): a null metadata value deletes nothing there",
  function()
    chat.ask("Tag it", { tool_call_events({ '{"action":"update","id":2,"metadata":{"a":1,"b":2}}' }) })
    chat.ask("Untag it", { tool_call_events({ '{"action":"update","id":2,"metadata":{"a":null}}' }) })
    local meta = todo.session(A.SESSION):state().tasks[2].metadata
    -- avante's JsonParser turns null into nil: the update arrives as an empty metadata record.
    T.eq(meta.a, 1, "a is still there (avante dropped the null)")
    T.eq(meta.b, 2, "b kept")
  end
)

-- The model's tool calls as the Claude provider streams them (Anthropic messages SSE).
local function claude_tool_events(calls)
  local lines = {
    "event: message_start",
    "data: " .. vim.json.encode({
      type = "message_start",
      message = { id = "msg_1", usage = { input_tokens = 1, output_tokens = 1 } },
    }),
  }
  for i, arguments in ipairs(calls) do
    local index = i - 1
    vim.list_extend(lines, {
      "event: content_block_start",
      "data: " .. vim.json.encode({
        type = "content_block_start",
        index = index,
        content_block = {
          type = "tool_use",
          id = "toolu_" .. i .. "_" .. #requests,
          name = "todo",
          input = vim.empty_dict(),
        },
      }),
      "event: content_block_delta",
      "data: " .. vim.json.encode({
        type = "content_block_delta",
        index = index,
        delta = { type = "input_json_delta", partial_json = arguments },
      }),
      "event: content_block_stop",
      "data: " .. vim.json.encode({ type = "content_block_stop", index = index }),
    })
  end
  vim.list_extend(lines, {
    "event: message_delta",
    "data: "
      .. vim.json.encode({ type = "message_delta", delta = { stop_reason = "tool_use" }, usage = { output_tokens = 1 } }),
    "event: message_stop",
    "data: " .. vim.json.encode({ type = "message_stop" }),
  })
  return lines
end

local function claude_text_events(text)
  return {
    "event: message_start",
    "data: " .. vim.json.encode({
      type = "message_start",
      message = { id = "msg_2", usage = { input_tokens = 1, output_tokens = 1 } },
    }),
    "event: content_block_start",
    "data: "
      .. vim.json.encode({ type = "content_block_start", index = 0, content_block = { type = "text", text = "" } }),
    "event: content_block_delta",
    "data: "
      .. vim.json.encode({ type = "content_block_delta", index = 0, delta = { type = "text_delta", text = text } }),
    "event: content_block_stop",
    "data: " .. vim.json.encode({ type = "content_block_stop", index = 0 }),
    "event: message_delta",
    "data: "
      .. vim.json.encode({ type = "message_delta", delta = { stop_reason = "end_turn" }, usage = { output_tokens = 1 } }),
    "event: message_stop",
    "data: " .. vim.json.encode({ type = "message_stop" }),
  }
end

T.test("avante (Claude provider): JSON null arrives as vim.NIL and deletes the metadata key", function()
  Config.override({ provider = "claude", providers = { claude = { model = "claude-test" } } })
  local claude_chat = new_chat()
  claude_chat.session_ctx = {}
  local called
  local stop = todo.listen(function(event, id)
    if event == "executed" then
      called = id
    end
  end)
  local ok, sent = pcall(claude_chat.ask, "Tag it", {
    claude_tool_events({
      '{"action":"create","subject":"Claude task","metadata":{"a":1,"b":2}}',
      '{"action":"update","id":1,"metadata":{"a":null}}',
    }),
    claude_text_events("Tagged."),
  })
  stop()
  Config.override({ provider = "openai" })
  answers = {}
  assert(ok, sent)
  T.ok(A.find_tool(sent[1].body, "todo") ~= nil, "todo in the Anthropic request")
  T.eq(A.find_tool(sent[1].body, "todo").input_schema.properties.metadata.type, "object", "input_schema")
  local meta = todo.session(called):state().tasks[1].metadata
  T.eq(meta.a, nil, "a deleted")
  T.eq(meta.b, 2, "b kept")
  local results_text = vim.json.encode(sent[2].body.messages)
  T.contains(results_text, "Updated #1", "the tool result went back to Claude")
end)

T.test("avante: a second chat has its own list", function()
  local other = new_chat()
  other.session_ctx = {}
  local sent = other.ask("Fresh start", { tool_call_events({ '{"action":"list"}' }) })
  local n = #requests - #sent
  T.eq(results(sent[2])[ids_of(n, 1)[1]], "No tasks", "empty list")
end)

-- A history message as avante keeps it.
local function hmsg(uuid, role, content)
  return { uuid = uuid, timestamp = "2026-12-03 05:00:00", message = { role = role, content = content } }
end

T.test("avante: with a sidebar, the list's id is made for the chat and kept in its history", function()
  local avante = require("avante")
  local tab = vim.api.nvim_get_current_tabpage()
  local saved = avante.sidebars[tab]
  local bufnr = vim.api.nvim_get_current_buf()
  -- What the sidebar of a tab holds about its chat (avante.get() reads it).
  local history = { filename = "7.json", messages = { hmsg("u-7", "user", "Plan chat 7") } }
  avante.sidebars[tab] = { chat_history = history, code = { bufnr = bufnr } }
  local called
  local stop = todo.listen(function(event, id)
    if event == "executed" then
      called = id
    end
  end)
  local tool = require("rpiv_todo.adapters.avante").tool()
  local result = tool.func({ action = "create", subject = "In chat 7" }, { session_ctx = {} })
  local again = tool.func({ action = "list" }, { session_ctx = {} })
  stop()
  avante.sidebars[tab] = saved
  T.eq(result, "Created #1: In chat 7 (pending)", "result")
  T.ok(type(called) == "string" and called:find("^avante:%d+%-") ~= nil, "an id of its own: " .. tostring(called))
  T.eq(history.rpiv_todo.session, called, "kept in the chat's history (avante saves it with the file)")
  T.eq(history.rpiv_todo.nextId, 2, "with the list")
  T.eq(history.rpiv_todo.tasks[1].subject, "In chat 7", "with the list's tasks")
  T.contains(again, "#1 In chat 7", "the same list across requests (new session_ctx each prompt)")
end)

T.test("avante: a new chat in a reused history file starts empty", function()
  -- avante names a new chat after the number of history files, so a file name comes back
  -- after a chat is deleted; the chat that had it before must not hand its list on.
  local avante = require("avante")
  local tab = vim.api.nvim_get_current_tabpage()
  local saved = avante.sidebars[tab]
  local bufnr = vim.api.nvim_get_current_buf()
  avante.sidebars[tab] = {
    chat_history = {
      filename = "7.json",
      messages = { { uuid = "u-new", timestamp = "2026-12-03 06:10:00", message = { role = "user", content = "Hi" } } },
    },
    code = { bufnr = bufnr },
  }
  local listed = require("rpiv_todo.adapters.avante").tool().func({ action = "list" }, { session_ctx = {} })
  avante.sidebars[tab] = saved
  T.eq(listed, "No tasks", "the new chat's own, empty list")
end)

T.test("avante: a chat reopened from its history gets its list back from its todo calls", function()
  local avante = require("avante")
  local tab = vim.api.nvim_get_current_tabpage()
  local saved = avante.sidebars[tab]
  local bufnr = vim.api.nvim_get_current_buf()
  local function use(id, input)
    return hmsg("use-" .. id, "assistant", { { type = "tool_use", id = id, name = "todo", input = input } })
  end
  local function result(id, text)
    return hmsg("res-" .. id, "user", { { type = "tool_result", tool_use_id = id, content = text } })
  end
  -- What avante's history file of an earlier session holds (restarted editor: no list).
  avante.sidebars[tab] = {
    chat_history = {
      filename = "3.json",
      messages = {
        hmsg("u-3", "user", "Plan the release"),
        use("t1", { action = "create", subject = "Tag the release" }),
        result("t1", "Created #1: Tag the release (pending)"),
        use("t2", { action = "create", subject = "Write the notes" }),
        result("t2", "Created #2: Write the notes (pending)"),
        use("t3", { action = "update", id = 1, status = "in_progress" }),
        result("t3", "Updated #1 (pending → in_progress)"),
        use("t4", { action = "update", id = 2, status = "completed" }),
        -- t4 has no result: the editor stopped before it ran, so it does not count.
        use("x1", { action = "create", subject = "Not ours" }),
      },
    },
    code = { bufnr = bufnr },
  }
  local listed = require("rpiv_todo.adapters.avante").tool().func({ action = "list" }, { session_ctx = {} })
  avante.sidebars[tab] = saved
  T.eq(listed, "[in_progress] #1 Tag the release\n[pending] #2 Write the notes", "the list its calls built")
end)

T.test("avante: the reminder reaches the model through avante's system_prompt function", function()
  local avante = require("avante")
  local tab = vim.api.nvim_get_current_tabpage()
  local saved = avante.sidebars[tab]
  local bufnr = vim.api.nvim_get_current_buf()
  avante.sidebars[tab] = {
    chat_history = { filename = "8.json", messages = { hmsg("u-8", "user", "Plan chat 8") } },
    code = { bufnr = bufnr },
  }
  local adapter = require("rpiv_todo.adapters.avante")
  Config.system_prompt = function()
    return adapter.reminder() or ""
  end
  local sidebar_chat = new_chat()
  sidebar_chat.session_ctx = {}
  local settled = sidebar_chat.ask("Nothing yet", { text_events("Hello.") })
  T.eq(adapter.reminder(), nil, "no list yet: nil")
  local first = sidebar_chat.ask("Start the work", {
    tool_call_events({
      '{"action":"create","subject":"Write the parser"}',
      '{"action":"update","id":1,"status":"in_progress"}',
    }),
  })
  local next_turn = sidebar_chat.ask("Go on", { text_events("Going on.") })
  -- The user edits the chat's list between turns (:Todos add): the next request tells the
  -- model, once.
  local id = adapter.sidebar_session(avante.sidebars[tab])
  require("rpiv_todo.session").get(id):execute({ action = "create", subject = "Write the changelog" }, "user")
  local told = sidebar_chat.ask("Continue", { text_events("Continuing.") })
  local after = sidebar_chat.ask("And now", { text_events("Still going.") })
  Config.system_prompt = nil
  avante.sidebars[tab] = saved
  local function system_text(req)
    for _, m in ipairs(req.body.messages or {}) do
      if m.role == "system" then
        return type(m.content) == "string" and m.content or vim.json.encode(m.content)
      end
    end
    return ""
  end
  T.eq(system_text(settled[1]):find("Reminder from the todo tool", 1, true), nil, "no reminder before any task")
  T.eq(system_text(first[1]):find("Reminder from the todo tool", 1, true), nil, "none while nothing is in progress")
  T.contains(
    system_text(next_turn[1]),
    "Reminder from the todo tool: #1 Write the parser is still in_progress.",
    "next turn"
  )
  T.eq(system_text(next_turn[1]):find("Changed by others", 1, true), nil, "no one else changed it yet")
  T.contains(
    system_text(told[1]),
    '(Changed by others since your last call: #2 "Write the changelog" added by the user.)',
    "the user's edit, in the next request"
  )
  T.eq(system_text(after[1]):find("Changed by others", 1, true), nil, "once")
end)

T.test("avante: ACP plan update of the chat's list", function()
  local acp = require("rpiv_todo.adapters.acp")
  local n = acp.notification("sess_avante_1", todo.session(A.SESSION))
  A.capture_json("avante-acp-1", n)
  T.eq(#n.update.entries, 3, "three live tasks")
  T.eq(n.update.entries[1].status, "in_progress", "#1 in progress")
end)

A.save_requests(requests)
T.note(#requests .. " requests recorded by the plenary.curl stand-in, none sent")
T.finish("avante")
