-- tests/lua/options_spec.lua: both setup()s go through one options checker
-- (rpiv_todo.common.check_options), so their messages have one shape:
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
  local common = require("rpiv_todo.common")
  local seen = {}
  local checks = {
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
  T.eq(next(common.check_options(nil, { "a", "b" }, checks, "x.")), nil, "nil: an empty table")
  T.eq(#seen, 0, "nothing checked for nil")
  H.raises_exactly(function()
    common.check_options({ a = 1, b = 2 }, { "a", "b" }, checks, "x.")
  end, "(rpiv_todo) x.a: expected true, got number 1")
  H.raises_exactly(function()
    common.check_options({ c = 1 }, { "a", "b" }, checks, "x.")
  end, "(rpiv_todo) x.c: unknown option (expected a, b)")
  H.raises_exactly(function()
    common.check_options("no", { "a", "b" }, checks, "x.")
  end, '(rpiv_todo) x.setup: expected a table of options, got string "no"')
  seen = {}
  local opts = { a = true }
  T.eq(common.check_options(opts, { "a", "b" }, checks, nil, { b = true }), opts, "the same table back")
  T.eq(table.concat(seen, ","), "a,b", "b checked although nil")
end)

T.finish()
