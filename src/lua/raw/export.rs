//! What Lua code reaches of the module: `seal` puts a plain C function of ours (`entry`)
//! in front of every native function and method, and a checking `__gc` in the module's
//! userdata metatables. Three reasons, all faults of mlua 0.12.2 that Lua code reached
//! through what the module returned (`tests/upstream/` reproduces each with mlua alone):
//!
//! - **mlua's objects out of `debug.getupvalue`'s reach.** An mlua function's first
//!   upvalue is mlua's own callback object, whose `__gc` (`collect_userdata`) drops it
//!   without any check: called by hand, then by the collector, it dropped it twice. An
//!   `entry` holds its function in the registry, by a reference number: its one upvalue
//!   is that number.
//! - **A checking `__gc`.** mlua's `__gc` of a userdata type (`destroy_userdata_storage`)
//!   reads its argument as that type without looking: a table, a number or another
//!   userdata was a SIGSEGV. `guard_gc` passes it on only a userdata whose metatable is
//!   the type's own, and raises a Lua error otherwise. (A userdata given that metatable
//!   with `debug.setmetatable` passes: see docs/safety.md.)
//! - **Lua 5.1: nothing runs inside mlua's windows.** mlua keeps the function its next
//!   protected call runs under one registry key across a `lua_cpcall` (see `hook`), and
//!   5.1 runs a return hook, and at the end of the `lua_cpcall` a collector step with its
//!   finalizers, in between. It does so while it reads a call's arguments and while it
//!   converts its results or its error, outside any code of ours. `entry` makes the call
//!   inside a `lua_pcall` of its own, with the hook wrapped (every flavour) and on 5.1 the
//!   collector held, from before mlua reads the arguments until after it has converted
//!   the results (see `CollectorHold` and `hook::Entered`). mlua's error objects and the
//!   metatable of a destroyed userdata have functions of mlua's too (`__tostring`, which
//!   makes a protected call): they are behind `entry` as well.

use std::ffi::{c_int, CStr};

use mlua::{ffi, Function, Lua, Table, Value as LuaValue};

use super::{exec, L};

/// Put `entry` in front of every C function of `core` (the module's table), and seal the
/// metatables of the module's userdata types (`core.list`'s and `core.overlay_live`'s,
/// which mlua makes once per state and keeps): `entry` in front of every C function there
/// and in their `__index` tables, `guard_gc` for their `__gc`.
pub fn seal(lua: &Lua, core: &Table) -> mlua::Result<()> {
    let types = [
        (
            LuaValue::UserData(lua.create_userdata(super::super::list::List::default())?),
            c"rpiv_todo.core.list:",
        ),
        (
            LuaValue::UserData(lua.create_userdata(super::super::overlay::Live::default())?),
            c"rpiv_todo.core.overlay_live:",
        ),
    ];
    // SAFETY: the body reads slot 1 (the table) with `lua_next` and replaces values of
    // keys that exist (allowed while traversing), through `wrap`; it owns nothing, so an
    // error (out of memory) raised in it leaves nothing behind. It leaves the stack empty.
    unsafe {
        exec::<()>(lua, core, |l| {
            wrap_functions(l, 1, c"rpiv_todo.core.");
            ffi::lua_settop(l, 0);
        })?;
    }
    for (value, prefix) in &types {
        // SAFETY: as above, on the metatable of the userdata in slot 1 (see `seal_metatable`).
        unsafe {
            exec::<()>(lua, value, |l| {
                seal_metatable(l, 1, prefix, false);
                ffi::lua_settop(l, 0);
            })?;
        }
    }
    // mlua's error objects (what a failed call raises): their `__tostring` is mlua's and
    // does a protected call, their `__gc` drops without a check.
    let failing = lua.create_function(|_, ()| Err::<(), _>(mlua::Error::runtime("probe")))?;
    // SAFETY: slot 1 holds the function; `lua_pcall` raises nothing (its error is its
    // result, mlua's error object), and `seal_metatable` owns nothing. The stack ends empty.
    unsafe {
        exec::<()>(lua, failing, |l| {
            if ffi::lua_pcall(l, 0, 0, 0) != 0 {
                seal_metatable(l, ffi::lua_gettop(l), c"rpiv_todo.core: mlua error:", true);
            }
            ffi::lua_settop(l, 0);
        })?;
    }
    // The metatable mlua gives a userdata once it is destroyed (its `__gc` called): every
    // entry one function of mlua's that raises an error through its own protected calls.
    let probe = lua.create_userdata(super::super::list::List::default())?;
    // SAFETY: slot 1 holds a list, whose `__gc` is now `guard_gc` (sealed above): called
    // with it, it destroys it, and mlua sets the destroyed metatable. `lua_call` may raise
    // (out of memory), with nothing owned.
    unsafe {
        exec::<()>(lua, probe, |l| {
            if ffi::lua_getmetatable(l, 1) != 0 {
                ffi::lua_getfield(l, -1, c"__gc".as_ptr());
                if ffi::lua_type(l, -1) == ffi::LUA_TFUNCTION {
                    ffi::lua_pushvalue(l, 1);
                    ffi::lua_call(l, 1, 0);
                    if ffi::lua_getmetatable(l, 1) != 0 {
                        wrap_functions(l, ffi::lua_gettop(l), c"rpiv_todo.core: destroyed:");
                    }
                }
            }
            ffi::lua_settop(l, 0);
        })?;
    }
    Ok(())
}

/// Seal the metatable of the userdata at `ud` (absolute): `entry` in front of every C
/// function there and in its `__index` table, `guard_gc` for its `__gc`. `internal`: an
/// mlua object whose `__gc` frees it without leaving a mark (`collect_userdata`);
/// `guard_gc` then takes its metatable away, so that neither the collector nor a second
/// call runs it again.
///
/// # Safety
///
/// Inside an `exec` body, with room for 6 slots; leaves the stack as it found it unless it
/// raises (out of memory), with nothing owned.
unsafe fn seal_metatable(l: L, ud: c_int, prefix: &CStr, internal: bool) {
    let top = ffi::lua_gettop(l);
    if ffi::lua_type(l, ud) != ffi::LUA_TUSERDATA || ffi::lua_getmetatable(l, ud) == 0 {
        return;
    }
    let mt = ffi::lua_gettop(l);
    ffi::lua_getfield(l, mt, c"__index".as_ptr());
    if ffi::lua_type(l, -1) == ffi::LUA_TTABLE {
        wrap_functions(l, ffi::lua_gettop(l), prefix);
    }
    ffi::lua_settop(l, mt);
    ffi::lua_getfield(l, mt, c"__gc".as_ptr());
    let gc = ffi::lua_tocfunction(l, -1);
    ffi::lua_settop(l, mt);
    wrap_functions(l, mt, prefix);
    if let Some(slot) = gc.and_then(remember_gc) {
        ffi::lua_pushvalue(l, mt);
        ffi::lua_pushinteger(l, slot as _);
        ffi::lua_pushboolean(l, internal as c_int);
        ffi::lua_pushcclosure(l, guard_gc, 3);
        ffi::lua_setfield(l, mt, c"__gc".as_ptr());
    }
    ffi::lua_settop(l, top);
}

/// `f` behind an `entry` (a function handed to Lua code outside the `core` table).
pub fn function(lua: &Lua, f: Function, name: &CStr) -> mlua::Result<Function> {
    // SAFETY: slot 1 holds the function; `wrap` replaces it in place and may raise (out of
    // memory) with nothing owned. The stack ends holding exactly the result.
    unsafe {
        exec(lua, f, |l| {
            ffi::lua_pushstring(l, name.as_ptr());
            wrap(l, 1);
            ffi::lua_settop(l, 1);
        })
    }
}

/// Replace every C function among the values of the table at `t` (absolute) with an
/// `entry` for it, named `prefix` and its key, `__gc` excepted (see `seal`).
///
/// # Safety
///
/// Inside an `exec` body, `t` an absolute index holding a table, with room for 6 slots.
unsafe fn wrap_functions(l: L, t: c_int, prefix: &CStr) {
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, t) != 0 {
        let is_gc = ffi::lua_type(l, -2) == ffi::LUA_TSTRING && {
            let mut len = 0;
            let p = ffi::lua_tolstring(l, -2, &mut len);
            // SAFETY: the key is a string (checked just above), so `lua_tolstring` gives
            // its `len` bytes without converting anything (a number key would be changed
            // in place, which `lua_next` forbids), valid while the key is on the stack.
            std::slice::from_raw_parts(p as *const u8, len) == b"__gc"
        };
        if !is_gc && ffi::lua_iscfunction(l, -1) != 0 && !is_entry(l, -1) {
            let value = ffi::lua_gettop(l);
            // The name a refusal gives: the prefix and the key.
            ffi::lua_pushstring(l, prefix.as_ptr());
            if ffi::lua_type(l, -3) == ffi::LUA_TSTRING {
                ffi::lua_pushvalue(l, -3);
                ffi::lua_concat(l, 2);
            }
            wrap(l, value);
            ffi::lua_pushvalue(l, -2);
            ffi::lua_pushvalue(l, value);
            ffi::lua_rawset(l, t);
        }
        ffi::lua_settop(l, -2);
    }
}

/// Whether the value at `idx` is already an `entry`.
///
/// # Safety
///
/// Inside an `exec` body, `idx` a live slot.
unsafe fn is_entry(l: L, idx: c_int) -> bool {
    let f = ffi::lua_tocfunction(l, idx);
    f.is_some_and(|f| f as *const () == entry as ffi::lua_CFunction as *const ())
}

/// Replace the C function at `idx` (absolute) with an `entry` for it, named by the string
/// on top of the stack (popped): the function goes into the registry (`luaL_ref`; the
/// module's functions live as long as the state), and the entry's upvalues are its
/// reference number and the name.
///
/// # Safety
///
/// Inside an `exec` body, `idx` an absolute index below the top holding a function, a
/// string on top, with room for 3 slots. May raise (out of memory) before or after the
/// reference is taken.
unsafe fn wrap(l: L, idx: c_int) {
    ffi::lua_pushvalue(l, idx);
    let r = ffi::luaL_ref(l, ffi::LUA_REGISTRYINDEX);
    ffi::lua_pushinteger(l, r as _);
    ffi::lua_insert(l, -2);
    ffi::lua_pushcclosure(l, entry, 2);
    ffi::lua_replace(l, idx);
}

/// What a refused call raises, after the function's name.
const REFUSED: &CStr =
    c": called from a debug hook while another call of the module runs (refused: it would corrupt the Lua state)";

/// The one way Lua code calls a native function of the module: the function from the
/// registry (upvalue 1 is its reference), called with the arguments as they came, inside a
/// `lua_pcall` made with the hook wrapped (see `hook`) and on Lua 5.1 the collector held
/// (see the module docs); its error is raised again once both are released.
///
/// # Safety
///
/// Called by Lua only, as a C closure made by `wrap`.
unsafe extern "C-unwind" fn entry(l: L) -> c_int {
    let n = ffi::lua_gettop(l);
    // A C function has `LUA_MINSTACK` (20) free slots above its arguments: room for the
    // function, and for the two values of a refusal.
    ffi::lua_rawgeti(
        l,
        ffi::LUA_REGISTRYINDEX,
        ffi::lua_tointeger(l, ffi::lua_upvalueindex(1)) as _,
    );
    ffi::lua_insert(l, 1);
    // A call from a hook while a call of the module runs is refused (see `hook`), before
    // mlua reads its arguments.
    if super::hook::refusing() {
        ffi::lua_pushvalue(l, ffi::lua_upvalueindex(2));
        ffi::lua_pushstring(l, REFUSED.as_ptr());
        ffi::lua_concat(l, 2);
        ffi::lua_error(l);
    }
    // Nothing here owns anything across a raising call: `lua_pcall` does not raise (its
    // errors come back as a status), the guards are dropped before `lua_error`, and
    // neither guard panics.
    let status = {
        #[cfg(feature = "lua51")]
        let _hold = super::CollectorHold::of_state(l);
        let _entered = super::hook::Entered::raw(l);
        ffi::lua_pcall(l, n, ffi::LUA_MULTRET, 0)
    };
    if status != 0 {
        ffi::lua_error(l);
    }
    ffi::lua_gettop(l)
}

/// mlua's `__gc` functions that `guard_gc` calls, by slot: the same few in every state of
/// the process (one per type: `destroy_userdata_storage::<List>`, `::<Live>`, and
/// `collect_userdata::<WrappedFailure>`), kept here so that no upvalue hands them out.
static GCS: [std::sync::atomic::AtomicPtr<()>; 4] =
    [const { std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()) }; 4];

/// The slot of `GCS` that holds `gc`, taking a free one if none does yet; `None` when full
/// (the `__gc` is then left as mlua's, which no type of this module reaches).
fn remember_gc(gc: ffi::lua_CFunction) -> Option<usize> {
    use std::sync::atomic::Ordering;
    let p = gc as *mut ();
    if p == guard_gc as ffi::lua_CFunction as *mut () {
        return None;
    }
    GCS.iter().position(|slot| {
        slot.compare_exchange(std::ptr::null_mut(), p, Ordering::AcqRel, Ordering::Acquire)
            .map_or_else(|now| now == p, |_| true)
    })
}

/// The `__gc` of a sealed metatable (upvalue 1): mlua's (`GCS` at the slot in upvalue 2),
/// only for a userdata whose metatable is that one; anything else is a Lua error. Upvalue
/// 3: the object is mlua's own (see `seal_metatable`): its metatable is taken away once it
/// is dropped.
///
/// # Safety
///
/// Called by Lua only, as a C closure made by `seal`.
unsafe extern "C-unwind" fn guard_gc(l: L) -> c_int {
    let ours = ffi::lua_type(l, 1) == ffi::LUA_TUSERDATA && ffi::lua_getmetatable(l, 1) != 0 && {
        let same = ffi::lua_rawequal(l, -1, ffi::lua_upvalueindex(1)) != 0;
        ffi::lua_settop(l, -2);
        same
    };
    let slot = ffi::lua_tointeger(l, ffi::lua_upvalueindex(2));
    let destroy = usize::try_from(slot)
        .ok()
        .and_then(|i| GCS.get(i))
        .map_or(std::ptr::null_mut(), |p| {
            p.load(std::sync::atomic::Ordering::Acquire)
        });
    if !ours || destroy.is_null() {
        ffi::lua_pushstring(
            l,
            c"rpiv_todo.core: __gc: expected a userdata of this metatable's type".as_ptr(),
        );
        ffi::lua_error(l);
    }
    // mlua's destructor reads slot 1 (and a true slot 2 would change how it reports).
    ffi::lua_settop(l, 1);
    // SAFETY: the slot was filled by `remember_gc` from `lua_tocfunction` of this
    // metatable's own `__gc`, a `lua_CFunction`, and is never changed once filled; function
    // and data pointers have one size and representation on every platform mlua supports.
    // It is called as Lua would call it: on this state, with the userdata of its type in
    // slot 1 and stack room to spare.
    let destroy = std::mem::transmute::<*mut (), ffi::lua_CFunction>(destroy);
    let n = destroy(l);
    if ffi::lua_toboolean(l, ffi::lua_upvalueindex(3)) != 0 {
        // Dropped: no metatable, so no `__gc` and no `__tostring` of mlua's reads it again.
        ffi::lua_pushnil(l);
        ffi::lua_setmetatable(l, 1);
    }
    n
}
