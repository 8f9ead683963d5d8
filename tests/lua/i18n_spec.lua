-- tests/lua/i18n_spec.lua: localization through the public Lua contract, from a real
-- interpreter against the built module: core.tr, core.resolve_locale, core.locales,
-- todo.locale() and setup{ locale = … }; the overlay and /todos in every locale; and
-- everything the model reads byte-identical under every locale. By hand, from the crate root:
--   lua5.4 tests/lua/i18n_spec.lua      (also luajit, lua5.1)
-- Expected strings are the translations as written in locales/*/todo.ftl (the spec of
-- each locale) and, for model-facing output, the recorded traces (tests/fixtures).

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local json = dofile(T.root() .. "/tests/lua/json.lua")
local core = require("rpiv_todo.core")
local todo = require("rpiv_todo")
local i18n = require("rpiv_todo.i18n")
local H = {}

H.LOCALES = { "de", "en", "es", "fr", "pt", "pt-BR", "ru", "uk", "zh" }

-- The locale chain sees only `vars` (every other variable it reads is unset, and the
-- config directory is empty), so the host's own environment cannot leak in; no locale is
-- set explicitly and nothing is cached.
function H.isolated(vars)
  local env = {
    RPIV_TODO_LOCALE = false,
    LC_ALL = false,
    LC_MESSAGES = false,
    LANG = false,
    XDG_CONFIG_HOME = T.tempdir(),
  }
  for k, v in pairs(vars or {}) do
    env[k] = v
  end
  i18n.reset()
  i18n.set_env(env)
end

-- The locale `code`, set through setup.
function H.in_locale(code)
  H.isolated()
  todo.sessions.reset()
  todo.setup({ locale = code })
end

T.test("core.tr formats plural forms from integer and float counts", function()
  for _, case in ipairs({
    { "ru", 1, "ещё 1 задача (1 ожидает)" },
    { "ru", 2, "ещё 2 задачи (2 ожидают)" },
    { "ru", 5, "ещё 5 задач (5 ожидают)" },
    { "ru", 11, "ещё 11 задач (11 ожидают)" },
    { "ru", 21, "ещё 21 задача (21 ожидает)" },
    { "ru", 22, "ещё 22 задачи (22 ожидают)" },
    { "uk", 1, "ще 1 завдання (1 очікує)" },
    { "uk", 5, "ще 5 завдань (5 очікують)" },
    { "uk", 22, "ще 22 завдання (22 очікують)" },
    { "de", 1, "+1 weitere Aufgabe (1 offen)" },
    { "en", 3, "+3 more (3 pending)" },
  }) do
    local code, count, want = case[1], case[2], case[3]
    -- Lua 5.4 has integers and floats: both select the same form (elsewhere both are numbers).
    for _, n in ipairs({ count, count + 0.0 }) do
      T.eq(core.tr(code, "overlay-more", { count = n, completed = 0, pending = n }), want, code .. " " .. n)
    end
  end
end)

T.test("core.tr inserts text arguments and falls back for unknown ids and locales", function()
  T.eq(core.tr("zh", "overlay-expand-hint", { key = "alt+t" }), "按 alt+t 展开")
  T.eq(core.tr("en", "no-such-id"), "no-such-id")
  T.eq(core.tr("xx", "overlay-heading"), "Todos")
  T.eq(core.tr(nil, "overlay-collapsed"), "collapsed")
end)

T.test("core.tr rejects arguments that are not numbers or strings", function()
  T.raises(function()
    core.tr("de", "todos-pending", { count = {} })
  end, "rpiv_todo.core.tr: argument count: expected a number or a string, got table")
end)

T.test("core.locales lists the nine codes", function()
  T.eq(table.concat(core.locales(), ","), "de,en,es,fr,pt,pt-BR,ru,uk,zh")
end)

T.test("core.resolve_locale walks the chain over the env overrides", function()
  local xdg = T.tempdir()
  T.sh("mkdir -p '" .. xdg .. "/rpiv-i18n'")
  T.write(xdg .. "/rpiv-i18n/locale.json", '{"locale": "uk"}')
  local none = T.tempdir()
  T.eq(core.resolve_locale("fr", { RPIV_TODO_LOCALE = "de", XDG_CONFIG_HOME = xdg }), "fr", "explicit")
  T.eq(core.resolve_locale(nil, { RPIV_TODO_LOCALE = "de", XDG_CONFIG_HOME = xdg }), "de", "RPIV_TODO_LOCALE")
  T.eq(core.resolve_locale(nil, { RPIV_TODO_LOCALE = false, XDG_CONFIG_HOME = xdg }), "uk", "the file")
  T.eq(
    core.resolve_locale(nil, {
      RPIV_TODO_LOCALE = false,
      XDG_CONFIG_HOME = none,
      LC_ALL = false,
      LC_MESSAGES = false,
      LANG = "pt_BR.UTF-8",
    }),
    "pt-BR",
    "LANG"
  )
  T.eq(
    core.resolve_locale(nil, {
      RPIV_TODO_LOCALE = false,
      XDG_CONFIG_HOME = none,
      LC_ALL = "C",
      LC_MESSAGES = false,
      LANG = "de_DE.UTF-8",
    }),
    "en",
    "LC_ALL=C"
  )
  T.eq(
    core.resolve_locale(nil, {
      RPIV_TODO_LOCALE = "",
      XDG_CONFIG_HOME = none,
      LC_ALL = "",
      LC_MESSAGES = "es_MX",
      LANG = "de_DE",
    }),
    "es",
    "empty values are unset"
  )
end)

T.test("todo.locale() follows the chain and setup switches it", function()
  H.isolated({ LANG = "ru_RU.UTF-8" })
  local seen = { todo.locale() }
  todo.setup({ locale = "pt-BR" })
  seen[#seen + 1] = todo.locale()
  todo.setup({ max_widget_lines = 5 }) -- no locale key: unchanged
  seen[#seen + 1] = todo.locale()
  todo.setup({ locale = "en" })
  seen[#seen + 1] = todo.locale()
  T.eq(table.concat(seen, ","), "ru,pt-BR,pt-BR,en")
  todo.setup({})
end)

T.test("setup rejects unknown locales and keeps the current one", function()
  H.in_locale("de")
  for _, bad in ipairs({ "xx", "pt_BR", "" }) do
    local ok, err = pcall(todo.setup, { locale = bad })
    T.ok(not ok, T.show(bad) .. " was accepted")
    T.eq(tostring(err), "(rpiv_todo) locale: expected one of de, en, es, fr, pt, pt-BR, ru, uk, zh", T.show(bad))
  end
  T.eq(todo.locale(), "de")
end)

T.test("the locale is resolved once, then cached until the host sets the env again", function()
  H.isolated()
  local env = { RPIV_TODO_LOCALE = false, LC_ALL = false, LC_MESSAGES = false, LANG = "fr_FR" }
  i18n.set_env(env)
  local first = i18n.locale()
  env.LANG = "de_DE" -- the environment changes later
  local cached = i18n.locale()
  i18n.set_env(env) -- a host re-reads it explicitly
  T.eq(table.concat({ first, cached, i18n.locale() }, ","), "fr,fr,de")
end)

-- Six tasks: 2 completed, 1 in progress, 3 pending. With max_widget_lines = 4 the panel has
-- 3 rows under the heading, one kept for the summary: the completed are dropped and the
-- unfinished tail is cut, so 2 completed and 2 pending are summarized.
H.SIX_TASKS = {
  nextId = 7,
  tasks = {
    { id = 1, subject = "One", status = "completed" },
    { id = 2, subject = "Two", status = "completed" },
    { id = 3, subject = "Three", status = "in_progress", activeForm = "Doing three" },
    { id = 4, subject = "Four", status = "pending" },
    { id = 5, subject = "Five", status = "pending" },
    { id = 6, subject = "Six", status = "pending" },
  },
}

T.test("the overlay's heading and summary speak every locale", function()
  for _, case in ipairs({
    { "en", "Todos", "+4 more (2 completed, 2 pending)" },
    { "de", "Aufgaben", "+4 weitere Aufgaben (2 erledigt, 2 offen)" },
    { "es", "Tareas", "+4 tareas más (2 completadas, 2 pendientes)" },
    { "fr", "Tâches", "+4 autres tâches (2 terminées, 2 en attente)" },
    { "pt", "Tarefas", "+4 outras tarefas (2 concluídas, 2 pendentes)" },
    { "pt-BR", "Tarefas", "+4 outras tarefas (2 concluídas, 2 pendentes)" },
    { "ru", "Задачи", "ещё 4 задачи (2 выполнены, 2 ожидают)" },
    { "uk", "Завдання", "ще 4 завдання (2 виконані, 2 очікують)" },
    { "zh", "待办", "还有 4 项（2 项已完成，2 项待处理）" },
  }) do
    local code, heading, summary = case[1], case[2], case[3]
    H.in_locale(code)
    T.same(todo.overlay.render(H.SIX_TASKS, { width = 1000, max_widget_lines = 4 }), {
      "● " .. heading .. " (2/6)",
      "├─ ◐ Three (Doing three)",
      "├─ ○ Four",
      "└─ " .. summary,
      "",
    }, code)
  end
end)

T.test("the overlay's summary agrees in number in Russian and Ukrainian", function()
  -- C completed then P pending tasks; 2 rows shown: the completed are dropped and the
  -- pending tail beyond 2 is cut, so C + P - 2 are summarized.
  for _, case in ipairs({
    { "ru", 1, 3, "ещё 2 задачи (1 выполнена, 1 ожидает)" },
    { "ru", 0, 7, "ещё 5 задач (5 ожидают)" },
    { "ru", 0, 13, "ещё 11 задач (11 ожидают)" },
    { "ru", 0, 23, "ещё 21 задача (21 ожидает)" },
    { "ru", 0, 24, "ещё 22 задачи (22 ожидают)" },
    { "ru", 21, 2, "ещё 21 задача (21 выполнена)" },
    { "ru", 22, 2, "ещё 22 задачи (22 выполнены)" },
    { "ru", 5, 2, "ещё 5 задач (5 выполнено)" },
    { "ru", 11, 2, "ещё 11 задач (11 выполнено)" },
    { "uk", 1, 3, "ще 2 завдання (1 виконане, 1 очікує)" },
    { "uk", 0, 7, "ще 5 завдань (5 очікують)" },
    { "uk", 0, 13, "ще 11 завдань (11 очікують)" },
    { "uk", 0, 23, "ще 21 завдання (21 очікує)" },
    { "uk", 0, 24, "ще 22 завдання (22 очікують)" },
    { "uk", 21, 2, "ще 21 завдання (21 виконане)" },
    { "uk", 22, 2, "ще 22 завдання (22 виконані)" },
    { "uk", 5, 2, "ще 5 завдань (5 виконано)" },
    { "uk", 11, 2, "ще 11 завдань (11 виконано)" },
  }) do
    local code, completed, pending, summary = case[1], case[2], case[3], case[4]
    H.in_locale(code)
    local tasks = {}
    for i = 1, completed do
      tasks[#tasks + 1] = { id = i, subject = "c" .. i, status = "completed" }
    end
    for i = 1, pending do
      tasks[#tasks + 1] = { id = completed + i, subject = "p" .. i, status = "pending" }
    end
    local lines = todo.overlay.render({ tasks = tasks, nextId = #tasks + 1 }, { width = 1000, max_widget_lines = 4 })
    T.eq(lines[4], "└─ " .. summary, code .. " " .. completed .. "+" .. pending)
  end
end)

T.test("the collapsed overlay's hint and label speak every locale", function()
  for _, case in ipairs({
    { "en", "Todos", "ctrl+shift+t to expand", "collapsed" },
    { "de", "Aufgaben", "ctrl+shift+t zum Aufklappen", "eingeklappt" },
    { "es", "Tareas", "ctrl+shift+t para expandir", "contraído" },
    { "fr", "Tâches", "ctrl+shift+t pour déplier", "replié" },
    { "pt", "Tarefas", "ctrl+shift+t para expandir", "recolhido" },
    { "pt-BR", "Tarefas", "ctrl+shift+t para expandir", "recolhido" },
    { "ru", "Задачи", "ctrl+shift+t — развернуть", "свёрнуто" },
    { "uk", "Завдання", "ctrl+shift+t — розгорнути", "згорнуто" },
    { "zh", "待办", "按 ctrl+shift+t 展开", "已折叠" },
  }) do
    local code, heading, hint, label = case[1], case[2], case[3], case[4]
    H.in_locale(code)
    local with_key = todo.overlay.render(H.SIX_TASKS, { width = 1000, collapsed = true, collapse_key = "ctrl+shift+t" })
    T.same(with_key, { "● " .. heading .. " (2/6)", "└─ " .. hint, "" }, code)
    local off = todo.overlay.render(H.SIX_TASKS, { width = 1000, collapsed = true, collapse_key = "off" })
    T.same(off, { "● " .. heading .. " (2/6)", "└─ " .. label, "" }, code .. " off")
  end
end)

T.test("the overlay switches locale at run time", function()
  H.in_locale("en")
  T.eq(todo.overlay.render(H.SIX_TASKS, { width = 1000, max_widget_lines = 4 })[1], "● Todos (2/6)")
  todo.setup({ locale = "de" })
  T.eq(todo.overlay.render(H.SIX_TASKS, { width = 1000, max_widget_lines = 4 })[1], "● Aufgaben (2/6)")
end)

-- One completed, one in progress, two pending.
H.FOUR_TASKS = {
  nextId = 5,
  tasks = {
    { id = 1, subject = "One", status = "completed" },
    { id = 2, subject = "Two", status = "in_progress", activeForm = "Doing two" },
    { id = 3, subject = "Three", status = "pending" },
    { id = 4, subject = "Four", status = "pending", blockedBy = { 3 } },
  },
}

T.test("/todos speaks every locale", function()
  -- (locale, header, pending, in progress and completed section titles)
  for _, case in ipairs({
    { "en", "1/4 completed · 1 in progress · 2 pending", "Pending", "In Progress", "Completed" },
    { "de", "1/4 erledigt · 1 in Arbeit · 2 offen", "Offen", "In Arbeit", "Erledigt" },
    { "es", "1/4 completada · 1 en curso · 2 pendientes", "Pendientes", "En curso", "Completadas" },
    { "fr", "1/4 terminée · 1 en cours · 2 en attente", "En attente", "En cours", "Terminées" },
    { "pt", "1/4 concluída · 1 em curso · 2 pendentes", "Pendentes", "Em curso", "Concluídas" },
    { "pt-BR", "1/4 concluída · 1 em andamento · 2 pendentes", "Pendentes", "Em andamento", "Concluídas" },
    {
      "ru",
      "выполнено 1 из 4 · 1 в работе · 2 ожидают",
      "Ожидают",
      "В работе",
      "Выполнены",
    },
    {
      "uk",
      "виконано 1 з 4 · 1 у роботі · 2 очікують",
      "Очікують",
      "У роботі",
      "Виконані",
    },
    { "zh", "已完成 1/4 · 1 项进行中 · 2 项待处理", "待处理", "进行中", "已完成" },
  }) do
    H.in_locale(case[1])
    local text, level = todo.command.todos(H.FOUR_TASKS, { interactive = true })
    T.eq(
      text,
      table.concat({
        case[2],
        "── " .. case[3] .. " ──",
        "  ○ #3 Three",
        "  ○ #4 Four    ⛓ #3",
        "── " .. case[4] .. " ──",
        "  ◐ #2 Two (Doing two)",
        "── " .. case[5] .. " ──",
        "  ✓ #1 One",
      }, "\n"),
      case[1]
    )
    T.eq(level, "info", case[1])
  end
end)

T.test("/todos' messages speak every locale", function()
  for _, case in ipairs({
    { "en", "No todos yet. Ask the agent to plan a multi-step task.", "/todos needs an interactive UI." },
    {
      "de",
      "Noch keine Aufgaben. Bitten Sie den Agenten, eine mehrstufige Aufgabe zu planen.",
      "/todos benötigt eine interaktive Oberfläche.",
    },
    {
      "es",
      "Aún no hay tareas. Pide al agente que planifique una tarea de varios pasos.",
      "/todos necesita una interfaz interactiva.",
    },
    {
      "fr",
      "Aucune tâche pour l’instant. Demandez à l’agent de planifier une tâche en plusieurs étapes.",
      "/todos nécessite une interface interactive.",
    },
    {
      "pt",
      "Ainda não há tarefas. Peça ao agente que planeie uma tarefa com vários passos.",
      "/todos requer uma interface interativa.",
    },
    {
      "pt-BR",
      "Ainda não há tarefas. Peça ao agente para planejar uma tarefa com várias etapas.",
      "/todos precisa de uma interface interativa.",
    },
    {
      "ru",
      "Задач пока нет. Попросите агента спланировать многошаговую задачу.",
      "Для /todos нужен интерактивный интерфейс.",
    },
    {
      "uk",
      "Завдань поки немає. Попросіть агента спланувати багатокрокове завдання.",
      "Для /todos потрібен інтерактивний інтерфейс.",
    },
    {
      "zh",
      "还没有待办事项。请让智能体为多步骤任务制定计划。",
      "/todos 需要交互式界面。",
    },
  }) do
    local code, empty, noninteractive = case[1], case[2], case[3]
    H.in_locale(code)
    local text, level = todo.command.todos({ tasks = {}, nextId = 1 }, { interactive = true })
    T.eq(text, empty, code .. " empty")
    T.eq(level, "info", code .. " empty")
    text, level = todo.command.todos(H.FOUR_TASKS, { interactive = false })
    T.eq(text, noninteractive, code .. " non-interactive")
    T.eq(level, "error", code .. " non-interactive")
  end
end)

T.test("what the model reads is the recording under every locale", function()
  -- The hand-written traces (every error path) and a sample of the generated ones.
  local traces = {}
  for i, trace in ipairs(json.decode_lines(T.read(T.fixture("reducer-traces.jsonl")), core.null)) do
    if trace.value.name:sub(1, 4) == "hand" or (i - 1) % 25 == 0 then
      traces[#traces + 1] = trace
    end
  end
  T.ok(#traces > 14, "the sample holds hand and generated traces")
  for _, code in ipairs(H.LOCALES) do
    H.in_locale(code)
    local execute = todo.tool().execute
    for n, trace in ipairs(traces) do
      local ctx = { session = code .. "-" .. n }
      for i, step in ipairs(trace.value.steps) do
        local at = code .. " " .. trace.value.name .. " step " .. i
        local result = execute(trace.source(step.params), ctx)
        T.eq(result.content[1].text, step.content, at)
        T.same(result.details, step.details, at .. " details")
      end
    end
  end
end)

-- The tool as the model sees it, and the reply to a rejected call.
function H.model_view()
  local s = todo.tool()
  return {
    name = s.name,
    label = s.label,
    description = s.description,
    parameters = s.parameters,
    prompt_snippet = s.prompt_snippet,
    prompt_guidelines = s.prompt_guidelines,
    rejected = todo.session("model-view"):execute({ action = "update", id = 4 }).content[1].text,
  }
end

T.test("the tool spec and the replies are identical under every locale", function()
  H.in_locale("en")
  local english = H.model_view()
  T.ok(#english.description > 0, "a description")
  T.eq(english.rejected, "Error: #4 not found")
  for _, code in ipairs(H.LOCALES) do
    H.in_locale(code)
    T.same(H.model_view(), english, code)
  end
end)

T.test("core.apply's replies and errors ignore the locale", function()
  local want = {
    "Created #1: Write tests (pending)",
    "Updated #1 (pending → in_progress)",
    "Updated #1 (in_progress → pending)",
    "Error: #9 not found",
    "[pending] #1 Write tests",
    "#1 [pending] Write tests\n  activeForm: Writing tests",
    'Error: action: expected one of create, update, list, get, delete, clear, got string "bogus"',
  }
  for _, code in ipairs(H.LOCALES) do
    H.in_locale(code)
    local out, state = {}, nil
    for _, params in ipairs({
      { action = "create", subject = "Write tests", activeForm = "Writing tests" },
      { action = "update", id = 1, status = "in_progress" },
      { action = "update", id = 1, status = "pending" },
      { action = "update", id = 9, status = "completed" },
      { action = "list" },
      { action = "get", id = 1 },
      { action = "bogus" },
    }) do
      local result
      result, state = core.apply(state, params)
      out[#out + 1] = result.content[1].text
    end
    T.same(out, want, code)
  end
end)

T.finish("i18n_spec")
