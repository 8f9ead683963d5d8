//! `CollectorHold`: the garbage collector held while native code runs (LuaJIT and Lua 5.1),
//! so that no finalizer runs, and raises, inside a native call.
//!
//! Rules it keeps:
//! - **The collector's state is restored**: a collector the host stopped stays stopped;
//!   one held back by the interpreter (a finalizer running) stays held back.
//! - **Nothing it does can raise**: `LUA_GCSTOP`, `LUA_GCRESTART` and `LUA_GCCOUNT`
//!   neither allocate nor run finalizers; the deferred collector step that pays what the
//!   call allocated (`collector_step`) runs inside `lua_cpcall`, so a finalizer's error
//!   there is caught and dropped instead of unwinding through Rust.
//! - **Lua 5.1's global state is read only once confirmed** (`puc51`): the two struct
//!   heads are read in place, and only when the allocator, its userdata and the byte
//!   count they hold match what the public API reports; on any other build the hold
//!   falls back to stop and restart.
//! - The state outlives the hold: the LuaJIT hold keeps the running thread, the 5.1 hold is
//!   taken by `export::entry` for the call it wraps.

use mlua::Lua;

#[cfg(feature = "lua51")]
use super::{hook, L};
#[cfg(feature = "lua51")]
use mlua::ffi;

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
///
/// **Lua 5.1.** The hold is taken by `export::entry`, around the whole call (mlua's
/// reading of the arguments and conversion of the results included: a finalizer run
/// there could call mlua inside one of its `lua_cpcall` windows, see `export`). 5.1 has no
/// API that says whether the collector runs, nor one that sets its threshold, so both are
/// read from the global state and the threshold is written back as it was
/// (`puc51`): a collector the host stopped stays stopped, one that 5.1 holds back while a
/// finalizer runs (its threshold at twice the heap) stays held back, and a running one
/// owes, at its next step, what the call allocated (5.1 counts every byte against the
/// threshold, held or not). On a build whose global state cannot be confirmed the hold
/// stops and restarts the collector.
///
/// **LuaJIT.** What native calls allocate under the hold is paid to the collector later
/// (a protected step, see `Drop`): a stopped collector never collects what Lua allocated
/// meanwhile, and a host looping over native calls alone (`list:apply` in a `for` loop)
/// would grow its heap without bound. The debt is paid once it reaches half the heap,
/// like the collector's own pause: paying every call would keep the collector from ever
/// pausing. LuaJIT restarts the collector as after a finished cycle (`LUA_GCRESTART` with
/// -1: next cycle once the heap doubles) and counts what Lua allocated between native
/// calls into the debt, so the debt paces the collector. A plain restart made it due at
/// once: every native call pulled a resting collector into a new cycle, and a panel render
/// paid about as much collecting as drawing. LuaJIT holds the collector itself while a
/// finalizer runs (its threshold at `LJ_MAX_MEM`), which `LUA_GCISRUNNING` reports as
/// stopped: a call from a finalizer leaves it so.
pub(in crate::lua) struct CollectorHold {
    #[cfg(feature = "luajit")]
    held: Option<Held>,
    #[cfg(feature = "lua51")]
    held: Option<Held51>,
}

#[cfg(feature = "luajit")]
struct Held {
    lua: Lua,
    thread: mlua::Thread,
    kb_before: std::ffi::c_int,
}

/// A 5.1 hold: the running state, and the threshold to write back (`None`: the global
/// state could not be confirmed, restart instead).
#[cfg(feature = "lua51")]
struct Held51 {
    l: L,
    threshold: Option<usize>,
    /// The heap's size in kilobytes when the hold was taken.
    kb_before: std::ffi::c_int,
}

#[cfg(feature = "lua51")]
thread_local! {
    /// What native calls allocated under 5.1 holds and the collector has not been paid
    /// for yet, in kilobytes, with the global state it is owed in (one per thread: a state
    /// runs on one thread).
    static OWED51: std::cell::Cell<(usize, std::ffi::c_int)> = const { std::cell::Cell::new((0, 0)) };
}

/// Kilobytes allocated and not yet paid for, per state (see `CollectorHold`), and the
/// heap's size when the last native call ended (LuaJIT; kept in every flavour's app data
/// so that `exports` is the same for all).
#[cfg(any(feature = "lua51", feature = "luajit"))]
#[derive(Default)]
pub(in crate::lua) struct CollectorDebt {
    #[cfg_attr(not(feature = "luajit"), allow(dead_code))]
    owed: std::cell::Cell<std::ffi::c_int>,
    #[cfg_attr(not(feature = "luajit"), allow(dead_code))]
    last_kb: std::cell::Cell<Option<std::ffi::c_int>>,
}

impl CollectorHold {
    #[cfg(feature = "luajit")]
    pub(in crate::lua) fn new(lua: &Lua) -> CollectorHold {
        use mlua::ffi;
        /// `lua_gc` option of LuaJIT 2.1 and Lua 5.2+.
        const LUA_GCISRUNNING: std::ffi::c_int = 9;
        let thread = lua.current_thread();
        // SAFETY: `thread` keeps the state alive; neither option allocates or raises.
        let (running, kb_before) = unsafe {
            let l = thread.state();
            let running = ffi::lua_gc(l, LUA_GCISRUNNING, 0) != 0;
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

    /// On 5.1 `export::entry` holds the collector around every call: a call inside
    /// another (`guarded` inside `entry`, which has entered the call already) holds
    /// nothing more. Only a call that came some other way takes the hold here.
    #[cfg(feature = "lua51")]
    pub(in crate::lua) fn new(lua: &Lua) -> CollectorHold {
        if hook::depth() > 1 {
            return CollectorHold { held: None };
        }
        // SAFETY: `lua.state()` is the state running the call, which outlives the hold
        // (`guarded` drops it before returning).
        unsafe { CollectorHold::of_state(lua.state()) }
    }

    /// Hold the collector of `l` (see the type's docs).
    ///
    /// # Safety
    ///
    /// `l` is the running state, alive until the hold is dropped.
    #[cfg(feature = "lua51")]
    pub(super) unsafe fn of_state(l: L) -> CollectorHold {
        // `puc51::threshold` only reads; STOP neither allocates nor raises.
        let threshold = puc51::threshold(l);
        let running = threshold != Some(puc51::MAX_LUMEM);
        // COUNT neither allocates nor raises.
        let kb_before = ffi::lua_gc(l, ffi::LUA_GCCOUNT, 0);
        if running {
            ffi::lua_gc(l, ffi::LUA_GCSTOP, 0);
        }
        CollectorHold {
            held: running.then_some(Held51 {
                l,
                threshold,
                kb_before,
            }),
        }
    }

    #[cfg(not(any(feature = "lua51", feature = "luajit")))]
    pub(in crate::lua) fn new(_lua: &Lua) -> CollectorHold {
        CollectorHold {}
    }
}

#[cfg(feature = "lua51")]
impl Drop for CollectorHold {
    fn drop(&mut self) {
        let Some(held) = &self.held else {
            return;
        };
        // SAFETY: `l` is alive (see `of_state`). The threshold is written back into the
        // global state `puc51::threshold` confirmed and read it from when the hold was
        // taken; RESTART neither allocates nor raises. No collector step runs here.
        unsafe {
            match held.threshold {
                Some(t) => puc51::set_threshold(held.l, t),
                None => {
                    ffi::lua_gc(held.l, ffi::LUA_GCRESTART, 0);
                }
            }
            // What the call allocated is owed to the collector: Lua code between native
            // calls allocates too little for 5.1's own steps to keep up (a loop of calls
            // would grow the heap without bound). Paid in a protected step once it reaches
            // half the heap, never while 5.1 runs a finalizer (`puc51::finalizing`): that
            // would nest finalizers.
            let kb = ffi::lua_gc(held.l, ffi::LUA_GCCOUNT, 0);
            let native = kb.saturating_sub(held.kb_before).max(0);
            let g = puc51::global_id(held.l);
            let owed = OWED51.with(|c| {
                let (id, owed) = c.get();
                let owed = if id == g { owed } else { 0 }.saturating_add(native);
                c.set((g, owed));
                owed
            });
            if owed < kb / 2 || puc51::finalizing(held.l) {
                return;
            }
            OWED51.with(|c| c.set((g, 0)));
            if ffi::lua_cpcall(held.l, collector_step, owed as usize as *mut _) != 0 {
                ffi::lua_pop(held.l, 1);
            }
        }
    }
}

#[cfg(feature = "luajit")]
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
            ffi::lua_gc(l, ffi::LUA_GCRESTART, -1);
            let owed = {
                let Some(debt) = held.lua.app_data_ref::<CollectorDebt>() else {
                    return;
                };
                let native = kb.saturating_sub(held.kb_before).max(0);
                // What Lua code allocated since the last native call ended (the restart
                // above leaves the pacing to this debt).
                let between = debt
                    .last_kb
                    .get()
                    .map_or(0, |last| held.kb_before.saturating_sub(last).max(0));
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

/// PUC Lua 5.1's collector threshold, read and written in the global state. 5.1 has no
/// API for it: `LUA_GCSTOP` sets the global state's `GCthreshold` to `MAX_LUMEM`,
/// `LUA_GCRESTART` to the heap's size, and a running finalizer holds the collector back by
/// setting it to twice the heap's size (`GCTM`, lgc.c); nothing reads it back. The global
/// state's layout is the same in every 5.1 release (5.1.0 to 5.1.5), and it is used only
/// after it is confirmed: the allocator and its userdata must be what `lua_getallocf`
/// answers and the heap's size what `LUA_GCCOUNT`/`LUA_GCCOUNTB` answer. `None` when they
/// are not (an unknown build).
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
        l_g: *mut Global,
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
    pub const MAX_LUMEM: usize = usize::MAX - 2;

    /// The global state of `l`, once confirmed (see the module docs).
    ///
    /// # Safety
    ///
    /// `l` is a live PUC Lua 5.1 state (the `lua51` feature links nothing else). Both
    /// structs' heads are read in place; the reads stay inside the two objects (their full
    /// C definitions are larger than these heads).
    unsafe fn global(l: *mut ffi::lua_State) -> Option<*mut Global> {
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
        confirmed.then_some(g)
    }

    /// The collector's threshold, `None` on an unknown build.
    ///
    /// # Safety
    ///
    /// As `global`.
    pub unsafe fn threshold(l: *mut ffi::lua_State) -> Option<usize> {
        let g = global(l)?;
        Some(std::ptr::addr_of!((*g).gc_threshold).read())
    }

    /// An identity of `l`'s global state (its address; 0 on an unknown build).
    ///
    /// # Safety
    ///
    /// As `global`.
    pub unsafe fn global_id(l: *mut ffi::lua_State) -> usize {
        global(l).map_or(0, |g| g as usize)
    }

    /// `GCSfinalize` (lgc.h): the collector's state while it runs finalizers.
    const GCS_FINALIZE: u8 = 4;

    /// Is 5.1 running finalizers now (or is the build unknown, when nothing is assumed)?
    ///
    /// # Safety
    ///
    /// As `global`.
    pub unsafe fn finalizing(l: *mut ffi::lua_State) -> bool {
        global(l).is_none_or(|g| std::ptr::addr_of!((*g).gcstate).read() == GCS_FINALIZE)
    }

    /// Set the collector's threshold to `t`, as `LUA_GCSTOP` and `LUA_GCRESTART` do.
    ///
    /// # Safety
    ///
    /// As `global`, and `threshold` answered `Some` for this state: the one field is
    /// written in place (a `size_t` that 5.1 reads only when it allocates, which nothing
    /// does meanwhile: the caller runs on this state's only thread of control).
    pub unsafe fn set_threshold(l: *mut ffi::lua_State, t: usize) {
        if let Some(g) = global(l) {
            std::ptr::addr_of_mut!((*g).gc_threshold).write(t);
        }
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
