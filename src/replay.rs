//! Replay: the list is rebuilt from the conversation branch. The last todo tool result
//! carrying a snapshot wins, so the walk goes backwards and stops at the first match:
//! its cost does not grow with the length of the branch.

use std::borrow::Borrow;

use serde_json::Value;

use crate::json::state_from_value;
use crate::task::State;

/// The snapshot `{ tasks, nextId }` an entry carries, when it is a todo tool result:
/// `type == "message"`, `message.role == "toolResult"`, `message.toolName == "todo"`, and
/// `message.details` with an array `tasks` and a numeric `nextId`.
pub fn snapshot(entry: &Value) -> Option<&Value> {
    if entry.get("type")?.as_str()? != "message" {
        return None;
    }
    let message = entry.get("message")?;
    if message.get("role")?.as_str()? != "toolResult"
        || message.get("toolName")?.as_str()? != "todo"
    {
        return None;
    }
    let details = message.get("details")?;
    (details.get("tasks")?.is_array() && details.get("nextId")?.is_number()).then_some(details)
}

/// The list as of the last snapshot among `entries` (newest last); the empty list when
/// there is none. A snapshot whose tasks do not fit the task model is skipped like any
/// other malformed entry.
pub fn replay<I>(entries_newest_first: I) -> State
where
    I: IntoIterator,
    I::Item: Borrow<Value>,
{
    entries_newest_first
        .into_iter()
        .find_map(|e| snapshot(e.borrow()).and_then(|d| state_from_value(d).ok()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(details: Value) -> Value {
        json!({"type": "message", "message": {"role": "toolResult", "toolName": "todo", "details": details}})
    }

    #[test]
    fn the_last_valid_snapshot_wins() {
        let entries = [
            result(json!({"tasks": [{"id": 1, "subject": "a", "status": "pending"}], "nextId": 2})),
            result(json!({"tasks": [], "nextId": 7})),
            result(json!({"tasks": {}, "nextId": 9})),
            json!({"type": "message", "message": {"role": "toolResult", "toolName": "Todo",
                "details": {"tasks": [], "nextId": 77}}}),
        ];
        let s = replay(entries.iter().rev());
        assert_eq!(s.next_id, 7);
        assert!(s.tasks.is_empty());
    }

    #[test]
    fn no_snapshot_gives_the_empty_list() {
        let entries = [json!(5), json!({"type": "message"}), result(json!("text"))];
        assert_eq!(replay(entries.iter().rev()), State::default());
    }
}
