//! What only a Rust test can do to the store: run a writer in a child process and kill it
//! with SIGKILL at random moments (a whole list is always left behind), and run one under
//! a file size limit of 0, a full disk without root (one message, no temporary file named
//! or left). Both re-run this test binary as the child. Everything else of `core.save` /
//! `core.load`, `session:save` / `session:load` and `todo.set_locale(code, { persist =
//! true })` is checked from real interpreters: tests/lua/store_spec.lua and
//! tests/lua/files_spec.lua.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use mlua::{Lua, Value as LuaValue};
use serde_json::{json, Value};

use crate::support;

/// A Lua state with `core` and `todo` as globals and `dir` (a scratch directory) as `DIR`.
fn lua_in(dir: &Path) -> Lua {
    let lua = support::lua();
    lua.globals()
        .set("DIR", dir.to_str().expect("UTF-8 temp path"))
        .expect("set DIR");
    support::eval::<()>(
        &lua,
        "core = require('rpiv_todo.core'); todo = require('rpiv_todo')",
    );
    lua
}

fn lua_json(lua: &Lua, code: &str) -> Value {
    support::to_json(&support::eval::<LuaValue>(lua, code))
}

/// The child side of the kill test: save a 300-task and a 3-task list to `path`,
/// alternately, until killed.
fn kill_writer(path: &str) -> ! {
    let lua = support::lua();
    lua.globals().set("PATH", path).unwrap();
    let run = lua.load(
        r#"
        local core = require("rpiv_todo.core")
        local big, small = core.list(), core.list()
        for i = 1, 300 do
          big:apply({ action = "create", subject = "Task " .. i .. " " .. string.rep("x", 60),
                      description = string.rep("d", 40) })
        end
        for i = 1, 3 do small:apply({ action = "create", subject = "Small " .. i }) end
        -- Straight to the file descriptor (the test harness captures only Rust's prints).
        io.stdout:write("ready\n")
        io.stdout:flush()
        while true do
          assert(core.save(PATH, big))
          assert(core.save(PATH, small))
        end
        "#,
    );
    // Straight to the descriptor, where the parent reads (print! would be captured).
    if let Err(e) = run.exec() {
        use std::io::Write;
        let _ = writeln!(std::io::stdout(), "writer failed: {e}");
    }
    std::process::exit(3)
}

/// xorshift64*: the kill moments, reproducible from the printed seed.
fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed >> 12;
    *seed ^= *seed << 25;
    *seed ^= *seed >> 27;
    seed.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

#[test]
fn a_writer_killed_at_random_moments_always_leaves_a_whole_list() {
    const NAME: &str = "store::a_writer_killed_at_random_moments_always_leaves_a_whole_list";
    if let Ok(path) = std::env::var("RPIV_KILL_WRITER") {
        kill_writer(&path);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("list.json");
    let path_s = path.to_str().unwrap().to_owned();
    let lua = lua_in(dir.path());
    lua.globals().set("PATH", path_s.as_str()).unwrap();
    // The file exists before the first kill, as the small list.
    support::eval::<()>(
        &lua,
        r#"local l = core.list()
           for i = 1, 3 do l:apply({ action = "create", subject = "Small " .. i }) end
           assert(core.save(PATH, l))"#,
    );
    let mut seed: u64 = std::env::var("RPIV_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
                | 1
        });
    eprintln!("kill test seed: RPIV_KILL_SEED={seed}");
    let exe = std::env::current_exe().unwrap();
    let (mut big, mut small, mut torn_writes) = (0, 0, 0);
    // At least `KILLS` kills, and more until both lists and a torn save were caught. A
    // kill lands up to `window` µs after the writer is ready; the window starts at a few
    // saves of the big list on a quiet disk and doubles every ten kills that never caught
    // the big list (a loaded machine's fsync can outlast it), up to `MAX_WINDOW`.
    const KILLS: usize = 40;
    const MAX_KILLS: usize = 200;
    const MAX_WINDOW: u64 = 2_000_000;
    let mut window: u64 = 60_000;
    let mut round = 0;
    while round < KILLS || (round < MAX_KILLS && (big == 0 || small == 0 || torn_writes == 0)) {
        let mut child = Command::new(&exe)
            .args([NAME, "--exact", "--test-threads=1"])
            .env("RPIV_KILL_WRITER", &path_s)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the writer");
        // Wait until the writer is about to save, then kill it within the window.
        // (The test harness prints its own text first, "test <name> ... " on that line.)
        let mut out = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut line = String::new();
        let mut seen = String::new();
        while !line.ends_with("ready\n") {
            line.clear();
            let n = out.read_line(&mut line).expect("read the writer's output");
            seen.push_str(&line);
            assert!(
                n > 0,
                "round {round}: the writer ended before it was ready: {seen}"
            );
        }
        let wait = next(&mut seed) % window;
        std::thread::sleep(Duration::from_micros(wait));
        child.kill().expect("SIGKILL the writer");
        let status = child.wait().expect("reap the writer");
        let mut rest = String::new();
        let _ = out.read_to_string(&mut rest);
        assert!(
            status.code().is_none(),
            "round {round}: the writer exited by itself ({status}) instead of being killed: {rest}"
        );
        let got = lua_json(
            &lua,
            r#"local s, err = core.load(PATH)
               if not s then return { err = err } end
               local first, last = s.tasks[1], s.tasks[#s.tasks]
               return { n = #s.tasks, nextId = s.nextId, first = first.subject, last = last.subject }"#,
        );
        match got["n"].as_i64() {
            Some(300) => {
                big += 1;
                assert_eq!(got["nextId"], 301, "round {round}");
                assert_eq!(
                    got["last"],
                    format!("Task 300 {}", "x".repeat(60)),
                    "round {round}"
                );
            }
            Some(3) => {
                small += 1;
                assert_eq!(
                    got,
                    json!({"n": 3, "nextId": 4, "first": "Small 1", "last": "Small 3"}),
                    "round {round}"
                );
            }
            _ => panic!("round {round} ({wait} µs into saving): not a whole list: {got}"),
        }
        // A kill between creating the temporary file and renaming it leaves that file.
        torn_writes = std::fs::read_dir(dir.path()).unwrap().count() - 1;
        round += 1;
        if round % 10 == 0 && big == 0 {
            window = window.saturating_mul(2).min(MAX_WINDOW);
        }
    }
    eprintln!(
        "kill test: {round} kills within {window} µs; the file held the 300-task list {big} times, the 3-task list {small} times; {torn_writes} kills landed mid-save (temporary file left)"
    );
    assert!(
        big > 0 && small > 0,
        "the kills never caught one of the two lists (300: {big}, 3: {small}): the writer did not run"
    );
    assert!(
        torn_writes > 0,
        "no kill landed inside a save: the test did not exercise the dangerous window"
    );
    // What a kill leaves is hidden and never read: only the list is visible.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(
            name == "list.json" || (name.starts_with(".list.json.") && name.ends_with(".tmp")),
            "{name}"
        );
    }
}

/// The child side of the full-disk test: with the file size limit at 0 (set by the
/// parent's shell), save twice and print both messages, then what a persisting session
/// reported.
#[cfg(unix)]
fn full_disk_writer(dir: &str) -> ! {
    let lua = support::lua();
    lua.globals().set("DIR", dir).unwrap();
    let run = lua.load(
        r#"
        local core = require("rpiv_todo.core")
        local l = core.list()
        l:apply({ action = "create", subject = "a" })
        local out = {}
        for _ = 1, 2 do
          local ok, err, kind = core.save(DIR .. "/list.json", l)
          out[#out + 1] = tostring(ok) .. " | " .. err:sub(#DIR + 2) .. " | " .. kind
        end
        for _ = 1, 2 do
          local ok, err, kind = core.save_locale(DIR .. "/locale.json", "de")
          out[#out + 1] = tostring(ok) .. " | " .. err:sub(#DIR + 2) .. " | " .. kind
        end
        local reported = {}
        require("rpiv_todo.persist").enable({ dir = DIR, key = "k",
          on_error = function(m) reported[#reported + 1] = m end })
        local s = require("rpiv_todo").session("full")
        for i = 1, 3 do s:execute({ action = "create", subject = "t" .. i }) end
        out[#out + 1] = "reported " .. #reported
        io.stdout:write(table.concat(out, "\n"), "\n")
        io.stdout:flush()
        "#,
    );
    let code = match run.exec() {
        Ok(()) => 0,
        Err(e) => {
            use std::io::Write;
            let _ = writeln!(std::io::stdout(), "writer failed: {e}");
            3
        }
    };
    std::process::exit(code)
}

#[cfg(unix)]
#[test]
fn a_full_disk_gives_one_message_that_names_no_temporary_file() {
    const NAME: &str = "store::a_full_disk_gives_one_message_that_names_no_temporary_file";
    if let Ok(dir) = std::env::var("RPIV_FULL_DISK_DIR") {
        full_disk_writer(&dir);
    }
    // A full disk without root: RLIMIT_FSIZE at 0 makes every write to a file fail
    // (EFBIG, "File too large") the way ENOSPC does, after the temporary file was
    // created. SIGXFSZ is ignored, so the write fails instead of killing the child.
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#"trap '' XFSZ; ulimit -f 0 && exec "$0" --exact "$1" --nocapture --test-threads 1"#)
        .arg(&exe)
        .arg(NAME)
        .env("RPIV_FULL_DISK_DIR", dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The harness prints "test <name> ... " in front of the first line.
    let lines: Vec<&str> = stdout
        .lines()
        .filter_map(|l| {
            ["nil |", "reported", "writer failed"]
                .iter()
                .find_map(|m| l.find(m).map(|at| &l[at..]))
        })
        .collect();
    let save_err = "nil | list.json: cannot write: File too large (os error 27) | io";
    let locale_err = "nil | locale.json: cannot write: File too large (os error 27) | io";
    assert_eq!(
        lines,
        [save_err, save_err, locale_err, locale_err, "reported 1"],
        "status {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    // Each failed save removed its temporary file; the shared list's lock file stays (it
    // is never removed while its list may be in use).
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, [std::ffi::OsString::from(".k@full.json.lock")]);
}
