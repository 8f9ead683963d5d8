-- tests/nvim/setup_spec.lua: one setup() for the tool and the editor. In Neovim,
-- require("rpiv_todo").setup() takes the editor's options beside the tool's own (checked by
-- the one options checker, messages without a prefix); the old
-- require("rpiv_todo.nvim").setup() still works after one deprecation notice. Also what a
-- tool call costs the front end: one paint per call, even when the panel moves to another
-- session, and no question to the chat front ends while the window stays the same.

local N = dofile(os.getenv("RPIV_ROOT") .. "/tests/nvim/helpers.lua")
local T = N.T
local H = {}

N.plugin()
N.capture_notify(H)

local todo = require("rpiv_todo")
local options = require("rpiv_todo.nvim.options")

---The message `fn` raises.
local function raised(fn)
  local ok, err = pcall(fn)
  T.eq(ok, false, "raised")
  return tostring(err)
end

T.test("setup() takes the editor's options with the tool's and puts the panel in place", function()
  N.fresh()
  todo.setup({ locale = "en", max_widget_lines = 5, position = "top-left", padding = 2 })
  T.eq(todo.config.max_widget_lines, 5, "the tool's option")
  T.eq(options.config.position, "top-left", "the editor's option")
  T.eq(options.config.padding, 2, "another editor option")
  T.eq(options.config.border, "none", "an absent editor option takes its default")
  T.eq(require("rpiv_todo.nvim.frontend").attached(), true, "the front end is attached")
  todo.setup({ locale = "en", max_widget_lines = 7 })
  T.eq(options.config.position, "top-left", "a call without editor options leaves them")
  T.eq(todo.config.max_widget_lines, 7, "the tool's option changed")
end)

T.test("one checker: an editor option's wrong value and an unknown key read like the tool's", function()
  N.fresh()
  T.eq(
    raised(function()
      todo.setup({ winblend = 101 })
    end),
    "(rpiv_todo) winblend: expected an integer from 0 to 100, got number 101",
    "wrong value"
  )
  local err = raised(function()
    todo.setup({ colour = "red" })
  end)
  T.eq(
    err:match(
      "^%(rpiv_todo%) colour: unknown option %(expected guidance, max_widget_lines, collapse_key, locale, overlay, "
    ),
    "(rpiv_todo) colour: unknown option (expected guidance, max_widget_lines, collapse_key, locale, overlay, ",
    "the tool's keys first: " .. err
  )
  T.contains(err, "position", "then the editor's")
  T.contains(err, "persist_max_age_days", "every one of them")
  -- Nothing changed: the wrong call came before any change.
  T.eq(options.config.winblend, 0, "winblend unchanged")
end)

T.test("the old require('rpiv_todo.nvim').setup(): one notice, then the editor's options as before", function()
  N.fresh({ locale = "en", max_widget_lines = 6 })
  H.notes = {}
  local nv = require("rpiv_todo.nvim")
  T.eq(nv.setup({ position = "bottom-left" }), nv, "returns the module")
  T.eq(options.config.position, "bottom-left", "applied")
  T.eq(todo.config.max_widget_lines, 6, "the tool's options stay")
  nv.setup({ position = "top" })
  T.eq(options.config.position, "top", "applied again")
  local notices = 0
  for _, note in ipairs(H.notes) do
    if tostring(note.msg):find("deprecated", 1, true) then
      notices = notices + 1
      T.contains(note.msg, 'require("rpiv_todo").setup', "names the new call")
      T.eq(note.level, vim.log.levels.WARN, "a warning")
    end
  end
  T.eq(notices, 1, "one notice for two calls")
  T.eq(
    raised(function()
      nv.setup({ zindex = 0 })
    end),
    "(rpiv_todo) nvim.zindex: expected an integer >= 1, got number 0",
    "its messages keep the nvim. prefix"
  )
end)

T.test("a tool call paints once, also when the panel moves to the call's session", function()
  N.fresh()
  local panel = require("rpiv_todo.nvim.panel")
  local paint, paints = panel.paint, 0
  panel.paint = function(...)
    paints = paints + 1
    return paint(...)
  end
  local nv = require("rpiv_todo.nvim")
  nv.execute({ action = "create", subject = "First" }, { session = "one" })
  paints = 0
  nv.execute({ action = "create", subject = "Second" }, { session = "two" })
  T.eq(paints, 1, "a call in another session: one paint")
  T.eq(todo.foreground().id, "two", "the panel moved")
  nv.execute({ action = "create", subject = "Third" }, { session = "two" })
  T.eq(paints, 2, "a call in the session shown: one paint")
  panel.paint = paint
end)

T.test("tool calls do not ask the chat front ends again while the window stays", function()
  N.fresh()
  local asked = 0
  require("rpiv_todo.session").register_chat("bench-chat", function()
    asked = asked + 1
    return nil
  end)
  local nv = require("rpiv_todo.nvim")
  nv.execute({ action = "create", subject = "A" }, { session = "s" })
  local before = asked
  for i = 1, 5 do
    nv.execute({ action = "create", subject = "B" .. i }, { session = "s" })
  end
  T.eq(asked, before, "no question for five calls")
  vim.cmd("new")
  T.eq(asked > before, true, "asked again after a window change")
  vim.cmd("close")
  require("rpiv_todo.session").register_chat("bench-chat", nil)
end)

T.finish()
