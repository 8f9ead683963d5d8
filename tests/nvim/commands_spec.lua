-- tests/nvim/commands_spec.lua: :Todos (the list window, the user's edits, completion),
-- :TodosToggle, setup's error messages, :checkhealth rpiv_todo with no ERROR and the help
-- file's tags, in headless Neovim 0.7.2 and current (through scripts/nvim-runner.lua).
-- Expected /todos text follows the TypeScript original (rpiv-todo): header parts joined by " · ",
-- sections Pending, In Progress, Completed, rows "  <glyph> #<id> <subject>...".

local N = dofile(os.getenv("RPIV_ROOT") .. "/tests/nvim/helpers.lua")
local T = N.T
local H = {}

N.plugin()

-- Capture vim.notify instead of printing.
N.capture_notify(H)

T.test("the plugin's own completion works before the front end loads", function()
  T.eq(package.loaded["rpiv_todo.nvim"], nil, "front end not loaded yet")
  T.eq(table.concat(vim.fn.getcompletion("Todos d", "cmdline"), ","), "done,delete", ":Todos")
  T.eq(table.concat(vim.fn.getcompletion("TodosLanguage p", "cmdline"), ","), "pt,pt-BR", ":TodosLanguage")
  T.eq(package.loaded["rpiv_todo.nvim"], nil, "completion loaded no front end")
end)

T.test(":Todos on an empty list is an info message", function()
  require("rpiv_todo").setup({ locale = "en" })
  vim.cmd("Todos")
  T.eq(#H.notes, 1, "one notification")
  T.eq(H.notes[1].level, vim.log.levels.INFO, "level")
  T.eq(H.notes[1].msg, require("rpiv_todo.i18n").t("todos-empty"), "our empty-list wording")
  T.eq(H.notes[1].opts.title, "Todos", "title")
end)

-- The :Todos window's lines, or nil when none is open.
function H.list_lines()
  local win, buf = require("rpiv_todo.nvim.listwin").window()
  if not win then
    return nil
  end
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

function H.option(handle, kind, name)
  if vim.fn.has("nvim-0.8") == 1 then
    return vim.api.nvim_get_option_value(name, { [kind] = handle })
  elseif kind == "win" then
    return vim.api.nvim_win_get_option(handle, name)
  end
  return vim.api.nvim_buf_get_option(handle, name)
end

T.test(":Todos opens a scratch window with the list grouped by status; q closes it", function()
  local nv = require("rpiv_todo.nvim")
  local editor = vim.api.nvim_get_current_win()
  nv.execute({ action = "create", subject = "Write the parser" })
  nv.execute({ action = "create", subject = "Test it", blockedBy = { 1 } })
  nv.execute({ action = "create", subject = "Read the spec" })
  nv.execute({ action = "update", id = 1, status = "in_progress", activeForm = "Writing" })
  nv.execute({ action = "update", id = 3, status = "completed" })
  H.notes = {}
  vim.cmd("Todos")
  T.eq(#H.notes, 0, "no notification")
  local want = {
    "1/3 completed · 1 in progress · 1 pending",
    "── Pending ──",
    "  ○ #2 Test it    ⛓ #1",
    "── In Progress ──",
    "  ◐ #1 Write the parser (Writing)",
    "── Completed ──",
    "  ✓ #3 Read the spec",
  }
  local lines = H.list_lines()
  T.eq(lines and table.concat(lines, "\n"), table.concat(want, "\n"), "text")
  local win, buf = require("rpiv_todo.nvim.listwin").window()
  T.eq(vim.api.nvim_get_current_win(), win, "the window has the focus")
  T.eq(H.option(buf, "buf", "buftype"), "nofile", "scratch buffer")
  T.eq(H.option(buf, "buf", "filetype"), "rpiv_todo", "filetype")
  T.eq(H.option(buf, "buf", "modifiable"), false, "read-only")
  T.eq(vim.api.nvim_win_get_config(win).height, #want, "as tall as the list")
  vim.api.nvim_feedkeys("q", "xt", false)
  T.eq(require("rpiv_todo.nvim.listwin").window(), nil, "q closed it")
  T.eq(vim.api.nvim_win_is_valid(win), false, "window gone")
  T.eq(vim.api.nvim_get_current_win(), editor, "back in the editor")
end)

T.test(":Todos with 30 tasks: a scrollable window no taller than the editor, nothing in the pager", function()
  local nv = require("rpiv_todo.nvim")
  for i = 1, 30 do
    nv.execute({ action = "create", subject = "Bulk " .. i }, { session = "bulk" })
  end
  vim.v.errmsg = ""
  local before = vim.api.nvim_exec("messages", true)
  vim.cmd("Todos")
  local win = require("rpiv_todo.nvim.listwin").window()
  T.eq(type(win), "number", "window")
  T.eq(#H.list_lines(), 32, "header, one section, 30 rows")
  T.eq(vim.api.nvim_win_get_config(win).height <= vim.o.lines - 4, true, "fits the editor")
  T.eq(vim.api.nvim_exec("messages", true), before, "nothing written to :messages")
  require("rpiv_todo.nvim.listwin").close()
end)

T.test(":Todos shows the session of the latest tool call, and the one a host pinned", function()
  local nv = require("rpiv_todo.nvim")
  nv.execute({ action = "create", subject = "Side quest" }, { session = "other" })
  vim.cmd("Todos")
  T.eq(
    table.concat(H.list_lines(), "\n"),
    "1 pending\n── Pending ──\n  ○ #1 Side quest",
    "other session's list"
  )
  require("rpiv_todo.nvim.listwin").close()
  require("rpiv_todo").foreground("default")
  nv.execute({ action = "list" }, { session = "other" })
  vim.cmd("Todos")
  T.eq(H.list_lines()[1], "1/3 completed · 1 in progress · 1 pending", "the pinned session")
  require("rpiv_todo.nvim.listwin").close()
  require("rpiv_todo").foreground(nil)
  T.eq(require("rpiv_todo").foreground().id, "other", "following again: the latest call's session")
end)

---Capture User RpivTodoUserEdit (data on 0.8+, last_user_edit() on 0.7).
function H.capture_edits()
  local seen = {}
  local id = vim.api.nvim_create_autocmd("User", {
    pattern = "RpivTodoUserEdit",
    callback = function(args)
      seen[#seen + 1] = args.data or require("rpiv_todo.nvim").last_user_edit()
    end,
  })
  return seen, function()
    vim.api.nvim_del_autocmd(id)
  end
end

T.test(":Todos add/start/done/delete edit the list through the reducer and fire RpivTodoUserEdit", function()
  local todo = require("rpiv_todo")
  require("rpiv_todo").foreground("mine")
  local seen, stop = H.capture_edits()
  H.notes = {}
  vim.cmd("Todos add Write the docs for :Todos")
  vim.cmd("Todos add Second")
  vim.cmd("Todos start 1")
  vim.cmd("Todos done 1")
  vim.cmd("Todos delete 2")
  stop()
  local tasks = todo.session("mine"):state().tasks
  T.eq(tasks[1].subject, "Write the docs for :Todos", "subject with spaces and a colon")
  T.eq(tasks[1].status, "completed", "#1 completed")
  T.eq(tasks[2].status, "deleted", "#2 deleted")
  T.eq(#seen, 5, "one event per edit")
  T.eq(seen[1].session, "mine", "data.session")
  T.eq(seen[1].params.action, "create", "data.params")
  T.eq(seen[1].params.subject, "Write the docs for :Todos", "data.params.subject")
  T.eq(seen[1].result.content[1].text, "Created #1: Write the docs for :Todos (pending)", "data.result")
  T.eq(seen[3].params.status, "in_progress", "start")
  T.eq(seen[4].params.status, "completed", "done")
  T.eq(seen[5].params.action, "delete", "delete")
  T.eq(#seen[5].result.details.tasks, 2, "the result carries the snapshot")
  T.eq(H.notes[1].msg, "Created #1: Write the docs for :Todos (pending)", "confirmed")
  T.eq(H.notes[1].level, vim.log.levels.INFO, "as info")
end)

T.test("a rejected edit is a warning, changes nothing and fires no event", function()
  local todo = require("rpiv_todo")
  local before = vim.json.encode(todo.session("mine"):state())
  local seen, stop = H.capture_edits()
  H.notes = {}
  vim.cmd("Todos start 99")
  vim.cmd("Todos done x")
  vim.cmd("Todos start 1") -- completed -> in_progress is not a legal transition
  stop()
  T.eq(#H.notes, 3, "three warnings")
  for i = 1, 3 do
    T.eq(H.notes[i].level, vim.log.levels.WARN, "warning " .. i)
  end
  T.contains(H.notes[1].msg, "Error", "the reducer's message")
  T.eq(H.notes[2].msg, ':Todos done: expected a task id (a decimal integer such as 3), got "x"', "not an id")
  T.contains(H.notes[3].msg, "Error", "the reducer's message")
  T.contains(H.notes[1].msg, "#99", "names the id")
  T.eq(vim.json.encode(todo.session("mine"):state()), before, "list unchanged")
  T.eq(#seen, 0, "no event")
  H.notes = {}
  vim.cmd("Todos start")
  vim.cmd("Todos add")
  vim.cmd("Todos frobnicate 3")
  T.eq(#H.notes, 3, "usage warnings")
  T.contains(H.notes[1].msg, ":Todos start 3", "start usage")
  T.contains(H.notes[2].msg, ":Todos add", "add usage")
  T.contains(H.notes[3].msg, 'unknown subcommand "frobnicate"', "unknown subcommand")
  T.eq(H.notes[3].level, vim.log.levels.WARN, "as a warning")
end)

T.test("completion offers the subcommands, then the ids that fit each one", function()
  local nv = require("rpiv_todo.nvim")
  require("rpiv_todo").foreground("complete")
  nv.execute({ action = "create", subject = "a" }, { session = "complete" })
  nv.execute({ action = "create", subject = "b" }, { session = "complete" })
  nv.execute({ action = "create", subject = "c" }, { session = "complete" })
  nv.execute({ action = "update", id = 2, status = "in_progress" }, { session = "complete" })
  nv.execute({ action = "update", id = 3, status = "completed" }, { session = "complete" })
  local function complete(line)
    return table.concat(vim.fn.getcompletion(line, "cmdline"), ",")
  end
  T.eq(complete("Todos "), "add,start,done,delete,edit,export,import,hide,show,file,sessions,prune", "subcommands")
  T.eq(complete("Todos d"), "done,delete", "prefix")
  T.eq(complete("Todos start "), "1", "start: pending ids")
  T.eq(complete("Todos done "), "1,2", "done: pending and in progress")
  T.eq(complete("Todos delete "), "1,2,3", "delete: every live task")
  T.eq(complete("Todos add "), "", "add: free text")
end)

T.test(":Todos hide turns the panel off until :Todos show, across tool calls", function()
  local nv = require("rpiv_todo.nvim")
  T.eq(nv.window() ~= nil, true, "shown")
  vim.cmd("Todos hide")
  T.eq(nv.window(), nil, "hidden")
  nv.execute({ action = "create", subject = "d" }, { session = "complete" })
  T.eq(nv.window(), nil, "still hidden after a call")
  vim.cmd("Todos show")
  T.eq(nv.window() ~= nil, true, "shown again")
end)

T.test(":TodosToggle on an empty list says so and leaves the next list expanded", function()
  local nv = require("rpiv_todo.nvim")
  require("rpiv_todo").foreground("empty")
  H.notes = {}
  vim.cmd("TodosToggle")
  T.eq(#H.notes, 1, "feedback")
  T.eq(H.notes[1].msg, require("rpiv_todo.i18n").t("todos-empty"), "the empty-list wording")
  T.eq(require("rpiv_todo.nvim.frontend").collapsed(), false, "not collapsed")
  nv.execute({ action = "create", subject = "First" }, { session = "empty" })
  local _, buf = nv.window()
  T.eq(#vim.api.nvim_buf_get_lines(buf, 0, -1, false), 2, "heading and the row, not a collapsed panel")
  T.contains(vim.api.nvim_buf_get_lines(buf, 0, -1, false)[2], "First", "the row")
  require("rpiv_todo").foreground(nil)
end)

T.test("the collapsed hint speaks the editor's notation, or names :TodosToggle when no key is mapped", function()
  local nv = require("rpiv_todo.nvim")
  local todo = require("rpiv_todo")
  local function hint()
    local _, buf = nv.window()
    return vim.trim(vim.api.nvim_buf_get_lines(buf, 0, -1, false)[2])
  end
  todo.setup({ locale = "en" })
  nv.toggle()
  T.eq(hint(), "└─ <C-S-t> to expand", "mapped key")
  todo.setup({ locale = "en", collapse_key = "t" })
  T.eq(hint(), "└─ :TodosToggle to expand", "a bare key is not mapped")
  T.eq(vim.fn.maparg("t", "n"), "", "and t is not mapped")
  todo.setup({ locale = "en", collapse_key = "alt+x" })
  T.eq(hint(), "└─ <M-x> to expand", "another key")
  nv.setup({ map_collapse_key = false })
  T.eq(hint(), "└─ :TodosToggle to expand", "mapping turned off")
  nv.setup({})
  todo.setup({ locale = "en" })
  nv.toggle()
end)

T.test("setup errors say what they got", function()
  local todo = require("rpiv_todo")
  local nv = require("rpiv_todo.nvim")
  local cases = {
    {
      todo.setup,
      { max_widget_lines = "x" },
      '(rpiv_todo) max_widget_lines: expected an integer >= 3 and <= 1000000, got string "x"',
    },
    { todo.setup, { max_widget_lines = 2 }, "got number 2" },
    { todo.setup, { collapse_key = 5 }, "got number 5" },
    { todo.setup, { locale = true }, "got boolean true" },
    {
      nv.setup,
      { position = "middle" },
      '(rpiv_todo) nvim.position: expected "bottom-right", "top-right", "bottom-left", "top-left", "bottom" or "top", got string "middle"',
    },
    { nv.setup, { winblend = 101 }, "nvim.winblend: expected an integer from 0 to 100, got number 101" },
    { nv.setup, { padding = -1 }, "got number -1" },
    {
      nv.setup,
      { max_width = "wide" },
      'nvim.max_width: expected a number of columns, a fraction of the window (0 < x <= 1), or nil, got string "wide"',
    },
    { nv.setup, { exclude = { filetypes = "help" } }, 'filetypes: expected a list of strings, got string "help"' },
    { nv.setup, { avoid_cursor = 1 }, "nvim.avoid_cursor: expected a boolean, got number 1" },
  }
  for _, c in ipairs(cases) do
    local ok, err = pcall(c[1], c[2])
    T.eq(ok, false, c[3] .. " raised")
    T.contains(err, c[3], "message")
  end
  T.eq(todo.config.max_widget_lines, 12, "setup stayed unchanged")
  todo.setup({ locale = "en" })
end)

T.test("other front-end files add options, :Todos subcommands and commands", function()
  local nv = require("rpiv_todo.nvim")
  local commands = require("rpiv_todo.nvim.commands")
  local applied = {}
  require("rpiv_todo.nvim.options").register("keep_it", false, function(v)
    if type(v) ~= "boolean" then
      return "expected a boolean"
    end
  end, function(v)
    applied[#applied + 1] = v
  end)
  local ok, err = pcall(nv.setup, { keep_it = "yes" })
  T.eq(ok, false, "checked")
  T.contains(err, '(rpiv_todo) nvim.keep_it: expected a boolean, got string "yes"', "message")
  T.eq(#applied, 0, "not applied when a check fails")
  nv.setup({ keep_it = true })
  T.eq(nv.config.keep_it, true, "in the config")
  T.eq(applied[1], true, "applied")
  nv.setup({})
  T.eq(applied[2], false, "the default applied by a setup() without it")
  local ran = nil
  commands.register("ping", {
    usage = "ping",
    run = function(rest)
      ran = rest
    end,
  })
  vim.cmd("Todos ping  pong ")
  T.eq(ran, "pong", "subcommand ran with its argument")
  T.contains(table.concat(vim.fn.getcompletion("Todos p", "cmdline"), ","), "ping", "completed")
  commands.register_command("TodosPing", function()
    ran = "command"
  end, { nargs = 0 })
  vim.cmd("TodosPing")
  T.eq(ran, "command", "a whole command, created at once since :Todos exists")
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
  T.contains(text, 'panel: position "bottom-right", border "none"', "panel options")
  T.contains(text, "the panel shows the session of the latest tool call", "which session")
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
    "rpiv_todo-panel",
    "rpiv_todo-panel-session",
    "rpiv_todo-panel-place",
    "rpiv_todo-surprises",
    "rpiv_todo.foreground()",
    "rpiv_todo.nvim.edit()",
    "RpivTodoUserEdit",
    ":Todos-add",
    ":Todos-start",
    ":Todos-done",
    ":Todos-delete",
    ":Todos-hide",
    ":Todos-show",
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
