-- tests/nvim/listeners_spec.lua: in Neovim a failing todo.listen callback is shown with
-- vim.notify (WARN, once per callback and message, from the main loop) by the plugin
-- file's reporter, and the tool call and the front end carry on as if nothing failed.

local N = dofile(os.getenv("RPIV_ROOT") .. "/tests/nvim/helpers.lua")
local T = N.T

local todo = require("rpiv_todo")

-- Registered before the plugin's own first-call listener, so that one runs after it.
local broken = todo.listen(function(event)
  if event == "executed" then
    error("this listener is broken", 0)
  end
end)

N.plugin()

local H = N.capture_notify({})

-- Run the main loop until every callback scheduled so far has run (they run in order, so
-- a marker scheduled last runs last).
local function settle()
  local done = false
  vim.schedule(function()
    done = true
  end)
  vim.wait(10000, function()
    return done
  end)
  T.ok(done, "the main loop ran the scheduled callbacks")
end

local function failures()
  local out = {}
  for _, note in ipairs(H.notes) do
    if note.msg:find("todo.listen callback failed", 1, true) then
      out[#out + 1] = note
    end
  end
  return out
end

T.test("a failing listener: the call succeeds, the front end attaches, one WARN notification", function()
  todo.setup({ locale = "en" })
  local spec = todo.tool()
  local r1 = spec.execute({ action = "create", subject = "First" }, { session = "nv" })
  local r2 = spec.execute({ action = "create", subject = "Second" }, { session = "nv" })
  T.eq(r1.content[1].text, "Created #1: First (pending)", "first call")
  T.eq(r2.content[1].text, "Created #2: Second (pending)", "second call")
  T.eq(#todo.session("nv"):state().tasks, 2, "two tasks, each created once")
  T.eq(require("rpiv_todo.nvim.frontend").attached(), true, "the plugin's listener after the broken one ran")
  settle()
  local got = failures()
  T.eq(#got, 1, "the same failure twice is shown once")
  T.eq(
    got[1] and got[1].msg,
    '(rpiv_todo) a todo.listen callback failed on "executed" (session "nv"): this listener is broken',
    "message"
  )
  T.eq(got[1] and got[1].level, vim.log.levels.WARN, "level")
  T.eq(got[1] and got[1].opts and got[1].opts.title, "rpiv_todo", "title")
end)

T.test("a listener failing inside a fast event is shown from the main loop", function()
  broken()
  local stop = todo.listen(function(event)
    if event == "executed" then
      error("broken in a callback", 0)
    end
  end)
  local answered = nil
  local timer = (vim.uv or vim.loop).new_timer()
  timer:start(0, 0, function()
    answered = todo.tool().execute({ action = "list" }, { session = "nv" }).content[1].text
    timer:close()
  end)
  vim.wait(10000, function()
    return answered ~= nil
  end)
  T.eq(answered ~= nil and answered:sub(1, 10), "[pending] ", "the call answered in the callback")
  settle()
  local got = failures()
  T.eq(#got, 2, "a second listener's failure is shown")
  T.contains(got[2] and got[2].msg or "", "broken in a callback", "its message")
  stop()
end)

T.finish()
