//! `core.list(state)`: a list held in Rust. Hosts and sessions keep one per session and
//! call it for every tool call, so nothing but the result crosses the boundary.

use std::cell::{Cell, RefCell};
use std::time::Duration;

use mlua::{AnyUserData, Lua, Table, UserData, UserDataMethods, Value as LuaValue};
use serde_json::{Map, Value};

use super::raw::write;
use super::{from_lua, guarded, Ctx};
use crate::call::{parse, run};
use crate::error::Error;
use crate::journal::{Before, Journal, Mark, Writer};
use crate::reducer::Reply;
use crate::shared::{self, SharedFile, TransactError};
use crate::task::State;

/// The list behind a `core.list` handle.
#[derive(Default)]
pub struct List {
    /// Written only through `state_mut` and `run`, which count a revision.
    state: State,
    /// A call that changes the list is under way (see `Call`).
    busy: Cell<bool>,
    /// The tasks' JSON text from the last `apply_json`, reused while they are unchanged.
    json: crate::json::TaskJson,
    /// Counts changes of the tasks: what a view drew from an earlier revision is stale.
    revision: u64,
    /// What the panel keeps between paints of this list (the overlay's memo; opaque
    /// here), checked against `revision`.
    pub(super) memo: RefCell<Option<Box<dyn std::any::Any>>>,
    /// The file the list is kept in (`list:bind`): every call is then a transaction on it.
    file: Option<SharedFile>,
    /// The record of changes while the list is not bound (a bound list's is the file's).
    journal: Journal,
    /// The writers of this list in this process (`list:apply(params, by)`), each with
    /// where its last call left it; the most recent last.
    writers: Vec<(Option<String>, Writer, Option<Mark>)>,
    /// The name of a call's writer when it gives none (`list:set_writer`).
    writer: Option<String>,
}

/// How many writers a list remembers (the oldest is forgotten past it).
const MAX_WRITERS: usize = 32;

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

    /// How many times the tasks may have changed (see `memo`).
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The state for writing; whatever was remembered from it is forgotten.
    fn state_mut(&mut self) -> &mut State {
        self.revision = self.revision.wrapping_add(1);
        &mut self.state
    }

    /// One tool call by the writer `by` (the list's default writer when `None`). On a
    /// bound list a call that may change it is a transaction on the file: applied to the
    /// newest list there, under its lock, and answered only once saved; a failure to
    /// read, lock or save is the call's in-band error, and the list stays as it was. What
    /// it changed goes to the list's record of changes, and its reply ends with a line
    /// naming what other writers changed since this writer's last call, if anything.
    fn run(&mut self, parsed: Result<&Value, Error>, by: Option<&str>) -> Reply {
        self.revision = self.revision.wrapping_add(1);
        let slot = self.writer_slot(by);
        let writer = self.writers[slot].1.clone();
        let args = parsed.as_ref().ok().copied();
        let writes = args.is_some_and(crate::call::writes);
        let mut reply = match self.file.as_mut() {
            None => {
                let before = args.filter(|_| writes).map(|v| Before::of(&self.state, v));
                let reply = run(&mut self.state, parsed);
                if let (Some(before), None) = (&before, &reply.error) {
                    self.journal.record(&writer, before, &self.state);
                }
                reply
            }
            Some(file) => {
                let outcome = file.transact_with(&mut self.state, writes, |state, journal| {
                    let before = args.filter(|_| writes).map(|v| Before::of(state, v));
                    let reply = run(state, parsed);
                    let changed = reply.error.is_none();
                    if let (Some(before), true) = (&before, changed) {
                        journal.record(&writer, before, state);
                    }
                    (reply, changed)
                });
                match outcome {
                    Ok(reply) => reply,
                    Err(e) => return Reply::error(e.to_string()),
                }
            }
        };
        if let Some(note) = self.take_note(slot) {
            reply.text.push('\n');
            reply.text.push_str(&note);
        }
        reply
    }

    /// The record of changes this list reads: the file's when bound.
    fn journal(&self) -> &Journal {
        self.file
            .as_ref()
            .map_or(&self.journal, SharedFile::journal)
    }

    /// What others changed since writer `slot`'s last call (none for its first), and
    /// that writer now up to date.
    fn take_note(&mut self, slot: usize) -> Option<String> {
        let journal = self.journal();
        let mark = journal.mark();
        let (_, writer, last) = &self.writers[slot];
        let note = last.as_ref().and_then(|last| journal.note(writer, last));
        self.writers[slot].2 = Some(mark);
        note
    }

    /// The index of the writer named `by` (the default writer when `None`), made when new.
    fn writer_slot(&mut self, by: Option<&str>) -> usize {
        let name = by.map(str::to_owned).or_else(|| self.writer.clone());
        if let Some(i) = self.writers.iter().position(|(n, _, _)| *n == name) {
            return i;
        }
        if self.writers.len() >= MAX_WRITERS {
            self.writers.remove(0);
        }
        self.writers.push((name.clone(), Writer::new(name), None));
        self.writers.len().saturating_sub(1)
    }
}

/// `nil, message, kind` for Lua from a failed file operation.
type Failed = (LuaValue, Option<String>, Option<&'static str>);

fn failed(e: &TransactError) -> Failed {
    (LuaValue::Nil, Some(e.to_string()), Some(e.kind()))
}

/// `list:bind`'s options: `{ wait_ms = n }`, how long a call waits for another process's
/// lock (default 100).
fn bind_wait(opts: Option<Table>) -> mlua::Result<Duration> {
    let Some(opts) = opts else {
        return Ok(shared::DEFAULT_WAIT);
    };
    let bad = |what: &str| {
        super::api_error(
            "list:bind",
            Error::input("wait_ms", "a number of milliseconds from 0 to 60000", what),
        )
    };
    for pair in opts.pairs::<LuaValue, LuaValue>() {
        let (k, _) = pair?;
        let named = matches!(&k, LuaValue::String(s) if &*s.as_bytes() == b"wait_ms");
        if !named {
            return Err(super::api_error(
                "list:bind",
                Error::input("options", "only wait_ms", "another key"),
            ));
        }
    }
    match opts.raw_get::<LuaValue>("wait_ms")? {
        LuaValue::Nil => Ok(shared::DEFAULT_WAIT),
        LuaValue::Integer(n) if (0..=60_000).contains(&n) => {
            Ok(Duration::from_millis(n.unsigned_abs()))
        }
        LuaValue::Number(n) if (0.0..=60_000.0).contains(&n) => {
            Ok(Duration::from_secs_f64(n / 1000.0))
        }
        LuaValue::Integer(_) | LuaValue::Number(_) => Err(bad("a number out of range")),
        other => Err(bad(other.type_name())),
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
            LuaValue::String(s) => Args::of_json(lua, ctx, parse(&s.as_bytes()))?,
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

    /// Arguments the core holds as a JSON value (parsed text, or `core.from_strict`'s
    /// conversion): echoed as that value; unreadable text as `{}`.
    fn of_json(lua: &Lua, ctx: &Ctx, parsed: Result<Value, Error>) -> mlua::Result<Args> {
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
        Ok(Args {
            parsed,
            action,
            echo,
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

/// `list:apply(params, by)`: arguments as a Lua table or JSON text, by the writer `by`.
pub(super) fn apply_lua(
    lua: &Lua,
    ud: &AnyUserData,
    params: LuaValue,
    by: Option<String>,
) -> mlua::Result<Table> {
    let ctx = Ctx::get(lua)?;
    let call = Call::enter(ud)?;
    let args = Args::read(lua, &ctx, params)?;
    apply(lua, &ctx, ud, call, args, by)
}

/// The writer a call names (`list:apply(params, by)`): nil, or a name of 1 to 64 bytes.
fn writer_arg(by: LuaValue, method: &str) -> mlua::Result<Option<String>> {
    match by {
        LuaValue::Nil => Ok(None),
        LuaValue::String(s) => {
            let bytes = s.as_bytes();
            if bytes.is_empty() || bytes.len() > 64 {
                return Err(super::api_error(
                    method,
                    Error::input(
                        "by",
                        "a writer's name of 1 to 64 bytes",
                        "a string of another length",
                    ),
                ));
            }
            Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
        }
        other => Err(super::api_error(
            method,
            Error::input("by", "a writer's name (a string) or nil", other.type_name()),
        )),
    }
}

/// A call whose arguments the core already holds as a JSON value (`core.from_strict`'s
/// conversion), run as `list:apply` runs a table: the same checks, reducer, transaction
/// and result, with the value echoed as `details.params`.
pub(super) fn apply_value(lua: &Lua, ud: &AnyUserData, value: Value) -> mlua::Result<Table> {
    let ctx = Ctx::get(lua)?;
    let call = Call::enter(ud)?;
    let args = Args::of_json(lua, &ctx, Ok(value))?;
    apply(lua, &ctx, ud, call, args, None)
}

/// `list:apply` once its arguments are read: run them unless the list is busy, then build
/// the result from the list as it is.
fn apply(
    lua: &Lua,
    ctx: &Ctx,
    ud: &AnyUserData,
    call: Option<Call>,
    args: Args,
    by: Option<String>,
) -> mlua::Result<Table> {
    let list = match &call {
        Some(_) => writable(ud)?,
        None => None,
    };
    let reply = match list {
        Some(mut list) => list.run(args.parsed.as_ref().map_err(Clone::clone), by.as_deref()),
        None => busy(),
    };
    let list = ud.borrow::<List>()?;
    args.result(lua, ctx, &reply, &list.state)
}

impl UserData for List {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        // `apply`, `apply_json` and `replace` take the handle rather than a borrow of it
        // (`add_method_mut`): mlua would hold that borrow, and the one closure every list
        // shares, for the whole call, so any re-entrant call raised (see `Call`).
        m.add_function(
            "apply",
            |lua, (ud, params, by): (AnyUserData, LuaValue, LuaValue)| {
                guarded(lua, "list:apply", || {
                    let by = writer_arg(by, "list:apply")?;
                    apply_lua(lua, &ud, params, by)
                })
            },
        );
        m.add_function(
            "apply_json",
            |lua, (ud, text, by): (AnyUserData, mlua::LuaString, LuaValue)| {
                guarded(lua, "list:apply_json", || {
                    let by = writer_arg(by, "list:apply_json")?;
                    let text = text.as_bytes();
                    let call = Call::enter(&ud)?;
                    let list = match &call {
                        Some(_) => writable(&ud)?,
                        None => None,
                    };
                    let out = match list {
                        Some(mut list) => {
                            let parsed = parse(&text);
                            let reply =
                                list.run(parsed.as_ref().map_err(Clone::clone), by.as_deref());
                            let echo = parsed.unwrap_or_else(|_| Value::Object(Map::new()));
                            let list = &mut *list;
                            crate::call::write_json(&mut list.json, &list.state, &reply, &echo)
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
                let Some(mut list) = writable(&ud)? else {
                    return Err(super::api_error("list:replace", Error::Busy));
                };
                *list.state_mut() = state;
                // A host's list (a replay, a load) wins over the file's.
                let list = &mut *list;
                match list.file.as_mut().map(|f| f.write_over(&list.state)) {
                    Some(Err(e)) => Ok(failed(&e)),
                    _ => Ok((LuaValue::Boolean(true), None, None)),
                }
            })
        });
        m.add_function(
            "bind",
            |lua, (ud, path, opts): (AnyUserData, Option<mlua::LuaString>, Option<Table>)| {
                guarded(lua, "list:bind", || {
                    let wait = bind_wait(opts)?;
                    let Some(mut list) = writable(&ud)? else {
                        return Err(super::api_error("list:bind", Error::Busy));
                    };
                    list.file = match path {
                        None => None,
                        Some(p) => {
                            let p = p.to_str()?.to_owned();
                            if p.is_empty() {
                                return Err(super::api_error(
                                    "list:bind",
                                    Error::input("path", "a file path", "an empty string"),
                                ));
                            }
                            Some(SharedFile::new(p, wait))
                        }
                    };
                    Ok(())
                })
            },
        );
        m.add_function("sync", |lua, ud: AnyUserData| {
            guarded(lua, "list:sync", || {
                let _call = Call::enter(&ud)?;
                let Some(mut list) = writable(&ud)? else {
                    return Err(super::api_error("list:sync", Error::Busy));
                };
                let list = &mut *list;
                let Some(file) = list.file.as_mut() else {
                    return Ok((
                        LuaValue::Nil,
                        Some("the list is not bound to a file".into()),
                        Some("unbound"),
                    ));
                };
                match file.sync(&mut list.state) {
                    Ok(what) => {
                        if what == shared::Synced::Reloaded {
                            list.revision = list.revision.wrapping_add(1);
                        }
                        Ok((
                            LuaValue::String(lua.create_string(what.as_str())?),
                            None,
                            None,
                        ))
                    }
                    Err(e) => Ok(failed(&e)),
                }
            })
        });
        m.add_function("write", |lua, ud: AnyUserData| {
            guarded(lua, "list:write", || {
                let Some(mut list) = writable(&ud)? else {
                    return Err(super::api_error("list:write", Error::Busy));
                };
                let list = &mut *list;
                match list.file.as_mut().map(|f| f.write_over(&list.state)) {
                    Some(Err(e)) => Ok(failed(&e)),
                    _ => Ok((LuaValue::Boolean(true), None, None)),
                }
            })
        });
        m.add_function(
            "unbind",
            |lua, (ud, remove): (AnyUserData, Option<bool>)| {
                guarded(lua, "list:unbind", || {
                    let Some(mut list) = writable(&ud)? else {
                        return Err(super::api_error("list:unbind", Error::Busy));
                    };
                    let file = list.file.take();
                    match (file, remove) {
                        (Some(mut f), Some(true)) => match f.remove_if_unchanged() {
                            Ok(removed) => Ok((LuaValue::Boolean(removed), None, None)),
                            Err(e) => Ok(failed(&e)),
                        },
                        _ => Ok((LuaValue::Boolean(false), None, None)),
                    }
                })
            },
        );
        m.add_method_mut("notices", |lua, this, ()| {
            let notices = this
                .file
                .as_mut()
                .map(SharedFile::take_notices)
                .unwrap_or_default();
            lua.create_sequence_from(notices)
        });
        m.add_method("file", |_, this, ()| {
            Ok(match &this.file {
                Some(f) => (Some(f.path().display().to_string()), Some(f.generation())),
                None => (None, None),
            })
        });
        m.add_function("set_writer", |lua, (ud, name): (AnyUserData, LuaValue)| {
            guarded(lua, "list:set_writer", || {
                let name = writer_arg(name, "list:set_writer")?;
                let Some(mut list) = writable(&ud)? else {
                    return Err(super::api_error("list:set_writer", Error::Busy));
                };
                list.writer = name;
                Ok(())
            })
        });
        m.add_function("changes", |lua, (ud, by): (AnyUserData, LuaValue)| {
            guarded(lua, "list:changes", || {
                let by = writer_arg(by, "list:changes")?;
                let _call = Call::enter(&ud)?;
                let Some(mut list) = writable(&ud)? else {
                    return Err(super::api_error("list:changes", Error::Busy));
                };
                let list = &mut *list;
                if let Some(file) = list.file.as_mut() {
                    // Another program's change is news too; a file that cannot be read
                    // now tells nothing new.
                    if let Ok(shared::Synced::Reloaded) = file.sync(&mut list.state) {
                        list.revision = list.revision.wrapping_add(1);
                    }
                }
                let slot = list.writer_slot(by.as_deref());
                Ok(list.take_note(slot))
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
