//! The one way into the raw C API: `exec`, a protected call whose body may not unwind.
//!
//! The rules every raw block keeps (issue 18, faults 2 and 3):
//!
//! - **No panic crosses a C frame.** The body runs inside `lua_pcall` (mlua's
//!   `exec_raw`), so a Rust panic there would unwind through Lua's C frames: undefined
//!   behaviour, in practice an abort, or a Lua state whose next error jumps into a dead
//!   frame. On PUC Lua `exec` catches it inside the protected call (the pattern of mlua's
//!   own `Table::for_each`) and raises it as an ordinary Lua error once control is back in
//!   Rust. On LuaJIT nothing can be caught there (see `exec`): the bodies must not panic.
//! - **Nothing owned lives across a call that can raise.** On PUC Lua an error is a
//!   `longjmp` to the protected call: every Rust frame in between is left without running a
//!   destructor. So a body keeps what it owns (vectors, strings, JSON values) in places
//!   outside the closure (`&mut` captures), moves a value there before the next call that
//!   allocates in Lua (`lua_createtable`, `lua_pushlstring`, `lua_rawset` and friends), and
//!   holds only borrows and `Copy` values across such calls.
//! - **Nothing is sized from a table's length.** `lua_rawlen` (and `#`) give a border,
//!   which for keys at powers of two is 2^28 with 29 entries there. Keys are counted with
//!   `lua_next` before anything is reserved.

#[cfg(not(feature = "luajit"))]
use std::panic::{catch_unwind, AssertUnwindSafe};

use mlua::{ffi, FromLuaMulti, IntoLuaMulti, Lua};

/// A raw Lua state pointer, valid inside an `exec` body.
pub type L = *mut ffi::lua_State;

/// Run `f` on the raw state with `args` pushed (slots 1..n), inside one protected call, and
/// read whatever `f` leaves on the stack as `R`. A Lua error raised inside `f` (out of
/// memory, a full stack) comes back as `Err`; a Rust panic inside `f` is caught before it
/// reaches a C frame and comes back as `Err` too.
///
/// # Safety
///
/// `f` must keep the rules in the module docs: only raw calls that are valid for the
/// values it pushed or was given, nothing owned held across a call that can raise, the
/// stack left holding exactly the results.
pub unsafe fn exec<R: FromLuaMulti>(
    lua: &Lua,
    args: impl IntoLuaMulti,
    f: impl FnOnce(L),
) -> mlua::Result<R> {
    let mut panicked = false;
    let result = lua.exec_raw::<R>(args, |l| {
        let body = || {
            #[cfg(test)]
            if tests::PANIC_NEXT.with(|p| p.replace(false)) {
                panic!("injected by a test");
            }
            f(l)
        };
        // PUC Lua: its C frames have no unwinding, so the panic is caught here. Its own
        // errors are `longjmp`s, which no `catch_unwind` sees.
        #[cfg(not(feature = "luajit"))]
        if catch_unwind(AssertUnwindSafe(body)).is_err() {
            panicked = true;
            ffi::lua_settop(l, 0);
        }
        // LuaJIT raises its errors as foreign exceptions that unwind through Rust frames,
        // and `catch_unwind` aborts the process on meeting one ("Rust cannot catch foreign
        // exceptions"), so nothing may be caught around code that calls Lua. A panic here
        // still ends the process on LuaJIT (its protected call catches the panic as a
        // foreign exception, and Rust aborts: "Rust panics must be rethrown"), which is
        // why the bodies stay free of anything input can make panic (no indexing by input,
        // no unwrap) and why they should shrink (see the README, "The boundary").
        #[cfg(feature = "luajit")]
        {
            let _ = &mut panicked;
            body();
        }
    });
    if panicked {
        return Err(mlua::Error::runtime(
            "rpiv_todo.core: internal error (a bug; please report it)",
        ));
    }
    result
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;

    thread_local! {
        /// Make the next `exec` body panic (the regression test of fault 2).
        pub static PANIC_NEXT: Cell<bool> = const { Cell::new(false) };
    }
}

#[cfg(all(test, not(feature = "luajit")))]
mod panic_tests {
    use mlua::Lua;

    /// Issue 18, fault 2: a panic inside a raw block unwound through `lua_pcall`'s C frames
    /// (an abort, or a state whose next error jumps into a dead frame). Now it is a Lua
    /// error, and errors afterwards unwind as they should. (PUC Lua only: see `exec`.)
    #[cfg(not(feature = "luajit"))]
    #[test]
    fn a_panic_inside_a_raw_block_is_a_lua_error_and_the_state_lives_on() {
        let lua = Lua::new();
        let core = crate::lua::exports(&lua).unwrap();
        lua.globals().set("core", core).unwrap();
        super::tests::PANIC_NEXT.with(|p| p.set(true));
        let (ok, err): (bool, String) = lua
            .load(r#"local ok, e = pcall(core.apply, nil, '{"action": "list"}') return ok, tostring(e)"#)
            .eval()
            .unwrap();
        assert!(!ok);
        assert!(err.contains("internal error"), "{err}");
        let after: String = lua
            .load(
                "for i = 1, 100 do local ok, e = pcall(error, 'after ' .. i); assert(not ok) end
                 local r = core.apply(nil, { action = 'create', subject = 'a' })
                 return r.content[1].text",
            )
            .eval()
            .unwrap();
        assert_eq!(after, "Created #1: a (pending)");
    }
}
