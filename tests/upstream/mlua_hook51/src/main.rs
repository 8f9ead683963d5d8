//! mlua 0.12.2 on Lua 5.1 (and LuaJIT) with a state mlua did not create (a loadable
//! module's, `Lua::get_or_init_from_ptr`): a Lua return hook that calls a Rust function
//! while another Rust function is running corrupts the state.
//!
//! Cause: without mlua's own allocator (`MemoryState`), `push_protected_cfunctions`
//! (src/util/error.rs) stores the `do_call::<F, R>` it is about to call in the registry
//! under one static key (`FUNCTION_KEY`) inside `lua_cpcall(do_push)`, and reads it back
//! after the `lua_cpcall` returns. Lua 5.1 calls the return hook when `do_push` returns,
//! between the store and the read. A hook that calls any Rust function runs a
//! `protect_lua_closure` of its own, which stores *its* `do_call` under the same key; the
//! outer call then reads that one and calls it with its own `Params` pointer: another
//! closure type's code on this one's data (SIGSEGV in `lua_pushlstring` here).
//!
//! Run: `cargo run` in this folder. Expected: "survived" and the hook count. Got: SIGSEGV.
use mlua::{ffi, Lua, Result};

fn main() -> Result<()> {
    // SAFETY: a fresh state with the standard libraries (the debug library's
    // `debug.sethook` included), handed to mlua as a module's host would; it lives until
    // the process ends.
    let lua = unsafe {
        let state = ffi::luaL_newstate();
        ffi::luaL_openlibs(state);
        Lua::get_or_init_from_ptr(state)
    };
    // Any Rust function that calls into Lua through a protected call: setting a field.
    let outer = lua.create_function(|lua, ()| {
        let t = lua.create_table()?;
        for i in 0..8 {
            t.set(format!("k{i}"), i)?;
        }
        Ok(t)
    })?;
    let inner = lua.create_function(|lua, ()| lua.create_string("x"))?;
    lua.globals().set("outer", outer)?;
    lua.globals().set("inner", inner)?;
    lua.load(
        r#"
        local n = 0
        debug.sethook(function() n = n + 1; inner() end, "r")
        for i = 1, 10 do outer() end
        debug.sethook()
        print("survived", n)
        "#,
    )
    .exec()?;
    Ok(())
}
