//! `core.list(state)`: a list held in Rust. Hosts and sessions keep one per session and
//! call it for every tool call, so nothing but the result crosses the boundary.

use mlua::{Lua, Table, UserData, UserDataMethods, Value as LuaValue};
use serde_json::Value;

use super::{from_lua, guarded, to_lua, Ctx};
use crate::call::{parse, run};
use crate::task::State;

/// The list behind a `core.list` handle.
#[derive(Default)]
pub struct List {
    pub state: State,
}

impl List {
    pub fn new(state: State) -> List {
        List { state }
    }
}

/// One call with arguments as a Lua table or a JSON string; the result as Lua tables.
/// Bad arguments come back in-band; only a failure to build the result is a Lua error.
pub fn call(lua: &Lua, ctx: &Ctx, state: &mut State, params: LuaValue) -> mlua::Result<Table> {
    let (parsed, action, echo) = match &params {
        LuaValue::String(s) => {
            let parsed = parse(&s.as_bytes());
            let echo = match &parsed {
                Ok(v) => to_lua::json(lua, &ctx.array_mt, v)?,
                Err(_) => LuaValue::Table(lua.create_table()?),
            };
            let action = match &parsed {
                Ok(Value::Object(m)) => match m.get("action") {
                    Some(a) => to_lua::json(lua, &ctx.array_mt, a)?,
                    None => LuaValue::Nil,
                },
                _ => LuaValue::Nil,
            };
            (parsed, action, echo)
        }
        other => {
            let action = match other {
                LuaValue::Table(t) => t.raw_get("action").unwrap_or(LuaValue::Nil),
                _ => LuaValue::Nil,
            };
            (from_lua::params(lua, ctx, other), action, other.clone())
        }
    };
    let reply = run(state, parsed.as_ref().map_err(Clone::clone));
    to_lua::result(lua, &ctx.array_mt, &reply, action, echo, state)
}

/// Arguments as JSON text: the same call, with the result as JSON text.
pub fn call_json(state: &mut State, text: &[u8]) -> Vec<u8> {
    crate::call::call_json(state, text)
}

impl UserData for List {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method_mut("apply", |lua, this, params: LuaValue| {
            guarded("list:apply", || {
                let ctx = Ctx::get(lua)?;
                call(lua, &ctx, &mut this.state, params)
            })
        });
        m.add_method_mut("apply_json", |lua, this, text: mlua::LuaString| {
            guarded("list:apply_json", || {
                lua.create_string(call_json(&mut this.state, &text.as_bytes()))
            })
        });
        m.add_method("state", |lua, this, ()| {
            let ctx = Ctx::get(lua)?;
            to_lua::state(lua, &ctx.array_mt, &this.state)
        });
        m.add_method("state_json", |lua, this, ()| {
            lua.create_string(serde_json::to_vec(&this.state).unwrap_or_default())
        });
        m.add_method_mut("replace", |lua, this, state: LuaValue| {
            let ctx = Ctx::get(lua)?;
            this.state = super::state_arg(lua, &ctx, &state, "replace")?;
            Ok(())
        });
        m.add_method("next_id", |_, this, ()| Ok(this.state.next_id));
        m.add_meta_method("__len", |_, this, ()| Ok(this.state.tasks.len()));
        m.add_meta_method("__tostring", |_, this, ()| {
            Ok(format!(
                "rpiv_todo.list ({} tasks, nextId {})",
                this.state.tasks.len(),
                this.state.next_id
            ))
        });
    }
}
