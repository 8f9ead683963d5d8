//! `core.list(state)`: a list held in Rust. Hosts and sessions keep one per session and
//! call it for every tool call, so nothing but the result crosses the boundary.

use mlua::{Lua, Table, UserData, UserDataMethods, Value as LuaValue};
use serde_json::Value;

use super::{from_lua, guarded, to_lua, Ctx};
use crate::error::Error;
use crate::params::Params;
use crate::reducer::{self, Reply};
use crate::task::State;

/// The list behind a `core.list` handle.
#[derive(Default)]
pub struct List {
    pub state: State,
    /// The reply and arguments of the last `apply_json`, moved here after writing (no
    /// copy): `serialize_floor` writes exactly the same envelope again.
    last_json: Option<(Reply, Value)>,
}

impl List {
    pub fn new(state: State) -> List {
        List {
            state,
            last_json: None,
        }
    }
}

/// One call with arguments as a Lua table or a JSON string; the result as Lua tables.
/// Bad arguments come back in-band; only a failure to build the result is a Lua error.
pub fn call(lua: &Lua, ctx: &Ctx, state: &mut State, params: LuaValue) -> mlua::Result<Table> {
    let (parsed, action, echo) = match &params {
        LuaValue::String(s) => {
            let parsed = parse_json(&s.as_bytes());
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
            (from_lua::params(ctx, other), action, other.clone())
        }
    };
    let reply = run(state, parsed.as_ref().map_err(Clone::clone));
    to_lua::result(lua, &ctx.array_mt, &reply, action, echo, state)
}

/// Arguments as JSON text: the same call, with the result as JSON text.
pub fn call_json(state: &mut State, text: &[u8]) -> (Vec<u8>, Reply, Value) {
    let (reply, echo) = match parse_json(text) {
        Ok(value) => (run(state, Ok(&value)), value),
        Err(e) => (
            Reply::error(e.to_string()),
            Value::Object(Default::default()),
        ),
    };
    let mut out = Vec::with_capacity(result_capacity(state));
    crate::json::write_result(&mut out, &reply, &echo, state);
    (out, reply, echo)
}

/// Room for a result's JSON text: measured on w1, a task takes ~105 bytes, so one
/// allocation usually suffices.
fn result_capacity(state: &State) -> usize {
    256 + state.tasks.len() * 128
}

fn parse_json(text: &[u8]) -> Result<Value, Error> {
    let text = std::str::from_utf8(text)
        .map_err(|_| Error::input("arguments", "UTF-8 JSON text", "bytes that are not UTF-8"))?;
    serde_json::from_str(text).map_err(|e| Error::Json(e.to_string()))
}

fn run(state: &mut State, parsed: Result<&Value, Error>) -> Reply {
    match parsed.and_then(Params::from_value) {
        Ok(p) => reducer::apply(state, &p),
        Err(e) => Reply::error(e.to_string()),
    }
}

impl UserData for List {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method_mut("apply", |lua, this, params: LuaValue| {
            guarded("list:apply", || {
                let ctx = Ctx::get(lua)?;
                call(lua, &ctx, &mut this.state, params)
            })
        });
        m.add_method_mut("apply_json", |lua, this, text: mlua::String| {
            guarded("list:apply_json", || {
                let (out, reply, echo) = call_json(&mut this.state, &text.as_bytes());
                let s = lua.create_string(out);
                this.last_json = Some((reply, echo));
                s
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
            this.state = super::state_arg(&ctx, &state, "replace")?;
            Ok(())
        });
        m.add_method("next_id", |_, this, ()| Ok(this.state.next_id));
        // Benchmark floor: seconds serde_json takes to write the result envelope the last
        // `apply_json` returned (its text, arguments and snapshot), timed inside Rust:
        // everything `apply_json` does beyond this is parsing, the reducer and the call.
        m.add_method("serialize_floor", |_, this, ()| {
            let empty = (
                Reply {
                    text: String::new(),
                    error: None,
                },
                Value::Object(Default::default()),
            );
            let (reply, params) = this.last_json.as_ref().unwrap_or(&empty);
            let start = std::time::Instant::now();
            let mut out = Vec::with_capacity(result_capacity(&this.state));
            crate::json::write_result(&mut out, reply, params, &this.state);
            let elapsed = start.elapsed().as_secs_f64();
            std::hint::black_box(out);
            Ok(elapsed)
        });
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
