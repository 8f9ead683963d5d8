//! The stdio transport: one JSON-RPC message a line, read on a thread of its own and
//! written by another, so that a slow reader or writer never holds the protocol up.
//!
//! What rmcp's own stdio transport leaves unanswered is answered here, as JSON-RPC 2.0
//! asks: a line that is not JSON (malformed, not UTF-8, nested past 128 levels, longer
//! than 16 MiB) gets −32700 with id null; a batch (an array) or a message that is no
//! JSON-RPC message gets −32600; a `tools/call` without a `name` or with `arguments` not
//! an object gets −32602 with its id. The server then reads the next line.
//!
//! Messages are written in the order they are handed over ([`Transport::send`] queues the
//! line before it returns). At the end of the input the transport waits for the replies
//! of the requests still running before it reports the end, so a client that writes its
//! requests and closes its side still gets every reply.

use std::collections::HashSet;
use std::io::{BufRead, Write};
use std::sync::{mpsc, Arc, Mutex};

use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::{json, Value};

/// The longest line read; a longer one is answered −32700 and skipped.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// What the writer thread is handed.
enum Out {
    /// A whole line, newline included.
    Line(Vec<u8>),
    /// Answer once everything before is written.
    Flush(mpsc::Sender<()>),
}

/// The ids of requests read and not yet answered (nor cancelled), and a signal at each
/// answer.
#[derive(Default)]
struct Pending {
    ids: Mutex<HashSet<String>>,
    answered: tokio::sync::Notify,
}

/// At the end of the input, how long the transport waits for the next of the replies still
/// due before it gives up on them (a call waits 2 s for a lock at most, so replies come
/// far more often while calls run; a request the service never answers must not keep the
/// process alive).
const LAST_REPLIES: std::time::Duration = std::time::Duration::from_secs(10);

impl Pending {
    fn insert(&self, id: &Value) {
        if let Ok(mut ids) = self.ids.lock() {
            ids.insert(id.to_string());
        }
    }

    fn remove(&self, id: &Value) {
        if let Ok(mut ids) = self.ids.lock() {
            if ids.remove(&id.to_string()) {
                self.answered.notify_waiters();
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.ids.lock().map(|ids| ids.is_empty()).unwrap_or(true)
    }
}

/// The transport rmcp's service runs on.
pub struct Stdio {
    incoming: tokio::sync::mpsc::Receiver<ClientJsonRpcMessage>,
    out: mpsc::Sender<Out>,
    pending: Arc<Pending>,
}

/// Waits for everything handed to the writer to be written.
pub struct Flusher(mpsc::Sender<Out>);

impl Flusher {
    /// Return once every line queued so far is written (or the output is gone).
    pub fn flush(&self) {
        let (tx, rx) = mpsc::channel();
        if self.0.send(Out::Flush(tx)).is_ok() {
            let _ = rx.recv();
        }
    }
}

/// Start reading `input` and writing `output`, each on a thread of its own.
pub fn start(
    input: impl std::io::Read + Send + 'static,
    output: impl Write + Send + 'static,
) -> std::io::Result<(Stdio, Flusher)> {
    let (out, lines) = mpsc::channel::<Out>();
    std::thread::Builder::new()
        .name("rpiv_todo stdout".into())
        .spawn(move || write_lines(output, lines))?;
    let (tx, incoming) = tokio::sync::mpsc::channel(64);
    let pending = Arc::new(Pending::default());
    let reader = Reader {
        out: out.clone(),
        tx,
        pending: pending.clone(),
    };
    std::thread::Builder::new()
        .name("rpiv_todo stdin".into())
        .spawn(move || reader.run(std::io::BufReader::with_capacity(1 << 16, input)))?;
    let flusher = Flusher(out.clone());
    Ok((
        Stdio {
            incoming,
            out,
            pending,
        },
        flusher,
    ))
}

/// The writer thread: each line as soon as it comes, those waiting together in one write.
fn write_lines(mut output: impl Write, lines: mpsc::Receiver<Out>) {
    let mut buf = Vec::new();
    let mut flushes = Vec::new();
    while let Ok(first) = lines.recv() {
        let mut next = Some(first);
        while let Some(item) = next.take() {
            match item {
                Out::Line(line) => buf.extend_from_slice(&line),
                Out::Flush(done) => flushes.push(done),
            }
            next = lines.try_recv().ok();
        }
        if !buf.is_empty() {
            let written = output.write_all(&buf).and_then(|()| output.flush());
            buf.clear();
            if written.is_err() {
                // The client is gone: nothing more can be said.
                return;
            }
        }
        for done in flushes.drain(..) {
            let _ = done.send(());
        }
    }
}

/// The reader thread's ends.
struct Reader {
    out: mpsc::Sender<Out>,
    tx: tokio::sync::mpsc::Sender<ClientJsonRpcMessage>,
    pending: Arc<Pending>,
}

/// A message's bearing on the requests awaiting replies.
#[derive(Debug, PartialEq)]
pub enum Track {
    /// A request: its reply is awaited.
    Request(Value),
    /// A cancellation of the request with this id: no reply comes.
    Cancel(Value),
    /// Neither.
    Nothing,
}

/// What one line is.
#[derive(Debug)]
pub enum Line {
    /// A message for the service, and what it means for the requests awaiting replies.
    Message(Box<ClientJsonRpcMessage>, Track),
    /// Answered here: the error reply.
    Refused(Value),
    /// Nothing to do (an empty line, a notification the server does not know).
    Skip,
}

impl Reader {
    fn run(self, mut input: impl BufRead) {
        let mut line = Vec::new();
        loop {
            match read_line(&mut input, &mut line) {
                Ok(Some(true)) => {}
                Ok(Some(false)) => {
                    self.refuse(parse_error(&format!(
                        "the line is longer than {MAX_LINE} bytes"
                    )));
                    continue;
                }
                Ok(None) | Err(_) => return,
            }
            match classify(&line) {
                Line::Message(message, track) => {
                    match track {
                        Track::Request(id) => self.pending.insert(&id),
                        Track::Cancel(id) => self.pending.remove(&id),
                        Track::Nothing => {}
                    }
                    if self.tx.blocking_send(*message).is_err() {
                        return;
                    }
                }
                Line::Refused(reply) => self.refuse(reply),
                Line::Skip => {}
            }
        }
    }

    fn refuse(&self, reply: Value) {
        let mut line = reply.to_string().into_bytes();
        line.push(b'\n');
        let _ = self.out.send(Out::Line(line));
    }
}

/// Read one line into `line` (without its newline). `Some(true)`: a line; `Some(false)`:
/// a line longer than [`MAX_LINE`], skipped; `None`: the end of the input.
fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<Option<bool>> {
    line.clear();
    let mut too_long = false;
    loop {
        let available = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            // A last line without a newline is a line too.
            return Ok((!line.is_empty() || too_long).then_some(!too_long));
        }
        let newline = available.iter().position(|&b| b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        let body = &available[..newline.unwrap_or(take)];
        if !too_long {
            if line.len() + body.len() > MAX_LINE {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(body);
            }
        }
        input.consume(take);
        if newline.is_some() {
            return Ok(Some(!too_long));
        }
    }
}

fn error_reply(id: Value, code: i32, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn parse_error(why: &str) -> Value {
    error_reply(Value::Null, -32700, &format!("Parse error: {why}"))
}

/// A request id as JSON-RPC allows it (a string or a number), else null.
fn valid_id(v: Option<&Value>) -> Value {
    match v {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    }
}

/// What one line (without its newline) is.
pub fn classify(line: &[u8]) -> Line {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Line::Skip;
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return Line::Refused(parse_error("the line is not valid UTF-8"));
    };
    // serde_json refuses nesting past 128 levels.
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return Line::Refused(parse_error(&e.to_string())),
    };
    let Value::Object(map) = &value else {
        let why = if value.is_array() {
            "Invalid Request: batches are not supported"
        } else {
            "Invalid Request: not a JSON-RPC message"
        };
        return Line::Refused(error_reply(Value::Null, -32600, why));
    };
    let id = map.get("id");
    let method = map.get("method").and_then(Value::as_str);
    if let (Some(id), Some("tools/call")) = (id, method) {
        if let Some(why) = call_params_error(map.get("params")) {
            return Line::Refused(error_reply(valid_id(Some(id)), -32602, &why));
        }
    }
    match serde_json::from_value::<ClientJsonRpcMessage>(value.clone()) {
        Ok(message) => {
            let track = match (id, method) {
                (Some(id), Some(_)) => Track::Request(id.clone()),
                (None, Some("notifications/cancelled")) => map
                    .get("params")
                    .and_then(|p| p.get("requestId"))
                    .map_or(Track::Nothing, |id| Track::Cancel(id.clone())),
                _ => Track::Nothing,
            };
            Line::Message(Box::new(message), track)
        }
        // A notification gets no reply, not even an error (one the server does not know
        // is ignored, as rmcp ignores it).
        Err(_) if id.is_none() && method.is_some() => Line::Skip,
        Err(e) => Line::Refused(error_reply(
            valid_id(id),
            -32600,
            &format!("Invalid Request: {e}"),
        )),
    }
}

/// Why a `tools/call`'s params are invalid, if they are.
fn call_params_error(params: Option<&Value>) -> Option<String> {
    let Some(Value::Object(params)) = params else {
        return Some("Invalid params: tools/call needs params with the tool's name".into());
    };
    match params.get("name") {
        Some(Value::String(_)) => {}
        None => return Some("Invalid params: name: missing (the tool's name)".into()),
        Some(_) => return Some("Invalid params: name: expected a string".into()),
    }
    match params.get("arguments") {
        None | Some(Value::Null) | Some(Value::Object(_)) => None,
        Some(other) => Some(format!(
            "Invalid params: arguments: expected an object, got {}",
            match other {
                Value::Array(_) => "an array",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                _ => "a boolean",
            }
        )),
    }
}

impl Transport<RoleServer> for Stdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let result = serde_json::to_vec(&item)
            .map_err(std::io::Error::other)
            .and_then(|mut line| {
                line.push(b'\n');
                self.out
                    .send(Out::Line(line))
                    .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))
            });
        let answered = match &item {
            JsonRpcMessage::Response(r) => Some(&r.id),
            JsonRpcMessage::Error(e) => e.id.as_ref(),
            _ => None,
        };
        if let Some(id) = answered.and_then(|id| serde_json::to_value(id).ok()) {
            self.pending.remove(&id);
        }
        std::future::ready(result)
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        if let Some(message) = self.incoming.recv().await {
            return Some(message);
        }
        // The input ended: the replies still to come are sent before the end is told.
        loop {
            let answered = self.pending.answered.notified();
            if self.pending.is_empty() {
                return None;
            }
            if tokio::time::timeout(LAST_REPLIES, answered).await.is_err() {
                return None;
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(line: &[u8]) -> Value {
        match classify(line) {
            Line::Refused(v) => v,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn bad_lines_are_answered() {
        for (line, code) in [
            (&b"{"[..], -32700),
            (b"\xff\xfe{}", -32700),
            (b"[]", -32600),
            (
                b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
                -32600,
            ),
            (b"42", -32600),
        ] {
            let got = refused(line);
            assert_eq!(got["error"]["code"], code, "{got}");
            assert_eq!(got["id"], Value::Null, "{got}");
            assert_eq!(got["jsonrpc"], "2.0");
        }
        let deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
        assert_eq!(refused(deep.as_bytes())["error"]["code"], -32700);
        let ok = format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"_meta\":{{\"x\":{}1{}}}}}}}", "[".repeat(100), "]".repeat(100));
        assert!(matches!(classify(ok.as_bytes()), Line::Message(..)));
    }

    #[test]
    fn a_call_without_a_name_or_with_bad_arguments_is_invalid_params() {
        for (params, want) in [
            (json!({}), "Invalid params: name: missing (the tool's name)"),
            (
                json!({"name": 3}),
                "Invalid params: name: expected a string",
            ),
            (
                json!({"name": "todo", "arguments": [1]}),
                "Invalid params: arguments: expected an object, got an array",
            ),
            (
                json!({"name": "todo", "arguments": "{}"}),
                "Invalid params: arguments: expected an object, got a string",
            ),
        ] {
            let line =
                json!({"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": params});
            let got = refused(line.to_string().as_bytes());
            assert_eq!(got["error"]["code"], -32602, "{got}");
            assert_eq!(got["error"]["message"], want);
            assert_eq!(got["id"], "a");
        }
        let line =
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "todo"}});
        assert!(matches!(
            classify(line.to_string().as_bytes()),
            Line::Message(..)
        ));
        assert!(matches!(classify(b"  \r"), Line::Skip));
        // A notification is never answered, not even when it is malformed.
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#),
            Line::Skip
        ));
    }

    #[test]
    fn long_lines_are_skipped_and_reading_goes_on() {
        let mut text = vec![b'x'; MAX_LINE + 1];
        text.extend_from_slice(b"\nnext\nlast");
        let mut input = std::io::BufReader::with_capacity(4096, &text[..]);
        let mut line = Vec::new();
        assert_eq!(read_line(&mut input, &mut line).unwrap(), Some(false));
        assert_eq!(read_line(&mut input, &mut line).unwrap(), Some(true));
        assert_eq!(line, b"next");
        assert_eq!(read_line(&mut input, &mut line).unwrap(), Some(true));
        assert_eq!(line, b"last");
        assert_eq!(read_line(&mut input, &mut line).unwrap(), None);
        let exact = vec![b'y'; MAX_LINE];
        let mut input = std::io::BufReader::new(&exact[..]);
        assert_eq!(read_line(&mut input, &mut line).unwrap(), Some(true));
        assert_eq!(line.len(), MAX_LINE);
    }
}
