-- tests/nvim/robust_spec.lua: the user's commands and events when what they meet is odd
-- (issue 19, items 8, 12, 13, 14), in headless Neovim 0.7.2 and current:
--   * :Todos ids are decimal integers only (no 0x10, 1e1, or a number a double rounds);
--   * a session id with a NUL or an escape is shown escaped (no E976);
--   * the list window and the panel hold only what fits the screen, however long the
--     tasks' texts are;
--   * a failing User RpivTodoUserEdit handler: the edit stands, every handler runs, one
--     error names the event, nothing raises, even under pcall(vim.cmd, ...).

local N = dofile(os.getenv("RPIV_ROOT") .. "/tests/nvim/helpers.lua")
local T = N.T
local H = {}

N.plugin()
require("rpiv_todo").setup({ locale = "en" })

N.capture_notify(H)

---The :Todos window's lines, or nil when none is open.
function H.list_lines()
  local win, buf = require("rpiv_todo.nvim.listwin").window()
  if not win then
    return nil
  end
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

---A fresh list of `n` tasks in session `id` (the foreground one).
function H.fresh(id, n)
  local nv = require("rpiv_todo.nvim")
  require("rpiv_todo").foreground(id)
  nv.execute({ action = "clear" }, { session = id })
  for i = 1, n do
    nv.execute({ action = "create", subject = "task " .. i }, { session = id })
  end
  H.notes = {}
end

T.test(":Todos ids: decimal integers only, and what was typed is named when refused", function()
  H.fresh("ids", 17)
  local todo = require("rpiv_todo")
  local cases = {
    { "delete", "0x10", ':Todos delete: expected a task id (a decimal integer such as 3), got "0x10"' },
    { "done", "1e1", ':Todos done: expected a task id (a decimal integer such as 3), got "1e1"' },
    { "start", "-3", ':Todos start: expected a task id (a decimal integer such as 3), got "-3"' },
    { "done", "1.0", ':Todos done: expected a task id (a decimal integer such as 3), got "1.0"' },
    { "done", "inf", ':Todos done: expected a task id (a decimal integer such as 3), got "inf"' },
    {
      "delete",
      "9007199254740993",
      ':Todos delete: expected a task id of at most 9007199254740991, got "9007199254740993"',
    },
    {
      "delete",
      "123456789012345678901234567890",
      ':Todos delete: expected a task id of at most 9007199254740991, got "123456789012345678901234567890"',
    },
  }
  for _, case in ipairs(cases) do
    H.notes = {}
    vim.cmd("Todos " .. case[1] .. " " .. case[2])
    T.eq(#H.notes, 1, case[2] .. ": one notification")
    T.eq(H.notes[1].msg, case[3], case[2])
    T.eq(H.notes[1].level, vim.log.levels.WARN, case[2] .. " as a warning")
  end
  for _, task in ipairs(todo.session("ids"):state().tasks) do
    T.eq(task.status, "pending", "#" .. task.id .. " untouched")
  end
  -- Decimal ids, leading zeros included, still work.
  vim.cmd("Todos done 016")
  vim.cmd("Todos delete 10")
  local tasks = todo.session("ids"):state().tasks
  T.eq(tasks[16].status, "completed", "016 is #16")
  T.eq(tasks[10].status, "deleted", "#10")
  T.eq(H.notes[#H.notes].msg, "Deleted #10: task 10", "confirmed")
end)

T.test("a session id with a NUL or an escape is shown escaped in :Todos", function()
  local nv = require("rpiv_todo.nvim")
  local id = "chat\0one\27[31m"
  nv.execute({ action = "create", subject = "Odd" }, { session = id })
  require("rpiv_todo").foreground(id)
  H.notes = {}
  local ok, err = pcall(vim.cmd, "Todos")
  T.eq(ok, true, "no error: " .. tostring(err))
  T.eq(#H.notes, 0, "no notification")
  T.same(H.list_lines(), { "1 pending", "── Pending ──", "  ○ #1 Odd" }, "the list")
  if vim.fn.has("nvim-0.9") == 1 then
    local win = require("rpiv_todo.nvim.listwin").window()
    local title = vim.api.nvim_win_get_config(win).title
    local text = type(title) == "table" and title[1][1] or title
    T.eq(text, " Todos · chat\\x00one\\x1b[31m ", "the title")
  end
  require("rpiv_todo.nvim.listwin").close()
  T.eq(require("rpiv_todo.nvim.listing").shown_id(id), "chat\\x00one\\x1b[31m", "shown_id")
end)

T.test("the list window and the panel hold what fits the screen, not 100 KB subjects", function()
  local nv = require("rpiv_todo.nvim")
  local todo = require("rpiv_todo")
  -- A host's snapshot: a tool call may not add a subject this long (src/limits.rs).
  local tasks = {}
  for i = 1, 200 do
    tasks[i] = {
      id = i,
      subject = i .. " " .. string.rep("long subject ", 8000),
      status = i == 1 and "in_progress" or "pending",
      activeForm = string.rep("working ", 10000),
    }
  end
  todo.session("long").list:replace({ tasks = tasks, nextId = 201 })
  require("rpiv_todo").foreground("long")
  nv.show()
  require("rpiv_todo.nvim.frontend").refresh()
  H.notes = {}
  local text = nv.todos()
  local lines = H.list_lines()
  T.eq(#lines, 203, "header, two section lines and 200 rows")
  local widest = 0
  for _, line in ipairs(lines) do
    widest = math.max(widest, vim.fn.strdisplaywidth(line))
  end
  T.eq(widest <= vim.o.columns, true, "every line fits the screen: " .. widest .. " <= " .. vim.o.columns)
  T.eq(#text < 200 * 4 * vim.o.columns, true, "the text returned is the text shown: " .. #text .. " bytes")
  T.eq(lines[3]:sub(1, #"  ○ #2 2 long subject"), "  ○ #2 2 long subject", "the row starts as it should")
  T.eq(lines[3]:sub(-3), "…", "and ends cut")
  T.eq(lines[203]:sub(1, #"  ◐ #1 1 long subject"), "  ◐ #1 1 long subject", "the task in progress")
  require("rpiv_todo.nvim.listwin").close()
  -- :Todos done keeps the window's lines bounded too.
  vim.cmd("Todos")
  vim.cmd("Todos done 1")
  for _, line in ipairs(H.list_lines()) do
    T.eq(vim.fn.strdisplaywidth(line) <= vim.o.columns, true, "after an edit: " .. line:sub(1, 30))
  end
  require("rpiv_todo.nvim.listwin").close()
  vim.wait(200, function()
    return nv.window() ~= nil
  end)
  local win, buf = nv.window()
  T.eq(win ~= nil, true, "the panel shows")
  for _, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    T.eq(vim.fn.strdisplaywidth(line) <= vim.o.columns, true, "panel line fits: " .. line:sub(1, 30))
  end
  nv.execute({ action = "clear" }, { session = "long" })
end)

T.test("a failing RpivTodoUserEdit handler: the edit stands, every handler runs, one error", function()
  H.fresh("events", 3)
  local todo = require("rpiv_todo")
  local ran = {}
  local ids = {}
  ids[1] = vim.api.nvim_create_autocmd("User", {
    pattern = "RpivTodoUserEdit",
    callback = function()
      ran[#ran + 1] = "first"
      error("recorder exploded")
    end,
  })
  ids[2] = vim.api.nvim_create_autocmd("User", {
    pattern = "RpivTodoUserEdit",
    callback = function()
      ran[#ran + 1] = "second"
    end,
  })
  vim.g.rpiv_todo_robust_third = 0
  ids[3] = vim.api.nvim_create_autocmd("User", {
    pattern = "RpivTodoUserEdit",
    command = "let g:rpiv_todo_robust_third += 1",
  })
  vim.v.errmsg = ""
  local messages_before = vim.api.nvim_exec("messages", true)
  -- From a command, and from a front end that wraps it in pcall.
  vim.cmd("Todos done 1")
  local ok, err = pcall(vim.cmd, "Todos done 2")
  T.eq(ok, true, "pcall(vim.cmd) does not raise: " .. tostring(err))
  for _, id in ipairs(ids) do
    vim.api.nvim_del_autocmd(id)
  end
  T.same(ran, { "first", "second", "first", "second" }, "every Lua handler ran, both times")
  T.eq(vim.g.rpiv_todo_robust_third, 2, "the Vimscript handler ran both times")
  local tasks = todo.session("events"):state().tasks
  T.eq(tasks[1].status, "completed", "the first edit stands")
  T.eq(tasks[2].status, "completed", "the second edit stands")
  T.eq(#H.notes, 4, "per edit: its confirmation and one error")
  T.eq(H.notes[1].msg, "Updated #1 (pending → completed)", "confirmed")
  T.eq(H.notes[2].level, vim.log.levels.ERROR, "the failure is an error")
  T.contains(H.notes[2].msg, "(rpiv_todo) a User RpivTodoUserEdit handler failed: ", "names the event")
  T.contains(H.notes[2].msg, "recorder exploded", "and the handler's message")
  T.eq(H.notes[2].msg:find("\n") == nil and H.notes[2].msg:find("traceback") == nil, true, "one line, no traceback")
  T.eq(H.notes[4].msg, H.notes[2].msg, "the second edit's report")
  T.eq(vim.api.nvim_exec("messages", true), messages_before, "nothing in :messages (no hit-enter prompt)")
  T.eq(vim.v.errmsg, "", "v:errmsg as it was")
  -- Without a failing handler: no error.
  H.notes = {}
  vim.cmd("Todos done 3")
  T.eq(#H.notes, 1, "just the confirmation")
end)

T.finish()
