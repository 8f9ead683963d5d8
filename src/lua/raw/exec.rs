//! `exec`: the protected call every raw block runs in, and the one place a panic inside one
//! is dealt with.
//!
//! Rules it keeps (the rules of the module docs depend on them):
//! - the body runs inside `lua_pcall` (mlua's `exec_raw`), so a Lua error raised in it
//!   (out of memory, a full stack) ends the protected call and comes back as `Err`;
//! - no Rust panic crosses a C frame: on PUC Lua the body runs under `catch_unwind` inside
//!   the protected call (Lua's own errors there are `longjmp`s, which `catch_unwind` never
//!   sees), and the panic becomes an ordinary error once control is back in Rust; on
//!   LuaJIT nothing may be caught around code that calls Lua (its errors are foreign
//!   exceptions), so bodies that call Lua must not panic;
//! - the stack the body leaves is exactly the results `R` reads.

#[cfg(not(feature = "luajit"))]
use std::panic::{catch_unwind, AssertUnwindSafe};

#[cfg(not(feature = "luajit"))]
use mlua::ffi;
use mlua::{FromLuaMulti, IntoLuaMulti, Lua};

use super::L;

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
            if super::tests::PANIC_NEXT.with(|p| p.replace(false)) {
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
        // no unwrap). The reader, which cannot raise once its room is reserved, catches
        // its own panics on every flavour (`read`); the writing bodies cannot.
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

#[cfg(all(test, not(feature = "luajit")))]
mod panic_tests {
    use mlua::Lua;

    /// A panic inside a raw block must not unwind through `lua_pcall`'s C frames (an abort,
    /// or a state whose next error jumps into a dead frame). It is a Lua
    /// error, and errors afterwards unwind as they should. (PUC Lua only: see `exec`.)
    #[cfg(not(feature = "luajit"))]
    #[test]
    fn a_panic_inside_a_raw_block_is_a_lua_error_and_the_state_lives_on() {
        let lua = Lua::new();
        let core = crate::lua::exports(&lua).unwrap();
        lua.globals().set("core", core).unwrap();
        crate::lua::raw::tests::PANIC_NEXT.with(|p| p.set(true));
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
