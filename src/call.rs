//! One tool call from arguments to reply: parse JSON text, check the schema, reduce. Both
//! argument paths of the boundary end here (Lua tables arrive already converted to a JSON
//! value); the JSON path also writes its result here, so a front end that deals in text
//! never builds a Lua table.

use serde_json::Value;

use crate::error::Error;
use crate::json::TaskJson;
use crate::params::Params;
use crate::reducer::{self, Reply};
use crate::task::State;

/// Arguments as JSON text: a JSON value, or the error the reply names.
pub fn parse(text: &[u8]) -> Result<Value, Error> {
    let text = std::str::from_utf8(text)
        .map_err(|_| Error::input("arguments", "UTF-8 JSON text", "bytes that are not UTF-8"))?;
    serde_json::from_str(text).map_err(|e| Error::Json(e.to_string()))
}

/// Check the arguments and apply them; a malformed call is an in-band error reply.
pub fn run(state: &mut State, parsed: Result<&Value, Error>) -> Reply {
    match parsed.and_then(Params::from_value) {
        Ok(p) => reducer::apply(state, &p),
        Err(e) => Reply::error(e.to_string()),
    }
}

/// Arguments as JSON text, the whole result `{ content, details }` as JSON text. Text that
/// does not parse is echoed as `{}`.
#[cfg(test)]
pub(crate) fn call_json(state: &mut State, text: &[u8]) -> Vec<u8> {
    let (reply, echo) = reduce_json(state, text);
    let mut out = Vec::with_capacity(result_capacity(state));
    crate::json::write_result(&mut out, &reply.text, reply.error.as_deref(), &echo, state);
    out
}

/// `call_json` for a list that keeps its tasks' JSON text between calls (`TaskJson`):
/// the same bytes, written mostly by copying.
pub fn call_json_cached(state: &mut State, cache: &mut TaskJson, text: &[u8]) -> Vec<u8> {
    let (reply, echo) = reduce_json(state, text);
    let mut out = Vec::with_capacity(result_capacity(state));
    cache.write_result(&mut out, &reply.text, reply.error.as_deref(), &echo, state);
    out
}

/// A reply as `call_json_cached` writes it, for a call already reduced.
pub fn write_json(cache: &mut TaskJson, state: &State, reply: &Reply, echo: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(result_capacity(state));
    cache.write_result(&mut out, &reply.text, reply.error.as_deref(), echo, state);
    out
}

/// May these arguments change the list (an action that writes)? A call that is then
/// rejected changes nothing; one that is not is never one of these.
pub fn writes(value: &Value) -> bool {
    matches!(
        value.get("action").and_then(Value::as_str),
        Some("create" | "update" | "delete" | "clear")
    )
}

fn reduce_json(state: &mut State, text: &[u8]) -> (Reply, Value) {
    match parse(text) {
        Ok(value) => (run(state, Ok(&value)), value),
        Err(e) => (
            Reply::error(e.to_string()),
            Value::Object(Default::default()),
        ),
    }
}

/// Room for a result's JSON text: measured on w1, a task takes ~105 bytes, so one
/// allocation usually suffices.
fn result_capacity(state: &State) -> usize {
    256 + state.tasks.len() * 128
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(state: &mut State, text: &str) -> Value {
        serde_json::from_slice(&call_json(state, text.as_bytes())).unwrap()
    }

    #[test]
    fn json_text_in_json_text_out() {
        let mut s = State::default();
        let out = call(&mut s, r#"{"action":"create","subject":"a","extra":[1]}"#);
        assert_eq!(
            out,
            serde_json::json!({
                "content": [{"type": "text", "text": "Created #1: a (pending)"}],
                "details": {"action": "create", "params": {"action": "create", "subject": "a", "extra": [1]},
                    "tasks": [{"id": 1, "subject": "a", "status": "pending"}], "nextId": 2}
            })
        );
        let out = call(&mut s, "{");
        assert_eq!(out["details"]["params"], serde_json::json!({}));
        assert_eq!(out["details"]["action"], Value::Null);
        assert!(out["details"]["error"]
            .as_str()
            .unwrap()
            .starts_with("arguments: "));
        assert_eq!(s.tasks.len(), 1);
    }

    /// The cached writer gives byte for byte what serde_json gives, over every recorded
    /// call (one list, so the cache sees creates, updates, deletes and clears).
    #[test]
    fn the_cached_result_is_byte_identical_on_every_recorded_call() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/reducer-traces.jsonl");
        let text = std::fs::read_to_string(&path).unwrap();
        let (mut plain, mut cached, mut cache) =
            (State::default(), State::default(), TaskJson::default());
        let mut n = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let trace: Value = serde_json::from_str(line).unwrap();
            for step in trace["steps"].as_array().unwrap() {
                let args = step["params"].to_string();
                let want = call_json(&mut plain, args.as_bytes());
                let got = call_json_cached(&mut cached, &mut cache, args.as_bytes());
                assert_eq!(
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&want)
                );
                n += 1;
            }
        }
        assert_eq!(n, 6825);
        // Metadata differing only in key order is a change: written again, in its order.
        let mut s = State::default();
        let mut cache = TaskJson::default();
        call_json_cached(
            &mut s,
            &mut cache,
            br#"{"action":"create","subject":"a","metadata":{"x":1,"y":2}}"#,
        );
        let out = call_json_cached(
            &mut s,
            &mut cache,
            br#"{"action":"update","id":1,"metadata":{"y":2,"x":1}}"#,
        );
        let want = call_json(&mut s.clone(), br#"{"action":"list"}"#);
        let tasks =
            |b: &[u8]| serde_json::from_slice::<Value>(b).unwrap()["details"]["tasks"].to_string();
        assert_eq!(tasks(&out), tasks(&want));
        assert!(tasks(&out).contains(r#"{"x":1,"y":2}"#), "{}", tasks(&out));
    }
}
