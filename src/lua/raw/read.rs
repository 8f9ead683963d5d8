//! `read`: the one reader of Lua values, a call's arguments or a replayed entry into JSON.
//!
//! Rules it keeps:
//! - **It cannot raise once started.** The whole room it may need (`READ_ROOM`: three slots
//!   per level, `MAX_DEPTH` levels) is reserved with one `lua_checkstack` before anything
//!   is owned; after that it only reads (`lua_next`, `lua_rawget`, `lua_tolstring` of a
//!   string) and pushes into reserved room. Nothing allocates in Lua, so no error and no
//!   collector step (no finalizer) can interrupt it, and the table addresses the budget
//!   keeps stay valid for the whole read.
//! - **So it may catch its own panics on every flavour**, LuaJIT included: no LuaJIT
//!   exception can meet its `catch_unwind`. A panic is an in-band fault.
//! - **Bounded.** Depth by `MAX_DEPTH` (a cyclic table ends), values by the `Budget`
//!   (`limits::MAX_READ_VALUES`, and `MAX_REPEATED_VALUES` for tables shared many times).
//! - What it owns (the JSON value) lands in a place outside the protected call.

use std::ffi::{c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use mlua::{ffi, Lua, Value as LuaValue};
use serde_json::{Map, Number, Value};

use super::{
    exec, index, is_array_marked, is_vim_nil, num, str, Empty, ARRAY_FIELDS, L, MAX_DEPTH,
};
use crate::lua::Ctx;
use crate::params::{MAX_SAFE_INTEGER, TOO_DEEP};

/// Why a value could not be read, and where: the steps from the value read down to the
/// fault, innermost first. They are added on the way out of a failed read, so a read that
/// succeeds pays nothing for them.
#[derive(Debug)]
pub struct Fault {
    pub steps: Vec<Step>,
    pub expected: &'static str,
    pub got: String,
}

/// One step into a table: a string key or an array index.
#[derive(Debug)]
pub enum Step {
    Key(String),
    Index(usize),
}

impl Fault {
    fn new(expected: &'static str, got: impl Into<String>) -> Fault {
        Fault {
            steps: Vec::new(),
            expected,
            got: got.into(),
        }
    }

    fn at(mut self, step: Step) -> Fault {
        self.steps.push(step);
        self
    }
}

/// Stack slots inside `read`'s protected call: the per-state constants (see
/// `Ctx::consts`) and the value.
const CONSTS: c_int = 1;
const VALUE: c_int = 2;

/// Stack room one level of a table read needs (a key, its value, an item, and the
/// array-mark test's three), reserved once before anything is owned: `lua_checkstack`
/// grows the stack, and growing can raise for memory on LuaJIT and 5.1.
const SLOTS_PER_LEVEL: c_int = 3;

/// The room a whole read needs: `SLOTS_PER_LEVEL` for each level it may go down.
pub(super) const READ_ROOM: c_int = (MAX_DEPTH as c_int + 2) * SLOTS_PER_LEVEL;

/// The one reader of Lua values: `v` as a JSON value, or the fault that stopped it. `top`:
/// `v` is a call's arguments, whose id arrays (`ARRAY_FIELDS`) read `{}` as `[]`.
pub fn read(lua: &Lua, ctx: &Ctx, v: &LuaValue, empty: Empty, top: bool) -> Result<Value, Fault> {
    let mut out = Err(Fault::new(TOO_DEEP, "no room on the Lua stack"));
    // SAFETY: the closure only reads: after the one `lua_checkstack` (made before anything
    // is owned) no call in it allocates in Lua, so no Lua error and no collector step can
    // interrupt it; what it owns lands in `out`, out here. It leaves the stack empty.
    let done: mlua::Result<()> = unsafe {
        exec(lua, (&ctx.consts, v), |l| {
            if ffi::lua_checkstack(l, READ_ROOM) != 0 {
                // Past the reservation nothing here can raise (raw reads, pushes into
                // reserved room), so a panic can be caught on every flavour, LuaJIT too:
                // no LuaJIT error can meet this `catch_unwind`.
                let read = || value(l, CONSTS, VALUE, 0, empty, top, &mut Budget::new());
                out = catch_unwind(AssertUnwindSafe(read)).unwrap_or_else(|_| {
                    Err(Fault::new(
                        "a readable value",
                        "an internal error (a bug; please report it)",
                    ))
                });
            }
            ffi::lua_settop(l, 0);
        })
    };
    done.map_err(|e| Fault::new("a readable value", e.to_string()))?;
    out
}

/// What one read may build (`limits::MAX_READ_VALUES` values in all, and
/// `limits::MAX_REPEATED_VALUES` of them copied again from a table the read had already
/// copied), and which tables it has read. A few tables shared many times spell a great
/// many values (`t = {}; for i = 1, 40 do t = { t, t } end` is 41 tables and 2^41
/// values): counted here, such a value is refused after a few thousand values instead of
/// exhausting memory. Shared tables that repeat little (one `blockedBy` table in two
/// tasks) read as before.
pub(super) struct Budget {
    left: usize,
    repeats_left: usize,
    /// Tables read so far, by address: no table moves or dies while a read runs (the read
    /// allocates nothing in Lua, so the collector cannot step).
    seen: std::collections::HashSet<usize, BuildPtrHash>,
    /// The table being read is a repeat, or inside one.
    pub(super) repeating: bool,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget::new()
    }
}

impl Budget {
    pub(super) fn new() -> Budget {
        Budget {
            left: crate::limits::MAX_READ_VALUES,
            repeats_left: crate::limits::MAX_REPEATED_VALUES,
            seen: Default::default(),
            repeating: false,
        }
    }

    /// Count one value about to be built.
    fn take(&mut self) -> Result<(), Fault> {
        self.take_n(1)
    }

    /// Count `n` values about to be built.
    pub(super) fn take_n(&mut self, n: usize) -> Result<(), Fault> {
        self.left = self
            .left
            .checked_sub(n)
            .ok_or_else(|| Fault::new(crate::limits::READ_VALUES_EXPECTED, "more values"))?;
        if self.repeating {
            self.repeats_left = self.repeats_left.checked_sub(n).ok_or_else(|| {
                Fault::new(
                    crate::limits::REPEATED_VALUES_EXPECTED,
                    "more (a table shared many times)",
                )
            })?;
        }
        Ok(())
    }

    /// Whether the table at address `p` is read for the first time in this read.
    pub(super) fn first(&mut self, p: *const std::ffi::c_void) -> bool {
        self.seen.insert(p as usize)
    }
}

/// A hasher for table addresses (the budget's set): one multiplication, no SipHash.
#[derive(Default, Clone, Copy)]
pub(super) struct BuildPtrHash;

impl std::hash::BuildHasher for BuildPtrHash {
    type Hasher = PtrHash;
    fn build_hasher(&self) -> PtrHash {
        PtrHash(0)
    }
}

pub(super) struct PtrHash(u64);

impl std::hash::Hasher for PtrHash {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        // Addresses are aligned: the low bits say little, so they are mixed upwards.
        self.0 = (n as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(26);
    }
}

/// The value at absolute stack index `idx`.
///
/// # Safety
///
/// Inside an `exec` body: slot `consts` holds the consts table, `idx` a live slot, and the
/// stack has room for what the levels below `depth` need (`SLOTS_PER_LEVEL` each).
pub(super) unsafe fn value(
    l: L,
    consts: c_int,
    idx: c_int,
    depth: usize,
    empty: Empty,
    top: bool,
    budget: &mut Budget,
) -> Result<Value, Fault> {
    #[cfg(test)]
    if super::tests::PANIC_IN_READ.with(|p| p.replace(false)) {
        panic!("injected by a test");
    }
    budget.take()?;
    Ok(match ffi::lua_type(l, idx) {
        ffi::LUA_TNIL => Value::Null,
        ffi::LUA_TBOOLEAN => Value::Bool(ffi::lua_toboolean(l, idx) != 0),
        ffi::LUA_TNUMBER => num(l, idx)
            .ok_or_else(|| Fault::new("a finite number", ffi::lua_tonumber(l, idx).to_string()))?,
        ffi::LUA_TSTRING => match str(l, idx) {
            Some(s) => Value::String(s.to_owned()),
            None => return Err(Fault::new("UTF-8 text", "bytes that are not UTF-8")),
        },
        ffi::LUA_TTABLE => table(l, consts, idx, depth, empty, top, budget)?,
        ffi::LUA_TLIGHTUSERDATA if ffi::lua_touserdata(l, idx).is_null() => Value::Null,
        ffi::LUA_TUSERDATA if is_vim_nil(l, consts, idx) => Value::Null,
        ffi::LUA_TLIGHTUSERDATA => {
            return Err(Fault::new(
                "a JSON value",
                "a light userdata that is not null",
            ))
        }
        t => {
            let name = CStr::from_ptr(ffi::lua_typename(l, t)).to_string_lossy();
            return Err(Fault::new("a JSON value", format!("a {name}")));
        }
    })
}

/// A table: an array when its keys are exactly `1..n` (or it is empty where an array is
/// expected, or marked as one), an object when every key is a string.
///
/// # Safety
///
/// As `value`, with `idx` a table.
unsafe fn table(
    l: L,
    consts: c_int,
    idx: c_int,
    depth: usize,
    empty: Empty,
    top: bool,
    budget: &mut Budget,
) -> Result<Value, Fault> {
    if depth >= MAX_DEPTH {
        return Err(Fault::new(TOO_DEEP, "deeper nesting (a cyclic table?)"));
    }
    // A table read before in this read (shared, or on the path: a cycle) is copied again:
    // what that copy builds counts against the budget for repeats too.
    let outer = budget.repeating;
    budget.repeating = outer || !budget.first(ffi::lua_topointer(l, idx));
    let read = table_body(l, consts, idx, depth, empty, top, budget);
    budget.repeating = outer;
    read
}

/// `table` once the table's identity is counted.
///
/// # Safety
///
/// As `table`.
unsafe fn table_body(
    l: L,
    consts: c_int,
    idx: c_int,
    depth: usize,
    empty: Empty,
    top: bool,
    budget: &mut Budget,
) -> Result<Value, Fault> {
    let len = ffi::lua_rawlen(l, idx);
    let (mut count, mut string_keys, mut bad_key) = (0usize, 0usize, false);
    // First pass: decide array or object from the keys alone.
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, idx) != 0 {
        count = count.saturating_add(1);
        match ffi::lua_type(l, -2) {
            ffi::LUA_TSTRING => string_keys = string_keys.saturating_add(1),
            ffi::LUA_TNUMBER => bad_key |= index(l, -2, len).is_none(),
            _ => bad_key = true,
        }
        ffi::lua_settop(l, -2);
    }
    let is_array = match (count, string_keys) {
        (0, _) => empty == Empty::Array || is_array_marked(l, consts, idx),
        (_, 0) => !bad_key && count == len,
        _ => false,
    };
    if is_array {
        // `count == len` here: the length was counted, not taken from the border.
        let mut items = Vec::with_capacity(count);
        for i in 1..=count {
            ffi::lua_rawgeti(l, idx, i as _);
            let item = value(
                l,
                consts,
                ffi::lua_gettop(l),
                depth.saturating_add(1),
                Empty::Object,
                false,
                budget,
            );
            ffi::lua_settop(l, -2);
            items.push(item.map_err(|f| f.at(Step::Index(i)))?);
        }
        return Ok(Value::Array(items));
    }
    if string_keys != count {
        return Err(Fault::new(
            "an array (keys 1..n) or an object (string keys)",
            "a table with other keys",
        ));
    }
    // Keys in no order: a key that is not UTF-8 is the fault whatever else is wrong, and
    // of the values that are not JSON the one under the smallest key is named, as a
    // reading in key order would find first.
    let mut entries: Vec<(String, Value)> = Vec::with_capacity(count);
    let mut first_fault: Option<(String, Fault)> = None;
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, idx) != 0 {
        let at = ffi::lua_gettop(l);
        let Some(key) = str(l, at.saturating_sub(1)) else {
            ffi::lua_settop(l, at.saturating_sub(2));
            return Err(Fault::new("UTF-8 keys", "a key that is not UTF-8"));
        };
        let hint = match top && ARRAY_FIELDS.contains(&key) {
            true => Empty::Array,
            false => Empty::Object,
        };
        let later = first_fault.as_ref().is_some_and(|(k, _)| k.as_str() < key);
        if !later {
            match value(l, consts, at, depth.saturating_add(1), hint, false, budget) {
                Ok(v) if first_fault.is_none() => entries.push((key.to_owned(), v)),
                Ok(_) => {}
                Err(f) => first_fault = Some((key.to_owned(), f)),
            }
        }
        ffi::lua_settop(l, at.saturating_sub(1));
    }
    if let Some((key, f)) = first_fault {
        return Err(f.at(Step::Key(key)));
    }
    // A Lua table has no key order; sorting makes the result (and the "No change"
    // check, which compares key order as JSON.stringify does) deterministic.
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(Value::Object(entries.into_iter().collect::<Map<_, _>>()))
}

/// An integral float within the exact range is an integer (Lua 5.4 JSON decoders give
/// `1.0` for `1`); other finite floats stay floats; NaN and infinities have no JSON form.
pub(super) fn number(n: f64) -> Option<Value> {
    if n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER as f64 {
        Some(Value::from(n as i64))
    } else {
        Number::from_f64(n).map(Value::Number)
    }
}
