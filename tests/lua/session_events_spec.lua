-- tests/lua/session_events_spec.lua: what a chat front end (an adapter) tells a UI goes
-- through the session layer as events, so no adapter needs the Neovim front end: a chat
-- registering which session its buffers show ("chat"), and a new turn ("turn_started").
-- Plain Lua: any UI listens the same way.

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")

local session = require("rpiv_todo.session")

---Every event heard, as "event:id".
local function recorder()
  local heard = {}
  session.listen(function(event, id)
    heard[#heard + 1] = event .. ":" .. tostring(id)
  end)
  return heard
end

T.before_each(function()
  session.reset()
end)

T.test("register_chat: listeners hear it, and chat_session asks the lookups", function()
  local heard = recorder()
  T.eq(session.has_chats(), false, "no chat front end yet")
  require("rpiv_todo").register_chat("fake", function(buf)
    return buf == 7 and "fake:chat-7" or nil
  end)
  T.same(heard, { "chat:fake" }, "the event")
  T.eq(session.has_chats(), true, "one now")
  T.eq(session.chat_session(7), "fake:chat-7", "buffer 7 is a chat")
  T.eq(session.chat_session(8), nil, "buffer 8 is none")
  session.register_chat("fake", nil)
  T.eq(session.has_chats(), false, "removed")
  T.raises(function()
    session.register_chat(3, "x")
  end, "(rpiv_todo) register_chat: expected a name and a function(bufnr) or nil", "checked")
end)

T.test("a lookup that raises is skipped", function()
  session.register_chat("broken", function()
    error("boom")
  end)
  session.register_chat("fine", function()
    return "fine:1"
  end)
  T.eq(session.chat_session(1), "fine:1", "the working one answers")
  session.register_chat("broken", nil)
  session.register_chat("fine", nil)
end)

T.test("turn_started: one session or every one, no session created", function()
  local heard = recorder()
  require("rpiv_todo").turn_started("chat-1")
  session.turn_started(nil)
  T.same(heard, { "turn_started:chat-1", "turn_started:nil" }, "the events")
  T.eq(session.exists("chat-1"), false, "no list made for it")
  T.raises(function()
    session.turn_started("")
  end, "(rpiv_todo) turn_started: expected a non-empty string session id", "checked")
end)

T.test("an overlay attached with attach_overlay hides the completed tasks shown at a new turn", function()
  local todo = require("rpiv_todo")
  local ov = todo.overlay.new()
  local detach = todo.attach_overlay(ov)
  local s = todo.session("default")
  s:execute({ action = "create", subject = "Done soon" })
  s:execute({ action = "update", id = 1, status = "completed" })
  T.eq(#ov:render(s, 80), 3, "shown in the turn it was completed in (heading, row, spacer)")
  todo.turn_started("default")
  T.eq(#ov:render(s, 80), 0, "hidden after the next turn started")
  detach()
end)

T.test("a strict call: listeners get the normal form, converted once", function()
  local got
  session.listen(function(event, _, _, params)
    if event == "executed" then
      got = params
    end
  end)
  local core = require("rpiv_todo.native")
  local strict = require("rpiv_todo.tool").execute_strict
  local result = strict({
    action = "create",
    subject = "S",
    metadata = '{"k":1}',
    description = core.null,
  }, { session = "strict" })
  T.eq(result.content[1].text, "Created #1: S (pending)", "the reply")
  T.eq(type(got), "table", "a table")
  T.eq(got.metadata.k, 1, "metadata as the object its text spells")
  T.eq(got.description, nil, "null: not given")
  T.eq(got, result.details.params, "the result's own echo")
end)

T.finish()
