-- tests/agents/mcphub_spec.lua: the `todo` tool as a native server of the real mcphub.nvim
-- (headless Neovim 0.12). Calls go through mcphub's own code: its codecompanion extension
-- (`use_mcp_tool`, which names the calling chat), the hub's `call_tool` and
-- `access_resource` as its other extensions call them, down to the native server's request
-- and response objects and back through mcphub's response parsing. The hub's external
-- process (the `mcp-hub` npm package) serves only external servers and is never started.
--
--   RPIV_DEPS     folder with the pinned plugins (default ../shared/deps from the repo)
--
-- Without the plugins the spec raises "skipped: ...": it never passes without running.

-- test.sh needs: mcphub.nvim plenary.nvim

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local A = dofile(T.root() .. "/tests/agents/common.lua")

A.require_deps({ "plenary.nvim", "mcphub.nvim" })
A.stub_curl("mcphub") -- nothing may leave the process

local todo = require("rpiv_todo")
todo.setup({ locale = "en" })
local adapter = require("rpiv_todo.adapters.mcphub")
local sessions = require("rpiv_todo.session")

local server, err = adapter.register()
local State = require("mcphub.state")
local hub = require("mcphub.hub"):new({ port = 0, config = vim.fn.tempname() .. ".json" })
State.config.auto_approve = true
State.hub_instance = hub
State.setup_state = "completed"

---Call the tool through the hub the way mcphub's extensions do; the parsed response.
local function hub_call(args, caller)
  local got, got_err, done = nil, nil, false
  hub:call_tool("rpiv_todo", "todo", args, {
    caller = caller,
    parse_response = true,
    callback = function(res, e)
      got, got_err, done = res, e, true
    end,
  })
  A.wait_for(function()
    return done
  end, "the tool's answer")
  return got, got_err
end

---Call through mcphub's codecompanion extension (`use_mcp_tool`) for a chat.
local function codecompanion_call(chat, tool_input)
  local out
  require("mcphub.extensions.codecompanion.core").execute_mcp_tool(
    { server_name = "rpiv_todo", tool_name = "todo", tool_input = tool_input },
    { chat = chat },
    function(result)
      out = result
    end,
    { action = "use_mcp_tool" }
  )
  A.wait_for(function()
    return out ~= nil
  end, "codecompanion's use_mcp_tool answer")
  return out
end

T.test("register adds the native server rpiv_todo with the todo tool and the /todos resource", function()
  T.eq(err, nil, "no error")
  T.ok(server ~= nil, "a server")
  local native = require("mcphub").is_native_server("rpiv_todo")
  T.ok(native ~= nil, "mcphub knows it")
  local tool = native.capabilities.tools[1]
  T.eq(tool.name, "todo", "tool name")
  T.same(tool.inputSchema.required, { "action" }, "inputSchema.required")
  T.contains(tool.description, '{"action":"update","id":3,"status":"completed"}', "guidance in the description")
  T.eq(native.capabilities.resources[1].uri, "rpiv_todo://todos", "resource")
  local again = adapter.register()
  T.ok(again == native, "registering again keeps the server")
end)

local cc = require("rpiv_todo.adapters.codecompanion")
local chat7, chat8 = { id = 7 }, { id = 7 } -- codecompanion's ids collide (math.random)

T.test("a call from a codecompanion chat answers with the reply, in that chat's list", function()
  local out = codecompanion_call(chat7, '{"action":"create","subject":"Write the parser"}')
  T.eq(out.status, "success", "status")
  T.eq(out.data.text, "Created #1: Write the parser (pending)", "reply")
  out = codecompanion_call(chat8, { action = "create", subject = "Other chat" })
  T.eq(out.data.text, "Created #1: Other chat (pending)", "another chat with the same id, another list")
  T.ok(cc.session_of(chat7) ~= cc.session_of(chat8), "two lists")
  T.eq(sessions.get(cc.session_of(chat7)):state().tasks[1].subject, "Write the parser", "the first chat's list")
  T.eq(sessions.get(cc.session_of(chat8)):state().tasks[1].subject, "Other chat", "the other chat's list")
end)

T.test("a rejected call is an error response, the list unchanged", function()
  local out = codecompanion_call(chat7, { action = "update", id = 42, status = "completed" })
  T.eq(out.status, "error", "codecompanion sees an error")
  T.eq(out.data, "Error: #42 not found", "error text")
  local res = hub_call({ action = "get", id = 9 }, nil)
  T.eq(res.error, "Error: #9 not found", "the hub marks it as an error")
  T.eq(sessions.get(cc.session_of(chat7)):state().nextId, 2, "unchanged")
end)

T.test("a call that names no chat uses the working directory's list", function()
  local res = hub_call({ action = "create", subject = "Here" }, nil)
  T.eq(res.error, nil, "no error")
  T.eq(res.text, "Created #1: Here (pending)", "reply")
  local id = "mcphub:" .. vim.fn.getcwd()
  T.eq(sessions.get(id):state().tasks[1].subject, "Here", "the cwd's list")
  res = hub_call({ action = "list" }, { type = "hub_ui" })
  T.eq(res.text, "[pending] #1 Here", "an unknown caller uses it too")
end)

T.test("a call from CopilotChat uses its chat's list", function()
  local chat = {
    get_messages = function()
      return { { id = "first-message", role = "user", content = "hi" } }
    end,
  }
  local res = hub_call({ action = "create", subject = "From CopilotChat" }, {
    type = "copilotchat",
    copilotchat = { chat = chat },
  })
  T.eq(res.text, "Created #1: From CopilotChat (pending)", "reply")
  T.eq(sessions.get("copilotchat:first-message"):state().tasks[1].subject, "From CopilotChat", "list")
end)

T.test("the resource rpiv_todo://todos reads the caller's list as /todos shows it", function()
  local got, done
  hub:access_resource("rpiv_todo", "rpiv_todo://todos", {
    caller = { type = "codecompanion", codecompanion = { chat = chat7 } },
    parse_response = true,
    callback = function(res)
      got, done = res, true
    end,
  })
  A.wait_for(function()
    return done
  end, "the resource")
  -- mcphub puts "Resource <uri>:" before a resource's text when it parses the response.
  T.eq(
    got.text,
    "Resource rpiv_todo://todos:\n1 pending\n── Pending ──\n  ○ #1 Write the parser",
    "/todos text, as mcphub hands it to the chat"
  )
end)

T.test("options are checked", function()
  local ok, e = pcall(adapter.register, { sesion = "x" })
  T.eq(ok, false, "raised")
  T.eq(e, "(rpiv_todo) mcphub: sesion: unknown option (expected session, server)", "message")
end)

T.finish()
