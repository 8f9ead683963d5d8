-- tests/lua/public_names_spec.lua: one public name per job (issue 42). The facade's
-- functions are plain functions a reader finds (`function M.<name>` in init.lua, no
-- metatable behind them); the session lifecycle lives there, and the old copies in
-- rpiv_todo.adapters.common are deprecated aliases that do the same, silently outside
-- Neovim (nothing on stderr). The Neovim aliases are checked in tests/nvim/sessions_spec.lua.

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")

local todo = require("rpiv_todo")
local session = require("rpiv_todo.session")

-- The facade's functions: each must be in the module table itself.
local FUNCTIONS = {
  "setup",
  "on_setup",
  "tool",
  "reminder",
  "session",
  "foreground",
  "turn_started",
  "register_chat",
  "on_session_start",
  "on_compaction",
  "on_branch_change",
  "shutdown",
  "listen",
  "on_listener_error",
  "attach_overlay",
  "locale",
  "set_locale",
}

-- The eight fields loaded on first read (init.lua's header says why).
local FIELDS = { "core", "guidance", "command", "sessions", "overlay", "config", "defaults", "version" }

T.test("every function of the facade is a plain function of the module table", function()
  for _, name in ipairs(FUNCTIONS) do
    T.eq(type(rawget(todo, name)), "function", name)
  end
  local source = assert(io.open(T.root() .. "/lua/rpiv_todo/init.lua")):read("*a")
  local defined = {}
  for name in source:gmatch("\nfunction M%.([%w_]+)%(") do
    defined[#defined + 1] = name
  end
  table.sort(defined)
  local want = { (table.unpack or unpack)(FUNCTIONS) }
  table.sort(want)
  T.same(defined, want, "grep 'function M.' finds each, and nothing else is a function")
end)

T.test("the metatable serves only the eight fields", function()
  local index = getmetatable(todo).__index
  for _, name in ipairs(FIELDS) do
    T.ok(index(todo, name) ~= nil, name .. " is served")
  end
  for _, name in ipairs({ "turn_started", "on_compaction", "listen", "nothing" }) do
    T.eq(index({}, name), nil, name .. " is not served by the metatable")
  end
  T.eq(todo.version, require("rpiv_todo.core").version, "version is the core's")
end)

T.test("adapters.common's turn_started and register_chat are aliases of the facade's", function()
  local common = require("rpiv_todo.adapters.common")
  local heard = {}
  local stop = todo.listen(function(event, id)
    heard[#heard + 1] = event .. ":" .. tostring(id)
  end)
  todo.turn_started("one")
  common.turn_started("one")
  todo.register_chat("alias-a", function(buf)
    return buf == 1 and "a:1" or nil
  end)
  common.register_chat("alias-b", function(buf)
    return buf == 2 and "b:2" or nil
  end)
  stop()
  T.same(heard, { "turn_started:one", "turn_started:one", "chat:alias-a", "chat:alias-b" }, "the same events")
  T.eq(session.chat_session(1), "a:1", "the facade's registration")
  T.eq(session.chat_session(2), "b:2", "the alias's registration")
  todo.register_chat("alias-a", nil)
  common.register_chat("alias-b", nil)
  T.eq(session.has_chats(), false, "both removed")
end)

T.test("foreground outside Neovim names and reads the session layer's", function()
  T.eq(todo.foreground("fg-1").id, "fg-1", "named")
  T.eq(todo.foreground().id, "fg-1", "read")
  T.eq(session.foreground_id(), "fg-1", "the session layer's")
  T.eq(todo.foreground(nil).id, "fg-1", "nil changes nothing outside Neovim")
  todo.foreground("default")
end)

T.finish()
