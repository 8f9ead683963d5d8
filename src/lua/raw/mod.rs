//! The one way into the raw C API: `exec`, a protected call whose body may not unwind.
//! This module and `write` hold every `unsafe` of the crate: here `exec`, the one reader of
//! Lua values (`read`), the native copy of a replayed snapshot (`snapshot_table`) and the
//! collector hold (`CollectorHold`); in `write` the one writer of result tables.
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

use std::ffi::{c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use mlua::{ffi, FromLuaMulti, IntoLuaMulti, Lua, Table, Value as LuaValue};
use serde_json::{Map, Number, Value};

use super::Ctx;
use crate::params::{MAX_SAFE_INTEGER, TOO_DEEP};

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

pub mod export;
pub mod hook;
pub mod write;

/// A raw Lua state pointer, valid inside an `exec` body.
pub type L = *mut ffi::lua_State;

/// Run `f` on the raw state with `args` pushed (slots 1..n), inside one protected call, and
/// read whatever `f` leaves on the stack as `R`. A Lua error raised inside `f` (out of
/// memory, a full stack) comes back as `Err`; a Rust panic inside `f` is caught before it
/// reaches a C frame and comes back as `Err` too.
///
/// # Safety
///
/// `f` must keep the rules in the module docs: only raw calls that are valid for the
/// values it pushed or was given, nothing owned held across a call that can raise, the
/// stack left holding exactly the results.
pub unsafe fn exec<R: FromLuaMulti>(
    lua: &Lua,
    args: impl IntoLuaMulti,
    f: impl FnOnce(L),
) -> mlua::Result<R> {
    let mut panicked = false;
    let result = lua.exec_raw::<R>(args, |l| {
        let body = || {
            #[cfg(test)]
            if tests::PANIC_NEXT.with(|p| p.replace(false)) {
                panic!("injected by a test");
            }
            f(l)
        };
        // PUC Lua: its C frames have no unwinding, so the panic is caught here. Its own
        // errors are `longjmp`s, which no `catch_unwind` sees.
        #[cfg(not(feature = "luajit"))]
        if catch_unwind(AssertUnwindSafe(body)).is_err() {
            panicked = true;
            ffi::lua_settop(l, 0);
        }
        // LuaJIT raises its errors as foreign exceptions that unwind through Rust frames,
        // and `catch_unwind` aborts the process on meeting one ("Rust cannot catch foreign
        // exceptions"), so nothing may be caught around code that calls Lua. A panic here
        // still ends the process on LuaJIT (its protected call catches the panic as a
        // foreign exception, and Rust aborts: "Rust panics must be rethrown"), which is
        // why the bodies stay free of anything input can make panic (no indexing by input,
        // no unwrap). The reader, which cannot raise once its room is reserved, catches
        // its own panics on every flavour (`read`); the writing bodies cannot.
        #[cfg(feature = "luajit")]
        {
            let _ = &mut panicked;
            body();
        }
    });
    if panicked {
        return Err(mlua::Error::runtime(
            "rpiv_todo.core: internal error (a bug; please report it)",
        ));
    }
    result
}

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
const READ_ROOM: c_int = (MAX_DEPTH as c_int + 2) * SLOTS_PER_LEVEL;

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
    repeating: bool,
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
    fn take_n(&mut self, n: usize) -> Result<(), Fault> {
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
    fn first(&mut self, p: *const std::ffi::c_void) -> bool {
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
    if tests::PANIC_IN_READ.with(|p| p.replace(false)) {
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
fn number(n: f64) -> Option<Value> {
    if n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER as f64 {
        Some(Value::from(n as i64))
    } else {
        Number::from_f64(n).map(Value::Number)
    }
}

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

/// The state table a winning entry's `tasks` and `nextId` make, or `None` when they do
/// not make a valid state. When every task has the plain shape (see `task`), the tasks
/// are checked and copied table to table in one pass of raw reads, reusing the entry's
/// own strings (nothing is interned again); otherwise the general conversion decides.
/// One pass, because each detour tried (JSON values, a `State`, a separate check pass)
/// left the copy slower than plain Lua's.
pub fn snapshot_table(
    lua: &Lua,
    ctx: &Ctx,
    tasks: &LuaValue,
    next: &LuaValue,
) -> mlua::Result<Option<Table>> {
    // The raw copy reads `tasks` with table calls (`lua_next` on anything else is a
    // crash, `lua_rawlen` of a number converts it in place on LuaJIT and 5.1): only a
    // table and a number get that far, whoever the caller.
    if !matches!(tasks, LuaValue::Table(_))
        || !matches!(next, LuaValue::Number(_) | LuaValue::Integer(_))
    {
        return Ok(None);
    }
    let mut plain = false;
    let mut links = Links::default();
    // SAFETY: the closure reads the entry and builds new tables; it leaves exactly the
    // result (or nil). What it owns lives in `links`, out here, including the metadata
    // value while it is pushed, so a push that raises (a `longjmp` on PUC Lua) skips no
    // destructor.
    let t: LuaValue = unsafe {
        exec(lua, (&ctx.array_mt, &ctx.consts, tasks, next), |l| {
            plain = copy(l, &mut links);
            if plain {
                ffi::lua_insert(l, 1);
                ffi::lua_settop(l, 1);
            } else {
                ffi::lua_settop(l, 0);
                ffi::lua_pushnil(l);
            }
        })?
    };
    if let (true, LuaValue::Table(t)) = (plain, t) {
        return Ok(Some(t));
    }
    let parts = read(lua, ctx, tasks, Empty::Array, false)
        .ok()
        .zip(read(lua, ctx, next, Empty::Object, false).ok());
    match parts.and_then(|(t, n)| crate::replay::state_from_parts(t, n)) {
        Some(s) => Ok(Some(write::state(lua, &ctx.array_mt, &s)?)),
        None => Ok(None),
    }
}

/// Stack slots in `copy`: array metatable, consts, tasks, nextId.
const COPY_CONSTS: c_int = 2;
const COPY_TASKS: c_int = 3;
const COPY_NEXT: c_int = 4;

/// Each copied task's id and `blockedBy` ids, for `task::check_links`.
#[derive(Default)]
struct Links {
    ids: Vec<crate::task::Id>,
    /// Per task: where its `blockedBy` ids start in `edges`, and how many.
    deps: Vec<(usize, usize)>,
    edges: Vec<crate::task::Id>,
    /// The metadata being copied (see `copy_task`).
    metadata: Option<Value>,
    /// What the copy may build (the reader's budget): `blockedBy` ids and metadata.
    budget: Budget,
}

/// `{ tasks = { copies }, nextId = n }` on top of the stack when every task at
/// `COPY_TASKS` has the plain shape and together they keep the list's rules
/// (`State::validate`, `nextId` repaired as it repairs it); false (stack left as it
/// is) otherwise.
///
/// # Safety
///
/// Only inside an `exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules above).
unsafe fn copy(l: L, links: &mut Links) -> bool {
    if ffi::lua_checkstack(l, 16) == 0 {
        return false;
    }
    let Some(interned) = InternedKeys::new(l, COPY_CONSTS) else {
        return false;
    };
    let n = ffi::lua_rawlen(l, COPY_TASKS);
    let next_id = match ffi::lua_type(l, COPY_NEXT) {
        ffi::LUA_TNUMBER => num(l, COPY_NEXT).and_then(|v| crate::params::id("nextId", &v).ok()),
        _ => None,
    };
    let Some(next_id) = next_id.filter(|_| n > 0) else {
        return false;
    };
    // Keys exactly 1..n: as many keys as the length.
    let mut count: usize = 0;
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, COPY_TASKS) != 0 {
        count = count.saturating_add(1);
        ffi::lua_settop(l, -2);
    }
    if count != n {
        return false;
    }
    ffi::lua_createtable(l, 0, 2);
    ffi::lua_createtable(l, n.min(c_int::MAX as usize) as c_int, 0);
    let dst_tasks = ffi::lua_gettop(l);
    links.ids.reserve(n);
    links.deps.reserve(n);
    for i in 1..=n {
        ffi::lua_rawgeti(l, COPY_TASKS, i as _);
        let src = dst_tasks.saturating_add(1);
        if ffi::lua_type(l, src) != ffi::LUA_TTABLE || !copy_task(l, &interned, src, links) {
            return false;
        }
        ffi::lua_rawseti(l, dst_tasks, i as _);
        ffi::lua_settop(l, dst_tasks);
    }
    let Links {
        ids, deps, edges, ..
    } = &*links;
    let Ok(largest) = crate::task::check_links(
        ids.len(),
        |i| ids[i],
        |i| {
            let (start, len) = deps[i];
            edges.get(start..start.saturating_add(len)).unwrap_or(&[])
        },
    ) else {
        return false;
    };
    let next_id = crate::task::repaired_next_id(next_id, largest);
    ffi::lua_setfield(l, -2, c"tasks".as_ptr());
    ffi::lua_pushinteger(l, next_id as _);
    ffi::lua_setfield(l, -2, c"nextId".as_ptr());
    true
}

/// Check the task table at `src` (the plain shape of `task`) and leave its copy on top.
///
/// # Safety
///
/// Only inside an `exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules above).
unsafe fn copy_task(l: L, interned: &InternedKeys, src: c_int, links: &mut Links) -> bool {
    let dst = src.saturating_add(1);
    let start = links.edges.len();
    let mut id = None;
    ffi::lua_createtable(l, 0, 4);
    let (key, val) = (dst.saturating_add(1), dst.saturating_add(2));
    let mut required: i32 = 0;
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, src) != 0 {
        let field = match ffi::lua_type(l, key) {
            ffi::LUA_TSTRING => interned.which(l, key),
            _ => None,
        };
        // Strings and the status are the entry's own values: `key, val` becomes
        // `key, key, val` and is set in one call, leaving the key for `lua_next`.
        let own = match field {
            Some(Const::Status) => interned.status(l, val).is_some(),
            Some(Const::Subject | Const::Description | Const::ActiveForm | Const::Owner) => {
                ffi::lua_type(l, val) == ffi::LUA_TSTRING && str(l, val).is_some()
            }
            _ => false,
        };
        if own {
            required = required
                .saturating_add(matches!(field, Some(Const::Status | Const::Subject)) as i32);
            ffi::lua_pushvalue(l, key);
            ffi::lua_insert(l, val);
            ffi::lua_rawset(l, dst);
            continue;
        }
        ffi::lua_pushvalue(l, key);
        let ok = match field {
            Some(Const::Id) => match num(l, val).and_then(|v| crate::params::id("id", &v).ok()) {
                Some(v) => {
                    ffi::lua_pushinteger(l, v as _);
                    id = Some(v);
                    required = required.saturating_add(1);
                    true
                }
                None => false,
            },
            Some(Const::BlockedBy) => copy_ids(l, val, &mut links.edges, &mut links.budget),
            Some(Const::Metadata) if ffi::lua_type(l, val) == ffi::LUA_TTABLE => {
                // Room for the reader's levels, reserved while nothing is owned here.
                if ffi::lua_checkstack(l, READ_ROOM) == 0 {
                    return false;
                }
                // Kept in `links` while it is pushed: a push that raises (out of
                // memory) must leave nothing owned in this frame.
                links.metadata = value(
                    l,
                    COPY_CONSTS,
                    val,
                    2,
                    Empty::Object,
                    false,
                    &mut links.budget,
                )
                .ok()
                .filter(|v| v.is_object() && crate::params::check_nesting("metadata", v).is_ok());
                match &links.metadata {
                    Some(v) => {
                        write::push_value(l, v);
                        true
                    }
                    None => false,
                }
            }
            _ => false,
        };
        if !ok {
            return false;
        }
        ffi::lua_rawset(l, dst);
        ffi::lua_settop(l, key);
    }
    let Some(id) = id.filter(|_| required == 3) else {
        return false;
    };
    links.ids.push(id);
    links
        .deps
        .push((start, links.edges.len().saturating_sub(start)));
    true
}

/// The length of the table at `idx` when it is a non-empty array: its keys exactly
/// `1..n` (what `copy_ids` and `ids` accept before reading the ids themselves).
///
/// # Safety
///
/// Only inside an `exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules above).
unsafe fn id_array_len(l: L, idx: c_int) -> Option<usize> {
    if ffi::lua_type(l, idx) != ffi::LUA_TTABLE {
        return None;
    }
    let n = ffi::lua_rawlen(l, idx);
    if n == 0 {
        return None;
    }
    let mut count: usize = 0;
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, idx) != 0 {
        count = count.saturating_add(1);
        let ok = index(l, -2, n).is_some();
        ffi::lua_settop(l, -2);
        if !ok {
            ffi::lua_settop(l, -2);
            return None;
        }
    }
    (count == n).then_some(n)
}

/// Push a copy of the non-empty id array at `idx` (keys exactly 1..n, integer ids),
/// adding the ids to `edges`.
///
/// # Safety
///
/// Only inside an `exec` body, on its state `l`, with every stack index it is
/// given naming a live slot of the kind its doc says (the rules above).
unsafe fn copy_ids(
    l: L,
    idx: c_int,
    edges: &mut Vec<crate::task::Id>,
    budget: &mut Budget,
) -> bool {
    let Some(n) = id_array_len(l, idx) else {
        return false;
    };
    // One `blockedBy` table in many tasks is copied once per task: counted as the reader
    // counts a shared table, and past the budget left to the general reading (which
    // refuses it).
    if !budget.first(ffi::lua_topointer(l, idx)) {
        let outer = std::mem::replace(&mut budget.repeating, true);
        let taken = budget.take_n(n).is_ok();
        budget.repeating = outer;
        if !taken {
            return false;
        }
    }
    ffi::lua_createtable(l, n.min(c_int::MAX as usize) as c_int, 0);
    for i in 1..=n {
        ffi::lua_rawgeti(l, idx, i as _);
        let id = num(l, -1).and_then(|v| crate::params::id("blockedBy", &v).ok());
        ffi::lua_settop(l, -2);
        let Some(id) = id else {
            return false;
        };
        edges.push(id);
        ffi::lua_pushinteger(l, id as _);
        ffi::lua_rawseti(l, -2, i as _);
    }
    true
}

/// The data pointers of the interned task-field and status strings in `Ctx::consts`.
/// Short strings are interned (all strings in LuaJIT and 5.1, up to 40 bytes in 5.4),
/// so a string equals one of these exactly when it is the same object.
pub struct InternedKeys([*const u8; 12]);

const FIELDS: [Const; 8] = [
    Const::Id,
    Const::Subject,
    Const::Description,
    Const::ActiveForm,
    Const::Status,
    Const::BlockedBy,
    Const::Owner,
    Const::Metadata,
];

impl InternedKeys {
    /// # Safety
    ///
    /// Only inside an `exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules above).
    unsafe fn new(l: L, consts: c_int) -> Option<InternedKeys> {
        if ffi::lua_checkstack(l, 2) == 0 {
            return None;
        }
        let mut p = [std::ptr::null(); 12];
        for (i, slot) in p.iter_mut().enumerate() {
            ffi::lua_rawgeti(l, consts, (Const::Id as usize).saturating_add(i) as _);
            *slot = ffi::lua_tolstring(l, -1, std::ptr::null_mut()).cast();
            ffi::lua_settop(l, -2);
        }
        Some(InternedKeys(p))
    }

    /// Which task field the string at `idx` names (interned: compared by address).
    ///
    /// # Safety
    ///
    /// Only inside an `exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules above).
    unsafe fn which(&self, l: L, idx: c_int) -> Option<Const> {
        let p = ffi::lua_tolstring(l, idx, std::ptr::null_mut()).cast::<u8>();
        let i = self.0[..8].iter().position(|&q| q == p)?;
        Some(FIELDS[i])
    }

    /// # Safety
    ///
    /// Only inside an `exec` body, on its state `l`, with every stack index it is
    /// given naming a live slot of the kind its doc says (the rules above).
    unsafe fn status(&self, l: L, idx: c_int) -> Option<crate::task::Status> {
        if ffi::lua_type(l, idx) != ffi::LUA_TSTRING {
            return None;
        }
        let p: *const u8 = ffi::lua_tolstring(l, idx, std::ptr::null_mut()).cast();
        let i = self.0[8..].iter().position(|&q| q == p)?;
        Some(crate::task::Status::ALL[i])
    }
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
    std::str::from_utf8(std::slice::from_raw_parts(p, len)).ok()
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
pub(super) struct CollectorHold {
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
pub(super) struct CollectorDebt {
    #[cfg_attr(not(feature = "luajit"), allow(dead_code))]
    owed: std::cell::Cell<std::ffi::c_int>,
    #[cfg_attr(not(feature = "luajit"), allow(dead_code))]
    last_kb: std::cell::Cell<Option<std::ffi::c_int>>,
}

impl CollectorHold {
    #[cfg(feature = "luajit")]
    pub(super) fn new(lua: &Lua) -> CollectorHold {
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
    pub(super) fn new(lua: &Lua) -> CollectorHold {
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
    pub(super) fn new(_lua: &Lua) -> CollectorHold {
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

#[cfg(all(test, not(feature = "luajit")))]
mod panic_tests {
    use mlua::Lua;

    /// A panic inside a raw block must not unwind through `lua_pcall`'s C frames (an abort,
    /// or a state whose next error jumps into a dead frame). It is a Lua
    /// error, and errors afterwards unwind as they should. (PUC Lua only: see `exec`.)
    #[cfg(not(feature = "luajit"))]
    #[test]
    fn a_panic_inside_a_raw_block_is_a_lua_error_and_the_state_lives_on() {
        let lua = Lua::new();
        let core = crate::lua::exports(&lua).unwrap();
        lua.globals().set("core", core).unwrap();
        super::tests::PANIC_NEXT.with(|p| p.set(true));
        let (ok, err): (bool, String) = lua
            .load(r#"local ok, e = pcall(core.apply, nil, '{"action": "list"}') return ok, tostring(e)"#)
            .eval()
            .unwrap();
        assert!(!ok);
        assert!(err.contains("internal error"), "{err}");
        let after: String = lua
            .load(
                "for i = 1, 100 do local ok, e = pcall(error, 'after ' .. i); assert(not ok) end
                 local r = core.apply(nil, { action = 'create', subject = 'a' })
                 return r.content[1].text",
            )
            .eval()
            .unwrap();
        assert_eq!(after, "Created #1: a (pending)");
    }
}
