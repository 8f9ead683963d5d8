//! Overlay budget: which tasks fit in the panel above the editor, and the counts its
//! heading shows. Pure selection; the text of each line is the Lua layer's business.
//!
//! The rule (recorded in `tests/fixtures/overlay-cases.jsonl`): tombstones are never shown.
//! When the live tasks fit in `budget` rows they are all shown. Otherwise one row is kept
//! for the `+N more` summary, completed tasks are dropped first, newest first, and if the
//! unfinished tasks alone still overflow, their tail is cut.

use crate::task::{Status, Task};

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
pub fn overlay_layout(tasks: &[Task], budget: usize) -> Layout {
    let statuses: Vec<Status> = tasks.iter().map(|t| t.status).collect();
    select(&statuses, budget)
}

/// The selection itself, on statuses alone (index = position in the list): the Lua
/// boundary reads only `status` from a host's task tables.
pub fn select(statuses: &[Status], budget: usize) -> Layout {
    let c = counts_of(statuses.iter().copied());
    if c.total <= budget {
        let visible = statuses
            .iter()
            .enumerate()
            .filter(|(_, s)| **s != Status::Deleted)
            .map(|(i, _)| i)
            .collect();
        return Layout {
            visible,
            hidden_completed: 0,
            truncated_tail: 0,
            counts: c,
        };
    }

    let rows = budget.saturating_sub(1);
    let unfinished = c.total - c.completed;
    // Completed go first; dropping the newest first keeps the oldest `keep_completed`.
    let hidden_completed = (c.total - rows).min(c.completed);
    let keep_completed = c.completed - hidden_completed;
    // Only when every completed task is gone can the unfinished still overflow.
    let truncated_tail = (c.total - hidden_completed).saturating_sub(rows);
    let keep_unfinished = unfinished - truncated_tail;

    let mut visible = Vec::with_capacity(rows);
    let (mut kept_completed, mut kept_unfinished) = (0, 0);
    for (i, s) in statuses.iter().enumerate() {
        match s {
            Status::Deleted => {}
            Status::Completed => {
                if kept_completed < keep_completed {
                    kept_completed += 1;
                    visible.push(i);
                }
            }
            Status::Pending | Status::InProgress => {
                if kept_unfinished < keep_unfinished {
                    kept_unfinished += 1;
                    visible.push(i);
                }
            }
        }
    }
    Layout {
        visible,
        hidden_completed,
        truncated_tail,
        counts: c,
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
}
