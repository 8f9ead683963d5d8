//! The server binary over raw stdio, as a client's process sees it: what reaches stdout,
//! the error codes, the order of replies, and a call waiting for another process's lock.
//! Unix only (the lock is taken with flock, as the core takes it there).
#![cfg(unix)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

/// How long a test waits for a line before it fails (a guard against a hang, not a
/// measure: every reply here comes in milliseconds).
const PATIENCE: Duration = Duration::from_secs(60);

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    stderr: std::thread::JoinHandle<String>,
    dir: PathBuf,
}

/// A scratch folder: `state/` for the lists, `work/` the server's working directory,
/// `config/` its XDG config home (so the user's own config is never read).
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rpiv_todo_mcp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for sub in ["state", "work", "config/rpiv_todo"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    dir.canonicalize().unwrap()
}

impl Server {
    fn start(dir: &Path, args: &[&str]) -> Server {
        // RPIV_TODO_MCP_BIN: another build to run these tests against (an older one).
        let bin = std::env::var_os("RPIV_TODO_MCP_BIN")
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_rpiv_todo_mcp").into());
        let mut child = Command::new(bin)
            .arg("--state-dir")
            .arg(dir.join("state"))
            .args(args)
            .current_dir(dir.join("work"))
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut stderr = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Server {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
            dir: dir.to_path_buf(),
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, message: Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.write(&line);
    }

    /// The next line on stdout, which must be a JSON-RPC message.
    fn recv(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(PATIENCE)
            .expect("a line from the server");
        let value: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line:?}"));
        assert_eq!(value["jsonrpc"], "2.0", "{line}");
        value
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let reply = self.recv();
        assert_eq!(reply["id"], id, "{reply}");
        reply
    }

    fn initialize(&mut self, version: &str) -> Value {
        let reply = self.request(
            0,
            "initialize",
            json!({"protocolVersion": version, "capabilities": {},
                   "clientInfo": {"name": "protocol test", "version": "1"}}),
        );
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        reply
    }

    fn call(id: i64, arguments: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "todo", "arguments": arguments}})
    }

    /// Close stdin; every line left on stdout (each a JSON-RPC message), the exit status
    /// and stderr.
    fn finish(mut self) -> (Vec<Value>, bool, String) {
        drop(self.stdin.take());
        let mut rest = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(PATIENCE) {
            let value: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line:?}"));
            rest.push(value);
        }
        let status = self.child.wait().unwrap();
        let stderr = self.stderr.join().unwrap();
        let _ = std::fs::remove_dir_all(&self.dir);
        (rest, status.success(), stderr)
    }

    /// The list file this server keeps (the one the editor's persist = true names).
    fn list_file(&self) -> PathBuf {
        let key = self.dir.join("work");
        self.dir.join("state").join(rpiv_todo::naming::file_name(
            key.to_str().unwrap().as_bytes(),
            b"default",
        ))
    }
}

fn text(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

#[test]
fn what_a_config_prints_goes_to_stderr_never_stdout() {
    let dir = scratch("print");
    std::fs::write(
        dir.join("config/rpiv_todo/mcp.lua"),
        "print('from print')\nio.write('from io.write\\n')\n\
         io.stdout:write('from io.stdout\\n')\nos.execute('echo from a command')\n",
    )
    .unwrap();
    let mut server = Server::start(&dir, &[]);
    let init = server.initialize("2025-11-25");
    assert_eq!(init["result"]["serverInfo"]["name"], "rpiv_todo");
    let reply = server.request(
        1,
        "tools/call",
        Server::call(1, json!({"action": "list"}))["params"].clone(),
    );
    assert_eq!(text(&reply), "No tasks");
    // Every line on stdout is a message (finish and recv parse each one).
    let (rest, ok, stderr) = server.finish();
    assert_eq!(rest, Vec::<Value>::new());
    assert!(ok);
    for want in [
        "from print",
        "from io.write",
        "from io.stdout",
        "from a command",
    ] {
        assert!(stderr.contains(want), "{want:?} not on stderr: {stderr:?}");
    }
}

#[test]
fn a_ping_is_answered_and_a_cancellation_heard_while_a_call_waits_for_the_lock() {
    let dir = scratch("lock");
    let mut server = Server::start(&dir, &[]);
    server.initialize("2025-11-25");
    let created = server.request(
        1,
        "tools/call",
        json!({"name": "todo", "arguments": {"action": "create", "subject": "first"}}),
    );
    assert_eq!(text(&created), "Created #1: first (pending)");
    // Another process (this test) holds the list's lock.
    let list = server.list_file();
    let mut name = std::ffi::OsString::from(".");
    name.push(list.file_name().unwrap());
    name.push(".lock");
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(list.with_file_name(name))
        .unwrap();
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive).unwrap();
    server.send(Server::call(
        2,
        json!({"action": "create", "subject": "cancelled"}),
    ));
    // The call waits for the lock; the ping is answered first.
    server.send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    let reply = server.recv();
    assert_eq!(reply["id"], 3, "{reply}");
    assert_eq!(reply["result"], json!({}));
    server.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": {"requestId": 2, "reason": "the user stopped it"}}),
    );
    let reply = server.request(4, "ping", json!({}));
    assert_eq!(reply["result"], json!({}));
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::Unlock).unwrap();
    // The cancelled call wrote nothing and got no reply: the next reply is the next call's.
    let listed = server.request(
        5,
        "tools/call",
        json!({"name": "todo", "arguments": {"action": "list"}}),
    );
    assert!(text(&listed).contains("[pending] #1 first"), "{listed}");
    assert!(!text(&listed).contains("cancelled"), "{listed}");
    let saved = std::fs::read_to_string(&list).unwrap();
    assert!(
        saved.contains("first") && !saved.contains("cancelled"),
        "{saved}"
    );
    let created = server.request(
        6,
        "tools/call",
        json!({"name": "todo", "arguments": {"action": "create", "subject": "second"}}),
    );
    assert_eq!(text(&created), "Created #2: second (pending)");
    let (rest, ok, stderr) = server.finish();
    assert_eq!((rest, ok, stderr.as_str()), (vec![], true, ""));
}

#[test]
fn pipelined_calls_are_answered_in_the_order_they_were_saved() {
    let dir = scratch("order");
    let mut server = Server::start(&dir, &[]);
    server.initialize("2025-11-25");
    let mut batch = Vec::new();
    for i in 1..=200 {
        let call = Server::call(i, json!({"action": "create", "subject": format!("t{i}")}));
        batch.extend_from_slice(call.to_string().as_bytes());
        batch.push(b'\n');
    }
    server.write(&batch);
    for i in 1..=200 {
        let reply = server.recv();
        assert_eq!(reply["id"], i, "{reply}");
        assert_eq!(text(&reply), format!("Created #{i}: t{i} (pending)"));
    }
    let saved: Value = serde_json::from_slice(&std::fs::read(server.list_file()).unwrap()).unwrap();
    assert_eq!(saved["tasks"].as_array().unwrap().len(), 200);
    assert_eq!(saved["nextId"], 201);
    let (rest, ok, stderr) = server.finish();
    assert_eq!((rest, ok, stderr.as_str()), (vec![], true, ""));
}

#[test]
fn protocol_errors_get_their_codes_and_the_server_goes_on() {
    let dir = scratch("errors");
    let mut server = Server::start(&dir, &[]);
    // 2025-03-26 (batches) is not served: the newest revision with initialize instead.
    let init = server.initialize("2025-03-26");
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    let mut long = vec![b' '; 16 * 1024 * 1024];
    long.extend_from_slice(b"{}\n");
    let deep = format!("{}{}\n", "[".repeat(200), "]".repeat(200));
    let lines: [(&[u8], i64); 6] = [
        (b"{\"jsonrpc\":\"2.0\",\"id\":1,\n", -32700),
        (b"\xff\xfe\n", -32700),
        (deep.as_bytes(), -32700),
        (&long, -32700),
        (
            b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n",
            -32600,
        ),
        (b"[]\n", -32600),
    ];
    for (i, (line, code)) in lines.iter().enumerate() {
        server.write(line);
        let reply = server.recv();
        assert_eq!(reply["error"]["code"], *code, "line {i}: {reply}");
        assert_eq!(reply["id"], Value::Null, "line {i}: {reply}");
        // Still serving.
        let pong = server.request(100 + i as i64, "ping", json!({}));
        assert_eq!(pong["result"], json!({}));
    }
    for (id, params) in [
        (10, json!({"arguments": {"action": "list"}})),
        (11, json!({"name": "todo", "arguments": [1, 2]})),
        (
            12,
            json!({"name": "todo", "arguments": "{\"action\":\"list\"}"}),
        ),
    ] {
        let reply = server.request(id, "tools/call", params);
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
    }
    let reply = server.request(13, "tools/list", json!({"cursor": "next"}));
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    let reply = server.request(14, "tools/list", json!({}));
    let tool = &reply["result"]["tools"][0];
    assert_eq!(tool["name"], "todo");
    assert_eq!(tool["title"], "Todo");
    assert_eq!(
        tool["annotations"],
        json!({"title": "Todo", "readOnlyHint": false, "destructiveHint": true,
               "idempotentHint": false, "openWorldHint": false})
    );
    assert_eq!(reply["result"].get("nextCursor"), None);
    // A model's malformed arguments are the tool's in-band error, not the protocol's.
    let reply = server.request(
        15,
        "tools/call",
        json!({"name": "todo", "arguments": {"action": "create"}}),
    );
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert!(text(&reply).starts_with("Error: "), "{reply}");
    let (rest, ok, stderr) = server.finish();
    assert_eq!((rest, ok, stderr.as_str()), (vec![], true, ""));
}

#[test]
fn a_client_that_closes_its_side_at_once_still_gets_every_reply() {
    let dir = scratch("eof");
    let mut server = Server::start(&dir, &[]);
    server.initialize("2025-11-25");
    let mut batch = Vec::new();
    for i in 1..=30 {
        let call = Server::call(i, json!({"action": "create", "subject": format!("t{i}")}));
        batch.extend_from_slice(call.to_string().as_bytes());
        batch.push(b'\n');
    }
    server.write(&batch);
    let (rest, ok, stderr) = server.finish();
    assert_eq!((ok, stderr.as_str()), (true, ""));
    let ids: Vec<i64> = rest
        .iter()
        .map(|r| r["id"].as_i64().unwrap_or(-1))
        .collect();
    assert_eq!(ids, (1..=30).collect::<Vec<i64>>());
    assert_eq!(text(&rest[29]), "Created #30: t30 (pending)");
}

#[test]
fn the_resource_is_offered_only_when_asked_for() {
    // By default: no resources capability, none listed, a read refused; the tool works.
    let dir = scratch("no-resources");
    let mut server = Server::start(&dir, &[]);
    let init = server.initialize("2025-11-25");
    let capabilities = &init["result"]["capabilities"];
    assert_eq!(capabilities.get("resources"), None, "{init}");
    assert!(capabilities["tools"].is_object(), "{init}");
    let reply = server.request(1, "resources/list", json!({}));
    assert_eq!(reply["result"]["resources"], json!([]), "{reply}");
    let reply = server.request(2, "resources/read", json!({"uri": "todo://list/default"}));
    assert_eq!(reply["error"]["code"], -32002, "{reply}");
    let reply = server.request(
        3,
        "tools/call",
        json!({"name": "todo", "arguments": {"action": "create", "subject": "a"}}),
    );
    assert_eq!(text(&reply), "Created #1: a (pending)", "{reply}");
    let (rest, ok, stderr) = server.finish();
    assert_eq!((rest, ok, stderr.as_str()), (vec![], true, ""));
    // With --resources, or the config's { resources = true }: offered, with subscribe.
    for (name, args, config) in [
        ("resources-flag", &["--resources"][..], None),
        (
            "resources-config",
            &[][..],
            Some("return { resources = true }"),
        ),
    ] {
        let dir = scratch(name);
        if let Some(text) = config {
            std::fs::write(dir.join("config/rpiv_todo/mcp.lua"), text).unwrap();
        }
        let mut server = Server::start(&dir, args);
        let init = server.initialize("2025-11-25");
        assert_eq!(
            init["result"]["capabilities"]["resources"]["subscribe"], true,
            "{name}: {init}"
        );
        let reply = server.request(1, "resources/list", json!({}));
        assert_eq!(
            reply["result"]["resources"][0]["uri"], "todo://list/default",
            "{name}: {reply}"
        );
        let (_, ok, stderr) = server.finish();
        assert_eq!((ok, stderr.as_str()), (true, ""), "{name}");
    }
}
