//! How much a tool call may add to the list, chosen so that whatever the tool
//! acknowledged fits the list file's load limit (`store::MAX_LIST_BYTES`) and can be read
//! back after a restart.
//!
//! Each text field of a task, its metadata and its `blockedBy` have a bound, measured as
//! the file stores them (bytes of JSON text: a quote or a newline takes two, a control
//! character six). With every field at its bound a task takes at most `MAX_TASK_BYTES`,
//! so a list of up to `SAFE_TASKS` tasks always fits the file, whatever is in it; past
//! that many tasks (tombstones count: they keep their fields), a call that adds to the
//! list has its exact size computed and is refused when the file would pass the limit.
//! Only what a call adds is checked: a field a snapshot already held is never a reason
//! to refuse an update that leaves it alone.

use crate::store::MAX_LIST_BYTES;
use crate::task::{State, Task};

/// The most a `subject`, `activeForm` or `owner` may hold, in bytes of JSON text.
pub const MAX_SHORT_TEXT: usize = 2 * 1024;

/// The most a `description` may hold, in bytes of JSON text.
pub const MAX_DESCRIPTION: usize = 32 * 1024;

/// The most a task's `metadata` record may hold (after an update's merge), in bytes of
/// compact JSON text.
pub const MAX_METADATA: usize = 8 * 1024;

/// The most ids a task's `blockedBy` may hold.
pub const MAX_BLOCKED_BY: usize = 1000;

/// What a task takes in the file at most, with every field at its bound: the texts, the
/// metadata, `blockedBy` (an id takes at most 16 digits and a comma), and 256 bytes for
/// the keys, the id, the status and the punctuation.
pub const MAX_TASK_BYTES: usize =
    3 * MAX_SHORT_TEXT + MAX_DESCRIPTION + MAX_METADATA + MAX_BLOCKED_BY * 17 + 256;

/// Lists of up to this many tasks fit the file whatever their tasks hold (64 bytes for
/// the file's own keys); only longer ones have their size computed.
pub const SAFE_TASKS: usize = (MAX_LIST_BYTES as usize - 64) / MAX_TASK_BYTES;

/// The most values one read of a Lua value (a call's arguments, a snapshot a host hands
/// over) may build: as many as a list file can hold, where each value takes at least two
/// bytes (itself and a comma or bracket). Only the host's own tables can reach it; past it
/// the read stops with an error naming where.
pub const MAX_READ_VALUES: usize = MAX_LIST_BYTES as usize / 2;

/// The most values one read may copy again from tables it has already copied (a table
/// shared by several places of the value: Lua tables may form a DAG, JSON cannot): one
/// largest task's worth, every value at least a byte of its text. A DAG of 40 tables that
/// spells 2^40 values stops here within milliseconds.
pub const MAX_REPEATED_VALUES: usize = MAX_TASK_BYTES;

/// What a read that passed `MAX_READ_VALUES` was expected to be.
pub const READ_VALUES_EXPECTED: &str = "at most 33554432 values in all";

/// What a read that passed `MAX_REPEATED_VALUES` was expected to be.
pub const REPEATED_VALUES_EXPECTED: &str = "at most 64360 values repeated from shared tables";

/// What `check_text` and `check_metadata` say a field should be.
const SHORT_EXPECTED: &str = "at most 2048 bytes (as JSON text)";
const DESCRIPTION_EXPECTED: &str = "at most 32768 bytes (as JSON text)";
const METADATA_EXPECTED: &str = "at most 8192 bytes (as JSON text)";

/// The length of `s` as a JSON string's content, escapes included (what serde_json
/// writes: `"` and `\` and the short escapes take two bytes, other control characters
/// six, everything else its UTF-8 bytes).
pub fn json_text_len(s: &str) -> usize {
    s.bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum()
}

/// Bytes of JSON text `value` takes, compact, as the file writes it.
pub fn json_len<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Plain data with string keys: serializing cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// Refuse a text field over its bound, naming the field.
pub fn check_text(field: &str, text: &str) -> Result<(), String> {
    let (max, expected) = if field == "description" {
        (MAX_DESCRIPTION, DESCRIPTION_EXPECTED)
    } else {
        (MAX_SHORT_TEXT, SHORT_EXPECTED)
    };
    let len = json_text_len(text);
    if len > max {
        return Err(
            crate::error::Error::input(field, expected, format!("{len} bytes")).to_string(),
        );
    }
    Ok(())
}

/// Refuse a metadata record over its bound. `merged`: the record is what an update's
/// merge would leave, not the call's own argument.
pub fn check_metadata(
    record: &serde_json::Map<String, serde_json::Value>,
    merged: bool,
) -> Result<(), String> {
    let len = json_len(record);
    if len <= MAX_METADATA {
        return Ok(());
    }
    let got = if merged {
        format!("{len} bytes once merged into the task's metadata")
    } else {
        format!("{len} bytes")
    };
    Err(crate::error::Error::input("metadata", METADATA_EXPECTED, got).to_string())
}

/// Refuse a `blockedBy` longer than its bound; `field` is the argument that made it.
pub fn check_blocked_by(field: &str, ids: usize) -> Result<(), String> {
    if ids > MAX_BLOCKED_BY {
        return Err(format!(
            "{field}: a task may wait on at most {MAX_BLOCKED_BY} ids, this one would wait on {ids}"
        ));
    }
    Ok(())
}

/// Refuse a change that would make the list's file pass the load limit: `before` is the
/// task replaced (None for a new one), `after` the task it becomes. Lists of up to
/// `SAFE_TASKS` tasks always fit and are not measured.
pub fn check_list(state: &State, before: Option<&Task>, after: &Task) -> Result<(), String> {
    let tasks = state.tasks.len() + usize::from(before.is_none());
    if tasks <= SAFE_TASKS {
        return Ok(());
    }
    // A change that does not grow the list cannot make it pass the limit (or, when a
    // host's snapshot already did, must not be refused).
    if before.is_some_and(|b| json_len(after) <= json_len(b)) {
        return Ok(());
    }
    // The file: {"version":1,"tasks":[...],"nextId":N} and a newline.
    let size =
        json_len(state) + 14 + 1 + json_len(after) + 1 - before.map_or(0, |t| json_len(t) + 1);
    if size as u64 > MAX_LIST_BYTES {
        return Err(format!(
            "the list is full: its file would take {size} bytes, more than the {MAX_LIST_BYTES} a list file may hold (deleted tasks count too); clear the list to start again"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_measured_as_the_file_stores_it() {
        let cases = [
            ("", 0),
            ("abc", 3),
            ("a\"b", 4),
            ("line\nline", 10),
            ("\u{1}", 6),
            ("é", 2),
            ("日本", 6),
            ("\\", 2),
        ];
        for (text, want) in cases {
            assert_eq!(json_text_len(text), want, "{text:?}");
            assert_eq!(json_len(text), want + 2, "{text:?} with its quotes");
        }
    }

    #[test]
    fn every_list_of_safe_tasks_at_their_bounds_fits_the_file() {
        // Hand-checked: 6 KiB + 32 KiB + 8 KiB + 17,000 + 256 bytes per task.
        assert_eq!(MAX_TASK_BYTES, 64_360);
        assert_eq!(SAFE_TASKS, 1042);
        assert_eq!(
            READ_VALUES_EXPECTED,
            format!("at most {MAX_READ_VALUES} values in all")
        );
        assert_eq!(
            REPEATED_VALUES_EXPECTED,
            format!("at most {MAX_REPEATED_VALUES} values repeated from shared tables")
        );
        assert!((SAFE_TASKS * MAX_TASK_BYTES + 64) as u64 <= MAX_LIST_BYTES);
    }

    /// A task with every field at its bound, in the characters that cost the most.
    fn largest_task(id: i64) -> Task {
        let mut t = Task::new(id, "\"".repeat(MAX_SHORT_TEXT / 2));
        t.status = crate::task::Status::InProgress;
        t.description = Some(format!("{}xx", "\u{1}".repeat(MAX_DESCRIPTION / 6)));
        t.active_form = t
            .description
            .as_ref()
            .map(|_| "\\".repeat(MAX_SHORT_TEXT / 2));
        t.owner = Some("\n".repeat(MAX_SHORT_TEXT / 2));
        t.blocked_by = Some(vec![crate::params::MAX_SAFE_INTEGER; MAX_BLOCKED_BY]);
        let mut m = serde_json::Map::new();
        // {"k":"…"}: 8 bytes around the value.
        m.insert("k".into(), "x".repeat(MAX_METADATA - 8).into());
        t.metadata = Some(m);
        assert_eq!(
            json_text_len(t.description.as_deref().unwrap()),
            MAX_DESCRIPTION
        );
        assert_eq!(json_len(t.metadata.as_ref().unwrap()), MAX_METADATA);
        t
    }

    #[test]
    fn a_list_of_safe_tasks_each_as_large_as_allowed_loads_back() {
        let one = largest_task(crate::params::MAX_SAFE_INTEGER);
        assert!(json_len(&one) <= MAX_TASK_BYTES, "{}", json_len(&one));
        let mut state = State {
            tasks: vec![one.clone(); SAFE_TASKS],
            next_id: crate::params::MAX_SAFE_INTEGER,
        };
        let text = crate::store::to_text(&state);
        assert!(text.len() as u64 <= MAX_LIST_BYTES, "{}", text.len());
        // Past SAFE_TASKS the size is measured: fill the file to the last whole task.
        let each = json_len(&one) + 1;
        while (text.len() + (state.tasks.len() + 1 - SAFE_TASKS) * each) as u64 <= MAX_LIST_BYTES {
            state.tasks.push(one.clone());
        }
        let err = check_list(&state, None, &one).unwrap_err();
        assert!(
            err.starts_with("the list is full: its file would take "),
            "{err}"
        );
        // A small task still fits, and the refused one really would not have.
        assert_eq!(check_list(&state, None, &Task::new(1, "a".into())), Ok(()));
        state.tasks.push(one.clone());
        assert!(crate::store::to_text(&state).len() as u64 > MAX_LIST_BYTES);
        // Over the limit already (a host's snapshot): growing a task is refused, shrinking
        // one is not.
        let mut grown = one.clone();
        grown.subject.push('x');
        assert!(check_list(&state, Some(&one), &grown).is_err());
        let mut shrunk = one.clone();
        shrunk.subject.pop();
        assert_eq!(check_list(&state, Some(&one), &shrunk), Ok(()));
    }
}
