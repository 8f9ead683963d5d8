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

use super::from_lua::Const;
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
                false => list.view.try_borrow_mut().ok(),
                true => None,
            };
            let reuse = memo.is_some();
            let whole = reuse && matches!(hidden, HiddenTasks::None);
            if let (true, Some(m)) = (whole, memo.as_deref()) {
                if let (Some(w), Some(rows)) = (&m.whole, &m.rows) {
                    if w.budget == budget && w.collapsed == collapsed {
                        let counts = counts_table(lua, &w.panel)?;
                        return Ok(view_of(rows.clone(), counts, &w.panel));
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
            let mut text = Text::default();
            let ctx = Ctx::get(lua)?;
            // SAFETY: as in `to_lua::state_with`: the closure pushes values and sets fields of
            // the tables it made; it owns nothing that needs dropping if an allocation
            // error unwinds (`old`, `shown` and the sanitized `text` live out here; an
            // earlier row's fields are moved to `shown` before the next push). Slot 1 is the array
            // metatable `to_lua::push_task` reads, slot 2 the earlier rows or nil, slot 3
            // the consts table.
            let (rows, counts): (Table, Table) = unsafe {
                crate::lua::raw::exec(lua, (mt, earlier, &ctx.consts), |l| {
                    ffi::luaL_checkstack(l, 24, std::ptr::null());
                    let keys = ViewKeys::push(l, 3);
                    ffi::lua_createtable(l, visible.len().min(c_int::MAX as usize) as c_int, 0);
                    for (k, &i) in visible.iter().enumerate() {
                        let t = &tasks[i];
                        match old.take(t, k).filter(|_| reuse) {
                            Some((slot, fields)) => {
                                ffi::lua_rawgeti(l, 2, (slot + 1) as _);
                                shown.push(fields);
                            }
                            None => {
                                push_row(l, &keys, t, with_tasks, &mut text);
                                if reuse {
                                    shown.push(RowFields::of(t));
                                }
                            }
                        }
                        ffi::lua_rawseti(l, -2, (k + 1) as _);
                    }
                    push_counts(l, &keys, &panel);
                    // rows, counts into slots 1 and 2
                    ffi::lua_replace(l, 2);
                    ffi::lua_replace(l, 1);
                    ffi::lua_settop(l, 2);
                })?
            };
            if let Some(memo) = memo.as_deref_mut() {
                memo.entries = Some(entries);
                memo.shown = shown;
                memo.rows = Some(rows.clone());
                memo.whole = whole.then(|| Whole {
                    budget,
                    collapsed,
                    panel: panel.clone(),
                });
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
                Some(t) => read_entries(lua, t, FieldsToRead::for_hidden(&hidden))?
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
            Ok(view_of(rows, counts, &panel))
        }
        _ => {
            let panel = hidden.panel(&[], None, budget, collapsed);
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

/// What a list remembers of the last view drawn from it with the shipped row function
/// (see `view`); `List` calls `changed` whenever its tasks may have changed.
#[derive(Default)]
pub struct ViewMemo {
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
    pub fn changed(&mut self) {
        self.whole = None;
        self.entries = None;
    }
}

struct Whole {
    budget: usize,
    collapsed: bool,
    panel: Panel,
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

/// `push_counts` as a table of its own.
fn counts_table(lua: &Lua, panel: &Panel) -> mlua::Result<Table> {
    let ctx = Ctx::get(lua)?;
    // SAFETY: as in `to_lua::state_with` (pushes only, nothing owned in the closure); slot
    // 1 is the consts table.
    unsafe {
        crate::lua::raw::exec(lua, &ctx.consts, |l| {
            ffi::luaL_checkstack(l, 16, std::ptr::null());
            let keys = ViewKeys::push(l, 1);
            push_counts(l, &keys, panel);
            ffi::lua_replace(l, 1);
            ffi::lua_settop(l, 1);
        })
    }
}

/// `{ total, pending, in_progress, completed }` (the Lua layer's spelling).
///
/// # Safety
///
/// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `raw`).
unsafe fn push_counts(l: L, keys: &ViewKeys, panel: &Panel) {
    let c = panel.layout.counts;
    ffi::lua_createtable(l, 0, 4);
    for (key, n) in [
        (keys.key(Const::Total), c.total),
        (keys.status(Status::Pending), c.pending),
        (keys.status(Status::InProgress), c.in_progress),
        (keys.status(Status::Completed), c.completed),
    ] {
        ffi::lua_pushvalue(l, key);
        ffi::lua_pushinteger(l, n as _);
        ffi::lua_rawset(l, -3);
    }
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

/// Stack slots of the row views' and counts' keys and the four status names, copied once
/// per call from `Ctx::consts` (interned once per state): `lua_setfield` and
/// `lua_pushlstring` would intern each name again for every field of every row.
struct ViewKeys {
    first: c_int,
}

impl ViewKeys {
    const NAMES: [Const; 7] = [
        Const::Id,
        Const::Status,
        Const::Subject,
        Const::ActiveForm,
        Const::BlockedBy,
        Const::Task,
        Const::Total,
    ];

    /// Push the names from the consts table at `consts` (room for 12 slots needed).
    ///
    /// # Safety
    ///
    /// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules in `raw`).
    unsafe fn push(l: L, consts: c_int) -> ViewKeys {
        let first = ffi::lua_gettop(l) + 1;
        for k in Self::NAMES {
            ffi::lua_rawgeti(l, consts, k as _);
        }
        for s in Status::ALL {
            ffi::lua_rawgeti(
                l,
                consts,
                Const::Pending as ffi::lua_Integer + s as ffi::lua_Integer,
            );
        }
        ViewKeys { first }
    }

    fn key(&self, k: Const) -> c_int {
        let at = Self::NAMES
            .iter()
            .position(|&n| n as c_int == k as c_int)
            .unwrap_or(0);
        self.first + at as c_int
    }

    fn status(&self, s: Status) -> c_int {
        self.first + Self::NAMES.len() as c_int + s as c_int
    }
}

/// Where a row's sanitized text is kept while it is pushed: outside the raw block, so
/// that an allocation error raised by the push (a `longjmp` on PUC Lua) leaves nothing
/// owned behind in a skipped frame (issue 18, fault 3: 415 bytes per failed view).
#[derive(Default)]
struct Text(String);

impl Text {
    /// `s` sanitized for display, held here; the old text is dropped first.
    fn display(&mut self, s: &str) -> &str {
        self.0.clear();
        self.0.push_str(&crate::sanitize::display(s));
        &self.0
    }
}

/// `{ id, status, subject, activeForm?, blockedBy?, task? }`, text sanitized.
///
/// # Safety
///
/// Inside `raw::exec`, with room for 4 more stack slots and `keys` pushed by
/// `ViewKeys::push`.
unsafe fn push_row(l: L, keys: &ViewKeys, t: &Task, with_task: bool, text: &mut Text) {
    let form = t.active_form.as_deref().filter(|f| !f.is_empty());
    let blocked = t.blocked_by();
    let fields = 3 + form.is_some() as c_int + !blocked.is_empty() as c_int + with_task as c_int;
    ffi::lua_createtable(l, 0, fields);
    ffi::lua_pushvalue(l, keys.key(Const::Id));
    ffi::lua_pushinteger(l, t.id as ffi::lua_Integer);
    ffi::lua_rawset(l, -3);
    ffi::lua_pushvalue(l, keys.key(Const::Status));
    ffi::lua_pushvalue(l, keys.status(t.status));
    ffi::lua_rawset(l, -3);
    ffi::lua_pushvalue(l, keys.key(Const::Subject));
    to_lua::push_str(l, text.display(&t.subject));
    ffi::lua_rawset(l, -3);
    if let Some(f) = form {
        ffi::lua_pushvalue(l, keys.key(Const::ActiveForm));
        to_lua::push_str(l, text.display(f));
        ffi::lua_rawset(l, -3);
    }
    if !blocked.is_empty() {
        ffi::lua_pushvalue(l, keys.key(Const::BlockedBy));
        to_lua::push_ids(l, blocked);
        ffi::lua_rawset(l, -3);
    }
    if with_task {
        ffi::lua_pushvalue(l, keys.key(Const::Task));
        to_lua::push_task(l, t);
        ffi::lua_rawset(l, -3);
    }
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
/// after). `Err(i)`: entry `i` (1-based) is not a task table with a known status.
fn read_entries(
    lua: &Lua,
    tasks: &Table,
    to_read: FieldsToRead,
) -> mlua::Result<Result<Vec<Entry>, usize>> {
    const TASKS: c_int = 1;
    let mut out = Vec::new();
    let mut bad = None;
    // SAFETY: raw reads, and pushes of the key strings (which can raise for memory): the
    // closure owns nothing with a destructor (`out` and `bad` live out here; the status
    // names are bare pointers into strings kept on the stack).
    unsafe {
        crate::lua::raw::exec::<()>(lua, tasks, |l| {
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
            // Not reserved from the length: it may be a border far past the entries
            // there are (issue 18, fault 1); the loop stops at the first hole.
            let n = ffi::lua_rawlen(l, TASKS);
            let mut settled = false;
            for i in 1..=n {
                ffi::lua_rawgeti(l, TASKS, i as _);
                let entry = if ffi::lua_type(l, -1) == ffi::LUA_TTABLE {
                    read_entry(l, &keys, &names, to_read, settled)
                } else {
                    None
                };
                ffi::lua_settop(l, -2);
                match entry {
                    Some(e) => {
                        // Once a task that cannot be hidden waits on another, rows carry
                        // ids whatever the rest say.
                        settled |= e.blocked
                            && match to_read {
                                FieldsToRead::Nothing => e.status != Status::Deleted,
                                FieldsToRead::CompletedIds => {
                                    matches!(e.status, Status::Pending | Status::InProgress)
                                }
                                FieldsToRead::AllIds => false,
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
///
/// # Safety
///
/// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `raw`).
unsafe fn read_entry(
    l: L,
    keys: &Keys,
    names: &[*const u8; 4],
    to_read: FieldsToRead,
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
    let wants_id = match to_read {
        FieldsToRead::Nothing => false,
        FieldsToRead::CompletedIds => status == Status::Completed,
        FieldsToRead::AllIds => true,
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
    const CONSTS: c_int = 2;
    let ctx = Ctx::get(lua)?;
    // SAFETY: raw reads of the caller's array and two new tables; the closure owns nothing
    // with a destructor, so a raising allocation skips none.
    unsafe {
        crate::lua::raw::exec(lua, (tasks, &ctx.consts), |l| {
            ffi::luaL_checkstack(l, 16, std::ptr::null());
            let keys = ViewKeys::push(l, CONSTS);
            ffi::lua_createtable(l, visible.len().min(c_int::MAX as usize) as c_int, 0);
            for (k, &i) in visible.iter().enumerate() {
                ffi::lua_rawgeti(l, TASKS, (i + 1) as _);
                ffi::lua_rawseti(l, -2, (k + 1) as _);
            }
            push_counts(l, &keys, panel);
            // rows, counts into slots 1 and 2
            ffi::lua_replace(l, 2);
            ffi::lua_replace(l, 1);
            ffi::lua_settop(l, 2);
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
            // SAFETY: as in `to_lua::state_with`: pushes borrowed tasks, owns nothing.
            let visible: Table = unsafe {
                crate::lua::raw::exec(lua, array_mt(lua)?, |l| {
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
            let entries = read_entries(lua, &tasks, FieldsToRead::for_hidden(&hidden))?
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
