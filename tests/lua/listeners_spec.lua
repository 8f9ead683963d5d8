-- tests/lua/listeners_spec.lua: a failing todo.listen callback never breaks the call it
-- heard about. The call answers as if nothing failed, the listeners after it run (the
-- persistence save among them), and the error goes to the todo.on_listener_error
-- reporters once per listener and message. Runs in every interpreter; by hand:
--   lua5.4 tests/lua/listeners_spec.lua      (also luajit, lua5.1)

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")

local todo = require("rpiv_todo")
local session = require("rpiv_todo.session")
local persist = require("rpiv_todo.persist")

T.before_each(function()
  persist.disable()
  session.reset()
end)

T.test("a listener that raises: the call succeeds, later listeners run, nothing is retried", function()
  local heard = {}
  todo.listen(function()
    error("listener one is broken")
  end)
  todo.listen(function(event, id)
    heard[#heard + 1] = event .. " " .. id
  end)
  local spec = todo.tool()
  local result = spec.execute({ action = "create", subject = "Write the parser" }, { session = "s1" })
  T.eq(result.content[1].text, "Created #1: Write the parser (pending)", "the call answers normally")
  T.eq(result.details.error, nil, "no error in the details")
  T.eq(#todo.session("s1"):state().tasks, 1, "one task, created once")
  T.eq(table.concat(heard, ","), "executed s1", "the listener after the failing one heard the call")
  -- The JSON-text path and the lifecycle events are protected the same way.
  local out = todo.session("s1"):execute_json('{"action":"list"}')
  T.contains(out, '"nextId":2', "execute_json answers")
  todo.on_session_start("s2", {})
  todo.foreground("s2")
  todo.shutdown("s2")
  T.eq(
    table.concat(heard, ","),
    "executed s1,executed s1,replayed s2,foreground s2,shutdown s2",
    "every event reached the second listener"
  )
end)

T.test("the error is reported once per listener and message, with what failed", function()
  local reports = {}
  todo.on_listener_error(function(message, info)
    reports[#reports + 1] = { message = message, info = info }
  end)
  local n = 0
  local function broken()
    n = n + 1
    error(n <= 2 and "same failure" or "another failure", 0)
  end
  todo.listen(broken)
  local s = todo.session("s1")
  s:execute({ action = "create", subject = "A" })
  s:execute({ action = "create", subject = "B" })
  T.eq(#reports, 1, "the same message twice is reported once")
  T.eq(
    reports[1].message,
    '(rpiv_todo) a todo.listen callback failed on "executed" (session "s1"): same failure',
    "message"
  )
  T.eq(reports[1].info.event, "executed", "info.event")
  T.eq(reports[1].info.session, "s1", "info.session")
  T.eq(reports[1].info.error, "same failure", "info.error as raised")
  T.eq(reports[1].info.listener, broken, "info.listener")
  s:execute({ action = "create", subject = "C" })
  T.eq(#reports, 2, "a new message is reported")
  T.contains(reports[2].message, "another failure", "second message")
  s:execute({ action = "create", subject = "D" })
  T.eq(#reports, 2, "and not again")
  T.eq(#s:state().tasks, 4, "every call went through")
end)

T.test("an error value that cannot be shown, and a reporter that raises, break nothing", function()
  local reports = {}
  todo.on_listener_error(function()
    error("the reporter is broken too")
  end)
  local remove = todo.on_listener_error(function(message)
    reports[#reports + 1] = message
  end)
  todo.listen(function()
    error(setmetatable({}, {
      __tostring = function()
        error("no text for you")
      end,
    }))
  end)
  local result = todo.session("s1"):execute({ action = "create", subject = "A" })
  T.eq(result.content[1].text, "Created #1: A (pending)", "the call answers")
  T.eq(#reports, 1, "the second reporter still ran")
  T.contains(reports[1], "(an error value that cannot be shown)", "a placeholder for the error text")
  remove()
  todo.listen(function()
    error("unheard")
  end)
  todo.session("s1"):execute({ action = "list" })
  T.eq(#reports, 1, "a removed reporter hears nothing")
  T.raises(function()
    todo.on_listener_error("notify")
  end, "(rpiv_todo) on_listener_error: expected a function, got string")
end)

T.test("without a reporter a failing listener is silent and the call still succeeds", function()
  todo.listen(function()
    error("nobody listens to me")
  end)
  local result = todo.tool().execute('{"action":"create","subject":"A"}', { session = "quiet" })
  T.eq(result.content[1].text, "Created #1: A (pending)", "the call answers")
end)

local tempdir = T.tempdir

T.test("persistence still saves after a listener registered before it fails", function()
  local dir = tempdir()
  todo.listen(function()
    error("registered first, fails first")
  end)
  persist.enable({ dir = dir, key = "project" })
  local result = todo.tool().execute({ action = "create", subject = "Keep me" }, { session = "saved" })
  T.eq(result.content[1].text, "Created #1: Keep me (pending)", "the call answers")
  local path = persist.path("saved")
  local f = io.open(path, "rb")
  T.ok(f ~= nil, "the list was saved to " .. tostring(path))
  local text = f and f:read("*a") or ""
  if f then
    f:close()
  end
  T.contains(text, '"subject":"Keep me"', "the saved list holds the task")
  persist.disable()
  os.remove(path)
  os.remove(dir)
end)

T.test("a failing on_setup callback: the others still run, then setup() raises its error", function()
  local seen = {}
  local remove_a = todo.on_setup(function()
    seen[#seen + 1] = "a"
    error("on_setup callback a failed", 0)
  end)
  local remove_b = todo.on_setup(function(config)
    seen[#seen + 1] = "b:" .. type(config)
  end)
  local ok, err = pcall(todo.setup, { locale = "de" })
  remove_a()
  remove_b()
  T.eq(ok, false, "setup raised")
  T.eq(err, "on_setup callback a failed", "the callback's own error")
  T.same(seen, { "a", "b:table" }, "both callbacks ran, with the config")
  T.eq(todo.locale(), "de", "the settings are in place")
  todo.setup({ locale = "en" })
end)

T.finish()
