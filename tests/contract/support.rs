//! Shared helpers for the contract tests.

use std::path::PathBuf;

use mlua::Lua;
use serde_json::Value;

/// `../shared/conformance/<name>` relative to the crate root.
pub fn conformance(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance").join(name)
}

/// Every line of a conformance JSONL file, parsed.
pub fn jsonl(name: &str) -> Vec<Value> {
    let path = conformance(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("conformance line is JSON"))
        .collect()
}

/// A fresh Lua 5.4 state with `rpiv_todo` and `rpiv_todo.core` in `package.preload`.
pub fn lua() -> Lua {
    let lua = Lua::new();
    rpiv_todo::preload(&lua).expect("preload");
    lua
}

/// Run a chunk and return its value.
pub fn eval<T: mlua::FromLuaMulti>(lua: &Lua, code: &str) -> T {
    lua.load(code)
        .eval()
        .unwrap_or_else(|e| panic!("Lua error: {e}\n--- in ---\n{code}"))
}
