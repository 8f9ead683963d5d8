-- tests/lua/config_spec.lua: option normalization does not pull in the overlay package
-- (issue 42): setup() checks an `overlay` key with the overlay's layout and themes alone,
-- with the same messages, and the renderer and the live overlay stay unloaded until
-- something draws. Runs in its own interpreter, so package.loaded starts
-- empty.

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")

local todo = require("rpiv_todo")

T.test("setup({ overlay = ... }) checks the key without loading rpiv_todo.overlay", function()
  local row = function(_, r)
    return "* " .. r.subject
  end
  todo.setup({ overlay = { row = row, theme = "ansi" } })
  T.eq(package.loaded["rpiv_todo.overlay"], nil, "the overlay package is not loaded")
  T.eq(package.loaded["rpiv_todo.overlay.render"], nil, "nor its renderer")
  T.eq(type(package.loaded["rpiv_todo.overlay.layout"]), "table", "the layout module checked it")
  todo.setup({
    overlay = function(default)
      return { row = default.row }
    end,
  })
  T.eq(package.loaded["rpiv_todo.overlay"], nil, "a layout function: still not loaded")
end)

T.test("a bad overlay value raises the same messages as before", function()
  T.raises(
    function()
      todo.setup({ overlay = 5 })
    end,
    "(rpiv_todo) overlay: expected a table of layout overrides (heading, row, summary, collapsed_hint, spacer, glyphs) and/or theme, or a function(default_layout) returning the overrides",
    "not a table"
  )
  T.raises(
    function()
      todo.setup({ overlay = { theme = "neon" } })
    end,
    "(rpiv_todo) overlay: theme: expected a theme table or the name of a shipped theme (plain, ansi, segments)",
    "unknown theme"
  )
  T.raises(function()
    todo.setup({
      overlay = function()
        error("boom", 0)
      end,
    })
  end, "(rpiv_todo) overlay: the function raised an error: boom", "a raising layout function")
  T.eq(package.loaded["rpiv_todo.overlay"], nil, "still not loaded")
end)

T.test("the overlay renders with the checked layout once something draws", function()
  todo.setup({ overlay = {
    row = function(_, r)
      return "* " .. r.subject
    end,
  } })
  local s = todo.session("config-spec")
  s:execute({ action = "create", subject = "Drawn" })
  local lines = todo.overlay.render(s:state(), { width = 40 })
  T.contains(table.concat(lines, "\n"), "* Drawn", "the row override drew the row")
end)

T.finish()
