//! One tool call from arguments to reply: parse JSON text, check the schema, reduce. Both
//! argument paths of the boundary end here (Lua tables arrive already converted to a JSON
//! value); the JSON path also writes its result here, so a front end that deals in text
//! never builds a Lua table.

use serde_json::Value;

use crate::error::Error;
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
pub fn call_json(state: &mut State, text: &[u8]) -> Vec<u8> {
    let (reply, echo) = match parse(text) {
        Ok(value) => (run(state, Ok(&value)), value),
        Err(e) => (
            Reply::error(e.to_string()),
            Value::Object(Default::default()),
        ),
    };
    let mut out = Vec::with_capacity(result_capacity(state));
    crate::json::write_result(&mut out, &reply.text, reply.error.as_deref(), &echo, state);
    out
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
}
