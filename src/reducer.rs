//! The reducer: one tool call against the list. Every check runs before the list is
//! touched, so a rejected call leaves it exactly as it was.

use std::collections::HashSet;
use std::fmt::Write;

use serde_json::{Map, Value};

use crate::graph;
use crate::limits;
use crate::params::{Action, Params};
use crate::sanitize::{display, js_trim_is_empty};
use crate::task::{Id, State, Status, Task};

/// What a call says back: the text for `content[0].text`, and the bare message when the
/// call was rejected (`details.error`).
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    /// The whole text the model reads (`Error: …` on a rejected call).
    pub text: String,
    /// The message without the `Error: ` prefix when the call was rejected.
    pub error: Option<String>,
}

impl Reply {
    fn ok(text: String) -> Reply {
        Reply { text, error: None }
    }

    /// A rejected call's reply: `Error: <message>`. The message can name what the model
    /// wrote (a metadata key in a field path, say), so it is made fit for display.
    pub fn error(message: String) -> Reply {
        let message = display(&message).into_owned();
        Reply {
            text: format!("Error: {message}"),
            error: Some(message),
        }
    }
}

const NO_MUTABLE_FIELD: &str = "update requires at least one mutable field: subject, description, \
activeForm, status, owner, metadata, addBlockedBy, or removeBlockedBy";

/// Apply one call. `state` changes only when the reply carries no error.
pub fn apply(state: &mut State, params: &Params) -> Reply {
    if let Some(items) = &params.tasks {
        return batch(state, params, items).unwrap_or_else(Reply::error);
    }
    let result = match params.action {
        Some(Action::Create) => create(state, params),
        Some(Action::Update) => update(state, params),
        Some(Action::List) => Ok(list(state, params)),
        Some(Action::Get) => get(state, params),
        Some(Action::Delete) => delete(state, params),
        Some(Action::Clear) => Ok(clear(state)),
        // `Params::from_value` never yields a call without an action.
        None => Err("action required".to_owned()),
    };
    result.unwrap_or_else(Reply::error)
}

type Step = Result<Reply, String>;

/// Several creates or updates in one call (`tasks`): each item applied in order, as one
/// call with the call's action, to a copy of the list, which replaces the list only when
/// every item went through. The reply is the items' replies, one line each; a rejected
/// item rejects the whole call, naming the item (`tasks[2]: ...`).
fn batch(state: &mut State, p: &Params, items: &[Params]) -> Step {
    let action = p.action.map_or("", |a| a.as_str());
    if !matches!(p.action, Some(Action::Create | Action::Update)) {
        return Err(format!(
            "tasks: only create and update take several tasks, not {action}"
        ));
    }
    let beside = [
        ("id", p.id.is_some()),
        ("subject", p.subject.is_some()),
        ("description", p.description.is_some()),
        ("activeForm", p.active_form.is_some()),
        ("owner", p.owner.is_some()),
        ("status", p.status.is_some()),
        ("blockedBy", p.blocked_by.is_some()),
        ("addBlockedBy", p.add_blocked_by.is_some()),
        ("removeBlockedBy", p.remove_blocked_by.is_some()),
        ("metadata", p.metadata.is_some()),
    ];
    if let Some((field, _)) = beside.iter().find(|(_, given)| *given) {
        return Err(format!(
            "tasks: a task's fields go inside its item, but {field} was given beside tasks"
        ));
    }
    let mut work = state.clone();
    let mut text = String::new();
    for (i, item) in items.iter().enumerate() {
        let step = if p.action == Some(Action::Create) {
            create(&mut work, item)
        } else {
            update(&mut work, item)
        };
        let reply = step.map_err(|message| format!("tasks[{}]: {message}", i + 1))?;
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&reply.text);
    }
    *state = work;
    Ok(Reply::ok(text))
}

fn create(state: &mut State, p: &Params) -> Step {
    let subject = match &p.subject {
        Some(s) if !js_trim_is_empty(s) => s,
        _ => return Err("subject required for create".into()),
    };
    // The id handed out must leave a nextId a JSON number holds exactly, or the snapshot
    // written now could not be read back.
    if state.next_id >= crate::params::MAX_SAFE_INTEGER {
        return Err(format!(
            "no ids left: nextId is {}, the largest integer a JSON number holds exactly; clear the list to start again at 1",
            state.next_id
        ));
    }
    let deps = p.blocked_by.as_deref().unwrap_or(&[]);
    check_added_text(p)?;
    if let Some(m) = &p.metadata {
        limits::check_metadata(m, false)?;
    }
    limits::check_blocked_by("blockedBy", deps.len())?;
    let index = state.index();
    for &dep in deps {
        match index.get(dep) {
            None => return Err(format!("blockedBy: #{dep} not found")),
            Some(t) if t.status == Status::Deleted => {
                return Err(format!("blockedBy: #{dep} is deleted"))
            }
            Some(_) => {}
        }
    }
    let mut task = Task::new(state.next_id, subject.clone());
    // Create ignores empty optional text (update stores it): the reference's quirk.
    let non_empty = |s: &Option<String>| s.as_ref().filter(|s| !s.is_empty()).cloned();
    task.description = non_empty(&p.description);
    task.active_form = non_empty(&p.active_form);
    task.owner = non_empty(&p.owner);
    task.blocked_by = (!deps.is_empty()).then(|| deps.to_vec());
    task.metadata = p.metadata.clone();
    limits::check_list(state, None, &task)?;
    let text = format!("Created #{}: {} (pending)", task.id, display(&task.subject));
    state.tasks.push(task);
    state.next_id += 1;
    Ok(Reply::ok(text))
}

/// The bounds of the text fields a call sets (`limits`), checked in the schema's order.
fn check_added_text(p: &Params) -> Result<(), String> {
    for (field, text) in [
        ("subject", &p.subject),
        ("description", &p.description),
        ("activeForm", &p.active_form),
        ("owner", &p.owner),
    ] {
        if let Some(text) = text {
            limits::check_text(field, text)?;
        }
    }
    Ok(())
}

fn required_id(p: &Params, action: &str) -> Result<Id, String> {
    p.id.ok_or_else(|| format!("id required for {action}"))
}

fn find(state: &State, id: Id) -> Result<usize, String> {
    state.position(id).ok_or_else(|| format!("#{id} not found"))
}

fn update(state: &mut State, p: &Params) -> Step {
    let id = required_id(p, "update")?;
    let pos = find(state, id)?;
    let adds = p.add_blocked_by.as_deref().unwrap_or(&[]);
    let removes = p.remove_blocked_by.as_deref().unwrap_or(&[]);
    let has_field = p.subject.is_some()
        || p.description.is_some()
        || p.active_form.is_some()
        || p.status.is_some()
        || p.owner.is_some()
        || p.metadata.is_some()
        || !adds.is_empty()
        || !removes.is_empty();
    if !has_field {
        return Err(NO_MUTABLE_FIELD.into());
    }
    check_added_text(p)?;
    if let Some(m) = &p.metadata {
        limits::check_metadata(m, false)?;
    }
    let before = &state.tasks[pos];
    if let Some(to) = p.status {
        if !before.status.can_move_to(to) {
            return Err(format!(
                "illegal transition {} → {}",
                before.status.as_str(),
                to.as_str()
            ));
        }
    }
    let index = state.index();
    for &dep in adds {
        if dep == id {
            return Err(format!("cannot block #{id} on itself"));
        }
        match index.get(dep) {
            None => return Err(format!("addBlockedBy: #{dep} not found")),
            Some(t) if t.status == Status::Deleted => {
                return Err(format!("addBlockedBy: #{dep} is deleted"))
            }
            Some(_) => {}
        }
    }
    if !adds.is_empty() && graph::would_cycle(state, id, adds) {
        return Err("addBlockedBy would create a cycle in the blockedBy graph".into());
    }

    let mut after = before.clone();
    if let Some(s) = &p.subject {
        after.subject = s.clone();
    }
    if let Some(s) = &p.description {
        after.description = Some(s.clone());
    }
    if let Some(s) = &p.active_form {
        after.active_form = Some(s.clone());
    }
    if let Some(s) = &p.owner {
        after.owner = Some(s.clone());
    }
    if let Some(s) = p.status {
        after.status = s;
    }
    if let Some(patch) = &p.metadata {
        after.metadata = merge_metadata(after.metadata.take(), patch);
    }
    if !adds.is_empty() || !removes.is_empty() {
        // Removals first, then additions that are not already there. Sets for membership:
        // a model can send hundreds of thousands of ids in one call.
        let mut deps = after.blocked_by.take().unwrap_or_default();
        if !removes.is_empty() {
            let removes: HashSet<Id> = removes.iter().copied().collect();
            deps.retain(|d| !removes.contains(d));
        }
        let mut present: HashSet<Id> = deps.iter().copied().collect();
        for &d in adds {
            if present.insert(d) {
                deps.push(d);
            }
        }
        // Only growth is refused: a call that shrinks what a snapshot held over the bound
        // is let through.
        if deps.len() > before.blocked_by().len() {
            limits::check_blocked_by("addBlockedBy", deps.len())?;
        }
        after.blocked_by = (!deps.is_empty()).then_some(deps);
    }
    if p.metadata.is_some() {
        if let Some(m) = &after.metadata {
            let was = before.metadata.as_ref().map_or(0, limits::json_len);
            if limits::json_len(m) > was {
                limits::check_metadata(m, true)?;
            }
        }
    }
    limits::check_list(state, Some(before), &after)?;

    let from = before.status;
    let text = if same_task(before, &after) {
        format!(
            "No change: #{id} already matches the requested values (status: {})",
            from.as_str()
        )
    } else if after.status != from {
        format!(
            "Updated #{id} ({} → {})",
            from.as_str(),
            after.status.as_str()
        )
    } else {
        format!("Updated #{id}")
    };
    state.tasks[pos] = after;
    Ok(Reply::ok(text))
}

/// Merge `patch` into `record` key by key; `null` deletes a key and an emptied record is
/// dropped. Key positions follow JavaScript objects: a replaced key keeps its place.
fn merge_metadata(
    record: Option<Map<String, Value>>,
    patch: &Map<String, Value>,
) -> Option<Map<String, Value>> {
    let mut record = record.unwrap_or_default();
    for (k, v) in patch {
        if v.is_null() {
            record.shift_remove(k);
        } else {
            record.insert(k.clone(), v.clone());
        }
    }
    (!record.is_empty()).then_some(record)
}

fn same_task(a: &Task, b: &Task) -> bool {
    a.subject == b.subject
        && a.description == b.description
        && a.active_form == b.active_form
        && a.status == b.status
        && a.blocked_by == b.blocked_by
        && a.owner == b.owner
        && match (&a.metadata, &b.metadata) {
            (None, None) => true,
            (Some(x), Some(y)) => crate::js::equal_maps(x, y),
            _ => false,
        }
}

fn list(state: &State, p: &Params) -> Reply {
    let include_deleted = p.include_deleted.unwrap_or(false);
    // `list` runs often on long lists: push pieces instead of going through `format!`.
    let mut text = String::with_capacity(state.tasks.len() * 48);
    for t in &state.tasks {
        if (t.status == Status::Deleted && !include_deleted)
            || p.status.is_some_and(|s| s != t.status)
        {
            continue;
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text.push('[');
        text.push_str(t.status.as_str());
        text.push_str("] #");
        push_int(&mut text, t.id);
        text.push(' ');
        text.push_str(&display(&t.subject));
        if t.status == Status::InProgress {
            if let Some(a) = t.active_form.as_deref().filter(|a| !a.is_empty()) {
                text.push_str(" (");
                text.push_str(&display(a));
                text.push(')');
            }
        }
        if !t.blocked_by().is_empty() {
            text.push_str(" ⛓ ");
            push_ids(&mut text, t.blocked_by(), ",");
        }
    }
    if text.is_empty() {
        text.push_str("No tasks");
    }
    Reply::ok(text)
}

fn push_ids(out: &mut String, ids: &[Id], sep: &str) {
    for (i, &id) in ids.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        out.push('#');
        push_int(out, id);
    }
}

/// Decimal digits of `n`, without the formatting machinery.
fn push_int(out: &mut String, n: Id) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut v = n.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if n < 0 {
        out.push('-');
    }
    // Only ASCII digits were written.
    out.push_str(std::str::from_utf8(&buf[i..]).unwrap_or_default());
}

fn get(state: &State, p: &Params) -> Step {
    let id = required_id(p, "get")?;
    let t = &state.tasks[find(state, id)?];
    let mut text = format!("#{} [{}] {}", t.id, t.status.as_str(), display(&t.subject));
    fn present(s: &Option<String>) -> Option<std::borrow::Cow<'_, str>> {
        s.as_deref().filter(|s| !s.is_empty()).map(display)
    }
    if let Some(d) = present(&t.description) {
        let _ = write!(text, "\n  description: {d}");
    }
    if let Some(a) = present(&t.active_form) {
        let _ = write!(text, "\n  activeForm: {a}");
    }
    if !t.blocked_by().is_empty() {
        text.push_str("\n  blockedBy: ");
        push_ids(&mut text, t.blocked_by(), ", ");
    }
    let blocks = graph::blocks(state, id);
    if !blocks.is_empty() {
        text.push_str("\n  blocks: ");
        push_ids(&mut text, &blocks, ", ");
    }
    if let Some(o) = present(&t.owner) {
        let _ = write!(text, "\n  owner: {o}");
    }
    Ok(Reply::ok(text))
}

fn delete(state: &mut State, p: &Params) -> Step {
    let id = required_id(p, "delete")?;
    let pos = find(state, id)?;
    let t = &mut state.tasks[pos];
    if t.status == Status::Deleted {
        return Err(format!("#{id} is already deleted"));
    }
    t.status = Status::Deleted;
    Ok(Reply::ok(format!("Deleted #{id}: {}", display(&t.subject))))
}

fn clear(state: &mut State) -> Reply {
    // Counts tombstones too, and is never singular: the reference's wording.
    let n = state.tasks.len();
    *state = State::default();
    Reply::ok(format!("Cleared {n} tasks"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(state: &mut State, v: Value) -> String {
        apply(state, &Params::from_value(&v).unwrap()).text
    }

    #[test]
    fn a_batch_creates_several_tasks_one_line_each() {
        let mut s = State::default();
        let text = run(
            &mut s,
            json!({"action": "create", "tasks": [
                {"subject": "Write the parser", "activeForm": "Writing the parser"},
                {"subject": "Test it", "blockedBy": [1], "owner": "alice"},
            ]}),
        );
        assert_eq!(
            text,
            "Created #1: Write the parser (pending)\nCreated #2: Test it (pending)"
        );
        assert_eq!(s.next_id, 3);
        assert_eq!(
            s.tasks[0].active_form.as_deref(),
            Some("Writing the parser")
        );
        assert_eq!(s.tasks[1].blocked_by(), &[1]);
        assert_eq!(s.tasks[1].owner.as_deref(), Some("alice"));
        // A batch of one says what the single call says.
        let text = run(
            &mut s,
            json!({"action": "create", "tasks": [{"subject": "C"}]}),
        );
        assert_eq!(text, "Created #3: C (pending)");
    }

    #[test]
    fn finishing_one_task_and_starting_the_next_is_one_call() {
        let mut s = State::default();
        run(
            &mut s,
            json!({"action": "create", "tasks": [{"subject": "A"}, {"subject": "B"}]}),
        );
        run(
            &mut s,
            json!({"action": "update", "id": 1, "status": "in_progress"}),
        );
        let text = run(
            &mut s,
            json!({"action": "update", "tasks": [
                {"id": 1, "status": "completed"}, {"id": 2, "status": "in_progress"},
            ]}),
        );
        assert_eq!(
            text,
            "Updated #1 (in_progress → completed)\nUpdated #2 (pending → in_progress)"
        );
        assert_eq!(s.tasks[0].status, Status::Completed);
        assert_eq!(s.tasks[1].status, Status::InProgress);
        // Each item sees the ones before it; a repeated status is a no-op line.
        let text = run(
            &mut s,
            json!({"action": "update", "tasks": [
                {"id": 2, "status": "completed"}, {"id": 2, "status": "completed"},
                {"id": 2, "subject": "B2"},
            ]}),
        );
        assert_eq!(
            text,
            "Updated #2 (in_progress → completed)\n\
             No change: #2 already matches the requested values (status: completed)\n\
             Updated #2"
        );
    }

    #[test]
    fn a_batch_with_one_bad_item_changes_nothing_and_names_the_item() {
        let mut s = State::default();
        run(
            &mut s,
            json!({"action": "create", "tasks": [{"subject": "A"}, {"subject": "B"}]}),
        );
        let before = s.clone();
        let cases = [
            (
                json!({"action": "update", "tasks": [
                    {"id": 1, "status": "completed"}, {"id": 2, "status": "in_progress"},
                    {"id": 9, "status": "completed"},
                ]}),
                "Error: tasks[3]: #9 not found",
            ),
            (
                json!({"action": "update", "tasks": [
                    {"id": 1, "status": "completed"}, {"id": 1, "status": "in_progress"},
                ]}),
                "Error: tasks[2]: illegal transition completed → in_progress",
            ),
            (
                json!({"action": "create", "tasks": [{"subject": "C"}, {"subject": 5}]}),
                "Error: tasks[2].subject: expected a string, got number 5",
            ),
            (
                json!({"action": "create", "tasks": [{"subject": "C"}, {"description": "no subject"}]}),
                "Error: tasks[2]: subject required for create",
            ),
            (
                json!({"action": "create", "tasks": [{"subject": "C"}, {"subject": "D", "blockedBy": [3, 7]}]}),
                "Error: tasks[2]: blockedBy: #7 not found",
            ),
            (
                json!({"action": "update", "tasks": [{"id": 1, "addBlockedBy": [1, "2"]}]}),
                "Error: tasks[1].addBlockedBy[2]: expected an integer id, got string \"2\"",
            ),
            (
                json!({"action": "update", "tasks": [{"id": 1}]}),
                &format!("Error: tasks[1]: {NO_MUTABLE_FIELD}"),
            ),
            (
                json!({"action": "update", "tasks": [{"status": "completed"}]}),
                "Error: tasks[1]: id required for update",
            ),
            (
                json!({"action": "update", "tasks": [{"id": 1, "metadata": [1]}]}),
                "Error: tasks[1].metadata: expected an object, got an array",
            ),
            (
                json!({"action": "update", "tasks": [{"id": 1, "status": "done"}]}),
                "Error: tasks[1].status: expected one of pending, in_progress, completed, deleted, got string \"done\"",
            ),
            (
                json!({"action": "create", "tasks": ["A"]}),
                "Error: tasks[1]: expected an object with the fields of one task, got string \"A\"",
            ),
            (
                json!({"action": "create", "tasks": [{"subject": "A", "action": "update"}]}),
                "Error: tasks[1].action: expected nothing: the call's action applies to every item, got string \"update\"",
            ),
            (
                json!({"action": "create", "tasks": [{"subject": "A", "tasks": []}]}),
                "Error: tasks[1].tasks: expected nothing: tasks do not nest, got an array",
            ),
            (
                json!({"action": "create", "tasks": []}),
                "Error: tasks: expected a non-empty array of at most 100 tasks, got an empty array",
            ),
            (
                json!({"action": "create", "tasks": {"subject": "A"}}),
                "Error: tasks: expected a non-empty array of at most 100 tasks, got an object",
            ),
            (
                json!({"action": "create", "tasks": vec![json!({"subject": "x"}); 101]}),
                "Error: tasks: expected a non-empty array of at most 100 tasks, got an array of 101 items",
            ),
            (
                json!({"action": "create", "subject": "A", "tasks": [{"subject": "B"}]}),
                "Error: tasks: a task's fields go inside its item, but subject was given beside tasks",
            ),
            (
                json!({"action": "update", "status": "completed", "tasks": [{"id": 1}]}),
                "Error: tasks: a task's fields go inside its item, but status was given beside tasks",
            ),
            (
                json!({"action": "list", "tasks": [{"id": 1}]}),
                "Error: tasks: only create and update take several tasks, not list",
            ),
            (
                json!({"action": "delete", "tasks": [{"id": 1}]}),
                "Error: tasks: only create and update take several tasks, not delete",
            ),
        ];
        for (call, want) in cases {
            let reply = match Params::from_value(&call) {
                Ok(p) => apply(&mut s, &p),
                Err(e) => Reply::error(e.to_string()),
            };
            assert_eq!(reply.text, want, "for {call}");
            assert_eq!(
                reply.error.as_deref(),
                want.strip_prefix("Error: "),
                "for {call}"
            );
            assert_eq!(s, before, "{call} changed the list");
        }
        // 100 items is the bound, not past it.
        let text = run(
            &mut s,
            json!({"action": "create", "tasks": vec![json!({"subject": "x"}); 100]}),
        );
        assert_eq!(text.lines().count(), 100);
        assert_eq!(text.lines().last(), Some("Created #102: x (pending)"));
        // `tasks: null` is not given: the single call.
        assert_eq!(
            run(
                &mut s,
                json!({"action": "create", "subject": "y", "tasks": null})
            ),
            "Created #103: y (pending)"
        );
    }

    #[test]
    fn what_a_call_adds_is_bounded_and_the_error_names_the_field() {
        // Calls with 1 MiB descriptions must not be acknowledged: the list they make would
        // be refused at load.
        let mut s = State::default();
        run(&mut s, json!({"action": "create", "subject": "kept"}));
        let before = s.clone();
        let mib = "d".repeat(1 << 20);
        let at = |n: usize| "x".repeat(n);
        let cases = [
            (
                json!({"action": "create", "subject": "a", "description": mib}),
                "Error: description: expected at most 32768 bytes (as JSON text), got 1048576 bytes",
            ),
            (
                json!({"action": "create", "subject": at(2049)}),
                "Error: subject: expected at most 2048 bytes (as JSON text), got 2049 bytes",
            ),
            (
                // A newline takes two bytes in the file.
                json!({"action": "update", "id": 1, "activeForm": "\n".repeat(1025)}),
                "Error: activeForm: expected at most 2048 bytes (as JSON text), got 2050 bytes",
            ),
            (
                json!({"action": "update", "id": 1, "owner": at(4096)}),
                "Error: owner: expected at most 2048 bytes (as JSON text), got 4096 bytes",
            ),
            (
                json!({"action": "create", "subject": "a", "metadata": {"k": at(9000)}}),
                "Error: metadata: expected at most 8192 bytes (as JSON text), got 9008 bytes",
            ),
            (
                json!({"action": "create", "subject": "a", "blockedBy": vec![1; 1001]}),
                "Error: blockedBy: a task may wait on at most 1000 ids, this one would wait on 1001",
            ),
        ];
        for (call, want) in cases {
            assert_eq!(run(&mut s, call.clone()), want, "{call}");
            assert_eq!(s, before, "{call} left the list as it was");
        }
        // Exactly at the bounds: accepted.
        assert_eq!(
            run(
                &mut s,
                json!({"action": "create", "subject": at(2048), "description": at(32768),
                       "activeForm": at(2048), "owner": at(2048), "blockedBy": vec![1; 1000],
                       "metadata": {"k": at(8184)}})
            ),
            format!("Created #2: {} (pending)", at(2048))
        );
        // Metadata merged over several updates is bounded as a whole.
        assert_eq!(
            run(
                &mut s,
                json!({"action": "update", "id": 1, "metadata": {"a": at(5000)}})
            ),
            "Updated #1"
        );
        let before = s.clone();
        assert_eq!(
            run(&mut s, json!({"action": "update", "id": 1, "metadata": {"b": at(5000)}})),
            "Error: metadata: expected at most 8192 bytes (as JSON text), got 10015 bytes once merged into the task's metadata"
        );
        assert_eq!(s, before);
        // A call that shrinks what a snapshot held over a bound is let through.
        let mut big = Map::new();
        big.insert("a".into(), at(20_000).into());
        big.insert("b".into(), at(10).into());
        s.tasks[0].metadata = Some(big);
        assert_eq!(
            run(&mut s, json!({"action": "create", "subject": "c"})),
            "Created #3: c (pending)"
        );
        s.tasks[0].blocked_by = Some(vec![3; 1500]);
        assert_eq!(
            run(
                &mut s,
                json!({"action": "update", "id": 1, "metadata": {"b": null}})
            ),
            "Updated #1"
        );
        assert_eq!(
            run(
                &mut s,
                json!({"action": "update", "id": 1, "removeBlockedBy": [7]})
            ),
            "No change: #1 already matches the requested values (status: pending)"
        );
        assert_eq!(
            run(
                &mut s,
                json!({"action": "update", "id": 1, "addBlockedBy": [3]})
            ),
            "No change: #1 already matches the requested values (status: pending)"
        );
        // A field the call leaves alone is no reason to refuse it, however large it is.
        s.tasks[0].description = Some(mib);
        assert_eq!(
            run(
                &mut s,
                json!({"action": "update", "id": 1, "status": "in_progress"})
            ),
            "Updated #1 (pending → in_progress)"
        );
    }

    #[test]
    fn create_checks_the_trimmed_subject_but_stores_it_untrimmed() {
        let mut s = State::default();
        assert_eq!(
            run(&mut s, json!({"action": "create", "subject": " \u{3000}"})),
            "Error: subject required for create"
        );
        assert_eq!(
            run(&mut s, json!({"action": "create", "subject": " a "})),
            "Created #1:  a  (pending)"
        );
        assert_eq!(s.tasks[0].subject, " a ");
    }

    #[test]
    fn a_rejected_call_leaves_the_list_untouched() {
        let mut s = State::default();
        run(&mut s, json!({"action": "create", "subject": "a"}));
        let before = s.clone();
        let bad = [
            json!({"action": "update", "id": 1, "status": "completed", "addBlockedBy": [9]}),
            json!({"action": "update", "id": 1, "subject": "x", "addBlockedBy": [1]}),
            json!({"action": "create", "subject": "b", "blockedBy": [1, 7]}),
            json!({"action": "delete", "id": 2}),
        ];
        for b in bad {
            assert!(run(&mut s, b).starts_with("Error: "));
            assert_eq!(s, before);
        }
    }

    #[test]
    fn an_illegal_transition_is_reported_before_dependency_errors() {
        let mut s = State::default();
        run(&mut s, json!({"action": "create", "subject": "a"}));
        run(
            &mut s,
            json!({"action": "update", "id": 1, "status": "completed"}),
        );
        assert_eq!(
            run(
                &mut s,
                json!({"action": "update", "id": 1, "status": "pending", "addBlockedBy": [1]})
            ),
            "Error: illegal transition completed → pending"
        );
    }

    #[test]
    fn update_that_changes_nothing_says_no_change() {
        let mut s = State::default();
        run(
            &mut s,
            json!({"action": "create", "subject": "a", "metadata": {"k": {"x": 1, "y": 2}}}),
        );
        assert_eq!(
            run(
                &mut s,
                json!({"action": "update", "id": 1, "subject": "a", "metadata": {"k": {"x": 1, "y": 2}}})
            ),
            "No change: #1 already matches the requested values (status: pending)"
        );
        // Same content in another key order is a change, as JSON.stringify sees it.
        assert_eq!(
            run(
                &mut s,
                json!({"action": "update", "id": 1, "metadata": {"k": {"y": 2, "x": 1}}})
            ),
            "Updated #1"
        );
    }

    #[test]
    fn metadata_null_deletes_a_key_and_an_emptied_record_is_dropped() {
        let mut s = State::default();
        run(
            &mut s,
            json!({"action": "create", "subject": "a", "metadata": {"a": 1, "b": 2}}),
        );
        run(
            &mut s,
            json!({"action": "update", "id": 1, "metadata": {"a": null}}),
        );
        assert_eq!(
            s.tasks[0].metadata,
            Some(json!({"b": 2}).as_object().unwrap().clone())
        );
        run(
            &mut s,
            json!({"action": "update", "id": 1, "metadata": {"b": null}}),
        );
        assert_eq!(s.tasks[0].metadata, None);
    }

    #[test]
    fn add_blocked_by_merges_without_duplicates_after_removals() {
        let mut s = State::default();
        for n in ["a", "b", "c"] {
            run(&mut s, json!({"action": "create", "subject": n}));
        }
        run(
            &mut s,
            json!({"action": "update", "id": 3, "addBlockedBy": [1, 2, 1]}),
        );
        assert_eq!(s.tasks[2].blocked_by, Some(vec![1, 2]));
        run(
            &mut s,
            json!({"action": "update", "id": 3, "removeBlockedBy": [1], "addBlockedBy": [1]}),
        );
        assert_eq!(s.tasks[2].blocked_by, Some(vec![2, 1]));
        run(
            &mut s,
            json!({"action": "update", "id": 3, "removeBlockedBy": [1, 2]}),
        );
        assert_eq!(s.tasks[2].blocked_by, None);
    }

    #[test]
    fn a_call_with_200_000_ids_merges_them_in_first_seen_order() {
        // Membership in the blockedBy merge must not be a scan per id. Its speed is not
        // asserted here (a timed test fails on a busy machine and proves nothing on a fast
        // one); this pins what such a call stores.
        let n: Id = 20_000;
        let mut s = State {
            tasks: (1..=n).map(|k| Task::new(k, format!("t{k}"))).collect(),
            next_id: n + 1,
        };
        // 200,000 ids over 999 distinct ones: the merge keeps 999, under the bound of
        // 1000 a task's blockedBy may hold (limits.rs).
        let adds: Vec<Value> = (0..200_000).map(|i| Value::from(i % 999 + 1)).collect();
        let removes: Vec<Value> = (0..200_000).map(|i| Value::from(n + 1 + i)).collect();
        let update = Params::from_value(
            &json!({"action": "update", "id": n, "addBlockedBy": adds, "removeBlockedBy": removes}),
        )
        .unwrap();
        let create =
            Params::from_value(&json!({"action": "create", "subject": "c", "blockedBy": adds}))
                .unwrap();
        assert_eq!(apply(&mut s, &update).text, format!("Updated #{n}"));
        // Create keeps duplicates, so 200,000 ids are over the bound: refused.
        assert_eq!(
            apply(&mut s, &create).text,
            "Error: blockedBy: a task may wait on at most 1000 ids, this one would wait on 200000"
        );
        // Additions keep their first-seen order without duplicates.
        let merged = s.tasks[n as usize - 1].blocked_by().to_vec();
        assert_eq!(merged, (1..1000).collect::<Vec<Id>>());
        assert_eq!(s.tasks.len(), n as usize);
    }

    #[test]
    fn create_at_the_id_limit_is_refused_and_everything_written_reads_back() {
        let max = crate::params::MAX_SAFE_INTEGER;
        let mut s = State {
            tasks: vec![],
            next_id: max - 1,
        };
        assert_eq!(
            run(&mut s, json!({"action": "create", "subject": "last"})),
            format!("Created #{}: last (pending)", max - 1)
        );
        let written = serde_json::to_value(&s).unwrap();
        assert_eq!(crate::json::state_from_value(&written).unwrap(), s);
        let before = s.clone();
        assert_eq!(
            run(&mut s, json!({"action": "create", "subject": "one too many"})),
            format!("Error: no ids left: nextId is {max}, the largest integer a JSON number holds exactly; clear the list to start again at 1")
        );
        assert_eq!(s, before);
        assert_eq!(run(&mut s, json!({"action": "clear"})), "Cleared 1 tasks");
        assert_eq!(
            run(&mut s, json!({"action": "create", "subject": "again"})),
            "Created #1: again (pending)"
        );
    }

    #[test]
    fn ids_print_in_decimal_with_their_sign() {
        for n in [0, 7, 10, -1, -45, 9_007_199_254_740_991, i64::MIN] {
            let mut s = String::new();
            push_int(&mut s, n);
            assert_eq!(s, n.to_string());
        }
    }

    #[test]
    fn clear_counts_tombstones_and_resets_ids() {
        let mut s = State::default();
        run(&mut s, json!({"action": "create", "subject": "a"}));
        run(&mut s, json!({"action": "delete", "id": 1}));
        assert_eq!(run(&mut s, json!({"action": "clear"})), "Cleared 1 tasks");
        assert_eq!(s, State::default());
    }

    /// Runs `calls` from an empty list and returns the text of the last one.
    fn last_text(calls: &[Value]) -> String {
        let mut s = State::default();
        calls
            .iter()
            .map(|c| run(&mut s, c.clone()))
            .last()
            .unwrap_or_default()
    }

    #[test]
    fn each_quirk_of_the_reference_is_kept() {
        let cases: Vec<(&str, Vec<Value>, &str)> = vec![
            (
                "create ignores empty optional text, so get prints no such line",
                vec![
                    json!({"action": "create", "subject": "a", "description": "", "owner": ""}),
                    json!({"action": "get", "id": 1}),
                ],
                "#1 [pending] a",
            ),
            (
                "update stores empty text, and get still prints only non-empty lines",
                vec![
                    json!({"action": "create", "subject": "a", "owner": "o"}),
                    json!({"action": "update", "id": 1, "owner": ""}),
                ],
                "Updated #1",
            ),
            (
                "create keeps duplicate blockedBy ids and get lists the reverse edge twice",
                vec![
                    json!({"action": "create", "subject": "a"}),
                    json!({"action": "create", "subject": "b", "blockedBy": [1, 1]}),
                    json!({"action": "get", "id": 1}),
                ],
                "#1 [pending] a\n  blocks: #2, #2",
            ),
            (
                "blocks lists tombstones too",
                vec![
                    json!({"action": "create", "subject": "a"}),
                    json!({"action": "create", "subject": "b", "blockedBy": [1]}),
                    json!({"action": "delete", "id": 2}),
                    json!({"action": "get", "id": 1}),
                ],
                "#1 [pending] a\n  blocks: #2",
            ),
            (
                "metadata {} on update is a no-op merge that still reports No change",
                vec![
                    json!({"action": "create", "subject": "a"}),
                    json!({"action": "update", "id": 1, "metadata": {}}),
                ],
                "No change: #1 already matches the requested values (status: pending)",
            ),
            (
                "metadata {} stored on create is dropped by an update, which is a change",
                vec![
                    json!({"action": "create", "subject": "a", "metadata": {}}),
                    json!({"action": "update", "id": 1, "metadata": {}}),
                ],
                "Updated #1",
            ),
            (
                "a deleted task can still have its fields updated",
                vec![
                    json!({"action": "create", "subject": "a"}),
                    json!({"action": "delete", "id": 1}),
                    json!({"action": "update", "id": 1, "subject": "b"}),
                ],
                "Updated #1",
            ),
            (
                "addBlockedBy checks self before not found",
                vec![
                    json!({"action": "create", "subject": "a"}),
                    json!({"action": "update", "id": 1, "addBlockedBy": [1, 9]}),
                ],
                "Error: cannot block #1 on itself",
            ),
            (
                "addBlockedBy checks ids in order: the first unknown one is named",
                vec![
                    json!({"action": "create", "subject": "a"}),
                    json!({"action": "create", "subject": "b"}),
                    json!({"action": "delete", "id": 2}),
                    json!({"action": "update", "id": 1, "addBlockedBy": [7, 2]}),
                ],
                "Error: addBlockedBy: #7 not found",
            ),
            (
                "an empty addBlockedBy is not a mutable field",
                vec![
                    json!({"action": "create", "subject": "a"}),
                    json!({"action": "update", "id": 1, "addBlockedBy": []}),
                ],
                "Error: update requires at least one mutable field: subject, description, activeForm, status, owner, metadata, addBlockedBy, or removeBlockedBy",
            ),
            (
                "list shows activeForm only while in_progress",
                vec![
                    json!({"action": "create", "subject": "a", "activeForm": "doing a"}),
                    json!({"action": "create", "subject": "b", "activeForm": "doing b"}),
                    json!({"action": "update", "id": 2, "status": "in_progress"}),
                    json!({"action": "list"}),
                ],
                "[pending] #1 a\n[in_progress] #2 b (doing b)",
            ),
            (
                "get prints its lines in the reference's order",
                vec![
                    json!({"action": "create", "subject": "a"}),
                    json!({"action": "create", "subject": "b", "description": "d", "activeForm": "f", "owner": "o", "blockedBy": [1]}),
                    json!({"action": "create", "subject": "c", "blockedBy": [2]}),
                    json!({"action": "get", "id": 2}),
                ],
                "#2 [pending] b\n  description: d\n  activeForm: f\n  blockedBy: #1\n  blocks: #3\n  owner: o",
            ),
            (
                "model text is sanitized on output",
                vec![json!({"action": "create", "subject": "\u{1b}[31mred\u{1b}[0m\nline"})],
                "Created #1: red line (pending)",
            ),
            (
                "clear is never singular",
                vec![json!({"action": "create", "subject": "a"}), json!({"action": "clear"})],
                "Cleared 1 tasks",
            ),
            (
                "ids restart at 1 after clear",
                vec![
                    json!({"action": "create", "subject": "a"}),
                    json!({"action": "clear"}),
                    json!({"action": "create", "subject": "b"}),
                ],
                "Created #1: b (pending)",
            ),
        ];
        for (rule, calls, want) in cases {
            assert_eq!(last_text(&calls), want, "{rule}");
        }
    }
}

/// Property tests: random call sequences, checked after every call against the rules the
/// list keeps. Case counts are modest: the lib tests run once per Lua flavour.
#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// Ids the calls name: mostly ones the list may hold, some it cannot.
    fn id() -> impl Strategy<Value = i64> {
        prop_oneof![12 => 1i64..7, 1 => -2i64..1, 1 => Just(1000)]
    }

    fn ids() -> impl Strategy<Value = Vec<i64>> {
        prop::collection::vec(id(), 0..4)
    }

    fn status() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec!["pending", "in_progress", "completed", "deleted"])
    }

    fn text() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec!["a", "b", " ", "", "\u{1b}[2Jx", "\u{61c}y"])
    }

    /// One call's arguments, as the model would send them.
    fn call() -> impl Strategy<Value = Value> {
        prop_oneof![
            9 => (text(), prop::option::weighted(0.3, ids()), prop::option::of(text()))
                .prop_map(|(s, deps, owner)| {
                json!({"action": "create", "subject": s, "blockedBy": deps, "owner": owner})
            }),
            12 => (id(), prop::option::of(status()), prop::option::weighted(0.3, ids()),
                prop::option::weighted(0.3, ids()), prop::option::weighted(0.3, text()))
                .prop_map(|(id, st, add, remove, subject)| {
                    json!({"action": "update", "id": id, "status": st, "addBlockedBy": add,
                        "removeBlockedBy": remove, "subject": subject})
                }),
            2 => id().prop_map(|id| json!({"action": "delete", "id": id})),
            3 => prop::collection::vec((id(), prop::option::of(status())), 1..4)
                .prop_map(|items| {
                    let items: Vec<Value> = items.into_iter()
                        .map(|(id, st)| json!({"id": id, "status": st}))
                        .collect();
                    json!({"action": "update", "tasks": items})
                }),
            2 => prop::collection::vec((text(), prop::option::weighted(0.3, ids())), 1..4)
                .prop_map(|items| {
                    let items: Vec<Value> = items.into_iter()
                        .map(|(s, deps)| json!({"subject": s, "blockedBy": deps}))
                        .collect();
                    json!({"action": "create", "tasks": items})
                }),
            1 => id().prop_map(|id| json!({"action": "get", "id": id})),
            1 => Just(json!({"action": "list", "includeDeleted": true})),
            1 => Just(json!({"action": "clear"})),
        ]
    }

    /// The original's status machine, written out independently of `Status::can_move_to`.
    fn legal(from: Status, to: Status) -> bool {
        use Status::*;
        from == to
            || matches!(
                (from, to),
                (Pending, InProgress)
                    | (Pending, Completed)
                    | (Pending, Deleted)
                    | (InProgress, Pending)
                    | (InProgress, Completed)
                    | (InProgress, Deleted)
                    | (Completed, Deleted)
            )
    }

    /// The invariants every list the reducer writes keeps.
    fn check(state: &State) -> std::result::Result<(), TestCaseError> {
        // Ids unique, from 1, below nextId; every dependency exists; no cycle: exactly what
        // `validate` refuses, and with nothing to repair.
        let checked = state.clone().validate();
        prop_assert!(checked.is_ok(), "{:?}", checked.err());
        prop_assert_eq!(checked.ok().map(|s| s.next_id), Some(state.next_id));
        prop_assert!(state.tasks.iter().all(|t| t.id < state.next_id));
        // Sorted by id (creation order), which the fast lookups rely on.
        prop_assert!(state.tasks.windows(2).all(|w| w[0].id < w[1].id));
        // What is written reads back.
        let written = serde_json::to_value(state).unwrap();
        prop_assert_eq!(&crate::json::state_from_value(&written).unwrap(), state);
        Ok(())
    }

    proptest! {
        // No regression files written into the source tree; a failure prints its minimal case.
        #![proptest_config(ProptestConfig {
            cases: 128,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// A batch does what its items do one by one when every one goes through, and
        /// nothing at all when one does not.
        #[test]
        fn a_batch_is_its_items_in_order_or_nothing(
            setup in prop::collection::vec(call(), 0..20),
            batch in prop::collection::vec(call(), 1..5),
        ) {
            let mut state = State::default();
            for c in &setup {
                if let Ok(p) = Params::from_value(c) {
                    apply(&mut state, &p);
                }
            }
            // Items: the single creates or updates of `batch`, under the first one's action.
            let action = if batch[0]["action"] == "create" { "create" } else { "update" };
            let items: Vec<Value> = batch
                .iter()
                .filter(|c| c["action"] == action && c.get("tasks").is_none())
                .map(|c| {
                    let mut item = c.as_object().unwrap().clone();
                    item.remove("action");
                    Value::Object(item)
                })
                .collect();
            prop_assume!(!items.is_empty());
            let mut one_by_one = state.clone();
            let mut lines = Vec::new();
            let mut failed = None;
            for (i, item) in items.iter().enumerate() {
                let mut single = item.as_object().unwrap().clone();
                single.insert("action".into(), json!(action));
                let reply = match Params::from_value(&Value::Object(single)) {
                    Ok(p) => apply(&mut one_by_one, &p),
                    Err(e) => Reply::error(e.to_string()),
                };
                if let Some(e) = reply.error {
                    failed = Some((i + 1, e));
                    break;
                }
                lines.push(reply.text);
            }
            let before = state.clone();
            let reply = match Params::from_value(&json!({"action": action, "tasks": items})) {
                Ok(p) => apply(&mut state, &p),
                Err(e) => Reply::error(e.to_string()),
            };
            match failed {
                None => {
                    prop_assert_eq!(reply.text, lines.join("\n"));
                    prop_assert_eq!(&state, &one_by_one);
                }
                Some((n, e)) => {
                    let error = reply.error.unwrap_or_default();
                    // The item's own message, after its place (a field path for a schema
                    // error, `tasks[n]: ` for the reducer's).
                    let at = format!("tasks[{n}]");
                    prop_assert!(error.starts_with(&at), "{} for item {}: {}", error, n, e);
                    prop_assert!(error.ends_with(e.split_once(": ").map_or(e.as_str(), |x| x.1)) || error.ends_with(&e), "{} vs {}", error, e);
                    prop_assert_eq!(&state, &before);
                }
            }
        }

        #[test]
        fn random_call_sequences_keep_the_list_valid(calls in prop::collection::vec(call(), 1..60)) {
            let mut state = State::default();
            for c in &calls {
                let before = state.clone();
                let reply = match Params::from_value(c) {
                    Ok(p) => apply(&mut state, &p),
                    Err(e) => Reply::error(e.to_string()),
                };
                prop_assert_eq!(reply.text.starts_with("Error: "), reply.error.is_some());
                if reply.error.is_some() {
                    // A rejected call changes nothing.
                    prop_assert_eq!(&state, &before, "{} changed the list", c);
                } else if c["action"] != "clear" {
                    // Only legal transitions; tasks are never removed or reordered.
                    prop_assert!(state.tasks.len() >= before.tasks.len());
                    for (b, a) in before.tasks.iter().zip(&state.tasks) {
                        prop_assert_eq!(a.id, b.id);
                        prop_assert!(legal(b.status, a.status), "{:?} -> {:?}", b.status, a.status);
                    }
                }
                check(&state)?;
            }
        }
    }
}
