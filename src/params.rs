//! The tool's arguments as typed values. Whatever the model wrote arrives here as a JSON
//! value (from a JSON string or converted from a Lua table) and is checked against the
//! schema before the reducer sees it: a wrong type is an error naming the field.

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::task::{Id, Status};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Create,
    Update,
    List,
    Get,
    Delete,
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
    pub action: Option<Action>,
    pub subject: Option<String>,
    pub description: Option<String>,
    pub active_form: Option<String>,
    pub owner: Option<String>,
    pub status: Option<Status>,
    pub blocked_by: Option<Vec<Id>>,
    pub add_blocked_by: Option<Vec<Id>>,
    pub remove_blocked_by: Option<Vec<Id>>,
    pub metadata: Option<Map<String, Value>>,
    pub id: Option<Id>,
    pub include_deleted: Option<bool>,
}

/// The largest integer a JSON number (an IEEE double) holds exactly.
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

impl Params {
    /// Check `value` against the schema. Unknown keys are allowed (and echoed in
    /// `details.params`); known keys must have the schema's type.
    pub fn from_value(value: &Value) -> Result<Params> {
        let Value::Object(map) = value else {
            return Err(Error::input("arguments", "an object", kind(value)));
        };
        let mut p = Params::default();
        for (key, v) in map {
            if v.is_null() {
                continue;
            }
            match key.as_str() {
                "action" => p.action = Some(action(v)?),
                "subject" => p.subject = Some(string("subject", v)?),
                "description" => p.description = Some(string("description", v)?),
                "activeForm" => p.active_form = Some(string("activeForm", v)?),
                "owner" => p.owner = Some(string("owner", v)?),
                "status" => p.status = Some(status(v)?),
                "blockedBy" => p.blocked_by = Some(ids("blockedBy", v)?),
                "addBlockedBy" => p.add_blocked_by = Some(ids("addBlockedBy", v)?),
                "removeBlockedBy" => p.remove_blocked_by = Some(ids("removeBlockedBy", v)?),
                "metadata" => match v {
                    Value::Object(m) => p.metadata = Some(m.clone()),
                    _ => return Err(Error::input("metadata", "an object", kind(v))),
                },
                "id" => p.id = Some(id("id", v)?),
                "includeDeleted" => match v {
                    Value::Bool(b) => p.include_deleted = Some(*b),
                    _ => return Err(Error::input("includeDeleted", "a boolean", kind(v))),
                },
                _ => {}
            }
        }
        if p.action.is_none() {
            return Err(Error::input(
                "action",
                "one of create, update, list, get, delete, clear",
                "nothing",
            ));
        }
        Ok(p)
    }
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

fn status(v: &Value) -> Result<Status> {
    const EXPECTED: &str = "one of pending, in_progress, completed, deleted";
    v.as_str()
        .and_then(Status::parse)
        .ok_or_else(|| Error::input("status", EXPECTED, kind(v)))
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
    match id {
        Some(i) if i.abs() <= MAX_SAFE_INTEGER => Ok(i),
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
        .map(|(i, item)| id(&format!("{field}[{}]", i + 1), item))
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
    fn negative_and_zero_ids_are_integers_the_reducer_reports_as_not_found() {
        let p = Params::from_value(&json!({"action": "get", "id": -1})).unwrap();
        assert_eq!(p.id, Some(-1));
    }
}
