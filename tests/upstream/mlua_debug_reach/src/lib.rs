//! Three faults of mlua 0.12.2 that Lua code reaches through the debug library, one
//! program each in `src/bin/` (see NOTE.md). Each makes a Lua 5.4 state with every
//! standard library (`Lua::unsafe_new`: the debug library is loaded, as Neovim and most
//! hosts load it) and one userdata type.
use mlua::{Lua, UserData, UserDataMethods};

/// A userdata type with a method that reads its value.
pub struct Thing(pub Vec<u64>);

impl UserData for Thing {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("sum", |_, this, ()| Ok(this.0.iter().sum::<u64>()));
    }
}

/// Another userdata type, smaller.
pub struct Small(pub u8);

impl UserData for Small {}

/// A state with `thing` (a `Thing`), `small` (a `Small`) and `f` (a Rust function) as
/// globals.
pub fn state() -> mlua::Result<Lua> {
    let lua = unsafe { Lua::unsafe_new() };
    lua.globals().set("thing", Thing(vec![1, 2, 3]))?;
    lua.globals().set("small", Small(1))?;
    lua.globals().set("f", lua.create_function(|_, ()| Ok("f"))?)?;
    Ok(lua)
}
