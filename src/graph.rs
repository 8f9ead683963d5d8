//! The `blockedBy` graph: the cycle check for new edges and the reverse `blocks` edges.
//! Both walk the graph iteratively, so a chain of any length cannot overflow a stack.

use crate::task::{Id, State};

/// Would making `task` wait on each of `new_deps` close a cycle? True when `task` is
/// already reachable from one of them by following `blockedBy` edges. Each task is
/// visited once: linear in the list and the new edges.
pub fn would_cycle(state: &State, task: Id, new_deps: &[Id]) -> bool {
    let index = state.index();
    let mut seen = vec![false; state.tasks.len()];
    let mut stack: Vec<Id> = new_deps.to_vec();
    while let Some(id) = stack.pop() {
        if id == task {
            return true;
        }
        let Some(pos) = index.position(id) else {
            continue;
        };
        if std::mem::replace(&mut seen[pos], true) {
            continue;
        }
        stack.extend_from_slice(state.tasks[pos].blocked_by());
    }
    false
}

/// Ids of the tasks that wait on `id`, tombstones included, in list order; a task that
/// names `id` twice appears twice (as the reference prints it).
pub fn blocks(state: &State, id: Id) -> Vec<Id> {
    state
        .tasks
        .iter()
        .flat_map(|t| {
            t.blocked_by()
                .iter()
                .filter(move |&&d| d == id)
                .map(move |_| t.id)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::Task;

    fn chain(n: i64) -> State {
        // task k waits on task k-1: 1 <- 2 <- 3 ...
        let tasks = (1..=n)
            .map(|k| {
                let mut t = Task::new(k, format!("t{k}"));
                if k > 1 {
                    t.blocked_by = Some(vec![k - 1]);
                }
                t
            })
            .collect();
        State {
            tasks,
            next_id: n + 1,
        }
    }

    #[test]
    fn an_edge_back_to_the_head_of_a_chain_is_a_cycle() {
        let s = chain(4);
        assert!(would_cycle(&s, 1, &[4]));
        assert!(would_cycle(&s, 2, &[3]));
        assert!(!would_cycle(&s, 4, &[1]));
        assert!(!would_cycle(&s, 3, &[1, 2]));
    }

    #[test]
    fn a_hundred_thousand_task_chain_is_checked_without_recursion() {
        let s = chain(100_000);
        assert!(would_cycle(&s, 1, &[100_000]));
        assert!(!would_cycle(&s, 100_000, &[1]));
    }

    #[test]
    fn unknown_ids_in_a_replayed_graph_are_skipped() {
        let mut s = chain(2);
        s.tasks[0].blocked_by = Some(vec![42]);
        assert!(!would_cycle(&s, 2, &[1]));
    }

    #[test]
    fn blocks_lists_every_waiting_task_with_duplicates() {
        let mut s = chain(3);
        s.tasks[2].blocked_by = Some(vec![1, 1]);
        assert_eq!(blocks(&s, 1), vec![2, 3, 3]);
        assert_eq!(blocks(&s, 3), Vec::<Id>::new());
    }
}
