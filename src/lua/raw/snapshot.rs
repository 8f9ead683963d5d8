//! `snapshot_table`: the native copy of a replayed snapshot (`tasks` and `nextId`), table to
//! table, checked as it is copied; the general conversion (`read`, then `write::state`)
//! when a task has another shape.
//!
//! Rules it keeps:
//! - **It allocates in Lua** (`lua_createtable`, `lua_rawset`), so any call may raise: what
//!   it owns (the ids and links for `task::check_links`, a metadata value while it is
//!   pushed) lives in `Links`, outside the protected call, and only borrows and `Copy`
//!   values are held across those calls.
//! - **Only tables and numbers reach the raw calls**: `lua_next` on anything else is a
//!   crash, and `lua_rawlen` of a number converts it in place on LuaJIT and 5.1, so the
//!   entry point refuses other types before `exec`.
//! - **Interned-string identity** (`InternedKeys`): a field or status string is compared
//!   by its data pointer with the strings held in `Ctx::consts`, which stays on the stack
//!   (slot `COPY_CONSTS`) for the whole copy, so those strings cannot be collected or
//!   moved; only short strings (interned in every flavour) are compared this way.
//! - Array lengths come from counting keys (`copy_ids`, and `copy` for the tasks), never
//!   from `lua_rawlen` alone.
//! - Metadata goes through the reader, whose stack room is reserved first.

use std::ffi::c_int;

use mlua::{ffi, Lua, Table, Value as LuaValue};
use serde_json::Value;

use super::read::{read, value, Budget, READ_ROOM};
use super::{exec, index, num, str, write, Const, Empty, L};
use crate::lua::Ctx;

/// The state table a winning entry's `tasks` and `nextId` make, or `None` when they do
/// not make a valid state. When every task has the plain shape (see `task`), the tasks
/// are checked and copied table to table in one pass of raw reads, reusing the entry's
/// own strings (nothing is interned again); otherwise the general conversion decides.
/// One pass, because each detour tried (JSON values, a `State`, a separate check pass)
/// left the copy slower than plain Lua's.
pub fn snapshot_table(
    lua: &Lua,
    ctx: &Ctx,
    tasks: &LuaValue,
    next: &LuaValue,
) -> mlua::Result<Option<Table>> {
    // The raw copy reads `tasks` with table calls (`lua_next` on anything else is a
    // crash, `lua_rawlen` of a number converts it in place on LuaJIT and 5.1): only a
    // table and a number get that far, whoever the caller.
    if !matches!(tasks, LuaValue::Table(_))
        || !matches!(next, LuaValue::Number(_) | LuaValue::Integer(_))
    {
        return Ok(None);
    }
    let mut plain = false;
    let mut links = Links::default();
    // SAFETY: the closure reads the entry and builds new tables; it leaves exactly the
    // result (or nil). What it owns lives in `links`, out here, including the metadata
    // value while it is pushed, so a push that raises (a `longjmp` on PUC Lua) skips no
    // destructor.
    let t: LuaValue = unsafe {
        exec(lua, (&ctx.array_mt, &ctx.consts, tasks, next), |l| {
            plain = copy(l, &mut links);
            if plain {
                ffi::lua_insert(l, 1);
                ffi::lua_settop(l, 1);
            } else {
                ffi::lua_settop(l, 0);
                ffi::lua_pushnil(l);
            }
        })?
    };
    if let (true, LuaValue::Table(t)) = (plain, t) {
        return Ok(Some(t));
    }
    let parts = read(lua, ctx, tasks, Empty::Array, false)
        .ok()
        .zip(read(lua, ctx, next, Empty::Object, false).ok());
    match parts.and_then(|(t, n)| crate::replay::state_from_parts(t, n)) {
        Some(s) => Ok(Some(write::state(lua, &ctx.array_mt, &s)?)),
        None => Ok(None),
    }
}

/// The most array slots a `blockedBy` copy is made with before its keys are counted.
const PRESIZE: usize = 64;

/// Stack slots in `copy`: array metatable, consts, tasks, nextId, then the eight task
/// field names in `FIELDS` order (`InternedKeys::new` leaves them there).
const COPY_CONSTS: c_int = 2;
const COPY_TASKS: c_int = 3;
const COPY_NEXT: c_int = 4;
const COPY_KEYS: c_int = 5;

/// Each copied task's id and `blockedBy` ids, for `task::check_links`.
#[derive(Default)]
struct Links {
    ids: Vec<crate::task::Id>,
    /// Per task: where its `blockedBy` ids start in `edges`, and how many.
    deps: Vec<(usize, usize)>,
    edges: Vec<crate::task::Id>,
    /// The metadata being copied (see `copy_task`).
    metadata: Option<Value>,
    /// What the copy may build (the reader's budget): `blockedBy` ids and metadata.
    budget: Budget,
}

/// `{ tasks = { copies }, nextId = n }` on top of the stack when every task at
/// `COPY_TASKS` has the plain shape and together they keep the list's rules
/// (`State::validate`, `nextId` repaired as it repairs it); false (stack left as it
/// is) otherwise.
///
/// # Safety
///
/// Only inside an `exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules above).
unsafe fn copy(l: L, links: &mut Links) -> bool {
    if ffi::lua_checkstack(l, 16) == 0 {
        return false;
    }
    // The eight field names stay on the stack from here (slots `COPY_KEYS..`).
    let Some(interned) = InternedKeys::new(l, COPY_CONSTS) else {
        return false;
    };
    let n = ffi::lua_rawlen(l, COPY_TASKS);
    let next_id = match ffi::lua_type(l, COPY_NEXT) {
        ffi::LUA_TNUMBER => num(l, COPY_NEXT).and_then(|v| crate::params::id("nextId", &v).ok()),
        _ => None,
    };
    let Some(next_id) = next_id.filter(|_| n > 0) else {
        return false;
    };
    // Keys exactly 1..n: as many keys as the length.
    let mut count: usize = 0;
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, COPY_TASKS) != 0 {
        count = count.saturating_add(1);
        ffi::lua_settop(l, -2);
    }
    if count != n {
        return false;
    }
    ffi::lua_createtable(l, 0, 2);
    ffi::lua_createtable(l, n.min(c_int::MAX as usize) as c_int, 0);
    let dst_tasks = ffi::lua_gettop(l);
    links.ids.reserve(n);
    links.deps.reserve(n);
    for i in 1..=n {
        ffi::lua_rawgeti(l, COPY_TASKS, i as _);
        let src = dst_tasks.saturating_add(1);
        if ffi::lua_type(l, src) != ffi::LUA_TTABLE || !copy_task(l, &interned, src, links) {
            return false;
        }
        ffi::lua_rawseti(l, dst_tasks, i as _);
        ffi::lua_settop(l, dst_tasks);
    }
    let Links {
        ids, deps, edges, ..
    } = &*links;
    let Ok(largest) = crate::task::check_links(
        ids.len(),
        |i| ids[i],
        |i| {
            let (start, len) = deps[i];
            edges.get(start..start.saturating_add(len)).unwrap_or(&[])
        },
    ) else {
        return false;
    };
    let next_id = crate::task::repaired_next_id(next_id, largest);
    ffi::lua_setfield(l, -2, c"tasks".as_ptr());
    ffi::lua_pushinteger(l, next_id as _);
    ffi::lua_setfield(l, -2, c"nextId".as_ptr());
    true
}

/// Check the task table at `src` (the plain shape of `task`) and leave its copy on top.
///
/// # Safety
///
/// Only inside an `exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules above).
unsafe fn copy_task(l: L, interned: &InternedKeys, src: c_int, links: &mut Links) -> bool {
    let dst = src.saturating_add(1);
    let start = links.edges.len();
    let mut id = None;
    ffi::lua_createtable(l, 0, 4);
    let (key, val) = (dst.saturating_add(1), dst.saturating_add(2));
    let mut required: i32 = 0;
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, src) != 0 {
        let field = match ffi::lua_type(l, key) {
            ffi::LUA_TSTRING => interned.which(l, key),
            _ => None,
        };
        // Strings and the status are the entry's own values: `key, val` is set as it
        // stands, and the key (the same interned string) pushed again from its slot for
        // `lua_next`: two calls a field.
        let own = match field {
            Some(Const::Status) => interned.status(l, val).is_some(),
            Some(Const::Subject | Const::Description | Const::ActiveForm | Const::Owner) => {
                ffi::lua_type(l, val) == ffi::LUA_TSTRING && str(l, val).is_some()
            }
            _ => false,
        };
        if let (true, Some(f)) = (own, field) {
            required = required.saturating_add(matches!(f, Const::Status | Const::Subject) as i32);
            ffi::lua_rawset(l, dst);
            ffi::lua_pushvalue(l, InternedKeys::slot(f));
            continue;
        }
        ffi::lua_pushvalue(l, key);
        let ok = match field {
            Some(Const::Id) => match num(l, val).and_then(|v| crate::params::id("id", &v).ok()) {
                Some(v) => {
                    ffi::lua_pushinteger(l, v as _);
                    id = Some(v);
                    required = required.saturating_add(1);
                    true
                }
                None => false,
            },
            Some(Const::BlockedBy) => copy_ids(l, val, &mut links.edges, &mut links.budget),
            Some(Const::Metadata) if ffi::lua_type(l, val) == ffi::LUA_TTABLE => {
                // Room for the reader's levels, reserved while nothing is owned here.
                if ffi::lua_checkstack(l, READ_ROOM) == 0 {
                    return false;
                }
                // Kept in `links` while it is pushed: a push that raises (out of
                // memory) must leave nothing owned in this frame.
                links.metadata = value(
                    l,
                    COPY_CONSTS,
                    val,
                    2,
                    Empty::Object,
                    false,
                    &mut links.budget,
                )
                .ok()
                .filter(|v| v.is_object() && crate::params::check_nesting("metadata", v).is_ok());
                match &links.metadata {
                    Some(v) => {
                        write::push_value(l, v);
                        true
                    }
                    None => false,
                }
            }
            _ => false,
        };
        if !ok {
            return false;
        }
        ffi::lua_rawset(l, dst);
        ffi::lua_settop(l, key);
    }
    let Some(id) = id.filter(|_| required == 3) else {
        return false;
    };
    links.ids.push(id);
    links
        .deps
        .push((start, links.edges.len().saturating_sub(start)));
    true
}

/// Push a copy of the non-empty id array at `idx` (keys exactly `1..n`, integer ids),
/// adding the ids to `edges`. One pass of `lua_next`: the keys must come as `1, 2, ...`
/// and there must be `n` of them, `n` the raw length (a border only, never trusted alone).
/// (false with the copy half made when not: the caller drops the stack.)
///
/// # Safety
///
/// Only inside an `exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules above).
unsafe fn copy_ids(
    l: L,
    idx: c_int,
    edges: &mut Vec<crate::task::Id>,
    budget: &mut Budget,
) -> bool {
    if ffi::lua_type(l, idx) != ffi::LUA_TTABLE {
        return false;
    }
    let n = ffi::lua_rawlen(l, idx);
    if n == 0 {
        return false;
    }
    // One `blockedBy` table in many tasks is copied once per task: counted as the reader
    // counts a shared table, and past the budget left to the general reading (which
    // refuses it).
    if !budget.first(ffi::lua_topointer(l, idx)) {
        let outer = std::mem::replace(&mut budget.repeating, true);
        let taken = budget.take_n(n).is_ok();
        budget.repeating = outer;
        if !taken {
            return false;
        }
    }
    // Nothing is sized by `n` before the keys are counted: a border far past the keys
    // (keys at powers of two: a length of 2^28 with 29 keys) must not allocate for it.
    ffi::lua_createtable(l, n.min(PRESIZE) as c_int, 0);
    let dst = ffi::lua_gettop(l);
    let (key, val) = (dst.saturating_add(1), dst.saturating_add(2));
    let mut count: usize = 0;
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, idx) != 0 {
        count = count.saturating_add(1);
        // Keys in order, as `lua_next` gives an array part's; any other order (keys in the
        // hash part) is left to the general reading, which decides the same.
        let id = num(l, val).and_then(|v| crate::params::id("blockedBy", &v).ok());
        let (Some(true), Some(id)) = (index(l, key, n).map(|at| at == count), id) else {
            return false;
        };
        edges.push(id);
        ffi::lua_settop(l, key);
        ffi::lua_pushinteger(l, id as _);
        ffi::lua_rawseti(l, dst, count as _);
    }
    count == n
}

/// The data pointers of the interned task-field and status strings in `Ctx::consts`.
/// Short strings are interned (all strings in LuaJIT and 5.1, up to 40 bytes in 5.4),
/// so a string equals one of these exactly when it is the same object.
pub struct InternedKeys([*const u8; 12]);

const FIELDS: [Const; 8] = [
    Const::Id,
    Const::Subject,
    Const::Description,
    Const::ActiveForm,
    Const::Status,
    Const::BlockedBy,
    Const::Owner,
    Const::Metadata,
];

impl InternedKeys {
    /// The pointers, leaving the eight field names on the stack at `COPY_KEYS..` (the
    /// stack's top must be `COPY_KEYS - 1`).
    ///
    /// # Safety
    ///
    /// Only inside an `exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules above).
    unsafe fn new(l: L, consts: c_int) -> Option<InternedKeys> {
        if ffi::lua_gettop(l) != COPY_KEYS - 1 || ffi::lua_checkstack(l, 14) == 0 {
            return None;
        }
        let mut p = [std::ptr::null(); 12];
        for (i, slot) in p.iter_mut().enumerate() {
            ffi::lua_rawgeti(l, consts, (Const::Id as usize).saturating_add(i) as _);
            *slot = ffi::lua_tolstring(l, -1, std::ptr::null_mut()).cast();
            if i >= FIELDS.len() {
                ffi::lua_settop(l, -2);
            }
        }
        Some(InternedKeys(p))
    }

    /// The stack slot holding the name of `field` (one of `FIELDS`).
    fn slot(field: Const) -> c_int {
        COPY_KEYS.saturating_add((field as c_int).saturating_sub(Const::Id as c_int))
    }

    /// Which task field the string at `idx` names (interned: compared by address).
    ///
    /// # Safety
    ///
    /// Only inside an `exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules above).
    unsafe fn which(&self, l: L, idx: c_int) -> Option<Const> {
        let p = ffi::lua_tolstring(l, idx, std::ptr::null_mut()).cast::<u8>();
        let i = self.0[..8].iter().position(|&q| q == p)?;
        Some(FIELDS[i])
    }

    /// # Safety
    ///
    /// Only inside an `exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules above).
    unsafe fn status(&self, l: L, idx: c_int) -> Option<crate::task::Status> {
        // No type check first: `lua_tolstring` gives null for what is neither a string
        // nor a number, and a number becomes a new string in its slot (`idx` is a value
        // slot, never a key `lua_next` goes on from), which is none of these.
        let p: *const u8 = ffi::lua_tolstring(l, idx, std::ptr::null_mut()).cast();
        let i = self.0[8..].iter().position(|&q| q == p)?;
        Some(crate::task::Status::ALL[i])
    }
}
