//! The list the server's calls run on, kept in its shared file, on a thread of its own.
//!
//! Every `tools/call` is one [`SharedFile::transact`] on the file, run by the core with the
//! arguments the protocol side already parsed (no Lua). The calls run one at a time, in the
//! order they arrived, on the list thread: a call that waits for another program's lock
//! waits there, while the protocol side goes on answering pings and cancellations. A call
//! cancelled before its change is written writes nothing. What happens is what
//! `rpiv_todo.persist` did for the server before (the same file, restore, move aside,
//! messages on stderr, `wait_ms = 2000`), so the reply is the same, byte for byte.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use rpiv_todo::journal::{Before, Mark, Writer};
use rpiv_todo::json::TaskJson;
use rpiv_todo::reducer::Reply;
use rpiv_todo::shared::SharedFile;
use rpiv_todo::task::State;
use serde_json::Value;

/// How long a call waits for another program's lock: an agent's call may wait for an
/// editor's save (the editor's own calls wait 100 ms at most).
pub const WAIT: Duration = Duration::from_millis(2000);

/// One session's list in its file, and what the server remembers between calls.
pub struct List {
    file: SharedFile,
    state: State,
    /// The tasks' JSON text, reused between calls (`structuredContent`).
    json: TaskJson,
    /// This server as a writer of the list (no name: "another program" to the others).
    writer: Writer,
    /// Where the list's record of changes stood after this server's last call.
    last: Option<Mark>,
    session: String,
    structured: bool,
    /// Messages already written to stderr (each is written once).
    reported: HashSet<String>,
    /// The replies of changes saved although their calls were cancelled meanwhile (after
    /// the write): never sent, so the next reply says them.
    unsent: Vec<String>,
    /// The file's generation after this server's last read or write (the resource's watch
    /// tells its own writes from another program's by it).
    own: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl List {
    /// The list of session `session` in the file at `path`, restored from it: a missing
    /// file is an empty list; a file that is not a list is moved aside and an empty list
    /// saved in its place; any other failure leaves the file alone, and every change is
    /// refused in-band until it reads.
    pub fn open(path: PathBuf, session: &str, structured: bool) -> List {
        let mut list = List {
            file: SharedFile::new(path, WAIT),
            state: State::default(),
            json: TaskJson::default(),
            writer: Writer::new(None),
            last: None,
            session: session.to_string(),
            structured,
            reported: HashSet::new(),
            unsent: Vec::new(),
            own: Default::default(),
        };
        match list.file.sync(&mut list.state) {
            Ok(_) => {}
            Err(e) if e.kind() == "invalid" => {
                // Moved aside by the write, which then saves the empty list in its place.
                let _ = list.file.write_over(&list.state);
            }
            Err(e) => {
                let message = format!(
                    "{e}; session {} is not saved until the file reads again",
                    list.session
                );
                list.report(message);
            }
        }
        list.drain();
        list.own
            .store(list.file.generation(), std::sync::atomic::Ordering::SeqCst);
        list
    }

    /// One tool call: `args` are its arguments (a JSON object). `cancelled` is asked, under
    /// the lock and just before a change would be written: when it says yes, nothing is
    /// written (the reply is then not sent). Asked again once the change is saved: a call
    /// cancelled in between keeps its change, and the next reply says so.
    pub fn call(&mut self, args: &Value, cancelled: &dyn Fn() -> bool) -> CallToolResult {
        let writes = rpiv_todo::call::writes(args);
        let writer = &self.writer;
        let mut wrote = false;
        let outcome = self
            .file
            .transact_with(&mut self.state, writes, |state, journal| {
                let before = writes.then(|| Before::of(state, args));
                let reply = rpiv_todo::call::run(state, Ok(args));
                let changed = reply.error.is_none() && !(writes && cancelled());
                if let (Some(before), true) = (&before, changed) {
                    journal.record(writer, before, state);
                }
                wrote = writes && changed;
                (reply, changed)
            });
        let reply = match outcome {
            Ok(reply) if wrote && cancelled() => {
                // Saved, and cancelled since: this reply is never sent. The next one says
                // what it said (and, the mark kept, what others changed since).
                self.unsent.push(reply.text.replace('\n', "; "));
                reply
            }
            Ok(mut reply) => {
                // What other writers changed since this server's last call, if anything.
                let journal = self.file.journal();
                let mark = journal.mark();
                let note = self
                    .last
                    .as_ref()
                    .and_then(|last| journal.note(&self.writer, last));
                self.last = Some(mark);
                if let Some(note) = note {
                    reply.text.push('\n');
                    reply.text.push_str(&note);
                }
                for text in self.unsent.drain(..) {
                    reply.text.push_str(
                        "\n(A call you cancelled was saved before the cancellation arrived: ",
                    );
                    reply.text.push_str(&text);
                    reply.text.push_str(".)");
                }
                reply
            }
            Err(e) => Reply::error(e.to_string()),
        };
        self.drain();
        self.own
            .store(self.file.generation(), std::sync::atomic::Ordering::SeqCst);
        if self.structured {
            let out = rpiv_todo::call::write_json(&mut self.json, &self.state, &reply, args);
            let result = serde_json::from_slice(&out).unwrap_or(Value::Null);
            answer(&result, true)
        } else {
            text_answer(reply.text, reply.error.is_some())
        }
    }

    /// The file's generation after this server's last call, as it changes.
    pub fn own_generation(&self) -> std::sync::Arc<std::sync::atomic::AtomicU64> {
        std::sync::Arc::clone(&self.own)
    }

    /// Name this server as a writer of the list after its client (at most 64 bytes, on a
    /// character boundary); its id, and so what it was told, stays.
    pub fn name_writer(&mut self, by: Option<String>) {
        let by = by.map(|mut name| {
            let mut end = name.len().min(64);
            while !name.is_char_boundary(end) {
                end -= 1;
            }
            name.truncate(end);
            name
        });
        if self.writer.name != by {
            self.writer.name = by;
        }
    }

    /// Write on stderr what the file noticed (a failed save, a file moved aside).
    fn drain(&mut self) {
        for message in self.file.take_notices() {
            self.report(message);
        }
    }

    /// A message on stderr (the stdio transport's log channel), once per distinct text.
    fn report(&mut self, message: String) {
        let message = format!("(rpiv_todo) persist: {message}");
        if self.reported.insert(message.clone()) {
            eprintln!("{message}");
        }
    }
}

/// A call for the list thread: its arguments, whether it was cancelled, where its result
/// goes.
pub struct Job {
    /// The client's name (its `clientInfo.name`), which names this server as a writer.
    pub by: Option<String>,
    pub args: Value,
    pub cancelled: Box<dyn Fn() -> bool + Send>,
    pub reply: tokio::sync::oneshot::Sender<CallToolResult>,
}

/// Run the list thread: each job in the order it was sent, until every sender is gone. A
/// job whose caller is gone (cancelled, or the server stopping) before it starts is
/// skipped.
pub fn spawn(list: List) -> std::io::Result<(mpsc::Sender<Job>, std::thread::JoinHandle<()>)> {
    let (tx, rx) = mpsc::channel::<Job>();
    let handle = std::thread::Builder::new()
        .name("rpiv_todo list".into())
        .spawn(move || {
            let mut list = list;
            for job in rx {
                if job.reply.is_closed() || (job.cancelled)() {
                    continue;
                }
                list.name_writer(job.by);
                let result = list.call(&job.args, &*job.cancelled);
                let _ = job.reply.send(result);
            }
        })?;
    Ok((tx, handle))
}

/// The reply text as the one content block, `isError` when the call was rejected.
fn text_answer(text: String, rejected: bool) -> CallToolResult {
    if rejected {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    }
}

/// The MCP result of one tool result (`{ content, details }`): the reply text as content,
/// `isError` when the call was rejected, and with `structured` the text and the details as
/// `structuredContent`, text first.
pub fn answer(result: &Value, structured: bool) -> CallToolResult {
    let text = result
        .pointer("/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let details = match result.get("details") {
        Some(Value::Object(map)) => map.clone(),
        _ => JsonObject::new(),
    };
    let rejected = details.get("error").is_some_and(|e| !e.is_null());
    let mut answer = text_answer(text.clone(), rejected);
    if structured {
        let mut content = JsonObject::new();
        content.insert("text".to_string(), Value::String(text));
        for (key, value) in details {
            if key != "text" {
                content.insert(key, value);
            }
        }
        answer.structured_content = Some(Value::Object(content));
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("rpiv_todo_mcp-list-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The replies and the saved file are byte for byte what the Lua path gave (the list
    /// bound to the file as rpiv_todo.persist binds it, `list:apply_json`), with another
    /// program changing the file between calls, in both forms of the result.
    #[test]
    fn the_replies_are_the_lua_paths() {
        use rpiv_todo::mlua::{Lua, Table};
        let calls = [
            r#"{"action":"create","subject":"a","description":"d","metadata":{"z":1,"a":[1,{"b":null}]}}"#,
            r#"{"action":"list"}"#,
            r#"{"action":"update","id":1,"status":"in_progress","addBlockedBy":[9]}"#,
            r#"{"action":"create","subject":"b","blockedBy":[1]}"#,
            r#"{"action":"bogus","x":1.5e300}"#,
            r#"{"action":"get","id":2}"#,
            r#"{}"#,
            r#"{"action":"update","id":2,"status":"completed","extra":"\u00e9\u0000"}"#,
            r#"{"action":"delete","id":1}"#,
            r#"{"action":"clear"}"#,
            r#"{"action":"create","subject":"c"}"#,
        ];
        for structured in [false, true] {
            let dir = scratch(&format!("lua-{structured}"));
            let (ours, theirs) = (dir.join("ours.json"), dir.join("theirs.json"));
            let lua = Lua::new();
            rpiv_todo::preload(&lua).unwrap();
            let core: Table = lua
                .load(r#"return require("rpiv_todo.core")"#)
                .eval()
                .unwrap();
            let bind = |path: &PathBuf| -> rpiv_todo::mlua::AnyUserData {
                let list: rpiv_todo::mlua::AnyUserData = core
                    .get::<rpiv_todo::mlua::Function>("list")
                    .unwrap()
                    .call(())
                    .unwrap();
                lua.load("local l, p = ...; l:bind(p, { wait_ms = 2000 }); l:sync()")
                    .call::<()>((list.clone(), path.to_str().unwrap()))
                    .unwrap();
                list
            };
            let (lua_list, lua_other) = (bind(&theirs), bind(&theirs));
            let mut list = List::open(ours.clone(), "default", structured);
            let rust_other = bind(&ours);
            let mut noted = 0;
            for (i, text) in calls.iter().enumerate() {
                if i % 3 == 2 {
                    // Another program (a second handle on each file) changes the list.
                    let other = format!(r#"{{"action":"create","subject":"other {i}"}}"#);
                    for handle in [&lua_other, &rust_other] {
                        lua.load("local l, t = ...; l:apply_json(t)")
                            .call::<()>((handle.clone(), other.clone()))
                            .unwrap();
                    }
                }
                let want: String = lua
                    .load("local l, t = ...; return l:apply_json(t)")
                    .call((lua_list.clone(), *text))
                    .unwrap();
                let want = answer(&serde_json::from_str(&want).unwrap(), structured);
                let args: Value = serde_json::from_str(text).unwrap();
                let got = list.call(&args, &|| false);
                let text = serde_json::to_value(&got).unwrap()["content"][0]["text"].clone();
                noted += usize::from(text.as_str().unwrap().contains("\n"));
                assert_eq!(
                    serde_json::to_string(&got).unwrap(),
                    serde_json::to_string(&want).unwrap(),
                    "call {i} ({text}), structured {structured}"
                );
            }
            let strip = |p: &PathBuf| {
                let v: Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
                (v["tasks"].clone(), v["nextId"].clone())
            };
            assert_eq!(strip(&ours), strip(&theirs));
            // The other program's changes were told (a line after the reply).
            assert!(noted >= 3, "{noted}");
            let _ = std::fs::remove_dir_all(&dir);
        }
    }

    #[test]
    fn a_cancelled_change_is_not_written() {
        let dir = scratch("cancel");
        let path = dir.join("l.json");
        let mut list = List::open(path.clone(), "default", false);
        let create = serde_json::json!({"action": "create", "subject": "a"});
        list.call(&create, &|| false);
        let before = std::fs::read(&path).unwrap();
        let got = list.call(&create, &|| true);
        assert_eq!(
            serde_json::to_value(&got).unwrap()["content"][0]["text"],
            "Created #2: a (pending)"
        );
        assert_eq!(std::fs::read(&path).unwrap(), before);
        let listed = list.call(&serde_json::json!({"action": "list"}), &|| true);
        let text = serde_json::to_value(&listed).unwrap()["content"][0]["text"].clone();
        assert!(text.as_str().unwrap().contains("#1"), "{text}");
        assert!(!text.as_str().unwrap().contains("#2"), "{text}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_change_cancelled_after_its_write_stands_and_the_next_reply_says_so() {
        let dir = scratch("late-cancel");
        let path = dir.join("l.json");
        let mut list = List::open(path.clone(), "default", false);
        // Not cancelled when asked under the lock, cancelled once saved.
        let asked = std::cell::Cell::new(0);
        let late = || {
            asked.set(asked.get() + 1);
            asked.get() > 1
        };
        list.call(
            &serde_json::json!({"action": "create", "subject": "a"}),
            &late,
        );
        let saved: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(saved["tasks"][0]["subject"], "a");
        let text = |r: CallToolResult| {
            serde_json::to_value(&r).unwrap()["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_string()
        };
        let next = list.call(&serde_json::json!({"action": "get", "id": 1}), &|| false);
        assert!(text(next).ends_with(
            "\n(A call you cancelled was saved before the cancellation arrived: \
                 Created #1: a (pending).)"
        ),);
        // Said once.
        let after = list.call(&serde_json::json!({"action": "get", "id": 1}), &|| false);
        assert!(!text(after).contains("cancelled"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_unreadable_file_is_moved_aside_and_replaced() {
        let dir = scratch("aside");
        let path = dir.join("l.json");
        std::fs::write(&path, b"not a list").unwrap();
        let mut list = List::open(path.clone(), "default", false);
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().any(|n| n.starts_with("l.json.unreadable-")),
            "{names:?}"
        );
        let saved: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(saved["tasks"], serde_json::json!([]));
        let got = list.call(
            &serde_json::json!({"action": "create", "subject": "x"}),
            &|| false,
        );
        assert_eq!(
            serde_json::to_value(&got).unwrap()["content"][0]["text"],
            "Created #1: x (pending)"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
