//! mlua 0.12.2 on Lua 5.1 with a state mlua did not create (a loadable module's,
//! `Lua::get_or_init_from_ptr`): a finalizer that calls a Rust function while mlua converts
//! another Rust function's results corrupts the state. No debug library, no hook.
//!
//! Cause: the same window as `../mlua_hook51`. To push a Rust `String` result mlua makes a
//! protected call, and `push_protected_cfunctions` (src/util/error.rs) stores the
//! `do_call::<F, R>` it is about to run in the registry under one static key
//! (`FUNCTION_KEY`) inside `lua_cpcall(do_push)`, and reads it back after the `lua_cpcall`
//! returns. Lua 5.1's `luaD_call` ends with `luaC_checkGC`: when `do_push` returns, a
//! collector step may run, and with it finalizers (`GCTM`). A finalizer that calls any
//! Rust function stores *its* `do_call` under the same key; the outer conversion then
//! reads that one and calls it with its own `Params` pointer.
//!
//! Run: `cargo run --release` in this folder. Expected: "survived". Got: SIGSEGV (or a
//! bogus error) within the first rounds.
use mlua::{ffi, Lua, Result};

fn main() -> Result<()> {
    // SAFETY: a fresh state with the standard libraries, handed to mlua as a module's host
    // would; it lives until the process ends.
    let lua = unsafe {
        let state = ffi::luaL_newstate();
        ffi::luaL_openlibs(state);
        Lua::get_or_init_from_ptr(state)
    };
    // A result mlua must convert with a protected call: a Rust `String`.
    let outer = lua.create_function(|_, i: usize| Ok(format!("result {i}")))?;
    // Another protected call, of another closure type (a `do_call` of the same type would
    // hide the fault: the outer call would run the right code by chance).
    let inner = lua.create_function(|lua, ()| {
        let t = lua.create_table()?;
        t.set("k", 1)?;
        Ok(t)
    })?;
    lua.globals().set("outer", outer)?;
    lua.globals().set("inner", inner)?;
    lua.load(
        r#"
        local n = 0
        for i = 1, 200000 do
            local p = newproxy(true)
            getmetatable(p).__gc = function() n = n + 1; inner() end
            assert(outer(i) == "result " .. i)
        end
        print("survived", n)
        "#,
    )
    .exec()?;
    Ok(())
}
