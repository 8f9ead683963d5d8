//! Every entry point of `rpiv_todo.core` with allocations failing at every step
//! (`Lua::set_memory_limit`, issue 18): no abort, and no growth of the Rust heap. A
//! counting global allocator (this binary's own) measures the heap; mlua allocates the
//! Lua heap through it too, so what Lua holds (`Lua::used_memory`) is taken off.
//!
//! On PUC Lua an error is a `longjmp`: a Rust value alive across a raising Lua call in a
//! raw block had its destructor skipped, which showed here as a leak (about 415 bytes
//! per failed overlay view, 4.5 KB per failed replay).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use mlua::{Function, Lua, MultiValue};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is passed straight to the system allocator; the counter only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            LIVE.fetch_add(
                new_size as isize - layout.size() as isize,
                Ordering::Relaxed,
            );
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The Rust heap without what Lua holds.
fn rust_heap(lua: &Lua) -> isize {
    LIVE.load(Ordering::Relaxed) - lua.used_memory() as isize
}

/// Each case: Lua code returning the function to call (its inputs made outside the limit).
const CASES: &[(&str, &str)] = &[
    ("core.apply", "local s = STATE() return function() return core.apply(s, { action = 'update', id = 2, metadata = { n = { 1, 2, { x = 'y' } } } }) end"),
    ("core.apply(nil, json)", r#"return function() return core.apply(nil, [[{"action":"create","subject":"\u00e9t\u00e9","metadata":{"a":[1,2,{"b":null}]}}]]) end"#),
    ("core.list", "local s = STATE() return function() return core.list(s) end"),
    ("list:apply", "local l = core.list(STATE()) return function() return l:apply({ action = 'list' }) end"),
    ("list:apply_json", r#"local l = core.list(STATE()) return function() return l:apply_json([[{"action":"get","id":1}]]) end"#),
    ("list:state", "local l = core.list(STATE()) return function() return l:state() end"),
    ("list:state_json", "local l = core.list(STATE()) return function() return l:state_json() end"),
    ("list:replace", "local l, s = core.list(nil), STATE() return function() return l:replace(s) end"),
    ("core.replay (tables)", "local e = ENTRIES() return function() return core.replay(e) end"),
    ("core.replay (text)", "local e = ENTRIES_JSON() return function() return core.replay(e) end"),
    ("core.overlay_view (list)", "local l = core.list(STATE()) return function() return core.overlay_view(l, 3) end"),
    ("core.overlay_view (list, live)", "local l, o = core.list(STATE()), core.overlay_live() return function() return core.overlay_view(l, 2, o, false, true) end"),
    ("core.overlay_view (table)", "local s = STATE() return function() return core.overlay_view(s, 3, { [1] = true }) end"),
    ("core._overlay_layout (list)", "local l = core.list(STATE()) return function() return core._overlay_layout(l, 3) end"),
    ("core._overlay_layout (table)", "local s = STATE() return function() return core._overlay_layout(s, 3, { [2] = true }) end"),
    ("core.sanitize", "return function() return core.sanitize('a\\27[31mb\\0c') end"),
    ("core.truncate", "return function() return core.truncate('a wide text \\u{1F600} here', 8) end"),
    ("core.tr", "return function() return core.tr('en', 'overlay-heading', { total = 3 }) end"),
    ("core.from_strict (list)", r#"local l = core.list(STATE()) return function() return core.from_strict({ action = 'update', id = 2, subject = core.null, metadata = '{"m":[1,{"n":2}]}' }, l) end"#),
    ("core.from_strict (no list)", r#"return function() return core.from_strict({ action = 'create', subject = 's', metadata = '{"m":[1,2]}' }) end"#),
    ("core.apply (a shared table refused)", "local d = SHARED(30) return function() return core.apply(nil, { action = 'create', subject = 'a', extra = d }) end"),
    ("core.apply (a shared table read)", "local d = SHARED(3) return function() return core.apply(nil, { action = 'create', subject = 'a', metadata = { d = d } }) end"),
    ("core.list (a shared table refused)", "local s = STATE() s.tasks[1].metadata = { d = SHARED(30) } return function() local ok, e = pcall(core.list, s) assert(not ok and tostring(e):find('repeated from shared tables', 1, true)) return e end"),
    ("core.replay (a shared table skipped)", "local e = ENTRIES() e[4].message.details.tasks[1].metadata = { d = SHARED(30) } return function() return core.replay(e) end"),
    ("core.overlay_live", "return function() return tostring(core.overlay_live()) end"),
    ("core.locale_file", "return function() return core.locale_file({ XDG_CONFIG_HOME = '/nonexistent' }) end"),
];

const PRELUDE: &str = r#"
function STATE()
  local tasks = {}
  for i = 1, 6 do
    tasks[i] = { id = i, subject = "task \27[1m" .. i, status = i % 2 == 0 and "completed" or "pending",
      activeForm = "doing " .. i, metadata = { k = { i, "v" .. i, { deep = true } } } }
  end
  tasks[3].blockedBy = { 1, 2 }
  return { tasks = tasks, nextId = 7 }
end
function ENTRIES()
  local e = {}
  for i = 1, 4 do
    e[i] = { type = "message", message = { role = "toolResult", toolName = "todo",
      details = STATE() } }
  end
  e[5] = { type = "message", message = { role = "user" } }
  return e
end
-- A table shared by two places at each of n levels: 2^(n+1) values once copied.
function SHARED(n)
  local t = {}
  for _ = 1, n do
    t = { t, t }
  end
  return t
end
function ENTRIES_JSON()
  return '[{"type":"message","message":{"role":"toolResult","toolName":"todo","details":'
    .. '{"tasks":[{"id":1,"subject":"a","status":"pending","metadata":{"m":[1,{"x":2}]}}],"nextId":2}}}]'
end
"#;

#[test]
fn every_entry_point_fails_cleanly_at_every_allocation() {
    let lua = Lua::new();
    let core = rpiv_todo::exports(&lua).unwrap();
    lua.globals().set("core", core).unwrap();
    lua.load(PRELUDE).exec().unwrap();
    let mut report = Vec::new();
    for (name, code) in CASES {
        let f: Function = lua.load(*code).set_name(*name).eval().unwrap();
        // Warm: whatever the first call caches (interned strings, memos) is made now.
        for _ in 0..2 {
            f.call::<MultiValue>(())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        lua.gc_collect().unwrap();
        lua.gc_collect().unwrap();
        let before = rust_heap(&lua);
        let (mut failed, mut step) = (0, 0usize);
        loop {
            let used = lua.used_memory();
            lua.set_memory_limit(used + step).unwrap();
            let r = f.call::<MultiValue>(());
            lua.set_memory_limit(0).unwrap();
            let done = r.is_ok();
            drop(r);
            if done {
                break;
            }
            failed += 1;
            step += 16;
            assert!(step < 4 << 20, "{name}: never succeeded");
        }
        lua.gc_collect().unwrap();
        lua.gc_collect().unwrap();
        let grown = rust_heap(&lua) - before;
        report.push(format!(
            "{name}: {failed} failed calls, Rust heap {grown:+} bytes"
        ));
        // A few hundred bytes of slack for what a successful call may remember.
        assert!(
            grown <= 1024,
            "{name}: the Rust heap grew by {grown} bytes over {failed} failed calls\n{}",
            report.join("\n")
        );
    }
    eprintln!("{}", report.join("\n"));
}
