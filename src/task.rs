//! The task model: a task, its four statuses and the transition table.

use serde_json::{Map, Value};

/// The fields of the task model; any other key a task has is kept as it came
/// (`Task::extra`).
pub const FIELDS: [&str; 8] = [
    "id",
    "subject",
    "description",
    "activeForm",
    "status",
    "blockedBy",
    "owner",
    "metadata",
];

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

/// The largest integer a JSON number (an IEEE double) holds exactly: the largest id.
pub const MAX_SAFE_INTEGER: Id = (1 << 53) - 1;

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

    /// The list's own rules, for a snapshot that did not come from this reducer: every
    /// state a host hands over (`core.list`, `core.apply`, `list:replace`, `core.load`)
    /// and every snapshot `core.replay` considers passes through here (via
    /// `json::state_from_value`), so whatever replay returns, `core.list` accepts.
    ///
    /// Refused (the error names the problem; a host gets a Lua error, replay skips the
    /// snapshot): an id below 1, an id that appears twice, a `blockedBy` id that is not in
    /// the list, a cycle of `blockedBy` edges, and ids so large that no `nextId` a JSON
    /// number holds exactly could follow them. The reducer can produce none of these.
    ///
    /// Repaired: a `nextId` that is not past every id (below 1, or at or below the largest
    /// id) becomes the largest id + 1, so the next `create` never hands out an id twice.
    pub fn validate(mut self) -> crate::error::Result<State> {
        let tasks = &self.tasks;
        let largest = check_links(tasks.len(), |i| tasks[i].id, |i| tasks[i].blocked_by())?;
        self.next_id = repaired_next_id(self.next_id, largest);
        Ok(self)
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

/// `nextId` as a snapshot must have it: past the largest id (`largest`, 0 for none) and
/// at least 1; a smaller one is repaired to `largest + 1` ([`State::validate`] and the
/// boundary's table-to-table copy both use this).
pub fn repaired_next_id(next_id: Id, largest: Id) -> Id {
    if next_id <= largest || next_id < 1 {
        largest.saturating_add(1)
    } else {
        next_id
    }
}

/// The rules [`State::validate`] refuses by, over `n` tasks given by their ids and
/// `blockedBy` ids (so that a copy made elsewhere, such as a snapshot copied table to
/// table, is held to them without becoming a `State` first). Gives the largest id (0 for
/// none).
pub fn check_links<'a>(
    n: usize,
    id: impl Fn(usize) -> Id,
    deps: impl Fn(usize) -> &'a [Id],
) -> crate::error::Result<Id> {
    use crate::error::Error;
    let ids: Vec<Id> = (0..n).map(&id).collect();
    let positions = Positions::new(&ids).map_err(|fault| match fault {
        Fault::Below1(i) => Error::State(format!(
            "tasks[{}].id: ids are integers from 1, got {}",
            i + 1,
            ids[i]
        )),
        Fault::Repeated(i, first) => Error::State(format!(
            "tasks[{}].id: #{} is already the id of tasks[{}]",
            i + 1,
            ids[i],
            first + 1
        )),
    })?;
    let mut edges = false;
    for i in 0..n {
        let d = deps(i);
        edges |= !d.is_empty();
        if let Some(d) = d.iter().find(|&&d| positions.get(d).is_none()) {
            return Err(Error::State(format!(
                "tasks[{}].blockedBy: #{d} is not in the list",
                i + 1
            )));
        }
    }
    if let Some(id) = edges.then(|| cycle(n, &deps, &positions)).flatten() {
        return Err(Error::State(format!(
            "tasks: the blockedBy edges form a cycle through #{id}"
        )));
    }
    let largest = ids.iter().copied().max().unwrap_or(0);
    if largest >= MAX_SAFE_INTEGER {
        return Err(Error::State(format!(
            "tasks: id #{largest} leaves no nextId a JSON number holds exactly"
        )));
    }
    Ok(largest)
}

/// What `Positions::new` refuses: an id below 1 (its position), or an id seen before
/// (its position and the first's).
enum Fault {
    Below1(usize),
    Repeated(usize, usize),
}

/// Positions by id for `check_links`: a binary search when the ids increase (what the
/// reducer writes, and so most snapshots), a hash map otherwise.
enum Positions<'a> {
    Sorted(&'a [Id]),
    Map(std::collections::HashMap<Id, usize>),
}

impl<'a> Positions<'a> {
    /// The positions of `ids`, or the first fault in list order.
    fn new(ids: &'a [Id]) -> Result<Positions<'a>, Fault> {
        if ids.windows(2).all(|w| w[0] < w[1]) {
            return match ids.first() {
                Some(&first) if first < 1 => Err(Fault::Below1(0)),
                _ => Ok(Positions::Sorted(ids)),
            };
        }
        let mut map = std::collections::HashMap::with_capacity(ids.len());
        for (i, &id) in ids.iter().enumerate() {
            if id < 1 {
                return Err(Fault::Below1(i));
            }
            if let Some(first) = map.insert(id, i) {
                return Err(Fault::Repeated(i, first));
            }
        }
        Ok(Positions::Map(map))
    }

    fn get(&self, id: Id) -> Option<usize> {
        match self {
            Positions::Sorted(ids) => ids.binary_search(&id).ok(),
            Positions::Map(map) => map.get(&id).copied(),
        }
    }
}

/// A task on a cycle of `blockedBy` edges, if there is one (every edge's target is in
/// `positions`). Iterative depth-first search: a chain of any length is fine.
fn cycle<'a>(n: usize, deps: &impl Fn(usize) -> &'a [Id], positions: &Positions<'_>) -> Option<Id> {
    const NEW: u8 = 0;
    const OPEN: u8 = 1;
    const DONE: u8 = 2;
    let mut mark = vec![NEW; n];
    // (position, index of the next edge to follow)
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if mark[root] != NEW {
            continue;
        }
        mark[root] = OPEN;
        stack.push((root, 0));
        while let Some(top) = stack.last_mut() {
            let (pos, edge) = *top;
            match deps(pos).get(edge) {
                Some(dep) => {
                    top.1 += 1;
                    let Some(next) = positions.get(*dep) else {
                        continue;
                    };
                    match mark[next] {
                        OPEN => return Some(*dep),
                        NEW => {
                            mark[next] = OPEN;
                            stack.push((next, 0));
                        }
                        _ => {}
                    }
                }
                None => {
                    mark[pos] = DONE;
                    stack.pop();
                }
            }
        }
    }
    None
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

    fn state(tasks: &[(Id, &[Id])], next_id: Id) -> State {
        State {
            tasks: tasks
                .iter()
                .map(|&(id, deps)| {
                    let mut t = Task::new(id, format!("t{id}"));
                    t.blocked_by = (!deps.is_empty()).then(|| deps.to_vec());
                    t
                })
                .collect(),
            next_id,
        }
    }

    fn refused(s: State) -> String {
        s.validate().unwrap_err().to_string()
    }

    #[test]
    fn a_snapshot_that_breaks_the_rules_is_refused_naming_the_problem() {
        assert_eq!(
            refused(state(&[(1, &[]), (1, &[])], 2)),
            "state: tasks[2].id: #1 is already the id of tasks[1]"
        );
        assert_eq!(
            refused(state(&[(0, &[])], 2)),
            "state: tasks[1].id: ids are integers from 1, got 0"
        );
        assert_eq!(
            refused(state(&[(1, &[7])], 2)),
            "state: tasks[1].blockedBy: #7 is not in the list"
        );
        assert_eq!(
            refused(state(&[(1, &[1])], 2)),
            "state: tasks: the blockedBy edges form a cycle through #1"
        );
        assert_eq!(
            refused(state(&[(1, &[3]), (2, &[1]), (3, &[2])], 4)),
            "state: tasks: the blockedBy edges form a cycle through #1"
        );
        // The first fault in list order, whichever the kind, sorted ids or not.
        assert_eq!(
            refused(state(&[(2, &[]), (2, &[]), (0, &[])], 3)),
            "state: tasks[2].id: #2 is already the id of tasks[1]"
        );
        assert_eq!(
            refused(state(&[(3, &[]), (-1, &[]), (3, &[])], 4)),
            "state: tasks[2].id: ids are integers from 1, got -1"
        );
        assert_eq!(
            refused(state(&[(-2, &[]), (0, &[]), (1, &[])], 2)),
            "state: tasks[1].id: ids are integers from 1, got -2"
        );
        // Unsorted ids are looked up as sorted ones are.
        assert_eq!(
            refused(state(&[(5, &[]), (2, &[9]), (7, &[5])], 8)),
            "state: tasks[2].blockedBy: #9 is not in the list"
        );
        assert_eq!(
            refused(state(&[(5, &[7]), (2, &[5]), (7, &[2])], 8)),
            "state: tasks: the blockedBy edges form a cycle through #5"
        );
        assert!(state(&[(5, &[7]), (2, &[5]), (7, &[])], 8)
            .validate()
            .is_ok());
        assert!(state(&[(2, &[5]), (5, &[7]), (7, &[])], 8)
            .validate()
            .is_ok());
        let max = MAX_SAFE_INTEGER;
        assert_eq!(
            refused(state(&[(max, &[])], max)),
            format!("state: tasks: id #{max} leaves no nextId a JSON number holds exactly")
        );
    }

    #[test]
    fn a_next_id_that_is_not_past_every_id_is_raised_past_the_largest() {
        for next in [-4, 0, 1, 5] {
            let s = state(&[(5, &[]), (2, &[5])], next).validate().unwrap();
            assert_eq!(s.next_id, 6, "nextId {next}");
        }
        assert_eq!(state(&[], 0).validate().unwrap().next_id, 1);
        // A nextId past the largest id is kept, gaps and all; so are unsorted ids.
        let s = state(&[(9, &[]), (3, &[9])], 40).validate().unwrap();
        assert_eq!((s.next_id, s.tasks[0].id), (40, 9));
    }

    #[test]
    fn a_long_acyclic_chain_and_a_diamond_are_accepted() {
        let chain: Vec<(Id, Vec<Id>)> = (1..=100_000)
            .map(|k| (k, if k > 1 { vec![k - 1] } else { vec![] }))
            .collect();
        let refs: Vec<(Id, &[Id])> = chain.iter().map(|(k, d)| (*k, d.as_slice())).collect();
        assert!(state(&refs, 100_001).validate().is_ok());
        assert!(state(&[(1, &[]), (2, &[1]), (3, &[1]), (4, &[2, 3, 3])], 5)
            .validate()
            .is_ok());
    }

    #[test]
    fn status_names_round_trip() {
        for s in Status::ALL {
            assert_eq!(Status::parse(s.as_str()), Some(s));
        }
        assert_eq!(Status::parse("done"), None);
    }
}
