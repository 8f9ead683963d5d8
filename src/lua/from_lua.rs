//! Lua values to JSON values, for arguments the model wrote and snapshots a host hands
//! over. Everything that JSON cannot say is an error naming where it was found: a
//! function, a non-UTF-8 string, NaN, a table with mixed or sparse keys, nesting deeper
//! than `MAX_DEPTH` (which also catches cyclic tables).

use mlua::{Table, Value as LuaValue};
use serde_json::{Map, Number, Value};

use super::Ctx;
use crate::error::{Error, Result};
use crate::params::MAX_SAFE_INTEGER;

/// Deepest nesting accepted from Lua; serde_json stops at 128 on the JSON path.
pub const MAX_DEPTH: usize = 64;

/// What an empty table means where it is found.
#[derive(Clone, Copy, PartialEq)]
pub enum Empty {
    Array,
    Object,
}

/// The names under which the tool's id arrays arrive: an empty table there is `[]`.
const ARRAY_FIELDS: [&str; 3] = ["blockedBy", "addBlockedBy", "removeBlockedBy"];

/// Convert the top level of a call's arguments.
pub fn params(ctx: &Ctx, v: &LuaValue) -> Result<Value> {
    match v {
        LuaValue::Table(t) => table(ctx, t, "arguments", 0, Empty::Object, true),
        other => Err(Error::input(
            "arguments",
            "a table or a JSON string",
            type_name(other),
        )),
    }
}

/// Convert any value; `path` names it in errors.
pub fn value(ctx: &Ctx, v: &LuaValue, path: &str, depth: usize, empty: Empty) -> Result<Value> {
    Ok(match v {
        LuaValue::Nil => Value::Null,
        LuaValue::Boolean(b) => Value::Bool(*b),
        LuaValue::Integer(i) => Value::from(*i),
        LuaValue::Number(n) => {
            number(*n).ok_or_else(|| Error::input(path, "a finite number", n.to_string()))?
        }
        LuaValue::String(s) => Value::String(
            s.to_str()
                .map_err(|_| Error::input(path, "UTF-8 text", "bytes that are not UTF-8"))?
                .to_owned(),
        ),
        LuaValue::Table(t) => table(ctx, t, path, depth, empty, false)?,
        v if ctx.is_null(v) => Value::Null,
        other => return Err(Error::input(path, "a JSON value", type_name(other))),
    })
}

/// An integral float within the exact range is an integer (Lua 5.4 JSON decoders give
/// `1.0` for `1`); other finite floats stay floats; NaN and infinities have no JSON form.
fn number(n: f64) -> Option<Value> {
    if n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER as f64 {
        Some(Value::from(n as i64))
    } else {
        Number::from_f64(n).map(Value::Number)
    }
}

fn type_name(v: &LuaValue) -> String {
    match v {
        LuaValue::LightUserData(_) => "a light userdata that is not null".into(),
        other => format!("a {}", other.type_name()),
    }
}

fn table(ctx: &Ctx, t: &Table, path: &str, depth: usize, empty: Empty, top: bool) -> Result<Value> {
    if depth >= MAX_DEPTH {
        return Err(Error::input(
            path,
            "nesting at most 64 levels deep (a cyclic table?)",
            "deeper nesting",
        ));
    }
    let len = t.raw_len();
    let mut count = 0usize;
    let mut string_keys = 0usize;
    let mut bad_key = false;
    // First pass: decide array or object from the keys alone.
    let _ = t.for_each(|k: LuaValue, _: LuaValue| {
        count += 1;
        match k {
            LuaValue::String(_) => string_keys += 1,
            LuaValue::Integer(i) if i >= 1 && (i as usize) <= len => {}
            LuaValue::Number(n) if n.fract() == 0.0 && n >= 1.0 && (n as usize) <= len => {}
            _ => bad_key = true,
        }
        Ok(())
    });
    let is_array = match (count, string_keys) {
        (0, _) => empty == Empty::Array || ctx.is_array_marked(t),
        (_, 0) => !bad_key && count == len,
        _ => false,
    };
    if is_array {
        let mut items = Vec::with_capacity(len);
        for i in 1..=len {
            let v: LuaValue = t
                .raw_get(i)
                .map_err(|e| Error::input(path, "a readable table", e.to_string()))?;
            items.push(value(
                ctx,
                &v,
                &format!("{path}[{i}]"),
                depth + 1,
                Empty::Object,
            )?);
        }
        return Ok(Value::Array(items));
    }
    if string_keys != count {
        return Err(Error::input(
            path,
            "an array (keys 1..n) or an object (string keys)",
            "a table with other keys",
        ));
    }
    let mut entries: Vec<(String, LuaValue)> = Vec::with_capacity(count);
    let mut not_utf8 = false;
    let _ = t.for_each(|k: mlua::String, v: LuaValue| {
        match k.to_str() {
            Ok(key) => entries.push((key.to_owned(), v)),
            Err(_) => not_utf8 = true,
        }
        Ok(())
    });
    if not_utf8 {
        return Err(Error::input(path, "UTF-8 keys", "a key that is not UTF-8"));
    }
    // A Lua table has no key order; sorting makes the result (and the "No change"
    // check, which compares key order as JSON.stringify does) deterministic.
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut map = Map::with_capacity(entries.len());
    for (key, v) in entries {
        let child = if top {
            key.clone()
        } else {
            format!("{path}.{key}")
        };
        let hint = if top && ARRAY_FIELDS.contains(&key.as_str()) {
            Empty::Array
        } else {
            Empty::Object
        };
        let v = value(ctx, &v, &child, depth + 1, hint)?;
        map.insert(key, v);
    }
    Ok(Value::Object(map))
}
