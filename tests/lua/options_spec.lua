-- tests/lua/options_spec.lua: every table of options goes through one checker
-- (rpiv_todo.options_check), so the messages have one shape:
-- `(rpiv_todo) <key>: expected …, got …`, and unknown keys are named with the known ones.

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local H = {}

---The whole message `fn` raises (it must raise).
---@param fn function
---@param message string
function H.raises_exactly(fn, message)
  local ok, err = pcall(fn)
  T.eq(ok, false, "raised: " .. message)
  T.eq(tostring(err), message, "message")
end

T.test("setup() of the tool: a value of the wrong kind reads expected …, got …", function()
  local todo = require("rpiv_todo")
  H.raises_exactly(function()
    todo.setup(5)
  end, "(rpiv_todo) setup: expected a table of options, got number 5")
  H.raises_exactly(function()
    todo.setup({ locale = 7 })
  end, '(rpiv_todo) locale: expected a locale code string such as "de" or "pt-BR", got number 7')
  H.raises_exactly(
    function()
      todo.setup({ collapse_key = "  " })
    end,
    '(rpiv_todo) collapse_key: expected [ctrl+][shift+][alt+][super+]<character or named key>, e.g. "ctrl+shift+t", or "off", got string "  "'
  )
  H.raises_exactly(function()
    todo.setup({ colour = "red" })
  end, "(rpiv_todo) colour: unknown option (expected guidance, max_widget_lines, collapse_key, locale, overlay)")
end)

T.test("the checker itself: prefix, order of checks, nil checked only when asked", function()
  local check = require("rpiv_todo.options_check").check
  local function spec(prefix, nil_checked)
    return { names = { "a", "b" }, checks = H.checks, prefix = prefix, nil_checked = nil_checked, got = true }
  end
  local seen = {}
  H.checks = {
    a = function(v)
      seen[#seen + 1] = "a"
      if v ~= true then
        return "expected true"
      end
    end,
    b = function(v)
      seen[#seen + 1] = "b"
      if v ~= nil and type(v) ~= "string" then
        return "expected a string or nil"
      end
    end,
  }
  T.eq(next(check(nil, spec("x."))), nil, "nil: an empty table")
  T.eq(#seen, 0, "nothing checked for nil")
  H.raises_exactly(function()
    check({ a = 1, b = 2 }, spec("x."))
  end, "(rpiv_todo) x.a: expected true, got number 1")
  H.raises_exactly(function()
    check({ c = 1 }, spec("x."))
  end, "(rpiv_todo) x.c: unknown option (expected a, b)")
  H.raises_exactly(function()
    check("no", spec("x."))
  end, '(rpiv_todo) x.setup: expected a table of options, got string "no"')
  seen = {}
  local opts = { a = true }
  T.eq(check(opts, spec(nil, { b = true })), opts, "the same table back")
  T.eq(table.concat(seen, ","), "a,b", "b checked although nil")
  H.raises_exactly(function()
    check(nil, { names = { "a" }, required = true, not_table = "x: expected a table { a }" })
  end, "(rpiv_todo) x: expected a table { a }")
  H.raises_exactly(function()
    check({ a = 1 }, { names = { "a" }, checks = H.checks, prefix = "y: " })
  end, "(rpiv_todo) y: a: expected true")
end)

T.test("every options check of the plain modules is this one: tool, set_locale, persist, adapters", function()
  local todo = require("rpiv_todo")
  H.raises_exactly(function()
    todo.tool({ strikt = true })
  end, "(rpiv_todo) tool: strikt: unknown option (expected strict)")
  H.raises_exactly(function()
    todo.tool({ strict = 1 })
  end, "(rpiv_todo) tool: strict: expected a boolean")
  H.raises_exactly(function()
    todo.set_locale("de", { persist = "yes" })
  end, "(rpiv_todo) set_locale.persist: expected a boolean")
  H.raises_exactly(function()
    require("rpiv_todo.persist").enable({ dir = "/tmp", key = "k", when = 1 })
  end, "(rpiv_todo) persist.when: unknown option (expected dir, key, on_error, wait_ms)")
  H.raises_exactly(function()
    require("rpiv_todo.persist").enable(nil)
  end, "(rpiv_todo) persist.enable: expected a table of options { dir, key, on_error, wait_ms }")
  H.raises_exactly(function()
    require("rpiv_todo.adapters.options").check("x", { s = 1 }, { { "session", "a session", type } })
  end, "(rpiv_todo) x: s: unknown option (expected session)")
  -- No hand-written check is left: only the checker itself writes "unknown option".
  local found = {}
  local p = io.popen("cd '" .. T.root() .. "' && grep -rl 'unknown option' lua/rpiv_todo | sort")
  for line in p:lines() do
    found[#found + 1] = line
  end
  p:close()
  T.eq(table.concat(found, ","), "lua/rpiv_todo/options_check.lua", "files")
end)

T.finish()
