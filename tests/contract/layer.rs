//! What only Rust can check of the Lua layer (`require("rpiv_todo")`): the tool's parameter
//! schema through a real JSON Schema validator (the `jsonschema` crate, which no Lua
//! interpreter here has), and the example host (`examples/host`, a Rust program embedding
//! the plugin with `rpiv_todo::preload`). Everything else of the layer (`/todos`, the tool
//! spec against `schema.json`, `setup`, sessions, replay, renderers) is checked from real
//! interpreters in tests/lua/layer_spec.lua.

use mlua::{Lua, LuaSerdeExt, Value as LuaValue};
use serde_json::Value;

use crate::support;

#[allow(dead_code)]
#[path = "../../examples/host/main.rs"]
mod host;

/// A Lua state with the plugin loaded and the English UI (the recorded strings' locale).
fn todo_lua() -> Lua {
    let lua = support::lua();
    support::eval::<()>(&lua, "require('rpiv_todo').setup({ locale = 'en' })");
    lua
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
// The tool's schema through a validator
// ---------------------------------------------------------------------------

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
    let lua = todo_lua();
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
