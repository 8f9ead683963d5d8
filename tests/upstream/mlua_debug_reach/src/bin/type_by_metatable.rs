//! F2: mlua decides a userdata's Rust type from its metatable's address alone
//! (`get_userdata_type_id_inner`, src/state/raw.rs). A file, or a userdata of another
//! type, given the type's metatable with `debug.setmetatable` is then read as a `Thing`:
//! expected a Lua error, got reads of the other object's bytes and past its block
//! (valgrind: "Invalid read"), a SIGSEGV, or an answer made of garbage.
fn main() -> mlua::Result<()> {
    let lua = mlua_debug_reach::state()?;
    lua.load(
        r#"
        local f = io.tmpfile()
        debug.setmetatable(f, debug.getmetatable(thing))
        print("a file as a Thing:", pcall(function() return f:sum() end))
        debug.setmetatable(small, debug.getmetatable(thing))
        print("a Small as a Thing:", pcall(function() return small:sum() end))
        print("survived")
        "#,
    )
    .exec()
}
