//! Lua exports of the overlay core: `core.overlay_view` (what the Lua layout draws, in one
//! call), `core.overlay_live` (a live overlay's memory of what a person saw) and
//! `core.overlay_layout` (the selection alone). Every decision comes from
//! `crate::overlay`; this file only reads the source and writes Lua tables.
//!
//! Sources: a `core.list` handle is read in place (nothing is re-materialised: a live
//! paint costs the rows it draws, not the list); a host's state table is read with the
//! raw C API (each task's `status`, `id` and whether `blockedBy` is non-empty).

use std::ffi::c_int;

use mlua::{ffi, Lua, Table, UserData, UserDataMethods, Value as LuaValue};

use super::list::List;
use super::{api_error, guarded, state_arg, to_lua, Ctx};
use crate::error::Error;
use crate::overlay::{self, Entry, Panel, Seen};
use crate::task::{Status, Task};

type L = *mut ffi::lua_State;

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
        m.add_meta_method("__tostring", |_, this, ()| {
            Ok(format!(
                "rpiv_todo.overlay_live ({} hidden, {} shown)",
                this.0.hidden_ids().len(),
                this.0.shown_ids().len()
            ))
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
        "overlay_layout",
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
enum Hide<'a> {
    None,
    Live(&'a mut Seen),
    Ids(std::collections::HashSet<i64>),
}

impl Hide<'_> {
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
            Hide::None => overlay::panel(entries, budget, |_| false),
            Hide::Live(seen) => seen.panel(entries, next_id, budget, !collapsed),
            Hide::Ids(ids) => overlay::panel(entries, budget, |e| {
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

type View = (Table, Table, bool, usize, usize);

/// `core.overlay_view(source, budget, live, collapsed, with_tasks)` ->
/// `rows, counts, show_ids, hidden_completed, truncated_tail`.
///
/// `source`: a list handle (rows are row views: `id`, `status`, sanitized `subject`,
/// `activeForm` when non-empty, `blockedBy` when non-empty, and the whole `task` when
/// `with_tasks`), a state table (rows are the caller's own task tables, for the Lua layer
/// to view), or anything else (nothing to show). `live`: an `overlay_live` (brought up to
/// date with the list, and told what was seen unless `collapsed`), a table of ids to leave
/// out, or nil. `counts`: `{ total, pending, in_progress, completed }`.
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
    let mut hide = match (&mut live_ref, live) {
        (Some(l), _) => Hide::Live(&mut l.0),
        (None, LuaValue::Table(t)) => Hide::Ids(retired_ids(t)),
        _ => Hide::None,
    };
    match source {
        LuaValue::UserData(ud) if ud.is::<List>() => {
            let list = ud.borrow::<List>()?;
            // Nothing hidden and the shipped row function: the rows reach no host code,
            // so an unchanged list's rows are handed out again (counts are always new:
            // a host's heading may keep or change them).
            let memo = matches!(hide, Hide::None) && !with_tasks;
            if memo {
                if let Some(m) = list.view.borrow().as_ref() {
                    if m.budget == budget && m.collapsed == collapsed {
                        let counts = counts_table(lua, &m.panel)?;
                        return Ok(view_of(m.rows.clone(), counts, &m.panel));
                    }
                }
            }
            let tasks = &list.state().tasks;
            let entries: Vec<Entry> = tasks.iter().map(Entry::of).collect();
            let panel = hide.panel(
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
            // SAFETY: as in `to_lua::state`: the closure pushes values and sets fields of
            // the tables it made; it owns nothing that needs dropping if an allocation
            // error unwinds. Slot 1 is the array metatable `to_lua::push_task` reads.
            let (rows, counts): (Table, Table) = unsafe {
                lua.exec_raw(mt, |l| {
                    ffi::luaL_checkstack(l, 24, std::ptr::null());
                    let keys = RowKeys::push(l);
                    ffi::lua_createtable(l, visible.len().min(c_int::MAX as usize) as c_int, 0);
                    for (k, &i) in visible.iter().enumerate() {
                        push_row(l, &keys, &tasks[i], with_tasks);
                        ffi::lua_rawseti(l, -2, (k + 1) as _);
                    }
                    ffi::lua_replace(l, keys.first);
                    ffi::lua_settop(l, keys.first);
                    push_counts(l, &panel);
                    ffi::lua_remove(l, 1);
                })?
            };
            if memo {
                let view = view_of(rows.clone(), counts, &panel);
                *list.view.borrow_mut() = Some(ViewMemo {
                    budget,
                    collapsed,
                    rows,
                    panel,
                });
                return Ok(view);
            }
            Ok(view_of(rows, counts, &panel))
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
                Some(t) => read_entries(lua, t, Need::of(&hide))?
                    .map_err(|at| bad_status("overlay_view", at))?,
                None => Vec::new(),
            };
            let panel = hide.panel(&entries, next_id, budget, collapsed);
            let empty = lua.create_table()?;
            let tasks = tasks.unwrap_or_else(|| empty.clone());
            let visible: &[usize] = if collapsed {
                &[]
            } else {
                &panel.layout.visible
            };
            let (rows, counts) = pick(lua, &tasks, visible, &panel)?;
            Ok(view_of(rows, counts, &panel))
        }
        _ => {
            let panel = hide.panel(&[], None, budget, collapsed);
            let (rows, counts) = pick(lua, &lua.create_table()?, &[], &panel)?;
            Ok(view_of(rows, counts, &panel))
        }
    }
}

fn view_of(rows: Table, counts: Table, panel: &Panel) -> View {
    (
        rows,
        counts,
        panel.show_ids,
        panel.layout.hidden_completed,
        panel.layout.truncated_tail,
    )
}

/// A list's last view with nothing hidden (`view`): the rows table, and the decisions
/// behind it for the counts and the scalars. `List` drops it when the list changes.
pub struct ViewMemo {
    budget: usize,
    collapsed: bool,
    rows: Table,
    panel: Panel,
}

/// `push_counts` as a table of its own.
fn counts_table(lua: &Lua, panel: &Panel) -> mlua::Result<Table> {
    // SAFETY: as in `to_lua::state`.
    unsafe {
        lua.exec_raw((), |l| {
            push_counts(l, panel);
        })
    }
}

/// `{ total, pending, in_progress, completed }` (the Lua layer's spelling).
unsafe fn push_counts(l: L, panel: &Panel) {
    let c = panel.layout.counts;
    ffi::lua_createtable(l, 0, 4);
    to_lua::set_int(l, c"total", c.total as i64);
    to_lua::set_int(l, c"pending", c.pending as i64);
    to_lua::set_int(l, c"in_progress", c.in_progress as i64);
    to_lua::set_int(l, c"completed", c.completed as i64);
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

/// Stack slots of the row views' keys and the four status names, pushed once per call:
/// `lua_setfield` would intern its C string key again for every field of every row.
struct RowKeys {
    first: c_int,
}

impl RowKeys {
    const NAMES: [&'static str; 6] = ["id", "status", "subject", "activeForm", "blockedBy", "task"];

    unsafe fn push(l: L) -> RowKeys {
        let first = ffi::lua_gettop(l) + 1;
        for name in Self::NAMES {
            to_lua::push_str(l, name);
        }
        for st in Status::ALL {
            to_lua::push_str(l, st.as_str());
        }
        RowKeys { first }
    }

    fn key(&self, k: usize) -> c_int {
        self.first + k as c_int
    }

    fn status(&self, s: Status) -> c_int {
        let k = Status::ALL.iter().position(|&x| x == s).unwrap_or(0);
        self.first + Self::NAMES.len() as c_int + k as c_int
    }
}

/// `{ id, status, subject, activeForm?, blockedBy?, task? }`, text sanitized.
unsafe fn push_row(l: L, keys: &RowKeys, t: &Task, with_task: bool) {
    let form = t.active_form.as_deref().filter(|f| !f.is_empty());
    let blocked = t.blocked_by();
    let fields = 3 + form.is_some() as c_int + !blocked.is_empty() as c_int + with_task as c_int;
    ffi::lua_createtable(l, 0, fields);
    ffi::lua_pushvalue(l, keys.key(0));
    ffi::lua_pushinteger(l, t.id as ffi::lua_Integer);
    ffi::lua_rawset(l, -3);
    ffi::lua_pushvalue(l, keys.key(1));
    ffi::lua_pushvalue(l, keys.status(t.status));
    ffi::lua_rawset(l, -3);
    ffi::lua_pushvalue(l, keys.key(2));
    to_lua::push_str(l, &crate::sanitize::display(&t.subject));
    ffi::lua_rawset(l, -3);
    if let Some(f) = form {
        ffi::lua_pushvalue(l, keys.key(3));
        to_lua::push_str(l, &crate::sanitize::display(f));
        ffi::lua_rawset(l, -3);
    }
    if !blocked.is_empty() {
        ffi::lua_pushvalue(l, keys.key(4));
        to_lua::push_ids(l, blocked);
        ffi::lua_rawset(l, -3);
    }
    if with_task {
        ffi::lua_pushvalue(l, keys.key(5));
        to_lua::push_task(l, t);
        ffi::lua_rawset(l, -3);
    }
}

/// Which fields of a host's task tables a panel needs besides `status`: every C API read
/// costs (LuaJIT cannot compile across them), so nothing is read that cannot change it.
#[derive(Clone, Copy, PartialEq)]
enum Need {
    /// No task can be hidden: no ids; `blockedBy` only until one live task waits.
    Nothing,
    /// A live overlay hides completed tasks only: ids of completed tasks; `blockedBy`
    /// until an unfinished task waits (a completed one might be hidden).
    CompletedIds,
    /// A fixed set of ids may hide anything: every id and every `blockedBy`.
    AllIds,
}

impl Need {
    fn of(hide: &Hide) -> Need {
        match hide {
            Hide::None => Need::Nothing,
            Hide::Live(_) => Need::CompletedIds,
            Hide::Ids(_) => Need::AllIds,
        }
    }
}

/// Read a host's task array: each entry's status and, as `need` says, its integer id and
/// whether it waits on another (`blocked` is exact until `show_ids` is settled, false
/// after). `Err(i)`: entry `i` (1-based) is not a task table with a known status.
fn read_entries(lua: &Lua, tasks: &Table, need: Need) -> mlua::Result<Result<Vec<Entry>, usize>> {
    const TASKS: c_int = 1;
    let mut out = Vec::new();
    let mut bad = None;
    // SAFETY: raw reads and the key strings only; `out` lives outside the closure.
    unsafe {
        lua.exec_raw::<()>(tasks, |l| {
            ffi::luaL_checkstack(l, 12, std::ptr::null());
            to_lua::push_str(l, "status");
            to_lua::push_str(l, "id");
            to_lua::push_str(l, "blockedBy");
            let keys = Keys {
                status: 2,
                id: 3,
                blocked: 4,
            };
            // Status strings are interned: compare data pointers first, bytes as fallback.
            let names: [*const u8; 4] = Status::ALL.map(|st| {
                let p = ffi::lua_pushlstring(l, st.as_str().as_ptr().cast(), st.as_str().len());
                p.cast::<u8>()
            });
            let n = ffi::lua_rawlen(l, TASKS);
            out.reserve(n);
            let mut settled = false;
            for i in 1..=n {
                ffi::lua_rawgeti(l, TASKS, i as _);
                let entry = if ffi::lua_type(l, -1) == ffi::LUA_TTABLE {
                    read_entry(l, &keys, &names, need, settled)
                } else {
                    None
                };
                ffi::lua_settop(l, -2);
                match entry {
                    Some(e) => {
                        // Once a task that cannot be hidden waits on another, rows carry
                        // ids whatever the rest say.
                        settled |= e.blocked
                            && match need {
                                Need::Nothing => e.status != Status::Deleted,
                                Need::CompletedIds => {
                                    matches!(e.status, Status::Pending | Status::InProgress)
                                }
                                Need::AllIds => false,
                            };
                        out.push(e)
                    }
                    None => {
                        bad = Some(i);
                        break;
                    }
                }
            }
            ffi::lua_settop(l, 0);
        })?;
    }
    Ok(match bad {
        None => Ok(out),
        Some(i) => Err(i),
    })
}

/// Stack slots of the keys `read_entry` looks up.
struct Keys {
    status: c_int,
    id: c_int,
    blocked: c_int,
}

/// The task table on top of the stack as an entry (the stack is left as it was).
unsafe fn read_entry(
    l: L,
    keys: &Keys,
    names: &[*const u8; 4],
    need: Need,
    settled: bool,
) -> Option<Entry> {
    ffi::lua_pushvalue(l, keys.status);
    ffi::lua_rawget(l, -2);
    let mut status = None;
    if ffi::lua_type(l, -1) == ffi::LUA_TSTRING {
        let mut len = 0usize;
        let p = ffi::lua_tolstring(l, -1, &mut len).cast::<u8>();
        status = match names.iter().position(|&q| q == p) {
            Some(k) => Some(Status::ALL[k]),
            None => Status::parse_bytes(std::slice::from_raw_parts(p, len)),
        };
    }
    ffi::lua_settop(l, -2);
    let status = status?;
    let wants_id = match need {
        Need::Nothing => false,
        Need::CompletedIds => status == Status::Completed,
        Need::AllIds => true,
    };
    let mut id = None;
    if wants_id {
        ffi::lua_pushvalue(l, keys.id);
        ffi::lua_rawget(l, -2);
        if ffi::lua_type(l, -1) == ffi::LUA_TNUMBER {
            let x = ffi::lua_tonumber(l, -1);
            id = (x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0).then_some(x as i64);
        }
        ffi::lua_settop(l, -2);
    }
    let mut blocked = false;
    if !settled && status != Status::Deleted {
        ffi::lua_pushvalue(l, keys.blocked);
        ffi::lua_rawget(l, -2);
        blocked = ffi::lua_type(l, -1) == ffi::LUA_TTABLE && ffi::lua_rawlen(l, -1) > 0;
        ffi::lua_settop(l, -2);
    }
    Some(Entry {
        id,
        status,
        blocked,
    })
}

/// A new array of the caller's own task tables at the visible indices (0-based), and
/// the counts table.
fn pick(
    lua: &Lua,
    tasks: &Table,
    visible: &[usize],
    panel: &Panel,
) -> mlua::Result<(Table, Table)> {
    const TASKS: c_int = 1;
    // SAFETY: raw reads of the caller's array and two new tables.
    unsafe {
        lua.exec_raw(tasks, |l| {
            ffi::luaL_checkstack(l, 4, std::ptr::null());
            ffi::lua_createtable(l, visible.len().min(c_int::MAX as usize) as c_int, 0);
            for (k, &i) in visible.iter().enumerate() {
                ffi::lua_rawgeti(l, TASKS, (i + 1) as _);
                ffi::lua_rawseti(l, -2, (k + 1) as _);
            }
            push_counts(l, panel);
            ffi::lua_remove(l, TASKS);
        })
    }
}

/// `core.overlay_layout(state, budget, retired)`: `{ visible = { task... },
/// hiddenCompleted, truncatedTail, counts, showIds }`. From a list handle the visible
/// tasks are fresh tables; from a state table they are the caller's own.
fn layout(
    lua: &Lua,
    state: &LuaValue,
    budget: usize,
    retired: Option<Table>,
) -> mlua::Result<Table> {
    let mut hide = match &retired {
        Some(t) => Hide::Ids(retired_ids(t)),
        None => Hide::None,
    };
    let (visible, panel) = match state {
        LuaValue::UserData(ud) if ud.is::<List>() => {
            let list = ud.borrow::<List>()?;
            let entries: Vec<Entry> = list.state().tasks.iter().map(Entry::of).collect();
            let panel = hide.panel(&entries, None, budget, true);
            let tasks: Vec<&Task> = panel
                .layout
                .visible
                .iter()
                .map(|&i| &list.state().tasks[i])
                .collect();
            // SAFETY: as in `rows_of_list`.
            let visible: Table = unsafe {
                lua.exec_raw(array_mt(lua)?, |l| {
                    ffi::luaL_checkstack(l, 4, std::ptr::null());
                    to_lua::new_array(l, tasks.len());
                    for (k, t) in tasks.iter().enumerate() {
                        to_lua::push_task(l, t);
                        ffi::lua_rawseti(l, -2, (k + 1) as _);
                    }
                    to_lua::keep_top(l);
                })?
            };
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
            let entries = read_entries(lua, &tasks, Need::of(&hide))?
                .map_err(|at| bad_status("overlay_layout", at))?;
            let panel = hide.panel(&entries, None, budget, true);
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
    // The counts keep the wire spelling here (inProgress), as the layout always had.
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
