-- tests/nvim/locale_spec.lua: the overlay and :Todos in the user's language inside Neovim
-- (0.7.2 and current), through scripts/nvim-runner.lua.
--
-- The locale chain reads the process environment, so the environment cases run a child
-- Neovim (v:progpath, tests/nvim/locale_child.lua) with exactly the variables each case
-- names: RPIV_TODO_LOCALE, an rpiv-i18n locale.json under a temporary XDG_CONFIG_HOME,
-- LC_ALL/LANG (POSIX order), and `:language messages` at run time (v:lang). Only the C
-- locales are installed on a test machine, so `:language messages de_DE.UTF-8` fails with
-- E197 and cannot be tested; `:language messages C` can, and so can $LANG naming a locale
-- that is not installed (0.7.2 then reports it in v:lang, 0.10+ reports "C").
-- The in-process cases switch with setup{ locale = ... } and check the next paint,
-- including the plural forms of the summary row (Russian/Ukrainian one/few/many at
-- 1, 2, 5, 11, 21, 22; Chinese without plural).
--
-- Expected text is the English render of the TypeScript original (overlay, /todos) with the
-- wording of locales/<code>/todo.ftl, written out by hand.

local N = dofile(os.getenv("RPIV_ROOT") .. "/tests/nvim/helpers.lua")
local T = N.T
local H = {}

H.root = N.root
H.run_child = N.run_child

-- ---------------------------------------------------------------------------
-- Child Neovim with a controlled environment
-- ---------------------------------------------------------------------------

H.empty_config = vim.fn.tempname()
vim.fn.mkdir(H.empty_config, "p")

---Run locale_child.lua in a fresh Neovim with only `env` among the locale variables.
---@param env table<string, string>
---@param language? string run `:language messages <language>` after the first paint
---@param kill_after? integer seconds before a hung child is killed
---@return table what the child recorded
function H.child(env, language, kill_after)
  local vars = { XDG_CONFIG_HOME = H.empty_config }
  for k, v in pairs(env) do
    vars[k] = v
  end
  vars.RPIV_LANGUAGE = language
  local got = H.run_child({
    root = H.root,
    file = "tests/nvim/locale_child.lua",
    unset = { "LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE", "RPIV_TODO_LOCALE" },
    vars = vars,
    kill_after = kill_after,
  }, 2)
  return got
end

function H.same(got, want, what)
  if type(got) ~= "table" then
    error(what .. ": no lines", 2)
  end
  if #got ~= #want then
    error(
      string.format(
        "%s: %d lines, want %d:\n  %s\nwant\n  %s",
        what,
        #got,
        #want,
        table.concat(got, "\n  "),
        table.concat(want, "\n  ")
      ),
      2
    )
  end
  for i = 1, #want do
    if got[i] ~= want[i] then
      error(string.format("%s: line %d is %q, want %q", what, i, got[i], want[i]), 2)
    end
  end
end

-- The child's list: #1 A in progress, #2 B and #3 C pending, #4 D completed; with
-- max_widget_lines = 3 one row shows (A) and the summary counts D and the cut tail B, C.
H.want = {
  en = {
    lines = { "● Todos (1/4)", "├─ ◐ A", "└─ +3 more (1 completed, 2 pending)" },
    todos = "1/4 completed · 1 in progress · 2 pending\n── Pending ──\n  ○ #2 B\n  ○ #3 C\n"
      .. "── In Progress ──\n  ◐ #1 A\n── Completed ──\n  ✓ #4 D",
  },
  de = {
    lines = { "● Aufgaben (1/4)", "├─ ◐ A", "└─ +3 weitere Aufgaben (1 erledigt, 2 offen)" },
    todos = "1/4 erledigt · 1 in Arbeit · 2 offen\n── Offen ──\n  ○ #2 B\n  ○ #3 C\n"
      .. "── In Arbeit ──\n  ◐ #1 A\n── Erledigt ──\n  ✓ #4 D",
  },
  ru = {
    lines = {
      "● Задачи (1/4)",
      "├─ ◐ A",
      "└─ ещё 3 задачи (1 выполнена, 2 ожидают)",
    },
    todos = "выполнено 1 из 4 · 1 в работе · 2 ожидают\n── Ожидают ──\n  ○ #2 B\n  ○ #3 C\n"
      .. "── В работе ──\n  ◐ #1 A\n── Выполнены ──\n  ✓ #4 D",
  },
  ["pt-BR"] = {
    lines = { "● Tarefas (1/4)", "├─ ◐ A", "└─ +3 outras tarefas (1 concluída, 2 pendentes)" },
    todos = "1/4 concluída · 1 em andamento · 2 pendentes\n── Pendentes ──\n  ○ #2 B\n  ○ #3 C\n"
      .. "── Em andamento ──\n  ◐ #1 A\n── Concluídas ──\n  ✓ #4 D",
  },
}

---Check a child's overlay, :Todos, locale and health line against `code`'s wording.
function H.speaks(got, code, what)
  local want = H.want[code]
  H.same(got.lines, want.lines, what .. ": overlay")
  T.eq(got.todos, want.todos, what .. ": :Todos")
  T.eq(got.locale, code, what .. ": rpiv_todo.locale()")
  T.contains(got.health, "UI locale: " .. code .. " ", what .. ": :checkhealth")
  T.eq(got.messages, "", what .. ": message area")
  T.eq(got.errmsg, "", what .. ": v:errmsg")
end

function H.write_locale_file(contents)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. "/rpiv-i18n", "p")
  vim.fn.writefile({ contents }, dir .. "/rpiv-i18n/locale.json")
  return dir
end

T.test("no locale anywhere: English", function()
  H.speaks(H.child({}), "en", "nothing set")
end)

T.test("RPIV_TODO_LOCALE=de for the Neovim process: the overlay and :Todos speak German", function()
  H.speaks(H.child({ RPIV_TODO_LOCALE = "de" }), "de", "RPIV_TODO_LOCALE")
end)

T.test("the rpiv-i18n locale.json under XDG_CONFIG_HOME: German", function()
  local dir = H.write_locale_file('{"locale": "de"}')
  H.speaks(H.child({ XDG_CONFIG_HOME = dir, LANG = "ru_RU.UTF-8" }), "de", "locale.json before LANG")
  vim.fn.delete(dir, "rf")
end)

T.test("a malformed locale.json is ignored without a word; LANG=pt_BR.UTF-8 gives pt-BR", function()
  local dir = H.write_locale_file('{"locale": ')
  H.speaks(H.child({ XDG_CONFIG_HOME = dir, LANG = "pt_BR.UTF-8" }), "pt-BR", "malformed file")
  vim.fn.delete(dir, "rf")
end)

T.test("a FIFO at locale.json is passed over, never waited on; LANG=pt_BR.UTF-8 gives pt-BR", function()
  -- Issue 19, item 6: opening the pipe for reading waited for a writer forever, at the
  -- first tool call, and Neovim then ignored SIGTERM. A child that hangs is killed after
  -- a minute, and the test fails.
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. "/rpiv-i18n", "p")
  vim.fn.system({ "mkfifo", dir .. "/rpiv-i18n/locale.json" })
  T.eq(vim.v.shell_error, 0, "mkfifo made the pipe")
  H.speaks(H.child({ XDG_CONFIG_HOME = dir, LANG = "pt_BR.UTF-8" }, nil, 60), "pt-BR", "FIFO at locale.json")
  T.eq(vim.fn.getftype(dir .. "/rpiv-i18n/locale.json"), "fifo", "still a pipe")
  vim.fn.delete(dir, "rf")
end)

T.test("RPIV_TODO_LOCALE=ru wins over LANG=de_DE.UTF-8, with Russian plural forms", function()
  H.speaks(H.child({ RPIV_TODO_LOCALE = "ru", LANG = "de_DE.UTF-8" }), "ru", "RPIV_TODO_LOCALE over LANG")
end)

T.test("LANG=de_DE.UTF-8 (not an installed locale): German, whatever v:lang says", function()
  local got = H.child({ LANG = "de_DE.UTF-8" })
  -- 0.7.2 puts $LANG into v:lang even when setlocale() fails; 0.10+ reports "C". Both
  -- must end in German: a language in v:lang stands in for the variables, "C" defers to them.
  T.note("v:lang at start: " .. tostring(got.lang_at_start))
  H.speaks(got, "de", "LANG")
end)

T.test("LC_ALL=C overrides LANG (POSIX order): English", function()
  H.speaks(H.child({ LC_ALL = "C", LANG = "de_DE.UTF-8" }), "en", "LC_ALL=C")
end)

T.test(":language messages C typed at run time repaints the panel in English at once", function()
  local got = H.child({ LANG = "de_DE.UTF-8" }, "C")
  H.speaks(got, "de", "before :language")
  T.eq(got.language_ok, true, ":language messages C succeeds")
  T.eq(got.lang_after, "C", "v:lang after")
  T.eq(got.locale_after, "en", "rpiv_todo.locale() after")
  H.same(got.lines_now, H.want.en.lines, "panel right after :language messages C, before any call")
  H.same(got.lines_after, H.want.en.lines, "panel after the next call")
end)

-- ---------------------------------------------------------------------------
-- setup{ locale = ... } at run time, in this Neovim
-- ---------------------------------------------------------------------------

N.plugin()
local todo = require("rpiv_todo")
local nv = require("rpiv_todo.nvim")

N.capture_notify(H)

-- The panel's lines without the blank padding column on each side.
function H.lines()
  local win, buf = nv.window()
  if not win then
    return nil
  end
  local out = {}
  for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    out[i] = line:sub(2, -2)
  end
  return out
end

---The :Todos window's text (closed afterwards), or the notification when it opened none.
function H.todos_text()
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

---Replay a snapshot of `pending` pending tasks followed by `completed` completed ones
---into the foreground session; the replay repaints.
function H.replay(pending, completed)
  local tasks = {}
  for i = 1, pending + completed do
    tasks[i] = { id = i, subject = "T" .. i, status = i <= pending and "pending" or "completed" }
  end
  nv.replay("default", {
    {
      role = "toolResult",
      toolName = "todo",
      details = { action = "list", params = { action = "list" }, tasks = tasks, nextId = #tasks + 1 },
    },
  })
end

T.test('setup{ locale = "ru" } at run time: the panel repaints at once, and :Todos is Russian', function()
  todo.sessions.reset()
  todo.setup({ locale = "en", max_widget_lines = 12, collapse_key = "ctrl+shift+t" })
  nv.setup({})
  nv.execute({ action = "create", subject = "X" })
  nv.execute({ action = "create", subject = "Y" })
  H.same(H.lines(), { "● Todos (0/2)", "├─ ○ X", "└─ ○ Y" }, "English first")
  todo.setup({ locale = "ru" })
  T.eq(todo.locale(), "ru", "rpiv_todo.locale()")
  -- No tool call, no refresh: setup() itself repaints.
  H.same(H.lines(), { "● Задачи (0/2)", "├─ ○ X", "└─ ○ Y" }, "repainted by setup")
  vim.cmd("TodosToggle")
  H.same(H.lines(), { "● Задачи (0/2)", "└─ <C-S-t> — развернуть" }, "collapsed hint")
  todo.setup({ locale = "ru", collapse_key = "off" })
  H.same(
    H.lines(),
    { "● Задачи (0/2)", "└─ :TodosToggle — развернуть" },
    "hint with no key mapped"
  )
  vim.cmd("TodosToggle")
  todo.setup({ locale = "ru", collapse_key = "ctrl+shift+t" })
  T.eq(H.todos_text(), "2 ожидают\n── Ожидают ──\n  ○ #1 X\n  ○ #2 Y", ":Todos")
  todo.setup({ locale = "de" })
  H.same(H.lines(), { "● Aufgaben (0/2)", "├─ ○ X", "└─ ○ Y" }, "switched again, at once")
end)

T.test("the summary row agrees in number after a run-time switch (ru, uk one/few/many; zh)", function()
  local cases = {
    -- { locale, pending, completed, summary row }. One row shows (the first pending
    -- task); the summary counts the rest, so its count is at least 2, but each part can be 1.
    { "ru", 2, 1, "└─ ещё 2 задачи (1 выполнена, 1 ожидает)" },
    { "ru", 3, 0, "└─ ещё 2 задачи (2 ожидают)" },
    { "ru", 6, 0, "└─ ещё 5 задач (5 ожидают)" },
    { "ru", 12, 0, "└─ ещё 11 задач (11 ожидают)" },
    { "ru", 22, 0, "└─ ещё 21 задача (21 ожидает)" },
    { "ru", 23, 0, "└─ ещё 22 задачи (22 ожидают)" },
    { "ru", 1, 21, "└─ ещё 21 задача (21 выполнена)" },
    { "ru", 1, 11, "└─ ещё 11 задач (11 выполнено)" },
    { "ru", 3, 22, "└─ ещё 24 задачи (22 выполнены, 2 ожидают)" },
    { "uk", 2, 1, "└─ ще 2 завдання (1 виконане, 1 очікує)" },
    { "uk", 6, 0, "└─ ще 5 завдань (5 очікують)" },
    { "uk", 12, 0, "└─ ще 11 завдань (11 очікують)" },
    { "uk", 22, 0, "└─ ще 21 завдання (21 очікує)" },
    { "uk", 1, 22, "└─ ще 22 завдання (22 виконані)" },
    { "zh", 6, 1, "└─ 还有 6 项（1 项已完成，5 项待处理）" },
    { "de", 2, 1, "└─ +2 weitere Aufgaben (1 erledigt, 1 offen)" },
    { "fr", 3, 1, "└─ +3 autres tâches (1 terminée, 2 en attente)" },
  }
  for _, c in ipairs(cases) do
    -- setup() puts an absent key back to its default, so the budget goes with each call.
    todo.setup({ locale = c[1], max_widget_lines = 3 })
    H.replay(c[2], c[3])
    local lines = H.lines()
    local what = string.format("%s, %d pending, %d completed", c[1], c[2], c[3])
    T.eq(lines and #lines, 3, what .. ": heading, one row, summary (no blank line)")
    T.eq(lines[3], c[4], what)
  end
  todo.setup({ locale = "en", max_widget_lines = 12 })
end)

T.test("the editor locale follows v:lang only through the chain: setup{ locale } still wins", function()
  todo.setup({ locale = "uk" })
  T.eq(require("rpiv_todo.nvim.frontend").use_editor_locale(), "uk", "explicit locale kept")
  vim.cmd("language messages C")
  require("rpiv_todo.nvim.frontend").refresh()
  T.eq(todo.locale(), "uk", "still uk after :language messages C")
end)

T.test("without setup{ locale }, a variable changed while Neovim runs reaches the next paint", function()
  require("rpiv_todo.nvim.frontend").detach() -- sessions.reset() drops the front end's listeners: attach afresh
  todo.sessions.reset()
  require("rpiv_todo.i18n").reset() -- forget the explicit locale: the chain decides
  nv.setup({})
  vim.env.RPIV_TODO_LOCALE = "fr"
  nv.execute({ action = "create", subject = "X" })
  H.same(H.lines(), { "● Tâches (0/1)", "└─ ○ X" }, "French from RPIV_TODO_LOCALE")
  vim.env.RPIV_TODO_LOCALE = "zh_CN.UTF-8"
  require("rpiv_todo.nvim.frontend").refresh()
  H.same(H.lines(), { "● 待办 (0/1)", "└─ ○ X" }, "Chinese after the change")
  vim.env.RPIV_TODO_LOCALE = nil
  require("rpiv_todo.nvim.frontend").refresh()
  -- `:language messages C` above set $LC_MESSAGES=C: English.
  H.same(H.lines(), { "● Todos (0/1)", "└─ ○ X" }, "English once it is unset")
end)

vim.fn.delete(H.empty_config, "rf")
T.finish()
