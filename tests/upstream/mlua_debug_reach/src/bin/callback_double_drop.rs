//! F3: a Rust function's first upvalue is mlua's `CallbackUpvalue`, whose `__gc`
//! (`collect_userdata`, src/userdata/util.rs) drops it with no mark: called by hand, the
//! function then runs on freed memory and the collector drops it a second time.
//! Expected a Lua error (or a harmless no-op); got a use after free (valgrind: "Invalid
//! read"), a SIGSEGV, or an abort from the allocator.
fn main() -> mlua::Result<()> {
    let lua = mlua_debug_reach::state()?;
    lua.load(
        r#"
        local _, cb = debug.getupvalue(f, 1)
        local gc = rawget(debug.getmetatable(cb), "__gc")
        gc(cb)
        print("the function after its callback was dropped:", pcall(f))
        cb, f = nil, nil
        collectgarbage()
        collectgarbage()
        print("survived")
        "#,
    )
    .exec()
}
