//! The names of the list files that the editor's `persist = true` and the MCP server share:
//! one file per key (the working directory) and session id, `<key part>@<id part>.json`.
//!
//! Each part is its text with every byte outside `[A-Za-z0-9._-]` written as `%XX`
//! (`/home/me/project`, session `default`: `%2Fhome%2Fme%2Fproject@default.json`). A part
//! longer than its limit once escaped (the key 120 bytes, the id 64) is `~` and the SHA-256
//! of the text in lowercase hex. The escaping is one-to-one and never writes `~`, so two
//! keys or ids share a name only if they share a SHA-256. The longest name is 191 bytes.
//!
//! Lua has the same functions as `core.file_name`, `core.key_prefix`, `core.parse_name`
//! and `core.sha256` (`rpiv_todo.persist` uses them), so every program names a list's file
//! by this one code.

use sha2::{Digest, Sha256};

/// The longest escaped key kept readable in a file name; a longer one is hashed.
pub const MAX_KEY: usize = 120;

/// The longest escaped session id kept readable in a file name; a longer one is hashed.
pub const MAX_ID: usize = 64;

/// The SHA-256 of `data`, as 64 lowercase hex digits.
pub fn sha256(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

/// Is `b` kept as it is in a name part?
fn plain(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')
}

/// `s` with every byte outside `[A-Za-z0-9._-]` written as `%XX` (uppercase hex).
pub fn escape(s: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(s.len());
    for &b in s {
        if plain(b) {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(DIGITS[usize::from(b >> 4)]));
            out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
        }
    }
    out
}

/// One part of a name: the escaped text, or `~` and its SHA-256 when longer than `limit`.
fn part(s: &[u8], limit: usize) -> String {
    let escaped = escape(s);
    if escaped.len() <= limit {
        escaped
    } else {
        format!("~{}", sha256(s))
    }
}

/// What every file name of `key`'s lists starts with (`<key part>@`).
pub fn key_prefix(key: &[u8]) -> String {
    let mut out = part(key, MAX_KEY);
    out.push('@');
    out
}

/// The file name of session `id`'s list under `key`.
pub fn file_name(key: &[u8], id: &[u8]) -> String {
    let mut out = key_prefix(key);
    out.push_str(&part(id, MAX_ID));
    out.push_str(".json");
    out
}

/// A name `file_name` may have written, read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed<'a> {
    /// The key part, as in the name.
    pub key_part: &'a [u8],
    /// The id part, as in the name.
    pub id_part: &'a [u8],
    /// The session id, unescaped; `None` when it was hashed (`~`).
    pub id: Option<Vec<u8>>,
}

/// Read a file name written by [`file_name`]: `<key part>@<id part>.json`, where neither
/// part is empty nor holds `@`, and the key part does not start with `.` (temporary
/// files and locks do). `None` for any other name (temporary files, files moved aside).
/// Every `%XX` of the id part is unescaped.
pub fn parse_name(name: &[u8]) -> Option<Parsed<'_>> {
    let stem = name.strip_suffix(b".json")?;
    let at = stem.iter().position(|&b| b == b'@')?;
    let (key_part, id_part) = (&stem[..at], &stem[at + 1..]);
    if key_part.is_empty()
        || id_part.is_empty()
        || id_part.contains(&b'@')
        || key_part.first() == Some(&b'.')
    {
        return None;
    }
    let id = (id_part.first() != Some(&b'~')).then(|| unescape(id_part));
    Some(Parsed {
        key_part,
        id_part,
        id,
    })
}

/// Every `%` followed by two hex digits (either case) as the byte they name; anything
/// else as it is.
fn unescape(s: &[u8]) -> Vec<u8> {
    fn digit(b: u8) -> Option<u8> {
        char::from(b)
            .to_digit(16)
            .and_then(|d| u8::try_from(d).ok())
    }
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' {
            if let (Some(hi), Some(lo)) = (
                s.get(i + 1).copied().and_then(digit),
                s.get(i + 2).copied().and_then(digit),
            ) {
                out.push(hi << 4 | lo);
                i += 3;
                continue;
            }
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_known_answers() {
        // FIPS 180-2 appendix B and the empty string.
        assert_eq!(
            sha256(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha256(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
    }

    #[test]
    fn names_are_escaped_or_hashed() {
        assert_eq!(
            file_name(b"/home/me/project", b"default"),
            "%2Fhome%2Fme%2Fproject@default.json"
        );
        assert_eq!(
            file_name(b"C:\\w x", b"chat@1"),
            "C%3A%5Cw%20x@chat%401.json"
        );
        assert_eq!(file_name(b"k", b"\xff\x00~"), "k@%FF%00%7E.json");
        let long = "/".repeat(41); // 123 bytes escaped
        assert_eq!(
            file_name(long.as_bytes(), b"default"),
            format!("~{}@default.json", sha256(long.as_bytes()))
        );
        let id64 = "i".repeat(64);
        assert_eq!(
            file_name(b"/p", id64.as_bytes()),
            format!("%2Fp@{id64}.json")
        );
        let id65 = "i".repeat(65);
        assert_eq!(
            file_name(b"/p", id65.as_bytes()),
            format!("%2Fp@~{}.json", sha256(id65.as_bytes()))
        );
        // 120 escaped bytes stay; 121 are hashed. The longest name is 191 bytes.
        assert_eq!(key_prefix("k".repeat(120).as_bytes()).len(), 121);
        assert!(key_prefix("k".repeat(121).as_bytes()).starts_with('~'));
        assert_eq!(
            file_name("k".repeat(500).as_bytes(), "i".repeat(500).as_bytes()).len(),
            1 + 64 + 1 + 1 + 64 + 5
        );
        assert_eq!(
            file_name("k".repeat(120).as_bytes(), "i".repeat(64).as_bytes()).len(),
            190
        );
        assert_eq!(
            file_name("k".repeat(120).as_bytes(), "i".repeat(65).as_bytes()).len(),
            191
        );
    }

    #[test]
    fn names_read_back() {
        let got = parse_name(b"%2Fp@chat%401.json").unwrap();
        assert_eq!(got.key_part, b"%2Fp");
        assert_eq!(got.id_part, b"chat%401");
        assert_eq!(got.id.as_deref(), Some(&b"chat@1"[..]));
        let hashed = format!("k@~{}.json", sha256(b"x"));
        assert_eq!(parse_name(hashed.as_bytes()).unwrap().id, None);
        assert_eq!(parse_name(b".%2Fp@x.json.abc123.tmp"), None);
        assert_eq!(parse_name(b".%2Fp@x.json"), None);
        assert_eq!(parse_name(b"a@b@c.json"), None);
        assert_eq!(parse_name(b"@b.json"), None);
        assert_eq!(parse_name(b"a@.json"), None);
        assert_eq!(parse_name(b"a@b.json.unreadable-1"), None);
        let got = parse_name(b"a@b.json.json").unwrap();
        assert_eq!(got.id.as_deref(), Some(&b"b.json"[..]));
        // `%` not followed by two hex digits stays; lowercase hex is read too.
        let got = parse_name(b"a@%4g%41%ff%.json").unwrap();
        assert_eq!(got.id.as_deref(), Some(&b"%4gA\xff%"[..]));
        for id in [&b"default"[..], b"chat 1/2", b"\x00\xfe%41"] {
            let name = file_name(b"/k", id);
            assert_eq!(parse_name(name.as_bytes()).unwrap().id.as_deref(), Some(id));
        }
    }
}
