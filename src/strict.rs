//! The strict form of the tool's arguments, the one OpenAI's strict mode accepts: every
//! property present, `null` for "not given", and the free-form metadata written as JSON
//! text. [`to_normal`] turns such a call into the normal form; the call then takes the
//! path of every other call (the schema checks of `params.rs`, the reducer, the one
//! envelope), so the two forms cannot disagree about what they accept. The metadata text
//! is read by serde_json like any JSON text argument: integers stay exact, a lone
//! surrogate escape is refused, a raw DEL byte is text like any other.

use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// What a strict call's metadata text must spell.
const METADATA_TEXT: &str = "a JSON object written as text";

/// A strict-form call in the normal form: top-level nulls are dropped ("not given"), and
/// metadata given as text becomes the object it spells (its nulls kept: on update they
/// delete keys). Blank text and the text `null` mean no metadata. A call in the normal
/// form passes through unchanged, and so does anything that is not an object (the normal
/// checks name what is wrong with it). Metadata text that does not spell an object is
/// the one error of its own, naming the field.
pub fn to_normal(value: Value) -> Result<Value> {
    let Value::Object(map) = value else {
        return Ok(value);
    };
    Ok(Value::Object(normal_object(map, "")?))
}

/// One object of a strict call (the arguments, or an item of `tasks`) in the normal form;
/// `prefix` goes before a field's name in an error (`tasks[2].`).
fn normal_object(map: Map<String, Value>, prefix: &str) -> Result<Map<String, Value>> {
    let mut out = Map::with_capacity(map.len());
    for (key, v) in map {
        match v {
            Value::Null => {}
            Value::String(text) if key == "metadata" => {
                if let Some(meta) = metadata(&text, &format!("{prefix}metadata"))? {
                    out.insert(key, meta);
                }
            }
            // The batch form's items are strict objects too; only at the top (items do
            // not nest), and anything that is not an object is left for the normal checks.
            Value::Array(items) if key == "tasks" && prefix.is_empty() => {
                let mut normal = Vec::with_capacity(items.len());
                for (i, item) in items.into_iter().enumerate() {
                    normal.push(match item {
                        Value::Object(m) => Value::Object(normal_object(
                            m,
                            &format!("tasks[{}].", i.saturating_add(1)),
                        )?),
                        other => other,
                    });
                }
                out.insert(key, Value::Array(normal));
            }
            v => {
                out.insert(key, v);
            }
        }
    }
    Ok(out)
}

/// A strict-form call given as JSON text, in the normal form. Text that is not JSON is
/// the same error as in the normal form.
#[cfg(test)]
fn to_normal_text(text: &[u8]) -> Result<Value> {
    crate::call::parse(text).and_then(to_normal)
}

/// The object a metadata text spells; `None` for blank text or `null`.
fn metadata(text: &str, field: &str) -> Result<Option<Value>> {
    // Blank as Lua's `%s` has it: JSON's whitespace plus \v, \f.
    let trimmed = text.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c'));
    if trimmed.is_empty() || trimmed == "null" {
        return Ok(None);
    }
    let got = match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => return Ok(Some(v)),
        Ok(Value::Array(_)) => "an array".to_owned(),
        Ok(Value::Number(_)) => "a number".to_owned(),
        Ok(Value::String(_)) => "a string".to_owned(),
        Ok(Value::Bool(_)) => "a boolean".to_owned(),
        Ok(Value::Null) => return Ok(None),
        Err(e) => format!("text that is not JSON ({e})"),
    };
    Err(Error::input(field, METADATA_TEXT, got))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::{call_json, run};
    use crate::task::State;
    use serde_json::json;

    /// A strict call as JSON text through the conversion and the normal path; the
    /// result as `call_json` writes it for the normal-form text.
    fn strict_call(state: &mut State, text: &str) -> Value {
        match to_normal_text(text.as_bytes()) {
            Ok(normal) => {
                serde_json::from_slice(&call_json(state, normal.to_string().as_bytes())).unwrap()
            }
            Err(e) => {
                let reply = run(state, Err(e));
                json!({ "error": reply.error, "text": reply.text })
            }
        }
    }

    fn normal_call(state: &mut State, text: &str) -> Value {
        serde_json::from_slice(&call_json(state, text.as_bytes())).unwrap()
    }

    #[test]
    fn nulls_are_not_given_and_metadata_text_is_the_object() {
        let got = to_normal(json!({
            "action": "update", "id": 1, "subject": null, "status": null,
            "metadata": "{\"a\":null,\"b\":[1,{}]}", "other": null
        }))
        .unwrap();
        assert_eq!(
            got,
            json!({"action": "update", "id": 1, "metadata": {"a": null, "b": [1, {}]}})
        );
        for blank in ["", "  \t\n", "null", " null \x0b"] {
            let got = to_normal(json!({"action": "list", "metadata": blank})).unwrap();
            assert_eq!(got, json!({"action": "list"}), "{blank:?}");
        }
        // The normal form and non-objects pass through.
        let normal = json!({"action": "update", "id": 2, "metadata": {"k": 1}});
        assert_eq!(to_normal(normal.clone()).unwrap(), normal);
        assert_eq!(to_normal(json!([1])).unwrap(), json!([1]));
    }

    #[test]
    fn the_items_of_tasks_are_strict_objects_too() {
        let got = to_normal(json!({
            "action": "update", "id": null, "metadata": null,
            "tasks": [
                {"id": 1, "status": "completed", "subject": null, "metadata": null},
                {"id": 2, "status": null, "subject": "B", "metadata": "{\"k\":null}"},
                "not an object",
            ]
        }))
        .unwrap();
        assert_eq!(
            got,
            json!({"action": "update", "tasks": [
                {"id": 1, "status": "completed"},
                {"id": 2, "subject": "B", "metadata": {"k": null}},
                "not an object",
            ]})
        );
        let err = to_normal(
            json!({"action": "create", "tasks": [{"subject": "a"}, {"metadata": "[1]"}]}),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "tasks[2].metadata: expected a JSON object written as text, got an array"
        );
        // A strict batch runs like the normal one.
        let mut strict = State::default();
        let text = r#"{"action":"create","subject":null,"tasks":[{"subject":"a","id":null,"metadata":"{\"x\":1}"},{"subject":"b","blockedBy":[1],"metadata":""}]}"#;
        let out = strict_call(&mut strict, text);
        assert_eq!(
            out["content"][0]["text"],
            "Created #1: a (pending)\nCreated #2: b (pending)"
        );
        assert_eq!(
            strict.tasks[0].metadata,
            Some(json!({"x": 1}).as_object().unwrap().clone())
        );
        assert_eq!(strict.tasks[1].blocked_by(), &[1]);
    }

    #[test]
    fn metadata_text_that_is_no_object_is_refused_naming_the_field() {
        let cases = [
            (
                "[1]",
                "metadata: expected a JSON object written as text, got an array",
            ),
            (
                "7",
                "metadata: expected a JSON object written as text, got a number",
            ),
            (
                "\"x\"",
                "metadata: expected a JSON object written as text, got a string",
            ),
            (
                "true",
                "metadata: expected a JSON object written as text, got a boolean",
            ),
            (
                "{area: 1}",
                "metadata: expected a JSON object written as text, got text that is not JSON \
                 (key must be a string at line 1 column 2)",
            ),
        ];
        for (text, want) in cases {
            let err = to_normal(json!({"action": "update", "id": 1, "metadata": text}));
            assert_eq!(err.unwrap_err().to_string(), want, "{text}");
        }
    }

    /// Integers past 2^53 (and past 2^63) are kept exact, as the normal form keeps them.
    #[test]
    fn big_metadata_integers_stay_exact_in_both_forms() {
        let (mut strict, mut normal) = (State::default(), State::default());
        let meta = r#"{"n":9007199254740993,"m":18446744073709551615,"k":-9223372036854775808}"#;
        let strict_text = format!(
            r#"{{"action":"create","subject":"a","metadata":{},"owner":null}}"#,
            serde_json::to_string(meta).unwrap()
        );
        let out = strict_call(&mut strict, &strict_text);
        assert_eq!(out["content"][0]["text"], "Created #1: a (pending)");
        normal_call(
            &mut normal,
            &format!(r#"{{"action":"create","subject":"a","metadata":{meta}}}"#),
        );
        let stored = serde_json::to_string(&strict).unwrap();
        assert!(stored.contains(meta), "{stored}");
        assert_eq!(stored, serde_json::to_string(&normal).unwrap());
    }

    /// A raw DEL byte inside a string is text in both forms (sanitize drops it on output).
    #[test]
    fn a_raw_del_byte_is_accepted_in_both_forms() {
        let (mut strict, mut normal) = (State::default(), State::default());
        let out = strict_call(
            &mut strict,
            "{\"action\":\"create\",\"subject\":\"a\x7fb\",\"metadata\":\"{\\\"k\\\":\\\"x\x7fy\\\"}\"}",
        );
        assert_eq!(out["content"][0]["text"], "Created #1: ab (pending)");
        let out = normal_call(
            &mut normal,
            "{\"action\":\"create\",\"subject\":\"a\x7fb\",\"metadata\":{\"k\":\"x\x7fy\"}}",
        );
        assert_eq!(out["content"][0]["text"], "Created #1: ab (pending)");
        assert_eq!(strict.tasks[0].subject, "a\x7fb");
        assert_eq!(
            serde_json::to_string(&strict).unwrap(),
            serde_json::to_string(&normal).unwrap()
        );
    }

    /// A lone surrogate escape is refused in both forms: in the call's text, and in the
    /// metadata text (never stored as U+FFFD).
    #[test]
    fn a_lone_surrogate_escape_is_refused_in_both_forms() {
        let mut normal = State::default();
        let out = normal_call(
            &mut normal,
            r#"{"action":"create","subject":"a","metadata":{"k":"\ud800"}}"#,
        );
        assert_eq!(
            out["details"]["error"],
            "arguments: expected a JSON object, got text that does not parse \
             (unexpected end of hex escape at line 1 column 57)"
        );
        let mut strict = State::default();
        let out = strict_call(
            &mut strict,
            r#"{"action":"create","subject":"a\udc00","metadata":null}"#,
        );
        assert_eq!(
            out["error"],
            "arguments: expected a JSON object, got text that does not parse \
             (lone leading surrogate in hex escape at line 1 column 37)"
        );
        let out = strict_call(
            &mut strict,
            r#"{"action":"create","subject":"a","metadata":"{\"k\":\"\\ud800\"}"}"#,
        );
        assert_eq!(
            out["error"],
            "metadata: expected a JSON object written as text, got text that is not JSON \
             (unexpected end of hex escape at line 1 column 13)"
        );
        assert!(normal.tasks.is_empty() && strict.tasks.is_empty());
    }
}
