//! Lua values to JSON values, for arguments the model wrote and snapshots a host hands
//! over. Everything that JSON cannot say is an error naming where it was found: a
//! function, a non-UTF-8 string, NaN, a table with mixed or sparse keys, nesting deeper
//! than `MAX_DEPTH` (which also catches cyclic tables).
//!
//! The reading itself is `raw::read`, the one reader of Lua values (raw C reads inside
//! one protected call, no allocation in Lua). It names a fault by the steps from the value
//! down to it; this file turns them into the path an error shows.

use mlua::{Lua, Value as LuaValue};
use serde_json::Value;

use super::raw::{self, Empty, Fault, Step};
use super::Ctx;
use crate::error::{Error, Result};
#[cfg(test)]
use crate::task::{State, Task};

/// Convert the top level of a call's arguments.
pub fn params(lua: &Lua, ctx: &Ctx, v: &LuaValue) -> Result<Value> {
    match v {
        LuaValue::Table(_) => {
            raw::read(lua, ctx, v, Empty::Object, true).map_err(|f| error("arguments", true, f))
        }
        other => Err(Error::input(
            "arguments",
            "a table or a JSON string",
            type_name(other),
        )),
    }
}

/// Convert any value; `path` names it in errors.
pub fn value(lua: &Lua, ctx: &Ctx, v: &LuaValue, path: &str, empty: Empty) -> Result<Value> {
    raw::read(lua, ctx, v, empty, false).map_err(|f| error(path, false, f))
}

/// A fault as an error naming its path: `path.key` and `path[i]` below the value, except
/// that a call's argument is named alone (`subject`, not `arguments.subject`).
fn error(path: &str, top: bool, f: Fault) -> Error {
    let mut at = path.to_owned();
    for (depth, step) in f.steps.iter().rev().enumerate() {
        match step {
            Step::Index(i) => at.push_str(&format!("[{i}]")),
            Step::Key(k) if top && depth == 0 => at.clone_from(k),
            Step::Key(k) => {
                at.push('.');
                at.push_str(k);
            }
        }
    }
    Error::input(at, f.expected, f.got)
}

fn type_name(v: &LuaValue) -> String {
    match v {
        LuaValue::LightUserData(_) => "a light userdata that is not null".into(),
        other => format!("a {}", other.type_name()),
    }
}

/// `core.replay` over Lua tables, in every flavour: the walk over entries is Lua
/// (`lua/rpiv_todo/native/replay_walk.lua`), which LuaJIT compiles and Lua 5.4 and 5.1 run
/// with their own field reads, where every C API call costs one of theirs (measured in
/// bench/README.md). The winning snapshot is read by `raw::snapshot_table`, the one
/// reading of a snapshot held in Lua tables: the list's rules over it (`State::validate`'s
/// `task::check_links` and `task::repaired_next_id`) are applied there, in Rust, and
/// nowhere in Lua.
const WALK_IN_LUA: &str = include_str!("../../lua/rpiv_todo/native/replay_walk.lua");

/// `WALK_IN_LUA` over `native` (the native `core.replay`, for JSON text, nil and misuse).
///
/// The snapshot function it hands the walk is a Lua function like any other (the debug
/// library reaches it as an upvalue), so it checks its arguments' types before any raw
/// read: `tasks` a table, `nextId` a number, or a Lua error.
pub fn walk_in_lua(lua: &Lua, native: mlua::Function) -> mlua::Result<mlua::Function> {
    let snapshot = lua.create_function(|lua, (tasks, next): (LuaValue, LuaValue)| {
        super::guarded(lua, "replay", || {
            let expected = match (&tasks, &next) {
                (LuaValue::Table(_), LuaValue::Number(_) | LuaValue::Integer(_)) => None,
                (LuaValue::Table(_), other) => Some(("nextId", "a number", other)),
                (other, _) => Some(("tasks", "a table", other)),
            };
            if let Some((field, what, got)) = expected {
                return Err(super::api_error(
                    "replay",
                    Error::input(field, what, type_name(got)),
                ));
            }
            let ctx = Ctx::get(lua)?;
            raw::snapshot_table(lua, &ctx, &tasks, &next)
        })
    })?;
    // Both behind the module's entry, as everything Lua code reaches (`raw::export`).
    let native = raw::export::function(lua, native, c"rpiv_todo.core.replay")?;
    let snapshot = raw::export::function(lua, snapshot, c"rpiv_todo.core.replay")?;
    lua.load(WALK_IN_LUA)
        .set_name("@lua/rpiv_todo/native/replay_walk.lua")
        .eval::<mlua::Function>()?
        .call((native, snapshot))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlua::Table;

    fn fixture(name: &str) -> Vec<Value> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// JSON as a host's decoder hands it over (cjson: `null` is the NULL light userdata,
    /// empty arrays carry the array metatable).
    fn to_lua(lua: &Lua, ctx: &Ctx, v: &Value) -> LuaValue {
        super::super::raw::write::json(lua, &ctx.array_mt, v).unwrap()
    }

    #[test]
    fn every_recorded_call_and_snapshot_reads_back_as_recorded() {
        let lua = Lua::new();
        let ctx = Ctx::new(&lua).unwrap();
        let mut n = 0;
        for trace in fixture("reducer-traces.jsonl") {
            for step in trace["steps"].as_array().unwrap() {
                let got = params(&lua, &ctx, &to_lua(&lua, &ctx, &step["params"]));
                assert_eq!(got.as_ref(), Ok(&step["params"]));
                let details = to_lua(&lua, &ctx, &step["details"]);
                let got = value(&lua, &ctx, &details, "details", Empty::Object);
                assert_eq!(got.as_ref(), Ok(&step["details"]));
                n += 1;
            }
        }
        assert_eq!(n, 6825);
        for case in fixture("replay-cases.jsonl") {
            let entries = to_lua(&lua, &ctx, &case["entries"]);
            let got = value(&lua, &ctx, &entries, "entries", Empty::Array);
            assert_eq!(got.as_ref(), Ok(&case["entries"]));
        }
    }

    /// A snapshot as a host's state table (read as `core.list` reads one) and inside a
    /// replayed entry (the walk and the native copy): both equal the core's reading of the
    /// JSON. True when the JSON is a state.
    fn snapshots_agree(lua: &Lua, ctx: &Ctx, state: &Value) -> bool {
        let table = to_lua(lua, ctx, state);
        let general = crate::json::state_from_value(state);
        // The reader, as `core.list(table)` reads a state (through JSON values).
        let fast = value(lua, ctx, &table, "state", Empty::Object)
            .and_then(|v| crate::json::state_from_value(&v));
        assert_eq!(fast, general, "state table {state}");
        let entry = serde_json::json!([{"type": "message", "message": {"role": "toolResult",
            "toolName": "todo", "details": state}}]);
        let LuaValue::Table(entries) = to_lua(lua, ctx, &entry) else {
            panic!("not a table")
        };
        let native = crate::lua::native_replay(lua).unwrap();
        let walk = walk_in_lua(lua, native).unwrap();
        let t: LuaValue = walk.call(entries).unwrap();
        let walked = value(lua, ctx, &t, "state", Empty::Object)
            .and_then(|v| crate::json::state_from_value(&v))
            .unwrap();
        assert_eq!(
            walked,
            crate::replay::replay([&entry[0]]),
            "replay of {state}"
        );
        general.is_ok()
    }

    #[test]
    fn snapshots_read_straight_into_a_state_equal_the_general_reading() {
        let lua = Lua::new();
        crate::lua::exports(&lua).unwrap();
        let ctx = Ctx::get(&lua).unwrap();
        let (mut states, mut all) = (0, 0);
        for trace in fixture("reducer-traces.jsonl") {
            for step in trace["steps"].as_array().unwrap() {
                let d = &step["details"];
                let state = serde_json::json!({"tasks": d["tasks"], "nextId": d["nextId"]});
                states += snapshots_agree(&lua, &ctx, &state) as usize;
                all += 1;
            }
        }
        // Every recorded snapshot is a state.
        assert_eq!(states, all);
        let odd = [
            r#"{"tasks": [{"id": 1, "subject": "a", "status": "pending", "owner": null}], "nextId": 2}"#,
            r#"{"tasks": [{"id": 1, "subject": "a", "status": "pending", "x": [1]}], "nextId": 2}"#,
            r#"{"tasks": [{"id": 1.5, "subject": "a", "status": "pending"}], "nextId": 2}"#,
            r#"{"tasks": [{"id": 1, "subject": "a", "status": "done"}], "nextId": 2}"#,
            r#"{"tasks": [{"id": 1, "subject": 5, "status": "pending"}], "nextId": 2}"#,
            r#"{"tasks": [{"id": 1, "status": "pending"}], "nextId": 2}"#,
            r#"{"tasks": [{"id": 1, "subject": "a", "status": "pending", "blockedBy": []}], "nextId": 2}"#,
            r#"{"tasks": [{"id": 1, "subject": "a", "status": "pending", "blockedBy": [2, 2.5]}], "nextId": 2}"#,
            r#"{"tasks": [{"id": 1, "subject": "a", "status": "pending", "metadata": {"k": [{}]}}], "nextId": 2}"#,
            r#"{"tasks": [{"id": 1, "subject": "a", "status": "pending", "metadata": []}], "nextId": 2}"#,
            r#"{"tasks": [{"id": 1, "subject": "a", "status": "pending"}]}"#,
            r#"{"tasks": [{"id": 1, "subject": "a", "status": "pending"}], "nextId": 1e300}"#,
            r#"{"tasks": [{"id": 1, "subject": "a", "status": "pending"}], "nextId": 2, "more": 1}"#,
            r#"{"tasks": [], "nextId": 2}"#,
            r#"{"tasks": [5], "nextId": 2}"#,
        ];
        for text in odd {
            snapshots_agree(&lua, &ctx, &serde_json::from_str(text).unwrap());
        }
    }

    #[test]
    fn the_walk_in_lua_finds_what_the_json_walk_finds() {
        let lua = Lua::new();
        crate::lua::exports(&lua).unwrap();
        let ctx = Ctx::get(&lua).unwrap();
        let native = crate::lua::native_replay(&lua).unwrap();
        let read = |v: LuaValue| {
            let v = value(&lua, &ctx, &v, "state", Empty::Object).unwrap();
            crate::json::state_from_value(&v).unwrap()
        };
        let mut cases: Vec<Value> = fixture("replay-cases.jsonl")
            .into_iter()
            .map(|c| c["entries"].clone())
            .collect();
        let todo = |details: Value| {
            serde_json::json!({"type": "message", "message": {"role": "toolResult",
                "toolName": "todo", "details": details}})
        };
        let good = serde_json::json!({"tasks": [{"id": 1, "subject": "a", "status": "pending"}], "nextId": 2});
        cases.push(serde_json::json!([
            todo(good.clone()),
            todo(serde_json::json!({"tasks": {"a": 1}, "nextId": 3}))
        ]));
        cases.push(serde_json::json!([
            todo(good.clone()),
            todo(serde_json::json!({"tasks": [], "nextId": 3}))
        ]));
        cases.push(serde_json::json!([
            todo(good.clone()),
            todo(serde_json::json!({"tasks": [5], "nextId": 3})),
            7
        ]));
        cases.push(serde_json::json!([todo(good.clone()), {"type": "message", "message": {"role": "toolResult",
            "toolName": "bash", "details": good.clone()}}]));
        {
            let in_lua = walk_in_lua(&lua, native.clone()).unwrap();
            for entries in &cases {
                let t = to_lua(&lua, &ctx, entries);
                let b: LuaValue = in_lua.call(t).unwrap();
                let json = entries.as_array().unwrap();
                assert_eq!(
                    read(b),
                    crate::replay::replay(json.iter().rev()),
                    "for {entries}"
                );
            }
            // Not a table: handed to the native function.
            let a: LuaValue = in_lua.call(LuaValue::Nil).unwrap();
            assert_eq!(read(a), State::default());
            assert!(in_lua.call::<LuaValue>(5).is_err());
        }
    }

    /// Lua-built snapshots, odd in ways JSON cannot be, through the walk: the state the
    /// general conversion (JSON values, `json::state_from_value`) makes of the same tables,
    /// or the older list when they make none.
    #[test]
    fn the_walk_reads_snapshots_as_the_general_conversion_does() {
        let lua = Lua::new();
        crate::lua::exports(&lua).unwrap();
        let ctx = Ctx::get(&lua).unwrap();
        let native = walk_in_lua(&lua, crate::lua::native_replay(&lua).unwrap()).unwrap();
        // Each case: the tasks and nextId of the newest entry; an older entry holds one
        // plain task, so a refused snapshot shows as that list.
        let cases = [
            "{ { id = 1, subject = 'a', status = 'pending' } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', description = 'd', activeForm = 'f', owner = 'o' } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending' }, { id = 2, subject = 'b', status = 'completed', blockedBy = { 1 } } }, 3",
            "{ { id = -0.0, subject = 'a', status = 'pending' } }, -0.0",
            "{ { id = -7, subject = 'a', status = 'deleted' } }, 0",
            "{ { id = 2^53 - 1, subject = 'a', status = 'pending' } }, 2^53 - 1",
            "{ { id = 2^53, subject = 'a', status = 'pending' } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending' } }, 2^53",
            "{ { id = 1, subject = 'a', status = 'pending' } }, 0/0",
            "{ { id = 1, subject = 'a', status = 'pending' } }, 1/0",
            "{ { id = 1, subject = 'a', status = 'pending' } }, 2.5",
            "{ { id = 1.5, subject = 'a', status = 'pending' } }, 2",
            "{ { id = '1', subject = 'a', status = 'pending' } }, 2",
            "{ { id = {}, subject = 'a', status = 'pending' } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { '1' } } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { {} } } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = {} } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { 1, nil, 3 } } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { 1, x = 2 } } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { [2] = 1 } } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { -0.0, 2^53 - 1 } } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { 1.5 } } }, 2",
            "{ { id = 1, subject = 'caf\\195\\169', status = 'pending' } }, 2",
            "{ { id = 1, subject = 'a\\255b', status = 'pending' } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', description = '\\192\\128' } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', activeForm = 5 } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', owner = false } }, 2",
            "{ { id = 1, subject = 'a', status = 'done' } }, 2",
            "{ { id = 1, subject = 'a', status = 1 } }, 2",
            "{ { id = 1, subject = 'a' } }, 2",
            "{ { subject = 'a', status = 'pending' } }, 2",
            "{ { id = 1, status = 'pending' } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', extra = 1 } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', [1] = 'x' } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', [true] = 'x' } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', tasks = {} } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', metadata = { k = 'v' } } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', metadata = {} } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', metadata = 5 } }, 2",
            "{ setmetatable({ id = 1, subject = 'a' }, { __index = { status = 'pending' } }) }, 2",
            "setmetatable({}, { __index = { { id = 1, subject = 'a', status = 'pending' } } }), 2",
            "{ { id = 1, subject = 'a', status = 'pending' }, 5 }, 2",
            "{ { id = 1, subject = 'a', status = 'pending' }, x = 1 }, 2",
            "{ [2] = { id = 1, subject = 'a', status = 'pending' } }, 2",
            "{}, 2",
            "{}, 2.5",
            // The list's rules (`State::validate`): refused, or nextId repaired.
            "{ { id = 0, subject = 'a', status = 'pending' } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending' }, { id = 1, subject = 'b', status = 'pending' } }, 3",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { 2 } } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { 1 } } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { 2 } }, \
               { id = 2, subject = 'b', status = 'pending', blockedBy = { 3 } }, \
               { id = 3, subject = 'c', status = 'pending', blockedBy = { 1 } } }, 4",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { 2, 3 } }, \
               { id = 2, subject = 'b', status = 'pending', blockedBy = { 3 } }, \
               { id = 3, subject = 'c', status = 'pending' } }, 4",
            "{ { id = 5, subject = 'a', status = 'pending' } }, 3",
            "{ { id = 5, subject = 'a', status = 'pending' } }, 5",
            "{ { id = 5, subject = 'a', status = 'pending' } }, -4",
            "{ { id = 2^53 - 1, subject = 'a', status = 'pending' } }, 1",
            "{ { id = 2^53 - 2, subject = 'a', status = 'pending' } }, 1",
            // A chain of 3,000 tasks, each blocked by the next; and the same closed.
            "(function() local t = {}; for i = 1, 3000 do t[i] = { id = i, subject = 's', status = 'pending', \
               blockedBy = i < 3000 and { i + 1 } or nil } end; return t end)(), 3001",
            "(function() local t = {}; for i = 1, 3000 do t[i] = { id = i, subject = 's', status = 'pending', \
               blockedBy = { i % 3000 + 1 } } end; return t end)(), 3001",
        ];
        let older = "{ type = 'message', message = { role = 'toolResult', toolName = 'todo', \
                     details = { tasks = { { id = 9, subject = 'older', status = 'pending' } }, nextId = 10 } } }";
        for case in cases {
            let entries: Table = lua
                .load(format!(
                    "local tasks, n = {case}; return {{ {older}, {{ type = 'message', message = \
                     {{ role = 'toolResult', toolName = 'todo', details = {{ tasks = tasks, nextId = n }} }} }} }}"
                ))
                .eval()
                .unwrap_or_else(|e| panic!("{case}: {e}"));
            let a: LuaValue = native.call(&entries).unwrap();
            // And both as the general conversion has it: the newest snapshot converted to
            // JSON values and read as a state, or (when it is not one) the older list.
            let details: Table = entries
                .get::<Table>(2)
                .unwrap()
                .get::<Table>("message")
                .unwrap()
                .get("details")
                .unwrap();
            let general = value(
                &lua,
                &ctx,
                &details.get("tasks").unwrap(),
                "tasks",
                Empty::Array,
            )
            .ok()
            .zip(
                value(
                    &lua,
                    &ctx,
                    &details.get("nextId").unwrap(),
                    "nextId",
                    Empty::Object,
                )
                .ok(),
            )
            .and_then(|(t, n)| crate::replay::state_from_parts(t, n));
            let older = State {
                tasks: vec![Task::new(9, "older".into())],
                next_id: 10,
            };
            let got = value(&lua, &ctx, &a, "state", Empty::Object)
                .and_then(|v| crate::json::state_from_value(&v));
            assert_eq!(got, Ok(general.unwrap_or(older)), "for {case}");
        }
        // Text that is not UTF-8 makes no snapshot, however often it is seen.
        for _ in 0..3 {
            let entries: Table = lua
                .load(format!(
                    "return {{ {older}, {{ type = 'message', message = {{ role = 'toolResult', toolName = 'todo', \
                     details = {{ tasks = {{ {{ id = 1, subject = 'caf\\195\\169', status = 'pending', \
                     owner = 'x\\255' }} }}, nextId = 2 }} }} }} }}"
                ))
                .eval()
                .unwrap();
            let b: Table = native.call(&entries).unwrap();
            let subject: String = b
                .get::<Table>("tasks")
                .unwrap()
                .get::<Table>(1)
                .unwrap()
                .get("subject")
                .unwrap();
            assert_eq!(subject, "older");
        }
    }

    /// A few tables shared many times spell 2^n values: the reader counts what it copies
    /// again and stops within milliseconds, naming where; a little sharing reads as before.
    #[test]
    fn shared_tables_are_counted_and_a_dag_stops_quickly() {
        let lua = Lua::new();
        let ctx = Ctx::new(&lua).unwrap();
        let dag = |n: usize| -> LuaValue {
            lua.load(format!(
                "local t = {{}} for i = 1, {n} do t = {{ t, t }} end return t"
            ))
            .eval()
            .unwrap()
        };
        // 15 tables, 2^15 - 1 values: the copies of the second halves (about 2^15
        // values) fit the budget; one level more does not.
        let v = value(&lua, &ctx, &dag(14), "v", Empty::Object).unwrap();
        assert_eq!(
            serde_json::to_string(&v).unwrap().matches("{}").count(),
            1 << 14
        );
        for n in [15, 16, 40, 127] {
            let start = std::time::Instant::now();
            let e = value(&lua, &ctx, &dag(n), "v", Empty::Object).unwrap_err();
            let e = e.to_string();
            assert!(
                e.ends_with(": expected at most 64360 values repeated from shared tables, got more (a table shared many times)"),
                "{n}: {e}"
            );
            // The path to where it stopped, inside a repeat.
            assert!(e.starts_with("v[") && e.contains("[2]"), "{n}: {e}");
            assert!(
                start.elapsed() < std::time::Duration::from_millis(500),
                "{n}"
            );
        }
        // The same small table in two places, and a shared id array in a call.
        let v: LuaValue = lua
            .load("local deps = { 1, 2 } return { a = deps, b = { deps, deps } }")
            .eval()
            .unwrap();
        let got = value(&lua, &ctx, &v, "v", Empty::Object).unwrap();
        assert_eq!(got.to_string(), r#"{"a":[1,2],"b":[[1,2],[1,2]]}"#);
    }

    /// What JSON can and cannot say, read through the reader: each value, or the error
    /// naming where reading stopped (hand-written; flavours differ only where noted).
    #[test]
    fn the_reader_gives_each_value_or_names_its_fault() {
        let lua = Lua::new();
        let ctx = Ctx::new(&lua).unwrap();
        let keys = "an array (keys 1..n) or an object (string keys), got a table with other keys";
        let cyclic = format!(
            "v{}: expected nesting at most 64 levels deep, got deeper nesting (a cyclic table?)",
            ".t".repeat(128)
        );
        let deep_ok = format!("{}{{}}{}", "[".repeat(127), "]".repeat(127));
        let too_deep = format!(
            "v{}: expected nesting at most 64 levels deep, got deeper nesting (a cyclic table?)",
            "[1]".repeat(128)
        );
        // 2^53 and -2^63 are floats in 5.4; LuaJIT and 5.1 numbers that hold an exact i64
        // are integers.
        let (big, min) = match cfg!(feature = "lua54") {
            true => ("9007199254740992.0", "-9.223372036854776e+18"),
            false => ("9007199254740992", "-9223372036854775808"),
        };
        let cases: Vec<(&str, String)> = vec![
            ("{ 1, 2, 3 }", "[1,2,3]".into()),
            (
                "{ a = 1, b = { 2.5, 3.0, -0.0 }, c = 'x' }",
                r#"{"a":1,"b":[2.5,3,0],"c":"x"}"#.into(),
            ),
            (
                "{ [1] = 'a', [2] = 'b', [4] = 'd' }",
                format!("v: expected {keys}"),
            ),
            ("{ 1, a = 2 }", format!("v: expected {keys}")),
            ("{ [true] = 1 }", format!("v: expected {keys}")),
            ("{ [1.5] = 1 }", format!("v: expected {keys}")),
            (
                "{ a = { b = { 1, { [3] = 1 } } } }",
                format!("v.a.b[2]: expected {keys}"),
            ),
            (
                "{ a = 0/0 }",
                "v.a: expected a finite number, got NaN".into(),
            ),
            (
                "{ a = { 1, -1/0 } }",
                "v.a[2]: expected a finite number, got -inf".into(),
            ),
            ("{ a = 2^53 }", format!(r#"{{"a":{big}}}"#)),
            ("{ a = 2^63 }", r#"{"a":9.223372036854776e+18}"#.into()),
            ("{ a = -2^63 }", format!(r#"{{"a":{min}}}"#)),
            (
                "{ a = 'a\\255b' }",
                "v.a: expected UTF-8 text, got bytes that are not UTF-8".into(),
            ),
            (
                "{ ['\\255'] = 1, a = print }",
                "v: expected UTF-8 keys, got a key that is not UTF-8".into(),
            ),
            (
                "{ a = print }",
                "v.a: expected a JSON value, got a function".into(),
            ),
            (
                "{ a = coroutine.create(function() end) }",
                "v.a: expected a JSON value, got a thread".into(),
            ),
            // Of several faults, the one under the smallest key.
            (
                "{ z = 0/0, m = print, n = { 1, print } }",
                "v.m: expected a JSON value, got a function".into(),
            ),
            ("{ a = {} }", r#"{"a":{}}"#.into()),
            (
                "{ a = setmetatable({}, { __jsontype = 'array' }) }",
                r#"{"a":[]}"#.into(),
            ),
            (
                "{ a = setmetatable({}, { __jsontype = 'object' }) }",
                r#"{"a":{}}"#.into(),
            ),
            (
                "{ blockedBy = {}, metadata = {} }",
                r#"{"blockedBy":{},"metadata":{}}"#.into(),
            ),
            ("(function() local t = {}; t.t = t; return t end)()", cyclic),
            (
                "(function() local t = {}; for i = 1, 127 do t = { t } end; return t end)()",
                deep_ok,
            ),
            (
                "(function() local t = {}; for i = 1, 128 do t = { t } end; return t end)()",
                too_deep,
            ),
            ("'text'", r#""text""#.into()),
            ("42", "42".into()),
            ("true", "true".into()),
            ("nil", "null".into()),
        ];
        for (code, want) in cases {
            let v: LuaValue = lua.load(format!("return {code}")).eval().unwrap();
            let got = match value(&lua, &ctx, &v, "v", Empty::Object) {
                Ok(v) => serde_json::to_string(&v).unwrap(),
                Err(e) => e.to_string(),
            };
            assert_eq!(got, want, "for {code}");
        }
        // A call's arguments: fields named alone, id arrays read `{}` as `[]`.
        let cases = [
            ("{ blockedBy = {}, metadata = {} }", r#"{"blockedBy":[],"metadata":{}}"#),
            ("{ subject = print }", "subject: expected a JSON value, got a function"),
            ("{ metadata = { k = { 1, print } } }", "metadata.k[2]: expected a JSON value, got a function"),
            ("{ 1, print }", "arguments[2]: expected a JSON value, got a function"),
            ("{ 1, a = 2 }", "arguments: expected an array (keys 1..n) or an object (string keys), got a table with other keys"),
        ];
        for (code, want) in cases {
            let v: LuaValue = lua.load(format!("return {code}")).eval().unwrap();
            let got = match params(&lua, &ctx, &v) {
                Ok(v) => serde_json::to_string(&v).unwrap(),
                Err(e) => e.to_string(),
            };
            assert_eq!(got, want, "for {code}");
        }
    }
}
