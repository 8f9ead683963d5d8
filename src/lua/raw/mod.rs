//! The one way into the raw C API. This folder holds every `unsafe` of the crate, one
//! concern a file, each with the safety rules it keeps in its own docs:
//! - `exec`: the protected call every raw block runs in;
//! - `read`: the one reader of Lua values;
//! - `snapshot`: the native copy of a replayed snapshot;
//! - `write`: the one writer of result tables;
//! - `collector`: the collector held while native code runs;
//! - `export`: every native function behind one C entry; `hook`: debug hooks around it.
//!
//! This file keeps what they share: the constants the raw reads compare with (`Const`) and
//! the small readers of one stack slot.
//!
//! The rules every raw block keeps:
//!
//! - **No panic crosses a C frame.** The body runs inside `lua_pcall` (mlua's
//!   `exec_raw`), so a Rust panic there would unwind through Lua's C frames: undefined
//!   behaviour, in practice an abort, or a Lua state whose next error jumps into a dead
//!   frame. On PUC Lua `exec` catches it inside the protected call (the pattern of mlua's
//!   own `Table::for_each`) and raises it as an ordinary Lua error once control is back in
//!   Rust. On LuaJIT nothing can be caught there (see `exec`): the bodies must not panic,
//!   except the reader's, which cannot raise and catches its own (see `read`).
//! - **Nothing owned lives across a call that can raise.** On PUC Lua an error is a
//!   `longjmp` to the protected call: every Rust frame in between is left without running a
//!   destructor. So a body keeps what it owns (vectors, strings, JSON values) in places
//!   outside the closure (`&mut` captures), moves a value there before the next call that
//!   allocates in Lua (`lua_createtable`, `lua_pushlstring`, `lua_rawset` and friends), and
//!   holds only borrows and `Copy` values across such calls.
//! - **Nothing is sized from a table's length.** `lua_rawlen` (and `#`) give a border,
//!   which for keys at powers of two is 2^28 with 29 entries there. Keys are counted with
//!   `lua_next` before anything is reserved.

use std::ffi::c_int;

use mlua::ffi;
use serde_json::Value;

mod collector;
mod exec;
pub mod export;
pub mod hook;
mod read;
mod snapshot;
pub mod write;

#[cfg(any(feature = "lua51", feature = "luajit"))]
pub(super) use collector::CollectorDebt;
pub(super) use collector::CollectorHold;
pub use exec::exec;
use read::number;
pub use read::{read, Fault, Step};
pub use snapshot::snapshot_table;

/// How deep a conversion may go before it stops: as deep as `serde_json` parses JSON text,
/// so that a table nested too deeply for the schema (`MAX_NESTING`, checked in the core on
/// both paths in the same order) still converts and a cyclic table still ends.
pub const MAX_DEPTH: usize = 128;
/// What an empty table means where it is found.
#[derive(Clone, Copy, PartialEq)]
pub enum Empty {
    Array,
    Object,
}

/// The names under which the tool's id arrays arrive: an empty table there is `[]`.
pub const ARRAY_FIELDS: [&str; 3] = ["blockedBy", "addBlockedBy", "removeBlockedBy"];

/// A raw Lua state pointer, valid inside an `exec` body.
pub type L = *mut ffi::lua_State;

/// The slots of `Ctx::consts`: Lua values the raw reads compare with, made once per state.
#[derive(Clone, Copy)]
#[repr(i32)]
// The status slots are read by position (`InternedKeys`, `write::KeySlots`).
#[allow(dead_code)]
pub enum Const {
    ArrayMt = 1,
    SerdeMt,
    /// `vim.NIL`, or `false` outside Neovim.
    VimNil,
    JsonType,
    Array,
    // A task's fields and the status names (`crate::task`).
    Id,
    Subject,
    Description,
    ActiveForm,
    Status,
    BlockedBy,
    Owner,
    Metadata,
    Pending,
    InProgress,
    Completed,
    Deleted,
    // The overlay's row views and counts (`super::overlay`, `write::ViewKeys`).
    Task,
    Total,
}

impl Const {
    /// The strings after the first three slots, in order.
    pub const STRINGS: [&'static str; 16] = {
        use crate::task::FIELDS;
        [
            "__jsontype",
            "array",
            FIELDS[0],
            FIELDS[1],
            FIELDS[2],
            FIELDS[3],
            FIELDS[4],
            FIELDS[5],
            FIELDS[6],
            FIELDS[7],
            "pending",
            "in_progress",
            "completed",
            "deleted",
            "task",
            "total",
        ]
    };
}

/// The key at `idx` as an array index in `1..=n`.
///
/// # Safety
///
/// Only inside an `exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules above).
unsafe fn index(l: L, idx: c_int, n: usize) -> Option<usize> {
    if ffi::lua_type(l, idx) != ffi::LUA_TNUMBER {
        return None;
    }
    let k = ffi::lua_tonumber(l, idx);
    (k.fract() == 0.0 && k >= 1.0 && k <= n as f64).then_some(k as usize)
}

/// A string's bytes as UTF-8; the slice lives as long as the string is reachable.
///
/// # Safety
///
/// Only inside an `exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules above).
pub unsafe fn str<'a>(l: L, idx: c_int) -> Option<&'a str> {
    let mut len = 0usize;
    let p = ffi::lua_tolstring(l, idx, &mut len).cast::<u8>();
    let bytes = std::slice::from_raw_parts(p, len);
    // ASCII first: inlined, it is a few word reads for a short string where `from_utf8`
    // is a call that costs as much as a C API call (about a fifth of a snapshot's copy).
    if bytes.is_ascii() {
        // SAFETY: every ASCII byte sequence is valid UTF-8 (checked on the line above);
        // `from_utf8` would only check it again.
        return Some(std::str::from_utf8_unchecked(bytes));
    }
    std::str::from_utf8(bytes).ok()
}

/// A number as mlua reads it: Lua 5.4 keeps its integer subtype; LuaJIT and 5.1
/// numbers with an exact `i64` value are integers.
///
/// # Safety
///
/// Only inside an `exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules above).
pub unsafe fn num(l: L, idx: c_int) -> Option<Value> {
    // Not `lua_tonumber` alone: it reads "1" as 1 and anything else as 0.
    if ffi::lua_type(l, idx) != ffi::LUA_TNUMBER {
        return None;
    }
    #[cfg(feature = "lua54")]
    {
        if ffi::lua_isinteger(l, idx) != 0 {
            return Some(Value::from(ffi::lua_tointeger(l, idx)));
        }
        number(ffi::lua_tonumber(l, idx))
    }
    #[cfg(not(feature = "lua54"))]
    {
        let n = ffi::lua_tonumber(l, idx);
        // [-2^63, 2^63): the doubles that convert to an i64 without saturating.
        if (i64::MIN as f64..-(i64::MIN as f64)).contains(&n) {
            let i = n as i64;
            if (i as f64).to_bits() == n.to_bits() {
                return Some(Value::from(i));
            }
        }
        number(n)
    }
}

/// # Safety
///
/// Only inside an `exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules above).
unsafe fn is_vim_nil(l: L, consts: c_int, idx: c_int) -> bool {
    ffi::lua_rawgeti(l, consts, Const::VimNil as _);
    let yes = ffi::lua_rawequal(l, idx, -1) != 0;
    ffi::lua_settop(l, -2);
    yes
}

/// An empty table marked as an array by us, cjson, mlua's serde or dkjson.
///
/// # Safety
///
/// Only inside an `exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules above).
unsafe fn is_array_marked(l: L, consts: c_int, idx: c_int) -> bool {
    if ffi::lua_getmetatable(l, idx) == 0 {
        return false;
    }
    let mt = ffi::lua_gettop(l);
    let mut yes = false;
    for k in [Const::ArrayMt, Const::SerdeMt] {
        ffi::lua_rawgeti(l, consts, k as _);
        yes = yes || ffi::lua_rawequal(l, mt, -1) != 0;
        ffi::lua_settop(l, -2);
    }
    if !yes {
        ffi::lua_rawgeti(l, consts, Const::JsonType as _);
        ffi::lua_rawget(l, mt);
        ffi::lua_rawgeti(l, consts, Const::Array as _);
        yes = ffi::lua_rawequal(l, -1, -2) != 0;
    }
    ffi::lua_settop(l, mt.saturating_sub(1));
    yes
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;

    thread_local! {
        /// Make the next `exec` body panic (the regression test of fault 2).
        pub static PANIC_NEXT: Cell<bool> = const { Cell::new(false) };
        /// Make the reader panic at the next value it reads.
        pub static PANIC_IN_READ: Cell<bool> = const { Cell::new(false) };
    }

    /// A panic in the reader is caught on every flavour, LuaJIT included (the reader
    /// cannot raise once its stack room is reserved): the call answers in-band and the
    /// state lives on.
    #[test]
    fn a_panic_in_the_reader_is_an_in_band_error_on_every_flavour() {
        let lua = mlua::Lua::new();
        let core = crate::lua::exports(&lua).unwrap();
        lua.globals().set("core", core).unwrap();
        PANIC_IN_READ.with(|p| p.set(true));
        let text: String = lua
            .load("return core.apply(nil, { action = 'create', subject = 'a' }).content[1].text")
            .eval()
            .unwrap();
        assert_eq!(
            text,
            "Error: arguments: expected a readable value, got an internal error (a bug; please report it)"
        );
        let after: String = lua
            .load("return core.apply(nil, { action = 'create', subject = 'a' }).content[1].text")
            .eval()
            .unwrap();
        assert_eq!(after, "Created #1: a (pending)");
    }
}
