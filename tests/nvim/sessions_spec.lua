-- tests/nvim/sessions_spec.lua: which session the panel and :Todos show, in headless
-- Neovim 0.7.2 and current (through scripts/nvim-runner.lua). Agent plugins name their
-- sessions (one per chat): by default the panel follows the session of the most recent
-- tool call; foreground(id) pins one; foreground(nil) follows again.

local N = dofile(os.getenv("RPIV_ROOT") .. "/tests/nvim/helpers.lua")
local T = N.T
local H = {}

N.plugin()

local todo = require("rpiv_todo")

N.capture_notify(H)

---The panel's lines, trimmed (nil while hidden).
function H.panel()
  local win, buf = require("rpiv_todo.nvim").window()
  if not win then
    return nil
  end
  local out = {}
  for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    out[i] = vim.trim(line)
  end
  return out
end

---What :Todos shows (the list window's text), its window closed again.
function H.todos()
  H.notes = {}
  vim.cmd("Todos")
  local listwin = require("rpiv_todo.nvim.listwin")
  local win, buf = listwin.window()
  if not win then
    return H.notes[1] and H.notes[1].msg
  end
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  listwin.close()
  return text
end

T.test("the first call of a named session paints that session (nothing attached before)", function()
  T.eq(
    package.loaded["rpiv_todo.nvim"] == nil or not require("rpiv_todo.nvim.frontend").attached(),
    true,
    "not attached yet"
  )
  todo.setup({ locale = "en" })
  -- What an agent plugin does: the tool spec's execute with its chat's session id.
  todo.tool().execute({ action = "create", subject = "Plan chat one" }, { session = "chat-1" })
  T.same(H.panel(), { "● Todos (0/1)", "└─ ○ Plan chat one" }, "panel")
  T.eq(H.todos(), "1 pending\n── Pending ──\n  ○ #1 Plan chat one", ":Todos")
  T.eq(todo.foreground().id, "chat-1", "the foreground session")
end)

T.test("the panel follows the session of the latest tool call", function()
  local nv = require("rpiv_todo.nvim")
  nv.execute({ action = "create", subject = "Plan chat two" }, { session = "chat-2" })
  T.same(H.panel(), { "● Todos (0/1)", "└─ ○ Plan chat two" }, "chat-2 after its call")
  nv.execute({ action = "update", id = 1, status = "in_progress" }, { session = "chat-1" })
  T.same(H.panel(), { "● Todos (0/1)", "└─ ◐ Plan chat one" }, "chat-1 after its call")
  T.eq(require("rpiv_todo.nvim.frontend").pinned(), nil, "nothing pinned")
end)

T.test("foreground(id) pins a session: calls elsewhere no longer move the panel", function()
  local nv = require("rpiv_todo.nvim")
  require("rpiv_todo").foreground("chat-2")
  T.eq(require("rpiv_todo.nvim.frontend").pinned(), "chat-2", "pinned")
  nv.execute({ action = "create", subject = "Second step" }, { session = "chat-1" })
  T.same(H.panel(), { "● Todos (0/1)", "└─ ○ Plan chat two" }, "still chat-2")
  T.eq(H.todos(), "1 pending\n── Pending ──\n  ○ #1 Plan chat two", ":Todos shows the pinned session")
  -- A host pinning through the Lua layer pins too.
  todo.foreground("chat-1")
  T.eq(require("rpiv_todo.nvim.frontend").pinned(), "chat-1", "pinned through rpiv_todo.foreground")
  nv.execute({ action = "create", subject = "Elsewhere" }, { session = "chat-3" })
  T.eq(H.panel()[1], "● Todos (0/2)", "chat-1 stays")
end)

T.test("foreground(nil) follows again, at once showing the latest call's session", function()
  local session = require("rpiv_todo").foreground(nil)
  T.eq(require("rpiv_todo.nvim.frontend").pinned(), nil, "following")
  T.eq(session.id, "chat-3", "the latest call was in chat-3")
  T.same(H.panel(), { "● Todos (0/1)", "└─ ○ Elsewhere" }, "chat-3's list")
  T.eq(require("rpiv_todo").foreground().id, "chat-3", "foreground() only reads")
  T.eq(require("rpiv_todo.nvim.frontend").pinned(), nil, "and pins nothing")
end)

T.test("a replay of another session does not take the panel; a tool call does", function()
  local nv = require("rpiv_todo.nvim")
  nv.replay("restored", {
    {
      role = "toolResult",
      toolName = "todo",
      details = {
        action = "list",
        params = {},
        nextId = 2,
        tasks = { { id = 1, subject = "From history", status = "pending" } },
      },
    },
  })
  T.same(H.panel(), { "● Todos (0/1)", "└─ ○ Elsewhere" }, "still chat-3")
  nv.execute({ action = "list" }, { session = "restored" })
  T.same(H.panel(), { "● Todos (0/1)", "└─ ○ From history" }, "the restored chat after its call")
end)

T.test("a rejected call still brings its session forward (the model is working there)", function()
  local nv = require("rpiv_todo.nvim")
  local result = nv.execute({ action = "get", id = 42 }, { session = "chat-2" })
  T.contains(result.content[1].text, "Error", "rejected")
  T.same(H.panel(), { "● Todos (0/1)", "└─ ○ Plan chat two" }, "chat-2")
end)

T.test("the deprecated rpiv_todo.nvim aliases do what the facade does, with one notice each", function()
  local nv = require("rpiv_todo.nvim")
  local notices = {}
  local saved = vim.deprecate
  vim.deprecate = function(what, instead, version, plugin)
    notices[#notices + 1] = table.concat({ what, instead, version, plugin }, " | ")
  end
  local heard = {}
  local stop = todo.listen(function(event, id)
    heard[#heard + 1] = event .. ":" .. tostring(id)
  end)
  T.eq(nv.foreground("alias-pin").id, "alias-pin", "foreground pins")
  T.eq(todo.foreground().id, "alias-pin", "the facade sees the pin")
  nv.foreground(nil)
  nv.turn_started("alias-pin")
  nv.turn_started("alias-pin")
  nv.register_chat("alias-chat", function(buf)
    return buf == -1 and "x" or nil
  end)
  nv.register_chat("alias-chat", nil)
  stop()
  vim.deprecate = saved
  T.same(notices, {
    'require("rpiv_todo.nvim").foreground | require("rpiv_todo").foreground | 0.3.0 | rpiv_todo',
    'require("rpiv_todo.nvim").turn_started | require("rpiv_todo").turn_started | 0.3.0 | rpiv_todo',
    'require("rpiv_todo.nvim").register_chat | require("rpiv_todo").register_chat | 0.3.0 | rpiv_todo',
  }, "one notice per old name")
  local turns, chats = 0, 0
  for _, e in ipairs(heard) do
    turns = turns + (e == "turn_started:alias-pin" and 1 or 0)
    chats = chats + (e == "chat:alias-chat" and 1 or 0)
  end
  T.eq(turns, 2, "each turn_started heard")
  T.eq(chats, 2, "register_chat and its removal heard")
end)

T.finish()
