-- tests/agents/copilotchat_spec.lua: the `todo` tool inside the real CopilotChat.nvim
-- (headless Neovim 0.12), driven through `require("CopilotChat").ask()`: a stand-in
-- provider (CopilotChat's own provider interface, pointed at no server) and a recording
-- plenary.curl answer each request with a scripted model reply, so CopilotChat's client
-- parses the tool calls, runs the trusted `todo` function through its own tool runner, puts
-- the results in the chat as tool messages and sends them back. Nothing leaves the process.
--
--   RPIV_DEPS     folder with the pinned plugins (default ../shared/deps from the repo)
--
-- Without the plugins the spec raises "skipped: ...": it never passes without running.

-- test.sh needs: CopilotChat.nvim plenary.nvim

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local A = dofile(T.root() .. "/tests/agents/common.lua")

A.require_deps({ "plenary.nvim", "CopilotChat.nvim" })

local requests = A.stub_curl("copilotchat")

-- The scripted model replies, one per request, in the stand-in provider's output shape.
local answers = {}
A.replies = function(opts, rec)
  if rec.method ~= "post" or type(opts.callback) ~= "function" then
    return
  end
  local answer = table.remove(answers, 1) or { content = "Done.", finish_reason = "stop" }
  vim.schedule(function()
    opts.callback({ status = 200, headers = {}, body = vim.json.encode(answer) })
  end)
end

local function calls(list)
  local tool_calls = {}
  for i, arguments in ipairs(list) do
    tool_calls[i] = { index = i - 1, id = "call_" .. #requests .. "_" .. i, name = "todo", arguments = arguments }
  end
  return { content = "", tool_calls = tool_calls, finish_reason = "tool_calls" }
end

local provider = {
  get_headers = function()
    return {}
  end,
  get_models = function()
    return { { id = "stand-in", name = "stand-in", streaming = false, tools = true } }
  end,
  prepare_input = function(inputs, options)
    return { messages = inputs, tools = options.tools, model = options.model.id, stream = false }
  end,
  prepare_output = function(output)
    return output
  end,
  get_url = function()
    return "http://127.0.0.1:9/stand-in/chat"
  end,
}

local history = vim.fn.tempname()
local todo = require("rpiv_todo")
todo.setup({ locale = "en" })
local adapter = require("rpiv_todo.adapters.copilotchat")
local cc = require("CopilotChat")
cc.setup({
  model = "stand-in",
  providers = {
    copilot = { disabled = true },
    github_models = { disabled = true },
    stand_in = provider,
  },
  functions = adapter.functions(),
  tools = "rpiv_todo",
  trusted_tools = { "rpiv_todo" },
  history_path = history,
  log_level = "error",
})
-- Its user commands (:CopilotChatReset, :CopilotChatLoad); the runner starts with --noplugin.
vim.cmd("runtime plugin/CopilotChat.lua")

local sessions = require("rpiv_todo.session")

---The tool messages of the chat, as CopilotChat stores them (text trimmed).
local function tool_messages()
  local out = {}
  for _, message in ipairs(cc.chat:get_messages()) do
    if message.role == "tool" then
      out[#out + 1] = { id = message.tool_call_id, text = vim.trim(message.content) }
    end
  end
  return out
end

---How many of the chat's assistant messages say "Done." (the model's closing answer).
local function dones()
  local n = 0
  for _, message in ipairs(cc.chat:get_messages()) do
    if message.role == "assistant" and message.content:find("Done.", 1, true) then
      n = n + 1
    end
  end
  return n
end

---Ask, with the model answering `first`, then "Done."; wait for that closing answer.
local function ask(prompt, first)
  local before = dones()
  answers = { first, { content = "Done.", finish_reason = "stop" } }
  cc.ask(prompt)
  A.wait_for(function()
    return dones() > before
  end, "the closing answer to '" .. prompt .. "'")
end

local chat1
T.test("the todo function reaches the model with its schema and guidance", function()
  ask("Plan the work", calls({ '{"action":"create","subject":"Write the parser"}' }))
  local body = requests[1].body
  local tool
  for _, t in ipairs(body.tools or {}) do
    if t.name == "todo" then
      tool = t
    end
  end
  T.ok(tool ~= nil, "todo is among the tools sent")
  T.same(tool.schema.required, { "action" }, "schema.required")
  T.same(tool.schema.properties.action.enum, { "create", "update", "list", "get", "delete", "clear" }, "actions")
  T.ok(tool.description:find("Guidelines:", 1, true) ~= nil, "the guidelines are in the description")
  T.ok(
    tool.description:find('{"action":"update","id":3,"status":"completed"}', 1, true) ~= nil,
    "the call shape from the guidelines"
  )
end)

T.test("a call's reply goes back to the model as the tool result", function()
  local tools = tool_messages()
  T.eq(#tools, 1, "one tool message")
  T.eq(tools[1].text, "Created #1: Write the parser (pending)", "reply")
  local second = requests[2].body
  local found
  for _, message in ipairs(second.messages or {}) do
    if message.role == "tool" then
      found = vim.trim(message.content)
    end
  end
  T.eq(found, "Created #1: Write the parser (pending)", "the tool result in the next request")
  chat1 = adapter.chat_session(cc.chat)
  T.ok(chat1 ~= nil and chat1:find("^copilotchat:") ~= nil, "the chat has its own session: " .. tostring(chat1))
  T.eq(#sessions.get(chat1):state().tasks, 1, "one task in the chat's list")
end)

T.test("a rejected call is reported as CopilotChat reports a failed function", function()
  ask("Finish it", calls({ '{"action":"update","id":42,"status":"completed"}' }))
  local tools = tool_messages()
  T.eq(tools[#tools].text, "Error: #42 not found", "the error text")
  T.eq(adapter.chat_session(cc.chat), chat1, "same chat, same list")
  T.eq(sessions.get(chat1):state().nextId, 2, "the list is unchanged")
end)

T.test("a rejected call raises its text from resolve", function()
  local fn = adapter.functions({ session = "copilotchat-direct" }).todo
  local ok, err = pcall(fn.resolve, { action = "get", id = 7 }, nil)
  T.eq(ok, false, "raised")
  T.eq(err, "Error: #7 not found", "message")
  local resources = fn.resolve({ action = "create", subject = "x" }, nil)
  T.same(resources, { { data = "Created #1: x (pending)", name = "todo", mimetype = "text/plain" } }, "resource")
end)

T.test(":CopilotChatReset starts a new list", function()
  cc.save("first")
  vim.cmd("CopilotChatReset")
  ask("Another job", calls({ '{"action":"create","subject":"Other"}', '{"action":"list"}' }))
  local chat2 = adapter.chat_session(cc.chat)
  T.ok(chat2 ~= nil and chat2 ~= chat1, "a new session: " .. tostring(chat2))
  local tools = tool_messages()
  T.eq(tools[1].text, "Created #1: Other (pending)", "numbering starts again")
  T.eq(tools[2].text, "[pending] #1 Other", "the new chat's list")
  T.eq(sessions.get(chat1):state().tasks[1].subject, "Write the parser", "the first chat's list is kept")
end)

T.test("a chat loaded by name gets its own list back", function()
  vim.cmd("CopilotChatLoad first")
  T.eq(adapter.chat_session(cc.chat), chat1, "the loaded chat's session")
  ask("Where were we?", calls({ '{"action":"list"}' }))
  local tools = tool_messages()
  T.eq(tools[#tools].text, "[pending] #1 Write the parser", "the loaded chat's list")
end)

T.test("in CopilotChat's window the panel shows that chat's list; elsewhere the latest call's", function()
  local nv = require("rpiv_todo.nvim")
  local bufnr = cc.chat.bufnr
  T.eq(type(bufnr), "number", "the chat has a buffer")
  T.eq(adapter.buffer_session(bufnr), chat1, "the chat window's session")
  T.eq(adapter.buffer_session(vim.api.nvim_create_buf(false, true)), nil, "another buffer: none")
  local other = sessions.get("copilotchat-elsewhere") or require("rpiv_todo").session("copilotchat-elsewhere")
  nv.execute({ action = "create", subject = "Elsewhere" }, { session = "copilotchat-elsewhere" })
  T.ok(other ~= nil, "a second session")
  local win = vim.api.nvim_open_win(bufnr, true, { relative = "editor", row = 0, col = 0, width = 40, height = 5 })
  vim.cmd("doautocmd WinEnter")
  T.eq(require("rpiv_todo").foreground().id, chat1, "in the chat's window: the chat's list")
  vim.api.nvim_win_close(win, true)
  vim.cmd("new") -- a window of another buffer
  vim.cmd("doautocmd WinEnter")
  T.eq(require("rpiv_todo").foreground().id, "copilotchat-elsewhere", "elsewhere: the latest call's list")
  vim.cmd("close")
end)

T.test("options are checked", function()
  local ok, err = pcall(adapter.functions, { sesion = "x" })
  T.eq(ok, false, "unknown key raises")
  T.eq(err, "(rpiv_todo) copilotchat: sesion: unknown option (expected session, group)", "message")
  T.eq(adapter.functions().todo.group, "rpiv_todo", "group")
end)

T.finish()
