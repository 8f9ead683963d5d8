//! Files a user can trust: `core.save` / `core.load`, `session:save` / `session:load` and
//! `todo.set_locale(code, { persist = true })`, through the public Lua API. Bad files and
//! unwritable paths come back as `nil, err` naming the path; a writer killed with SIGKILL
//! at random moments always leaves a whole list behind.

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

const THREE: &str = r#"
    local l = core.list()
    l:apply({ action = "create", subject = "Write the parser" })
    l:apply({ action = "create", subject = "Test it", blockedBy = { 1 } })
    l:apply({ action = "create", subject = "Ship", description = "tag and push", metadata = { k = "v" } })
    l:apply({ action = "update", id = 1, status = "in_progress", activeForm = "Writing" })
    return l
"#;

#[test]
fn a_list_saved_from_a_handle_a_table_or_json_text_loads_back_equal() {
    let dir = tempfile::tempdir().unwrap();
    let lua = lua_in(dir.path());
    let want = lua_json(
        &lua,
        &format!("local l = (function() {THREE} end)(); return l:state()"),
    );
    for (how, arg) in [
        ("handle", "l"),
        ("table", "l:state()"),
        ("JSON text", "l:state_json()"),
    ] {
        let got = lua_json(
            &lua,
            &format!(
                "local l = (function() {THREE} end)()
                 local path = DIR .. '/list.json'
                 local ok, err = core.save(path, {arg})
                 assert(ok == true and err == nil, tostring(err))
                 local state, err2 = core.load(path)
                 assert(state, err2)
                 return state"
            ),
        );
        assert_eq!(got, want, "saved from a {how}");
    }
    let text = std::fs::read_to_string(dir.path().join("list.json")).unwrap();
    assert!(
        text.starts_with("{\"version\":1,\"tasks\":[{\"id\":1,"),
        "{text}"
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["list.json"], "no temporary file left");
}

#[test]
fn session_save_and_load_carry_a_list_from_one_session_to_another() {
    let dir = tempfile::tempdir().unwrap();
    let lua = lua_in(dir.path());
    let got = lua_json(
        &lua,
        r#"
        local a = todo.session("a")
        a:execute({ action = "create", subject = "Carry me" })
        a:execute({ action = "update", id = 1, status = "in_progress" })
        assert(a:save(DIR .. "/a.json") == true)
        local events = {}
        local stop = todo.listen(function(event, id) events[#events + 1] = event .. ":" .. id end)
        local b = todo.session("b")
        local state = assert(b:load(DIR .. "/a.json"))
        stop()
        local next = b:execute({ action = "create", subject = "Next" })
        return { loaded = #state.tasks, events = events, text = next.content[1].text,
                 b = b:state().nextId, a = a:state().nextId }
        "#,
    );
    assert_eq!(
        got,
        json!({"loaded": 1, "events": ["loaded:b"], "text": "Created #2: Next (pending)", "b": 3, "a": 2})
    );
}

#[test]
fn bad_files_give_nil_and_a_message_naming_the_path_and_leave_the_list_alone() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let full = r#"{"version":1,"tasks":[{"id":1,"subject":"a","status":"pending"},{"id":2,"subject":"b","status":"pending"}],"nextId":3}"#;
    let cases: [(&str, Option<&[u8]>, &str); 9] = [
        ("missing.json", None, "no such file"),
        ("empty.json", Some(b""), "the file is empty"),
        (
            "truncated.json",
            Some(&full.as_bytes()[..60]),
            "truncated JSON (the text stops at line 1, column 60)",
        ),
        (
            "garbage.json",
            Some(b"\xff\xfe garbage"),
            "invalid JSON (expected value at line 1 column 1)",
        ),
        (
            "array.json",
            Some(b"[]"),
            "not a todo list: expected an object {\"tasks\": [...], \"nextId\": n}, got an array",
        ),
        (
            "shape.json",
            Some(br#"{"tasks":"none","nextId":1}"#),
            "not a todo list: tasks: expected an array, got string \"none\"",
        ),
        (
            "task.json",
            Some(br#"{"tasks":[{"id":"1","subject":"a","status":"pending"}],"nextId":2}"#),
            "not a todo list: tasks[1].id: expected an integer id, got string \"1\"",
        ),
        ("dir.json", None, "cannot read: it is a directory"),
        (
            "rules.json",
            Some(br#"{"tasks":[{"id":1,"subject":"a","status":"pending","blockedBy":[1]}],"nextId":2}"#),
            "breaks the list's rules: tasks: the blockedBy edges form a cycle through #1",
        ),
    ];
    std::fs::create_dir(d.join("dir.json")).unwrap();
    let lua = lua_in(d);
    for (name, content, want) in cases {
        if let Some(bytes) = content {
            std::fs::write(d.join(name), bytes).unwrap();
        }
        let path = d.join(name).to_str().unwrap().to_owned();
        let got = lua_json(
            &lua,
            &format!(
                r#"
                local path = {path:?}
                local s = todo.session("keep")
                s:execute({{ action = "create", subject = "untouched" }})
                local state, err = core.load(path)
                local sstate, serr = s:load(path)
                local after = s:state()
                todo.shutdown("keep")
                return {{ state = state == nil, err = err, sstate = sstate == nil, serr = serr,
                          kept = #after.tasks .. " " .. after.tasks[1].subject }}
                "#
            ),
        );
        let msg = format!("{path}: {want}");
        assert_eq!(
            got,
            json!({"state": true, "err": msg, "sstate": true, "serr": msg, "kept": "1 untouched"}),
            "{name}"
        );
    }
}

#[test]
fn an_unwritable_path_gives_nil_and_a_message_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("plain-file"), "x").unwrap();
    std::fs::create_dir(d.join("a-dir")).unwrap();
    let lua = lua_in(d);
    let s = |p: &Path| p.to_str().unwrap().to_owned();
    let cases = [
        (
            s(&d.join("no-such-dir").join("list.json")),
            format!(
                "cannot write: the directory {} does not exist",
                s(&d.join("no-such-dir"))
            ),
        ),
        (
            s(&d.join("plain-file").join("list.json")),
            format!(
                "cannot write: cannot create a file in {}: Not a directory (os error 20)",
                s(&d.join("plain-file"))
            ),
        ),
        (
            s(&d.join("a-dir")),
            "cannot write: it is a directory".into(),
        ),
        (String::new(), "cannot write: the path is empty".into()),
    ];
    for (path, want) in cases {
        let got = lua_json(
            &lua,
            &format!(
                r#"local ok, err = core.save({path:?}, core.list())
                   local sok, serr = todo.session("w"):save({path:?})
                   return {{ ok = ok == nil, err = err, sok = sok == nil, serr = serr }}"#
            ),
        );
        let msg = format!("{path}: {want}");
        assert_eq!(
            got,
            json!({"ok": true, "err": msg, "sok": true, "serr": msg}),
            "{path}"
        );
    }
    let mut names: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["a-dir", "plain-file"]);
    assert_eq!(std::fs::read_dir(d.join("a-dir")).unwrap().count(), 0);
}

#[test]
fn wrong_argument_types_are_lua_errors_naming_the_function() {
    let lua = support::lua();
    for (code, want) in [
        (
            "core.save(nil, core.list())",
            "rpiv_todo.core.save: path: expected a string, got nil",
        ),
        (
            "core.save('/tmp/x.json')",
            "rpiv_todo.core.save: state: expected a list, a state table or its JSON text, got nil",
        ),
        (
            "core.save('/tmp/x.json', { tasks = 5 })",
            "rpiv_todo.core.save: tasks: expected an array, got number 5",
        ),
        (
            // What core.list refuses is never written (so never read back as garbage).
            "core.save('/tmp/x.json', { tasks = { { id = 1, subject = 'a', status = 'pending' },
               { id = 1, subject = 'b', status = 'pending' } }, nextId = 2 })",
            "rpiv_todo.core.save: state: tasks[2].id: #1 is already the id of tasks[1]",
        ),
        (
            "core.load(42)",
            "rpiv_todo.core.load: path: expected a string, got integer",
        ),
    ] {
        let err = lua
            .load(format!("local core = require('rpiv_todo.core'); {code}"))
            .exec()
            .expect_err(code)
            .to_string();
        assert!(err.contains(want), "{code}: {err}");
    }
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
    const KILLS: usize = 40;
    for round in 0..KILLS {
        let mut child = Command::new(&exe)
            .args([NAME, "--exact", "--test-threads=1"])
            .env("RPIV_KILL_WRITER", &path_s)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the writer");
        // Wait until the writer is about to save, then kill it within a few cycles of
        // saving (a save of the big list takes ~15 ms here, most of it fsync).
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
        let wait = next(&mut seed) % 60_000;
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
    }
    eprintln!(
        "kill test: {KILLS} kills; the file held the 300-task list {big} times, the 3-task list {small} times; {torn_writes} kills landed mid-save (temporary file left)"
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

#[test]
fn set_locale_with_persist_writes_the_choice_and_keeps_other_keys() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config");
    let file = config.join("rpiv-i18n").join("locale.json");
    let lua = lua_in(dir.path());
    lua.globals()
        .set("CONFIG", config.to_str().unwrap())
        .unwrap();
    let set = |code: &str| -> Value {
        lua_json(
            &lua,
            &format!(
                r#"local i18n = require("rpiv_todo.i18n")
                   i18n.set_env({{ XDG_CONFIG_HOME = CONFIG, RPIV_TODO_LOCALE = false, LC_ALL = false,
                                  LC_MESSAGES = false, LANG = false }})
                   local ok, err = todo.set_locale({code:?}, {{ persist = true }})
                   return {{ ok = ok or false, err = err or false, locale = todo.locale(),
                            file = i18n.locale_file() }}"#
            ),
        )
    };
    // No file, no directory yet: both are created.
    let got = set("de");
    assert_eq!(
        got,
        json!({"ok": true, "err": false, "locale": "de", "file": file.to_str().unwrap()})
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "{\n  \"locale\": \"de\"\n}\n"
    );
    // Another program's keys survive, in their order.
    std::fs::write(
        &file,
        r#"{"theme": "dark", "locale": "de", "plugins": {"x": [1, 2]}}"#,
    )
    .unwrap();
    assert_eq!(set("pt-BR")["ok"], true);
    let text = std::fs::read_to_string(&file).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v,
        json!({"theme": "dark", "locale": "pt-BR", "plugins": {"x": [1, 2]}})
    );
    assert!(
        text.find("theme") < text.find("locale") && text.find("locale") < text.find("plugins"),
        "{text}"
    );
    // A fresh state reads the choice back through the locale chain.
    let fresh = support::lua();
    let chosen: String = support::eval(
        &fresh,
        &format!(
            r#"local i18n = require("rpiv_todo.i18n")
               i18n.set_env({{ XDG_CONFIG_HOME = {:?}, RPIV_TODO_LOCALE = false, LC_ALL = false,
                              LC_MESSAGES = false, LANG = "ru_RU.UTF-8" }})
               return i18n.locale()"#,
            config.to_str().unwrap()
        ),
    );
    assert_eq!(chosen, "pt-BR");
    // An unknown code: refused, the locale stays, the file is byte for byte the same.
    let got = set("xx");
    assert_eq!(
        got,
        json!({"ok": false, "err": "unknown locale \"xx\" (expected one of de, en, es, fr, pt, pt-BR, ru, uk, zh)",
               "locale": "pt-BR", "file": file.to_str().unwrap()})
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    assert_eq!(
        std::fs::read_dir(file.parent().unwrap()).unwrap().count(),
        1,
        "no temporary file left"
    );
}

#[test]
fn set_locale_without_persist_writes_nothing_and_a_bad_option_raises() {
    let dir = tempfile::tempdir().unwrap();
    let lua = lua_in(dir.path());
    let got = lua_json(
        &lua,
        r#"local i18n = require("rpiv_todo.i18n")
           i18n.set_env({ XDG_CONFIG_HOME = DIR })
           local a = todo.set_locale("fr")
           local b = todo.set_locale("es", { persist = false })
           local ok, err = pcall(todo.set_locale, "de", { persist = "yes" })
           local ok2, err2 = pcall(todo.set_locale, "de", { save = true })
           return { a = a, b = b, locale = todo.locale(), err = err, err2 = err2 }"#,
    );
    assert_eq!(
        got,
        json!({"a": true, "b": true, "locale": "es",
               "err": "(rpiv_todo) set_locale.persist: expected a boolean",
               "err2": "(rpiv_todo) set_locale.save: unknown option (expected persist)"})
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_locale_file_that_is_not_an_object_is_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rpiv-i18n").join("locale.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "de\n").unwrap();
    let lua = lua_in(dir.path());
    let got = lua_json(
        &lua,
        r#"require("rpiv_todo.i18n").set_env({ XDG_CONFIG_HOME = DIR })
           local ok, err = todo.set_locale("uk", { persist = true })
           return { ok = ok == nil, err = err, locale = todo.locale() }"#,
    );
    assert_eq!(
        got,
        json!({"ok": true, "locale": "uk",
               "err": format!("{}: invalid JSON (expected value at line 1 column 1); left as it is", file.display())})
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "de\n");
}

#[test]
fn core_load_gives_the_kind_of_each_failure_as_a_third_result() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("bad.json"), "{").unwrap();
    std::fs::create_dir(d.join("dir.json")).unwrap();
    let fifo = d.join("pipe.json");
    let made = Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo makes the pipe");
    // 2 GiB, sparse: refused from its size.
    std::fs::File::create(d.join("huge.json"))
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let lua = lua_in(d);
    let got = lua_json(
        &lua,
        r#"local out = {}
           for _, name in ipairs({ "missing.json", "dir.json", "pipe.json", "huge.json",
                                   "bad.json", "bad.json/x" }) do
             local state, err, kind = core.load(DIR .. "/" .. name)
             out[#out + 1] = { name = name, state = state == nil, kind = kind,
                               err = err:sub(#DIR + 2) }
           end
           local l = core.list()
           l:apply({ action = "create", subject = "a" })
           assert(core.save(DIR .. "/good.json", l))
           local state, err, kind = core.load(DIR .. "/good.json")
           out[#out + 1] = { name = "good.json", state = #state.tasks, err = err or false,
                             kind = kind or false }
           return out"#,
    );
    assert_eq!(
        got,
        json!([
            {"name": "missing.json", "state": true, "kind": "missing",
             "err": "missing.json: no such file"},
            {"name": "dir.json", "state": true, "kind": "not_file",
             "err": "dir.json: cannot read: it is a directory"},
            {"name": "pipe.json", "state": true, "kind": "not_file",
             "err": "pipe.json: cannot read: it is a pipe (FIFO), not a regular file"},
            {"name": "huge.json", "state": true, "kind": "too_large",
             "err": "huge.json: larger than 67108864 bytes, the most this file may hold: not read"},
            {"name": "bad.json", "state": true, "kind": "invalid",
             "err": "bad.json: truncated JSON (the text stops at line 1, column 1)"},
            {"name": "bad.json/x", "state": true, "kind": "io",
             "err": "bad.json/x: cannot read: Not a directory (os error 20)"},
            {"name": "good.json", "state": 1, "err": false, "kind": false},
        ])
    );
}

/// The child side of the full-disk test: with the file size limit at 0 (set by the
/// parent's shell), save twice and print both messages, then what a persisting session
/// reported.
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
    assert_eq!(
        lines,
        [save_err, save_err, "reported 1"],
        "status {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    // Each failed save removed its temporary file.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
