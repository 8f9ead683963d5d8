//! Lua exports of the overlay core: `core.overlay_view` (what the Lua layout draws, in one
//! call), `core.overlay_live` (a live overlay's memory of what a person saw) and
//! `core._overlay_layout` (the selection alone, for tests). Every decision comes from
//! `crate::overlay`; this file only reads the source and writes Lua tables.
//!
//! Sources: a `core.list` handle is read in place (nothing is re-materialised: a live
//! paint costs the rows it draws, not the list); a host's state table is read with the
//! raw C API (each task's `status`, `id` and whether `blockedBy` is non-empty).

use mlua::{Lua, Table, UserData, UserDataMethods, Value as LuaValue};

use super::list::List;
use super::raw::write;
use super::{api_error, guarded, state_arg, Ctx};
use crate::error::Error;
use crate::overlay::{self, Entry, Panel, Seen};
use crate::task::{Status, Task};

/// `core.overlay_live()`: what one live overlay remembers (see `overlay::Seen`).
#[derive(Default)]
pub struct Live(pub Seen);

impl UserData for Live {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method_mut("reset", |_, this, ()| {
            this.0.reset();
            Ok(())
        });
        m.add_method_mut("turn_started", |_, this, ()| {
            this.0.turn_started();
            Ok(())
        });
        m.add_method("hidden", |lua, this, ()| {
            guarded(lua, "overlay_live:hidden", || {
                lua.create_sequence_from(this.0.hidden_ids())
            })
        });
        m.add_method("shown", |lua, this, ()| {
            guarded(lua, "overlay_live:shown", || {
                lua.create_sequence_from(this.0.shown_ids())
            })
        });
        m.add_meta_method("__tostring", |lua, this, ()| {
            guarded(lua, "overlay_live:__tostring", || {
                lua.create_string(format!(
                    "rpiv_todo.overlay_live ({} hidden, {} shown)",
                    this.0.hidden_ids().len(),
                    this.0.shown_ids().len()
                ))
            })
        });
    }
}

/// Add the overlay functions to the `rpiv_todo.core` table.
pub fn register(lua: &Lua, core: &Table) -> mlua::Result<()> {
    core.set(
        "overlay_live",
        lua.create_function(|lua, ()| {
            guarded(lua, "overlay_live", || lua.create_userdata(Live::default()))
        })?,
    )?;
    core.set(
        "overlay_view",
        lua.create_function(
            |lua,
             (source, budget, live, collapsed, with_tasks): (
                LuaValue,
                Option<f64>,
                LuaValue,
                Option<bool>,
                Option<bool>,
            )| {
                guarded(lua, "overlay_view", || {
                    view(
                        lua,
                        &source,
                        budget_of(budget),
                        &live,
                        collapsed.unwrap_or(false),
                        with_tasks.unwrap_or(false),
                    )
                })
            },
        )?,
    )?;
    core.set(
        "_overlay_layout",
        lua.create_function(
            |lua, (state, budget, retired): (LuaValue, f64, Option<Table>)| {
                guarded(lua, "overlay_layout", || {
                    layout(lua, &state, budget_of(Some(budget)), retired)
                })
            },
        )?,
    )?;
    Ok(())
}

/// Rows under the heading; nil, NaN and negatives are 0, huge values "everything".
fn budget_of(budget: Option<f64>) -> usize {
    match budget {
        Some(b) if b >= usize::MAX as f64 => usize::MAX,
        Some(b) if b >= 0.0 => b as usize,
        _ => 0,
    }
}

/// Ids to leave out, from a table `{ [id] = true }` (the stateless render's `hidden`).
fn retired_ids(t: &Table) -> std::collections::HashSet<i64> {
    t.pairs::<i64, bool>()
        .filter_map(|p| p.ok())
        .filter_map(|(id, on)| on.then_some(id))
        .collect()
}

/// How the panel leaves tasks out: a live overlay's memory, a fixed set, or not at all.
enum HiddenTasks<'a> {
    None,
    LiveOverlay(&'a mut Seen),
    FixedIds(std::collections::HashSet<i64>),
}

impl HiddenTasks<'_> {
    /// The panel for these entries; a live overlay is brought up to date and, when the
    /// rows are drawn, told which completed tasks were seen.
    fn panel(
        &mut self,
        entries: &[Entry],
        next_id: Option<f64>,
        budget: usize,
        collapsed: bool,
    ) -> Panel {
        match self {
            HiddenTasks::None => overlay::panel(entries, budget, |_| false),
            HiddenTasks::LiveOverlay(seen) => seen.panel(entries, next_id, budget, !collapsed),
            HiddenTasks::FixedIds(ids) => overlay::panel(entries, budget, |e| {
                e.id.is_some_and(|id| ids.contains(&id))
            }),
        }
    }
}

/// The array metatable alone (the full `Ctx` costs three reference copies).
fn array_mt(lua: &Lua) -> mlua::Result<Table> {
    match lua.app_data_ref::<Ctx>() {
        Some(ctx) => Ok(ctx.array_mt.clone()),
        None => Err(mlua::Error::runtime(
            "rpiv_todo.core: not initialised in this Lua state",
        )),
    }
}

type View = (Table, Table, bool, usize, usize, usize);

/// `core.overlay_view(source, budget, live, collapsed, with_tasks)` ->
/// `rows, counts, show_ids, hidden_completed, truncated_tail, longest`.
///
/// `source`: a list handle (rows are row views: `id`, `status`, sanitized `subject`,
/// `activeForm` when non-empty, `blockedBy` when non-empty, and the whole `task` when
/// `with_tasks`), a state table (rows are the caller's own task tables, for the Lua layer
/// to view), or anything else (nothing to show). `live`: an `overlay_live` (brought up to
/// date with the list, and told what was seen unless `collapsed`), a table of ids to leave
/// out, or nil. `counts`: `{ total, pending, in_progress, completed }`. `longest`: from a
/// list handle, no row view's `subject` or `activeForm` is longer (bytes; the layer clips
/// only when a text may pass its bound), else 0.
fn view(
    lua: &Lua,
    source: &LuaValue,
    budget: usize,
    live: &LuaValue,
    collapsed: bool,
    with_tasks: bool,
) -> mlua::Result<View> {
    let mut live_ref = match live {
        LuaValue::UserData(ud) => Some(ud.borrow_mut::<Live>()?),
        _ => None,
    };
    let mut hidden = match (&mut live_ref, live) {
        (Some(l), _) => HiddenTasks::LiveOverlay(&mut l.0),
        (None, LuaValue::Table(t)) => HiddenTasks::FixedIds(retired_ids(t)),
        _ => HiddenTasks::None,
    };
    match source {
        LuaValue::UserData(ud) if ud.is::<List>() => {
            let list = ud.borrow::<List>()?;
            // With the shipped row function the row views reach no host code, so they
            // can be handed out again: the whole view while the list is unchanged and
            // nothing is hidden, else each row whose task shows the same as before.
            // Counts are always new: a host's heading may keep or change them. (A view
            // asked for from inside this one, by a finalizer, draws without the memo.)
            let mut memo = match with_tasks {
                false => list.memo.try_borrow_mut().ok().and_then(|slot| {
                    std::cell::RefMut::filter_map(slot, |s| {
                        s.get_or_insert_with(|| Box::new(ViewMemo::default()))
                            .downcast_mut::<ViewMemo>()
                    })
                    .ok()
                }),
                true => None,
            };
            if let Some(m) = memo.as_deref_mut() {
                if m.revision != list.revision() {
                    m.changed();
                    m.revision = list.revision();
                }
            }
            let reuse = memo.is_some();
            let whole = reuse && matches!(hidden, HiddenTasks::None);
            if let (true, Some(m)) = (whole, memo.as_deref()) {
                if let (Some(w), Some(rows)) = (&m.whole, &m.rows) {
                    if w.budget == budget && w.collapsed == collapsed {
                        let counts = counts_table(lua, &w.panel)?;
                        return Ok(view_of(rows.clone(), counts, &w.panel, w.longest));
                    }
                }
            }
            let tasks = &list.state().tasks;
            // What the panel needs of each task, kept while the list is unchanged.
            let entries = match memo.as_deref_mut().and_then(|m| m.entries.take()) {
                Some(e) => e,
                None => tasks.iter().map(Entry::of).collect(),
            };
            let panel = hidden.panel(
                &entries,
                Some(list.state().next_id as f64),
                budget,
                collapsed,
            );
            let visible: &[usize] = if collapsed {
                &[]
            } else {
                &panel.layout.visible
            };
            let mt = if with_tasks {
                LuaValue::Table(array_mt(lua)?)
            } else {
                LuaValue::Nil
            };
            let earlier = memo.as_deref().and_then(|m| m.rows.clone());
            let mut old = Shown::from(
                memo.as_deref_mut()
                    .map(|m| std::mem::take(&mut m.shown))
                    .unwrap_or_default(),
            );
            let mut shown = Vec::with_capacity(if reuse { visible.len() } else { 0 });
            let (rows, counts) = write::rows(
                lua,
                mt,
                earlier,
                tasks,
                visible,
                &panel.layout.counts,
                |t, k| {
                    if !reuse {
                        return None;
                    }
                    match old.take(t, k) {
                        Some((slot, fields)) => {
                            shown.push(fields);
                            Some(slot)
                        }
                        None => {
                            shown.push(RowFields::of(t));
                            None
                        }
                    }
                },
            )?;
            let longest = longest(tasks, &panel);
            if let Some(memo) = memo.as_deref_mut() {
                memo.entries = Some(entries);
                memo.shown = shown;
                memo.rows = Some(rows.clone());
                memo.whole = whole.then(|| Whole {
                    budget,
                    collapsed,
                    panel: panel.clone(),
                    longest,
                });
            }
            Ok(view_of(rows, counts, &panel, longest))
        }
        LuaValue::Table(state) => {
            let tasks = match state.raw_get::<LuaValue>("tasks")? {
                LuaValue::Table(t) => Some(t),
                _ => None,
            };
            let next_id = match state.raw_get::<LuaValue>("nextId")? {
                LuaValue::Integer(n) => Some(n as f64),
                LuaValue::Number(n) if !n.is_nan() => Some(n),
                _ => None,
            };
            let entries = match &tasks {
                Some(t) => read_entries(t, FieldsToRead::for_hidden(&hidden))?
                    .map_err(|at| bad_status("overlay_view", at))?,
                None => Vec::new(),
            };
            let panel = hidden.panel(&entries, next_id, budget, collapsed);
            let empty = lua.create_table()?;
            let tasks = tasks.unwrap_or_else(|| empty.clone());
            let visible: &[usize] = if collapsed {
                &[]
            } else {
                &panel.layout.visible
            };
            let (rows, counts) = pick(lua, &tasks, visible, &panel)?;
            Ok(view_of(rows, counts, &panel, 0))
        }
        _ => {
            let panel = hidden.panel(&[], None, budget, collapsed);
            let (rows, counts) = pick(lua, &lua.create_table()?, &[], &panel)?;
            Ok(view_of(rows, counts, &panel, 0))
        }
    }
}

fn view_of(rows: Table, counts: Table, panel: &Panel, longest: usize) -> View {
    (
        rows,
        counts,
        panel.show_ids,
        panel.layout.hidden_completed,
        panel.layout.truncated_tail,
        longest,
    )
}

/// The longest `subject` or `activeForm` of the tasks a panel shows, in bytes before
/// sanitizing (which only drops bytes): a bound on its row views' texts.
fn longest(tasks: &[crate::task::Task], panel: &Panel) -> usize {
    panel
        .layout
        .visible
        .iter()
        .filter_map(|&i| tasks.get(i))
        .map(|t| {
            t.subject
                .len()
                .max(t.active_form.as_ref().map_or(0, String::len))
        })
        .max()
        .unwrap_or(0)
}

/// What a list keeps of the last view drawn from it with the shipped row function (see
/// `view`), in its opaque memo slot; stale once the list's revision moved.
#[derive(Default)]
struct ViewMemo {
    /// The list's revision this memo was drawn from.
    revision: u64,
    /// The view as a whole, while the list is unchanged and nothing was hidden.
    whole: Option<Whole>,
    /// What the panel needs of each task, while the list is unchanged.
    entries: Option<Vec<Entry>>,
    /// The rows table last handed out, and what each of its rows shows.
    rows: Option<Table>,
    shown: Vec<RowFields>,
}

impl ViewMemo {
    /// The list changed: the whole view is stale; each row is checked against its task.
    fn changed(&mut self) {
        self.whole = None;
        self.entries = None;
    }
}

struct Whole {
    budget: usize,
    collapsed: bool,
    panel: Panel,
    /// `longest` of the view (see `view`).
    longest: usize,
}

/// A task as far as its row view shows it (the text before it is sanitized).
struct RowFields {
    id: crate::task::Id,
    status: Status,
    subject: String,
    active_form: Option<String>,
    blocked_by: Vec<crate::task::Id>,
}

impl RowFields {
    fn of(t: &Task) -> RowFields {
        RowFields {
            id: t.id,
            status: t.status,
            subject: t.subject.clone(),
            active_form: t.active_form.clone(),
            blocked_by: t.blocked_by().to_vec(),
        }
    }

    fn shows(&self, t: &Task) -> bool {
        self.id == t.id
            && self.status == t.status
            && self.subject == t.subject
            && self.active_form == t.active_form
            && self.blocked_by == t.blocked_by()
    }
}

/// The earlier rows, each handed out again at most once, found by id: a scan for a
/// panel's dozen rows, a map for an expanded list.
struct Shown {
    rows: Vec<Option<RowFields>>,
    by_id: Option<std::collections::HashMap<crate::task::Id, usize>>,
}

impl Shown {
    fn from(rows: Vec<RowFields>) -> Shown {
        let by_id =
            (rows.len() > 32).then(|| rows.iter().enumerate().map(|(i, r)| (r.id, i)).collect());
        Shown {
            rows: rows.into_iter().map(Some).collect(),
            by_id,
        }
    }

    /// The slot (0-based) and fields of the earlier row that shows `t` as it is now; the
    /// row at `hint` (the same place in the panel) is looked at first.
    fn take(&mut self, t: &Task, hint: usize) -> Option<(usize, RowFields)> {
        let at_hint = matches!(self.rows.get(hint), Some(Some(r)) if r.id == t.id);
        let slot = match (&self.by_id, at_hint) {
            (_, true) => hint,
            (Some(map), false) => *map.get(&t.id)?,
            (None, false) => self
                .rows
                .iter()
                .position(|r| r.as_ref().is_some_and(|r| r.id == t.id))?,
        };
        let entry = self.rows.get_mut(slot)?;
        if !entry.as_ref().is_some_and(|r| r.shows(t)) {
            return None;
        }
        entry.take().map(|fields| (slot, fields))
    }
}

/// `{ total, pending, in_progress, completed }` (the Lua layer's spelling).
fn counts_table(lua: &Lua, panel: &Panel) -> mlua::Result<Table> {
    write::counts(lua, &panel.layout.counts)
}

fn bad_status(func: &str, at: usize) -> mlua::Error {
    api_error(
        func,
        Error::input(
            format!("tasks[{at}].status"),
            "one of pending, in_progress, completed, deleted",
            "something else",
        ),
    )
}

/// Which fields of a host's task tables a panel needs besides `status`: every C API read
/// costs (LuaJIT cannot compile across them), so nothing is read that cannot change it.
#[derive(Clone, Copy, PartialEq)]
enum FieldsToRead {
    /// No task can be hidden: no ids; `blockedBy` only until one live task waits.
    Nothing,
    /// A live overlay hides completed tasks only: ids of completed tasks; `blockedBy`
    /// until an unfinished task waits (a completed one might be hidden).
    CompletedIds,
    /// A fixed set of ids may hide anything: every id and every `blockedBy`.
    AllIds,
}

impl FieldsToRead {
    fn for_hidden(hidden: &HiddenTasks) -> FieldsToRead {
        match hidden {
            HiddenTasks::None => FieldsToRead::Nothing,
            HiddenTasks::LiveOverlay(_) => FieldsToRead::CompletedIds,
            HiddenTasks::FixedIds(_) => FieldsToRead::AllIds,
        }
    }
}

/// Read a host's task array: each entry's status and, as `to_read` says, its integer id and
/// whether it waits on another (`blocked` is exact until `show_ids` is settled, false
/// after). `Err(i)`: entry `i` (1-based) is not a task table with a known status. The
/// array is read up to its first hole: its length may be a border far past the entries
/// there are, so nothing is sized from it.
fn read_entries(tasks: &Table, to_read: FieldsToRead) -> mlua::Result<Result<Vec<Entry>, usize>> {
    let mut out = Vec::new();
    let mut settled = false;
    for i in 1..=tasks.raw_len() {
        let entry = match tasks.raw_get::<LuaValue>(i)? {
            LuaValue::Table(t) => read_entry(&t, to_read, settled)?,
            _ => None,
        };
        let Some(e) = entry else {
            return Ok(Err(i));
        };
        // Once a task that cannot be hidden waits on another, rows carry ids whatever
        // the rest say.
        settled |= e.blocked
            && match to_read {
                FieldsToRead::Nothing => e.status != Status::Deleted,
                FieldsToRead::CompletedIds => {
                    matches!(e.status, Status::Pending | Status::InProgress)
                }
                FieldsToRead::AllIds => false,
            };
        out.push(e);
    }
    Ok(Ok(out))
}

/// A host's task table as an entry, or `None` without a known status.
fn read_entry(t: &Table, to_read: FieldsToRead, settled: bool) -> mlua::Result<Option<Entry>> {
    let status = match t.raw_get::<LuaValue>("status")? {
        LuaValue::String(s) => Status::parse_bytes(&s.as_bytes()),
        _ => None,
    };
    let Some(status) = status else {
        return Ok(None);
    };
    let wants_id = match to_read {
        FieldsToRead::Nothing => false,
        FieldsToRead::CompletedIds => status == Status::Completed,
        FieldsToRead::AllIds => true,
    };
    let id = match wants_id {
        true => match t.raw_get::<LuaValue>("id")? {
            LuaValue::Integer(n) => Some(n as f64),
            LuaValue::Number(n) => Some(n),
            _ => None,
        },
        false => None,
    }
    .filter(|x| x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0)
    .map(|x| x as i64);
    let blocked = !settled
        && status != Status::Deleted
        && matches!(t.raw_get::<LuaValue>("blockedBy")?, LuaValue::Table(b) if b.raw_len() > 0);
    Ok(Some(Entry {
        id,
        status,
        blocked,
    }))
}

/// A new array of the caller's own task tables at the visible indices (0-based), and
/// the counts table.
fn pick(
    lua: &Lua,
    tasks: &Table,
    visible: &[usize],
    panel: &Panel,
) -> mlua::Result<(Table, Table)> {
    let rows = lua.create_table_with_capacity(visible.len(), 0)?;
    for (k, &i) in visible.iter().enumerate() {
        rows.raw_set(
            k.saturating_add(1),
            tasks.raw_get::<LuaValue>(i.saturating_add(1))?,
        )?;
    }
    Ok((rows, counts_table(lua, panel)?))
}

/// `core._overlay_layout(state, budget, retired)` (for tests): `{ visible = { task... },
/// hiddenCompleted, truncatedTail, counts, showIds }`. From a list handle the visible
/// tasks are fresh tables; from a state table they are the caller's own.
fn layout(
    lua: &Lua,
    state: &LuaValue,
    budget: usize,
    retired: Option<Table>,
) -> mlua::Result<Table> {
    let mut hidden = match &retired {
        Some(t) => HiddenTasks::FixedIds(retired_ids(t)),
        None => HiddenTasks::None,
    };
    let (visible, panel) = match state {
        LuaValue::UserData(ud) if ud.is::<List>() => {
            let list = ud.borrow::<List>()?;
            let entries: Vec<Entry> = list.state().tasks.iter().map(Entry::of).collect();
            let panel = hidden.panel(&entries, None, budget, true);
            let tasks: Vec<&Task> = panel
                .layout
                .visible
                .iter()
                .map(|&i| &list.state().tasks[i])
                .collect();
            let visible = write::tasks(lua, &array_mt(lua)?, &tasks)?;
            (visible, panel)
        }
        LuaValue::Table(t) => {
            let tasks = match t.raw_get::<LuaValue>("tasks")? {
                LuaValue::Table(tasks) => tasks,
                LuaValue::Nil => lua.create_table()?,
                other => {
                    return Err(api_error(
                        "overlay_layout",
                        Error::input("tasks", "an array", other.type_name()),
                    ))
                }
            };
            let entries = read_entries(&tasks, FieldsToRead::for_hidden(&hidden))?
                .map_err(|at| bad_status("overlay_layout", at))?;
            let panel = hidden.panel(&entries, None, budget, true);
            let (visible, _) = pick(lua, &tasks, &panel.layout.visible, &panel)?;
            if panel.layout.visible.is_empty() {
                visible.set_metatable(Some(array_mt(lua)?))?;
            }
            (visible, panel)
        }
        other => {
            let s = state_arg(lua, &Ctx::get(lua)?, other, "overlay_layout")?;
            let list = lua.create_userdata(List::new(s))?;
            return layout(lua, &LuaValue::UserData(list), budget, retired);
        }
    };
    let c = panel.layout.counts;
    // The counts keep the wire spelling here (inProgress), which host layouts read.
    let counts = lua.create_table_with_capacity(0, 4)?;
    counts.raw_set("total", c.total)?;
    counts.raw_set("pending", c.pending)?;
    counts.raw_set("inProgress", c.in_progress)?;
    counts.raw_set("completed", c.completed)?;
    let out = lua.create_table_with_capacity(0, 5)?;
    out.raw_set("visible", visible)?;
    out.raw_set("hiddenCompleted", panel.layout.hidden_completed)?;
    out.raw_set("truncatedTail", panel.layout.truncated_tail)?;
    out.raw_set("counts", counts)?;
    out.raw_set("showIds", panel.show_ids)?;
    Ok(out)
}
