//! `core.list(state)`: a list held in Rust. Hosts and sessions keep one per session and
//! call it for every tool call, so nothing but the result crosses the boundary.

use std::cell::{Cell, RefCell};

use mlua::{AnyUserData, Lua, Table, UserData, UserDataMethods, Value as LuaValue};
use serde_json::{Map, Value};

use super::raw::write;
use super::{from_lua, guarded, Ctx};
use crate::call::{parse, run};
use crate::error::Error;
use crate::reducer::Reply;
use crate::task::State;

/// The list behind a `core.list` handle.
#[derive(Default)]
pub struct List {
    /// Written only through `state_mut` and `parts_mut`, which tell `view`.
    state: State,
    /// A call that changes the list is under way (see `Call`).
    busy: Cell<bool>,
    /// The tasks' JSON text from the last `apply_json`, reused while they are unchanged.
    json: crate::json::TaskJson,
    /// The last panel view drawn from this list (`overlay::view`): reused whole while the
    /// list is unchanged, row by row after a change.
    pub(super) view: RefCell<super::overlay::ViewMemo>,
}

impl List {
    pub fn new(state: State) -> List {
        List {
            state,
            ..Default::default()
        }
    }

    pub fn state(&self) -> &State {
        &self.state
    }

    /// The state for writing; whatever was remembered from it is forgotten.
    fn state_mut(&mut self) -> &mut State {
        self.parts_mut().0
    }

    /// `state_mut` with the JSON text cache beside it.
    fn parts_mut(&mut self) -> (&mut State, &mut crate::json::TaskJson) {
        self.view.get_mut().changed();
        (&mut self.state, &mut self.json)
    }
}

/// One call with arguments as a Lua table or a JSON string; the result as Lua tables.
/// Bad arguments come back in-band; only a failure to build the result is a Lua error.
pub fn call(lua: &Lua, ctx: &Ctx, state: &mut State, params: LuaValue) -> mlua::Result<Table> {
    let args = Args::read(lua, ctx, params)?;
    let reply = run(state, args.parsed.as_ref().map_err(Clone::clone));
    args.result(lua, ctx, &reply, state)
}

/// A call's arguments, read from Lua before the list is touched: the checked value, and
/// what the result echoes (`details.action`, `details.params`).
struct Args {
    parsed: Result<Value, Error>,
    action: LuaValue,
    echo: LuaValue,
}

impl Args {
    fn read(lua: &Lua, ctx: &Ctx, params: LuaValue) -> mlua::Result<Args> {
        Ok(match &params {
            LuaValue::String(s) => {
                let parsed = parse(&s.as_bytes());
                let echo = match &parsed {
                    Ok(v) => write::json(lua, &ctx.array_mt, v)?,
                    Err(_) => LuaValue::Table(lua.create_table()?),
                };
                let action = match &parsed {
                    Ok(Value::Object(m)) => match m.get("action") {
                        Some(a) => write::json(lua, &ctx.array_mt, a)?,
                        None => LuaValue::Nil,
                    },
                    _ => LuaValue::Nil,
                };
                Args {
                    parsed,
                    action,
                    echo,
                }
            }
            other => {
                let action = match other {
                    LuaValue::Table(t) => t.raw_get("action").unwrap_or(LuaValue::Nil),
                    _ => LuaValue::Nil,
                };
                Args {
                    parsed: from_lua::params(lua, ctx, other),
                    action,
                    echo: other.clone(),
                }
            }
        })
    }

    fn result(self, lua: &Lua, ctx: &Ctx, reply: &Reply, state: &State) -> mlua::Result<Table> {
        write::result(lua, &ctx.array_mt, reply, self.action, self.echo, state)
    }
}

/// A call that changes a list, from start to end; `None` while another one on the same
/// list is under way. A call can be re-entered from Lua code that runs in its middle: a
/// finalizer run by one of its allocations (Lua 5.4; LuaJIT and 5.1 hold the collector,
/// see `CollectorHold`) or a host's metamethod. The re-entrant call is answered without
/// touching the list (in-band for a tool call), so the outer one finishes on the list it
/// started with.
///
/// Borrows of the list itself are short: shared to read it, mutable only while the reducer
/// runs, which is plain Rust where no Lua code can run.
struct Call {
    ud: AnyUserData,
}

impl Call {
    fn enter(ud: &AnyUserData) -> mlua::Result<Option<Call>> {
        let list = ud.borrow::<List>()?;
        if list.busy.replace(true) {
            return Ok(None);
        }
        Ok(Some(Call { ud: ud.clone() }))
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        if let Ok(list) = self.ud.borrow::<List>() {
            list.busy.set(false);
        }
    }
}

/// The list for writing, or `None` while a read of it (`state`, `state_json`: mlua holds
/// the list shared for those) is under way further down the stack.
fn writable(ud: &AnyUserData) -> mlua::Result<Option<mlua::UserDataRefMut<List>>> {
    match ud.borrow_mut::<List>() {
        Ok(list) => Ok(Some(list)),
        Err(mlua::Error::UserDataBorrowMutError) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The in-band reply to a tool call that found its list busy.
fn busy() -> Reply {
    Reply::error(Error::Busy.to_string())
}

/// `busy()` as `apply_json` writes it: the arguments echoed, the list as it is.
fn busy_json(ud: &AnyUserData, text: &[u8]) -> mlua::Result<Vec<u8>> {
    let reply = busy();
    let echo = parse(text).unwrap_or_else(|_| Value::Object(Map::new()));
    let list = ud.borrow::<List>()?;
    let mut out = Vec::new();
    crate::json::write_result(
        &mut out,
        &reply.text,
        reply.error.as_deref(),
        &echo,
        &list.state,
    );
    Ok(out)
}

impl UserData for List {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        // `apply`, `apply_json` and `replace` take the handle rather than a borrow of it
        // (`add_method_mut`): mlua would hold that borrow, and the one closure every list
        // shares, for the whole call, so any re-entrant call raised (see `Call`).
        m.add_function("apply", |lua, (ud, params): (AnyUserData, LuaValue)| {
            guarded(lua, "list:apply", || {
                let ctx = Ctx::get(lua)?;
                let call = Call::enter(&ud)?;
                let args = Args::read(lua, &ctx, params)?;
                let list = match &call {
                    Some(_) => writable(&ud)?,
                    None => None,
                };
                let reply = match list {
                    Some(mut list) => {
                        run(list.state_mut(), args.parsed.as_ref().map_err(Clone::clone))
                    }
                    None => busy(),
                };
                let list = ud.borrow::<List>()?;
                args.result(lua, &ctx, &reply, &list.state)
            })
        });
        m.add_function(
            "apply_json",
            |lua, (ud, text): (AnyUserData, mlua::LuaString)| {
                guarded(lua, "list:apply_json", || {
                    let text = text.as_bytes();
                    let call = Call::enter(&ud)?;
                    let list = match &call {
                        Some(_) => writable(&ud)?,
                        None => None,
                    };
                    let out = match list {
                        Some(mut list) => {
                            let (state, json) = list.parts_mut();
                            crate::call::call_json_cached(state, json, &text)
                        }
                        None => busy_json(&ud, &text)?,
                    };
                    lua.create_string(out)
                })
            },
        );
        m.add_method("state", |lua, this, ()| {
            guarded(lua, "list:state", || {
                let ctx = Ctx::get(lua)?;
                write::state(lua, &ctx.array_mt, &this.state)
            })
        });
        m.add_method("state_json", |lua, this, ()| {
            guarded(lua, "list:state_json", || {
                lua.create_string(serde_json::to_vec(&this.state).unwrap_or_default())
            })
        });
        m.add_function("replace", |lua, (ud, state): (AnyUserData, LuaValue)| {
            guarded(lua, "list:replace", || {
                let ctx = Ctx::get(lua)?;
                let Some(_call) = Call::enter(&ud)? else {
                    return Err(super::api_error("list:replace", Error::Busy));
                };
                let state = super::state_arg(lua, &ctx, &state, "replace")?;
                match writable(&ud)? {
                    Some(mut list) => {
                        *list.state_mut() = state;
                        Ok(())
                    }
                    None => Err(super::api_error("list:replace", Error::Busy)),
                }
            })
        });
        m.add_method("next_id", |_, this, ()| Ok(this.state.next_id));
        m.add_meta_method("__len", |_, this, ()| Ok(this.state.tasks.len()));
        m.add_meta_method("__tostring", |lua, this, ()| {
            guarded(lua, "list:__tostring", || {
                lua.create_string(format!(
                    "rpiv_todo.list ({} tasks, nextId {})",
                    this.state.tasks.len(),
                    this.state.next_id
                ))
            })
        });
    }
}
