//! Localization through the public Lua contract: `core.tr`, `core.resolve_locale`,
//! `core.locales`, `todo.locale()`, `setup{ locale = … }`; the overlay and `/todos` in
//! every locale; and everything the model reads byte-identical under every locale.
//!
//! Expected strings are the translations as written in `locales/*/todo.ftl` (the spec of
//! each locale) and, for model-facing output, the recorded conformance traces.

use mlua::{Lua, Value as LuaValue};
use serde_json::Value;

use crate::support::{eval, jsonl, lua};

const LOCALES: [&str; 9] = ["de", "en", "es", "fr", "pt", "pt-BR", "ru", "uk", "zh"];

/// A Lua state whose locale chain sees only `vars` (every other variable the chain reads
/// is unset, and the config directory is empty), so the host's own environment cannot leak
/// into the tests.
fn isolated(vars: &str) -> (Lua, tempfile::TempDir) {
    let lua = lua();
    let config = tempfile::tempdir().expect("tempdir");
    let code = format!(
        r#"
        local env = {{ RPIV_TODO_LOCALE = false, LC_ALL = false, LC_MESSAGES = false, LANG = false,
                      XDG_CONFIG_HOME = {config:?} }}
        for k, v in pairs({{ {vars} }}) do env[k] = v end
        require("rpiv_todo.i18n").set_env(env)
        "#,
        config = config.path().to_string_lossy(),
    );
    eval::<()>(&lua, &code);
    (lua, config)
}

/// A Lua state with `locale` set through `setup`.
fn in_locale(locale: &str) -> (Lua, tempfile::TempDir) {
    let (lua, dir) = isolated("");
    eval::<()>(
        &lua,
        &format!(r#"require("rpiv_todo").setup({{ locale = {locale:?} }})"#),
    );
    (lua, dir)
}

/// A Lua value as JSON: tables with a length or an array marker are arrays.
fn to_json(v: &LuaValue) -> Value {
    match v {
        LuaValue::Nil => Value::Null,
        LuaValue::LightUserData(p) if p.0.is_null() => Value::Null,
        LuaValue::Boolean(b) => Value::Bool(*b),
        LuaValue::Integer(i) => Value::from(*i),
        LuaValue::Number(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => Value::from(*n as i64),
        LuaValue::Number(n) => Value::from(*n),
        LuaValue::String(s) => Value::String(s.to_string_lossy()),
        LuaValue::Table(t) => {
            let marked = t.metatable().is_some_and(|mt| {
                mt.raw_get::<Option<String>>("__jsontype")
                    .ok()
                    .flatten()
                    .as_deref()
                    == Some("array")
            });
            let n = t.raw_len();
            if n > 0 || marked {
                Value::Array(
                    (1..=n)
                        .map(|i| to_json(&t.raw_get(i).unwrap_or(LuaValue::Nil)))
                        .collect(),
                )
            } else {
                let mut map = serde_json::Map::new();
                for (k, v) in t.pairs::<LuaValue, LuaValue>().flatten() {
                    let key = match &k {
                        LuaValue::String(s) => s.to_string_lossy(),
                        other => format!("{}", to_json(other)),
                    };
                    map.insert(key, to_json(&v));
                }
                Value::Object(map)
            }
        }
        other => Value::String(format!("<{}>", other.type_name())),
    }
}

#[test]
fn core_tr_formats_plural_forms_from_numbers() {
    let lua = lua();
    let cases: &[(&str, i64, &str)] = &[
        ("ru", 1, "ещё 1 задача (1 ожидает)"),
        ("ru", 2, "ещё 2 задачи (2 ожидают)"),
        ("ru", 5, "ещё 5 задач (5 ожидают)"),
        ("ru", 11, "ещё 11 задач (11 ожидают)"),
        ("ru", 21, "ещё 21 задача (21 ожидает)"),
        ("ru", 22, "ещё 22 задачи (22 ожидают)"),
        ("uk", 1, "ще 1 завдання (1 очікує)"),
        ("uk", 5, "ще 5 завдань (5 очікують)"),
        ("uk", 22, "ще 22 завдання (22 очікують)"),
        ("de", 1, "+1 weitere Aufgabe (1 offen)"),
        ("en", 3, "+3 more (3 pending)"),
    ];
    for (code, count, want) in cases {
        // Integer and float counts (Lua 5.4 has both) select the same form.
        for n in [format!("{count}"), format!("{count}.0")] {
            let got: String = eval(
                &lua,
                &format!(
                    r#"return require("rpiv_todo.core").tr({code:?}, "overlay-more", {{ count = {n}, completed = 0, pending = {n} }})"#
                ),
            );
            assert_eq!(got, *want, "{code} {n}");
        }
    }
}

#[test]
fn core_tr_inserts_text_arguments_and_falls_back_for_unknown_ids() {
    let lua = lua();
    let got: String = eval(
        &lua,
        r#"local core = require("rpiv_todo.core")
           return table.concat({
             core.tr("zh", "overlay-expand-hint", { key = "alt+t" }),
             core.tr("en", "no-such-id"),
             core.tr("xx", "overlay-heading"),
             core.tr(nil, "overlay-collapsed"),
           }, "|")"#,
    );
    assert_eq!(got, "按 alt+t 展开|no-such-id|Todos|collapsed");
}

#[test]
fn core_tr_rejects_arguments_that_are_not_numbers_or_strings() {
    let lua = lua();
    let msg: String = eval(
        &lua,
        r#"local ok, err = pcall(require("rpiv_todo.core").tr, "de", "todos-pending", { count = {} })
           return tostring(err)"#,
    );
    assert!(
        msg.contains("rpiv_todo.core.tr: argument count: expected a number or a string, got table"),
        "{msg}"
    );
}

#[test]
fn core_locales_lists_the_nine_codes() {
    let lua = lua();
    let got: String = eval(
        &lua,
        r#"return table.concat(require("rpiv_todo.core").locales(), ",")"#,
    );
    assert_eq!(got, LOCALES.join(","));
}

#[test]
fn core_resolve_locale_walks_the_chain_over_env_overrides() {
    let lua = lua();
    let config = tempfile::tempdir().expect("tempdir");
    let dir = config.path().join("rpiv-i18n");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("locale.json"), r#"{"locale": "uk"}"#).expect("write");
    let xdg = config.path().to_string_lossy().into_owned();
    let empty = tempfile::tempdir().expect("tempdir");
    let none = empty.path().to_string_lossy().into_owned();
    let cases: &[(&str, String, &str)] = &[
        ("\"fr\"", format!("RPIV_TODO_LOCALE = 'de', XDG_CONFIG_HOME = {xdg:?}"), "fr"),
        ("nil", format!("RPIV_TODO_LOCALE = 'de', XDG_CONFIG_HOME = {xdg:?}"), "de"),
        ("nil", format!("RPIV_TODO_LOCALE = false, XDG_CONFIG_HOME = {xdg:?}"), "uk"),
        (
            "nil",
            format!("RPIV_TODO_LOCALE = false, XDG_CONFIG_HOME = {none:?}, LC_ALL = false, LC_MESSAGES = false, LANG = 'pt_BR.UTF-8'"),
            "pt-BR",
        ),
        (
            "nil",
            format!("RPIV_TODO_LOCALE = false, XDG_CONFIG_HOME = {none:?}, LC_ALL = 'C', LC_MESSAGES = false, LANG = 'de_DE.UTF-8'"),
            "en",
        ),
        (
            "nil",
            format!("RPIV_TODO_LOCALE = '', XDG_CONFIG_HOME = {none:?}, LC_ALL = '', LC_MESSAGES = 'es_MX', LANG = 'de_DE'"),
            "es",
        ),
    ];
    for (explicit, env, want) in cases {
        let got: String = eval(
            &lua,
            &format!(r#"return require("rpiv_todo.core").resolve_locale({explicit}, {{ {env} }})"#),
        );
        assert_eq!(got, *want, "{explicit} {env}");
    }
}

#[test]
fn todo_locale_follows_the_chain_and_setup_switches_it() {
    let (lua, _dir) = isolated("LANG = 'ru_RU.UTF-8'");
    let got: String = eval(
        &lua,
        r#"local todo = require("rpiv_todo")
           local seen = { todo.locale() }
           todo.setup({ locale = "pt-BR" })
           seen[#seen + 1] = todo.locale()
           todo.setup({ max_widget_lines = 5 })          -- no locale key: unchanged
           seen[#seen + 1] = todo.locale()
           todo.setup({ locale = "en" })
           seen[#seen + 1] = todo.locale()
           return table.concat(seen, ",")"#,
    );
    assert_eq!(got, "ru,pt-BR,pt-BR,en");
}

#[test]
fn setup_rejects_unknown_locales_and_keeps_the_current_one() {
    let (lua, _dir) = in_locale("de");
    for bad in ["\"xx\"", "\"pt_BR\"", "\"\""] {
        let msg: String = eval(
            &lua,
            &format!(
                r#"local ok, err = pcall(require("rpiv_todo").setup, {{ locale = {bad} }})
                   assert(not ok)
                   return tostring(err)"#
            ),
        );
        assert_eq!(
            msg, "(rpiv_todo) locale: expected one of de, en, es, fr, pt, pt-BR, ru, uk, zh",
            "{bad}"
        );
    }
    let still: String = eval(&lua, r#"return require("rpiv_todo").locale()"#);
    assert_eq!(still, "de");
}

#[test]
fn locale_is_resolved_once_then_cached() {
    let (lua, _dir) = isolated("LANG = 'fr_FR.UTF-8'");
    let got: String = eval(
        &lua,
        r#"local i18n = require("rpiv_todo.i18n")
           local env = { RPIV_TODO_LOCALE = false, LC_ALL = false, LC_MESSAGES = false, LANG = "fr_FR" }
           i18n.set_env(env)
           local first = i18n.locale()
           env.LANG = "de_DE"                            -- the environment changes later
           local cached = i18n.locale()
           i18n.set_env(env)                             -- a host re-reads it explicitly
           return table.concat({ first, cached, i18n.locale() }, ",")"#,
    );
    assert_eq!(got, "fr,fr,de");
}

/// Six tasks: 2 completed, 1 in progress, 3 pending. With `max_widget_lines = 4` the panel
/// has 3 rows under the heading, one kept for the summary: the completed are dropped and the
/// unfinished tail is cut, so 2 completed and 2 pending are summarized.
const SIX_TASKS: &str = r#"{ nextId = 7, tasks = {
    { id = 1, subject = "One", status = "completed" },
    { id = 2, subject = "Two", status = "completed" },
    { id = 3, subject = "Three", status = "in_progress", activeForm = "Doing three" },
    { id = 4, subject = "Four", status = "pending" },
    { id = 5, subject = "Five", status = "pending" },
    { id = 6, subject = "Six", status = "pending" },
} }"#;

fn render(lua: &Lua, state: &str, opts: &str) -> Vec<String> {
    eval(
        lua,
        &format!(r#"return require("rpiv_todo").overlay.render({state}, {opts})"#),
    )
}

#[test]
fn overlay_heading_and_summary_speak_every_locale() {
    let cases: &[(&str, &str, &str)] = &[
        ("en", "Todos", "+4 more (2 completed, 2 pending)"),
        (
            "de",
            "Aufgaben",
            "+4 weitere Aufgaben (2 erledigt, 2 offen)",
        ),
        (
            "es",
            "Tareas",
            "+4 tareas más (2 completadas, 2 pendientes)",
        ),
        (
            "fr",
            "Tâches",
            "+4 autres tâches (2 terminées, 2 en attente)",
        ),
        (
            "pt",
            "Tarefas",
            "+4 outras tarefas (2 concluídas, 2 pendentes)",
        ),
        (
            "pt-BR",
            "Tarefas",
            "+4 outras tarefas (2 concluídas, 2 pendentes)",
        ),
        ("ru", "Задачи", "ещё 4 задачи (2 выполнены, 2 ожидают)"),
        ("uk", "Завдання", "ще 4 завдання (2 виконані, 2 очікують)"),
        ("zh", "待办", "还有 4 项（2 项已完成，2 项待处理）"),
    ];
    for (code, heading, summary) in cases {
        let (lua, _dir) = in_locale(code);
        let lines = render(&lua, SIX_TASKS, "{ width = 1000, max_widget_lines = 4 }");
        let want = [
            format!("● {heading} (2/6)"),
            "├─ ◐ Three (Doing three)".to_owned(),
            "├─ ○ Four".to_owned(),
            format!("└─ {summary}"),
            String::new(),
        ];
        assert_eq!(lines, want, "{code}");
    }
}

#[test]
fn overlay_summary_agrees_in_number_in_russian_and_ukrainian() {
    // C completed then P pending tasks; 2 rows shown: the completed are dropped and the
    // pending tail beyond 2 is cut, so C + P - 2 are summarized.
    let cases: &[(&str, usize, usize, &str)] = &[
        ("ru", 1, 3, "ещё 2 задачи (1 выполнена, 1 ожидает)"),
        ("ru", 0, 7, "ещё 5 задач (5 ожидают)"),
        ("ru", 0, 13, "ещё 11 задач (11 ожидают)"),
        ("ru", 0, 23, "ещё 21 задача (21 ожидает)"),
        ("ru", 0, 24, "ещё 22 задачи (22 ожидают)"),
        ("ru", 21, 2, "ещё 21 задача (21 выполнена)"),
        ("ru", 22, 2, "ещё 22 задачи (22 выполнены)"),
        ("ru", 5, 2, "ещё 5 задач (5 выполнено)"),
        ("ru", 11, 2, "ещё 11 задач (11 выполнено)"),
        ("uk", 1, 3, "ще 2 завдання (1 виконане, 1 очікує)"),
        ("uk", 0, 7, "ще 5 завдань (5 очікують)"),
        ("uk", 0, 13, "ще 11 завдань (11 очікують)"),
        ("uk", 0, 23, "ще 21 завдання (21 очікує)"),
        ("uk", 0, 24, "ще 22 завдання (22 очікують)"),
        ("uk", 21, 2, "ще 21 завдання (21 виконане)"),
        ("uk", 22, 2, "ще 22 завдання (22 виконані)"),
        ("uk", 5, 2, "ще 5 завдань (5 виконано)"),
        ("uk", 11, 2, "ще 11 завдань (11 виконано)"),
    ];
    for (code, completed, pending, summary) in cases {
        let (lua, _dir) = in_locale(code);
        let state = format!(
            r#"(function()
                 local tasks = {{}}
                 for i = 1, {completed} do tasks[#tasks + 1] = {{ id = i, subject = "c" .. i, status = "completed" }} end
                 for i = 1, {pending} do tasks[#tasks + 1] = {{ id = {completed} + i, subject = "p" .. i, status = "pending" }} end
                 return {{ tasks = tasks, nextId = #tasks + 1 }}
               end)()"#
        );
        let lines = render(&lua, &state, "{ width = 1000, max_widget_lines = 4 }");
        assert_eq!(
            lines.get(3).map(String::as_str),
            Some(format!("└─ {summary}").as_str()),
            "{code} {completed}+{pending}: {lines:?}"
        );
    }
}

#[test]
fn overlay_collapsed_hint_speaks_every_locale() {
    let cases: &[(&str, &str, &str, &str)] = &[
        ("en", "Todos", "ctrl+shift+t to expand", "collapsed"),
        (
            "de",
            "Aufgaben",
            "ctrl+shift+t zum Aufklappen",
            "eingeklappt",
        ),
        ("es", "Tareas", "ctrl+shift+t para expandir", "contraído"),
        ("fr", "Tâches", "ctrl+shift+t pour déplier", "replié"),
        ("pt", "Tarefas", "ctrl+shift+t para expandir", "recolhido"),
        (
            "pt-BR",
            "Tarefas",
            "ctrl+shift+t para expandir",
            "recolhido",
        ),
        ("ru", "Задачи", "ctrl+shift+t — развернуть", "свёрнуто"),
        ("uk", "Завдання", "ctrl+shift+t — розгорнути", "згорнуто"),
        ("zh", "待办", "按 ctrl+shift+t 展开", "已折叠"),
    ];
    for (code, heading, hint, label) in cases {
        let (lua, _dir) = in_locale(code);
        let with_key = render(
            &lua,
            SIX_TASKS,
            r#"{ width = 1000, collapsed = true, collapse_key = "ctrl+shift+t" }"#,
        );
        assert_eq!(
            with_key,
            [
                format!("● {heading} (2/6)"),
                format!("└─ {hint}"),
                String::new()
            ],
            "{code}"
        );
        let off = render(
            &lua,
            SIX_TASKS,
            r#"{ width = 1000, collapsed = true, collapse_key = "off" }"#,
        );
        assert_eq!(
            off,
            [
                format!("● {heading} (2/6)"),
                format!("└─ {label}"),
                String::new()
            ],
            "{code} off"
        );
    }
}

#[test]
fn overlay_switches_locale_at_run_time() {
    let (lua, _dir) = in_locale("en");
    let before = render(&lua, SIX_TASKS, "{ width = 1000, max_widget_lines = 4 }");
    eval::<()>(&lua, r#"require("rpiv_todo").setup({ locale = "de" })"#);
    let after = render(&lua, SIX_TASKS, "{ width = 1000, max_widget_lines = 4 }");
    assert_eq!(before[0], "● Todos (2/6)");
    assert_eq!(after[0], "● Aufgaben (2/6)");
}

/// One completed, one in progress, two pending.
const FOUR_TASKS: &str = r#"{ nextId = 5, tasks = {
    { id = 1, subject = "One", status = "completed" },
    { id = 2, subject = "Two", status = "in_progress", activeForm = "Doing two" },
    { id = 3, subject = "Three", status = "pending" },
    { id = 4, subject = "Four", status = "pending", blockedBy = { 3 } },
} }"#;

fn todos(lua: &Lua, state: &str, opts: &str) -> (String, String) {
    eval(
        lua,
        &format!(r#"return require("rpiv_todo").command.todos({state}, {opts})"#),
    )
}

#[test]
fn todos_command_speaks_every_locale() {
    // (locale, header, [pending, in progress, completed] section titles)
    let cases: &[(&str, &str, [&str; 3])] = &[
        (
            "en",
            "1/4 completed · 1 in progress · 2 pending",
            ["Pending", "In Progress", "Completed"],
        ),
        (
            "de",
            "1/4 erledigt · 1 in Arbeit · 2 offen",
            ["Offen", "In Arbeit", "Erledigt"],
        ),
        (
            "es",
            "1/4 completada · 1 en curso · 2 pendientes",
            ["Pendientes", "En curso", "Completadas"],
        ),
        (
            "fr",
            "1/4 terminée · 1 en cours · 2 en attente",
            ["En attente", "En cours", "Terminées"],
        ),
        (
            "pt",
            "1/4 concluída · 1 em curso · 2 pendentes",
            ["Pendentes", "Em curso", "Concluídas"],
        ),
        (
            "pt-BR",
            "1/4 concluída · 1 em andamento · 2 pendentes",
            ["Pendentes", "Em andamento", "Concluídas"],
        ),
        (
            "ru",
            "выполнено 1 из 4 · 1 в работе · 2 ожидают",
            ["Ожидают", "В работе", "Выполнены"],
        ),
        (
            "uk",
            "виконано 1 з 4 · 1 у роботі · 2 очікують",
            ["Очікують", "У роботі", "Виконані"],
        ),
        (
            "zh",
            "已完成 1/4 · 1 项进行中 · 2 项待处理",
            ["待处理", "进行中", "已完成"],
        ),
    ];
    for (code, header, [pending, in_progress, completed]) in cases {
        let (lua, _dir) = in_locale(code);
        let (text, level) = todos(&lua, FOUR_TASKS, "{ interactive = true }");
        let want = [
            header.to_string(),
            format!("── {pending} ──"),
            "  ○ #3 Three".to_owned(),
            "  ○ #4 Four    ⛓ #3".to_owned(),
            format!("── {in_progress} ──"),
            "  ◐ #2 Two (Doing two)".to_owned(),
            format!("── {completed} ──"),
            "  ✓ #1 One".to_owned(),
        ]
        .join("\n");
        assert_eq!(
            (text.as_str(), level.as_str()),
            (want.as_str(), "info"),
            "{code}"
        );
    }
}

#[test]
fn todos_command_messages_speak_every_locale() {
    let cases: &[(&str, &str, &str)] = &[
        ("en", "No todos yet. Ask the agent to plan a multi-step task.", "/todos needs an interactive UI."),
        (
            "de",
            "Noch keine Aufgaben. Bitten Sie den Agenten, eine mehrstufige Aufgabe zu planen.",
            "/todos benötigt eine interaktive Oberfläche.",
        ),
        (
            "es",
            "Aún no hay tareas. Pide al agente que planifique una tarea de varios pasos.",
            "/todos necesita una interfaz interactiva.",
        ),
        (
            "fr",
            "Aucune tâche pour l’instant. Demandez à l’agent de planifier une tâche en plusieurs étapes.",
            "/todos nécessite une interface interactive.",
        ),
        (
            "pt",
            "Ainda não há tarefas. Peça ao agente que planeie uma tarefa com vários passos.",
            "/todos requer uma interface interativa.",
        ),
        (
            "pt-BR",
            "Ainda não há tarefas. Peça ao agente para planejar uma tarefa com várias etapas.",
            "/todos precisa de uma interface interativa.",
        ),
        (
            "ru",
            "Задач пока нет. Попросите агента спланировать многошаговую задачу.",
            "Для /todos нужен интерактивный интерфейс.",
        ),
        (
            "uk",
            "Завдань поки немає. Попросіть агента спланувати багатокрокове завдання.",
            "Для /todos потрібен інтерактивний інтерфейс.",
        ),
        ("zh", "还没有待办事项。请让智能体为多步骤任务制定计划。", "/todos 需要交互式界面。"),
    ];
    for (code, empty, noninteractive) in cases {
        let (lua, _dir) = in_locale(code);
        let got = todos(&lua, "{ tasks = {}, nextId = 1 }", "{ interactive = true }");
        assert_eq!(got, (empty.to_string(), "info".to_owned()), "{code} empty");
        let got = todos(&lua, FOUR_TASKS, "{ interactive = false }");
        assert_eq!(
            got,
            (noninteractive.to_string(), "error".to_owned()),
            "{code} non-interactive"
        );
    }
}

/// The hand-written traces (every error path) and a sample of the generated ones.
fn traces() -> Vec<Value> {
    jsonl("reducer-traces.jsonl")
        .into_iter()
        .enumerate()
        .filter(|(i, t)| t["name"].as_str().is_some_and(|n| n.starts_with("hand")) || i % 25 == 0)
        .map(|(_, t)| t)
        .collect()
}

#[test]
fn model_facing_output_is_identical_under_every_locale() {
    let traces = traces();
    assert!(
        traces.len() > 14,
        "the sample holds hand and generated traces"
    );
    for code in LOCALES {
        let (lua, _dir) = in_locale(code);
        let execute: mlua::Function = eval(&lua, r#"return require("rpiv_todo").tool().execute"#);
        for (n, trace) in traces.iter().enumerate() {
            let name = trace["name"].as_str().unwrap_or("?");
            let ctx = lua.create_table().expect("table");
            ctx.set("session", format!("{code}-{n}")).expect("set");
            for (i, step) in trace["steps"].as_array().into_iter().flatten().enumerate() {
                let params = serde_json::to_string(&step["params"]).expect("json");
                let result: mlua::Table = execute.call((params, ctx.clone())).expect("execute");
                let content: String =
                    eval::<mlua::Function>(&lua, "return function(r) return r.content[1].text end")
                        .call(result.clone())
                        .expect("content");
                assert_eq!(
                    Some(content.as_str()),
                    step["content"].as_str(),
                    "{code} {name} step {i}"
                );
                let details = to_json(&LuaValue::Table(result.get("details").expect("details")));
                assert_eq!(details, step["details"], "{code} {name} step {i} details");
            }
        }
    }
}

#[test]
fn tool_spec_is_identical_under_every_locale() {
    let spec = |lua: &Lua| -> Value {
        let t: mlua::Table = eval(
            lua,
            r#"local s = require("rpiv_todo").tool()
               return { name = s.name, label = s.label, description = s.description,
                        parameters = s.parameters, prompt_snippet = s.prompt_snippet,
                        prompt_guidelines = s.prompt_guidelines }"#,
        );
        to_json(&LuaValue::Table(t))
    };
    let (en, _dir) = in_locale("en");
    let english = spec(&en);
    assert!(english["description"]
        .as_str()
        .is_some_and(|d| !d.is_empty()));
    for code in LOCALES {
        let (lua, _dir) = in_locale(code);
        assert_eq!(spec(&lua), english, "{code}");
    }
}

#[test]
fn core_apply_content_and_errors_ignore_the_locale() {
    let script = r#"local core = require("rpiv_todo.core")
        local out, s = {}, nil
        local calls = {
          { action = "create", subject = "Write tests", activeForm = "Writing tests" },
          { action = "update", id = 1, status = "in_progress" },
          { action = "update", id = 1, status = "pending" },
          { action = "update", id = 9, status = "completed" },
          { action = "list" },
          { action = "get", id = 1 },
          { action = "bogus" },
        }
        for _, p in ipairs(calls) do
          local r
          r, s = core.apply(s, p)
          out[#out + 1] = r.content[1].text
        end
        return table.concat(out, "\n")"#;
    let (en, _dir) = in_locale("en");
    let english: String = eval(&en, script);
    assert!(
        english.starts_with("Created #1: Write tests (pending)"),
        "{english}"
    );
    for code in LOCALES {
        let (lua, _dir) = in_locale(code);
        assert_eq!(eval::<String>(&lua, script), english, "{code}");
    }
}
