//! `core.from_strict(params [, list])`: a call in the strict form (OpenAI strict mode:
//! nulls for "not given", metadata as JSON text) converted in Rust by `crate::strict`.
//!
//! With a list the converted call runs on that list as its `apply` runs a table: the
//! checks, the reducer and the envelope are those of every other call, the converted value
//! goes straight in (no JSON text, no second parse), and the metadata text never passes
//! through a Lua number (under LuaJIT an integer past 2^53 would be rounded there). Only
//! a metadata text that spells no object is answered here, with the same envelope
//! (`write::result`) and the list unchanged. Arguments the boundary cannot read, or text
//! that is not JSON, go to `apply` as given, so the normal form names what is wrong with
//! them.

use mlua::{AnyUserData, Lua, MultiValue, Table, Value as LuaValue};
use serde_json::Value;

use super::raw::write;
use super::{from_lua, guarded, list, list::List, Ctx};
use crate::error::Error;
use crate::reducer::Reply;

/// Add `from_strict` to the `rpiv_todo.core` table.
pub(super) fn register(lua: &Lua, core: &Table) -> mlua::Result<()> {
    core.set(
        "from_strict",
        lua.create_function(|lua, (params, list): (LuaValue, LuaValue)| {
            guarded(lua, "from_strict", || from_strict(lua, params, list))
        })?,
    )
}

fn from_strict(lua: &Lua, params: LuaValue, list: LuaValue) -> mlua::Result<MultiValue> {
    let ctx = Ctx::get(lua)?;
    let list = match list {
        LuaValue::Nil => None,
        LuaValue::UserData(ud) if ud.is::<List>() => Some(ud),
        other => {
            return Err(super::api_error(
                "from_strict",
                Error::input("list", "a core.list handle or nil", other.type_name()),
            ))
        }
    };
    let read = match &params {
        LuaValue::String(s) => crate::call::parse(&s.as_bytes()),
        other => from_lua::params(lua, &ctx, other),
    };
    let converted = read.ok().map(crate::strict::to_normal);
    let out = match (list, converted) {
        // Unreadable: the normal form reports it (with a list) or passes it on (without).
        (Some(ud), None) => LuaValue::Table(list::apply_lua(lua, &ud, params, None)?),
        (None, None) => params,
        (Some(ud), Some(Ok(normal))) => LuaValue::Table(list::apply_value(lua, &ud, normal)?),
        (None, Some(Ok(normal))) => write::json(lua, &ctx.array_mt, &normal)?,
        (Some(ud), Some(Err(e))) => LuaValue::Table(reject(lua, &ctx, &ud, params, e)?),
        (None, Some(Err(e))) => {
            let message = lua.create_string(e.to_string())?;
            return Ok(MultiValue::from_iter([
                LuaValue::Nil,
                LuaValue::String(message),
            ]));
        }
    };
    Ok(MultiValue::from_iter([out]))
}

/// The in-band answer to a call whose metadata text spells no object: the arguments
/// echoed as given (JSON text as the value it spells), the list as it is.
fn reject(
    lua: &Lua,
    ctx: &Ctx,
    ud: &AnyUserData,
    params: LuaValue,
    e: Error,
) -> mlua::Result<Table> {
    let (action, echo) = match &params {
        LuaValue::String(s) => {
            // Only text that parsed gets here.
            let value = crate::call::parse(&s.as_bytes()).unwrap_or(Value::Null);
            let action = match value.get("action") {
                Some(a) => write::json(lua, &ctx.array_mt, a)?,
                None => LuaValue::Nil,
            };
            (action, write::json(lua, &ctx.array_mt, &value)?)
        }
        LuaValue::Table(t) => (t.raw_get("action")?, params.clone()),
        _ => (LuaValue::Nil, params.clone()),
    };
    let list = ud.borrow::<List>()?;
    write::result(
        lua,
        &ctx.array_mt,
        &Reply::error(e.to_string()),
        action,
        echo,
        list.state(),
    )
}
