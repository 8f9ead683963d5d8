//! The Lua layer (`require("rpiv_todo")`): `/todos` over every recorded case, the tool
//! spec against `schema.json` (structurally, and through a real JSON Schema validator),
//! strict `setup`, session isolation, replay after compaction and reload, the equivalence
//! of `tool().execute` and `session:execute`, and the example host's output.

use mlua::{Function, Lua, LuaSerdeExt, ObjectLike, Table, Value as LuaValue};
use serde_json::{json, Value};

use crate::support;

#[allow(dead_code)]
#[path = "../../examples/host/main.rs"]
mod host;

/// A Lua state with the plugin loaded and the English UI (the recorded strings' locale).
fn todo_lua() -> (Lua, Table) {
    let lua = support::lua();
    let todo: Table = support::eval(
        &lua,
        "local t = require('rpiv_todo'); t.setup({ locale = 'en' }); return t",
    );
    (lua, todo)
}

/// A JSON Schema without its prose: string-valued `description` keywords removed (a
/// property *named* description is an object and stays).
fn strip_descriptions(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, v)| !(k.as_str() == "description" && v.is_string()))
                .map(|(k, v)| (k.clone(), strip_descriptions(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_descriptions).collect()),
        other => other.clone(),
    }
}

fn reference_schema() -> Value {
    let path = support::conformance("schema.json");
    let text = std::fs::read_to_string(&path).expect("schema.json is readable");
    let v: Value = serde_json::from_str(&text).expect("schema.json is JSON");
    v["parameters"].clone()
}

fn our_schema(lua: &Lua) -> Value {
    let params: LuaValue = support::eval(lua, "return require('rpiv_todo').tool().parameters");
    lua.from_value(params)
        .expect("the parameter schema converts to JSON")
}

// ---------------------------------------------------------------------------
// /todos
// ---------------------------------------------------------------------------

#[test]
fn every_recorded_todos_case_renders_byte_for_byte() {
    let (lua, todo) = todo_lua();
    let command: Table = todo.get("command").unwrap();
    let todos: Function = command.get("todos").unwrap();
    let empty_text: String =
        support::eval(&lua, "return require('rpiv_todo.i18n').t('todos-empty')");
    let cases = support::jsonl("command-cases.jsonl");
    assert!(!cases.is_empty());
    for (n, case) in cases.iter().enumerate() {
        let state = lua
            .to_value(&json!({ "tasks": case["tasks"], "nextId": case["nextId"] }))
            .unwrap();
        let opts = lua.to_value(&json!({ "interactive": true })).unwrap();
        let (text, level): (String, String) = todos.call((state, opts)).unwrap();
        assert_eq!(level, case["level"].as_str().unwrap(), "case {n} level");
        if case["empty"] == json!(true) {
            // The empty-list message is our own wording: the locale's message.
            assert_eq!(text, empty_text, "case {n}: empty list");
        } else {
            assert_eq!(text, case["text"].as_str().unwrap(), "case {n} text");
        }
    }
}

#[test]
fn todos_in_a_host_without_ui_is_an_error() {
    let (lua, _) = todo_lua();
    let (text, level, expected): (String, String, String) = support::eval(
        &lua,
        r#"local todo = require('rpiv_todo')
           local s = todo.session('ui-less')
           s:execute({ action = 'create', subject = 'A' })
           local text, level = todo.command.todos(s, { interactive = false })
           return text, level, require('rpiv_todo.i18n').t('todos-noninteractive')"#,
    );
    assert_eq!(level, "error");
    assert_eq!(text, expected);
}

#[test]
fn todos_reads_a_session_and_shows_active_form_while_in_progress() {
    let (lua, _) = todo_lua();
    let text: String = support::eval(
        &lua,
        r#"local todo = require('rpiv_todo')
           local s = todo.session('cmd')
           s:execute({ action = 'create', subject = 'Write the parser', activeForm = 'Writing the parser' })
           s:execute({ action = 'create', subject = 'Test it', blockedBy = { 1 } })
           s:execute({ action = 'update', id = 1, status = 'in_progress' })
           return (todo.command.todos(s))"#,
    );
    assert_eq!(
        text,
        "1 in progress · 1 pending\n── Pending ──\n  ○ #2 Test it    ⛓ #1\n── In Progress ──\n  ◐ #1 Write the parser (Writing the parser)"
    );
}

// ---------------------------------------------------------------------------
// The tool spec and its schema
// ---------------------------------------------------------------------------

#[test]
fn tool_parameters_have_the_structure_of_schema_json() {
    let (lua, _) = todo_lua();
    // One deliberate difference: the reference's free-form metadata,
    // `patternProperties: {"^.*$": {}}`, is said as `additionalProperties: true` (the same
    // meaning), because the empty sub-schema has no JSON kind in Lua (vim.json sends `[]`,
    // which is not a schema) and some providers reject patternProperties.
    let mut reference = reference_schema();
    reference["properties"]["metadata"] = json!({ "type": "object", "additionalProperties": true });
    assert_eq!(strip_descriptions(&our_schema(&lua)), reference);
    let (name, label): (String, String) = support::eval(
        &lua,
        "local s = require('rpiv_todo').tool(); return s.name, s.label",
    );
    assert_eq!((name.as_str(), label.as_str()), ("todo", "Todo"));
}

#[test]
fn every_schema_property_has_a_description_of_its_own() {
    let (lua, _) = todo_lua();
    let schema = our_schema(&lua);
    let props = schema["properties"].as_object().unwrap();
    assert_eq!(props.len(), 12);
    for (name, prop) in props {
        let d = prop["description"].as_str().unwrap_or_default();
        assert!(d.len() > 20, "{name} lacks a description");
    }
    let mut all: Vec<&str> = props
        .values()
        .map(|p| p["description"].as_str().unwrap())
        .collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 12, "every property has its own description");
    // Each description says which actions take the field (what steers a model best).
    for (name, needles) in [
        (
            "subject",
            &["Required for create", "on update it renames"][..],
        ),
        (
            "status",
            &[
                "update: the new status",
                "list: show only tasks with this status",
            ],
        ),
        ("blockedBy", &["create only", "cycle is rejected"]),
        ("addBlockedBy", &["update only", "send only the new ones"]),
        ("removeBlockedBy", &["update only"]),
        ("id", &["Required for update, get and", "delete"]),
        ("includeDeleted", &["list only", "Default false"]),
        ("metadata", &["merged", "null is removed"]),
        ("activeForm", &["Present-continuous", "in_progress"]),
        ("description", &["acceptance criteria"]),
        ("owner", &["Who works on the task"]),
        (
            "action",
            &["create", "update", "list", "get", "delete", "clear"],
        ),
    ] {
        let d = props[name]["description"].as_str().unwrap();
        for needle in needles {
            assert!(d.contains(needle), "{name}: {d:?} lacks {needle:?}");
        }
    }
}

/// Argument shapes and whether the reference schema accepts them.
const SHAPES: &[(&str, bool)] = &[
    (r#"{"action":"create","subject":"Write the parser"}"#, true),
    (
        r#"{"action":"create","subject":"A","blockedBy":[1,2],"owner":"alice","metadata":{"k":1}}"#,
        true,
    ),
    (r#"{"action":"update","id":3,"status":"completed"}"#, true),
    (
        r#"{"action":"update","id":3,"addBlockedBy":[1],"removeBlockedBy":[2]}"#,
        true,
    ),
    (
        r#"{"action":"update","id":1,"metadata":{"gone":null,"deep":{"list":[1,"x"]}}}"#,
        true,
    ),
    (
        r#"{"action":"list","status":"pending","includeDeleted":true}"#,
        true,
    ),
    (r#"{"action":"get","id":2.5}"#, true),
    (r#"{"action":"clear","extra":"not forbidden"}"#, true),
    (r#"{"action":"delete","id":-1}"#, true),
    (r#"{}"#, false),
    (r#"{"subject":"no action"}"#, false),
    (r#"{"action":"destroy"}"#, false),
    (r#"{"action":5}"#, false),
    (r#"{"action":null}"#, false),
    (r#"{"action":"update","id":"3"}"#, false),
    (r#"{"action":"update","id":3,"status":"done"}"#, false),
    (
        r#"{"action":"update","id":3,"status":"In_Progress"}"#,
        false,
    ),
    (r#"{"action":"create","subject":7}"#, false),
    (r#"{"action":"create","subject":null}"#, false),
    (
        r#"{"action":"create","subject":"A","blockedBy":["1"]}"#,
        false,
    ),
    (r#"{"action":"create","subject":"A","blockedBy":1}"#, false),
    (r#"{"action":"update","id":1,"addBlockedBy":[true]}"#, false),
    (
        r#"{"action":"update","id":1,"removeBlockedBy":{"0":1}}"#,
        false,
    ),
    (r#"{"action":"list","includeDeleted":"yes"}"#, false),
    (r#"{"action":"update","id":1,"metadata":[1]}"#, false),
    (r#"{"action":"update","id":1,"metadata":"k=v"}"#, false),
    (r#"{"action":"update","id":1,"owner":["alice"]}"#, false),
    (r#"["create"]"#, false),
    (r#""create""#, false),
    (r#"null"#, false),
];

#[test]
fn a_json_schema_validator_accepts_and_rejects_the_same_shapes_with_both_schemas() {
    let (lua, _) = todo_lua();
    let ours = jsonschema::validator_for(&our_schema(&lua)).expect("our schema compiles");
    let reference = jsonschema::validator_for(&reference_schema()).expect("schema.json compiles");
    for (shape, valid) in SHAPES {
        let instance: Value = serde_json::from_str(shape).unwrap();
        assert_eq!(
            reference.is_valid(&instance),
            *valid,
            "schema.json on {shape}"
        );
        assert_eq!(ours.is_valid(&instance), *valid, "our schema on {shape}");
    }
}

/// What the guidance must teach (the topics the project's design lists), and the words that carry each topic in
/// our default guidelines (every listed phrase must be there).
const GUIDANCE_TOPICS: &[(&str, &[&str])] = &[
    ("when to open a list", &["three or more", "skip the list"]),
    (
        "exactly one task in_progress",
        &["exactly one task in_progress"],
    ),
    ("mark it before starting", &["in_progress before you start"]),
    ("complete immediately", &["completed the moment it is done"]),
    ("never in batches", &["Never save completions", "batch"]),
    (
        "never with failing tests",
        &["Never mark a task completed while its tests fail"],
    ),
    ("never with partial work", &["partly done"]),
    (
        "the state machine",
        &[
            "pending ⇄ in_progress",
            "either of them → completed",
            "any → deleted",
            "deleted is final",
        ],
    ),
    (
        "the literal update call",
        &[r#"{"action":"update","id":3,"status":"completed"}"#],
    ),
    (
        "dependencies",
        &[
            "blockedBy on create",
            "addBlockedBy and removeBlockedBy",
            "never resend the whole array",
        ],
    ),
    ("includeDeleted", &["includeDeleted: true"]),
    (
        "subject vs description vs activeForm",
        &[
            "subject as a short imperative title",
            "detail and acceptance criteria in description",
            "activeForm the present-continuous label",
        ],
    ),
];

#[test]
fn the_default_guidance_teaches_every_listed_topic() {
    let (lua, _) = todo_lua();
    let (snippet, guidelines, description): (String, Vec<String>, String) = support::eval(
        &lua,
        "local s = require('rpiv_todo').tool(); return s.prompt_snippet, s.prompt_guidelines, s.description",
    );
    assert!(snippet.contains("multi-step work"), "{snippet}");
    assert!(snippet.contains("survives compaction"), "{snippet}");
    assert_eq!(guidelines.len(), 8);
    let mut distinct = guidelines.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 8, "eight different guidelines");
    assert!(guidelines.iter().all(|g| g.trim().len() > 40));
    let all = guidelines.join("\n");
    for (topic, phrases) in GUIDANCE_TOPICS {
        for phrase in *phrases {
            assert!(
                all.contains(phrase),
                "the guidelines do not teach {topic}: {phrase:?} is missing"
            );
        }
    }
    // The description names every action and the state machine.
    for needle in [
        "create (subject required",
        "update (id plus",
        "list (optional status filter and includeDeleted)",
        "get (id",
        "delete (id; the task stays as a tombstone)",
        "clear (drops every task and restarts ids at 1)",
        "pending ⇄ in_progress, either → completed, any → deleted",
        "deleted is final",
    ] {
        assert!(description.contains(needle), "description lacks {needle:?}");
    }
}

#[test]
fn llm_facing_text_stays_english_under_another_locale() {
    let (lua, _) = todo_lua();
    let same: bool = support::eval(
        &lua,
        r#"local todo = require('rpiv_todo')
           local function dump(spec)
             local g = table.concat(spec.prompt_guidelines, '\n')
             local p = {}
             for k, v in pairs(spec.parameters.properties) do p[#p + 1] = k .. '=' .. v.description end
             table.sort(p)
             return spec.description .. spec.prompt_snippet .. g .. table.concat(p)
           end
           local en = dump(todo.tool())
           local en_result = todo.session('en'):execute({ action = 'update', id = 4 }).content[1].text
           todo.setup({ locale = 'de' })
           local de = dump(todo.tool())
           local de_result = todo.session('de'):execute({ action = 'update', id = 4 }).content[1].text
           todo.setup({ locale = 'en' })
           return en == de and en_result == de_result"#,
    );
    assert!(same);
}

// ---------------------------------------------------------------------------
// setup()
// ---------------------------------------------------------------------------

/// (key the message must name, Lua expression for the options)
const BAD_SETUPS: &[(&str, &str)] = &[
    ("setup", "'not a table'"),
    ("colour", "{ colour = 'red' }"),
    ("guidance", "{ guidance = 42 }"),
    ("guidance", "{ guidance = { prompt_snippet = '' } }"),
    ("guidance", "{ guidance = { prompt_snippet = '  \\t' } }"),
    ("guidance", "{ guidance = { prompt_snippet = 5 } }"),
    ("guidance", "{ guidance = { prompt_guidelines = {} } }"),
    ("guidance", "{ guidance = { prompt_guidelines = 'one' } }"),
    (
        "guidance",
        "{ guidance = { prompt_guidelines = { 'a', '' } } }",
    ),
    (
        "guidance",
        "{ guidance = { prompt_guidelines = { 'a', 3 } } }",
    ),
    (
        "guidance",
        "{ guidance = { prompt_guidelines = { [1] = 'a', [3] = 'c' } } }",
    ),
    ("guidance", "{ guidance = { snippet = 'typo' } }"),
    ("guidance", "{ guidance = function() return nil end }"),
    (
        "guidance",
        "{ guidance = function() return { prompt_guidelines = {} } end }",
    ),
    ("max_widget_lines", "{ max_widget_lines = 2 }"),
    ("max_widget_lines", "{ max_widget_lines = 3.5 }"),
    ("max_widget_lines", "{ max_widget_lines = '12' }"),
    ("max_widget_lines", "{ max_widget_lines = 1/0 }"),
    ("max_widget_lines", "{ max_widget_lines = 0/0 }"),
    ("collapse_key", "{ collapse_key = '' }"),
    ("collapse_key", "{ collapse_key = 'ctrl+ctrl+t' }"),
    ("collapse_key", "{ collapse_key = 'hyper+t' }"),
    ("collapse_key", "{ collapse_key = 'ctrl+' }"),
    ("collapse_key", "{ collapse_key = 'ctrl+shift+tt' }"),
    ("collapse_key", "{ collapse_key = 20 }"),
    ("locale", "{ locale = 'xx' }"),
    ("locale", "{ locale = 7 }"),
    ("overlay", "{ overlay = 5 }"),
    ("overlay", "{ overlay = { row = 'not a function' } }"),
    ("overlay", "{ overlay = function() return { row = 1 } end }"),
    ("overlay", "{ overlay = function() return 'x' end }"),
    ("overlay", "{ overlay = { colour = function() end } }"),
    ("overlay", "{ overlay = { theme = 'neon' } }"),
    (
        "overlay",
        "{ overlay = { theme = { fg = function(_, t) return t end } } }",
    ),
    (
        "overlay",
        "{ overlay = { theme = { fg = print, bold = print, strikethrough = print, finish = 1 } } }",
    ),
    ("overlay", "{ overlay = { theme = 5 } }"),
    ("overlay", "{ overlay = { glyphs = 'x' } }"),
    ("overlay", "{ overlay = { glyphs = { pending = 1 } } }"),
    ("overlay", "{ overlay = { glyphs = { failed = 'x' } } }"),
    ("overlay", "{ overlay = function() error('boom') end }"),
    (
        "overlay",
        "{ overlay = function() return { theme = 'ansi' } end }",
    ),
    ("guidance", "{ guidance = function() error('boom') end }"),
    (
        "guidance",
        "{ guidance = function(d) d.prompt_guidelines[2] = false return d end }",
    ),
    ("max_widget_lines", "{ max_widget_lines = true }"),
    ("max_widget_lines", "{ max_widget_lines = -5 }"),
    ("collapse_key", "{ collapse_key = 'ctrl+é' }"),
    ("collapse_key", "{ collapse_key = '   ' }"),
    ("1", "{ 'positional' }"),
];

#[test]
fn every_invalid_setup_value_raises_naming_its_key() {
    let (lua, _) = todo_lua();
    for (key, opts) in BAD_SETUPS {
        let (ok, message): (bool, String) = support::eval(
            &lua,
            &format!("local ok, err = pcall(require('rpiv_todo').setup, {opts}); return ok, tostring(err)"),
        );
        assert!(!ok, "setup {opts} did not raise");
        assert!(
            message.contains(&format!("(rpiv_todo) {key}:")),
            "setup {opts}: {message:?} does not name {key}"
        );
    }
}

#[test]
fn a_rejected_setup_changes_nothing() {
    let (lua, _) = todo_lua();
    let (snippet, lines): (String, i64) = support::eval(
        &lua,
        r#"local todo = require('rpiv_todo')
           todo.setup({ guidance = { prompt_snippet = 'kept' }, max_widget_lines = 5 })
           assert(not pcall(todo.setup, { guidance = { prompt_snippet = 'lost' }, max_widget_lines = 1 }))
           return todo.tool().prompt_snippet, todo.config.max_widget_lines"#,
    );
    assert_eq!((snippet.as_str(), lines), ("kept", 5));
}

#[test]
fn guidance_overrides_table_function_and_partial() {
    let (lua, _) = todo_lua();
    let (table_form, function_form, partial, defaults_len, seen): (
        Vec<String>,
        Vec<String>,
        Vec<String>,
        i64,
        String,
    ) = support::eval(
        &lua,
        r#"local todo = require('rpiv_todo')
               todo.setup({ guidance = { prompt_snippet = 'S', prompt_guidelines = { 'Only this.' } } })
               local a = todo.tool().prompt_guidelines
               local seen
               todo.setup({ guidance = function(d)
                 seen = d.prompt_snippet
                 d.prompt_guidelines[#d.prompt_guidelines + 1] = 'Ninth.'
                 return d
               end })
               local b = todo.tool().prompt_guidelines
               todo.setup({ guidance = { prompt_snippet = 'only the snippet' } })
               local c = todo.tool().prompt_guidelines
               return a, b, c, #todo.guidance.defaults.prompt_guidelines, seen"#,
    );
    let defaults: Vec<String> = support::eval(
        &lua,
        "return require('rpiv_todo').guidance.defaults.prompt_guidelines",
    );
    assert_eq!(
        table_form,
        vec!["Only this.".to_owned()],
        "a list replaces the defaults whole"
    );
    assert_eq!(function_form.len(), 9);
    assert_eq!(
        function_form[..8],
        defaults[..],
        "the function received the defaults"
    );
    assert_eq!(function_form[8], "Ninth.");
    assert_eq!(
        partial, defaults,
        "a snippet alone keeps the default guidelines"
    );
    assert_eq!(defaults_len, 8, "the exported defaults are untouched");
    let default_snippet: String = support::eval(
        &lua,
        "return require('rpiv_todo').guidance.defaults.prompt_snippet",
    );
    assert_eq!(seen, default_snippet);
}

#[test]
fn a_table_override_can_extend_the_exported_defaults() {
    let (lua, _) = todo_lua();
    let (guidelines, untouched): (Vec<String>, i64) = support::eval(
        &lua,
        r#"local todo = require('rpiv_todo')
           local mine = {}
           for i, g in ipairs(todo.guidance.defaults.prompt_guidelines) do mine[i] = g end
           mine[#mine + 1] = 'Run the linter before completing a task.'
           todo.setup({ guidance = { prompt_guidelines = mine } })
           mine[1] = 'changed after setup'
           return todo.tool().prompt_guidelines, #todo.defaults.guidance.prompt_guidelines"#,
    );
    let defaults: Vec<String> = support::eval(
        &lua,
        "return require('rpiv_todo').guidance.defaults.prompt_guidelines",
    );
    assert_eq!(guidelines.len(), 9);
    assert_eq!(guidelines[..8], defaults[..], "setup keeps its own copy");
    assert_eq!(guidelines[8], "Run the linter before completing a task.");
    assert_eq!(untouched, 8);
}

#[test]
fn every_valid_setup_value_is_accepted() {
    let (lua, _) = todo_lua();
    for opts in [
        "nil",
        "{}",
        "{ max_widget_lines = 3 }",
        "{ max_widget_lines = 40.0 }",
        "{ collapse_key = 'off' }",
        "{ collapse_key = 'F12' }",
        "{ collapse_key = 'super+alt+pagedown' }",
        "{ locale = 'pt-BR' }",
        "{ locale = 'en' }",
        "{ overlay = { theme = 'ansi' } }",
        "{ overlay = { theme = require('rpiv_todo').overlay.themes.segments, glyphs = { completed = 'x' } } }",
        "{ overlay = function(d) return { row = d.row } end }",
        "{ guidance = { prompt_guidelines = { 'one' } } }",
        "{ guidance = function(d) return { prompt_snippet = d.prompt_snippet .. '!' } end }",
    ] {
        let (ok, err): (bool, String) = support::eval(
            &lua,
            &format!("local ok, err = pcall(require('rpiv_todo').setup, {opts}); return ok, tostring(err)"),
        );
        assert!(ok, "setup {opts} raised {err}");
    }
}

#[test]
fn todos_without_a_source_reads_the_foreground_session() {
    let (lua, _) = todo_lua();
    let (text, level): (String, String) = support::eval(
        &lua,
        r#"local todo = require('rpiv_todo')
           todo.session('bg'):execute({ action = 'create', subject = 'Hidden' })
           todo.foreground('fg')
           todo.tool().execute({ action = 'create', subject = 'Shown' }, { session = 'fg' })
           return todo.command.todos(nil, { interactive = true })"#,
    );
    assert_eq!(
        (text.as_str(), level.as_str()),
        ("1 pending\n── Pending ──\n  ○ #1 Shown", "info")
    );
}

#[test]
fn setup_normalizes_the_collapse_key_and_reaches_the_overlay() {
    let (lua, _) = todo_lua();
    let (key, off, overlay_key, overlay_lines): (String, String, String, i64) = support::eval(
        &lua,
        r#"local todo = require('rpiv_todo')
           todo.setup({ collapse_key = 'off' })
           local off = todo.config.collapse_key
           todo.setup({ collapse_key = '  Ctrl+Shift+X ', max_widget_lines = 7 })
           return todo.config.collapse_key, off, todo.overlay.config.collapse_key, todo.overlay.config.max_widget_lines"#,
    );
    assert_eq!(
        (
            key.as_str(),
            off.as_str(),
            overlay_key.as_str(),
            overlay_lines
        ),
        ("ctrl+shift+x", "off", "ctrl+shift+x", 7)
    );
}

#[test]
fn setup_overlay_replaces_one_layout_function_until_the_next_setup() {
    let (lua, _) = todo_lua();
    let (custom, restored): (Vec<String>, Vec<String>) = support::eval(
        &lua,
        r#"local todo = require('rpiv_todo')
           local state = { tasks = { { id = 1, subject = 'A', status = 'pending' } }, nextId = 2 }
           todo.setup({ overlay = { row = function(ctx, row) return 'task ' .. row.subject end, theme = 'plain' } })
           local custom = todo.overlay.render(state, { width = 1000 })
           todo.setup({})
           return custom, todo.overlay.render(state, { width = 1000 })"#,
    );
    assert_eq!(custom, ["● Todos (0/1)", "└─ task A", ""]);
    assert_eq!(restored, ["● Todos (0/1)", "└─ ○ A", ""]);
}

// ---------------------------------------------------------------------------
// Sessions, replay, execute
// ---------------------------------------------------------------------------

#[test]
fn sessions_are_isolated() {
    let (lua, _) = todo_lua();
    let texts: Vec<String> = support::eval(
        &lua,
        r#"local todo = require('rpiv_todo')
           local a, b = todo.session('a'), todo.session('b')
           local out = {}
           local function run(s, p) out[#out + 1] = s:execute(p).content[1].text end
           run(a, { action = 'create', subject = 'Alpha' })
           run(b, { action = 'list' })
           run(b, { action = 'create', subject = 'Beta' })
           run(a, { action = 'update', id = 1, status = 'completed' })
           run(b, { action = 'get', id = 1 })
           run(todo.session('c'), { action = 'get', id = 1 })
           return out"#,
    );
    assert_eq!(
        texts,
        [
            "Created #1: Alpha (pending)",
            "No tasks",
            "Created #1: Beta (pending)",
            "Updated #1 (pending → completed)",
            "#1 [pending] Beta",
            "Error: #1 not found",
        ]
    );
}

#[test]
fn tool_execute_is_session_execute() {
    let (lua, _) = todo_lua();
    let calls = [
        json!({"action":"create","subject":"Parse","activeForm":"Parsing"}),
        json!({"action":"create","subject":"Check","blockedBy":[1]}),
        json!({"action":"update","id":1,"status":"in_progress"}),
        json!({"action":"update","id":2,"addBlockedBy":[2]}),
        json!({"action":"update","id":1,"status":"completed"}),
        json!({"action":"update","id":1,"status":"completed"}),
        json!({"action":"update","id":1,"status":"in_progress"}),
        json!({"action":"get","id":2}),
        json!({"action":"list","includeDeleted":true}),
        json!({"action":"delete","id":2}),
        json!({"action":"bogus"}),
        json!({"action":"clear"}),
    ];
    let spec: Table = support::eval(&lua, "return require('rpiv_todo').tool()");
    let execute: Function = spec.get("execute").unwrap();
    let direct: Table = support::eval(&lua, "return require('rpiv_todo').session('direct')");
    let ctx = lua.to_value(&json!({ "session": "via-tool" })).unwrap();
    for call in &calls {
        let via_tool: LuaValue = execute
            .call((lua.to_value(call).unwrap(), ctx.clone()))
            .unwrap();
        let via_session: LuaValue = direct
            .call_method("execute", lua.to_value(call).unwrap())
            .unwrap();
        let a: Value = lua.from_value(via_tool).unwrap();
        let b: Value = lua.from_value(via_session).unwrap();
        assert_eq!(a, b, "{call}");
    }
    // The same calls as JSON text (what a host's LLM client hands over), in two fresh
    // sessions: tool().execute and session:execute agree with each other and with the
    // table path above.
    let json_direct: Table =
        support::eval(&lua, "return require('rpiv_todo').session('json-direct')");
    let json_ctx = lua
        .to_value(&json!({ "session": "json-via-tool" }))
        .unwrap();
    let replayed: Table = support::eval(&lua, "return require('rpiv_todo').session('table-again')");
    for call in &calls {
        let text = call.to_string();
        let via_tool: LuaValue = execute.call((text.as_str(), json_ctx.clone())).unwrap();
        let via_session: LuaValue = json_direct.call_method("execute", text.as_str()).unwrap();
        let via_table: LuaValue = replayed
            .call_method("execute", lua.to_value(call).unwrap())
            .unwrap();
        let a: Value = lua.from_value(via_tool).unwrap();
        let b: Value = lua.from_value(via_session).unwrap();
        let c: Value = lua.from_value(via_table).unwrap();
        assert_eq!(a, b, "JSON text {text}");
        assert_eq!(
            a["content"], c["content"],
            "JSON text and table content {text}"
        );
        assert_eq!(
            a["details"]["tasks"], c["details"]["tasks"],
            "JSON text and table tasks {text}"
        );
    }
    // A context without a session runs in "default"; the two above never touched it.
    let n: i64 = support::eval(
        &lua,
        "return #require('rpiv_todo').session('default'):state().tasks",
    );
    assert_eq!(n, 0);
    let created: String = support::eval(
        &lua,
        "local t = require('rpiv_todo'); return t.tool().execute({ action = 'create', subject = 'X' }).content[1].text",
    );
    assert_eq!(created, "Created #1: X (pending)");
    let n: i64 = support::eval(
        &lua,
        "return #require('rpiv_todo').session('default'):state().tasks",
    );
    assert_eq!(n, 1);
}

/// Play calls through the JSON path and record the branch a host would keep.
fn play(lua: &Lua, session: &str, calls: &[Value]) -> Vec<Value> {
    let s: Table = support::eval(
        lua,
        &format!("return require('rpiv_todo').session({session:?})"),
    );
    let mut branch = vec![json!({"type":"message","message":{"role":"user","content":"plan it"}})];
    for call in calls {
        let out: String = s.call_method("execute_json", call.to_string()).unwrap();
        let result: Value = serde_json::from_str(&out).unwrap();
        branch.push(json!({"type":"message","message":{
            "role":"toolResult","toolName":"todo","content":result["content"],"details":result["details"]}}));
        branch.push(json!({"type":"message","message":{"role":"assistant","content":"ok"}}));
    }
    branch
}

fn todos_of(lua: &Lua, session: &str) -> String {
    support::eval(
        lua,
        &format!(
            "local t = require('rpiv_todo'); return (t.command.todos(t.session({session:?})))"
        ),
    )
}

#[test]
fn a_list_survives_compaction_and_a_reload_by_replay() {
    let calls = [
        json!({"action":"create","subject":"A"}),
        json!({"action":"create","subject":"B","blockedBy":[1]}),
        json!({"action":"create","subject":"C"}),
        json!({"action":"update","id":1,"status":"completed"}),
        json!({"action":"update","id":2,"status":"in_progress","activeForm":"Doing B"}),
        json!({"action":"delete","id":3}),
        json!({"action":"update","id":2,"status":"bogus"}),
    ];
    let (old, _) = todo_lua();
    let mut branch = play(&old, "long", &calls);
    let before = todos_of(&old, "long");
    assert_eq!(before, "1/2 completed · 1 in progress\n── In Progress ──\n  ◐ #2 B (Doing B)    ⛓ #1\n── Completed ──\n  ✓ #1 A");
    branch.push(json!({"type":"compaction","summary":"planned A, B, C; A done"}));
    let branch_json = serde_json::to_string(&branch).unwrap();

    // Compaction in the same state: the list is rebuilt and unchanged.
    let f: Function = support::eval(&old, "return require('rpiv_todo').on_compaction");
    f.call::<LuaValue>(("long", branch_json.as_str())).unwrap();
    assert_eq!(todos_of(&old, "long"), before);
    drop(old);

    // Reload: a new Lua state knows nothing until the branch is replayed.
    let (new, _) = todo_lua();
    let replayed: i64 = support::eval(
        &new,
        "local t = require('rpiv_todo'); _G.replays = 0
         t.listen(function(ev, id) if ev == 'replayed' and id == 'long' then _G.replays = _G.replays + 1 end end)
         return #t.session('long'):state().tasks",
    );
    assert_eq!(replayed, 0);
    let f: Function = support::eval(&new, "return require('rpiv_todo').on_session_start");
    f.call::<LuaValue>(("long", branch_json.as_str())).unwrap();
    assert_eq!(todos_of(&new, "long"), before);
    let (replays, next_id, created): (i64, i64, String) = support::eval(
        &new,
        "local s = require('rpiv_todo').session('long')
         return _G.replays, s:state().nextId, s:execute({ action = 'create', subject = 'D' }).content[1].text",
    );
    assert_eq!(
        (replays, next_id, created.as_str()),
        (1, 4, "Created #4: D (pending)")
    );
}

#[test]
fn replay_takes_entries_as_tables_too_and_a_branch_without_snapshots_is_empty() {
    let (lua, _) = todo_lua();
    let (n_tables, n_empty, next_empty): (i64, i64, i64) = support::eval(
        &lua,
        r#"local todo = require('rpiv_todo')
           local s = todo.session('tables')
           local r = s:execute({ action = 'create', subject = 'A' })
           todo.shutdown('tables')
           local fresh = todo.session('tables')
           fresh:replay({ { type = 'message', message = { role = 'toolResult', toolName = 'todo', details = r.details } } })
           local n = #fresh:state().tasks
           todo.on_branch_change('tables', { { type = 'message', message = { role = 'user', content = 'hi' } } })
           return n, #fresh:state().tasks, fresh:state().nextId"#,
    );
    assert_eq!((n_tables, n_empty, next_empty), (1, 0, 1));
}

#[test]
fn shutdown_evicts_and_the_foreground_follows_the_host() {
    let (lua, _) = todo_lua();
    let (evicted, fg_before, fg_after, in_default): (i64, String, String, i64) = support::eval(
        &lua,
        r#"local todo = require('rpiv_todo')
           todo.session('gone'):execute({ action = 'create', subject = 'A' })
           todo.shutdown('gone')
           local evicted = #todo.session('gone'):state().tasks
           local before = todo.foreground().id
           todo.foreground('work')
           todo.tool().execute({ action = 'create', subject = 'B' })
           return evicted, before, todo.foreground().id, #todo.session('default'):state().tasks"#,
    );
    assert_eq!(
        (evicted, fg_before.as_str(), fg_after.as_str(), in_default),
        (0, "default", "work", 1)
    );
}

#[test]
fn render_call_and_render_result_name_the_task_and_its_status() {
    let (lua, _) = todo_lua();
    let lines: Vec<String> = support::eval(
        &lua,
        r#"local todo = require('rpiv_todo')
           local spec, s = todo.tool(), todo.session('render')
           local out = {}
           out[1] = spec.render_call({ action = 'create', subject = 'Write the parser' })
           out[2] = spec.render_result(s:execute({ action = 'create', subject = 'Write the parser' }))
           local args = { action = 'update', id = 1, status = 'in_progress' }
           out[3] = spec.render_call(args, s:state())
           out[4] = spec.render_result(s:execute(args))
           out[5] = spec.render_result(s:execute({ action = 'get', id = 9 }))
           out[6] = spec.render_call({ action = 5, id = 2.5 })
           out[7] = spec.render_call('nonsense')
           out[8] = spec.render_call({ action = 'create', subject = '\27[31mred\27[0m' })
           out[9] = spec.render_call({ action = 'delete', id = 1 }, s:state())
           out[10] = spec.render_result(s:execute({ action = 'delete', id = 1 }))
           out[11] = spec.render_result(s:execute({ action = 'list' }))
           out[12] = spec.render_call({ action = 'list', status = 'pending' })
           s:execute({ action = 'create', subject = 'Second' })
           out[13] = spec.render_result(s:execute({ action = 'list' }))
           out[14] = spec.render_call({ action = 'update', id = 2, status = 'completed' }, s:state())
           out[15] = spec.render_result(s:execute({ action = 'clear' }))
           return out"#,
    );
    assert_eq!(
        lines,
        [
            "+ create Write the parser",
            "○ pending #1 Write the parser",
            "✎ update #1 Write the parser → ◐ in progress",
            "◐ in progress #1 Write the parser",
            "✗ Error: #9 not found",
            "? ? #2.5",
            "? todo",
            "+ create red",
            "✗ delete #1 Write the parser",
            "⊘ deleted #1 Write the parser",
            "No todos yet. Ask the agent to plan a multi-step task.",
            "≡ list ○ pending",
            "1 pending",
            "✎ update #2 Second → ✓ completed",
            "Cleared 2 tasks",
        ]
    );
}

// ---------------------------------------------------------------------------
// The example host
// ---------------------------------------------------------------------------

#[test]
fn the_example_host_plays_its_session_and_the_list_survives_the_reload() {
    let opts = host::Options {
        plain: true,
        ..host::Options::default()
    };
    let mut out = Vec::new();
    let survived = host::run(&opts, &mut out).expect("the host runs");
    let text = String::from_utf8(out).expect("UTF-8 output");
    assert!(survived, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    let has = |needle: &str| lines.iter().any(|l| l.contains(needle));
    // The spec it registers, with the config's override applied.
    assert!(has("name: todo    label: Todo"));
    assert!(has(
        "  action: string (create | update | list | get | delete | clear), required"
    ));
    assert!(has("(this project: one task per pull-request step)"));
    assert!(has(
        "  9. In this repository a task is completed only when `npm test` passes"
    ));
    // Calls, their results (including the rejected ones) and /todos.
    assert!(has(
        "[call 1] todo + create Read the current middleware stack"
    ));
    assert!(has(
        "  result: Created #1: Read the current middleware stack (pending)"
    ));
    assert!(has("  result: Error: addBlockedBy: #9 not found"));
    assert!(has(
        "  result: Error: illegal transition completed → in_progress"
    ));
    assert!(has(
        "  result: Error: addBlockedBy would create a cycle in the blockedBy graph"
    ));
    assert!(has(
        "  result: No change: #5 already matches the requested values (status: completed)"
    ));
    assert!(has("    1 in progress · 4 pending"));
    // The overlay panel under each call (plain theme with --plain).
    assert!(has("    ● Todos (0/1)"));
    assert!(has("    └─ ○ Read the current middleware stack"));
    assert!(has(
        "    ├─ ◐ #1 Read the current middleware stack (Reading the middleware stack)"
    ));
    // Compaction, reload, replay.
    assert!(has("=== reload: Lua state dropped; new state, config loaded again, list replayed from the branch ==="));
    assert!(has("  the list survived the reload: /todos is identical"));
    assert!(
        has("  result: Created #6: Fix refill rounding for slow rates (pending)"),
        "ids continue after the replay"
    );
    // The end: every live task completed.
    let end = text
        .split("=== end of session")
        .nth(1)
        .expect("an end section");
    assert!(end.contains("6/6 completed"), "{end}");
    assert!(!end.contains("Benchmark"), "tombstones are not listed");
}

#[test]
fn the_example_host_reads_a_users_session_and_config() {
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("s.jsonl");
    let config = dir.path().join("init.lua");
    std::fs::write(
        &session,
        "{\"user\": \"two things\"}\n{\"action\": \"create\", \"subject\": \"One\"}\n{\"call\": {\"action\": \"create\", \"subject\": \"Two\"}}\n{\"call\": {\"action\": \"update\", \"id\": 1, \"status\": \"completed\"}}\n{\"call\": \"{\\\"action\\\":\\\"get\\\",\\\"id\\\":2}\"}\n",
    )
    .unwrap();
    std::fs::write(
        &config,
        "require('rpiv_todo').setup({ guidance = { prompt_snippet = 'mine', prompt_guidelines = { 'only' } } })",
    )
    .unwrap();
    let opts = host::parse_args(
        [
            "--session",
            session.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--plain",
            "--width",
            "60",
        ]
        .map(String::from),
    )
    .unwrap()
    .unwrap();
    let mut out = Vec::new();
    assert!(host::run(&opts, &mut out).unwrap());
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("prompt snippet: mine\nprompt guidelines:\n  1. only\n"),
        "{text}"
    );
    // Four calls, no marker: the reload comes after the second.
    let reload = text.find("=== reload").expect("a reload");
    let third = text.find("[call 3]").expect("a third call");
    assert!(reload < third);
    assert!(text.contains("  result: Updated #1 (pending → completed)"));
    // Arguments as JSON text (what an LLM API delivers) are passed on verbatim.
    assert!(
        text.contains("  arguments: {\"action\":\"get\",\"id\":2}\n  result: #2 [pending] Two\n"),
        "{text}"
    );
    assert!(host::parse_args(["--bogus".to_owned()]).is_err());
}

#[test]
fn the_example_host_shows_the_ansi_overlay_after_each_call() {
    let mut colored = Vec::new();
    host::run(&host::Options::default(), &mut colored).expect("the host runs");
    let colored = String::from_utf8(colored).unwrap();
    let mut plain = Vec::new();
    let opts = host::Options {
        plain: true,
        ..host::Options::default()
    };
    host::run(&opts, &mut plain).expect("the host runs");
    let plain = String::from_utf8(plain).unwrap();
    // The panel under every call, colored; without its SGR it is the plain panel.
    let calls = colored.matches("\n[call ").count();
    assert_eq!(calls, 32);
    assert_eq!(colored.matches("\n  overlay:\n").count(), calls);
    let stripped: String = {
        let mut out = String::new();
        let mut rest = colored.as_str();
        while let Some(i) = rest.find("\x1b[") {
            out.push_str(&rest[..i]);
            let after = &rest[i + 2..];
            let end = after.find('m').expect("SGR ends with m");
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        out
    };
    assert_eq!(stripped, plain);
    assert!(colored.contains("    \x1b[36m●\x1b[39m \x1b[1m\x1b[36mTodos (0/1)\x1b[39m\x1b[22m\n"));
    // A person watching sees the panel evolve: the turn-1 tasks finished before turn 3
    // have fallen away at its first call, and the heading counts what the panel shows
    // while /todos keeps the full account.
    let turn3 = plain.split("--- turn 3 ---").nth(1).expect("a third turn");
    let first_panel = turn3.split("  overlay:\n").nth(1).unwrap();
    assert!(first_panel.starts_with(
        "    ● Todos (0/2)\n    ├─ ◐ #4 Add tests for burst and refill (Adding limiter tests) ⛓ #2,#3,#6\n    └─ ○ #5 Document the RATE_LIMIT_* settings ⛓ #3\n"
    ), "{first_panel}");
    let last_call = turn3.rsplit("[call ").next().unwrap();
    assert!(last_call.contains("    6/6 completed\n"), "{last_call}");
    assert!(last_call.contains("    ○ Todos (2/2)\n    ├─ ✓ #4 Add tests for burst and refill ⛓ #2,#3,#6\n    └─ ✓ #5 Document the RATE_LIMIT_* settings ⛓ #3\n"), "{last_call}");
}

#[test]
fn the_example_host_colours_only_a_terminal_without_no_color_unless_told() {
    use std::ffi::OsStr;
    // Decided from the terminal and NO_COLOR (set and non-empty turns colour off).
    assert!(host::use_color(None, true, None));
    assert!(host::use_color(None, true, Some(OsStr::new(""))));
    assert!(!host::use_color(None, true, Some(OsStr::new("1"))));
    assert!(!host::use_color(None, false, None));
    // --color and --plain win over both.
    assert!(host::use_color(Some(true), false, Some(OsStr::new("1"))));
    assert!(!host::use_color(Some(false), true, None));
    let parse = |args: &[&str]| {
        host::parse_args(args.iter().map(|a| a.to_string()))
            .unwrap()
            .unwrap()
    };
    let color = parse(&["--color"]);
    assert_eq!((color.color, color.plain), (Some(true), false));
    let plain = parse(&["--color", "--plain"]);
    assert_eq!((plain.color, plain.plain), (Some(false), true));
    assert_eq!(parse(&[]).color, None);
    assert!(host::parse_args(["--help".to_owned()]).unwrap().is_none());
    assert!(host::HELP.contains("session file: JSON Lines"));
}
