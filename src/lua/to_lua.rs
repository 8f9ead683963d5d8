//! Snapshots to Lua tables. Every call returns the whole list, so this is the hot path:
//! the tables are built with the raw C API inside one protected call instead of one
//! protected call per field through mlua's safe `Table::raw_set`, whose per-field cost
//! dominated building a snapshot.

use std::cell::RefCell;
use std::ffi::{c_int, CStr};

use mlua::{ffi, Lua, Table, Value as LuaValue};
use serde_json::Value;

use super::from_lua::Const;
use crate::reducer::Reply;
use crate::task::{State, Task};

type L = *mut ffi::lua_State;

/// A list's own buffer for `built_in_lua` (LuaJIT), and the tasks its slots were last filled
/// from (`None`: filled again every time); unused in other flavours.
#[derive(Default)]
pub struct ListBuildBuffer {
    table: Option<Table>,
    #[cfg_attr(not(feature = "luajit"), allow(dead_code))]
    filled: Vec<Option<Task>>,
    /// The most tasks the buffer was filled for since it was made.
    high: usize,
}

impl ListBuildBuffer {
    /// The buffer table for `n` tasks, made on first use (LuaJIT); nil elsewhere. A buffer
    /// filled for many more tasks than the list now has is dropped and made afresh, so
    /// an emptied list does not keep its old tasks' strings (issue 18, fault 6: 10.5 MB
    /// stayed reachable after a 5,000-task list was cleared).
    fn table(&mut self, lua: &Lua, n: usize) -> mlua::Result<LuaValue> {
        if cfg!(not(feature = "luajit")) {
            return Ok(LuaValue::Nil);
        }
        if self.high > 2 * n + 64 {
            *self = ListBuildBuffer::default();
        }
        if self.table.is_none() {
            self.table = Some(lua.create_table()?);
        }
        self.high = self.high.max(n);
        Ok(self.table.clone().map_or(LuaValue::Nil, LuaValue::Table))
    }
}

/// Lists longer than this fill a buffer of their own, dropped after the call, so the
/// shared one stays small.
const REUSED_UP_TO: usize = 4096;

/// The state's shared build buffer (LuaJIT), taken for one build: its slot in
/// `Ctx::consts` holds false meanwhile (a build started from a hook during this one makes
/// a buffer of its own), and it is put back when this is dropped, whether the build
/// succeeded or raised (issue 18, fault 6: a raising build left the slot taken for good).
struct Shared {
    consts: Option<Table>,
    table: Option<Table>,
}

impl Shared {
    fn take(lua: &Lua, n: usize) -> Shared {
        let consts = lua
            .app_data_ref::<super::Ctx>()
            .map(|ctx| ctx.consts.clone());
        let table = match (&consts, cfg!(feature = "luajit") && n <= REUSED_UP_TO) {
            (Some(c), true) => match c.raw_get::<LuaValue>(Const::BuildBuffer as i64) {
                Ok(LuaValue::Table(t)) if c.raw_set(Const::BuildBuffer as i64, false).is_ok() => {
                    Some(t)
                }
                _ => None,
            },
            _ => None,
        };
        Shared { consts, table }
    }

    fn value(&self) -> LuaValue {
        self.table.clone().map_or(LuaValue::Nil, LuaValue::Table)
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let (Some(c), Some(t)) = (&self.consts, self.table.take()) {
            // An existing array slot: no allocation, so this cannot fail for memory.
            let _ = c.raw_set(Const::BuildBuffer as i64, t);
        }
    }
}

/// Stack slot of the array metatable inside the raw closures below (first argument).
const ARRAY_MT: c_int = 1;

/// # Safety
///
/// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `raw`).
pub(super) unsafe fn push_str(l: L, s: &str) {
    ffi::lua_pushlstring(l, s.as_ptr().cast(), s.len());
}

/// # Safety
///
/// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `raw`).
pub(super) unsafe fn set_str(l: L, key: &CStr, s: &str) {
    push_str(l, s);
    ffi::lua_setfield(l, -2, key.as_ptr());
}

/// # Safety
///
/// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `raw`).
pub(super) unsafe fn set_int(l: L, key: &CStr, n: i64) {
    ffi::lua_pushinteger(l, n as ffi::lua_Integer);
    ffi::lua_setfield(l, -2, key.as_ptr());
}

/// An array table of `n` items; empty ones get the array metatable so a host's JSON
/// encoder writes `[]`.
///
/// # Safety
///
/// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `raw`).
pub(super) unsafe fn new_array(l: L, n: usize) {
    ffi::lua_createtable(l, n.min(c_int::MAX as usize) as c_int, 0);
    if n == 0 {
        ffi::lua_pushvalue(l, ARRAY_MT);
        ffi::lua_setmetatable(l, -2);
    }
}

/// # Safety
///
/// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `raw`).
pub(super) unsafe fn push_ids(l: L, ids: &[i64]) {
    new_array(l, ids.len());
    for (i, id) in ids.iter().enumerate() {
        ffi::lua_pushinteger(l, *id as ffi::lua_Integer);
        ffi::lua_rawseti(l, -2, (i + 1) as _);
    }
}

/// A JSON value; `null` becomes the null light userdata (`core.null`, `cjson.null`).
/// Depth is bounded by how the value was made (JSON: 128, Lua: 64).
///
/// # Safety
///
/// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `raw`).
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
                ffi::lua_rawseti(l, -2, (i + 1) as _);
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
    3 + t.description.is_some() as c_int
        + t.active_form.is_some() as c_int
        + t.blocked_by.is_some() as c_int
        + t.owner.is_some() as c_int
        + t.metadata.is_some() as c_int
}

/// # Safety
///
/// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `raw`).
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
/// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `raw`).
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
    /// The consts table's own slot (for `built_in_lua`).
    #[cfg_attr(not(feature = "luajit"), allow(dead_code))]
    consts: Option<c_int>,
}

impl KeySlots {
    /// # Safety
    ///
    /// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules in `raw`).
    unsafe fn push(l: L, consts: c_int) -> KeySlots {
        if ffi::lua_type(l, consts) != ffi::LUA_TTABLE || ffi::lua_checkstack(l, 16) == 0 {
            return KeySlots {
                base: None,
                consts: None,
            };
        }
        let base = ffi::lua_gettop(l) + 1;
        for k in Const::Id as c_int..=Const::Deleted as c_int {
            ffi::lua_rawgeti(l, consts, k as _);
        }
        KeySlots {
            base: Some(base),
            consts: Some(consts),
        }
    }
}

/// The stack slot of status `s`'s name among the names `KeySlots::push` pushed from `base`.
fn status_slot(base: c_int, s: crate::task::Status) -> c_int {
    base + (Const::Pending as c_int - Const::Id as c_int) + s as c_int
}

/// Field `k` of the table at -2 (relative to the value pushed by `push`) set raw.
///
/// # Safety
///
/// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `raw`).
unsafe fn set_named(l: L, base: c_int, k: Const, push: impl FnOnce()) {
    ffi::lua_pushvalue(l, base + (k as c_int - Const::Id as c_int));
    push();
    ffi::lua_rawset(l, -3);
}

/// # Safety
///
/// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `raw`).
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

/// The tasks as an array table on top of the stack. `buf`: the stack slot of a build
/// buffer (a list's own, with `filled` remembering what its slots hold, or the shared one),
/// LuaJIT only.
///
/// # Safety
///
/// Inside `raw::exec`, with the slots of `keys` and `buf` valid.
unsafe fn push_tasks(
    l: L,
    tasks: &[Task],
    keys: &KeySlots,
    buf: c_int,
    filled: Option<&mut Vec<Option<Task>>>,
) {
    #[cfg(feature = "luajit")]
    if let Some((base, consts)) = keys.base.zip(keys.consts) {
        if built_in_lua::push_tasks(l, tasks, base, consts, buf, filled) {
            return;
        }
    }
    #[cfg(not(feature = "luajit"))]
    let _ = (buf, filled);
    new_array(l, tasks.len());
    for (i, t) in tasks.iter().enumerate() {
        match keys.base {
            Some(base) => push_task_named(l, base, t),
            None => push_task(l, t),
        }
        ffi::lua_rawseti(l, -2, (i + 1) as _);
    }
}

/// LuaJIT: task tables built by compiled Lua from a flat buffer the C side fills.
///
/// Setting a string key with the C API hashes it into a new table's nodes and finds a
/// free one (`lua_rawset`), where a compiled table constructor copies a template and
/// stores into known slots. So the C side only writes each task's values into a reused
/// array (`lua_rawseti`, no hashing) and `TASK_BUILDER` makes the tables. A task whose
/// fields are not all plain (metadata, fields the model does not know) is built by the
/// C side whole and passed through.
#[cfg(feature = "luajit")]
mod built_in_lua {
    use super::*;

    /// Buffer slots per task: kind, id, subject, status, description, activeForm, owner,
    /// blockedBy (kind 3: the table itself in the second slot).
    pub const STRIDE: usize = 8;

    /// # Safety
    ///
    /// Inside `raw::exec`, with `base` from `KeySlots::push`, `consts` the consts table's slot
    /// and `buf` a buffer table's slot (or any other value: a buffer is made).
    pub unsafe fn push_tasks(
        l: L,
        tasks: &[Task],
        base: c_int,
        consts: c_int,
        buf: c_int,
        mut filled: Option<&mut Vec<Option<Task>>>,
    ) -> bool {
        if ffi::lua_checkstack(l, 12) == 0 {
            return false;
        }
        ffi::lua_rawgeti(l, consts, Const::TaskBuilder as _);
        if ffi::lua_type(l, -1) != ffi::LUA_TFUNCTION {
            ffi::lua_settop(l, -2);
            return false;
        }
        let builder = ffi::lua_gettop(l);
        if ffi::lua_type(l, buf) == ffi::LUA_TTABLE {
            ffi::lua_pushvalue(l, buf);
        } else {
            // No buffer to reuse: one for this build alone. What it was filled from is
            // not remembered.
            filled = None;
            ffi::lua_createtable(
                l,
                (tasks.len() * STRIDE).min(c_int::MAX as usize) as c_int,
                0,
            );
        }
        if let Some(f) = filled.as_deref_mut() {
            f.truncate(tasks.len());
        }
        let buf = ffi::lua_gettop(l);
        for (i, t) in tasks.iter().enumerate() {
            let at = (i * STRIDE) as ffi::lua_Integer;
            match filled.as_deref_mut() {
                Some(filled) => match filled.get_mut(i) {
                    Some(Some(was)) if plain(t) && was == t => {}
                    Some(was) => {
                        // Forgotten first: should the fill stop half way (out of
                        // memory), the slots are never taken for filled.
                        *was = None;
                        fill(l, buf, at, t, base);
                        *was = plain(t).then(|| t.clone());
                    }
                    None => {
                        fill(l, buf, at, t, base);
                        filled.push(plain(t).then(|| t.clone()));
                    }
                },
                None => fill(l, buf, at, t, base),
            }
        }
        new_array(l, tasks.len());
        let out = ffi::lua_gettop(l);
        ffi::lua_pushvalue(l, builder);
        ffi::lua_pushvalue(l, buf);
        ffi::lua_pushinteger(l, tasks.len() as _);
        ffi::lua_pushvalue(l, out);
        ffi::lua_call(l, 3, 0);
        // builder, buf, out -> out
        ffi::lua_replace(l, builder);
        ffi::lua_settop(l, builder);
        true
    }

    /// Slots that can be read again for another build: no table in them is handed out
    /// (the builder copies `blockedBy`; metadata and unknown fields come built).
    fn plain(t: &Task) -> bool {
        t.metadata.is_none()
            && t.extra.is_empty()
            && !matches!(&t.blocked_by, Some(ids) if ids.is_empty())
    }

    /// Task `t`'s slots from `at + 1`.
    ///
    /// # Safety
    ///
    /// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules in `raw`).
    unsafe fn fill(l: L, buf: c_int, at: ffi::lua_Integer, t: &Task, base: c_int) {
        let set = |k: ffi::lua_Integer| ffi::lua_rawseti(l, buf, (at + k) as _);
        if !plain(t) {
            ffi::lua_pushinteger(l, 3);
            set(1);
            push_task_named(l, base, t);
            set(2);
            return;
        }
        let optional = t.description.is_some() || t.owner.is_some() || t.blocked_by.is_some();
        let kind = match (optional, t.active_form.is_some()) {
            (false, false) => 0,
            (false, true) => 1,
            (true, _) => 2,
        };
        ffi::lua_pushinteger(l, kind);
        set(1);
        ffi::lua_pushinteger(l, t.id as _);
        set(2);
        push_str(l, &t.subject);
        set(3);
        ffi::lua_pushvalue(l, status_slot(base, t.status));
        set(4);
        if kind == 1 {
            push_opt_str(l, t.active_form.as_deref());
            set(6);
        } else if kind == 2 {
            push_opt_str(l, t.description.as_deref());
            set(5);
            push_opt_str(l, t.active_form.as_deref());
            set(6);
            push_opt_str(l, t.owner.as_deref());
            set(7);
            match &t.blocked_by {
                Some(ids) => push_ids(l, ids),
                None => ffi::lua_pushnil(l),
            }
            set(8);
        }
    }

    /// # Safety
    ///
    /// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules in `raw`).
    unsafe fn push_opt_str(l: L, s: Option<&str>) {
        match s {
            Some(s) => push_str(l, s),
            None => ffi::lua_pushnil(l),
        }
    }
}

/// The Lua side of `built_in_lua` (LuaJIT only; compiled by the JIT).
#[cfg(feature = "luajit")]
const TASK_BUILDER: &str = include_str!("../../lua/rpiv_todo/native/task_builder.lua");

/// `TASK_BUILDER`, loaded.
#[cfg(feature = "luajit")]
pub(super) fn task_builder(lua: &Lua) -> mlua::Result<mlua::Function> {
    lua.load(TASK_BUILDER)
        .set_name("@lua/rpiv_todo/native/task_builder.lua")
        .eval()
}

/// `Ctx::consts` for an exec_raw argument (nil before `exports` ran).
fn consts(lua: &Lua) -> LuaValue {
    lua.app_data_ref::<super::Ctx>()
        .map_or(LuaValue::Nil, |ctx| LuaValue::Table(ctx.consts.clone()))
}

/// Leave only the value on top of the stack as the closure's result.
///
/// # Safety
///
/// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules in `raw`).
pub(super) unsafe fn keep_top(l: L) {
    ffi::lua_insert(l, 1);
    ffi::lua_settop(l, 1);
}

/// `{ tasks = {...}, nextId = n }`.
pub fn state(lua: &Lua, array_mt: &Table, s: &State) -> mlua::Result<Table> {
    state_with(lua, array_mt, s, None)
}

/// `state`, reusing a list's `ListBuildBuffer` when one is given (and not in use).
pub fn state_with(
    lua: &Lua,
    array_mt: &Table,
    s: &State,
    list_buffer: Option<&RefCell<ListBuildBuffer>>,
) -> mlua::Result<Table> {
    let mut own = list_buffer.and_then(|b| b.try_borrow_mut().ok());
    let (buf, _shared) = buffer(lua, own.as_deref_mut(), s.tasks.len())?;
    // SAFETY: the closure only pushes values onto the stack and leaves exactly one
    // result; it holds no value with a destructor, so a Lua error unwinding through it
    // (out of memory) leaks nothing (`own` and `shared` live out here).
    unsafe {
        crate::lua::raw::exec(lua, (array_mt, consts(lua), buf), |l| {
            let keys = KeySlots::push(l, 2);
            ffi::lua_createtable(l, 0, 2);
            push_tasks(
                l,
                &s.tasks,
                &keys,
                3,
                own.as_deref_mut().map(|b| &mut b.filled),
            );
            ffi::lua_setfield(l, -2, c"tasks".as_ptr());
            set_int(l, c"nextId", s.next_id);
            keep_top(l);
        })
    }
}

/// The build buffer for `n` tasks: a list's own when it has one, else the state's shared
/// one (held by the returned `Shared` until it is dropped).
fn buffer(
    lua: &Lua,
    own: Option<&mut ListBuildBuffer>,
    n: usize,
) -> mlua::Result<(LuaValue, Shared)> {
    match own {
        Some(b) => Ok((
            b.table(lua, n)?,
            Shared {
                consts: None,
                table: None,
            },
        )),
        None => {
            let shared = Shared::take(lua, n);
            Ok((shared.value(), shared))
        }
    }
}

/// Any JSON value as a Lua value.
pub fn json(lua: &Lua, array_mt: &Table, v: &Value) -> mlua::Result<LuaValue> {
    // SAFETY: as in `state`.
    unsafe {
        crate::lua::raw::exec(lua, array_mt, |l| {
            push_value(l, v);
            keep_top(l);
        })
    }
}

/// `{ content = { { type = "text", text } }, details = { action, params, tasks, nextId, error? } }`.
/// `action` and `params` are the caller's own values, echoed as given.
pub fn result(
    lua: &Lua,
    array_mt: &Table,
    reply: &Reply,
    action: LuaValue,
    params: LuaValue,
    s: &State,
    list_buffer: Option<&RefCell<ListBuildBuffer>>,
) -> mlua::Result<Table> {
    const ACTION: c_int = 2;
    const PARAMS: c_int = 3;
    const CONSTS: c_int = 4;
    const BUF: c_int = 5;
    let mut own = list_buffer.and_then(|b| b.try_borrow_mut().ok());
    let (buf, _shared) = buffer(lua, own.as_deref_mut(), s.tasks.len())?;
    // SAFETY: as in `state_with`.
    unsafe {
        crate::lua::raw::exec(lua, (array_mt, action, params, consts(lua), buf), |l| {
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
            ffi::lua_pushvalue(l, ACTION);
            ffi::lua_setfield(l, -2, c"action".as_ptr());
            ffi::lua_pushvalue(l, PARAMS);
            ffi::lua_setfield(l, -2, c"params".as_ptr());
            push_tasks(
                l,
                &s.tasks,
                &keys,
                BUF,
                own.as_deref_mut().map(|b| &mut b.filled),
            );
            ffi::lua_setfield(l, -2, c"tasks".as_ptr());
            set_int(l, c"nextId", s.next_id);
            if let Some(e) = &reply.error {
                set_str(l, c"error", e);
            }
            ffi::lua_setfield(l, -2, c"details".as_ptr());
            keep_top(l);
        })
    }
}

#[cfg(all(test, feature = "luajit"))]
mod tests {
    use super::*;
    use mlua::{Function, ObjectLike};

    fn sample() -> State {
        let v = serde_json::json!({"tasks": [
            {"id": 1, "subject": "plain", "status": "pending"},
            {"id": 2, "subject": "form", "status": "in_progress", "activeForm": "forming"},
            {"id": 3, "subject": "empty form", "status": "pending", "activeForm": ""},
            {"id": 4, "subject": "described", "status": "completed", "description": "d"},
            {"id": 5, "subject": "owned", "status": "pending", "owner": "me", "activeForm": "f"},
            {"id": 6, "subject": "waits", "status": "pending", "blockedBy": [1, 4]},
            {"id": 7, "subject": "meta", "status": "deleted", "metadata": {"k": [1, {"x": null}], "e": {}}},
            {"id": 8, "subject": "extra", "status": "pending", "later": {"a": 1}}
        ], "nextId": 9});
        crate::json::state_from_value(&v).unwrap()
    }

    #[test]
    fn tasks_built_in_lua_equal_tasks_built_in_c() {
        let lua = Lua::new();
        super::super::exports(&lua).unwrap();
        let ctx = super::super::Ctx::get(&lua).unwrap();
        let same = super::super::same_tables(&lua);
        let builder: LuaValue = ctx.consts.raw_get(Const::TaskBuilder as i64).unwrap();
        assert!(
            matches!(builder, LuaValue::Function(_)),
            "LuaJIT has a builder"
        );
        for s in [sample(), State::default()] {
            let built = state(&lua, &ctx.array_mt, &s).unwrap();
            let again = state(&lua, &ctx.array_mt, &s).unwrap();
            ctx.consts
                .raw_set(Const::TaskBuilder as i64, false)
                .unwrap();
            let in_c = state(&lua, &ctx.array_mt, &s).unwrap();
            ctx.consts
                .raw_set(Const::TaskBuilder as i64, builder.clone())
                .unwrap();
            let bad: Option<String> = same.call((built.clone(), in_c)).unwrap();
            assert_eq!(bad, None);
            // Every build is fresh: no table is shared with the one before.
            let shared: bool = lua
                .load(
                    "local a, b = ...
                     for i, t in ipairs(a.tasks) do
                       if rawequal(t, b.tasks[i]) or (t.blockedBy and rawequal(t.blockedBy, b.tasks[i].blockedBy)) then
                         return true
                       end
                     end
                     return rawequal(a.tasks, b.tasks)",
                )
                .call((built, again))
                .unwrap();
            assert!(!shared, "two builds share a table");
        }
    }

    /// Every recorded trace through a list handle (its own buffer, reused from call to
    /// call): each result's tasks equal the list's state built in C, and no result shares
    /// a table with the one before.
    #[test]
    fn a_list_reusing_its_buffer_builds_what_c_builds_on_every_recorded_step() {
        let lua = Lua::new();
        let core = super::super::exports(&lua).unwrap();
        let ctx = super::super::Ctx::get(&lua).unwrap();
        let same = super::super::same_tables(&lua);
        let builder: LuaValue = ctx.consts.raw_get(Const::TaskBuilder as i64).unwrap();
        let fresh: Function = lua
            .load(
                "local a, b = ...
                 if a == nil then return true end
                 for i, t in ipairs(b) do
                   for _, u in ipairs(a) do
                     if rawequal(t, u) or (t.blockedBy and rawequal(t.blockedBy, u.blockedBy)) then
                       return false
                     end
                   end
                 end
                 return true",
            )
            .into_function()
            .unwrap();
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/reducer-traces.jsonl");
        let text = std::fs::read_to_string(path).unwrap();
        let new_list: Function = core.get("list").unwrap();
        let mut steps = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let trace: serde_json::Value = serde_json::from_str(line).unwrap();
            let list: mlua::AnyUserData = new_list.call(()).unwrap();
            let mut before = LuaValue::Nil;
            for step in trace["steps"].as_array().unwrap() {
                let params = json(&lua, &ctx.array_mt, &step["params"]).unwrap();
                let result: Table = list.call_method("apply", params).unwrap();
                let tasks: Table = result
                    .get::<Table>("details")
                    .unwrap()
                    .get("tasks")
                    .unwrap();
                ctx.consts
                    .raw_set(Const::TaskBuilder as i64, false)
                    .unwrap();
                let in_c: Table = list.call_method("state", ()).unwrap();
                ctx.consts
                    .raw_set(Const::TaskBuilder as i64, builder.clone())
                    .unwrap();
                let bad: Option<String> = same
                    .call((tasks.clone(), in_c.get::<Table>("tasks").unwrap()))
                    .unwrap();
                assert_eq!(bad, None, "{} step {steps}", trace["name"]);
                assert!(
                    fresh.call::<bool>((before, tasks.clone())).unwrap(),
                    "{} step {steps}: a shared table",
                    trace["name"]
                );
                before = LuaValue::Table(tasks);
                steps += 1;
            }
        }
        assert!(steps > 1000, "{steps} steps");
    }

    /// Issue 18, fault 6: a list's build buffer was never trimmed; after a 5,000-task list
    /// was emptied, 10.5 MB stayed reachable.
    #[test]
    fn an_emptied_list_lets_go_of_its_build_buffer() {
        let lua = Lua::new();
        let core = super::super::exports(&lua).unwrap();
        lua.globals().set("core", core).unwrap();
        let kept_kb: f64 = lua
            .load(
                r#"
                collectgarbage("collect")
                collectgarbage("collect")
                local before = collectgarbage("count")
                local tasks = {}
                for i = 1, 5000 do
                  tasks[i] = { id = i, subject = string.rep("s", 200) .. i, status = "pending",
                    activeForm = string.rep("f", 200) .. i }
                end
                local list = core.list({ tasks = tasks, nextId = 5001 })
                tasks = nil
                list:state()
                list:replace(nil)
                list:state()
                collectgarbage("collect")
                collectgarbage("collect")
                local kept = collectgarbage("count") - before
                list = nil
                return kept
                "#,
            )
            .eval()
            .unwrap();
        assert!(kept_kb < 256.0, "{kept_kb} KB kept by an empty list");
    }

    /// Issue 18, fault 6: a build that raised left the shared buffer's slot taken for good
    /// (every later build then made a buffer of its own).
    #[test]
    fn a_build_that_raises_gives_the_shared_buffer_back() {
        let lua = Lua::new();
        super::super::exports(&lua).unwrap();
        let ctx = super::super::Ctx::get(&lua).unwrap();
        let buffer: LuaValue = ctx.consts.raw_get(Const::BuildBuffer as i64).unwrap();
        assert!(matches!(buffer, LuaValue::Table(_)), "a shared buffer");
        // A count hook raises inside the builder (the only Lua code that runs).
        lua.set_hook(
            mlua::HookTriggers::new().every_nth_instruction(1),
            |_, _| Err(mlua::Error::runtime("hook")),
        )
        .unwrap();
        let r = state(&lua, &ctx.array_mt, &sample());
        lua.remove_hook();
        assert!(r.is_err(), "the build raised");
        let after: LuaValue = ctx.consts.raw_get(Const::BuildBuffer as i64).unwrap();
        assert_eq!(after, buffer, "the same buffer is back in its slot");
    }

    #[test]
    fn a_build_started_from_inside_a_build_uses_a_buffer_of_its_own() {
        // SAFETY: the debug library, for the hook; nothing else here is unsafe.
        let lua = unsafe { Lua::unsafe_new() };
        super::super::exports(&lua).unwrap();
        let ctx = super::super::Ctx::get(&lua).unwrap();
        let same = super::super::same_tables(&lua);
        let s = sample();
        let expected = state(&lua, &ctx.array_mt, &s).unwrap();
        // A count hook runs Lua code inside the builder; it builds another list.
        let other = State {
            tasks: vec![Task::new(1, "inner".into()); 1],
            next_id: 2,
        };
        let inner = lua
            .create_function(move |lua, ()| {
                let ctx = super::super::Ctx::get(lua)?;
                state(lua, &ctx.array_mt, &other)
            })
            .unwrap();
        lua.globals().set("inner", inner).unwrap();
        lua.load("debug.sethook(function() inner() end, '', 1)")
            .exec()
            .unwrap();
        let got = state(&lua, &ctx.array_mt, &s).unwrap();
        lua.load("debug.sethook()").exec().unwrap();
        let bad: Option<String> = same.call((expected, got)).unwrap();
        assert_eq!(bad, None);
    }
}
