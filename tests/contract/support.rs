//! Shared helpers for the contract tests.

use std::path::PathBuf;

use mlua::Lua;
use serde_json::Value;

/// `tests/fixtures/<name>`: the recorded behaviour of the TypeScript original (rpiv-todo).
/// The Lua specs read the same files (tests/lua/conformance_spec.lua runs them all).
pub fn conformance(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A fresh Lua 5.4 state with `rpiv_todo` and `rpiv_todo.core` in `package.preload`.
pub fn lua() -> Lua {
    let lua = Lua::new();
    rpiv_todo::preload(&lua).expect("preload");
    // The recorded UI strings are English: keep the developer's own locale (LANG,
    // ~/.config/rpiv-i18n) out of the tests. Tests of the locale chain pass their own env.
    lua.load(
        r#"require("rpiv_todo.i18n").set_env({ RPIV_TODO_LOCALE = false, LC_ALL = false,
            LC_MESSAGES = false, LANG = false, XDG_CONFIG_HOME = "/nonexistent/rpiv-todo-tests" })"#,
    )
    .exec()
    .expect("pin the test locale");
    lua
}

/// Run a chunk and return its value.
pub fn eval<T: mlua::FromLuaMulti>(lua: &Lua, code: &str) -> T {
    lua.load(code)
        .eval()
        .unwrap_or_else(|e| panic!("Lua error: {e}\n--- in ---\n{code}"))
}

/// A Lua value as JSON, the way a host's encoder would write it: the null light userdata
/// is `null`, a table with keys 1..n (or an empty one marked `__jsontype = "array"`) is an
/// array, any other table an object.
pub fn to_json(v: &mlua::Value) -> Value {
    use mlua::Value as L;
    match v {
        L::Nil => Value::Null,
        L::LightUserData(p) if p.0.is_null() => Value::Null,
        L::Boolean(b) => Value::Bool(*b),
        L::Integer(i) => Value::from(*i),
        L::Number(n) => serde_json::Number::from_f64(*n).map_or(Value::Null, Value::Number),
        L::String(s) => Value::String(s.to_str().expect("UTF-8").to_owned()),
        L::Table(t) => {
            let len = t.raw_len();
            let pairs: Vec<(mlua::Value, mlua::Value)> =
                t.pairs().map(|kv| kv.expect("pair")).collect();
            let marked = t
                .metatable()
                .and_then(|mt| mt.raw_get::<Option<String>>("__jsontype").ok().flatten())
                .is_some_and(|s| s == "array");
            if (len > 0 && pairs.len() == len) || (pairs.is_empty() && marked) {
                Value::Array(
                    (1..=len)
                        .map(|i| to_json(&t.raw_get(i).expect("item")))
                        .collect(),
                )
            } else {
                Value::Object(
                    pairs
                        .iter()
                        .map(|(k, v)| (k.to_string().expect("key"), to_json(v)))
                        .collect(),
                )
            }
        }
        other => panic!("not JSON: {other:?}"),
    }
}
