//! The one writer: core values to Lua tables, with the raw C API inside one protected call
//! per result (`super::exec`). Every call returns the whole list, so this is the hot path:
//! mlua's safe `Table::raw_set` costs one protected call per field, which dominated building
//! a snapshot. Everything here keeps the rules in `super` (no panic, nothing owned across a
//! push, nothing sized from a length).

use std::ffi::{c_int, CStr};

use mlua::{ffi, Lua, Table, Value as LuaValue};
use serde_json::Value;

use super::{Const, L};
use crate::json::{details, Detail};
use crate::overlay::Counts;
use crate::reducer::Reply;
use crate::task::{State, Status, Task};

/// Stack slot of the array metatable inside the raw closures below (first argument).
const ARRAY_MT: c_int = 1;

/// # Safety
///
/// Only inside a `super::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `super`).
pub(super) unsafe fn push_str(l: L, s: &str) {
    ffi::lua_pushlstring(l, s.as_ptr().cast(), s.len());
}

/// # Safety
///
/// Only inside a `super::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `super`).
pub(super) unsafe fn set_str(l: L, key: &CStr, s: &str) {
    push_str(l, s);
    ffi::lua_setfield(l, -2, key.as_ptr());
}

/// # Safety
///
/// Only inside a `super::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `super`).
pub(super) unsafe fn set_int(l: L, key: &CStr, n: i64) {
    ffi::lua_pushinteger(l, n as ffi::lua_Integer);
    ffi::lua_setfield(l, -2, key.as_ptr());
}

/// An array table of `n` items; empty ones get the array metatable so a host's JSON
/// encoder writes `[]`.
///
/// # Safety
///
/// Only inside a `super::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `super`).
pub(super) unsafe fn new_array(l: L, n: usize) {
    ffi::lua_createtable(l, n.min(c_int::MAX as usize) as c_int, 0);
    if n == 0 {
        ffi::lua_pushvalue(l, ARRAY_MT);
        ffi::lua_setmetatable(l, -2);
    }
}

/// # Safety
///
/// Only inside a `super::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `super`).
pub(super) unsafe fn push_ids(l: L, ids: &[i64]) {
    new_array(l, ids.len());
    for (i, id) in ids.iter().enumerate() {
        ffi::lua_pushinteger(l, *id as ffi::lua_Integer);
        ffi::lua_rawseti(l, -2, i.saturating_add(1) as _);
    }
}

/// A JSON value; `null` becomes the null light userdata (`core.null`, `cjson.null`).
/// Depth is bounded by how the value was made (JSON: 128, Lua: 64).
///
/// # Safety
///
/// Only inside a `super::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `super`).
pub(super) unsafe fn push_value(l: L, v: &Value) {
    ffi::luaL_checkstack(l, 4, std::ptr::null());
    match v {
        Value::Null => ffi::lua_pushlightuserdata(l, std::ptr::null_mut()),
        Value::Bool(b) => ffi::lua_pushboolean(l, *b as c_int),
        Value::Number(n) => match n.as_i64() {
            Some(i) => ffi::lua_pushinteger(l, i as ffi::lua_Integer),
            None => ffi::lua_pushnumber(l, n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => push_str(l, s),
        Value::Array(items) => {
            new_array(l, items.len());
            for (i, item) in items.iter().enumerate() {
                push_value(l, item);
                ffi::lua_rawseti(l, -2, i.saturating_add(1) as _);
            }
        }
        Value::Object(map) => {
            ffi::lua_createtable(l, 0, map.len().min(c_int::MAX as usize) as c_int);
            for (k, item) in map {
                push_str(l, k);
                push_value(l, item);
                ffi::lua_rawset(l, -3);
            }
        }
    }
}

/// How many of the task model's fields `t` has (the hash size of its table, before any
/// field the model does not know).
fn known_fields(t: &Task) -> c_int {
    let optional = [
        t.description.is_some(),
        t.active_form.is_some(),
        t.blocked_by.is_some(),
        t.owner.is_some(),
        t.metadata.is_some(),
    ];
    optional
        .into_iter()
        .fold(3, |n, has| n.saturating_add(c_int::from(has)))
}

/// # Safety
///
/// Only inside a `super::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `super`).
pub(super) unsafe fn push_task(l: L, t: &Task) {
    ffi::lua_createtable(l, 0, known_fields(t));
    set_int(l, c"id", t.id);
    set_str(l, c"subject", &t.subject);
    set_str(l, c"status", t.status.as_str());
    if let Some(s) = &t.description {
        set_str(l, c"description", s);
    }
    if let Some(s) = &t.active_form {
        set_str(l, c"activeForm", s);
    }
    if let Some(ids) = &t.blocked_by {
        push_ids(l, ids);
        ffi::lua_setfield(l, -2, c"blockedBy".as_ptr());
    }
    if let Some(s) = &t.owner {
        set_str(l, c"owner", s);
    }
    set_metadata_and_extra(l, t);
}

/// `metadata` and any fields the task model does not know, on the task table on top.
///
/// # Safety
///
/// Only inside a `super::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `super`).
unsafe fn set_metadata_and_extra(l: L, t: &Task) {
    if let Some(m) = &t.metadata {
        ffi::lua_createtable(l, 0, m.len().min(c_int::MAX as usize) as c_int);
        for (k, v) in m {
            push_str(l, k);
            push_value(l, v);
            ffi::lua_rawset(l, -3);
        }
        ffi::lua_setfield(l, -2, c"metadata".as_ptr());
    }
    for (k, v) in &t.extra {
        push_str(l, k);
        push_value(l, v);
        ffi::lua_rawset(l, -3);
    }
}

/// The task fields' and statuses' names pushed once per call from `Ctx::consts` (slot
/// `consts`, or nil when there is none): a task's keys are then set with `lua_rawset` from
/// these slots and its status copied from one, where `lua_setfield` and `lua_pushlstring`
/// would hash and look up each name again for every task.
struct KeySlots {
    /// The first pushed name's slot (`Const::Id`'s), or `None` when none were pushed.
    base: Option<c_int>,
}

impl KeySlots {
    /// # Safety
    ///
    /// Only inside a `super::exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules in `super`).
    unsafe fn push(l: L, consts: c_int) -> KeySlots {
        if ffi::lua_type(l, consts) != ffi::LUA_TTABLE || ffi::lua_checkstack(l, 16) == 0 {
            return KeySlots { base: None };
        }
        let base = ffi::lua_gettop(l).saturating_add(1);
        for k in Const::Id as c_int..=Const::Deleted as c_int {
            ffi::lua_rawgeti(l, consts, k as _);
        }
        KeySlots { base: Some(base) }
    }
}

/// Where the status names start among the names `KeySlots::push` pushes.
const STATUS_OFFSET: c_int = Const::Pending as c_int - Const::Id as c_int;

/// The stack slot of status `s`'s name among the names `KeySlots::push` pushed from `base`.
fn status_slot(base: c_int, s: crate::task::Status) -> c_int {
    base.saturating_add(STATUS_OFFSET)
        .saturating_add(s as c_int)
}

/// Field `k` of the table at -2 (relative to the value pushed by `push`) set raw.
///
/// # Safety
///
/// Only inside a `super::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `super`).
unsafe fn set_named(l: L, base: c_int, k: Const, push: impl FnOnce()) {
    let offset = (k as c_int).saturating_sub(Const::Id as c_int);
    ffi::lua_pushvalue(l, base.saturating_add(offset));
    push();
    ffi::lua_rawset(l, -3);
}

/// # Safety
///
/// Only inside a `super::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `super`).
unsafe fn push_task_named(l: L, base: c_int, t: &Task) {
    ffi::lua_createtable(l, 0, known_fields(t));
    set_named(l, base, Const::Id, || {
        ffi::lua_pushinteger(l, t.id as ffi::lua_Integer)
    });
    set_named(l, base, Const::Subject, || push_str(l, &t.subject));
    set_named(l, base, Const::Status, || {
        ffi::lua_pushvalue(l, status_slot(base, t.status))
    });
    if let Some(s) = &t.description {
        set_named(l, base, Const::Description, || push_str(l, s));
    }
    if let Some(s) = &t.active_form {
        set_named(l, base, Const::ActiveForm, || push_str(l, s));
    }
    if let Some(ids) = &t.blocked_by {
        set_named(l, base, Const::BlockedBy, || push_ids(l, ids));
    }
    if let Some(s) = &t.owner {
        set_named(l, base, Const::Owner, || push_str(l, s));
    }
    // Rare: the general path for the rest of the fields.
    set_metadata_and_extra(l, t);
}

/// The tasks as an array table on top of the stack.
///
/// # Safety
///
/// Inside `super::exec`, with the slots of `keys` valid.
unsafe fn push_tasks<'a>(l: L, tasks: impl ExactSizeIterator<Item = &'a Task>, keys: &KeySlots) {
    new_array(l, tasks.len());
    for (i, t) in tasks.enumerate() {
        match keys.base {
            Some(base) => push_task_named(l, base, t),
            None => push_task(l, t),
        }
        ffi::lua_rawseti(l, -2, i.saturating_add(1) as _);
    }
}

/// `Ctx::consts` for an exec argument (nil before `exports` ran: `KeySlots::push` then
/// pushes nothing).
fn consts(lua: &Lua) -> LuaValue {
    lua.app_data_ref::<crate::lua::Ctx>()
        .map_or(LuaValue::Nil, |ctx| LuaValue::Table(ctx.consts.clone()))
}

/// `Ctx::consts`, which `ViewKeys::push` reads without looking: an error before
/// `exports` ran.
fn consts_table(lua: &Lua) -> mlua::Result<Table> {
    Ok(crate::lua::Ctx::get(lua)?.consts)
}

/// Leave only the value on top of the stack as the closure's result.
///
/// # Safety
///
/// Only inside a `super::exec` body, on its state `l`.
unsafe fn keep_top(l: L) {
    ffi::lua_insert(l, 1);
    ffi::lua_settop(l, 1);
}

/// `{ tasks = {...}, nextId = n }`.
pub fn state(lua: &Lua, array_mt: &Table, s: &State) -> mlua::Result<Table> {
    // SAFETY: the closure only pushes values onto the stack and leaves exactly one
    // result; it holds no value with a destructor, so a Lua error unwinding through it
    // (out of memory) leaks nothing.
    unsafe {
        super::exec(lua, (array_mt, consts(lua)), |l| {
            let keys = KeySlots::push(l, 2);
            ffi::lua_createtable(l, 0, 2);
            push_tasks(l, s.tasks.iter(), &keys);
            ffi::lua_setfield(l, -2, c"tasks".as_ptr());
            set_int(l, c"nextId", s.next_id);
            keep_top(l);
        })
    }
}

/// The tasks as a fresh array (`core.overlay_layout` from a list handle).
pub fn tasks(lua: &Lua, array_mt: &Table, tasks: &[&Task]) -> mlua::Result<Table> {
    // SAFETY: as in `state`.
    unsafe {
        super::exec(lua, (array_mt, consts(lua)), |l| {
            let keys = KeySlots::push(l, 2);
            push_tasks(l, tasks.iter().copied(), &keys);
            keep_top(l);
        })
    }
}

/// Any JSON value as a Lua value.
pub fn json(lua: &Lua, array_mt: &Table, v: &Value) -> mlua::Result<LuaValue> {
    // SAFETY: as in `state`.
    unsafe {
        super::exec(lua, array_mt, |l| {
            push_value(l, v);
            keep_top(l);
        })
    }
}

/// `{ content = { { type = "text", text } }, details = { … } }`, the details as
/// `crate::json::details` lists them; `action` and `params` are the caller's own values,
/// echoed as given.
pub fn result(
    lua: &Lua,
    array_mt: &Table,
    reply: &Reply,
    action: LuaValue,
    params: LuaValue,
    s: &State,
) -> mlua::Result<Table> {
    const ACTION: c_int = 2;
    const PARAMS: c_int = 3;
    const CONSTS: c_int = 4;
    // SAFETY: as in `state`.
    unsafe {
        super::exec(lua, (array_mt, action, params, consts(lua)), |l| {
            let keys = KeySlots::push(l, CONSTS);
            ffi::lua_createtable(l, 0, 2);
            // content
            ffi::lua_createtable(l, 1, 0);
            ffi::lua_createtable(l, 0, 2);
            set_str(l, c"type", "text");
            set_str(l, c"text", &reply.text);
            ffi::lua_rawseti(l, -2, 1);
            ffi::lua_setfield(l, -2, c"content".as_ptr());
            // details
            ffi::lua_createtable(l, 0, 5);
            for d in details(s.next_id, reply.error.as_deref()) {
                match d {
                    Detail::Action => ffi::lua_pushvalue(l, ACTION),
                    Detail::Params => ffi::lua_pushvalue(l, PARAMS),
                    Detail::Tasks => push_tasks(l, s.tasks.iter(), &keys),
                    Detail::NextId(n) => ffi::lua_pushinteger(l, n as ffi::lua_Integer),
                    Detail::Error(e) => push_str(l, e),
                }
                ffi::lua_setfield(l, -2, d.key().as_ptr());
            }
            ffi::lua_setfield(l, -2, c"details".as_ptr());
            keep_top(l);
        })
    }
}

/// The overlay's counts as a table of their own: `{ total, pending, in_progress, completed }`.
pub fn counts(lua: &Lua, c: &Counts) -> mlua::Result<Table> {
    // SAFETY: as in `state` (pushes only, nothing owned in the closure); slot 1 is the
    // consts table.
    unsafe {
        super::exec(lua, consts_table(lua)?, |l| {
            ffi::luaL_checkstack(l, 16, std::ptr::null());
            let keys = ViewKeys::push(l, 1);
            push_counts(l, &keys, c);
            keep_top(l);
        })
    }
}

/// The overlay's row views of `tasks` at the `visible` indices, and its counts. A row whose
/// task `earlier_slot` finds unchanged among the `earlier` rows (a 0-based slot) is that
/// row again; any other is made. `task_mt` is the array metatable when each row carries
/// its whole `task`, else nil.
#[allow(clippy::too_many_arguments)]
pub fn rows(
    lua: &Lua,
    task_mt: LuaValue,
    earlier: Option<Table>,
    tasks: &[Task],
    visible: &[usize],
    counts: &Counts,
    mut earlier_slot: impl FnMut(&Task, usize) -> Option<usize>,
) -> mlua::Result<(Table, Table)> {
    let with_task = !task_mt.is_nil();
    let mut text = Text::default();
    // SAFETY: the closure pushes values and sets fields of the tables it made. It owns
    // nothing that needs dropping if an allocation error unwinds: the sanitized `text` lives
    // out here, and `earlier_slot` runs no Lua (its bookkeeping is the caller's). Slot 1 is
    // the array metatable `push_task` reads, slot 2 the earlier rows or nil, slot 3 the
    // consts table; `visible` holds indices into `tasks` (the overlay's layout).
    unsafe {
        super::exec(lua, (task_mt, earlier, consts_table(lua)?), |l| {
            ffi::luaL_checkstack(l, 24, std::ptr::null());
            let keys = ViewKeys::push(l, 3);
            ffi::lua_createtable(l, visible.len().min(c_int::MAX as usize) as c_int, 0);
            for (k, t) in visible.iter().filter_map(|&i| tasks.get(i)).enumerate() {
                match earlier_slot(t, k) {
                    Some(slot) => {
                        ffi::lua_rawgeti(l, 2, slot.saturating_add(1) as _);
                    }
                    None => push_row(l, &keys, t, with_task, &mut text),
                }
                ffi::lua_rawseti(l, -2, k.saturating_add(1) as _);
            }
            push_counts(l, &keys, counts);
            // rows, counts into slots 1 and 2
            ffi::lua_replace(l, 2);
            ffi::lua_replace(l, 1);
            ffi::lua_settop(l, 2);
        })
    }
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
    /// Only inside a `super::exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules in `super`).
    unsafe fn push(l: L, consts: c_int) -> ViewKeys {
        let first = ffi::lua_gettop(l).saturating_add(1);
        for k in Self::NAMES {
            ffi::lua_rawgeti(l, consts, k as _);
        }
        for s in Status::ALL {
            ffi::lua_rawgeti(
                l,
                consts,
                (Const::Pending as ffi::lua_Integer).saturating_add(s as ffi::lua_Integer),
            );
        }
        ViewKeys { first }
    }

    fn key(&self, k: Const) -> c_int {
        let at = Self::NAMES
            .iter()
            .position(|&n| n as c_int == k as c_int)
            .unwrap_or(0);
        self.first.saturating_add(at as c_int)
    }

    fn status(&self, s: Status) -> c_int {
        self.first
            .saturating_add(Self::NAMES.len() as c_int)
            .saturating_add(s as c_int)
    }
}

/// Where a row's sanitized text is kept while it is pushed: outside the raw block, so
/// that an allocation error raised by the push (a `longjmp` on PUC Lua) leaves nothing
/// owned behind in a skipped frame (a leak at every failed view).
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

/// `{ total, pending, in_progress, completed }` (the Lua layer's spelling).
///
/// # Safety
///
/// Only inside a `super::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `super`).
unsafe fn push_counts(l: L, keys: &ViewKeys, c: &Counts) {
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

/// `{ id, status, subject, activeForm?, blockedBy?, task? }`, text sanitized.
///
/// # Safety
///
/// Inside `raw::exec`, with room for 4 more stack slots and `keys` pushed by
/// `ViewKeys::push`.
unsafe fn push_row(l: L, keys: &ViewKeys, t: &Task, with_task: bool, text: &mut Text) {
    let form = t.active_form.as_deref().filter(|f| !f.is_empty());
    let blocked = t.blocked_by();
    let fields = [form.is_some(), !blocked.is_empty(), with_task]
        .into_iter()
        .fold(3, |n: c_int, has| n.saturating_add(c_int::from(has)));
    ffi::lua_createtable(l, 0, fields);
    ffi::lua_pushvalue(l, keys.key(Const::Id));
    ffi::lua_pushinteger(l, t.id as ffi::lua_Integer);
    ffi::lua_rawset(l, -3);
    ffi::lua_pushvalue(l, keys.key(Const::Status));
    ffi::lua_pushvalue(l, keys.status(t.status));
    ffi::lua_rawset(l, -3);
    ffi::lua_pushvalue(l, keys.key(Const::Subject));
    push_str(l, text.display(&t.subject));
    ffi::lua_rawset(l, -3);
    if let Some(f) = form {
        ffi::lua_pushvalue(l, keys.key(Const::ActiveForm));
        push_str(l, text.display(f));
        ffi::lua_rawset(l, -3);
    }
    if !blocked.is_empty() {
        ffi::lua_pushvalue(l, keys.key(Const::BlockedBy));
        push_ids(l, blocked);
        ffi::lua_rawset(l, -3);
    }
    if with_task {
        ffi::lua_pushvalue(l, keys.key(Const::Task));
        push_task(l, t);
        ffi::lua_rawset(l, -3);
    }
}
