//! Issue 9 (reliability) through the public Lua contract: what a person reads never
//! carries terminal escapes, controls or bidi controls, whatever the model wrote.

use mlua::{Function, Table};

use crate::support::{eval, lua};

/// The first character a terminal or a chat could act on: C0 and C1 controls, DEL, and
/// every Bidi_Control character.
fn unsafe_char(s: &str) -> Option<char> {
    s.chars().find(|&c| {
        matches!(c,
            '\0'..='\x1f' | '\x7f'..='\u{9f}'
            | '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    })
}

fn reply_text(result: &Table) -> String {
    let content: Table = result.get("content").unwrap();
    content.get::<Table>(1).unwrap().get("text").unwrap()
}

const HOSTILE: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}\u{61c}\u{2066}\u{9b}31m";

#[test]
fn a_rejected_call_never_echoes_model_keys_raw() {
    let lua = lua();
    lua.globals().set("HOSTILE", HOSTILE).unwrap();
    // The table path names the field with the model's metadata key (a function value is
    // what it refuses); nested, at the top level and as an unknown action.
    let results: Vec<Table> = eval(
        &lua,
        r#"
        local core = require("rpiv_todo.core")
        local list = core.list()
        list:apply({ action = "create", subject = "a" })
        return {
          list:apply({ action = "create", subject = "s", metadata = { [HOSTILE] = print } }),
          list:apply({ action = "update", id = 1, metadata = { k = { [HOSTILE] = { print } } } }),
          list:apply({ action = HOSTILE }),
          list:apply({ action = "get", id = HOSTILE }),
          list:apply({ [HOSTILE] = 1 }),
          (core.apply(nil, { action = "create", subject = "s", metadata = { [HOSTILE] = print } })),
        }
        "#,
    );
    assert_eq!(results.len(), 6);
    for (i, r) in results.iter().enumerate() {
        let text = reply_text(r);
        let details: Table = r.get("details").unwrap();
        let error: Option<String> = details.get("error").unwrap();
        assert!(text.starts_with("Error: "), "call {i}: {text:?}");
        assert_eq!(unsafe_char(&text), None, "call {i}: {text:?}");
        if let Some(e) = error {
            assert_eq!(unsafe_char(&e), None, "call {i}: details.error {e:?}");
        }
    }
    // The key is still named, with the OSC, the CSIs and the bidi controls gone.
    assert_eq!(
        reply_text(&results[0]),
        "Error: metadata.: expected a JSON value, got a function"
    );
}

#[test]
fn success_replies_and_the_display_sanitizer_drop_every_bidi_control() {
    let lua = lua();
    lua.globals().set("HOSTILE", HOSTILE).unwrap();
    let (created, got, listed, shown, kept): (Table, Table, Table, String, String) = eval(
        &lua,
        r#"
        local core = require("rpiv_todo.core")
        local list = core.list()
        local created = list:apply({ action = "create", subject = "x" .. HOSTILE .. "y", activeForm = HOSTILE })
        list:apply({ action = "update", id = 1, status = "in_progress", owner = HOSTILE, description = HOSTILE })
        return created, list:apply({ action = "get", id = 1 }), list:apply({ action = "list" }),
          core.sanitize_display("a\216\156b"), core.sanitize("a\216\156b")
        "#,
    );
    for r in [&created, &got, &listed] {
        // Line breaks between the reply's own lines are the reply's; model text has none.
        for line in reply_text(r).lines() {
            assert_eq!(unsafe_char(line), None, "{line:?}");
        }
    }
    assert_eq!(reply_text(&created), "Created #1: xy (pending)");
    assert_eq!(shown, "ab");
    // core.sanitize keeps the original's behaviour (a recorded case keeps U+061C).
    assert_eq!(kept, "a\u{61c}b");
}

#[test]
fn a_host_error_message_is_made_harmless_too() {
    let lua = lua();
    lua.globals().set("HOSTILE", HOSTILE).unwrap();
    let list: Function = eval(&lua, "return require('rpiv_todo.core').list");
    let bad: Table = eval(
        &lua,
        "return { tasks = { { id = 1, subject = 'a', status = 'pending', metadata = { [HOSTILE] = print } } }, nextId = 2 }",
    );
    let err = list.call::<mlua::Value>(bad).unwrap_err().to_string();
    assert!(err.contains("rpiv_todo.core.list: "), "{err}");
    let first_line = err.lines().next().unwrap_or_default();
    assert_eq!(unsafe_char(first_line), None, "{first_line:?}");
}

#[test]
fn a_host_snapshot_is_repaired_or_refused_and_replay_returns_only_what_core_list_accepts() {
    let lua = lua();
    let (created, next_id, dup, cycle, replayed): (String, i64, String, String, i64) = eval(
        &lua,
        r#"
        local core = require("rpiv_todo.core")
        -- nextId not past the largest id: raised past it, no second #5.
        local list = core.list('{"tasks":[{"id":5,"subject":"a","status":"pending"}],"nextId":5}')
        local created = list:apply({ action = "create", subject = "b" }).content[1].text
        local _, dup = pcall(core.list, '{"tasks":[{"id":1,"subject":"a","status":"pending"},{"id":1,"subject":"b","status":"pending"}],"nextId":2}')
        local _, cycle = pcall(core.apply, { tasks = {
          { id = 1, subject = "a", status = "pending", blockedBy = { 2 } },
          { id = 2, subject = "b", status = "pending", blockedBy = { 1 } },
        }, nextId = 3 }, { action = "list" })
        -- The newest todo result carries a dangling blockedBy: replay skips it.
        local function entry(details)
          return { type = "message", message = { role = "toolResult", toolName = "todo", details = details } }
        end
        local state = core.replay({
          entry({ tasks = { { id = 1, subject = "ok", status = "pending" } }, nextId = 2 }),
          entry({ tasks = { { id = 1, subject = "bad", status = "pending", blockedBy = { 9 } } }, nextId = 2 }),
        })
        return created, list:next_id(), tostring(dup), tostring(cycle), #state.tasks + 0 * state.nextId
        "#,
    );
    assert_eq!(created, "Created #6: b (pending)");
    assert_eq!(next_id, 7);
    assert!(
        dup.contains("rpiv_todo.core.list: state: tasks[2].id: #1 is already the id of tasks[1]"),
        "{dup}"
    );
    assert!(
        cycle.contains("rpiv_todo.core.apply: state: tasks: the blockedBy edges form a cycle"),
        "{cycle}"
    );
    assert_eq!(replayed, 1);
}
