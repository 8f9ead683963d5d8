//! The Lua boundary: the only module that knows mlua. `exports` builds the
//! `rpiv_todo.core` table; the loadable module's entry and `preload` both call it.
//!
//! No plain arithmetic operator in this module and below (the lint): what raw blocks
//! compute from input must not overflow, where a panic would end the process.

#![deny(clippy::arithmetic_side_effects)]

mod from_lua;
mod i18n;
mod list;
mod markdown;
mod naming;
mod overlay;
mod raw;
mod store;
mod strict;

use std::panic::{catch_unwind, AssertUnwindSafe};

use mlua::{Lua, LuaSerdeExt, Table, Value as LuaValue};
use serde_json::Value;

use crate::error::Error;
use crate::task::State;
use list::List;

/// Per-Lua-state values the conversions need: the array metatable and the null values.
#[derive(Clone)]
pub struct Ctx {
    pub array_mt: Table,
    /// What the raw reads and writes compare with and copy, made once (`raw::Const` names
    /// the slots): the array markers (ours or cjson's, and mlua's serde marker, which a Rust
    /// host's `lua.to_value` puts on arrays), `vim.NIL` inside Neovim, interned names.
    consts: Table,
}

impl Ctx {
    fn new(lua: &Lua) -> mlua::Result<Ctx> {
        let globals = lua.globals();
        // Reuse cjson's marker when the host already loaded a cjson that has one, so its
        // encoder writes `[]`; otherwise a table dkjson-style encoders understand.
        let loaded: Option<Table> = globals
            .get::<Option<Table>>("package")?
            .and_then(|p| p.get::<Option<Table>>("loaded").ok().flatten());
        let cjson_mt = loaded
            .and_then(|l| l.get::<Option<Table>>("cjson").ok().flatten())
            .and_then(|c| c.get::<Option<Table>>("array_mt").ok().flatten());
        let array_mt = match cjson_mt {
            Some(mt) => mt,
            // dkjson's convention; mlua's own serde marker hides itself from
            // `getmetatable`, so Lua encoders could not see it.
            None => lua.create_table_from([("__jsontype", "array")])?,
        };
        let vim_nil = globals
            .get::<Option<Table>>("vim")
            .ok()
            .flatten()
            .and_then(|vim| vim.get::<LuaValue>("NIL").ok())
            .filter(|v| !v.is_nil());
        let serde_mt = lua.array_metatable();
        let consts = lua.create_table()?;
        consts.raw_push(array_mt.clone())?;
        consts.raw_push(serde_mt)?;
        consts.raw_push(vim_nil.unwrap_or(LuaValue::Boolean(false)))?;
        for s in raw::Const::STRINGS {
            consts.raw_push(s)?;
        }
        Ok(Ctx { array_mt, consts })
    }

    fn get(lua: &Lua) -> mlua::Result<Ctx> {
        match lua.app_data_ref::<Ctx>() {
            Some(ctx) => Ok(ctx.clone()),
            None => Err(mlua::Error::runtime(
                "rpiv_todo.core: not initialised in this Lua state",
            )),
        }
    }
}

/// A snapshot the host hands over (`core.apply`, `list:replace`): a table, a JSON string
/// or nil for the empty list. A malformed one is the host's mistake: a Lua error.
fn state_arg(lua: &Lua, ctx: &Ctx, v: &LuaValue, func: &str) -> mlua::Result<State> {
    let value = match v {
        LuaValue::Nil => return Ok(State::default()),
        LuaValue::String(s) => {
            serde_json::from_slice::<Value>(&s.as_bytes()).map_err(|e| Error::Json(e.to_string()))
        }
        LuaValue::UserData(ud) => match ud.borrow::<List>() {
            Ok(list) => return Ok(list.state().clone()),
            // A list being changed (a finalizer or a metamethod run inside its call).
            Err(mlua::Error::UserDataBorrowError) => Err(Error::Busy),
            Err(_) => Err(Error::input(
                "state",
                "a table, a JSON string or a list",
                "another userdata",
            )),
        },
        other => from_lua::value(lua, ctx, other, "state", raw::Empty::Object),
    };
    value
        .and_then(|v| crate::json::state_from_value(&v))
        .map_err(|e| api_error(func, e))
}

fn api_error(func: &str, e: Error) -> mlua::Error {
    mlua::Error::external(ApiError {
        func: func.to_owned(),
        source: e,
    })
}

/// A misuse of the Lua API, named after the function; the crate error is its source.
#[derive(Debug, thiserror::Error)]
#[error("rpiv_todo.core.{func}: {}", crate::sanitize::display(&.source.to_string()))]
pub struct ApiError {
    func: String,
    #[source]
    source: Error,
}

/// The body of every native entry point. A debug hook's call made while another call
/// runs is refused (see `raw::hook`). While `f` runs the collector is held (see
/// `CollectorHold`), and a panic (a bug) becomes a Lua error instead of unwinding into
/// Lua. Whatever the call returns that Lua must allocate is made inside `f`, under the hold.
fn guarded<R>(lua: &Lua, func: &str, f: impl FnOnce() -> mlua::Result<R>) -> mlua::Result<R> {
    let _entered = raw::hook::Entered::enter(lua, func)?;
    let _hold = raw::CollectorHold::new(lua);
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(mlua::Error::runtime(format!(
            "rpiv_todo.core.{func}: internal error"
        )))
    })
}

/// The `rpiv_todo.core` table.
pub fn exports(lua: &Lua) -> mlua::Result<Table> {
    let ctx = Ctx::new(lua)?;
    lua.set_app_data(ctx.clone());
    #[cfg(any(feature = "lua51", feature = "luajit"))]
    lua.set_app_data(raw::CollectorDebt::default());
    let core = lua.create_table()?;
    core.set("version", env!("CARGO_PKG_VERSION"))?;
    core.set("flavour", crate::FLAVOUR)?;
    core.set("null", LuaValue::NULL)?;
    core.set("array_mt", ctx.array_mt.clone())?;

    core.set(
        "apply",
        lua.create_function(|lua, (state, params): (LuaValue, LuaValue)| {
            guarded(lua, "apply", || {
                let ctx = Ctx::get(lua)?;
                let mut s = state_arg(lua, &ctx, &state, "apply")?;
                let result = list::call(lua, &ctx, &mut s, params)?;
                let rejected = result.get::<Table>("details")?.contains_key("error")?;
                let next = if rejected && !state.is_nil() {
                    state
                } else {
                    LuaValue::Table(raw::write::state(lua, &ctx.array_mt, &s)?)
                };
                Ok((result, next))
            })
        })?,
    )?;
    core.set(
        "list",
        lua.create_function(|lua, state: LuaValue| {
            guarded(lua, "list", || {
                let ctx = Ctx::get(lua)?;
                lua.create_userdata(List::new(state_arg(lua, &ctx, &state, "list")?))
            })
        })?,
    )?;
    // The walk over entries is Lua, the snapshot's reading native (`walk_in_lua`).
    let replay = from_lua::walk_in_lua(lua, native_replay(lua)?)?;
    core.set("replay", replay)?;
    core.set(
        "newer",
        lua.create_function(|lua, (held, branch): (LuaValue, LuaValue)| {
            guarded(lua, "newer", || {
                let ctx = Ctx::get(lua)?;
                let branch = state_arg(lua, &ctx, &branch, "newer")?;
                // A list handle is read in place, without a copy.
                if let LuaValue::UserData(ud) = &held {
                    if let Ok(list) = ud.borrow::<List>() {
                        return Ok(crate::replay::newer(list.state(), &branch));
                    }
                }
                let held = state_arg(lua, &ctx, &held, "newer")?;
                Ok(crate::replay::newer(&held, &branch))
            })
        })?,
    )?;
    core.set(
        "sanitize",
        lua.create_function(|lua, text: mlua::LuaString| {
            guarded(lua, "sanitize", || {
                let bytes = text.as_bytes();
                // Non-UTF-8 bytes are replaced, never passed through to a terminal.
                let s = String::from_utf8_lossy(&bytes);
                lua.create_string(crate::sanitize::sanitize(&s).as_bytes())
            })
        })?,
    )?;
    core.set(
        "sanitize_display",
        lua.create_function(|lua, text: mlua::LuaString| {
            guarded(lua, "sanitize_display", || {
                let bytes = text.as_bytes();
                let s = String::from_utf8_lossy(&bytes);
                lua.create_string(crate::sanitize::display(&s).as_bytes())
            })
        })?,
    )?;
    core.set(
        "width",
        lua.create_function(|_, text: mlua::LuaString| {
            Ok(crate::width::width(&String::from_utf8_lossy(
                &text.as_bytes(),
            )))
        })?,
    )?;
    core.set(
        "truncate",
        lua.create_function(
            |lua, (text, width, ellipsis): (mlua::LuaString, usize, Option<mlua::LuaString>)| {
                guarded(lua, "truncate", || {
                    let s = String::from_utf8_lossy(&text.as_bytes()).into_owned();
                    let e = ellipsis.map(|e| String::from_utf8_lossy(&e.as_bytes()).into_owned());
                    let out = crate::width::truncate(&s, width, e.as_deref().unwrap_or("…"));
                    lua.create_string(out.as_bytes())
                })
            },
        )?,
    )?;
    overlay::register(lua, &core)?;
    i18n::register(lua, &core)?;
    store::register(lua, &core)?;
    strict::register(lua, &core)?;
    markdown::register(lua, &core)?;
    naming::register(lua, &core)?;
    // Last: every function above, as Lua code reaches it (see `raw::export`).
    raw::export::seal(lua, &core)?;
    Ok(core)
}

/// `core.replay` for what the walk in Lua hands over: JSON text, nil (nothing found: the
/// empty list) and misuse.
pub(crate) fn native_replay(lua: &Lua) -> mlua::Result<mlua::Function> {
    lua.create_function(|lua, entries: LuaValue| {
        guarded(lua, "replay", || {
            let ctx = Ctx::get(lua)?;
            replay(lua, &ctx, &entries)
        })
    })
}

/// `core.replay(entries)` for JSON text, scanned newest first (tables are walked in Lua).
fn replay(lua: &Lua, ctx: &Ctx, entries: &LuaValue) -> mlua::Result<Table> {
    let state = match entries {
        LuaValue::String(s) => {
            let bytes = s.as_bytes();
            let raw: Vec<&serde_json::value::RawValue> = serde_json::from_slice(&bytes)
                .map_err(|e| api_error("replay", Error::Json(e.to_string())))?;
            raw.iter()
                .rev()
                .find_map(|r| crate::replay::state_from_text(r.get()))
                .unwrap_or_default()
        }
        LuaValue::Table(_) | LuaValue::Nil => State::default(),
        _ => {
            return Err(api_error(
                "replay",
                Error::input(
                    "entries",
                    "an array of branch entries or its JSON text",
                    entries.type_name(),
                ),
            ))
        }
    };
    raw::write::state(lua, &ctx.array_mt, &state)
}

/// Register `rpiv_todo.core` and the embedded Lua scripts in `package.preload`, so that
/// `require("rpiv_todo")` works in a Lua state a Rust host made.
pub fn preload(lua: &Lua) -> mlua::Result<()> {
    let preload: Table = lua.globals().get::<Table>("package")?.get("preload")?;
    preload.set(
        "rpiv_todo.core",
        lua.create_function(|lua, ()| exports(lua))?,
    )?;
    for (name, source) in crate::SCRIPTS {
        let chunk = lua
            .load(*source)
            .set_name(format!("@lua/{}", script_path(name)));
        preload.set(*name, chunk.into_function()?)?;
    }
    Ok(())
}

fn script_path(module: &str) -> String {
    match module.strip_prefix("rpiv_todo.") {
        Some(rest) => format!("rpiv_todo/{}.lua", rest.replace('.', "/")),
        None => "rpiv_todo/init.lua".into(),
    }
}

/// The loadable module's entry point, `luaopen_rpiv_todo_core`.
#[cfg(feature = "module")]
#[mlua::lua_module(name = "rpiv_todo_core")]
fn rpiv_todo_core(lua: &Lua) -> mlua::Result<Table> {
    // This library's copy of std is its own: silence its panic hook so that a bug can
    // never print to the host's stderr (panics are caught and become Lua errors).
    std::panic::set_hook(Box::new(|_| {}));
    exports(lua)
}
