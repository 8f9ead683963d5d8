//! The overlay's decisions, made once, here: which tasks the panel works over (the live
//! overlay hides completed tasks after the turn they were seen in), which of them fit its
//! budget, the counts its heading shows and whether rows carry `#id`. The text of each
//! line is the Lua layer's business (its layout and themes are overridable).
//!
//! The budget rule (recorded in `tests/fixtures/overlay-cases.jsonl`): tombstones are never
//! shown. When the live tasks fit in `budget` rows they are all shown. Otherwise one row is
//! kept for the `+N more` summary, completed tasks are dropped first, newest first, and if
//! the unfinished tasks alone still overflow, their tail is cut.

use std::collections::HashSet;

use crate::task::{Id, Status, Task};

/// The rows the panel shows for one budget.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// Indices into the input slice, in display (input) order.
    pub visible: Vec<usize>,
    /// Completed tasks left out to make room.
    pub hidden_completed: usize,
    /// Unfinished tasks cut from the end of the list.
    pub truncated_tail: usize,
    /// The counts the heading shows, from the same pass.
    pub counts: Counts,
}

impl Layout {
    /// Tasks left out, i.e. the `N` of the `+N more` summary (0: no summary row).
    pub fn hidden(&self) -> usize {
        self.hidden_completed + self.truncated_tail
    }
}

/// Tasks per status; `total` leaves tombstones out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Every task that is not a tombstone.
    pub total: usize,
    /// Tasks with status `pending`.
    pub pending: usize,
    /// Tasks with status `in_progress`.
    pub in_progress: usize,
    /// Tasks with status `completed`.
    pub completed: usize,
}

/// The [`Counts`] of a task list.
pub fn counts(tasks: &[Task]) -> Counts {
    counts_of(tasks.iter().map(|t| t.status))
}

fn counts_of(statuses: impl Iterator<Item = Status>) -> Counts {
    let mut c = Counts::default();
    for s in statuses {
        match s {
            Status::Pending => c.pending += 1,
            Status::InProgress => c.in_progress += 1,
            Status::Completed => c.completed += 1,
            Status::Deleted => continue,
        }
        c.total += 1;
    }
    c
}

/// Select the rows for a panel of `budget` rows under the heading. On overflow the
/// selection uses `budget - 1` rows so that the summary row fits; a budget below 2 is
/// the caller's mistake (the Lua layer floors `max_widget_lines` at 3) and yields an
/// empty selection with everything counted as hidden, never a panic.
#[cfg(test)]
fn overlay_layout(tasks: &[Task], budget: usize) -> Layout {
    let statuses: Vec<Status> = tasks.iter().map(|t| t.status).collect();
    select(&statuses, budget)
}

/// The selection itself, on statuses alone (index = position in the list): the Lua
/// boundary reads only `status` from a host's task tables.
pub fn select(statuses: &[Status], budget: usize) -> Layout {
    let c = counts_of(statuses.iter().copied());
    choose(statuses.iter().copied().map(Some), c, budget)
}

/// The rows for `budget` given every position's status (`None`: left out, like a
/// tombstone) and the counts over them.
fn choose(statuses: impl Iterator<Item = Option<Status>>, c: Counts, budget: usize) -> Layout {
    let (keep_completed, keep_unfinished, hidden_completed, truncated_tail) = if c.total <= budget {
        (c.completed, c.total - c.completed, 0, 0)
    } else {
        let rows = budget.saturating_sub(1);
        let unfinished = c.total - c.completed;
        // Completed go first; dropping the newest first keeps the oldest `keep_completed`.
        let hidden_completed = (c.total - rows).min(c.completed);
        // Only when every completed task is gone can the unfinished still overflow.
        let truncated_tail = (c.total - hidden_completed).saturating_sub(rows);
        (
            c.completed - hidden_completed,
            unfinished - truncated_tail,
            hidden_completed,
            truncated_tail,
        )
    };
    let mut visible = Vec::with_capacity(keep_completed + keep_unfinished);
    let (mut kept_completed, mut kept_unfinished) = (0, 0);
    for (i, s) in statuses.enumerate() {
        match s {
            None | Some(Status::Deleted) => {}
            Some(Status::Completed) => {
                if kept_completed < keep_completed {
                    kept_completed += 1;
                    visible.push(i);
                }
            }
            Some(Status::Pending | Status::InProgress) => {
                if kept_unfinished < keep_unfinished {
                    kept_unfinished += 1;
                    visible.push(i);
                }
            }
        }
        // The rest of a long list cannot add a row.
        if kept_completed == keep_completed && kept_unfinished == keep_unfinished {
            break;
        }
    }
    Layout {
        visible,
        hidden_completed,
        truncated_tail,
        counts: c,
    }
}

/// What the panel needs to know of one task: a list's own task or a host's task table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// `None` for an id that is not an integer (a host's malformed table): such a task is
    /// shown but never remembered as seen.
    pub id: Option<Id>,
    /// Where the task is in its life.
    pub status: Status,
    /// It waits on another task (a non-empty `blockedBy`).
    pub blocked: bool,
}

impl Entry {
    /// The entry of a list's own task.
    pub fn of(task: &Task) -> Entry {
        Entry {
            id: Some(task.id),
            status: task.status,
            blocked: !task.blocked_by().is_empty(),
        }
    }
}

/// One render's decisions over a list of entries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Panel {
    /// The selection; `visible` indexes the entries given to [`panel`] (hidden ones are
    /// never visible), the counts leave hidden ones out.
    pub layout: Layout,
    /// Rows carry `#id`: some task the panel works over waits on another.
    pub show_ids: bool,
}

/// Decide the panel for `entries` at `budget` rows, leaving out the entries `hidden`
/// says the person already saw in an earlier turn (they leave the counts too: the heading
/// adds up to the rows plus the summary).
pub fn panel(entries: &[Entry], budget: usize, hidden: impl Fn(&Entry) -> bool) -> Panel {
    let mut c = Counts::default();
    let mut show_ids = false;
    let mut any_hidden = false;
    for e in entries {
        if hidden(e) {
            any_hidden = true;
            continue;
        }
        match e.status {
            Status::Pending => c.pending += 1,
            Status::InProgress => c.in_progress += 1,
            Status::Completed => c.completed += 1,
            Status::Deleted => continue,
        }
        c.total += 1;
        show_ids |= e.blocked;
    }
    let layout = if any_hidden {
        choose(
            entries.iter().map(|e| (!hidden(e)).then_some(e.status)),
            c,
            budget,
        )
    } else {
        choose(entries.iter().map(|e| Some(e.status)), c, budget)
    };
    Panel { layout, show_ids }
}

/// Hashing for task ids: a multiply and a rotate. Ids are small integers handed out in
/// sequence, and the sets hold a few hundred of them; SipHash cost more than the rest of
/// a live paint.
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_i64(&mut self, n: i64) {
        self.0 = (n as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(26);
    }
}

/// A set of task ids.
pub type IdSet = HashSet<Id, std::hash::BuildHasherDefault<IdHasher>>;

/// What a live overlay remembers of what a person saw (the panel's rule): completed
/// tasks shown during the current turn, and those shown in an earlier turn, which hide.
#[derive(Clone, Debug, Default)]
pub struct Seen {
    shown: IdSet,
    hidden: IdSet,
    last_next_id: Option<f64>,
    /// The list as last brought up to date (and whether its rows were drawn): a repaint
    /// of an unchanged list changes nothing, so it skips the bookkeeping.
    last: Option<(Vec<Entry>, Option<f64>, bool)>,
}

impl Seen {
    /// Forget everything (a reload or replay of the list).
    pub fn reset(&mut self) {
        *self = Seen::default();
    }

    /// A new agent turn: completed tasks already shown hide from now on.
    pub fn turn_started(&mut self) {
        self.hidden.extend(self.shown.drain());
        self.last = None;
    }

    /// The panel for `entries` (`next_id`: the list's, when known), with the tasks shown
    /// in an earlier turn left out; `draws_rows` (not collapsed): every completed task the
    /// panel works over counts as seen this turn.
    pub fn panel(
        &mut self,
        entries: &[Entry],
        next_id: Option<f64>,
        budget: usize,
        draws_rows: bool,
    ) -> Panel {
        let unchanged = self
            .last
            .as_ref()
            .is_some_and(|(last, last_next, recorded)| {
                *last_next == next_id && (*recorded || !draws_rows) && last.as_slice() == entries
            });
        if !unchanged {
            self.observe(entries, next_id);
        }
        let out = panel(entries, budget, |e| self.hides(e));
        if !unchanged {
            let recorded = draws_rows && out.layout.counts.total > 0;
            if recorded {
                self.record(entries);
            }
            self.last = Some((entries.to_vec(), next_id, recorded));
        }
        out
    }

    /// Bring the memory up to date with the list about to be drawn: a shrinking `nextId`
    /// means the list was cleared and ids may be handed out again (forget everything);
    /// ids that are no longer completed tasks are forgotten.
    fn observe(&mut self, entries: &[Entry], next_id: Option<f64>) {
        if let Some(next) = next_id {
            if self.last_next_id.is_some_and(|last| next < last) {
                self.reset();
            }
            self.last_next_id = Some(next);
        }
        if self.shown.is_empty() && self.hidden.is_empty() {
            return;
        }
        let completed: IdSet = entries
            .iter()
            .filter(|e| e.status == Status::Completed)
            .filter_map(|e| e.id)
            .collect();
        self.shown.retain(|id| completed.contains(id));
        self.hidden.retain(|id| completed.contains(id));
    }

    /// Is this a completed task shown in an earlier turn?
    pub fn hides(&self, e: &Entry) -> bool {
        e.status == Status::Completed
            && !self.hidden.is_empty()
            && e.id.is_some_and(|id| self.hidden.contains(&id))
    }

    /// Every completed task the panel works over was seen this turn (also those the
    /// budget left out: the summary counted them).
    fn record(&mut self, entries: &[Entry]) {
        for e in entries {
            if e.status == Status::Completed {
                if let Some(id) = e.id {
                    if !self.hidden.contains(&id) {
                        self.shown.insert(id);
                    }
                }
            }
        }
    }

    /// The ids hidden after their turn, sorted.
    pub fn hidden_ids(&self) -> Vec<Id> {
        let mut ids: Vec<Id> = self.hidden.iter().copied().collect();
        ids.sort_unstable();
        ids
    }

    /// The ids shown during the current turn, sorted.
    pub fn shown_ids(&self) -> Vec<Id> {
        let mut ids: Vec<Id> = self.shown.iter().copied().collect();
        ids.sort_unstable();
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    const CASES: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/overlay-cases.jsonl"
    );

    /// Test-only: a task from the recorded JSON (only the fields the selection reads
    /// matter, but the rest are filled so the Task is faithful).
    fn task_from_json(v: &Value) -> Task {
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        let id = v["id"].as_i64().unwrap();
        let mut t = Task::new(id, text("subject").unwrap_or_default());
        t.status = Status::parse(v["status"].as_str().unwrap()).unwrap();
        t.description = text("description");
        t.active_form = text("activeForm");
        t.owner = text("owner");
        t.blocked_by = v
            .get("blockedBy")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_i64).collect());
        t.metadata = v.get("metadata").and_then(Value::as_object).cloned();
        t
    }

    fn tasks(spec: &[(i64, Status)]) -> Vec<Task> {
        spec.iter()
            .map(|&(id, status)| {
                let mut t = Task::new(id, format!("task {id}"));
                t.status = status;
                t
            })
            .collect()
    }

    fn visible_ids(tasks: &[Task], layout: &Layout) -> Vec<i64> {
        layout.visible.iter().map(|&i| tasks[i].id).collect()
    }

    #[test]
    fn every_recorded_overlay_case_selects_the_same_rows_and_counts() {
        let text = std::fs::read_to_string(CASES).unwrap();
        let mut checked = 0;
        for (n, line) in text.lines().enumerate() {
            let case: Value = serde_json::from_str(line).unwrap();
            if case["collapsed"] == Value::Bool(true) {
                continue; // collapsed cases carry no budget or layout
            }
            let ts: Vec<Task> = case["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .map(task_from_json)
                .collect();
            let budget = case["budget"].as_u64().unwrap() as usize;
            let layout = overlay_layout(&ts, budget);
            let want = &case["layout"];
            let want_ids: Vec<i64> = want["visible"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_i64().unwrap())
                .collect();
            assert_eq!(visible_ids(&ts, &layout), want_ids, "case {n} visible");
            assert_eq!(
                layout.hidden_completed as u64,
                want["hiddenCompleted"].as_u64().unwrap(),
                "case {n} hiddenCompleted"
            );
            assert_eq!(
                layout.truncated_tail as u64,
                want["truncatedTail"].as_u64().unwrap(),
                "case {n} truncatedTail"
            );
            let c = counts(&ts);
            let wc = &case["counts"];
            let got = [c.total, c.pending, c.in_progress, c.completed].map(|x| x as u64);
            let want_c =
                ["total", "pending", "inProgress", "completed"].map(|k| wc[k].as_u64().unwrap());
            assert_eq!(got, want_c, "case {n} counts");
            checked += 1;
        }
        assert_eq!(checked, 150, "every non-collapsed case was checked");
    }

    use Status::*;

    #[test]
    fn deleted_tasks_are_never_visible() {
        let ts = tasks(&[(1, Deleted), (2, Pending), (3, Deleted), (4, Completed)]);
        let l = overlay_layout(&ts, 10);
        assert_eq!(visible_ids(&ts, &l), [2, 4]);
        assert_eq!(l.hidden(), 0);
    }

    #[test]
    fn a_list_that_fits_the_budget_exactly_has_no_summary_row() {
        let ts = tasks(&[(1, Pending), (2, Completed), (3, InProgress)]);
        let l = overlay_layout(&ts, 3);
        assert_eq!(visible_ids(&ts, &l), [1, 2, 3]);
        assert_eq!((l.hidden_completed, l.truncated_tail), (0, 0));
    }

    #[test]
    fn tombstones_do_not_count_against_the_budget() {
        let ts = tasks(&[(1, Deleted), (2, Deleted), (3, Pending), (4, Pending)]);
        let l = overlay_layout(&ts, 2);
        assert_eq!(visible_ids(&ts, &l), [3, 4]);
        assert_eq!(l.hidden(), 0);
    }

    #[test]
    fn overflow_keeps_one_row_for_the_summary() {
        let ts = tasks(&[(1, Pending), (2, Pending), (3, Pending), (4, Pending)]);
        let l = overlay_layout(&ts, 3);
        assert_eq!(visible_ids(&ts, &l), [1, 2]);
        assert_eq!((l.hidden_completed, l.truncated_tail), (0, 2));
    }

    #[test]
    fn completed_tasks_are_dropped_first_newest_first() {
        let ts = tasks(&[
            (1, Completed),
            (2, Pending),
            (3, Completed),
            (4, InProgress),
            (5, Completed),
        ]);
        // 5 live, budget 4: 3 rows + summary, so two completed go: #5 then #3.
        let l = overlay_layout(&ts, 4);
        assert_eq!(visible_ids(&ts, &l), [1, 2, 4]);
        assert_eq!((l.hidden_completed, l.truncated_tail), (2, 0));
    }

    #[test]
    fn unfinished_tasks_overflowing_alone_lose_their_tail() {
        let ts = tasks(&[
            (1, Pending),
            (2, Completed),
            (3, InProgress),
            (4, Pending),
            (5, Pending),
        ]);
        // Budget 3: 2 rows. Dropping #2 leaves 4 unfinished; the last 2 are cut.
        let l = overlay_layout(&ts, 3);
        assert_eq!(visible_ids(&ts, &l), [1, 3]);
        assert_eq!((l.hidden_completed, l.truncated_tail), (1, 2));
    }

    #[test]
    fn visible_rows_keep_the_input_order() {
        let ts = tasks(&[
            (7, InProgress),
            (2, Completed),
            (9, Pending),
            (1, Completed),
        ]);
        let l = overlay_layout(&ts, 4);
        assert_eq!(l.visible, [0, 1, 2, 3]);
        let l = overlay_layout(&ts, 3);
        assert_eq!(visible_ids(&ts, &l), [7, 9]);
    }

    #[test]
    fn a_degenerate_budget_hides_everything_without_panicking() {
        let ts = tasks(&[(1, Completed), (2, Pending)]);
        for budget in [0, 1] {
            let l = overlay_layout(&ts, budget);
            assert!(l.visible.is_empty(), "budget {budget}");
            assert_eq!((l.hidden_completed, l.truncated_tail), (1, 1));
        }
        assert_eq!(overlay_layout(&[], 0), Layout::default());
    }

    #[test]
    fn counts_leave_tombstones_out_of_the_total() {
        let ts = tasks(&[
            (1, Pending),
            (2, InProgress),
            (3, Completed),
            (4, Deleted),
            (5, Completed),
        ]);
        assert_eq!(
            counts(&ts),
            Counts {
                total: 4,
                pending: 1,
                in_progress: 1,
                completed: 2
            }
        );
    }

    fn entries(spec: &[(i64, Status)]) -> Vec<Entry> {
        spec.iter()
            .map(|&(id, status)| Entry {
                id: Some(id),
                status,
                blocked: false,
            })
            .collect()
    }

    fn shown_ids(entries: &[Entry], p: &Panel) -> Vec<i64> {
        p.layout
            .visible
            .iter()
            .filter_map(|&i| entries[i].id)
            .collect()
    }

    #[test]
    fn the_panel_leaves_hidden_tasks_out_of_rows_counts_and_show_ids() {
        let mut es = entries(&[(1, Completed), (2, Pending), (3, Completed), (4, Deleted)]);
        es[0].blocked = true; // only the hidden task waits on another
        es[3].blocked = true; // and a tombstone
        let p = panel(&es, 10, |e| e.id == Some(1));
        assert_eq!(shown_ids(&es, &p), [2, 3]);
        assert_eq!(
            p.layout.counts,
            Counts {
                total: 2,
                pending: 1,
                in_progress: 0,
                completed: 1
            }
        );
        assert!(!p.show_ids);
        let p = panel(&es, 10, |_| false);
        assert!(p.show_ids);
        // Indices point into the entries given, past the hidden ones.
        let p = panel(&es, 2, |e| e.id == Some(1));
        assert_eq!(shown_ids(&es, &p), [2, 3]);
    }

    #[test]
    fn a_completed_task_seen_in_one_turn_hides_from_the_next() {
        let es = entries(&[(1, Completed), (2, Pending)]);
        let mut seen = Seen::default();
        let p = seen.panel(&es, Some(3.0), 11, true);
        assert_eq!(shown_ids(&es, &p), [1, 2]);
        // The same paint again within the turn changes nothing.
        let p = seen.panel(&es, Some(3.0), 11, true);
        assert_eq!(shown_ids(&es, &p), [1, 2]);
        seen.turn_started();
        let p = seen.panel(&es, Some(3.0), 11, true);
        assert_eq!(shown_ids(&es, &p), [2]);
        assert_eq!(p.layout.counts.total, 1);
        assert_eq!(seen.hidden_ids(), [1]);
    }

    #[test]
    fn a_collapsed_paint_sees_nothing_and_a_later_full_one_does() {
        let es = entries(&[(1, Completed), (2, Pending)]);
        let mut seen = Seen::default();
        seen.panel(&es, Some(3.0), 11, false);
        seen.turn_started();
        assert_eq!(seen.hidden_ids(), Vec::<i64>::new());
        // Same list, now drawn with rows: this time the completed task was seen.
        seen.panel(&es, Some(3.0), 11, false);
        seen.panel(&es, Some(3.0), 11, true);
        assert_eq!(seen.shown_ids(), [1]);
        seen.turn_started();
        assert_eq!(seen.hidden_ids(), [1]);
    }

    #[test]
    fn a_shrinking_next_id_or_an_id_no_longer_completed_is_forgotten() {
        let mut seen = Seen::default();
        let es = entries(&[(1, Completed), (2, Completed)]);
        seen.panel(&es, Some(3.0), 11, true);
        seen.turn_started();
        // #2 deleted: forgotten; #1 stays hidden.
        let es = entries(&[(1, Completed), (2, Deleted), (3, Pending)]);
        seen.panel(&es, Some(4.0), 11, true);
        assert_eq!(seen.hidden_ids(), [1]);
        // Cleared: nextId shrinks, the new #1 is another task and shows.
        let es = entries(&[(1, Completed)]);
        let p = seen.panel(&es, Some(2.0), 11, true);
        assert_eq!(shown_ids(&es, &p), [1]);
        assert_eq!(seen.hidden_ids(), Vec::<i64>::new());
    }

    #[test]
    fn tasks_without_an_integer_id_show_but_are_never_remembered() {
        let es = vec![Entry {
            id: None,
            status: Completed,
            blocked: false,
        }];
        let mut seen = Seen::default();
        seen.panel(&es, None, 11, true);
        seen.turn_started();
        let p = seen.panel(&es, None, 11, true);
        assert_eq!(p.layout.visible, [0]);
    }
}
