//! The list's record of changes: who changed what, so that each writer can be told, once,
//! what the others changed since its last call.
//!
//! A list has several writers: the model in a chat, the user (`:Todos`, the edit buffer),
//! an agent in a terminal through the MCP server, a second editor. A call tells its writer
//! only what it asked about; a writer that then works from what it last saw updates tasks
//! that are gone and never hears of new ones. So every change is kept here with its
//! writer, and a writer's next reply ends with one line naming the others' changes since
//! its last call:
//!
//! ```text
//! (Changed by others since your last call: #5 "Write the changelog" added by the user; #2 completed by the user; #4 deleted by codex.)
//! ```
//!
//! # As the list's operation log
//! Each entry is one change of one task (or one `clear`), with a stable id (`op`), the
//! writer's id and name, a hybrid logical clock (`hlc`: milliseconds and a counter, never
//! behind any entry before it), the list's sequence number after the change (`seq`), the
//! action and the fields it changed. The last [`KEEP`] entries are kept, in the list file
//! under `"log"` (format version 1 ignores keys it does not know, so an older program
//! reads the file as before; one that writes it drops the log, which the next reader sees
//! as an unknown change). `epoch` names one life of the log: a list file made anew, or
//! written by a program that keeps no log, starts another, and a writer whose last call
//! saw an earlier one is told the list was changed without being told how.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::task::{Id, State, Status, Task};

/// How many changes are kept.
pub const KEEP: usize = 64;

/// How many changes a note names; the rest are counted.
pub const NAMED: usize = 5;

/// The longest subject a note quotes, in characters (a longer one ends in `…`).
pub const SUBJECT_CHARS: usize = 48;

/// The writer name that reads as "the user" in a note.
pub const USER: &str = "user";

/// One change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// A stable id: random, 16 hex digits.
    pub op: String,
    /// The list's sequence number after this change's call.
    pub seq: u64,
    /// Hybrid logical clock: milliseconds since 1970 and a counter.
    pub hlc: (u64, u32),
    /// The writer's id (random per writer and process).
    pub writer: String,
    /// The writer's name ("user", "codex", ...), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// "create", "update", "delete" or "clear".
    pub action: String,
    /// The task changed (none for `clear`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Id>,
    /// The task's subject after the change (before it, for a task cleared away).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// The task's status after the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The fields the change set, by their wire names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<String>,
    /// For `clear`: how many tasks it removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed: Option<usize>,
}

/// The record of a list's changes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Journal {
    /// Which life of the log this is (none yet: no change recorded since it was read from
    /// a file without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<String>,
    /// How many calls changed the list in this epoch.
    #[serde(default)]
    pub seq: u64,
    /// The last changes, oldest first.
    #[serde(default)]
    pub entries: VecDeque<Entry>,
}

/// Where a writer stood after its last call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    epoch: Option<String>,
    seq: u64,
}

impl Mark {
    /// A mark kept outside this process (a hook's record of a session): the log's epoch
    /// and sequence number as [`Mark::epoch`] and [`Mark::seq`] gave them.
    pub fn at(epoch: Option<String>, seq: u64) -> Mark {
        Mark { epoch, seq }
    }

    /// The life of the log the mark was taken in (none: no change recorded yet).
    pub fn epoch(&self) -> Option<&str> {
        self.epoch.as_deref()
    }

    /// How many calls had changed the list in that epoch.
    pub fn seq(&self) -> u64 {
        self.seq
    }
}

/// A writer: its id (what "others" is decided by) and its name (what notes call it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Writer {
    /// Random, 16 hex digits.
    pub id: String,
    /// "user", an agent's name, or none ("another program").
    pub name: Option<String>,
}

impl Writer {
    /// A new writer with a fresh id.
    pub fn new(name: Option<String>) -> Writer {
        Writer {
            id: random_hex(),
            name,
        }
    }
}

/// What a call may change, read before it runs: the tasks it names, as they were.
#[derive(Debug)]
pub struct Before {
    action: Option<String>,
    tasks: Vec<Task>,
    next_id: Id,
    count: usize,
}

impl Before {
    /// The tasks `params` (a tool call's arguments) name by id, anywhere in them, as they
    /// are in `state` now; for `clear`, every task.
    pub fn of(state: &State, params: &Value) -> Before {
        let action = params
            .get("action")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let tasks = if action.as_deref() == Some("clear") {
            state.tasks.clone()
        } else {
            let mut ids = Vec::new();
            named_ids(params, &mut ids, 0);
            ids.sort_unstable();
            ids.dedup();
            let index = state.index();
            ids.iter()
                .filter_map(|id| index.get(*id).cloned())
                .collect()
        };
        Before {
            action,
            tasks,
            next_id: state.next_id,
            count: state.tasks.len(),
        }
    }
}

/// Every integer under an `id` key in `v` (a call's arguments), at most 8 levels down.
fn named_ids(v: &Value, out: &mut Vec<Id>, depth: usize) {
    if depth > 8 || out.len() > 1024 {
        return;
    }
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v.as_i64()) {
                    ("id", Some(id)) => out.push(id),
                    _ => named_ids(v, out, depth + 1),
                }
            }
        }
        Value::Array(items) => {
            for v in items {
                named_ids(v, out, depth + 1);
            }
        }
        _ => {}
    }
}

/// The wire names of the fields in which two versions of a task differ.
fn changed_fields(a: &Task, b: &Task) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = |differs: bool, name: &str| {
        if differs {
            out.push(name.to_owned());
        }
    };
    field(a.subject != b.subject, "subject");
    field(a.description != b.description, "description");
    field(a.active_form != b.active_form, "activeForm");
    field(a.status != b.status, "status");
    field(a.blocked_by != b.blocked_by, "blockedBy");
    field(a.owner != b.owner, "owner");
    field(a.metadata != b.metadata, "metadata");
    out
}

impl Journal {
    /// Where a writer stands now.
    pub fn mark(&self) -> Mark {
        Mark {
            epoch: self.epoch.clone(),
            seq: self.seq,
        }
    }

    /// Record what one call by `writer` changed: `before` as read before it ran, `after`
    /// the list it left. Nothing is recorded when nothing changed. True when recorded.
    pub fn record(&mut self, writer: &Writer, before: &Before, after: &State) -> bool {
        type Change = (
            &'static str,
            Option<(Id, String, Status)>,
            Vec<String>,
            Option<usize>,
        );
        let mut changes: Vec<Change> = Vec::new();
        let seen = |t: &Task| Some((t.id, t.subject.clone(), t.status));
        if before.action.as_deref() == Some("clear") {
            if before.count > 0 || after.tasks.len() != before.count {
                changes.push(("clear", None, Vec::new(), Some(before.count)));
            }
        } else {
            let index = after.index();
            for old in &before.tasks {
                let Some(new) = index.get(old.id) else {
                    continue;
                };
                let fields = changed_fields(old, new);
                if fields.is_empty() {
                    continue;
                }
                let action = if new.status == Status::Deleted {
                    "delete"
                } else {
                    "update"
                };
                changes.push((action, seen(new), fields, None));
            }
            for new in after.tasks.iter().filter(|t| t.id >= before.next_id) {
                changes.push(("create", seen(new), Vec::new(), None));
            }
        }
        if changes.is_empty() {
            return false;
        }
        if self.epoch.is_none() {
            self.epoch = Some(random_hex());
        }
        self.seq = self.seq.saturating_add(1);
        let mut hlc = self.entries.back().map_or((0, 0), |e| e.hlc);
        for (action, task, fields, removed) in changes {
            hlc = tick(hlc, now_ms());
            self.entries.push_back(Entry {
                op: random_hex(),
                seq: self.seq,
                hlc,
                writer: writer.id.clone(),
                by: writer.name.clone(),
                action: action.to_owned(),
                id: task.as_ref().map(|t| t.0),
                subject: task.as_ref().map(|t| t.1.clone()),
                status: task.as_ref().map(|t| t.2.as_str().to_owned()),
                fields,
                removed,
            });
        }
        while self.entries.len() > KEEP {
            self.entries.pop_front();
        }
        true
    }

    /// The line that tells `writer`, whose last call left it at `mark`, what the others
    /// changed since; `None` when nobody else changed the list.
    pub fn note(&self, writer: &Writer, mark: &Mark) -> Option<String> {
        self.note_where(mark, |e| e.writer != writer.id)
    }

    /// The same line for a reader that holds no [`Writer`] (a hook, a process started
    /// once per event): the changes since `mark` for which `theirs` says true, by their
    /// names (`e.by`) rather than a writer id, e.g. every change made by a named writer.
    pub fn note_where(&self, mark: &Mark, theirs: impl Fn(&Entry) -> bool) -> Option<String> {
        if self.epoch != mark.epoch && mark.epoch.is_some() {
            // Another life of the log: the list was made again, or written by a program
            // that keeps no log.
            return Some(
                "(The list was changed by another program since your last call; call list to see it.)"
                    .into(),
            );
        }
        if self.seq <= mark.seq {
            return None;
        }
        // Are all the calls since the mark still kept? (The oldest kept may be partial.)
        let first_kept = self.entries.front().map_or(u64::MAX, |e| e.seq);
        let complete = first_kept <= mark.seq.saturating_add(1);
        let theirs: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| e.seq > mark.seq && theirs(e))
            .collect();
        if theirs.is_empty() && complete {
            return None;
        }
        let mut parts: Vec<String> = theirs.iter().take(NAMED).map(|e| describe(e)).collect();
        let more = theirs.len().saturating_sub(NAMED);
        let mut line = String::from("(Changed by others since your last call: ");
        if parts.is_empty() {
            line.push_str("changes no longer recorded; call list to see them.)");
            return Some(line);
        }
        if more > 0 {
            parts.push(format!("and {more} more; call list to see them"));
        } else if !complete {
            parts.push("and earlier ones; call list to see them".into());
        }
        line.push_str(&parts.join("; "));
        line.push_str(".)");
        Some(line)
    }
}

/// One change in words: `#5 "Write the changelog" added by the user`.
fn describe(e: &Entry) -> String {
    let who = match e.by.as_deref() {
        Some(USER) => "the user".to_owned(),
        Some(name) if !name.is_empty() => clip(name, 32),
        _ => "another program".to_owned(),
    };
    let id = e.id.map(|id| format!("#{id}")).unwrap_or_default();
    match e.action.as_str() {
        "clear" => format!(
            "the list cleared ({} tasks) by {who}",
            e.removed.unwrap_or(0)
        ),
        "create" => format!(
            "{id} \"{}\" added by {who}",
            clip(e.subject.as_deref().unwrap_or(""), SUBJECT_CHARS)
        ),
        "delete" => format!("{id} deleted by {who}"),
        _ => {
            let status_only = e.fields.len() == 1 && e.fields[0] == "status";
            match (status_only, e.status.as_deref()) {
                (true, Some("completed")) => format!("{id} completed by {who}"),
                (true, Some("in_progress")) => format!("{id} started by {who}"),
                (true, Some("pending")) => format!("{id} set back to pending by {who}"),
                _ => format!("{id} changed by {who} ({})", e.fields.join(", ")),
            }
        }
    }
}

/// `s` cut to `max` characters, `…` marking a cut; quotes and line breaks as spaces, so
/// the note stays one line whose quotes are its own.
fn clip(s: &str, max: usize) -> String {
    let mut out: String = s
        .chars()
        .take(max)
        .map(|c| if c == '"' || c.is_control() { ' ' } else { c })
        .collect();
    if s.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}

/// The next clock after `last` at wall time `now`.
fn tick(last: (u64, u32), now: u64) -> (u64, u32) {
    if now > last.0 {
        (now, 0)
    } else {
        (last.0, last.1.saturating_add(1))
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// 64 random bits: std seeds each `RandomState` from the system's randomness; a counter,
/// the time and the process id make two calls differ however the keys are reused.
pub(crate) fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u64(now_ms());
    h.write_u32(std::process::id());
    h.finish()
}

/// 16 random hex digits ([`random_u64`]).
pub(crate) fn random_hex() -> String {
    format!("{:016x}", random_u64())
}

/// The journal a list file holds under `"log"` (an empty one when it holds none, or one
/// this build cannot read: the list itself is what must be read).
pub fn from_file_value(v: Option<&Value>) -> Journal {
    v.and_then(|v| serde_json::from_value::<Journal>(v.clone()).ok())
        .map(|mut j| {
            while j.entries.len() > KEEP {
                j.entries.pop_front();
            }
            j
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(state: &mut State, journal: &mut Journal, writer: &Writer, args: Value) -> String {
        let before = Before::of(state, &args);
        let reply = crate::call::run(state, Ok(&args));
        journal.record(writer, &before, state);
        reply.text
    }

    fn user() -> Writer {
        Writer::new(Some(USER.into()))
    }

    #[test]
    fn each_writer_hears_the_others_changes_once_and_never_its_own() {
        let (mut s, mut j) = (State::default(), Journal::default());
        let (model, person, codex) = (Writer::new(None), user(), Writer::new(Some("codex".into())));
        for subject in ["a", "b", "c", "d"] {
            call(
                &mut s,
                &mut j,
                &model,
                serde_json::json!({"action": "create", "subject": subject}),
            );
        }
        let model_mark = j.mark();
        assert_eq!(j.note(&model, &model_mark), None, "nothing new");
        call(
            &mut s,
            &mut j,
            &person,
            serde_json::json!({"action": "update", "id": 2, "status": "completed"}),
        );
        call(
            &mut s,
            &mut j,
            &person,
            serde_json::json!({"action": "create", "subject": "Write the changelog"}),
        );
        call(
            &mut s,
            &mut j,
            &codex,
            serde_json::json!({"action": "delete", "id": 4}),
        );
        assert_eq!(
            j.note(&model, &model_mark).unwrap(),
            "(Changed by others since your last call: #2 completed by the user; #5 \"Write the changelog\" added by the user; #4 deleted by codex.)"
        );
        // The user's own changes are not news to the user: only codex's.
        let person_mark = Mark {
            epoch: j.epoch.clone(),
            seq: 5,
        };
        assert_eq!(
            j.note(&person, &person_mark).unwrap(),
            "(Changed by others since your last call: #4 deleted by codex.)"
        );
        assert_eq!(j.note(&codex, &j.mark()), None);
    }

    #[test]
    fn past_five_changes_the_rest_are_counted_and_edits_name_their_fields() {
        let (mut s, mut j) = (State::default(), Journal::default());
        let (model, person) = (Writer::new(None), user());
        call(
            &mut s,
            &mut j,
            &model,
            serde_json::json!({"action": "create", "subject": "x"}),
        );
        let mark = j.mark();
        call(
            &mut s,
            &mut j,
            &person,
            serde_json::json!({"action": "update", "id": 1, "subject": "y", "owner": "me"}),
        );
        call(
            &mut s,
            &mut j,
            &person,
            serde_json::json!({"action": "update", "id": 1, "status": "in_progress"}),
        );
        call(
            &mut s,
            &mut j,
            &person,
            serde_json::json!({"action": "update", "id": 1, "status": "pending"}),
        );
        for n in 0..5 {
            call(
                &mut s,
                &mut j,
                &person,
                serde_json::json!({"action": "create", "subject": format!("{n}\"q\"")}),
            );
        }
        assert_eq!(
            j.note(&model, &mark).unwrap(),
            "(Changed by others since your last call: #1 changed by the user (subject, owner); #1 started by the user; #1 set back to pending by the user; #2 \"0 q \" added by the user; #3 \"1 q \" added by the user; and 3 more; call list to see them.)"
        );
    }

    #[test]
    fn a_rejected_or_read_only_call_records_nothing() {
        let (mut s, mut j) = (State::default(), Journal::default());
        let w = Writer::new(None);
        call(
            &mut s,
            &mut j,
            &w,
            serde_json::json!({"action": "create", "subject": "x"}),
        );
        let seq = j.seq;
        call(
            &mut s,
            &mut j,
            &w,
            serde_json::json!({"action": "update", "id": 1, "status": "bogus"}),
        );
        call(
            &mut s,
            &mut j,
            &w,
            serde_json::json!({"action": "update", "id": 1, "status": "completed", "addBlockedBy": [1]}),
        );
        call(&mut s, &mut j, &w, serde_json::json!({"action": "list"}));
        call(
            &mut s,
            &mut j,
            &w,
            serde_json::json!({"action": "update", "id": 1, "status": "pending"}),
        );
        assert_eq!((j.seq, j.entries.len()), (seq, 1));
    }

    #[test]
    fn a_clear_is_one_change_and_the_log_keeps_its_last_entries() {
        let (mut s, mut j) = (State::default(), Journal::default());
        let (model, person) = (Writer::new(None), user());
        let mark = j.mark();
        for n in 0..70 {
            call(
                &mut s,
                &mut j,
                &person,
                serde_json::json!({"action": "create", "subject": format!("t{n}")}),
            );
        }
        assert_eq!(j.entries.len(), KEEP);
        // The model's mark is older than the oldest entry kept: it is told so.
        let note = j.note(&model, &mark).unwrap();
        assert!(
            note.ends_with("and 59 more; call list to see them.)"),
            "{note}"
        );
        let mark = j.mark();
        call(
            &mut s,
            &mut j,
            &person,
            serde_json::json!({"action": "clear"}),
        );
        assert_eq!(
            j.note(&model, &mark).unwrap(),
            "(Changed by others since your last call: the list cleared (70 tasks) by the user.)"
        );
    }

    #[test]
    fn another_life_of_the_log_is_a_change_without_details() {
        let (mut s, mut j) = (State::default(), Journal::default());
        let w = Writer::new(None);
        call(
            &mut s,
            &mut j,
            &w,
            serde_json::json!({"action": "create", "subject": "x"}),
        );
        let mark = j.mark();
        let replaced = Journal::default();
        assert_eq!(
            replaced.note(&w, &mark).unwrap(),
            "(The list was changed by another program since your last call; call list to see it.)"
        );
        // A mark taken before any log existed reads entries by their sequence alone.
        let fresh = Journal::default().mark();
        let other = Writer::new(Some("codex".into()));
        assert_eq!(
            j.note(&other, &fresh).unwrap(),
            "(Changed by others since your last call: #1 \"x\" added by another program.)"
        );
    }

    #[test]
    fn the_log_round_trips_through_json_and_its_clock_never_goes_back() {
        assert_eq!(tick((100, 3), 50), (100, 4));
        assert_eq!(tick((100, 3), 101), (101, 0));
        let (mut s, mut j) = (State::default(), Journal::default());
        let w = Writer::new(Some("codex".into()));
        for n in 0..3 {
            call(
                &mut s,
                &mut j,
                &w,
                serde_json::json!({"action": "create", "subject": format!("{n}")}),
            );
        }
        let hlcs: Vec<_> = j.entries.iter().map(|e| e.hlc).collect();
        assert!(hlcs.windows(2).all(|p| p[0] < p[1]), "{hlcs:?}");
        let text = serde_json::to_value(&j).unwrap();
        assert_eq!(from_file_value(Some(&text)), j);
        assert_eq!(
            from_file_value(Some(&serde_json::json!("junk"))),
            Journal::default()
        );
        assert_eq!(from_file_value(None), Journal::default());
    }

    #[test]
    fn a_reader_without_a_writer_hears_the_named_writers_changes_from_a_kept_mark() {
        let (mut s, mut j) = (State::default(), Journal::default());
        let (server, person) = (Writer::new(None), user());
        let create = |subject: &str| serde_json::json!({"action": "create", "subject": subject});
        call(&mut s, &mut j, &server, create("a"));
        // A hook keeps the mark as two plain values between its runs.
        let kept = j.mark();
        let mark = Mark::at(kept.epoch().map(str::to_owned), kept.seq());
        assert_eq!(mark, kept);
        assert_eq!(mark.seq(), 1);
        call(&mut s, &mut j, &server, create("b"));
        let named = |e: &Entry| e.by.is_some();
        assert_eq!(
            j.note_where(&mark, named),
            None,
            "an unnamed writer's change only"
        );
        call(
            &mut s,
            &mut j,
            &person,
            serde_json::json!({"action": "update", "id": 1, "status": "completed"}),
        );
        assert_eq!(
            j.note_where(&mark, named).unwrap(),
            "(Changed by others since your last call: #1 completed by the user.)"
        );
        assert_eq!(j.note_where(&j.mark(), named), None, "nothing since now");
        // Another life of the log: said, whoever made it.
        let old = Mark::at(Some("0000000000000000".into()), 3);
        assert_eq!(
            j.note_where(&old, named).unwrap(),
            "(The list was changed by another program since your last call; call list to see it.)"
        );
    }
}
