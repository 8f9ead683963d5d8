//! Lua exports of the file store (`crate::store`): `core.save`, `core.load`,
//! `core.save_locale` and `core.locale_file`.
//!
//! They follow Lua's I/O convention: a file that cannot be read or written, or holds
//! something other than a list, comes back as `nil, err` (the message names the path and
//! what is wrong), never as a Lua error. Only a wrong argument (a path that is not a
//! string, a malformed state table) is the caller's mistake and raises.

use std::path::PathBuf;

use mlua::{IntoLuaMulti, Lua, MultiValue, Table, Value as LuaValue};

use super::list::List;
use super::raw::write;
use super::{api_error, guarded, state_arg, Ctx};
use crate::error::Error;
use crate::store::{self, StoreError};

/// Add the store functions to the `rpiv_todo.core` table.
pub fn register(lua: &Lua, core: &Table) -> mlua::Result<()> {
    core.set(
        "save",
        lua.create_function(|lua, (path, state): (LuaValue, LuaValue)| {
            guarded(lua, "save", || {
                let path = path_arg(&path, "save")?;
                let saved = match &state {
                    LuaValue::Nil => {
                        return Err(api_error(
                            "save",
                            Error::input("state", "a list, a state table or its JSON text", "nil"),
                        ))
                    }
                    // A list handle is written in place, without a copy.
                    LuaValue::UserData(ud) if ud.is::<List>() => {
                        let list = ud.borrow::<List>()?;
                        store::save(&path, list.state())
                    }
                    other => {
                        let ctx = Ctx::get(lua)?;
                        store::save(&path, &state_arg(lua, &ctx, other, "save")?)
                    }
                };
                outcome(lua, saved.map(|()| LuaValue::Boolean(true)))
            })
        })?,
    )?;
    core.set(
        "load",
        lua.create_function(|lua, path: LuaValue| {
            guarded(lua, "load", || {
                let path = path_arg(&path, "load")?;
                match store::load(&path) {
                    Ok(state) => {
                        let ctx = Ctx::get(lua)?;
                        let table = write::state(lua, &ctx.array_mt, &state)?;
                        outcome(lua, Ok(LuaValue::Table(table)))
                    }
                    Err(e) => outcome(lua, Err(e)),
                }
            })
        })?,
    )?;
    core.set(
        "save_locale",
        lua.create_function(|lua, (path, code): (LuaValue, mlua::LuaString)| {
            guarded(lua, "save_locale", || {
                let path = path_arg(&path, "save_locale")?;
                let code = String::from_utf8_lossy(&code.as_bytes()).into_owned();
                let saved = crate::i18n::save_locale(&path, &code);
                outcome(lua, saved.map(|()| LuaValue::Boolean(true)))
            })
        })?,
    )?;
    core.set(
        "locale_file",
        lua.create_function(|lua, env: Option<Table>| {
            guarded(lua, "locale_file", || {
                // The same environment rules as `core.resolve_locale`, so the file written
                // is the file the locale chain reads.
                let overrides = match env {
                    Some(t) => super::i18n::env_overrides(&t)?,
                    None => Default::default(),
                };
                let var = |name: &str| match overrides.get(name) {
                    Some(value) => value.clone(),
                    None => std::env::var(name).ok(),
                };
                match crate::i18n::locale_file_path(&var) {
                    Some(p) => Ok(LuaValue::String(lua.create_string(path_bytes(&p))?)),
                    None => Ok(LuaValue::Nil),
                }
            })
        })?,
    )?;
    Ok(())
}

/// `value`, or `nil, message, kind` (kind: `StoreError::kind`, e.g. "missing").
fn outcome(lua: &Lua, r: Result<LuaValue, StoreError>) -> mlua::Result<MultiValue> {
    match r {
        Ok(v) => v.into_lua_multi(lua),
        Err(e) => (LuaValue::Nil, e.to_string(), e.kind().as_str()).into_lua_multi(lua),
    }
}

/// A path argument: a Lua string, taken byte for byte where the platform allows.
fn path_arg(v: &LuaValue, func: &str) -> mlua::Result<PathBuf> {
    let LuaValue::String(s) = v else {
        return Err(api_error(
            func,
            Error::input("path", "a string", v.type_name()),
        ));
    };
    let bytes = s.as_bytes();
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(PathBuf::from(std::ffi::OsStr::from_bytes(&bytes)))
    }
    #[cfg(not(unix))]
    {
        Ok(PathBuf::from(String::from_utf8_lossy(&bytes).into_owned()))
    }
}

fn path_bytes(p: &std::path::Path) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        p.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        p.to_string_lossy().into_owned().into_bytes()
    }
}
