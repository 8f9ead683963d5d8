-- tests/lua/front_ends_spec.lua: the CopilotChat.nvim and mcphub.nvim adapters called the
-- way those plugins call them, from a plain interpreter (luajit, lua5.1, lua5.4).
-- CopilotChat calls `resolve(input, source)` and reads the `data` of the resources it
-- returns, or the message of the error it raises; mcphub calls a native tool's
-- `handler(req, res)` with `req.params` (the arguments) and `req.caller` (who called), and
-- `res:text(t):send()` / `res:error(t)` answer. The plugins themselves are driven in
-- tests/agents/. Expected texts are the reducer's, hand-written.

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")

local todo = require("rpiv_todo")
local copilotchat = require("rpiv_todo.adapters.copilotchat")
local mcphub = require("rpiv_todo.adapters.mcphub")
local sessions = require("rpiv_todo.session")

T.before_each(function()
  todo.sessions.reset()
  todo.setup({ locale = "en" })
  package.loaded["CopilotChat"] = nil
end)

-- Stand-ins for mcphub's ToolResponse and ResourceResponse (native/utils/response.lua).
local function response()
  local res = { result = { content = {} } }
  function res:text(text)
    self.result.content[#self.result.content + 1] = { type = "text", text = text }
    return self
  end
  function res:send()
    return { result = self.result }
  end
  function res.error(_, message)
    return { result = { isError = true, content = { { type = "text", text = message } } } }
  end
  return res
end

local function resource_response()
  local res = { result = { contents = {} } }
  function res:text(text, mime)
    self.result.contents[#self.result.contents + 1] = { text = text, mimeType = mime }
    return self
  end
  function res:send()
    return { result = self.result }
  end
  return res
end

-- A stand-in for CopilotChat's chat, known by its first message.
local function chat_with_first(id)
  return {
    get_messages = function()
      return { { id = id, role = "user", content = "hi" } }
    end,
  }
end

T.test("copilotchat: functions() is one todo entry with group, description, schema and resolve", function()
  local fns = copilotchat.functions()
  local names = {}
  for name in pairs(fns) do
    names[#names + 1] = name
  end
  T.same(names, { "todo" }, "entries")
  local fn = fns.todo
  T.eq(fn.group, "rpiv_todo", "group")
  T.same(fn.schema.required, { "action" }, "schema")
  T.contains(fn.description, "Guidelines:", "guidance in the description")
  T.eq(type(fn.resolve), "function", "resolve")
  T.eq(copilotchat.functions({ group = "mine" }).todo.group, "mine", "group option")
end)

T.test("copilotchat: resolve answers with the reply as a resource", function()
  local fn = copilotchat.functions().todo
  T.same(
    fn.resolve({ action = "create", subject = "Write the parser" }, {}),
    { { data = "Created #1: Write the parser (pending)", name = "todo", mimetype = "text/plain" } },
    "resources"
  )
  T.eq(fn.resolve('{"action":"list"}', {})[1].data, "[pending] #1 Write the parser", "JSON text works too")
end)

T.test("copilotchat: a rejected call raises its text and leaves the list alone", function()
  local fn = copilotchat.functions().todo
  fn.resolve({ action = "create", subject = "A" }, {})
  local ok, err = pcall(fn.resolve, { action = "update", id = 42, status = "completed" }, {})
  T.eq(ok, false, "raised")
  T.eq(err, "Error: #42 not found", "the reducer's text, no position prefix")
  T.eq(sessions.get("default"):state().nextId, 2, "unchanged")
end)

T.test("copilotchat: each chat (first message) has its own list; the session option decides", function()
  local fn = copilotchat.functions().todo
  package.loaded["CopilotChat"] = { chat = chat_with_first("m-1") }
  fn.resolve({ action = "create", subject = "In chat one" }, {})
  package.loaded["CopilotChat"] = { chat = chat_with_first("m-2") }
  T.eq(fn.resolve({ action = "create", subject = "In chat two" }, {})[1].data, "Created #1: In chat two (pending)")
  T.eq(sessions.get("copilotchat:m-1"):state().tasks[1].subject, "In chat one", "chat one")
  local seen
  local named = copilotchat.functions({
    session = function(source, chat)
      seen = { source, chat }
      return "mine"
    end,
  }).todo
  named.resolve({ action = "create", subject = "Named" }, { bufnr = 3 })
  T.same(seen[1], { bufnr = 3 }, "the function receives the source")
  T.eq(sessions.get("mine"):state().tasks[1].subject, "Named", "the named list")
end)

T.test(
  "copilotchat: a chat is named by its first message with text (a loaded chat starts with an empty one)",
  function()
    local loaded = {
      get_messages = function()
        return {
          { id = "fresh-empty", role = "user", content = "" },
          { id = "saved-first", role = "user", content = "\nPlan the work\n" },
        }
      end,
    }
    T.eq(copilotchat.chat_session(loaded), "copilotchat:saved-first", "the saved first prompt names it")
    T.eq(copilotchat.chat_session(chat_with_first("p-1")), "copilotchat:p-1", "a new chat")
    local empty = {
      get_messages = function()
        return { { id = "e", role = "user", content = "  " } }
      end,
    }
    T.eq(copilotchat.chat_session(empty), nil, "no text yet: no name")
    T.eq(copilotchat.chat_session(nil), nil, "no chat")
  end
)

T.test("copilotchat: options are checked", function()
  T.raises(function()
    copilotchat.functions({ session = 3 })
  end, "(rpiv_todo) copilotchat: session: expected a session id string or a function(source, chat) returning one")
  T.raises(function()
    copilotchat.functions({ group = "" })
  end, "(rpiv_todo) copilotchat: group: expected a non-empty string")
  T.raises(function()
    copilotchat.functions("x")
  end, "(rpiv_todo) copilotchat: expected a table of options { session, group }")
end)

T.test("mcphub: the server definition has the tool and the /todos resource", function()
  local def = mcphub.server()
  T.eq(def.name, "rpiv_todo", "server name")
  local tool = def.capabilities.tools[1]
  T.eq(tool.name, "todo", "tool")
  T.same(tool.inputSchema.required, { "action" }, "inputSchema")
  T.contains(tool.description, "Guidelines:", "guidance")
  T.eq(def.capabilities.resources[1].uri, "rpiv_todo://todos", "resource uri")
  T.eq(mcphub.server({ server = "todo2" }).name, "todo2", "server option")
end)

T.test("mcphub: the handler answers with the reply, or an error response", function()
  local tool = mcphub.server().capabilities.tools[1]
  local chat = { id = 5 }
  local caller = { type = "codecompanion", codecompanion = { chat = chat } }
  local out = tool.handler({ params = { action = "create", subject = "A" }, caller = caller }, response())
  T.same(out, { result = { content = { { type = "text", text = "Created #1: A (pending)" } } } }, "reply")
  out = tool.handler({ params = { action = "get", id = 9 }, caller = caller }, response())
  T.same(
    out,
    { result = { isError = true, content = { { type = "text", text = "Error: #9 not found" } } } },
    "error response"
  )
  local id = require("rpiv_todo.adapters.codecompanion").session_of(chat)
  T.eq(sessions.get(id):state().nextId, 2, "the chat's list (the codecompanion adapter's), unchanged by the error")
end)

T.test("mcphub: the caller picks the list", function()
  local tool = mcphub.server().capabilities.tools[1]
  local function call(caller, subject)
    return tool.handler({ params = { action = "create", subject = subject }, caller = caller }, response())
  end
  local chat = { id = 1 }
  call({ type = "codecompanion", codecompanion = { chat = chat } }, "cc")
  call({ type = "avante", avante = { chat_history = { filename = "h.json" } } }, "av")
  call({ type = "copilotchat", copilotchat = { chat = chat_with_first("c-1") } }, "cp")
  call({}, "none")
  local cc_id = require("rpiv_todo.adapters.codecompanion").session_of(chat)
  T.eq(sessions.get(cc_id):state().tasks[1].subject, "cc", "codecompanion: the adapter's list of that chat")
  T.eq(sessions.get("avante:h.json"):state().tasks[1].subject, "av", "avante (no avante.path here)")
  T.eq(sessions.get("copilotchat:c-1"):state().tasks[1].subject, "cp", "CopilotChat")
  local cwd_id = "mcphub:"
  if T.in_nvim() then
    cwd_id = cwd_id .. rawget(_G, "vim").fn.getcwd()
  end
  T.eq(sessions.get(cwd_id):state().tasks[1].subject, "none", "no caller: the working directory's list")
end)

T.test("mcphub: the resource reads the caller's list as /todos shows it", function()
  local def = mcphub.server({ session = "fixed" })
  def.capabilities.tools[1].handler({ params = { action = "create", subject = "Shown" } }, response())
  local out = def.capabilities.resources[1].handler({}, resource_response())
  T.eq(out.result.contents[1].text, "1 pending\n── Pending ──\n  ○ #1 Shown", "/todos text")
end)

T.test("mcphub: options are checked", function()
  T.raises(function()
    mcphub.server({ server = 1 })
  end, "(rpiv_todo) mcphub: server: expected a non-empty string")
  T.raises(function()
    mcphub.register({ nope = true })
  end, "(rpiv_todo) mcphub: nope: unknown option (expected session, server)")
end)

T.finish()
