-- tests/agents/codecompanion_spec.lua: the `todo` tool inside the real codecompanion.nvim,
-- driven through its own chat, Tools, Orchestrator and Runner (headless Neovim 0.12). The
-- model's answers are handed to `Chat:done(output, nil, tool_calls)`, which is what
-- codecompanion's HTTP client calls; plenary.curl is replaced by a recorder, so no request
-- leaves the process and every request body codecompanion would send is kept.
--
--   RPIV_DEPS            folder with the pinned plugins (default ../shared/deps from the repo)
--   RPIV_CODECOMPANION   codecompanion.nvim (v19, default) or codecompanion.nvim-v17
--   RPIV_CAPTURE         folder to write the request bodies and ACP notifications to, for
--                        tests/agents/check_requests.py (schemas against the meta-schemas,
--                        OpenAI's strict rules, ACP's schema)
--
-- Without the plugins the spec raises "skipped: ...": it never passes without running.

-- test.sh needs: plenary.nvim
-- test.sh each: RPIV_CODECOMPANION=codecompanion.nvim codecompanion.nvim-v17
-- test.sh capture: yes

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local A = dofile(T.root() .. "/tests/agents/common.lua")

local cc_dir = os.getenv("RPIV_CODECOMPANION") or "codecompanion.nvim"
A.require_deps({ "plenary.nvim", cc_dir })
local V17 = cc_dir:find("v17", 1, true) ~= nil
local label = V17 and "codecompanion-v17" or "codecompanion-v19"

-- Every request codecompanion would send: { url, body (decoded JSON) }.
local requests = A.stub_curl(label)
-- Model lists (Anthropic's adapter asks for one, and waits): an empty list, at once.
A.replies = function(opts, rec)
  if rec.method == "get" and type(opts.callback) == "function" then
    opts.callback({ status = 200, body = '{"data":[]}' })
  end
end

vim.env.OPENAI_API_KEY = "sk-test-not-a-key"
vim.env.ANTHROPIC_API_KEY = "sk-ant-test-not-a-key"
vim.env.GEMINI_API_KEY = "test-not-a-key"

local todo = require("rpiv_todo")
todo.setup({ locale = "en" })
vim.cmd("runtime plugin/rpiv_todo.lua")

local chat_opts = {
  adapter = "openai",
  tools = {
    todo = {
      description = "Keep a task list for multi-step work",
      callback = function()
        return require("rpiv_todo.adapters.codecompanion").tool()
      end,
    },
    opts = { auto_submit_errors = true, auto_submit_success = true, default_tools = { "todo" } },
  },
}
local cc = require("codecompanion")
if V17 then
  cc.setup({ strategies = { chat = chat_opts }, opts = { log_level = "ERROR" } })
else
  cc.setup({ interactions = { chat = chat_opts }, opts = { log_level = "ERROR" } })
end

-- A new chat with `adapter`, its first prompt submitted (one request recorded).
local function new_chat(adapter, prompt)
  local before = #requests
  local args = { messages = { { role = "user", content = prompt } }, auto_submit = true }
  if V17 then
    args.fargs = { adapter }
  else
    args.params = { adapter = adapter }
  end
  local chat = cc.chat(args)
  A.wait_for(function()
    return #requests > before
  end, "the first request of a " .. adapter .. " chat")
  return chat
end

local call_n = 0
-- A tool call as the adapter's parser hands it to Chat:done.
local function call(adapter, arguments)
  call_n = call_n + 1
  local id = "call_" .. call_n
  local fn = { name = "todo", arguments = arguments }
  if adapter == "openai_responses" then
    return { id = "fc_" .. call_n, call_id = id, type = "function", ["function"] = fn }
  end
  return { _index = call_n, id = id, type = "function", ["function"] = fn }
end

-- The model answers with `calls` (JSON texts); codecompanion runs them and auto-submits
-- the results. Returns the request that carried them and the call ids.
local function answer(chat, adapter, calls)
  local before = #requests
  local tool_calls, ids = {}, {}
  for i, arguments in ipairs(calls) do
    tool_calls[i] = call(adapter, arguments)
    ids[i] = tool_calls[i].call_id or tool_calls[i].id
  end
  chat.status = "success"
  chat:done({ "Working on it." }, nil, tool_calls)
  A.wait_for(function()
    return #requests > before
  end, "the request that carries the tool results")
  return requests[#requests], ids
end

-- The tool results in a request body, by call id (chat completions and responses shapes).
local function results(req)
  local out = {}
  for _, m in ipairs(req.body.messages or {}) do
    if m.role == "tool" then
      out[m.tool_call_id] = m.content
    end
  end
  for _, item in ipairs(req.body.input or {}) do
    if item.type == "function_call_output" then
      out[item.call_id] = item.output
    end
  end
  return out
end

local function session_of(chat)
  return require("rpiv_todo.adapters.codecompanion").session_of(chat)
end

T.test(label .. ": the first request carries the todo schema and system prompt", function()
  local chat = new_chat("openai", "Plan the parser work")
  local req = requests[#requests]
  T.contains(req.url, "/chat/completions", "url")
  local tool = A.find_tool(req.body, "todo")
  T.ok(tool ~= nil, "todo in tools")
  T.eq(tool["function"].strict, false, "not strict for chat completions")
  T.eq(tool["function"].parameters.properties.metadata.additionalProperties, true, "free-form metadata")
  T.contains(vim.json.encode(req.body.messages), "Todo tool", "system prompt sent")
  A.CHAT = chat
end)

T.test(label .. ": one create reaches the chat, the list and the overlay", function()
  local chat = A.CHAT
  local req, ids = answer(chat, "openai", { '{"action":"create","subject":"Write the parser"}' })
  T.eq(results(req)[ids[1]], "Created #1: Write the parser (pending)", "tool result sent to the model")
  local state = todo.session(session_of(chat)):state()
  T.eq(state.tasks[1].subject, "Write the parser", "the chat's own list")
  T.eq(#todo.session("default"):state().tasks, 0, "nothing in a shared default list")
  -- The panel follows the session of the latest call: this chat's list.
  local win, buf = require("rpiv_todo.nvim").window()
  T.eq(type(win), "number", "overlay window")
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  T.eq(vim.trim(lines[1]), "● Todos (0/1)", "heading")
  T.contains(lines[2] or "", "Write the parser", "row")
end)

T.test(label .. ": an error takes the error path, the text said once", function()
  local req, ids = answer(A.CHAT, "openai", { '{"action":"get","id":42}' })
  T.eq(results(req)[ids[1]], "Error: #42 not found", "error result")
end)

T.test(label .. ": six calls in one turn, errors between them, each result only its own", function()
  local req, ids = answer(A.CHAT, "openai", {
    '{"action":"create","subject":"Test the parser"}',
    '{"action":"get","id":42}',
    '{"action":"update","id":1,"status":"in_progress"}',
    '{"action":"update","id":77,"status":"completed"}',
    '{"action":"create","subject":"Document it","blockedBy":[2]}',
    '{"action":"delete","id":99}',
  })
  local got = results(req)
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

T.test(label .. ": JSON null deletes a metadata key", function()
  answer(A.CHAT, "openai", { '{"action":"update","id":2,"metadata":{"a":1,"b":2}}' })
  local req, ids = answer(A.CHAT, "openai", { '{"action":"update","id":2,"metadata":{"a":null}}' })
  T.eq(results(req)[ids[1]], "Updated #2", "result")
  local meta = todo.session(session_of(A.CHAT)):state().tasks[2].metadata
  T.eq(meta.a, nil, "a deleted")
  T.eq(meta.b, 2, "b kept")
end)

T.test(label .. ": a turn that ends with a task in_progress leaves the reminder for the next request", function()
  local chat = A.CHAT
  chat.status = "success"
  chat:done({ "The parser is being written." }, nil, nil)
  local hidden
  for _, m in ipairs(chat.messages) do
    if m._meta and m._meta.tag == "rpiv_todo_reminder" then
      hidden = m
    end
  end
  T.ok(hidden ~= nil, "a hidden reminder message")
  T.eq(hidden.role, "user", "as a user message")
  T.contains(hidden.content, "#1 Write the parser", "names the task")
  T.eq(hidden.content, todo.reminder(session_of(chat)), "the text of todo.reminder")
  -- Settled: the next turn ends with nothing in progress, and the stale reminder goes.
  answer(chat, "openai", { '{"action":"update","id":1,"status":"completed"}' })
  chat.status = "success"
  chat:done({ "Done." }, nil, nil)
  local after = 0
  for _, m in ipairs(chat.messages) do
    after = after + ((m._meta and m._meta.tag == "rpiv_todo_reminder") and 1 or 0)
  end
  T.eq(after, 0, "nothing in progress: no reminder left in the chat")
end)

T.test(label .. ": the user's edits reach the model once, with its next request", function()
  local chat = new_chat("openai", "Plan the release")
  answer(chat, "openai", {
    '{"action":"create","subject":"Write the notes"}',
    '{"action":"create","subject":"Tag it"}',
  })
  chat.status = "success"
  chat:done({ "Planned." }, nil, nil)
  -- The user, in the editor (:Todos done, :Todos add), on this chat's list.
  local session = require("rpiv_todo.session").get(session_of(chat))
  session:execute({ action = "update", id = 2, status = "completed" }, "user")
  session:execute({ action = "create", subject = "Write the changelog" }, "user")
  local before = #requests
  chat:add_buf_message({ role = "user", content = "Go on" })
  chat:submit()
  A.wait_for(function()
    return #requests > before
  end, "the next request")
  local want =
    '(Changed by others since your last call: #2 completed by the user; #3 "Write the changelog" added by the user.)'
  local found = 0
  for _, m in ipairs(requests[#requests].body.messages or {}) do
    if m.content == want then
      found = found + 1
      T.eq(m.role, "user", "as a user message")
    end
  end
  T.eq(found, 1, "the request carries the note once")
  local hidden = chat.messages[#chat.messages]
  T.eq(hidden._meta and hidden._meta.tag, "rpiv_todo_changes", "kept in the chat, hidden")
  T.eq(hidden.opts and hidden.opts.visible, false, "not shown")
  -- The model's next call: its reply says nothing it was already told.
  local req = answer(chat, "openai", { '{"action":"get","id":3}' })
  local got
  for _, text in pairs(results(req)) do
    got = text
  end
  T.eq(got:find("Changed by others", 1, true), nil, "told once")
  -- And the user hears of the model's changes in its own next edit.
  answer(chat, "openai", { '{"action":"update","id":1,"status":"in_progress"}' })
  T.contains(
    session:execute({ action = "list" }, "user").content[1].text,
    "(Changed by others since your last call: #1 started by codecompanion.)",
    "named as the front end"
  )
end)

T.test(label .. ": a second chat has its own list", function()
  local other = new_chat("openai", "Another task")
  local req, ids = answer(other, "openai", { '{"action":"list"}' })
  T.eq(results(req)[ids[1]], "No tasks", "empty list in the new chat")
  T.eq(#todo.session(session_of(A.CHAT)):state().tasks, 3, "the first chat keeps its three")
end)

T.test(label .. ": openai_responses gets the strict form, calls in that form work", function()
  local chat = new_chat("openai_responses", "Plan it strictly")
  local req = requests[#requests]
  T.contains(req.url, "/responses", "url")
  local tool = A.find_tool(req.body, "todo")
  T.eq(tool.strict, true, "strict")
  T.eq(tool.parameters.additionalProperties, false, "closed object")
  T.eq(#tool.parameters.required, 13, "every property required (the twelve fields and tasks, the batch form)")
  T.eq(tool.parameters.strict, nil, "codecompanion's marker is not sent")
  T.eq(tool.parameters.properties.metadata.type[1], "string", "metadata as text")
  local null_all = '"description":null,"activeForm":null,"status":null,"id":null,"blockedBy":null,'
    .. '"addBlockedBy":null,"removeBlockedBy":null,"owner":null,"includeDeleted":null'
  local resp, ids = answer(chat, "openai_responses", {
    '{"action":"create","subject":"Strict task","metadata":"{\\"area\\":\\"parser\\",\\"k\\":1}",' .. null_all .. "}",
    '{"action":"update","id":1,"subject":null,"description":null,"activeForm":null,"status":"in_progress",'
      .. '"blockedBy":null,"addBlockedBy":null,"removeBlockedBy":null,"owner":null,'
      .. '"metadata":"{\\"area\\":null}","includeDeleted":null}',
    '{"action":"update","id":1,"metadata":"[1]","subject":null}',
  })
  local got = results(resp)
  T.eq(got[ids[1]], "Created #1: Strict task (pending)", "strict create")
  T.eq(got[ids[2]], "Updated #1 (pending → in_progress)", "strict update")
  T.eq(got[ids[3]], "Error: metadata: expected a JSON object written as text, got an array", "bad metadata text")
  local task = todo.session(session_of(chat)):state().tasks[1]
  T.eq(task.metadata.area, nil, "null in the text deleted the key")
  T.eq(task.metadata.k, 1, "k kept")
  A.STRICT_CHAT = chat
end)

T.test(label .. ": a chat moved from openai_responses to openai gets the normal form back", function()
  local chat = new_chat("openai_responses", "Start strict")
  T.eq(A.find_tool(requests[#requests].body, "todo").strict, true, "strict at first")
  T.ok(chat:change_adapter("openai") ~= false, "adapter changed")
  A.wait_for(function()
    return chat.adapter.name == "openai"
  end, "the adapter change")
  local req, ids = answer(chat, "openai", { '{"action":"create","subject":"After the switch","metadata":{"x":1}}' })
  T.eq(results(req)[ids[1]], "Created #1: After the switch (pending)", "normal-form call")
  local tool = A.find_tool(req.body, "todo")
  T.eq(tool["function"].strict, false, "not strict")
  T.eq(tool["function"].parameters.additionalProperties, nil, "normal form")
  T.eq(tool["function"].parameters.properties.metadata.type, "object", "metadata object")
end)

T.test(label .. ": Anthropic and Gemini requests carry the schema too", function()
  local anthropic = new_chat("anthropic", "Plan with Claude")
  T.ok(A.find_tool(requests[#requests].body, "todo") ~= nil, "anthropic tools")
  local gemini = new_chat("gemini", "Plan with Gemini")
  T.ok(A.find_tool(requests[#requests].body, "todo") ~= nil, "gemini tools")
  T.ok(anthropic ~= gemini, "two chats")
end)

T.test(label .. ": ACP plan updates of a chat's list", function()
  local acp = require("rpiv_todo.adapters.acp")
  A.capture_json(label .. "-acp-1", acp.notification("sess_cc_1", todo.session(session_of(A.CHAT))))
  A.capture_json(label .. "-acp-empty", acp.notification("sess_cc_2", todo.session("codecompanion:none")))
  local n = acp.notification("sess_cc_1", todo.session(session_of(A.CHAT)))
  T.eq(#n.update.entries, 3, "three live tasks")
  T.eq(vim.json.encode(acp.entries({ tasks = {}, nextId = 1 })), "[]", "empty plan is an array")
end)

A.save_requests(requests)
T.note(#requests .. " requests recorded by the plenary.curl stand-in, none sent")
T.finish(label)
