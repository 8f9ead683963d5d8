//! The Lua boundary: the only module that knows mlua. `exports` builds the
//! `rpiv_todo.core` table; the loadable module's entry and `preload` both call it.

mod from_lua;
mod i18n;
mod list;
mod overlay;
mod raw;
mod store;
mod strict;
mod to_lua;

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
    /// mlua's serde array marker: a Rust host's `lua.to_value` puts it on arrays.
    serde_mt: Table,
    /// Neovim's `vim.NIL`, when loaded inside Neovim.
    vim_nil: Option<LuaValue>,
    /// What the raw reads compare with, made once (`from_lua::Const` names the slots).
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
        consts.raw_push(serde_mt.clone())?;
        consts.raw_push(vim_nil.clone().unwrap_or(LuaValue::Boolean(false)))?;
        for s in from_lua::Const::STRINGS {
            consts.raw_push(s)?;
        }
        #[cfg(feature = "luajit")]
        {
            consts.raw_push(to_lua::task_builder(lua)?)?;
            consts.raw_push(lua.create_table()?)?;
        }
        #[cfg(not(feature = "luajit"))]
        {
            consts.raw_push(false)?;
            consts.raw_push(false)?;
        }
        Ok(Ctx {
            array_mt,
            serde_mt,
            vim_nil,
            consts,
        })
    }

    fn get(lua: &Lua) -> mlua::Result<Ctx> {
        match lua.app_data_ref::<Ctx>() {
            Some(ctx) => Ok(ctx.clone()),
            None => Err(mlua::Error::runtime(
                "rpiv_todo.core: not initialised in this Lua state",
            )),
        }
    }

    /// JSON null: the NULL light userdata (`core.null`, `cjson.null`) or `vim.NIL`.
    pub fn is_null(&self, v: &LuaValue) -> bool {
        match v {
            LuaValue::LightUserData(p) => p.0.is_null(),
            LuaValue::UserData(_) => self.vim_nil.as_ref().is_some_and(|nil| nil == v),
            _ => false,
        }
    }

    /// An empty table marked as an array by us, cjson or dkjson.
    pub fn is_array_marked(&self, t: &Table) -> bool {
        t.metatable().is_some_and(|mt| {
            mt == self.array_mt
                || mt == self.serde_mt
                || mt
                    .raw_get::<Option<String>>("__jsontype")
                    .ok()
                    .flatten()
                    .as_deref()
                    == Some("array")
        })
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
            Err(_) => Err(Error::input(
                "state",
                "a table, a JSON string or a list",
                "another userdata",
            )),
        },
        other => from_lua::value(lua, ctx, other, "state", from_lua::Empty::Object),
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

/// The body of every native entry point. While `f` runs the collector is held (see
/// `CollectorHold`), and a panic (a bug) becomes a Lua error instead of unwinding into
/// Lua. Whatever the call returns that Lua must allocate is made inside `f`, under the hold.
fn guarded<R>(lua: &Lua, func: &str, f: impl FnOnce() -> mlua::Result<R>) -> mlua::Result<R> {
    let _hold = CollectorHold::new(lua);
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(mlua::Error::runtime(format!(
            "rpiv_todo.core.{func}: internal error"
        )))
    })
}

/// Keeps the garbage collector from running finalizers while native code runs.
///
/// In LuaJIT and Lua 5.1 an error raised by a `__gc` metamethod propagates out of
/// whatever allocation ran the collector step. Inside a native call that allocation may be
/// one mlua makes outside a protected call, and the error then unwinds through Rust
/// frames: LuaJIT aborts the process ("Rust cannot catch foreign exceptions"), Lua 5.1
/// longjmps past them (leaked borrows, a hung or confused interpreter). With the collector
/// stopped for the duration no finalizer can run in here; the pending ones run at the
/// next allocation in Lua code, where their errors are ordinary Lua errors.
/// Lua 5.4 reports finalizer errors as warnings and never propagates them: no hold there.
///
/// The collector's state is restored: a collector the host had stopped stays stopped.
/// PUC Lua 5.1 cannot say whether it runs (`LUA_GCISRUNNING` is LuaJIT's and 5.2's), so
/// there it is read from the global state (`puc51::stopped`).
///
/// What native calls allocate under the hold is paid to the collector later (a protected
/// step, see `Drop`): a stopped collector never collects what Lua allocated meanwhile,
/// and a host looping over native calls alone (`list:apply` in a `for` loop) grew its
/// heap without bound (1.2 GB after 200,000 `list` calls under LuaJIT, measured). The
/// debt is paid once it reaches half the heap, like the collector's own pause: paying
/// every call kept the collector from ever pausing, which more than doubled a call's cost.
///
/// LuaJIT restarts the collector as after a finished cycle (`LUA_GCRESTART` with -1: next
/// cycle once the heap doubles) and counts what Lua allocated between native calls into
/// the debt, so the debt paces the collector. A plain restart made it due at once: every
/// native call pulled a resting collector into a new cycle, and a panel render paid about
/// as much collecting as drawing. PUC 5.1's restart cannot do otherwise.
struct CollectorHold {
    #[cfg(any(feature = "lua51", feature = "luajit"))]
    held: Option<Held>,
}

#[cfg(any(feature = "lua51", feature = "luajit"))]
struct Held {
    lua: Lua,
    thread: mlua::Thread,
    kb_before: std::ffi::c_int,
}

/// Kilobytes allocated and not yet paid for, per state (see `CollectorHold`), and the
/// heap's size when the last native call ended.
#[cfg(any(feature = "lua51", feature = "luajit"))]
#[derive(Default)]
struct CollectorDebt {
    owed: std::cell::Cell<std::ffi::c_int>,
    #[cfg_attr(not(feature = "luajit"), allow(dead_code))]
    last_kb: std::cell::Cell<Option<std::ffi::c_int>>,
}

impl CollectorHold {
    #[cfg(any(feature = "lua51", feature = "luajit"))]
    fn new(lua: &Lua) -> CollectorHold {
        use mlua::ffi;
        /// `lua_gc` option of LuaJIT 2.1 and Lua 5.2+; PUC 5.1 answers -1 (unknown option).
        const LUA_GCISRUNNING: std::ffi::c_int = 9;
        let thread = lua.current_thread();
        // SAFETY: `thread` keeps the state alive; neither option allocates or raises, and
        // `puc51::stopped` only reads (see there).
        let (running, kb_before) = unsafe {
            let l = thread.state();
            #[cfg(feature = "luajit")]
            let running = ffi::lua_gc(l, LUA_GCISRUNNING, 0) != 0;
            // PUC 5.1 has no such option (it answers -1, which read as "running" and made
            // every call restart a collector the host had stopped: issue 18, fault 4).
            #[cfg(feature = "lua51")]
            let running = {
                let _ = LUA_GCISRUNNING;
                !puc51::stopped(l).unwrap_or(false)
            };
            if running {
                ffi::lua_gc(l, ffi::LUA_GCSTOP, 0);
            }
            (running, ffi::lua_gc(l, ffi::LUA_GCCOUNT, 0))
        };
        CollectorHold {
            held: running.then(|| Held {
                lua: lua.clone(),
                thread,
                kb_before,
            }),
        }
    }

    #[cfg(not(any(feature = "lua51", feature = "luajit")))]
    fn new(_lua: &Lua) -> CollectorHold {
        CollectorHold {}
    }
}

#[cfg(any(feature = "lua51", feature = "luajit"))]
impl Drop for CollectorHold {
    fn drop(&mut self) {
        use mlua::ffi;
        let Some(held) = &self.held else {
            return;
        };
        // SAFETY: `thread` keeps the state alive. RESTART and COUNT neither allocate nor
        // raise; the step runs inside `lua_cpcall`, so a finalizer's error stops there
        // (it is popped and dropped, as Lua 5.4 drops one by default) and never unwinds
        // into Rust.
        unsafe {
            let l = held.thread.state();
            let kb = ffi::lua_gc(l, ffi::LUA_GCCOUNT, 0);
            #[cfg(feature = "luajit")]
            ffi::lua_gc(l, ffi::LUA_GCRESTART, -1);
            #[cfg(not(feature = "luajit"))]
            ffi::lua_gc(l, ffi::LUA_GCRESTART, 0);
            let owed = {
                let Some(debt) = held.lua.app_data_ref::<CollectorDebt>() else {
                    return;
                };
                let native = kb.saturating_sub(held.kb_before).max(0);
                // What Lua code allocated since the last native call ended (LuaJIT: the
                // restart above leaves the pacing to this debt).
                let between = match cfg!(feature = "luajit") {
                    true => debt
                        .last_kb
                        .get()
                        .map_or(0, |last| held.kb_before.saturating_sub(last).max(0)),
                    false => 0,
                };
                let owed = debt
                    .owed
                    .get()
                    .saturating_add(native)
                    .saturating_add(between);
                if owed < kb / 2 {
                    debt.owed.set(owed);
                    debt.last_kb.set(Some(kb));
                    return;
                }
                debt.owed.set(0);
                owed
            };
            if ffi::lua_cpcall(l, collector_step, owed as usize as *mut _) != 0 {
                ffi::lua_pop(l, 1);
            }
            if let Some(debt) = held.lua.app_data_ref::<CollectorDebt>() {
                debt.last_kb.set(Some(ffi::lua_gc(l, ffi::LUA_GCCOUNT, 0)));
            }
        }
    }
}

/// Whether PUC Lua 5.1's collector was stopped by the host (`collectgarbage("stop")`,
/// `lua_gc(L, LUA_GCSTOP, 0)`). 5.1 has no API that says so: `LUA_GCSTOP` sets the global
/// state's `GCthreshold` to `MAX_LUMEM` and nothing else reads it back. So it is read from
/// the global state, whose layout is the same in every 5.1 release (5.1.0 to 5.1.5), and
/// only after the read is confirmed: the allocator and its userdata must be what
/// `lua_getallocf` answers and the heap's size what `LUA_GCCOUNT`/`LUA_GCCOUNTB` answer.
/// `None` when they are not (an unknown build): the caller then assumes a running collector.
#[cfg(feature = "lua51")]
mod puc51 {
    use std::ffi::{c_int, c_void};

    use mlua::ffi;

    /// The head of 5.1's `struct lua_State` (lstate.h), as far as `l_G`.
    #[repr(C)]
    struct State {
        next: *mut c_void,
        tt: u8,
        marked: u8,
        status: u8,
        top: *mut c_void,
        base: *mut c_void,
        l_g: *const Global,
    }

    /// The head of 5.1's `struct global_State` (lstate.h), as far as `totalbytes`.
    #[repr(C)]
    struct Global {
        strt_hash: *mut c_void,
        strt_nuse: u32,
        strt_size: c_int,
        frealloc: *const c_void,
        ud: *mut c_void,
        currentwhite: u8,
        gcstate: u8,
        sweepstrgc: c_int,
        rootgc: *mut c_void,
        sweepgc: *mut c_void,
        gray: *mut c_void,
        grayagain: *mut c_void,
        weak: *mut c_void,
        tmudata: *mut c_void,
        buff_buffer: *mut c_void,
        buff_n: usize,
        buff_size: usize,
        gc_threshold: usize,
        totalbytes: usize,
    }

    /// `MAX_LUMEM` (llimits.h): the threshold of a stopped collector.
    const MAX_LUMEM: usize = usize::MAX - 2;

    /// # Safety
    ///
    /// `l` is a live PUC Lua 5.1 state (the `lua51` feature links nothing else). Both
    /// structs' heads are read in place, without writing; the reads stay inside the two
    /// objects (their full C definitions are larger than these heads).
    pub unsafe fn stopped(l: *mut ffi::lua_State) -> Option<bool> {
        let g = std::ptr::addr_of!((*(l as *const State)).l_g).read();
        if g.is_null() {
            return None;
        }
        let mut ud = std::ptr::null_mut();
        let alloc = ffi::lua_getallocf(l, &mut ud);
        let frealloc = std::ptr::addr_of!((*g).frealloc).read();
        let g_ud = std::ptr::addr_of!((*g).ud).read();
        let total = std::ptr::addr_of!((*g).totalbytes).read();
        let counted = (ffi::lua_gc(l, ffi::LUA_GCCOUNT, 0) as usize) << 10
            | ffi::lua_gc(l, ffi::LUA_GCCOUNTB, 0) as usize;
        let confirmed = frealloc == alloc as *const c_void && g_ud == ud && total == counted;
        confirmed.then(|| std::ptr::addr_of!((*g).gc_threshold).read() == MAX_LUMEM)
    }
}

/// `lua_cpcall` body for `CollectorHold`: collector steps worth the kilobytes in the light
/// userdata argument (what native calls allocated while the collector was held).
///
/// # Safety
///
/// Called by `lua_cpcall` only, on a live state with its light userdata argument.
#[cfg(any(feature = "lua51", feature = "luajit"))]
unsafe extern "C-unwind" fn collector_step(l: *mut mlua::ffi::lua_State) -> std::ffi::c_int {
    let kb = mlua::ffi::lua_touserdata(l, 1) as usize;
    mlua::ffi::lua_gc(
        l,
        mlua::ffi::LUA_GCSTEP,
        kb.min(i32::MAX as usize) as std::ffi::c_int,
    );
    0
}

/// The `rpiv_todo.core` table.
pub fn exports(lua: &Lua) -> mlua::Result<Table> {
    let ctx = Ctx::new(lua)?;
    lua.set_app_data(ctx.clone());
    #[cfg(any(feature = "lua51", feature = "luajit"))]
    lua.set_app_data(CollectorDebt::default());
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
                    LuaValue::Table(to_lua::state(lua, &ctx.array_mt, &s)?)
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
    let replay = native_replay(lua)?;
    // LuaJIT compiles a walk written in Lua; its C API cannot keep up (from_lua::WALK_IN_LUA).
    #[cfg(feature = "luajit")]
    let replay = from_lua::walk_in_lua(lua, replay)?;
    core.set("replay", replay)?;
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
    Ok(core)
}

/// `core.replay` as C runs it: what every flavour but LuaJIT exports, and what LuaJIT's
/// walk in Lua hands JSON text, misuse and the snapshots it does not copy itself.
pub(crate) fn native_replay(lua: &Lua) -> mlua::Result<mlua::Function> {
    lua.create_function(|lua, entries: LuaValue| {
        guarded(lua, "replay", || {
            let ctx = Ctx::get(lua)?;
            replay(lua, &ctx, &entries)
        })
    })
}

/// `core.replay(entries)`: entries as a Lua array or as JSON text, scanned newest first.
fn replay(lua: &Lua, ctx: &Ctx, entries: &LuaValue) -> mlua::Result<Table> {
    if let LuaValue::Table(t) = entries {
        if let Some(state) = from_lua::raw::replay(lua, ctx, t)? {
            return Ok(state);
        }
    }
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
    to_lua::state(lua, &ctx.array_mt, &state)
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

/// Tests: a Lua function `(a, b)` that compares two values deeply (same keys; strings and
/// other values raw-equal, numbers equal bit for bit so -0 differs from 0; tables within,
/// with the same metatable) and gives nil when they are the same, else where they differ.
#[cfg(test)]
pub(crate) fn same_tables(lua: &Lua) -> mlua::Function {
    lua.load(
        r#"
        local function same(a, b, path)
          if type(a) ~= type(b) then
            return path .. ": " .. type(a) .. " vs " .. type(b)
          end
          if type(a) == "number" then
            if a ~= b or 1 / a ~= 1 / b then
              return path .. ": " .. tostring(a) .. " vs " .. tostring(b)
            end
          elseif type(a) == "table" then
            if getmetatable(a) ~= getmetatable(b) then
              return path .. ": metatables differ"
            end
            for k, v in pairs(a) do
              local bad = same(v, rawget(b, k), path .. "." .. tostring(k))
              if bad then
                return bad
              end
            end
            for k in pairs(b) do
              if rawget(a, k) == nil then
                return path .. "." .. tostring(k) .. ": only in the second"
              end
            end
          elseif not rawequal(a, b) then
            return path .. ": " .. tostring(a) .. " vs " .. tostring(b)
          end
        end
        return function(a, b)
          return same(a, b, "state")
        end
        "#,
    )
    .eval()
    .expect("the comparer loads")
}
