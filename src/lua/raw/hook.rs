//! Debug hooks during a call of the module: a hook that calls the module while one of its
//! calls runs is refused with a Lua error, in every flavour.
//!
//! Why: mlua 0.12.2 on Lua 5.1 and LuaJIT, in a state it did not create (a loadable
//! module's), stores the C function a protected call is about to run under one registry
//! key inside `lua_cpcall`, and reads it back after the `lua_cpcall` returns
//! (`push_protected_cfunctions`). Lua 5.1 runs the return hook between the two; a hook
//! that calls any mlua function there stores that function's own under the key, and the
//! outer call then runs another closure type's code on its data (a SIGSEGV, or a corrupt
//! state). `tests/upstream/mlua_hook51` reproduces it with mlua alone.
//!
//! How: while the outermost call of the module runs on a thread that has a hook, the hook
//! is wrapped (`relay`): it still sees every event, and any call of the module it makes is
//! refused (`export::entry`, and `Entered::enter` for a call that came another way). The
//! wrap is taken by `export::entry`, before mlua reads the call's arguments, and lasts
//! until mlua has converted its results or its error: mlua's protected calls there open
//! the same window. On Lua 5.1 and LuaJIT the return events of C functions
//! (mlua's own protected calls, the window above) are not passed on while the module runs:
//! there a hook could crash the host without calling this module at all (`tostring` of
//! any mlua error does a protected call). The hook is put back when the call ends, unless
//! the hook itself set another meanwhile.

use std::cell::{Cell, RefCell};

use mlua::{ffi, Lua};

use super::L;

thread_local! {
    /// Calls of the module running on this thread (nested ones included).
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    /// Hooks running under `relay`. A hook that raised leaves it set (a `longjmp` or an
    /// unwind skips the decrement): it is cleared when the outermost call ends.
    static IN_HOOK: Cell<bool> = const { Cell::new(false) };
    /// The hooks `relay` wraps, by state.
    static WRAPPED: RefCell<Vec<(usize, ffi::lua_Hook)>> = const { RefCell::new(Vec::new()) };
}

/// A call of the module under way; see the module docs.
pub struct Entered {
    /// The state whose hook was wrapped (outermost call only).
    wrapped: Option<Wrapped>,
}

/// What keeps the state whose hook was wrapped alive until the hook is put back.
enum Wrapped {
    /// A handle (`guarded`, whose caller is mlua's).
    Thread(mlua::Thread),
    /// The running state itself, for an `Entered` that lives inside the C function that
    /// runs on it (`export::entry`): a running state cannot be collected.
    Running(L),
}

impl Wrapped {
    fn state(&self) -> L {
        match self {
            Wrapped::Thread(t) => t.state(),
            Wrapped::Running(l) => *l,
        }
    }
}

/// Calls of the module under way on this thread, the one running included once it has
/// entered.
#[cfg(feature = "lua51")]
pub fn depth() -> usize {
    DEPTH.get()
}

/// Whether a call of the module made now is a hook's, made while another call runs (the
/// call is then refused: see `Entered::enter`).
pub fn refusing() -> bool {
    DEPTH.get() > 0 && IN_HOOK.get()
}

impl Entered {
    /// Enter a call of the module named `func`: an error when a debug hook makes it while
    /// another call runs.
    pub fn enter(lua: &Lua, func: &str) -> mlua::Result<Entered> {
        let depth = DEPTH.get();
        if depth > 0 && IN_HOOK.get() {
            return Err(mlua::Error::runtime(format!(
                "rpiv_todo.core.{func}: called from a debug hook while another call of the module runs (refused: it would corrupt the Lua state)"
            )));
        }
        DEPTH.set(depth.saturating_add(1));
        let mut entered = Entered { wrapped: None };
        // The running state's pointer (no `Thread` handle: that would cost a reference on
        // every call, and most calls run without a hook).
        // SAFETY: `lua.state()` is the state running this call, alive for its duration.
        if depth == 0 && unsafe { wrap(lua.state()) } {
            // The thread is held until the hook is put back in `drop`.
            entered.wrapped = Some(Wrapped::Thread(lua.current_thread()));
        }
        Ok(entered)
    }

    /// Enter a call on the running state `l` from `export::entry`, which has checked
    /// `refusing` already.
    ///
    /// # Safety
    ///
    /// `l` is the running state, and the `Entered` is dropped before the C function
    /// running on it returns.
    pub unsafe fn raw(l: L) -> Entered {
        let depth = DEPTH.get();
        DEPTH.set(depth.saturating_add(1));
        let wrapped = depth == 0 && wrap(l);
        Entered {
            wrapped: wrapped.then_some(Wrapped::Running(l)),
        }
    }
}

/// Put `relay` in place of the hook of `l`, if it has one; whether it did.
///
/// # Safety
///
/// `l` is a live state. Reading and setting a hook neither allocates nor raises, and may be
/// done at any time (lua_sethook's manual).
unsafe fn wrap(l: L) -> bool {
    match ffi::lua_gethook(l) {
        Some(hook) if !is_relay(hook) => {
            WRAPPED.with_borrow_mut(|w| w.push((l as usize, hook)));
            ffi::lua_sethook(
                l,
                Some(relay),
                ffi::lua_gethookmask(l),
                ffi::lua_gethookcount(l),
            );
            true
        }
        _ => false,
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        let depth = DEPTH.get().saturating_sub(1);
        DEPTH.set(depth);
        if depth == 0 {
            IN_HOOK.set(false);
        }
        let Some(wrapped) = &self.wrapped else {
            return;
        };
        let l = wrapped.state();
        let hook = WRAPPED.with_borrow_mut(|w| {
            let at = w.iter().rposition(|(s, _)| *s == l as usize)?;
            Some(w.remove(at).1)
        });
        // SAFETY: as in `enter`. The hook is put back only when `relay` is still the
        // hook: a hook that set another (or none) meanwhile keeps its choice.
        unsafe {
            if let (Some(hook), Some(now)) = (hook, ffi::lua_gethook(l)) {
                if is_relay(now) {
                    ffi::lua_sethook(
                        l,
                        Some(hook),
                        ffi::lua_gethookmask(l),
                        ffi::lua_gethookcount(l),
                    );
                }
            }
        }
    }
}

fn is_relay(hook: ffi::lua_Hook) -> bool {
    hook as *const () == relay as ffi::lua_Hook as *const ()
}

/// The hook while the module runs: the wrapped hook, marked as running (see the module
/// docs for the events held back on Lua 5.1 and LuaJIT).
///
/// # Safety
///
/// Called by Lua as a hook, with the state and the event's `lua_Debug`.
unsafe extern "C-unwind" fn relay(l: L, ar: *mut ffi::lua_Debug) {
    let Some(hook) = WRAPPED.with_borrow(|w| {
        w.iter()
            .rev()
            .find(|(s, _)| *s == l as usize)
            .map(|(_, h)| *h)
    }) else {
        return;
    };
    #[cfg(any(feature = "lua51", feature = "luajit"))]
    {
        // 1: return, 4: tail return (5.1's LUA_HOOKTAILRET). A tail return is of a Lua
        // function, which the hook may see; a return is held back when it is a C
        // function's (`what` is "C").
        if (*ar).event == ffi::LUA_HOOKRET
            && ffi::lua_getinfo(l, c"S".as_ptr(), ar) != 0
            && !(*ar).what.is_null()
            && *(*ar).what == b'C' as std::ffi::c_char
        {
            return;
        }
    }
    let outer = IN_HOOK.replace(true);
    hook(l, ar);
    IN_HOOK.set(outer);
}
