-- tests/nvim/commands_spec.lua: :Todos through vim.notify, and :checkhealth rpiv_todo with
-- no ERROR, in headless Neovim 0.7.2 and current (through scripts/nvim-runner.lua).
-- Expected /todos text follows the TypeScript original (rpiv-todo): header parts joined by " · ",
-- sections Pending, In Progress, Completed, rows "  <glyph> #<id> <subject>...".

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local H = {}

vim.cmd("runtime plugin/rpiv_todo.lua")

-- Capture vim.notify instead of printing.
H.notes = {}
vim.notify = function(msg, level, opts)
  H.notes[#H.notes + 1] = { msg = msg, level = level, opts = opts }
end

T.test(":Todos on an empty list is an info message", function()
  require("rpiv_todo").setup({ locale = "en" })
  vim.cmd("Todos")
  T.eq(#H.notes, 1, "one notification")
  T.eq(H.notes[1].level, vim.log.levels.INFO, "level")
  T.eq(H.notes[1].msg, require("rpiv_todo.i18n").t("todos-empty"), "our empty-list wording")
  T.eq(H.notes[1].opts.title, "Todos", "title")
end)

T.test(":Todos shows the foreground list grouped by status", function()
  local nv = require("rpiv_todo.nvim")
  nv.execute({ action = "create", subject = "Write the parser" })
  nv.execute({ action = "create", subject = "Test it", blockedBy = { 1 } })
  nv.execute({ action = "create", subject = "Read the spec" })
  nv.execute({ action = "update", id = 1, status = "in_progress", activeForm = "Writing" })
  nv.execute({ action = "update", id = 3, status = "completed" })
  H.notes = {}
  vim.cmd("Todos")
  T.eq(#H.notes, 1, "one notification")
  T.eq(H.notes[1].level, vim.log.levels.INFO, "level")
  local want = table.concat({
    "1/3 completed · 1 in progress · 1 pending",
    "── Pending ──",
    "  ○ #2 Test it    ⛓ #1",
    "── In Progress ──",
    "  ◐ #1 Write the parser (Writing)",
    "── Completed ──",
    "  ✓ #3 Read the spec",
  }, "\n")
  T.eq(H.notes[1].msg, want, "text")
end)

T.test(":Todos follows the foreground session", function()
  local nv = require("rpiv_todo.nvim")
  nv.execute({ action = "create", subject = "Side quest" }, { session = "other" })
  nv.foreground("other")
  H.notes = {}
  vim.cmd("Todos")
  T.eq(H.notes[1].msg, "1 pending\n── Pending ──\n  ○ #1 Side quest", "other session's list")
  nv.foreground("default")
end)

T.test(":checkhealth rpiv_todo reports the library, locale and configuration without ERROR", function()
  vim.cmd("checkhealth rpiv_todo")
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  local text = table.concat(lines, "\n")
  T.eq(text:find("ERROR", 1, true), nil, "no ERROR in:\n" .. text)
  T.contains(text, "version " .. T.cargo_version(), "library version")
  T.contains(text, "Lua flavour: luajit", "flavour")
  T.contains(text, "UI locale: en", "locale")
  T.contains(text, 'collapse_key: "ctrl+shift+t"', "configuration")
  T.contains(text, "mapped to <C-S-t>", "mapping")
  T.contains(text, "OK", "some OK lines")
end)

T.test(":help rpiv_todo: the help file has unique tags for the commands and the API", function()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. "/doc", "p")
  vim.fn.writefile(vim.fn.readfile(T.root() .. "/doc/rpiv_todo.txt", "b"), dir .. "/doc/rpiv_todo.txt", "b")
  vim.cmd("helptags " .. vim.fn.fnameescape(dir .. "/doc")) -- E154 on a duplicate tag
  local tags = {}
  for _, line in ipairs(vim.fn.readfile(dir .. "/doc/tags")) do
    tags[line:match("^[^\t]+")] = true
  end
  for _, tag in ipairs({
    "rpiv_todo.txt",
    "rpiv_todo-install",
    ":Todos",
    ":TodosToggle",
    "rpiv_todo-api",
    "rpiv_todo.nvim.execute()",
    "rpiv_todo-adapters-avante",
    "rpiv_todo-highlights",
    "rpiv_todo-health",
    "rpiv_todo-locale",
  }) do
    T.eq(tags[tag], true, "tag " .. tag)
  end
  vim.cmd("set rtp^=" .. vim.fn.fnameescape(dir))
  vim.cmd("help :TodosToggle")
  T.eq(vim.fn.expand("%:t"), "rpiv_todo.txt", "help opens our file")
  vim.cmd("helpclose")
  vim.fn.delete(dir, "rf")
end)

T.finish()
