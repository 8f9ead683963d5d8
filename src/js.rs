//! JSON values as JavaScript sees them: `JSON.stringify` equality, which compares object
//! keys in JavaScript's order (integer-like keys ascending, then the rest in insertion
//! order) and numbers by value. The reducer's "No change" check uses it.

use serde_json::{Map, Value};

/// Equality as `JSON.stringify(a) === JSON.stringify(b)` decides it: object keys in
/// JavaScript's order (integer-like keys ascending, then the rest in insertion order),
/// numbers by value.
pub fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => equal_maps(x, y),
        _ => a == b,
    }
}

/// `equal` for two objects.
pub fn equal_maps(x: &Map<String, Value>, y: &Map<String, Value>) -> bool {
    x.len() == y.len()
        && js_key_order(x)
            .zip(js_key_order(y))
            .all(|((k1, v1), (k2, v2))| k1 == k2 && equal(v1, v2))
}

/// A JavaScript array index: the canonical decimal form of an integer below 2^32 - 1.
fn array_index(key: &str) -> Option<u32> {
    let n: u32 = key.parse().ok()?;
    (n != u32::MAX && n.to_string() == key).then_some(n)
}

fn js_key_order(m: &Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
    let mut indexed: Vec<(u32, (&String, &Value))> = m
        .iter()
        .filter_map(|kv| array_index(kv.0).map(|n| (n, kv)))
        .collect();
    indexed.sort_by_key(|(n, _)| *n);
    indexed
        .into_iter()
        .map(|(_, kv)| kv)
        .chain(m.iter().filter(|(k, _)| array_index(k).is_none()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn js_equality_follows_stringify_key_order() {
        assert!(equal(&json!({"a": 1, "b": 2}), &json!({"a": 1, "b": 2})));
        assert!(!equal(&json!({"a": 1, "b": 2}), &json!({"b": 2, "a": 1})));
        // Integer-like keys always come first, in ascending order.
        assert!(equal(
            &json!({"b": 1, "10": 2, "2": 3}),
            &json!({"2": 3, "b": 1, "10": 2})
        ));
        assert!(!equal(&json!({"b": 1, "01": 2}), &json!({"01": 2, "b": 1})));
        assert!(equal(&json!([1, 2.0]), &json!([1.0, 2])));
    }
}
