//! Replay: the list is rebuilt from the conversation branch. The last todo tool result
//! carrying a snapshot wins, so the walk goes backwards and stops at the first match:
//! its cost does not grow with the length of the branch.

use std::borrow::Borrow;

use serde_json::Value;

use crate::json::state_from_value;
use crate::task::State;

/// What makes an entry a todo tool result, checked in this order by every reader (JSON
/// values here, Lua tables in `lua/rpiv_todo/native/replay_walk.lua`): `entry[TYPE] == MESSAGE`, and
/// in `entry[MESSAGE]`: `[ROLE] == TOOL_RESULT`, `[TOOL_NAME] == TODO`, and `[DETAILS]`
/// holding an array `[TASKS]` and a number `[NEXT_ID]`.
pub mod rule {
    /// The entry's kind key.
    pub const TYPE: &str = "type";
    /// The kind of a message entry, also the key of its message.
    pub const MESSAGE: &str = "message";
    /// The message's role key.
    pub const ROLE: &str = "role";
    /// The role of a tool result.
    pub const TOOL_RESULT: &str = "toolResult";
    /// The key naming the tool that produced the result.
    pub const TOOL_NAME: &str = "toolName";
    /// This tool's name.
    pub const TODO: &str = "todo";
    /// The key of the result's snapshot.
    pub const DETAILS: &str = "details";
    /// The snapshot's task array.
    pub const TASKS: &str = "tasks";
    /// The snapshot's next id.
    pub const NEXT_ID: &str = "nextId";
}

/// The snapshot `{ tasks, nextId }` an entry carries, when it is a todo tool result (see
/// `rule`).
pub fn snapshot(entry: &Value) -> Option<&Value> {
    use rule::*;
    if entry.get(TYPE)?.as_str()? != MESSAGE {
        return None;
    }
    let message = entry.get(MESSAGE)?;
    if message.get(ROLE)?.as_str()? != TOOL_RESULT || message.get(TOOL_NAME)?.as_str()? != TODO {
        return None;
    }
    let details = message.get(DETAILS)?;
    (details.get(TASKS)?.is_array() && details.get(NEXT_ID)?.is_number()).then_some(details)
}

/// The state a winning entry's `tasks` and `nextId` make (the rest of `details` is not
/// read: the echoed arguments, say, cannot make a good snapshot fail).
pub fn state_from_parts(tasks: Value, next_id: Value) -> Option<State> {
    let mut map = serde_json::Map::with_capacity(2);
    map.insert(rule::TASKS.into(), tasks);
    map.insert(rule::NEXT_ID.into(), next_id);
    state_from_value(&Value::Object(map)).ok()
}

/// The state an entry's JSON text carries when it is a todo tool result (see `rule`),
/// reading only what the rule reads: the entry's kind, the message's role and tool name,
/// and the snapshot's `tasks` and `nextId`. Everything else is skipped unparsed, so a
/// rejected call's echoed arguments nested past any limit cannot make the entry fail (and
/// lose the list it carries).
pub fn state_from_text(entry: &str) -> Option<State> {
    use rule::*;
    use serde_json::value::RawValue;
    use std::collections::HashMap;
    // Keys as JSON objects have them (the last of a repeated key wins, as in `Value`);
    // the values left as text until they are needed.
    type Fields<'a> = HashMap<String, &'a RawValue>;
    fn fields(text: &str) -> Option<Fields<'_>> {
        serde_json::from_str(text).ok()
    }
    fn text(v: Option<&&RawValue>) -> Option<String> {
        serde_json::from_str(v?.get()).ok()
    }
    let entry = fields(entry)?;
    if text(entry.get(TYPE))? != MESSAGE {
        return None;
    }
    let message = fields(entry.get(MESSAGE)?.get())?;
    if text(message.get(ROLE))? != TOOL_RESULT || text(message.get(TOOL_NAME))? != TODO {
        return None;
    }
    let details = fields(message.get(DETAILS)?.get())?;
    let tasks: Value = serde_json::from_str(details.get(TASKS)?.get()).ok()?;
    let next_id: Value = serde_json::from_str(details.get(NEXT_ID)?.get()).ok()?;
    if !tasks.is_array() || !next_id.is_number() {
        return None;
    }
    state_from_parts(tasks, next_id)
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

/// Could tool calls turn list `a` into list `b` without a `clear`? Every task of `a` is in
/// `b` (a task leaves a list only through clear: a deleted one stays, as a tombstone) with
/// a status the state machine reaches from its own ([`Status::can_move_to`]), and `b`'s
/// next id is not smaller.
///
/// [`Status::can_move_to`]: crate::task::Status::can_move_to
pub fn reaches(a: &State, b: &State) -> bool {
    if b.next_id < a.next_id {
        return false;
    }
    let index = b.index();
    a.tasks.iter().all(|t| {
        index
            .get(t.id)
            .is_some_and(|to| t.status.can_move_to(to.status))
    })
}

/// Is a compacted branch's list (`branch`) a reason to replace the list a session holds?
/// Yes when it is the same list, or when it is provably newer: calls can turn the held list
/// into it and none can turn it back (more tasks or a larger next id, or a task further
/// along). One that could be either (only pending ⇄ in_progress and texts differ), or an
/// older one, leaves the held list alone: the session has run every call the branch holds.
pub fn newer(held: &State, branch: &State) -> bool {
    held == branch || (reaches(held, branch) && !reaches(branch, held))
}

#[cfg(test)]
mod tests {

    fn state(tasks: &[(i64, &str)], next_id: i64) -> State {
        let tasks = tasks
            .iter()
            .map(|(id, status)| {
                let mut t = crate::task::Task::new(*id, format!("t{id}"));
                t.status = crate::task::Status::parse(status).unwrap();
                t
            })
            .collect();
        State { tasks, next_id }
    }

    #[test]
    fn a_branch_is_newer_only_when_calls_lead_there_and_not_back() {
        let held = state(&[(1, "pending"), (2, "in_progress")], 3);
        // The same list: taken (the replay changes nothing).
        assert!(newer(&held, &held.clone()));
        // More tasks, a task completed, one deleted: newer.
        assert!(newer(
            &held,
            &state(&[(1, "completed"), (2, "in_progress"), (3, "pending")], 4)
        ));
        assert!(newer(
            &held,
            &state(&[(1, "deleted"), (2, "in_progress")], 3)
        ));
        // Only pending ⇄ in_progress differs: either could be newer, so held.
        assert!(!newer(
            &held,
            &state(&[(1, "in_progress"), (2, "pending")], 3)
        ));
        // Older: fewer tasks, a smaller next id, or a completed task open again.
        assert!(!newer(&held, &state(&[(1, "pending")], 2)));
        let done = state(&[(1, "completed"), (2, "in_progress")], 3);
        assert!(!newer(&done, &held));
        // A task missing from the branch (a clear in between): not reachable.
        assert!(!newer(
            &held,
            &state(&[(2, "completed"), (3, "pending")], 4)
        ));
        assert!(reaches(&held, &held));
    }

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

    /// A rejected call echoes its arguments; nested past the parser's limit they must not
    /// make the whole entry unreadable.
    #[test]
    fn an_entry_is_read_for_its_snapshot_alone() {
        let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
        let text = format!(
            r#"{{"type":"message","message":{{"role":"toolResult","toolName":"todo","content":[],
            "details":{{"action":"update","params":{{"metadata":{deep}}},"error":"Error: x",
            "tasks":[{{"id":1,"subject":"kept","status":"pending"}}],"nextId":2}}}},"extra":{deep}}}"#
        );
        assert!(
            serde_json::from_str::<Value>(&text).is_err(),
            "too deep for a Value"
        );
        let s = state_from_text(&text).expect("the snapshot is read");
        assert_eq!(s.next_id, 2);
        assert_eq!(s.tasks[0].subject, "kept");
        // The rule, as the Value reader applies it.
        for (text, want) in [
            (
                r#"{"type":"message","message":{"role":"toolResult","toolName":"todo","details":{"tasks":[],"nextId":7}}}"#,
                Some(7),
            ),
            (
                r#"{"type":"message","message":{"role":"toolResult","toolName":"todo","details":{"tasks":{},"nextId":7}}}"#,
                None,
            ),
            (
                r#"{"type":"message","message":{"role":"toolResult","toolName":"Todo","details":{"tasks":[],"nextId":7}}}"#,
                None,
            ),
            (
                r#"{"type":"messages","message":{"role":"toolResult","toolName":"todo","details":{"tasks":[],"nextId":7}}}"#,
                None,
            ),
            (
                r#"{"type":"message","message":{"role":"toolResult","toolName":"todo","details":{"tasks":[],"nextId":"7"}}}"#,
                None,
            ),
            (r#"{"type":1,"message":{}}"#, None),
            (r#"[1]"#, None),
        ] {
            assert_eq!(state_from_text(text).map(|s| s.next_id), want, "{text}");
            let v: Value = serde_json::from_str(text).unwrap();
            let by_value = snapshot(&v).and_then(|d| state_from_value(d).ok());
            assert_eq!(by_value.map(|s| s.next_id), want, "{text} as a Value");
        }
    }

    #[test]
    fn no_snapshot_gives_the_empty_list() {
        let entries = [json!(5), json!({"type": "message"}), result(json!("text"))];
        assert_eq!(replay(entries.iter().rev()), State::default());
    }
}
