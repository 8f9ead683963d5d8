//! The snapshot as JSON: tasks in and out of `serde_json` values and the result envelope
//! written straight to text. Knows nothing of the reducer: it writes whatever text and
//! error a call produced.

use std::ffi::CStr;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::params::{self, check_nesting, kind};
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

/// The whole tool result, `{ content, details }`, as JSON text: the reply's `text`, and
/// `error` when the call was rejected.
pub fn write_result(
    out: &mut Vec<u8>,
    text: &str,
    error: Option<&str>,
    params: &Value,
    state: &State,
) {
    write_envelope(out, text, error, params, state.next_id, |out| {
        // Writing plain data to a Vec cannot fail: no map has non-string keys.
        let _ = serde_json::to_writer(out, &state.tasks);
    });
}

/// One field of a result's `details`: what a tool result carries beside its text.
#[derive(Clone, Copy)]
pub enum Detail<'a> {
    /// The call's `action`, echoed.
    Action,
    /// The call's arguments, echoed.
    Params,
    /// The list's tasks after the call.
    Tasks,
    /// The list's next id after the call.
    NextId(i64),
    /// Why the call was rejected.
    Error(&'a str),
}

impl Detail<'_> {
    /// The field's key.
    pub fn key(&self) -> &'static CStr {
        match self {
            Detail::Action => c"action",
            Detail::Params => c"params",
            Detail::Tasks => c"tasks",
            Detail::NextId(_) => c"nextId",
            Detail::Error(_) => c"error",
        }
    }
}

/// The one place that says what a result's `details` hold and in which order, for both
/// forms (this file's JSON text, the boundary's Lua tables): the echoed action and
/// arguments, the snapshot, and the reason when the call was rejected. Both wrap them as
/// `{ content = { { type = "text", text } }, details = { … } }`.
pub fn details(next_id: i64, error: Option<&str>) -> impl Iterator<Item = Detail<'_>> {
    [
        Detail::Action,
        Detail::Params,
        Detail::Tasks,
        Detail::NextId(next_id),
    ]
    .into_iter()
    .chain(error.map(Detail::Error))
}

/// The result's envelope as text, `{"content":[{"type":"text","text":…}],"details":{…}}`
/// (fields from `details`), with the tasks array written by `tasks` (fresh, or from
/// `TaskJson`'s cache).
fn write_envelope(
    out: &mut Vec<u8>,
    text: &str,
    error: Option<&str>,
    params: &Value,
    next_id: i64,
    tasks: impl FnOnce(&mut Vec<u8>),
) {
    // Writing plain data to a Vec cannot fail: no map has non-string keys.
    out.extend_from_slice(br#"{"content":[{"type":"text","text":"#);
    let _ = serde_json::to_writer(&mut *out, text);
    out.extend_from_slice(br#"}],"details":{"#);
    let mut tasks = Some(tasks);
    for (i, d) in details(next_id, error).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(d.key().to_bytes());
        out.extend_from_slice(b"\":");
        match d {
            Detail::Action => {
                let action = params.get("action").unwrap_or(&Value::Null);
                let _ = serde_json::to_writer(&mut *out, action);
            }
            Detail::Params => {
                let _ = serde_json::to_writer(&mut *out, params);
            }
            Detail::Tasks => {
                if let Some(write) = tasks.take() {
                    write(out);
                }
            }
            Detail::NextId(n) => {
                let _ = serde_json::to_writer(&mut *out, &n);
            }
            Detail::Error(e) => {
                let _ = serde_json::to_writer(&mut *out, e);
            }
        }
    }
    out.extend_from_slice(b"}}");
}

/// Each task's JSON text from the last result, reused while the task is unchanged: a call
/// changes at most one task (`clear` and `replace` all of them), so writing a result is
/// mostly copying bytes instead of escaping every string again. Index-aligned with the
/// list; a task counts as unchanged only when it is identical, key order included.
/// Escaping every string again was a large share of writing a result.
#[derive(Default)]
pub struct TaskJson {
    cached: Vec<(Task, Vec<u8>)>,
}

impl TaskJson {
    /// `[task, ...]` as JSON text, appended to `out`.
    pub fn write_tasks(&mut self, out: &mut Vec<u8>, tasks: &[Task]) {
        self.cached.truncate(tasks.len());
        out.push(b'[');
        for (i, t) in tasks.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            match self.cached.get_mut(i) {
                Some((c, bytes)) if identical(c, t) => out.extend_from_slice(bytes),
                slot => {
                    let mut bytes = Vec::with_capacity(128);
                    // Writing plain data to a Vec cannot fail: no map has non-string keys.
                    let _ = serde_json::to_writer(&mut bytes, t);
                    out.extend_from_slice(&bytes);
                    match slot {
                        Some(entry) => *entry = (t.clone(), bytes),
                        None => self.cached.push((t.clone(), bytes)),
                    }
                }
            }
        }
        out.push(b']');
    }

    /// The whole tool result, as `write_result` writes it, with the tasks from the cache.
    pub fn write_result(
        &mut self,
        out: &mut Vec<u8>,
        text: &str,
        error: Option<&str>,
        params: &Value,
        state: &State,
    ) {
        write_envelope(out, text, error, params, state.next_id, |out| {
            self.write_tasks(out, &state.tasks)
        });
    }
}

/// Equal and written the same: `Task`'s `==` compares maps without their key order.
fn identical(a: &Task, b: &Task) -> bool {
    fn same(x: &Value, y: &Value) -> bool {
        match (x, y) {
            (Value::Array(p), Value::Array(q)) => {
                p.len() == q.len() && p.iter().zip(q).all(|(a, b)| same(a, b))
            }
            (Value::Object(p), Value::Object(q)) => same_maps(p, q),
            // By bits: 0.0 == -0.0, yet they are written differently.
            (Value::Number(p), Value::Number(q)) => match (p.is_f64(), q.is_f64()) {
                (true, true) => p.as_f64().map(f64::to_bits) == q.as_f64().map(f64::to_bits),
                _ => p == q,
            },
            _ => x == y,
        }
    }
    fn same_maps(p: &Map<String, Value>, q: &Map<String, Value>) -> bool {
        p.len() == q.len()
            && p.iter()
                .zip(q)
                .all(|((k1, v1), (k2, v2))| k1 == k2 && same(v1, v2))
    }
    a.id == b.id
        && a.subject == b.subject
        && a.status == b.status
        && a.description == b.description
        && a.active_form == b.active_form
        && a.blocked_by == b.blocked_by
        && a.owner == b.owner
        && match (&a.metadata, &b.metadata) {
            (None, None) => true,
            (Some(p), Some(q)) => same_maps(p, q),
            _ => false,
        }
        && same_maps(&a.extra, &b.extra)
}

/// `check` run under a field's full name, which is built only when the check fails (a
/// snapshot's tasks are read on every load and replay; their names are for errors).
fn named<T>(name: impl FnOnce() -> String, check: impl Fn(&str) -> Result<T>) -> Result<T> {
    check("").or_else(|_| check(&name()))
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
    let id = named(
        || field("id"),
        |f| params::id(f, map.get("id").unwrap_or(&Value::Null)),
    )?;
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
                .map(|(i, d)| {
                    named(
                        || format!("{}[{}]", field("blockedBy"), i + 1),
                        |f| params::id(f, d),
                    )
                })
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
        Some(v @ Value::Object(m)) => {
            named(|| field("metadata"), |f| check_nesting(f, v))?;
            Some(m.clone())
        }
        Some(other) => return Err(Error::input(field("metadata"), "an object", kind(other))),
    };
    // Keys this model does not know are kept verbatim, under the same nesting rule.
    let mut extra = Map::new();
    for (k, v) in map
        .iter()
        .filter(|(k, _)| !crate::task::FIELDS.contains(&k.as_str()))
    {
        named(|| field(k), |f| check_nesting(f, v))?;
        extra.insert(k.clone(), v.clone());
    }
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
        None | Some(Value::Null) => tasks
            .iter()
            .map(|t| t.id)
            .max()
            .unwrap_or(0)
            .saturating_add(1),
        Some(n) => params::id("nextId", n)?,
    };
    State { tasks, next_id }.validate()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_snapshot_round_trips_with_unknown_keys_kept() {
        let v = json!({"tasks": [{"id": 1, "subject": "s", "status": "pending", "extraKey": "kept",
            "blockedBy": [2], "metadata": {"z": null}}, {"id": 2, "subject": "t", "status": "pending"}],
            "nextId": 3});
        let s = state_from_value(&v).unwrap();
        assert_eq!(serde_json::to_value(&s).unwrap(), v);
    }

    /// The cache must not take 0.0 and -0.0 for equal (it would keep writing 0.0).
    #[test]
    fn the_task_text_cache_tells_zero_from_negative_zero() {
        let mut cache = TaskJson::default();
        let mut state = state_from_value(&json!({"tasks": [{"id": 1, "subject": "s",
            "status": "pending", "metadata": {"x": 0.0}, "later": [0.0]}], "nextId": 2}))
        .unwrap();
        let mut out = Vec::new();
        cache.write_tasks(&mut out, &state.tasks);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"[{"id":1,"subject":"s","status":"pending","metadata":{"x":0.0},"later":[0.0]}]"#
        );
        let t = &mut state.tasks[0];
        t.metadata.as_mut().unwrap()["x"] = json!(-0.0);
        t.extra["later"] = json!([-0.0]);
        let mut out = Vec::new();
        cache.write_tasks(&mut out, &state.tasks);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"[{"id":1,"subject":"s","status":"pending","metadata":{"x":-0.0},"later":[-0.0]}]"#
        );
    }

    /// The envelope is written in one place: fresh and cached tasks give the same bytes,
    /// as hand-written here.
    #[test]
    fn the_envelope_is_the_same_text_with_fresh_or_cached_tasks() {
        let state = state_from_value(&json!({"tasks": [{"id": 1, "subject": "a\"b",
            "status": "pending", "metadata": {"k": -0.0}}], "nextId": 2}))
        .unwrap();
        let params = json!({"action": "list", "x": [1]});
        let want = r#"{"content":[{"type":"text","text":"Error: t"}],"details":{"action":"list","params":{"action":"list","x":[1]},"tasks":[{"id":1,"subject":"a\"b","status":"pending","metadata":{"k":-0.0}}],"nextId":2,"error":"Error: t"}}"#;
        let mut fresh = Vec::new();
        write_result(&mut fresh, "Error: t", Some("Error: t"), &params, &state);
        assert_eq!(String::from_utf8(fresh).unwrap(), want);
        let mut cache = TaskJson::default();
        for _ in 0..2 {
            let mut cached = Vec::new();
            cache.write_result(&mut cached, "Error: t", Some("Error: t"), &params, &state);
            assert_eq!(String::from_utf8(cached).unwrap(), want);
        }
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
        let task = |extra: Value| {
            let mut t = json!({"id": 1, "subject": "s", "status": "pending"});
            t.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            state_from_value(&json!({"tasks": [{"id": 2, "subject": "a", "status": "pending"}, t]}))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            task(json!({"id": "1"})),
            "tasks[2].id: expected an integer id, got string \"1\""
        );
        assert_eq!(
            task(json!({"blockedBy": [2, 1.5]})),
            "tasks[2].blockedBy[2]: expected an integer id, got number 1.5"
        );
        let mut deep = json!(1);
        for _ in 0..80 {
            deep = json!([deep]);
        }
        assert!(task(json!({"metadata": {"k": deep}})).starts_with("tasks[2].metadata"));
        assert!(task(json!({"notes": deep})).starts_with("tasks[2].notes"));
    }
}
