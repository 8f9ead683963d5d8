//! Lua values to JSON values, for arguments the model wrote and snapshots a host hands
//! over. Everything that JSON cannot say is an error naming where it was found: a
//! function, a non-UTF-8 string, NaN, a table with mixed or sparse keys, nesting deeper
//! than `MAX_DEPTH` (which also catches cyclic tables).
//!
//! Two readers give the same values. The fast one (`raw`) reads tables through the raw C
//! API inside one protected call, allocates nothing in Lua and keeps no paths: on any
//! failure it stops and the safe one (`safe`, mlua's API, paths built as it goes) runs
//! again to name the fault. Errors are rare, so the paths are formatted only then.
//! `tests::the_raw_reader_agrees_with_the_safe_one` holds them equal on every recorded
//! argument and snapshot. The fast reader exists because building paths and going
//! through mlua's API for every value made the safe reader alone too slow for `core.replay`.

use std::ffi::c_int;

use mlua::{ffi, Lua, Table, Value as LuaValue};
use serde_json::{Map, Number, Value};

use super::Ctx;
use crate::error::{Error, Result};
use crate::params::MAX_SAFE_INTEGER;
#[cfg(test)]
use crate::task::{State, Task};

/// How deep a conversion may go before it stops: as deep as `serde_json` parses JSON text,
/// so that a table nested too deeply for the schema (`MAX_NESTING`, checked in the core on
/// both paths in the same order) still converts and a cyclic table still ends.
pub const MAX_DEPTH: usize = 128;

/// What an empty table means where it is found.
#[derive(Clone, Copy, PartialEq)]
pub enum Empty {
    Array,
    Object,
}

/// The names under which the tool's id arrays arrive: an empty table there is `[]`.
const ARRAY_FIELDS: [&str; 3] = ["blockedBy", "addBlockedBy", "removeBlockedBy"];

/// Convert the top level of a call's arguments.
pub fn params(lua: &Lua, ctx: &Ctx, v: &LuaValue) -> Result<Value> {
    match v {
        LuaValue::Table(t) => match raw::read(lua, ctx, v, Empty::Object, true) {
            Some(value) => Ok(value),
            None => safe::table(ctx, t, "arguments", 0, Empty::Object, true),
        },
        other => Err(Error::input(
            "arguments",
            "a table or a JSON string",
            type_name(other),
        )),
    }
}

/// Convert any value; `path` names it in errors.
pub fn value(lua: &Lua, ctx: &Ctx, v: &LuaValue, path: &str, empty: Empty) -> Result<Value> {
    match raw::read(lua, ctx, v, empty, false) {
        Some(value) => Ok(value),
        None => safe::value(ctx, v, path, 0, empty),
    }
}

/// An integral float within the exact range is an integer (Lua 5.4 JSON decoders give
/// `1.0` for `1`); other finite floats stay floats; NaN and infinities have no JSON form.
fn number(n: f64) -> Option<Value> {
    if n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER as f64 {
        Some(Value::from(n as i64))
    } else {
        Number::from_f64(n).map(Value::Number)
    }
}

fn type_name(v: &LuaValue) -> String {
    match v {
        LuaValue::LightUserData(_) => "a light userdata that is not null".into(),
        other => format!("a {}", other.type_name()),
    }
}

fn too_deep(path: &str) -> Error {
    Error::input(
        path,
        crate::params::TOO_DEEP,
        "deeper nesting (a cyclic table?)",
    )
}

/// The fast reader: raw C reads, no Lua allocation, `None` on anything it would refuse.
pub(super) mod raw {
    use super::*;

    type L = *mut ffi::lua_State;

    /// Stack slots inside `read`'s protected call: the per-state constants (see
    /// `Ctx::consts`) and the value.
    const CONSTS: c_int = 1;
    const VALUE: c_int = 2;

    pub fn read(lua: &Lua, ctx: &Ctx, v: &LuaValue, empty: Empty, top: bool) -> Option<Value> {
        let mut out = None;
        // SAFETY: the closure only reads (no Lua allocation, so no Lua error and no
        // collector step can interrupt it) and leaves the stack balanced.
        let done: mlua::Result<()> = unsafe {
            crate::lua::raw::exec(lua, (&ctx.consts, v), |l| {
                out = value(l, CONSTS, VALUE, 0, empty, top);
                ffi::lua_settop(l, 0);
            })
        };
        done.ok().and(out)
    }

    /// `core.replay` over a Lua array of branch entries: newest first, the first todo tool
    /// result (`crate::replay::rule`) whose `tasks` and `nextId` make a valid state wins;
    /// only those two are read. The result is a fresh state table (`snapshot_table`).
    pub fn replay(lua: &Lua, ctx: &Ctx, entries: &Table) -> mlua::Result<Option<Table>> {
        let positions = positions(lua, entries)?;
        let mut from = positions.last();
        while let Some((i, tasks, next)) = find(lua, ctx, entries, &positions, from)? {
            if let Some(t) = snapshot_table(lua, ctx, &tasks, &next)? {
                return Ok(Some(t));
            }
            from = i - 1;
        }
        Ok(None)
    }

    /// The newest entry at or before `from` that the rule calls a todo tool result:
    /// its position, `tasks` and `nextId`. Raw lookups with keys made once per state.
    fn find(
        lua: &Lua,
        ctx: &Ctx,
        entries: &Table,
        positions: &Positions,
        from: usize,
    ) -> mlua::Result<Option<(usize, LuaValue, LuaValue)>> {
        let mut at = 0;
        // SAFETY: as in `read`; the closure leaves `tasks` and `nextId` (or two nils).
        let (tasks, next): (LuaValue, LuaValue) = unsafe {
            crate::lua::raw::exec(lua, (&ctx.consts, entries), |l| {
                at = walk(l, positions.down_from(from));
                if at == 0 {
                    ffi::lua_settop(l, 0);
                    ffi::lua_pushnil(l);
                    ffi::lua_pushnil(l);
                } else {
                    ffi::lua_insert(l, 1);
                    ffi::lua_insert(l, 1);
                    ffi::lua_settop(l, 2);
                }
            })?
        };
        Ok((at > 0).then_some((at, tasks, next)))
    }

    /// The positions of an entries table that hold something, newest last: `1..=n` for a
    /// sequence, else its integer keys in `1..=border`, sorted. Counted, never taken from
    /// the length alone: a table with keys at powers of two has a border of 2^40 and a few
    /// dozen entries (issue 18, fault 1).
    pub enum Positions {
        Sequence(usize),
        Sparse(Vec<usize>),
    }

    impl Positions {
        /// The newest position, 0 for none.
        fn last(&self) -> usize {
            match self {
                Positions::Sequence(n) => *n,
                Positions::Sparse(keys) => keys.last().copied().unwrap_or(0),
            }
        }

        /// Positions at or before `from`, newest first.
        fn down_from(&self, from: usize) -> Box<dyn Iterator<Item = usize> + '_> {
            match self {
                Positions::Sequence(n) => Box::new((1..=from.min(*n)).rev()),
                Positions::Sparse(keys) => {
                    Box::new(keys.iter().rev().copied().filter(move |&i| i <= from))
                }
            }
        }
    }

    fn positions(lua: &Lua, entries: &Table) -> mlua::Result<Positions> {
        let mut keys = Vec::new();
        let (mut border, mut count) = (0, 0);
        // SAFETY: raw reads only (`lua_next` over keys it handed out, no allocation in
        // Lua); `keys` lives out here. The keys are collected only for a table that is
        // not a sequence (a second pass), so the usual case allocates nothing.
        unsafe {
            crate::lua::raw::exec::<()>(lua, entries, |l| {
                border = ffi::lua_rawlen(l, 1);
                for pass in 0..2 {
                    ffi::lua_pushnil(l);
                    while ffi::lua_next(l, 1) != 0 {
                        match (pass, index(l, -2, border)) {
                            (0, Some(_)) => count += 1,
                            (_, Some(i)) => keys.push(i),
                            _ => {}
                        }
                        ffi::lua_settop(l, -2);
                    }
                    if count == border {
                        break;
                    }
                }
                ffi::lua_settop(l, 0);
            })?;
        }
        if count == border {
            return Ok(Positions::Sequence(border));
        }
        keys.sort_unstable();
        Ok(Positions::Sparse(keys))
    }

    /// Leaves `tasks` and `nextId` on top of the stack and returns the entry's position;
    /// 0 when no entry among `candidates` (newest first) is a todo result.
    ///
    /// # Safety
    ///
    /// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules in `raw`).
    unsafe fn walk(l: L, candidates: impl Iterator<Item = usize>) -> usize {
        if ffi::lua_checkstack(l, 24) == 0 {
            return 0;
        }
        // The rule's strings, one slot each.
        let first = Const::Type as c_int;
        let base = ffi::lua_gettop(l) + 1 - first;
        for k in first..=Const::NextId as c_int {
            ffi::lua_rawgeti(l, CONSTS, k as _);
        }
        let slot = |k: Const| base + k as c_int;
        // Push `t[key]` (raw) and return its type.
        let get = |t: c_int, key: Const| {
            ffi::lua_pushvalue(l, slot(key));
            ffi::lua_rawget(l, t);
            ffi::lua_type(l, -1)
        };
        // Is `t[key]` the string in slot `want`?
        let is = |t: c_int, key: Const, want: Const| {
            get(t, key);
            let yes = ffi::lua_rawequal(l, -1, slot(want)) != 0;
            ffi::lua_settop(l, -2);
            yes
        };
        let work = ffi::lua_gettop(l);
        let (e, m, d, tasks, next) = (work + 1, work + 2, work + 3, work + 4, work + 5);
        for i in candidates {
            ffi::lua_settop(l, work);
            ffi::lua_rawgeti(l, VALUE, i as _);
            let todo = ffi::lua_type(l, e) == ffi::LUA_TTABLE
                && is(e, Const::Type, Const::Message)
                && get(e, Const::Message) == ffi::LUA_TTABLE
                && is(m, Const::Role, Const::ToolResult)
                && is(m, Const::ToolName, Const::Todo)
                && get(m, Const::Details) == ffi::LUA_TTABLE
                && get(d, Const::Tasks) == ffi::LUA_TTABLE
                && get(d, Const::NextId) == ffi::LUA_TNUMBER;
            if !todo {
                continue;
            }
            // An empty table counts as an empty array: hosts' JSON decoders cannot tell
            // `{}` from `[]`.
            let array = ffi::lua_rawlen(l, tasks) > 0 || {
                ffi::lua_pushnil(l);
                ffi::lua_next(l, tasks) == 0
            };
            ffi::lua_settop(l, next);
            if array {
                return i;
            }
        }
        0
    }

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
        let mut plain = false;
        let mut links = Links::default();
        // SAFETY: the closure reads the entry and builds new tables; it leaves exactly the
        // result (or nil). What it owns lives in `links`, out here, including the metadata
        // value while it is pushed, so a push that raises (a `longjmp` on PUC Lua) skips no
        // destructor.
        let t: LuaValue = unsafe {
            crate::lua::raw::exec(lua, (&ctx.array_mt, &ctx.consts, tasks, next), |l| {
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
        let parts = super::value(lua, ctx, tasks, "tasks", Empty::Array)
            .ok()
            .zip(super::value(lua, ctx, next, "nextId", Empty::Object).ok());
        match parts.and_then(|(t, n)| crate::replay::state_from_parts(t, n)) {
            Some(s) => Ok(Some(super::super::to_lua::state(lua, &ctx.array_mt, &s)?)),
            None => Ok(None),
        }
    }

    /// Stack slots in `copy`: array metatable, consts, tasks, nextId.
    const COPY_CONSTS: c_int = 2;
    const COPY_TASKS: c_int = 3;
    const COPY_NEXT: c_int = 4;

    /// Each copied task's id and `blockedBy` ids, for `task::check_links`.
    #[derive(Default)]
    struct Links {
        ids: Vec<crate::task::Id>,
        /// Per task: where its `blockedBy` ids start in `edges`, and how many.
        deps: Vec<(usize, usize)>,
        edges: Vec<crate::task::Id>,
        /// The metadata being copied (see `copy_task`).
        metadata: Option<Value>,
    }

    /// `{ tasks = { copies }, nextId = n }` on top of the stack when every task at
    /// `COPY_TASKS` has the plain shape and together they keep the list's rules
    /// (`State::validate`, `nextId` repaired as it repairs it); false (stack left as it
    /// is) otherwise.
    ///
    /// # Safety
    ///
    /// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules in `raw`).
    unsafe fn copy(l: L, links: &mut Links) -> bool {
        let Some(interned) = InternedKeys::new(l, COPY_CONSTS) else {
            return false;
        };
        if ffi::lua_checkstack(l, 16) == 0 {
            return false;
        }
        let n = ffi::lua_rawlen(l, COPY_TASKS);
        let next_id = match ffi::lua_type(l, COPY_NEXT) {
            ffi::LUA_TNUMBER => {
                num(l, COPY_NEXT).and_then(|v| crate::params::id("nextId", &v).ok())
            }
            _ => None,
        };
        let Some(next_id) = next_id.filter(|_| n > 0) else {
            return false;
        };
        // Keys exactly 1..n: as many keys as the length.
        let mut count = 0;
        ffi::lua_pushnil(l);
        while ffi::lua_next(l, COPY_TASKS) != 0 {
            count += 1;
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
            let src = dst_tasks + 1;
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
            |i| &edges[deps[i].0..deps[i].0 + deps[i].1],
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
    /// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules in `raw`).
    unsafe fn copy_task(l: L, interned: &InternedKeys, src: c_int, links: &mut Links) -> bool {
        let dst = src + 1;
        let start = links.edges.len();
        let mut id = None;
        ffi::lua_createtable(l, 0, 4);
        let (key, val) = (dst + 1, dst + 2);
        let mut required = 0;
        ffi::lua_pushnil(l);
        while ffi::lua_next(l, src) != 0 {
            let field = match ffi::lua_type(l, key) {
                ffi::LUA_TSTRING => interned.which(l, key),
                _ => None,
            };
            // Strings and the status are the entry's own values: `key, val` becomes
            // `key, key, val` and is set in one call, leaving the key for `lua_next`.
            let own = match field {
                Some(Const::Status) => interned.status(l, val).is_some(),
                Some(Const::Subject | Const::Description | Const::ActiveForm | Const::Owner) => {
                    ffi::lua_type(l, val) == ffi::LUA_TSTRING && str(l, val).is_some()
                }
                _ => false,
            };
            if own {
                required += matches!(field, Some(Const::Status | Const::Subject)) as i32;
                ffi::lua_pushvalue(l, key);
                ffi::lua_insert(l, val);
                ffi::lua_rawset(l, dst);
                continue;
            }
            ffi::lua_pushvalue(l, key);
            let ok = match field {
                Some(Const::Id) => match num(l, val).and_then(|v| crate::params::id("id", &v).ok())
                {
                    Some(v) => {
                        ffi::lua_pushinteger(l, v as _);
                        id = Some(v);
                        required += 1;
                        true
                    }
                    None => false,
                },
                Some(Const::BlockedBy) => copy_ids(l, val, &mut links.edges),
                Some(Const::Metadata) if ffi::lua_type(l, val) == ffi::LUA_TTABLE => {
                    // Kept in `links` while it is pushed: a push that raises (out of
                    // memory) must leave nothing owned in this frame (issue 18, fault 3).
                    links.metadata =
                        value(l, COPY_CONSTS, val, 2, Empty::Object, false).filter(|v| {
                            v.is_object() && crate::params::check_nesting("metadata", v).is_ok()
                        });
                    match &links.metadata {
                        Some(v) => {
                            super::super::to_lua::push_value(l, v);
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
        links.deps.push((start, links.edges.len() - start));
        true
    }

    /// The length of the table at `idx` when it is a non-empty array: its keys exactly
    /// `1..n` (what `copy_ids` and `ids` accept before reading the ids themselves).
    ///
    /// # Safety
    ///
    /// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules in `raw`).
    unsafe fn id_array_len(l: L, idx: c_int) -> Option<usize> {
        if ffi::lua_type(l, idx) != ffi::LUA_TTABLE {
            return None;
        }
        let n = ffi::lua_rawlen(l, idx);
        if n == 0 {
            return None;
        }
        let mut count = 0;
        ffi::lua_pushnil(l);
        while ffi::lua_next(l, idx) != 0 {
            count += 1;
            let ok = index(l, -2, n).is_some();
            ffi::lua_settop(l, -2);
            if !ok {
                ffi::lua_settop(l, -2);
                return None;
            }
        }
        (count == n).then_some(n)
    }

    /// Push a copy of the non-empty id array at `idx` (keys exactly 1..n, integer ids),
    /// adding the ids to `edges`.
    ///
    /// # Safety
    ///
    /// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules in `raw`).
    unsafe fn copy_ids(l: L, idx: c_int, edges: &mut Vec<crate::task::Id>) -> bool {
        let Some(n) = id_array_len(l, idx) else {
            return false;
        };
        ffi::lua_createtable(l, n.min(c_int::MAX as usize) as c_int, 0);
        for i in 1..=n {
            ffi::lua_rawgeti(l, idx, i as _);
            let id = num(l, -1).and_then(|v| crate::params::id("blockedBy", &v).ok());
            ffi::lua_settop(l, -2);
            let Some(id) = id else {
                return false;
            };
            edges.push(id);
            ffi::lua_pushinteger(l, id as _);
            ffi::lua_rawseti(l, -2, i as _);
        }
        true
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
        /// # Safety
        ///
        /// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
        /// given naming a live slot of the kind its doc says (the rules in `raw`).
        unsafe fn new(l: L, consts: c_int) -> Option<InternedKeys> {
            if ffi::lua_checkstack(l, 2) == 0 {
                return None;
            }
            let mut p = [std::ptr::null(); 12];
            for (i, slot) in p.iter_mut().enumerate() {
                ffi::lua_rawgeti(l, consts, (Const::Id as usize + i) as _);
                *slot = ffi::lua_tolstring(l, -1, std::ptr::null_mut()).cast();
                ffi::lua_settop(l, -2);
            }
            Some(InternedKeys(p))
        }

        /// Which task field the string at `idx` names (interned: compared by address).
        ///
        /// # Safety
        ///
        /// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
        /// given naming a live slot of the kind its doc says (the rules in `raw`).
        unsafe fn which(&self, l: L, idx: c_int) -> Option<Const> {
            let p = ffi::lua_tolstring(l, idx, std::ptr::null_mut()).cast::<u8>();
            let i = self.0[..8].iter().position(|&q| q == p)?;
            Some(FIELDS[i])
        }

        /// # Safety
        ///
        /// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
        /// given naming a live slot of the kind its doc says (the rules in `raw`).
        unsafe fn status(&self, l: L, idx: c_int) -> Option<crate::task::Status> {
            if ffi::lua_type(l, idx) != ffi::LUA_TSTRING {
                return None;
            }
            let p: *const u8 = ffi::lua_tolstring(l, idx, std::ptr::null_mut()).cast();
            let i = self.0[8..].iter().position(|&q| q == p)?;
            Some(crate::task::Status::ALL[i])
        }
    }

    /// The key at `idx` as an array index in `1..=n`.
    ///
    /// # Safety
    ///
    /// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules in `raw`).
    unsafe fn index(l: L, idx: c_int, n: usize) -> Option<usize> {
        if ffi::lua_type(l, idx) != ffi::LUA_TNUMBER {
            return None;
        }
        let k = ffi::lua_tonumber(l, idx);
        (k.fract() == 0.0 && k >= 1.0 && k <= n as f64).then_some(k as usize)
    }

    /// The value at absolute stack index `idx`; `consts` is the constants table's slot.
    ///
    /// # Safety
    ///
    /// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules in `raw`).
    pub unsafe fn value(
        l: L,
        consts: c_int,
        idx: c_int,
        depth: usize,
        empty: Empty,
        top: bool,
    ) -> Option<Value> {
        Some(match ffi::lua_type(l, idx) {
            ffi::LUA_TNIL => Value::Null,
            ffi::LUA_TBOOLEAN => Value::Bool(ffi::lua_toboolean(l, idx) != 0),
            ffi::LUA_TNUMBER => num(l, idx)?,
            ffi::LUA_TSTRING => Value::String(str(l, idx)?.to_owned()),
            ffi::LUA_TTABLE => table(l, consts, idx, depth, empty, top)?,
            ffi::LUA_TLIGHTUSERDATA if ffi::lua_touserdata(l, idx).is_null() => Value::Null,
            ffi::LUA_TUSERDATA if is_vim_nil(l, consts, idx) => Value::Null,
            _ => return None,
        })
    }

    /// A string's bytes as UTF-8; the slice lives as long as the string is reachable.
    ///
    /// # Safety
    ///
    /// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules in `raw`).
    pub unsafe fn str<'a>(l: L, idx: c_int) -> Option<&'a str> {
        let mut len = 0usize;
        let p = ffi::lua_tolstring(l, idx, &mut len).cast::<u8>();
        std::str::from_utf8(std::slice::from_raw_parts(p, len)).ok()
    }

    /// A number as mlua reads it: Lua 5.4 keeps its integer subtype; LuaJIT and 5.1
    /// numbers with an exact `i64` value are integers.
    ///
    /// # Safety
    ///
    /// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules in `raw`).
    pub unsafe fn num(l: L, idx: c_int) -> Option<Value> {
        // Not `lua_tonumber` alone: it reads "1" as 1 and anything else as 0.
        if ffi::lua_type(l, idx) != ffi::LUA_TNUMBER {
            return None;
        }
        #[cfg(feature = "lua54")]
        {
            if ffi::lua_isinteger(l, idx) != 0 {
                return Some(Value::from(ffi::lua_tointeger(l, idx)));
            }
            number(ffi::lua_tonumber(l, idx))
        }
        #[cfg(not(feature = "lua54"))]
        {
            let n = ffi::lua_tonumber(l, idx);
            // [-2^63, 2^63): the doubles that convert to an i64 without saturating.
            if (i64::MIN as f64..-(i64::MIN as f64)).contains(&n) {
                let i = n as i64;
                if (i as f64).to_bits() == n.to_bits() {
                    return Some(Value::from(i));
                }
            }
            number(n)
        }
    }

    /// # Safety
    ///
    /// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules in `raw`).
    unsafe fn is_vim_nil(l: L, consts: c_int, idx: c_int) -> bool {
        ffi::lua_rawgeti(l, consts, Const::VimNil as _);
        let yes = ffi::lua_rawequal(l, idx, -1) != 0;
        ffi::lua_settop(l, -2);
        yes
    }

    /// An empty table marked as an array by us, cjson, mlua's serde or dkjson.
    ///
    /// # Safety
    ///
    /// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules in `raw`).
    unsafe fn is_array_marked(l: L, consts: c_int, idx: c_int) -> bool {
        if ffi::lua_getmetatable(l, idx) == 0 {
            return false;
        }
        let mt = ffi::lua_gettop(l);
        let mut yes = false;
        for k in [Const::ArrayMt, Const::SerdeMt] {
            ffi::lua_rawgeti(l, consts, k as _);
            yes = yes || ffi::lua_rawequal(l, mt, -1) != 0;
            ffi::lua_settop(l, -2);
        }
        if !yes {
            ffi::lua_rawgeti(l, consts, Const::JsonType as _);
            ffi::lua_rawget(l, mt);
            ffi::lua_rawgeti(l, consts, Const::Array as _);
            yes = ffi::lua_rawequal(l, -1, -2) != 0;
        }
        ffi::lua_settop(l, mt - 1);
        yes
    }

    /// # Safety
    ///
    /// Only inside a `raw::exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules in `raw`).
    unsafe fn table(
        l: L,
        consts: c_int,
        idx: c_int,
        depth: usize,
        empty: Empty,
        top: bool,
    ) -> Option<Value> {
        if depth >= MAX_DEPTH || ffi::lua_checkstack(l, 8) == 0 {
            return None;
        }
        let len = ffi::lua_rawlen(l, idx);
        let (mut count, mut string_keys, mut bad_key) = (0usize, 0usize, false);
        // First pass: decide array or object from the keys alone.
        ffi::lua_pushnil(l);
        while ffi::lua_next(l, idx) != 0 {
            count += 1;
            match ffi::lua_type(l, -2) {
                ffi::LUA_TSTRING => string_keys += 1,
                ffi::LUA_TNUMBER => {
                    let n = ffi::lua_tonumber(l, -2);
                    bad_key |= !(n.fract() == 0.0 && n >= 1.0 && n <= len as f64);
                }
                _ => bad_key = true,
            }
            ffi::lua_settop(l, -2);
        }
        let is_array = match (count, string_keys) {
            (0, _) => empty == Empty::Array || is_array_marked(l, consts, idx),
            (_, 0) => !bad_key && count == len,
            _ => false,
        };
        if is_array {
            let mut items = Vec::with_capacity(len);
            for i in 1..=len {
                ffi::lua_rawgeti(l, idx, i as _);
                let item = value(
                    l,
                    consts,
                    ffi::lua_gettop(l),
                    depth + 1,
                    Empty::Object,
                    false,
                );
                ffi::lua_settop(l, -2);
                items.push(item?);
            }
            return Some(Value::Array(items));
        }
        if string_keys != count {
            return None;
        }
        let mut entries: Vec<(String, Value)> = Vec::with_capacity(count);
        ffi::lua_pushnil(l);
        while ffi::lua_next(l, idx) != 0 {
            let top_idx = ffi::lua_gettop(l);
            let Some(key) = str(l, top_idx - 1) else {
                ffi::lua_settop(l, top_idx - 2);
                return None;
            };
            let hint = if top && ARRAY_FIELDS.contains(&key) {
                Empty::Array
            } else {
                Empty::Object
            };
            let v = value(l, consts, top_idx, depth + 1, hint, false);
            ffi::lua_settop(l, top_idx - 1);
            match v {
                Some(v) => entries.push((key.to_owned(), v)),
                None => {
                    ffi::lua_settop(l, top_idx - 2);
                    return None;
                }
            }
        }
        // A Lua table has no key order; sorting makes the result (and the "No change"
        // check, which compares key order as JSON.stringify does) deterministic.
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Some(Value::Object(entries.into_iter().collect::<Map<_, _>>()))
    }
}

/// `core.replay` as LuaJIT runs it: the walk over entries in Lua, which the JIT compiles,
/// and the winning entry's snapshot copied in Lua too when every task has the plain shape
/// `raw::snapshot_table` copies (known fields only, no metadata); any other snapshot, and
/// any doubt, goes to `raw::snapshot_table`. The same rule and the same copies as the C
/// walk (`tests::the_walk_in_lua_agrees_with_the_walk_in_c`,
/// `tests::the_copy_in_lua_agrees_with_the_copy_in_c`).
///
/// The copy reads the known fields by name and counts the task's keys to find any other,
/// then builds the task in one constructor. Text must be UTF-8: ASCII passes a byte-class
/// search, anything else is checked natively, and text up to 512 bytes that passed is
/// remembered (at most 2,048 strings, then the memory starts afresh), so the strings a
/// conversation repeats in every snapshot are checked once.
///
/// In Lua because the JIT compiles it, where it cannot compile C API calls (a dozen an
/// entry for the walk, one per key and per value for the copy). Lua 5.4 interprets Lua,
/// so there the C walk and copy stay.
#[cfg_attr(not(feature = "luajit"), allow(dead_code))]
pub const WALK_IN_LUA: &str = include_str!("../../lua/rpiv_todo/native/replay_walk.lua");

/// `WALK_IN_LUA` over `native` (the C `core.replay`, for JSON text, nil and misuse).
#[cfg_attr(not(feature = "luajit"), allow(dead_code))]
pub fn walk_in_lua(lua: &Lua, native: mlua::Function) -> mlua::Result<mlua::Function> {
    let snapshot = lua.create_function(|lua, (tasks, next): (LuaValue, LuaValue)| {
        super::guarded(lua, "replay", || {
            let ctx = Ctx::get(lua)?;
            raw::snapshot_table(lua, &ctx, &tasks, &next)
        })
    })?;
    let utf8 = lua
        .create_function(|_, s: mlua::LuaString| Ok(std::str::from_utf8(&s.as_bytes()).is_ok()))?;
    lua.load(WALK_IN_LUA)
        .set_name("@lua/rpiv_todo/native/replay_walk.lua")
        .eval::<mlua::Function>()?
        .call((native, snapshot, utf8))
}

/// The slots of `Ctx::consts`: Lua values the raw reads compare with, made once per state.
#[derive(Clone, Copy)]
#[repr(i32)]
// The status slots are read by position (`InternedKeys`, `to_lua::KeySlots`).
#[allow(dead_code)]
pub(super) enum Const {
    ArrayMt = 1,
    SerdeMt,
    /// `vim.NIL`, or `false` outside Neovim.
    VimNil,
    JsonType,
    Array,
    // The replay walk's keys and values (`crate::replay::TODO_RESULT`).
    Type,
    Message,
    Role,
    ToolResult,
    ToolName,
    Todo,
    Details,
    Tasks,
    NextId,
    // A task's fields and the status names (`crate::task`).
    Id,
    Subject,
    Description,
    ActiveForm,
    Status,
    BlockedBy,
    Owner,
    Metadata,
    Pending,
    InProgress,
    Completed,
    Deleted,
    // The overlay's row views and counts (`super::overlay`).
    Task,
    Total,
    /// LuaJIT: the function that builds task tables from a flat buffer, and the buffer
    /// (`to_lua::push_tasks`); false in other flavours, and the buffer slot while in use.
    TaskBuilder,
    BuildBuffer,
}

impl Const {
    /// The strings after the first three slots, in order.
    pub const STRINGS: [&'static str; 25] = {
        use crate::replay::rule::*;
        [
            "__jsontype",
            "array",
            TYPE,
            MESSAGE,
            ROLE,
            TOOL_RESULT,
            TOOL_NAME,
            TODO,
            DETAILS,
            TASKS,
            NEXT_ID,
            "id",
            "subject",
            "description",
            "activeForm",
            "status",
            "blockedBy",
            "owner",
            "metadata",
            "pending",
            "in_progress",
            "completed",
            "deleted",
            "task",
            "total",
        ]
    };
}

/// The reference reader through mlua's API: paths are built as it goes, so it names any
/// fault exactly. Runs only when the raw reader refused (and in the tests).
pub(super) mod safe {
    use super::*;

    /// Convert any value; `path` names it in errors.
    pub fn value(ctx: &Ctx, v: &LuaValue, path: &str, depth: usize, empty: Empty) -> Result<Value> {
        Ok(match v {
            LuaValue::Nil => Value::Null,
            LuaValue::Boolean(b) => Value::Bool(*b),
            LuaValue::Integer(i) => Value::from(*i),
            LuaValue::Number(n) => {
                number(*n).ok_or_else(|| Error::input(path, "a finite number", n.to_string()))?
            }
            LuaValue::String(s) => Value::String(
                s.to_str()
                    .map_err(|_| Error::input(path, "UTF-8 text", "bytes that are not UTF-8"))?
                    .to_owned(),
            ),
            LuaValue::Table(t) => table(ctx, t, path, depth, empty, false)?,
            v if ctx.is_null(v) => Value::Null,
            other => return Err(Error::input(path, "a JSON value", type_name(other))),
        })
    }

    pub fn table(
        ctx: &Ctx,
        t: &Table,
        path: &str,
        depth: usize,
        empty: Empty,
        top: bool,
    ) -> Result<Value> {
        if depth >= MAX_DEPTH {
            return Err(too_deep(path));
        }
        let len = t.raw_len();
        let mut count = 0usize;
        let mut string_keys = 0usize;
        let mut bad_key = false;
        // First pass: decide array or object from the keys alone.
        let _ = t.for_each(|k: LuaValue, _: LuaValue| {
            count += 1;
            match k {
                LuaValue::String(_) => string_keys += 1,
                LuaValue::Integer(i) if i >= 1 && (i as usize) <= len => {}
                LuaValue::Number(n) if n.fract() == 0.0 && n >= 1.0 && (n as usize) <= len => {}
                _ => bad_key = true,
            }
            Ok(())
        });
        let is_array = match (count, string_keys) {
            (0, _) => empty == Empty::Array || ctx.is_array_marked(t),
            (_, 0) => !bad_key && count == len,
            _ => false,
        };
        if is_array {
            let mut items = Vec::with_capacity(len);
            for i in 1..=len {
                let v: LuaValue = t
                    .raw_get(i)
                    .map_err(|e| Error::input(path, "a readable table", e.to_string()))?;
                items.push(value(
                    ctx,
                    &v,
                    &format!("{path}[{i}]"),
                    depth + 1,
                    Empty::Object,
                )?);
            }
            return Ok(Value::Array(items));
        }
        if string_keys != count {
            return Err(Error::input(
                path,
                "an array (keys 1..n) or an object (string keys)",
                "a table with other keys",
            ));
        }
        let mut entries: Vec<(String, LuaValue)> = Vec::with_capacity(count);
        let mut not_utf8 = false;
        let _ = t.for_each(|k: mlua::LuaString, v: LuaValue| {
            match k.to_str() {
                Ok(key) => entries.push((key.to_owned(), v)),
                Err(_) => not_utf8 = true,
            }
            Ok(())
        });
        if not_utf8 {
            return Err(Error::input(path, "UTF-8 keys", "a key that is not UTF-8"));
        }
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut map = Map::with_capacity(entries.len());
        for (key, v) in entries {
            let child = if top {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            let hint = if top && ARRAY_FIELDS.contains(&key.as_str()) {
                Empty::Array
            } else {
                Empty::Object
            };
            let v = value(ctx, &v, &child, depth + 1, hint)?;
            map.insert(key, v);
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both readers on the value `code` evaluates to: the raw one succeeds exactly when the
    /// safe one does, with the same value.
    fn agree(lua: &Lua, ctx: &Ctx, v: &LuaValue, empty: Empty, top: bool) -> Option<Value> {
        let fast = raw::read(lua, ctx, v, empty, top);
        let slow = match v {
            LuaValue::Table(t) if top => safe::table(ctx, t, "arguments", 0, empty, true),
            _ => safe::value(ctx, v, "v", 0, empty),
        };
        assert_eq!(fast, slow.clone().ok(), "raw vs safe, safe said {slow:?}");
        fast
    }

    fn fixture(name: &str) -> Vec<Value> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// JSON as a host's decoder hands it over (cjson: `null` is the NULL light userdata,
    /// empty arrays carry the array metatable).
    fn to_lua(lua: &Lua, ctx: &Ctx, v: &Value) -> LuaValue {
        super::super::to_lua::json(lua, &ctx.array_mt, v).unwrap()
    }

    #[test]
    fn the_raw_reader_agrees_with_the_safe_one_on_every_recorded_call_and_snapshot() {
        let lua = Lua::new();
        let ctx = Ctx::new(&lua).unwrap();
        let mut n = 0;
        for trace in fixture("reducer-traces.jsonl") {
            for step in trace["steps"].as_array().unwrap() {
                let params = to_lua(&lua, &ctx, &step["params"]);
                let got = agree(&lua, &ctx, &params, Empty::Object, true);
                assert_eq!(got.as_ref(), Some(&step["params"]));
                let details = to_lua(&lua, &ctx, &step["details"]);
                let got = agree(&lua, &ctx, &details, Empty::Object, false);
                assert_eq!(got.as_ref(), Some(&step["details"]));
                n += 1;
            }
        }
        assert_eq!(n, 6825);
        for case in fixture("replay-cases.jsonl") {
            let entries = to_lua(&lua, &ctx, &case["entries"]);
            agree(&lua, &ctx, &entries, Empty::Array, false);
        }
    }

    /// The snapshot readers: straight into a `State` (when the shape is plain) and through
    /// JSON values, for a host's state table and for a replayed entry.
    fn snapshots_agree(lua: &Lua, ctx: &Ctx, state: &Value) -> bool {
        let table = to_lua(lua, ctx, state);
        let general = safe::value(ctx, &table, "state", 0, Empty::Object)
            .and_then(|v| crate::json::state_from_value(&v));
        // The raw reader, as `core.list(table)` reads a state (through JSON values).
        let fast = agree(lua, ctx, &table, Empty::Object, false)
            .and_then(|v| crate::json::state_from_value(&v).ok());
        if let Some(f) = &fast {
            assert_eq!(Ok(f), general.as_ref(), "state table {state}");
        }
        let entry = serde_json::json!([{"type": "message", "message": {"role": "toolResult",
            "toolName": "todo", "details": state}}]);
        let LuaValue::Table(entries) = to_lua(lua, ctx, &entry) else {
            panic!("not a table")
        };
        let walked = raw::replay(lua, ctx, &entries).unwrap().map(|t| {
            let v = safe::value(ctx, &LuaValue::Table(t), "state", 0, Empty::Object).unwrap();
            crate::json::state_from_value(&v).unwrap()
        });
        assert_eq!(
            walked.unwrap_or_default(),
            crate::replay::replay([&entry[0]]),
            "replay of {state}"
        );
        fast.is_some()
    }

    #[test]
    fn snapshots_read_straight_into_a_state_equal_the_general_reading() {
        let lua = Lua::new();
        let ctx = Ctx::new(&lua).unwrap();
        let (mut fast, mut all) = (0, 0);
        for trace in fixture("reducer-traces.jsonl") {
            for step in trace["steps"].as_array().unwrap() {
                let d = &step["details"];
                let state = serde_json::json!({"tasks": d["tasks"], "nextId": d["nextId"]});
                fast += snapshots_agree(&lua, &ctx, &state) as usize;
                all += 1;
            }
        }
        // Most recorded snapshots have the plain shape the fast reader takes.
        assert!(fast * 2 > all, "{fast} of {all} read fast");
        let odd = [
            r#"{"tasks": [{"id": 1, "subject": "a", "status": "pending", "owner": null}], "nextId": 2}"#,
            r#"{"tasks": [{"id": 1, "subject": "a", "status": "pending", "x": [1]}], "nextId": 2}"#,
            r#"{"tasks": [{"id": 1.5, "subject": "a", "status": "pending"}], "nextId": 2}"#,
            r#"{"tasks": [{"id": 1, "subject": "a", "status": "done"}], "nextId": 2}"#,
            r#"{"tasks": [{"id": 1, "subject": 5, "status": "pending"}], "nextId": 2}"#,
            r#"{"tasks": [{"id": 1, "status": "pending"}], "nextId": 2}"#,
            r#"{"tasks": [{"id": 1, "subject": "a", "status": "pending", "blockedBy": []}], "nextId": 2}"#,
            r#"{"tasks": [{"id": 1, "subject": "a", "status": "pending", "blockedBy": [2, 2.5]}], "nextId": 2}"#,
            r#"{"tasks": [{"id": 1, "subject": "a", "status": "pending", "metadata": {"k": [{}]}}], "nextId": 2}"#,
            r#"{"tasks": [{"id": 1, "subject": "a", "status": "pending", "metadata": []}], "nextId": 2}"#,
            r#"{"tasks": [{"id": 1, "subject": "a", "status": "pending"}]}"#,
            r#"{"tasks": [{"id": 1, "subject": "a", "status": "pending"}], "nextId": 1e300}"#,
            r#"{"tasks": [{"id": 1, "subject": "a", "status": "pending"}], "nextId": 2, "more": 1}"#,
            r#"{"tasks": [], "nextId": 2}"#,
            r#"{"tasks": [5], "nextId": 2}"#,
        ];
        for text in odd {
            snapshots_agree(&lua, &ctx, &serde_json::from_str(text).unwrap());
        }
    }

    #[test]
    fn the_walk_in_lua_agrees_with_the_walk_in_c() {
        let lua = Lua::new();
        crate::lua::exports(&lua).unwrap();
        let ctx = Ctx::get(&lua).unwrap();
        let native = crate::lua::native_replay(&lua).unwrap();
        let in_lua = walk_in_lua(&lua, native.clone()).unwrap();
        let read = |v: LuaValue| {
            let v = safe::value(&ctx, &v, "state", 0, Empty::Object).unwrap();
            crate::json::state_from_value(&v).unwrap()
        };
        let mut cases: Vec<Value> = fixture("replay-cases.jsonl")
            .into_iter()
            .map(|c| c["entries"].clone())
            .collect();
        let todo = |details: Value| {
            serde_json::json!({"type": "message", "message": {"role": "toolResult",
                "toolName": "todo", "details": details}})
        };
        let good = serde_json::json!({"tasks": [{"id": 1, "subject": "a", "status": "pending"}], "nextId": 2});
        cases.push(serde_json::json!([
            todo(good.clone()),
            todo(serde_json::json!({"tasks": {"a": 1}, "nextId": 3}))
        ]));
        cases.push(serde_json::json!([
            todo(good.clone()),
            todo(serde_json::json!({"tasks": [], "nextId": 3}))
        ]));
        cases.push(serde_json::json!([
            todo(good.clone()),
            todo(serde_json::json!({"tasks": [5], "nextId": 3})),
            7
        ]));
        cases.push(serde_json::json!([todo(good.clone()), {"type": "message", "message": {"role": "toolResult",
            "toolName": "bash", "details": good.clone()}}]));
        for entries in cases {
            let t = to_lua(&lua, &ctx, &entries);
            let a: LuaValue = native.call(t.clone()).unwrap();
            let b: LuaValue = in_lua.call(t).unwrap();
            assert_eq!(read(a), read(b), "for {entries}");
        }
        // Not a table: both hand it to the native function.
        let a: LuaValue = in_lua.call(LuaValue::Nil).unwrap();
        assert_eq!(read(a), State::default());
        assert!(in_lua.call::<LuaValue>(5).is_err());
    }

    /// Lua-built snapshots, odd in ways JSON cannot be, through both walks: the same
    /// tables (same keys, same strings, numbers equal bit for bit), or both the empty list.
    #[test]
    fn the_copy_in_lua_agrees_with_the_copy_in_c() {
        let lua = Lua::new();
        crate::lua::exports(&lua).unwrap();
        let ctx = Ctx::get(&lua).unwrap();
        let native = crate::lua::native_replay(&lua).unwrap();
        let in_lua = walk_in_lua(&lua, native.clone()).unwrap();
        let same = super::super::same_tables(&lua);
        // Each case: the tasks and nextId of the newest entry; an older entry holds one
        // plain task, so a refused snapshot shows as that list.
        let cases = [
            "{ { id = 1, subject = 'a', status = 'pending' } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', description = 'd', activeForm = 'f', owner = 'o' } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending' }, { id = 2, subject = 'b', status = 'completed', blockedBy = { 1 } } }, 3",
            "{ { id = -0.0, subject = 'a', status = 'pending' } }, -0.0",
            "{ { id = -7, subject = 'a', status = 'deleted' } }, 0",
            "{ { id = 2^53 - 1, subject = 'a', status = 'pending' } }, 2^53 - 1",
            "{ { id = 2^53, subject = 'a', status = 'pending' } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending' } }, 2^53",
            "{ { id = 1, subject = 'a', status = 'pending' } }, 0/0",
            "{ { id = 1, subject = 'a', status = 'pending' } }, 1/0",
            "{ { id = 1, subject = 'a', status = 'pending' } }, 2.5",
            "{ { id = 1.5, subject = 'a', status = 'pending' } }, 2",
            "{ { id = '1', subject = 'a', status = 'pending' } }, 2",
            "{ { id = {}, subject = 'a', status = 'pending' } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { '1' } } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { {} } } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = {} } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { 1, nil, 3 } } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { 1, x = 2 } } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { [2] = 1 } } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { -0.0, 2^53 - 1 } } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { 1.5 } } }, 2",
            "{ { id = 1, subject = 'caf\\195\\169', status = 'pending' } }, 2",
            "{ { id = 1, subject = 'a\\255b', status = 'pending' } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', description = '\\192\\128' } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', activeForm = 5 } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', owner = false } }, 2",
            "{ { id = 1, subject = 'a', status = 'done' } }, 2",
            "{ { id = 1, subject = 'a', status = 1 } }, 2",
            "{ { id = 1, subject = 'a' } }, 2",
            "{ { subject = 'a', status = 'pending' } }, 2",
            "{ { id = 1, status = 'pending' } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', extra = 1 } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', [1] = 'x' } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', [true] = 'x' } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', tasks = {} } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', metadata = { k = 'v' } } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', metadata = {} } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', metadata = 5 } }, 2",
            "{ setmetatable({ id = 1, subject = 'a' }, { __index = { status = 'pending' } }) }, 2",
            "setmetatable({}, { __index = { { id = 1, subject = 'a', status = 'pending' } } }), 2",
            "{ { id = 1, subject = 'a', status = 'pending' }, 5 }, 2",
            "{ { id = 1, subject = 'a', status = 'pending' }, x = 1 }, 2",
            "{ [2] = { id = 1, subject = 'a', status = 'pending' } }, 2",
            "{}, 2",
            "{}, 2.5",
            // The list's rules (`State::validate`): refused, or nextId repaired.
            "{ { id = 0, subject = 'a', status = 'pending' } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending' }, { id = 1, subject = 'b', status = 'pending' } }, 3",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { 2 } } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { 1 } } }, 2",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { 2 } }, \
               { id = 2, subject = 'b', status = 'pending', blockedBy = { 3 } }, \
               { id = 3, subject = 'c', status = 'pending', blockedBy = { 1 } } }, 4",
            "{ { id = 1, subject = 'a', status = 'pending', blockedBy = { 2, 3 } }, \
               { id = 2, subject = 'b', status = 'pending', blockedBy = { 3 } }, \
               { id = 3, subject = 'c', status = 'pending' } }, 4",
            "{ { id = 5, subject = 'a', status = 'pending' } }, 3",
            "{ { id = 5, subject = 'a', status = 'pending' } }, 5",
            "{ { id = 5, subject = 'a', status = 'pending' } }, -4",
            "{ { id = 2^53 - 1, subject = 'a', status = 'pending' } }, 1",
            "{ { id = 2^53 - 2, subject = 'a', status = 'pending' } }, 1",
            // A chain of 3,000 tasks, each blocked by the next; and the same closed.
            "(function() local t = {}; for i = 1, 3000 do t[i] = { id = i, subject = 's', status = 'pending', \
               blockedBy = i < 3000 and { i + 1 } or nil } end; return t end)(), 3001",
            "(function() local t = {}; for i = 1, 3000 do t[i] = { id = i, subject = 's', status = 'pending', \
               blockedBy = { i % 3000 + 1 } } end; return t end)(), 3001",
        ];
        let older = "{ type = 'message', message = { role = 'toolResult', toolName = 'todo', \
                     details = { tasks = { { id = 9, subject = 'older', status = 'pending' } }, nextId = 10 } } }";
        for case in cases {
            let entries: Table = lua
                .load(format!(
                    "local tasks, n = {case}; return {{ {older}, {{ type = 'message', message = \
                     {{ role = 'toolResult', toolName = 'todo', details = {{ tasks = tasks, nextId = n }} }} }} }}"
                ))
                .eval()
                .unwrap_or_else(|e| panic!("{case}: {e}"));
            let a: LuaValue = native.call(&entries).unwrap();
            let b: LuaValue = in_lua.call(&entries).unwrap();
            let bad: Option<String> = same.call((a.clone(), b)).unwrap();
            assert_eq!(bad, None, "for {case}");
            // And both as the general conversion has it: the newest snapshot converted to
            // JSON values and read as a state, or (when it is not one) the older list.
            let details: Table = entries
                .get::<Table>(2)
                .unwrap()
                .get::<Table>("message")
                .unwrap()
                .get("details")
                .unwrap();
            let general = safe::value(
                &ctx,
                &details.get("tasks").unwrap(),
                "tasks",
                0,
                Empty::Array,
            )
            .ok()
            .zip(
                safe::value(
                    &ctx,
                    &details.get("nextId").unwrap(),
                    "nextId",
                    0,
                    Empty::Object,
                )
                .ok(),
            )
            .and_then(|(t, n)| crate::replay::state_from_parts(t, n));
            let older = State {
                tasks: vec![Task::new(9, "older".into())],
                next_id: 10,
            };
            let got = safe::value(&ctx, &a, "state", 0, Empty::Object)
                .and_then(|v| crate::json::state_from_value(&v));
            assert_eq!(got, Ok(general.unwrap_or(older)), "for {case}");
        }
        // Text is remembered once checked; a string that failed is checked again each time.
        for _ in 0..3 {
            let entries: Table = lua
                .load(format!(
                    "return {{ {older}, {{ type = 'message', message = {{ role = 'toolResult', toolName = 'todo', \
                     details = {{ tasks = {{ {{ id = 1, subject = 'caf\\195\\169', status = 'pending', \
                     owner = 'x\\255' }} }}, nextId = 2 }} }} }} }}"
                ))
                .eval()
                .unwrap();
            let b: Table = in_lua.call(&entries).unwrap();
            let subject: String = b
                .get::<Table>("tasks")
                .unwrap()
                .get::<Table>(1)
                .unwrap()
                .get("subject")
                .unwrap();
            assert_eq!(subject, "older");
        }
    }

    #[test]
    fn the_raw_reader_agrees_with_the_safe_one_on_what_json_cannot_say() {
        let lua = Lua::new();
        let ctx = Ctx::new(&lua).unwrap();
        let cases = [
            "{ 1, 2, 3 }",
            "{ a = 1, b = { 2.5, 3.0, -0.0 }, c = 'x' }",
            "{ [1] = 'a', [2] = 'b', [4] = 'd' }",
            "{ 1, a = 2 }",
            "{ [true] = 1 }",
            "{ [1.5] = 1 }",
            "{ a = 0/0 }",
            "{ a = 1/0 }",
            "{ a = 2^53 }",
            "{ a = 2^63 }",
            "{ a = -2^63 }",
            "{ a = 'a\\255b' }",
            "{ ['\\255'] = 1 }",
            "{ a = print }",
            "{ a = coroutine.create(function() end) }",
            "{ a = {} }",
            "{ a = setmetatable({}, { __jsontype = 'array' }) }",
            "{ a = setmetatable({}, { __jsontype = 'object' }) }",
            "{ blockedBy = {}, metadata = {} }",
            "(function() local t = {}; t.t = t; return t end)()",
            "(function() local t = {}; for i = 1, 127 do t = { t } end; return t end)()",
            "(function() local t = {}; for i = 1, 128 do t = { t } end; return t end)()",
            "'text'",
            "42",
            "true",
        ];
        for code in cases {
            let v: LuaValue = lua.load(format!("return {code}")).eval().unwrap();
            for top in [false, true] {
                if top && !v.is_table() {
                    continue;
                }
                for empty in [Empty::Object, Empty::Array] {
                    agree(&lua, &ctx, &v, empty, top);
                }
            }
        }
    }
}
