//! F1: a userdata type's `__gc` (`destroy_userdata_storage`, src/userdata/util.rs) reads
//! its argument as that type without checking it. Called by hand with a table:
//! expected a Lua error, got SIGSEGV.
fn main() -> mlua::Result<()> {
    let lua = mlua_debug_reach::state()?;
    lua.load(
        r#"
        local gc = rawget(debug.getmetatable(thing), "__gc")
        print("called with a table:", pcall(gc, {}))
        print("survived")
        "#,
    )
    .exec()
}
