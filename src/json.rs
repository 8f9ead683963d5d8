//! The snapshot as JSON: tasks in and out of `serde_json` values, the result envelope
//! written straight to text, and equality as `JSON.stringify` sees it.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::params::{self, kind};
use crate::reducer::Reply;
use crate::task::{State, Status, Task};

impl Serialize for Status {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl Serialize for Task {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("id", &self.id)?;
        m.serialize_entry("subject", &self.subject)?;
        if let Some(d) = &self.description {
            m.serialize_entry("description", d)?;
        }
        if let Some(a) = &self.active_form {
            m.serialize_entry("activeForm", a)?;
        }
        m.serialize_entry("status", &self.status)?;
        if let Some(b) = &self.blocked_by {
            m.serialize_entry("blockedBy", b)?;
        }
        if let Some(o) = &self.owner {
            m.serialize_entry("owner", o)?;
        }
        if let Some(md) = &self.metadata {
            m.serialize_entry("metadata", md)?;
        }
        for (k, v) in &self.extra {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl Serialize for State {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("tasks", &self.tasks)?;
        m.serialize_entry("nextId", &self.next_id)?;
        m.end()
    }
}

/// The whole tool result, `{ content, details }`, as JSON text.
pub fn write_result(out: &mut Vec<u8>, reply: &Reply, params: &Value, state: &State) {
    #[derive(serde::Serialize)]
    struct Part<'a> {
        #[serde(rename = "type")]
        kind: &'static str,
        text: &'a str,
    }
    #[derive(serde::Serialize)]
    struct Details<'a> {
        action: &'a Value,
        params: &'a Value,
        tasks: &'a [Task],
        #[serde(rename = "nextId")]
        next_id: i64,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a str>,
    }
    #[derive(serde::Serialize)]
    struct Envelope<'a> {
        content: [Part<'a>; 1],
        details: Details<'a>,
    }
    let envelope = Envelope {
        content: [Part {
            kind: "text",
            text: &reply.text,
        }],
        details: Details {
            action: params.get("action").unwrap_or(&Value::Null),
            params,
            tasks: &state.tasks,
            next_id: state.next_id,
            error: reply.error.as_deref(),
        },
    };
    // Writing plain data to a Vec cannot fail: no map has non-string keys.
    let _ = serde_json::to_writer(out, &envelope);
}

/// A task from a snapshot (a replayed branch entry or a state handed over by a host).
pub fn task_from_value(v: &Value, at: usize) -> Result<Task> {
    let field = |name: &str| format!("tasks[{at}].{name}");
    let Value::Object(map) = v else {
        return Err(Error::input(format!("tasks[{at}]"), "an object", kind(v)));
    };
    let text = |name: &str| -> Result<Option<String>> {
        match map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(Error::input(field(name), "a string", kind(other))),
        }
    };
    let id = params::id(&field("id"), map.get("id").unwrap_or(&Value::Null))?;
    let subject =
        text("subject")?.ok_or_else(|| Error::input(field("subject"), "a string", "nothing"))?;
    let status = match map.get("status") {
        Some(Value::String(s)) => Status::parse(s),
        _ => None,
    }
    .ok_or_else(|| {
        Error::input(
            field("status"),
            "one of pending, in_progress, completed, deleted",
            map.get("status").map_or("nothing".into(), kind),
        )
    })?;
    let blocked_by = match map.get("blockedBy") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .enumerate()
                .map(|(i, d)| params::id(&format!("{}[{}]", field("blockedBy"), i + 1), d))
                .collect::<Result<Vec<_>>>()?,
        ),
        Some(other) => {
            return Err(Error::input(
                field("blockedBy"),
                "an array of integer ids",
                kind(other),
            ))
        }
    };
    let metadata = match map.get("metadata") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m.clone()),
        Some(other) => return Err(Error::input(field("metadata"), "an object", kind(other))),
    };
    const KNOWN: [&str; 8] = [
        "id",
        "subject",
        "description",
        "activeForm",
        "status",
        "blockedBy",
        "owner",
        "metadata",
    ];
    let extra = map
        .iter()
        .filter(|(k, _)| !KNOWN.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok(Task {
        id,
        subject,
        description: text("description")?,
        active_form: text("activeForm")?,
        status,
        blocked_by,
        owner: text("owner")?,
        metadata,
        extra,
    })
}

/// A whole snapshot `{ tasks, nextId }`.
pub fn state_from_value(v: &Value) -> Result<State> {
    let Value::Object(map) = v else {
        return Err(Error::input(
            "state",
            "an object with tasks and nextId",
            kind(v),
        ));
    };
    let tasks = match map.get("tasks") {
        None | Some(Value::Null) => Vec::new(),
        // As for blockedBy: an empty Lua table is an empty list.
        Some(Value::Object(m)) if m.is_empty() => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, t)| task_from_value(t, i + 1))
            .collect::<Result<Vec<_>>>()?,
        Some(other) => return Err(Error::input("tasks", "an array", kind(other))),
    };
    let next_id = match map.get("nextId") {
        None | Some(Value::Null) => tasks.iter().map(|t| t.id).max().unwrap_or(0) + 1,
        Some(n) => params::id("nextId", n)?,
    };
    Ok(State { tasks, next_id })
}

/// Equality as `JSON.stringify(a) === JSON.stringify(b)` decides it: object keys in
/// JavaScript's order (integer-like keys ascending, then the rest in insertion order),
/// numbers by value.
pub fn js_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| js_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => js_equal_maps(x, y),
        _ => a == b,
    }
}

pub fn js_equal_maps(x: &Map<String, Value>, y: &Map<String, Value>) -> bool {
    x.len() == y.len()
        && js_key_order(x)
            .zip(js_key_order(y))
            .all(|((k1, v1), (k2, v2))| k1 == k2 && js_equal(v1, v2))
}

/// A JavaScript array index: the canonical decimal form of an integer below 2^32 - 1.
fn array_index(key: &str) -> Option<u32> {
    let n: u32 = key.parse().ok()?;
    (n != u32::MAX && n.to_string() == key).then_some(n)
}

fn js_key_order(m: &Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
    let mut indexed: Vec<(u32, (&String, &Value))> = m
        .iter()
        .filter_map(|kv| array_index(kv.0).map(|n| (n, kv)))
        .collect();
    indexed.sort_by_key(|(n, _)| *n);
    indexed
        .into_iter()
        .map(|(_, kv)| kv)
        .chain(m.iter().filter(|(k, _)| array_index(k).is_none()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn js_equality_follows_stringify_key_order() {
        assert!(js_equal(&json!({"a": 1, "b": 2}), &json!({"a": 1, "b": 2})));
        assert!(!js_equal(
            &json!({"a": 1, "b": 2}),
            &json!({"b": 2, "a": 1})
        ));
        // Integer-like keys always come first, in ascending order.
        assert!(js_equal(
            &json!({"b": 1, "10": 2, "2": 3}),
            &json!({"2": 3, "b": 1, "10": 2})
        ));
        assert!(!js_equal(
            &json!({"b": 1, "01": 2}),
            &json!({"01": 2, "b": 1})
        ));
        assert!(js_equal(&json!([1, 2.0]), &json!([1.0, 2])));
    }

    #[test]
    fn a_snapshot_round_trips_with_unknown_keys_kept() {
        let v = json!({"tasks": [{"id": 1, "subject": "s", "status": "pending", "extraKey": "kept",
            "blockedBy": [2], "metadata": {"z": null}}], "nextId": 3});
        let s = state_from_value(&v).unwrap();
        assert_eq!(serde_json::to_value(&s).unwrap(), v);
    }

    #[test]
    fn a_malformed_snapshot_names_the_field() {
        let e = state_from_value(
            &json!({"tasks": [{"id": 1, "subject": "s", "status": "done"}], "nextId": 2}),
        );
        assert_eq!(
            e.unwrap_err().to_string(),
            "tasks[1].status: expected one of pending, in_progress, completed, deleted, got string \"done\""
        );
    }
}
