//! The task model: a task, its four statuses and the transition table.

use serde_json::{Map, Value};

/// Where a task is in its life. `Deleted` is a tombstone: the task stays so that old
/// `blockedBy` references still resolve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Not started (`"pending"`).
    Pending,
    /// Being worked on (`"in_progress"`).
    InProgress,
    /// Done (`"completed"`); it can only become deleted.
    Completed,
    /// A tombstone (`"deleted"`); final.
    Deleted,
}

impl Status {
    /// Every status, in the order the tool lists them.
    pub const ALL: [Status; 4] = [
        Status::Pending,
        Status::InProgress,
        Status::Completed,
        Status::Deleted,
    ];

    /// The wire name (`"in_progress"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::InProgress => "in_progress",
            Status::Completed => "completed",
            Status::Deleted => "deleted",
        }
    }

    /// The status with this wire name, if any.
    pub fn parse(s: &str) -> Option<Status> {
        Status::parse_bytes(s.as_bytes())
    }

    /// [`Status::parse`] for raw bytes (text that may not be UTF-8).
    pub fn parse_bytes(s: &[u8]) -> Option<Status> {
        Status::ALL
            .into_iter()
            .find(|st| st.as_str().as_bytes() == s)
    }

    /// The transition table of the TypeScript original (rpiv-todo). A move to the current status is always allowed
    /// (it is reported as a no-op by the reducer).
    pub fn can_move_to(self, to: Status) -> bool {
        use Status::*;
        self == to
            || matches!(
                (self, to),
                (Pending, InProgress | Completed | Deleted)
                    | (InProgress, Pending | Completed | Deleted)
                    | (Completed, Deleted)
            )
    }
}

/// Task ids are positive integers handed out by the list; ids named by the model may be
/// anything an `f64` holds exactly as an integer, so they are `i64`.
pub type Id = i64;

/// One task, as the snapshot in `details.tasks` holds it. Text is stored as the model
/// wrote it; sanitizing happens on output.
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    /// The task's number, handed out in increasing order from 1.
    pub id: Id,
    /// The short title.
    pub subject: String,
    /// Detail and acceptance criteria.
    pub description: Option<String>,
    /// The label shown while the task is in progress (`activeForm`).
    pub active_form: Option<String>,
    /// Where the task is in its life.
    pub status: Status,
    /// `None` when the task waits on nothing (an empty array is never stored).
    pub blocked_by: Option<Vec<Id>>,
    /// Who works on the task.
    pub owner: Option<String>,
    /// Insertion-ordered, like a JavaScript object.
    pub metadata: Option<Map<String, Value>>,
    /// Keys a replayed snapshot carried that this model does not know; kept verbatim.
    pub extra: Map<String, Value>,
}

impl Task {
    /// A pending task with only an id and a subject.
    pub fn new(id: Id, subject: String) -> Task {
        Task {
            id,
            subject,
            description: None,
            active_form: None,
            status: Status::Pending,
            blocked_by: None,
            owner: None,
            metadata: None,
            extra: Map::new(),
        }
    }

    /// The ids this task waits for (empty when none).
    pub fn blocked_by(&self) -> &[Id] {
        self.blocked_by.as_deref().unwrap_or(&[])
    }
}

/// The whole list: tasks in creation order and the next id to hand out.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Every task, tombstones included, in creation order.
    pub tasks: Vec<Task>,
    /// The id the next create hands out (`nextId`).
    pub next_id: Id,
}

impl Default for State {
    fn default() -> State {
        State {
            tasks: Vec::new(),
            next_id: 1,
        }
    }
}

impl State {
    /// Position of the task with `id`. Ids are handed out in increasing order, so a
    /// list that came from the reducer is sorted; a replayed one may not be, hence the
    /// fallback scan.
    pub fn position(&self, id: Id) -> Option<usize> {
        match self.tasks.binary_search_by_key(&id, |t| t.id) {
            Ok(i) => Some(i),
            Err(_) => self.tasks.iter().position(|t| t.id == id),
        }
    }

    /// The task with `id`, tombstones included.
    pub fn get(&self, id: Id) -> Option<&Task> {
        self.position(id).map(|i| &self.tasks[i])
    }

    /// Positions by id for many lookups in one call: a binary search on a sorted list (what
    /// the reducer writes), a hash map otherwise, so that no lookup scans the list.
    pub fn index(&self) -> Index<'_> {
        let sorted = self.tasks.windows(2).all(|w| w[0].id < w[1].id);
        let map = (!sorted).then(|| {
            let mut map = std::collections::HashMap::with_capacity(self.tasks.len());
            for (i, t) in self.tasks.iter().enumerate() {
                // The first task with an id wins, as a scan would find it.
                map.entry(t.id).or_insert(i);
            }
            map
        });
        Index { state: self, map }
    }
}

/// See [`State::index`].
pub struct Index<'a> {
    state: &'a State,
    map: Option<std::collections::HashMap<Id, usize>>,
}

impl Index<'_> {
    /// Position of the task with `id`, as [`State::position`] finds it.
    pub fn position(&self, id: Id) -> Option<usize> {
        match &self.map {
            Some(map) => map.get(&id).copied(),
            None => self.state.tasks.binary_search_by_key(&id, |t| t.id).ok(),
        }
    }

    /// The task with `id`, tombstones included.
    pub fn get(&self, id: Id) -> Option<&Task> {
        self.position(id).map(|i| &self.state.tasks[i])
    }
}

#[cfg(test)]
mod tests {
    use super::Status::*;
    use super::*;

    #[test]
    fn transition_table_matches_the_original() {
        let allowed = |from: Status| -> Vec<Status> {
            Status::ALL
                .into_iter()
                .filter(|&to| to != from && from.can_move_to(to))
                .collect()
        };
        assert_eq!(allowed(Pending), [InProgress, Completed, Deleted]);
        assert_eq!(allowed(InProgress), [Pending, Completed, Deleted]);
        assert_eq!(allowed(Completed), [Deleted]);
        assert_eq!(allowed(Deleted), []);
    }

    #[test]
    fn a_move_to_the_current_status_is_always_allowed() {
        for s in Status::ALL {
            assert!(s.can_move_to(s));
        }
    }

    #[test]
    fn status_names_round_trip() {
        for s in Status::ALL {
            assert_eq!(Status::parse(s.as_str()), Some(s));
        }
        assert_eq!(Status::parse("done"), None);
    }
}
