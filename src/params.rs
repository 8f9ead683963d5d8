//! The tool's arguments as typed values. Whatever the model wrote arrives here as a JSON
//! value (from a JSON string or converted from a Lua table) and is checked against the
//! schema before the reducer sees it: a wrong type is an error naming the field.
//!
//! Arithmetic on what was read is checked (`checked_*`, `saturating_*`, `unsigned_abs`):
//! the lint below refuses a plain operator, which could overflow on input.

#![deny(clippy::arithmetic_side_effects)]

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::task::{Id, Status};

/// What a call does: the `action` argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Add a task (`subject` required).
    Create,
    /// Change fields or the status of the task `id`.
    Update,
    /// Show the list (optionally filtered by `status`, tombstones with `includeDeleted`).
    List,
    /// Show one task with its dependencies.
    Get,
    /// Turn the task `id` into a tombstone.
    Delete,
    /// Drop every task and restart ids at 1.
    Clear,
}

impl Action {
    const ALL: [(&'static str, Action); 6] = [
        ("create", Action::Create),
        ("update", Action::Update),
        ("list", Action::List),
        ("get", Action::Get),
        ("delete", Action::Delete),
        ("clear", Action::Clear),
    ];

    /// The wire name (`"create"`, ...).
    pub fn as_str(self) -> &'static str {
        Action::ALL
            .iter()
            .find(|(_, a)| *a == self)
            .map_or("", |(name, _)| name)
    }
}

/// The arguments of one call. Absent and JSON `null` both read as "not given".
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params {
    /// `action`: what the call does (required; checked by the reducer).
    pub action: Option<Action>,
    /// `subject`: the task's short title.
    pub subject: Option<String>,
    /// `description`: detail and acceptance criteria.
    pub description: Option<String>,
    /// `activeForm`: the label shown while the task is in progress.
    pub active_form: Option<String>,
    /// `owner`: who works on the task.
    pub owner: Option<String>,
    /// `status`: the new status (update) or the filter (list).
    pub status: Option<Status>,
    /// `blockedBy`: the ids a new task waits for (create).
    pub blocked_by: Option<Vec<Id>>,
    /// `addBlockedBy`: ids to add to the task's dependencies (update).
    pub add_blocked_by: Option<Vec<Id>>,
    /// `removeBlockedBy`: ids to drop from the task's dependencies (update).
    pub remove_blocked_by: Option<Vec<Id>>,
    /// `metadata`: free-form data; on update merged key by key, JSON null deleting a key.
    pub metadata: Option<Map<String, Value>>,
    /// `id`: the task an update, get or delete is about.
    pub id: Option<Id>,
    /// `includeDeleted`: whether list shows tombstones too.
    pub include_deleted: Option<bool>,
    /// `tasks`: several creates or updates in one call (this project's extension), each
    /// item the fields of one call with the call's `action`. Applied in order, all or
    /// nothing.
    pub tasks: Option<Vec<Params>>,
}

/// The most items one `tasks` batch may hold.
pub const MAX_BATCH: usize = 100;

/// What `tasks` must be.
const TASKS_EXPECTED: &str = "a non-empty array of at most 100 tasks";

pub use crate::task::MAX_SAFE_INTEGER;

impl Params {
    /// Check `value` against the schema. Unknown keys are allowed (and echoed in
    /// `details.params`); known keys must have the schema's type. Fields are checked in
    /// one fixed order (`ORDER`, then unknown keys by name), whatever order the arguments
    /// came in, so a call with two bad fields gets the same error from Lua tables and
    /// from JSON text.
    pub fn from_value(value: &Value) -> Result<Params> {
        let Value::Object(map) = value else {
            return Err(Error::input("arguments", "an object", kind(value)));
        };
        let found = Found::of(map);
        let action = match found.get("action") {
            Some(v) => action(v)?,
            None => {
                return Err(Error::input(
                    "action",
                    "one of create, update, list, get, delete, clear",
                    "nothing",
                ))
            }
        };
        let mut p = fields(map, &found, "")?;
        p.action = Some(action);
        if let Some(v) = found.get("tasks") {
            p.tasks = Some(tasks(v, action)?);
        }
        Ok(p)
    }
}

/// The known fields of one argument object, found in one pass over it (instead of a
/// hashed lookup, SipHash, per field).
struct Found<'a>([Option<&'a Value>; ORDER.len()]);

impl<'a> Found<'a> {
    fn of(map: &'a Map<String, Value>) -> Found<'a> {
        let mut found: [Option<&Value>; ORDER.len()] = [None; ORDER.len()];
        for (k, v) in map {
            if let Some(i) = ORDER.iter().position(|o| o == k) {
                found[i] = Some(v);
            }
        }
        Found(found)
    }

    /// The field's value; `null` reads as absent.
    fn get(&self, key: &str) -> Option<&'a Value> {
        let i = ORDER.iter().position(|o| *o == key)?;
        self.0[i].filter(|v| !v.is_null())
    }
}

/// Every field but `action` and `tasks`, checked in `ORDER`; an error names the field
/// after `prefix` (`tasks[2].` for an item of a batch).
fn fields(map: &Map<String, Value>, found: &Found, prefix: &str) -> Result<Params> {
    let name = |key: &str| format!("{prefix}{key}");
    let mut p = Params::default();
    if let Some(v) = found.get("id") {
        p.id = Some(id(&name("id"), v)?);
    }
    let text = |key: &str| found.get(key).map(|v| string(&name(key), v)).transpose();
    p.subject = text("subject")?;
    p.description = text("description")?;
    p.active_form = text("activeForm")?;
    p.owner = text("owner")?;
    if let Some(v) = found.get("status") {
        p.status = Some(status(&name("status"), v)?);
    }
    let id_list = |key: &str| found.get(key).map(|v| ids(&name(key), v)).transpose();
    p.blocked_by = id_list("blockedBy")?;
    p.add_blocked_by = id_list("addBlockedBy")?;
    p.remove_blocked_by = id_list("removeBlockedBy")?;
    match found.get("includeDeleted") {
        None => {}
        Some(Value::Bool(b)) => p.include_deleted = Some(*b),
        Some(v) => return Err(Error::input(name("includeDeleted"), "a boolean", kind(v))),
    }
    match found.get("metadata") {
        None => {}
        Some(v @ Value::Object(m)) => {
            check_nesting(&name("metadata"), v)?;
            p.metadata = Some(m.clone());
        }
        Some(v) => return Err(Error::input(name("metadata"), "an object", kind(v))),
    }
    // Unknown keys are echoed in the snapshot's entry: they obey the same nesting rule,
    // so that whatever was accepted can be read back.
    let mut unknown: Vec<(&String, &Value)> = map
        .iter()
        .filter(|(k, v)| (v.is_array() || v.is_object()) && !ORDER.contains(&k.as_str()))
        .collect();
    if !unknown.is_empty() {
        unknown.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (k, v) in unknown {
            check_nesting(&name(k), v)?;
        }
    }
    Ok(p)
}

/// The items of `tasks`, each read like the arguments of one call with the call's
/// `action` (which an item may not give again, nor a `tasks` of its own).
fn tasks(v: &Value, action: Action) -> Result<Vec<Params>> {
    let Value::Array(items) = v else {
        return Err(Error::input("tasks", TASKS_EXPECTED, kind(v)));
    };
    if items.is_empty() {
        return Err(Error::input("tasks", TASKS_EXPECTED, "an empty array"));
    }
    if items.len() > MAX_BATCH {
        return Err(Error::input(
            "tasks",
            TASKS_EXPECTED,
            format!("an array of {} items", items.len()),
        ));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let prefix = format!("tasks[{}].", i.saturating_add(1));
        let Value::Object(map) = item else {
            return Err(Error::input(
                format!("tasks[{}]", i.saturating_add(1)),
                "an object with the fields of one task",
                kind(item),
            ));
        };
        let found = Found::of(map);
        for (key, expected) in [
            ("action", "nothing: the call's action applies to every item"),
            ("tasks", "nothing: tasks do not nest"),
        ] {
            if let Some(v) = found.get(key) {
                return Err(Error::input(format!("{prefix}{key}"), expected, kind(v)));
            }
        }
        let mut p = fields(map, &found, &prefix)?;
        p.action = Some(action);
        out.push(p);
    }
    Ok(out)
}

/// The fields `Params::from_value` reads, in the order it checks them.
pub const ORDER: [&str; 13] = [
    "action",
    "id",
    "subject",
    "description",
    "activeForm",
    "owner",
    "status",
    "blockedBy",
    "addBlockedBy",
    "removeBlockedBy",
    "includeDeleted",
    "metadata",
    "tasks",
];

/// The deepest nesting of a value the list stores (an argument's value, metadata, a
/// snapshot's task field), counted from that value: `{}` is one level, `{"a": {}}` two.
/// The same rule holds wherever a value enters (arguments as tables or JSON text, a
/// snapshot a host hands over, replay), so whatever the tool accepted and wrote, it reads
/// back. JSON text itself may nest up to 128 levels (serde_json's limit), which leaves
/// room for the envelope and a branch entry around a value at this limit.
pub const MAX_NESTING: usize = 64;

/// What `check_nesting` says a value should be.
pub const TOO_DEEP: &str = "nesting at most 64 levels deep";

/// Refuse a value nested deeper than `MAX_NESTING`, naming `field`.
pub fn check_nesting(field: &str, v: &Value) -> Result<()> {
    fn deeper_than(v: &Value, levels: usize) -> bool {
        match v {
            Value::Array(items) => match levels.checked_sub(1) {
                Some(below) => items.iter().any(|x| deeper_than(x, below)),
                None => true,
            },
            Value::Object(map) => match levels.checked_sub(1) {
                Some(below) => map.values().any(|x| deeper_than(x, below)),
                None => true,
            },
            _ => false,
        }
    }
    if deeper_than(v, MAX_NESTING) {
        return Err(Error::input(field, TOO_DEEP, "deeper nesting"));
    }
    Ok(())
}

/// How a value is described in an error: its JSON type, with the value when short.
pub fn kind(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) if s.chars().count() <= 40 => format!("string {s:?}"),
        Value::String(_) => "a long string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

fn action(v: &Value) -> Result<Action> {
    const EXPECTED: &str = "one of create, update, list, get, delete, clear";
    let name = v
        .as_str()
        .ok_or_else(|| Error::input("action", EXPECTED, kind(v)))?;
    Action::ALL
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, a)| *a)
        .ok_or_else(|| Error::input("action", EXPECTED, kind(v)))
}

fn status(field: &str, v: &Value) -> Result<Status> {
    const EXPECTED: &str = "one of pending, in_progress, completed, deleted";
    v.as_str()
        .and_then(Status::parse)
        .ok_or_else(|| Error::input(field, EXPECTED, kind(v)))
}

fn string(field: &str, v: &Value) -> Result<String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        _ => Err(Error::input(field, "a string", kind(v))),
    }
}

/// A task id: a JSON number with an integral value a double holds exactly.
pub fn id(field: &str, v: &Value) -> Result<Id> {
    const EXPECTED: &str = "an integer id";
    let Value::Number(n) = v else {
        return Err(Error::input(field, EXPECTED, kind(v)));
    };
    let id = if let Some(i) = n.as_i64() {
        Some(i)
    } else {
        n.as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER as f64)
            .map(|f| f as i64)
    };
    // `unsigned_abs`: the most negative i64 has no `abs` (it overflowed, and passed).
    match id {
        Some(i) if i.unsigned_abs() <= MAX_SAFE_INTEGER.unsigned_abs() => Ok(i),
        _ => Err(Error::input(field, EXPECTED, kind(v))),
    }
}

fn ids(field: &str, v: &Value) -> Result<Vec<Id>> {
    let Value::Array(items) = v else {
        return Err(Error::input(field, "an array of integer ids", kind(v)));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| id(&format!("{field}[{}]", i.saturating_add(1)), item))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(v: Value) -> String {
        Params::from_value(&v).unwrap_err().to_string()
    }

    #[test]
    fn a_well_formed_call_reads_every_field() {
        let p = Params::from_value(&json!({
            "action": "update", "id": 3, "subject": "s", "description": "d", "activeForm": "a",
            "owner": "o", "status": "in_progress", "addBlockedBy": [1, 2.0], "removeBlockedBy": [],
            "metadata": {"k": 1}, "includeDeleted": false, "unknown": {"kept": true}
        }))
        .unwrap();
        assert_eq!(p.action, Some(Action::Update));
        assert_eq!(p.id, Some(3));
        assert_eq!(p.status, Some(Status::InProgress));
        assert_eq!(p.add_blocked_by, Some(vec![1, 2]));
        assert_eq!(p.remove_blocked_by, Some(vec![]));
        assert_eq!(p.include_deleted, Some(false));
    }

    #[test]
    fn null_reads_as_absent() {
        let p = Params::from_value(&json!({"action": "list", "status": null, "id": null})).unwrap();
        assert_eq!(p.status, None);
        assert_eq!(p.id, None);
    }

    #[test]
    fn malformed_arguments_name_the_field_and_what_was_expected() {
        let cases = [
            (json!([]), "arguments: expected an object, got an array"),
            (json!({}), "action: expected one of create, update, list, get, delete, clear, got nothing"),
            (json!({"action": "frob"}), "action: expected one of create, update, list, get, delete, clear, got string \"frob\""),
            (json!({"action": 1}), "action: expected one of create, update, list, get, delete, clear, got number 1"),
            (json!({"action": "get", "id": 1.5}), "id: expected an integer id, got number 1.5"),
            (json!({"action": "get", "id": "1"}), "id: expected an integer id, got string \"1\""),
            (json!({"action": "get", "id": 1e300}), "id: expected an integer id, got number 1e+300"),
            (json!({"action": "get", "id": 9007199254740992u64}), "id: expected an integer id, got number 9007199254740992"),
            // The most negative i64 has no `abs`: it overflowed and passed as an id.
            (json!({"action": "get", "id": i64::MIN}), "id: expected an integer id, got number -9223372036854775808"),
            (json!({"action": "get", "id": -9007199254740992i64}), "id: expected an integer id, got number -9007199254740992"),
            (json!({"action": "create", "subject": 5}), "subject: expected a string, got number 5"),
            (json!({"action": "update", "status": "done"}), "status: expected one of pending, in_progress, completed, deleted, got string \"done\""),
            (json!({"action": "create", "blockedBy": 1}), "blockedBy: expected an array of integer ids, got number 1"),
            (json!({"action": "update", "addBlockedBy": [1, "2"]}), "addBlockedBy[2]: expected an integer id, got string \"2\""),
            (json!({"action": "create", "metadata": [1]}), "metadata: expected an object, got an array"),
            (json!({"action": "list", "includeDeleted": "yes"}), "includeDeleted: expected a boolean, got string \"yes\""),
        ];
        for (input, want) in cases {
            assert_eq!(err(input.clone()), want, "for {input}");
        }
    }

    #[test]
    fn each_item_of_tasks_is_read_like_one_call_with_the_call_s_action() {
        let p = Params::from_value(&json!({
            "action": "update",
            "tasks": [{"id": 1, "status": "completed"}, {"id": 2.0, "status": null, "addBlockedBy": [1]}],
        }))
        .unwrap();
        let items = p.tasks.unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].action, Some(Action::Update));
        assert_eq!(
            (items[0].id, items[0].status),
            (Some(1), Some(Status::Completed))
        );
        assert_eq!((items[1].id, items[1].status), (Some(2), None));
        assert_eq!(items[1].add_blocked_by, Some(vec![1]));
        assert_eq!(items[1].tasks, None);
        // Fields are checked in ORDER, the call's before its items'.
        assert_eq!(
            err(json!({"action": "create", "owner": 1, "tasks": [{"subject": 2}]})),
            "owner: expected a string, got number 1"
        );
        assert_eq!(
            err(
                json!({"action": "create", "tasks": [{"subject": "a"}, {"metadata": {"k": 1}, "owner": 3}]})
            ),
            "tasks[2].owner: expected a string, got number 3"
        );
        assert_eq!(
            err(json!({"action": "create", "tasks": [{"subject": "a", "includeDeleted": 1}]})),
            "tasks[1].includeDeleted: expected a boolean, got number 1"
        );
        // Absent: no batch.
        assert_eq!(
            Params::from_value(&json!({"action": "list"}))
                .unwrap()
                .tasks,
            None
        );
    }

    #[test]
    fn an_item_obeys_the_nesting_bound_like_the_call() {
        // One level past the bound: 65 arrays.
        let mut deep = json!(1);
        for _ in 0..=MAX_NESTING {
            deep = json!([deep]);
        }
        assert_eq!(
            err(
                json!({"action": "create", "tasks": [{"subject": "a"}, {"subject": "b", "extra": deep.clone()}]})
            ),
            "tasks[2].extra: expected nesting at most 64 levels deep, got deeper nesting"
        );
        assert_eq!(
            err(json!({"action": "create", "tasks": [{"subject": "a", "metadata": {"k": deep}}]})),
            "tasks[1].metadata: expected nesting at most 64 levels deep, got deeper nesting"
        );
    }

    #[test]
    fn negative_and_zero_ids_are_integers_the_reducer_reports_as_not_found() {
        let p = Params::from_value(&json!({"action": "get", "id": -1})).unwrap();
        assert_eq!(p.id, Some(-1));
    }
}
