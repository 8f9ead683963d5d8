-- rpiv_todo.session.events: the session layer's listeners (`session.listen`) and the
-- reporters of a listener's error (`session.on_listener_error`). rpiv_todo.session emits
-- each event here; every listener runs protected, in the order added, so a failing one
-- neither turns the call it heard about into an error nor keeps the others from running.
-- docs/design.md has the table of events and who listens to each.

local M = {}
local H = {}

---@type fun(event: rpiv_todo.SessionEvent, id: string, session: rpiv_todo.Session?)[]
H.listeners = {}
-- Told about a listener's error (see M.on_listener_error); none: the error is dropped.
---@type fun(message: string, info: rpiv_todo.ListenerError)[]
H.reporters = {}
-- listener -> { [message] = true, n = count }: what was reported already (weak keys: a
-- removed listener's record goes with it).
H.reported = setmetatable({}, { __mode = "k" })
-- Distinct messages reported per listener; a listener whose every error differs (a
-- counter in the text) stops being reported after this many.
H.MAX_REPORTS = 32

---@param event rpiv_todo.SessionEvent
---@param id string
---@param session rpiv_todo.Session?
---@param params any the call's arguments, for "executed"
function M.emit(event, id, session, params)
  local listeners = H.listeners
  for i = 1, #listeners do
    local fn = listeners[i]
    local ok, err = pcall(fn, event, id, session, params)
    if not ok then
      H.report(fn, err, event, id)
    end
  end
end

---Pass a listener's error to the reporters, unless this listener already reported this
---message. Nothing here may raise: the call that emitted the event has succeeded.
---@param fn function the listener that failed
---@param err any what it raised
---@param event rpiv_todo.SessionEvent
---@param id string
function H.report(fn, err, event, id)
  local ok, text = pcall(tostring, err)
  if not ok or type(text) ~= "string" then
    text = "(an error value that cannot be shown)"
  end
  local seen = H.reported[fn]
  if seen == nil then
    seen = { n = 0 }
    H.reported[fn] = seen
  end
  if seen[text] or seen.n >= H.MAX_REPORTS then
    return
  end
  seen[text] = true
  seen.n = seen.n + 1
  local message =
    string.format("(rpiv_todo) a todo.listen callback failed on %q (session %q): %s", event, tostring(id), text)
  local info = { event = event, session = id, error = err, listener = fn }
  local reporters = H.reporters
  for i = 1, #reporters do
    pcall(reporters[i], message, info)
  end
end

---Listen to session events: fn(event, id, session, params) with event one of "executed"
---(params: the call's arguments, a table or JSON text), "replayed", "loaded"
---(session:load), "reloaded" (another program changed the list's file), "shutdown",
---"foreground", "turn_started" (id nil: every session) and "chat" (id: the chat front
---end that registered, see register_chat; no session). Returns a function that removes
---the listener.
---A listener runs protected: if it raises, the call that emitted the event still
---succeeds, the listeners after it still run, and the error goes to the reporters of
---`on_listener_error` (once per listener and message).
---@param fn fun(event: rpiv_todo.SessionEvent, id: string, session: rpiv_todo.Session?)
---@return fun()
function M.listen(fn)
  if type(fn) ~= "function" then
    error("(rpiv_todo) listen: expected a function", 0)
  end
  return require("rpiv_todo.common").add_listener(H.listeners, fn)
end

---Be told when a listener (`listen`) raises: `fn(message, info)`, where `message` reads
---`(rpiv_todo) a todo.listen callback failed on "executed" (session "s1"): <error>` and
---`info = { event, session, error, listener }` (`error` as raised). Called once per
---listener and distinct message (at most 32 messages per listener), never for the same
---failure on every call. With no reporter the error is dropped: the plain-Lua layer
---writes nothing to stderr. Neovim's plugin file adds one that shows it with
---`vim.notify` at WARN level. A reporter that raises is ignored. Returns a function that
---removes the reporter.
---@param fn fun(message: string, info: rpiv_todo.ListenerError)
---@return fun() remove
function M.on_listener_error(fn)
  if type(fn) ~= "function" then
    error("(rpiv_todo) on_listener_error: expected a function, got " .. type(fn), 0)
  end
  return require("rpiv_todo.common").add_listener(H.reporters, fn)
end

---Drop every listener and reporter (session.reset).
function M.reset()
  H.listeners = {}
  H.reporters = {}
  H.reported = setmetatable({}, { __mode = "k" })
end

return M
