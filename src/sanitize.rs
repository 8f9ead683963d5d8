//! Sanitize model-written text before it reaches a terminal or the model.
//!
//! The TypeScript original (rpiv-todo) runs a chain of JavaScript regex replaces over every string. Recovered from
//! `tests/fixtures/sanitize-cases.jsonl`, in this order:
//!
//! 1. CSI: `(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]` -> "" (so `ESC [ [` is a whole CSI with final `[`)
//! 2. OSC: `(?:\x1b\]|\x9d)[^\x07\x9c\x1b]*(?:\x07|\x9c|\x1b\\)?` -> "" (an ESC that is not
//!    `ESC \` ends the payload without being eaten; no terminator at all eats the rest)
//! 3. other ESC pairs: `\x1b.` -> "" (`.` is JS's: anything but `\n`, `\r`, U+2028, U+2029,
//!    so `ESC \n` leaves the newline)
//! 4. `[\t\n\r\u2028\u2029]` -> " ", then C0, DEL and C1 controls -> ""
//! 5. bidi controls U+200E, U+200F, U+202A-U+202E, U+2066-U+2069 -> ""
//!
//! Each pass sees the output of the previous one (CSI removed inside an OSC payload lets the
//! payload run on; `ESC ESC [31m` loses the CSI first and then the lone ESC pair rule never
//! sees `ESC ESC`). We run the passes as a chain of streaming stages in one walk over the
//! input, which gives the same result as the sequential replaces without intermediate strings.
//!
//! One deliberate deviation: JS's `.` (no `u` flag) matches one UTF-16 unit, so `ESC` followed
//! by an astral character (an emoji) would leave a lone surrogate behind. A Rust string cannot
//! hold one; we drop the whole character.

use std::borrow::Cow;

/// Strip terminal escapes, control characters and bidi controls; turn line breaks and tabs
/// into spaces. Returns the input borrowed when there is nothing to change.
pub fn sanitize(input: &str) -> Cow<'_, str> {
    let Some(first) = first_special(input.as_bytes()) else {
        return Cow::Borrowed(input);
    };
    let mut out = String::with_capacity(input.len());
    out.push_str(&input[..first]);
    let mut tail = Tail {
        out,
        osc: Osc::Text,
        esc_pending: false,
    };

    // Stage 1 (CSI) reads the input slice directly: a failed attempt only needs a lookahead
    // over ASCII parameter bytes, which cannot start another match, so it never backtracks.
    let rest = &input[first..];
    let bytes = rest.as_bytes();
    let mut i = 0;
    while let Some(c) = rest[i..].chars().next() {
        let params_at = match c {
            '\x1b' if bytes.get(i + 1) == Some(&b'[') => Some(i + 2),
            '\u{9b}' => Some(i + 2),
            _ => None,
        };
        if let Some(end) = params_at.and_then(|at| csi_end(bytes, at)) {
            i = end;
            continue;
        }
        tail.push(c);
        i += c.len_utf8();
    }
    Cow::Owned(tail.finish())
}

/// What people see: `sanitize`, and U+061C ARABIC LETTER MARK dropped as well. The
/// original's list of bidi controls misses it (a recorded case keeps it, so `sanitize`
/// and `core.sanitize` do too); replies, the overlay and `/todos` go through this instead,
/// so every Bidi_Control character is gone from what a person reads.
pub fn display(input: &str) -> Cow<'_, str> {
    const ALM: char = '\u{61c}';
    // Most text is printable ASCII: one pass settles it.
    if input.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Cow::Borrowed(input);
    }
    match sanitize(input) {
        Cow::Borrowed(s) if !s.contains(ALM) => Cow::Borrowed(s),
        Cow::Borrowed(s) => Cow::Owned(s.replace(ALM, "")),
        Cow::Owned(s) if s.contains(ALM) => Cow::Owned(s.replace(ALM, "")),
        owned => owned,
    }
}

/// True when JavaScript's `String.prototype.trim()` would return "" for `s`.
pub fn js_trim_is_empty(s: &str) -> bool {
    s.chars().all(is_js_whitespace)
}

/// JS `WhiteSpace` and `LineTerminator` (what `trim` removes). Unlike `char::is_whitespace`
/// this includes U+FEFF and excludes U+0085.
fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{d}'
            | ' '
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
            | '\u{feff}'
    )
}

/// Byte offset of the first character any pass could touch, or None for clean text.
/// Looks at UTF-8 bytes: C1 controls are `C2 80..9F`, U+200E/F, U+2028..U+202E are
/// `E2 80 xx` and U+2066..U+2069 are `E2 81 A6..A9`.
fn first_special(b: &[u8]) -> Option<usize> {
    b.iter().enumerate().position(|(i, &c)| match c {
        0x00..=0x1f | 0x7f => true,
        0xc2 => matches!(b.get(i + 1), Some(0x80..=0x9f)),
        0xe2 => matches!(
            (b.get(i + 1), b.get(i + 2)),
            (Some(0x80), Some(0x8e | 0x8f | 0xa8..=0xae)) | (Some(0x81), Some(0xa6..=0xa9))
        ),
        _ => false,
    })
}

/// End (exclusive) of `[0-?]*[ -/]*[@-~]` starting at `at`, if it matches there.
/// The three classes are disjoint, so the greedy walk is the only way to match.
fn csi_end(b: &[u8], mut at: usize) -> Option<usize> {
    while matches!(b.get(at), Some(0x30..=0x3f)) {
        at += 1;
    }
    while matches!(b.get(at), Some(0x20..=0x2f)) {
        at += 1;
    }
    match b.get(at) {
        Some(0x40..=0x7e) => Some(at + 1),
        _ => None,
    }
}

/// Where stage 2 (OSC) stands.
#[derive(Clone, Copy)]
enum Osc {
    Text,
    /// An ESC was seen in text; `]` would open an OSC.
    Esc,
    /// Inside an OSC payload (dropped).
    Payload,
    /// An ESC inside the payload; `\` ends the OSC, anything else ends it before the ESC.
    PayloadEsc,
}

/// Stages 2 to 5, fed one character at a time with the output of stage 1.
struct Tail {
    out: String,
    osc: Osc,
    /// Stage 3 saw an ESC and waits for the character it may swallow.
    esc_pending: bool,
}

impl Tail {
    /// Stage 2: OSC. The loop re-feeds a character at most twice (PayloadEsc -> Esc -> Text).
    fn push(&mut self, c: char) {
        loop {
            match self.osc {
                Osc::Text => match c {
                    '\x1b' => self.osc = Osc::Esc,
                    '\u{9d}' => self.osc = Osc::Payload,
                    _ => self.esc_pair(c),
                },
                Osc::Esc => {
                    if c == ']' {
                        self.osc = Osc::Payload;
                    } else {
                        self.osc = Osc::Text;
                        self.esc_pair('\x1b');
                        continue;
                    }
                }
                Osc::Payload => match c {
                    '\x07' | '\u{9c}' => self.osc = Osc::Text,
                    '\x1b' => self.osc = Osc::PayloadEsc,
                    _ => {}
                },
                Osc::PayloadEsc => {
                    if c == '\\' {
                        self.osc = Osc::Text;
                    } else {
                        // The OSC ended before this ESC, which now starts over in text.
                        self.osc = Osc::Esc;
                        continue;
                    }
                }
            }
            return;
        }
    }

    /// Stage 3: `ESC .` is dropped; ESC before a line terminator is left alone (stage 4
    /// drops it as a control).
    fn esc_pair(&mut self, c: char) {
        if self.esc_pending {
            self.esc_pending = false;
            if matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}') {
                self.chars(c);
            }
        } else if c == '\x1b' {
            self.esc_pending = true;
        } else {
            self.chars(c);
        }
    }

    /// Stages 4 and 5: per-character rules, so they merge into one.
    fn chars(&mut self, c: char) {
        match c {
            '\t' | '\n' | '\r' | '\u{2028}' | '\u{2029}' => self.out.push(' '),
            '\0'..='\x1f' | '\x7f'..='\u{9f}' => {}
            '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {}
            _ => self.out.push(c),
        }
    }

    fn finish(mut self) -> String {
        // A trailing ESC still held by stage 2 goes on to stage 3, which drops a lone ESC.
        if matches!(self.osc, Osc::Esc | Osc::PayloadEsc) {
            self.esc_pair('\x1b');
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every recorded case of the reference, byte for byte.
    #[test]
    fn conformance_cases_match_the_reference() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/sanitize-cases.jsonl"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let mut count = 0;
        let mut failures = Vec::new();
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let case: serde_json::Value = serde_json::from_str(line).unwrap();
            let input = case["in"].as_str().unwrap();
            let want = case["out"].as_str().unwrap();
            let got = sanitize(input);
            if got != want {
                failures.push(format!(
                    "line {}: {:?} -> {:?}, want {:?}",
                    n + 1,
                    input,
                    got,
                    want
                ));
            }
            count += 1;
        }
        assert_eq!(count, 133, "case count changed");
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    fn check(cases: &[(&str, &str)]) {
        for (input, want) in cases {
            assert_eq!(sanitize(input), *want, "input {:?}", input);
        }
    }

    #[test]
    fn clean_text_is_borrowed_unchanged() {
        for s in [
            "",
            "plain",
            "日本語 🚀 🇺🇸 e\u{301} ├─",
            "\u{a0}\u{200b}\u{200d}\u{61c}\u{206a}",
        ] {
            assert!(matches!(sanitize(s), Cow::Borrowed(b) if b == s), "{:?}", s);
        }
    }

    #[test]
    fn changed_text_is_owned() {
        assert!(matches!(sanitize("a\tb"), Cow::Owned(_)));
    }

    #[test]
    fn csi_sequences_are_dropped_whole() {
        check(&[
            ("\x1b[31mred\x1b[0m", "red"),
            ("\x1b[?25l", ""),
            ("\x1b[ q", ""),       // intermediate byte then final
            ("\x1b[[A", "A"),      // `[` is itself a final byte
            ("\u{9b}1;2H", ""),    // 8-bit CSI introducer
            ("\x1b[1 2m", "1 2m"), // parameter after intermediate: no CSI, ESC [ pair goes
        ]);
    }

    #[test]
    fn incomplete_csi_loses_only_its_introducer() {
        check(&[
            ("\x1b[31", "31"),
            ("x\u{9b}31", "x31"),
            ("\x1b[3\u{200e}1m", "31m"), // bidi removal comes after the CSI pass
        ]);
    }

    #[test]
    fn csi_pass_runs_once_and_before_the_others() {
        // CSI goes first, then the ESC left behind pairs with what follows.
        check(&[
            ("\x1b\x1b[31m]x", ""),  // ESC ] after CSI removal is an OSC eating the rest
            ("\x1b[\x1b[31mm", "m"), // the joined `ESC [ m` is not rescanned by the CSI pass
        ]);
    }

    #[test]
    fn osc_terminators_end_the_payload() {
        check(&[
            ("\x1b]0;title\x07after", "after"),
            ("\x1b]2;t\u{9c}after", "after"),
            ("pre\x1b]1;x\x1b\\post", "prepost"),
            ("\u{9d}0;c1 st\u{9c}after", "after"), // 8-bit OSC introducer
            ("\x1b]0;a\nb\x07c", "c"),             // newlines are payload too
        ]);
    }

    #[test]
    fn unterminated_osc_eats_the_rest() {
        check(&[
            ("\x1b]0;unterminated tail", ""),
            ("\x1b]", ""),
            ("c1[\u{9d}]", "c1["),
        ]);
    }

    #[test]
    fn escape_inside_osc_payload_ends_it_without_being_eaten() {
        check(&[
            ("\x1b]0;ab\x1bXcd", "cd"),
            ("\x1b]a\x1b]b\x07c", "c"), // the ESC opens a second OSC
            ("\x1b]a\x1b", ""),
        ]);
    }

    #[test]
    fn csi_inside_osc_payload_is_removed_first() {
        check(&[("tool\x1b]0;x\x1b[38;5;196m\x1b[?25ly", "tool")]);
    }

    #[test]
    fn other_escape_pairs_are_dropped() {
        check(&[
            ("\x1bc", ""),
            ("\x1b(B", "B"),
            ("\x1b\x1b", ""),
            ("\x1b space", "space"),
            ("\x1b\u{4e2d}\u{6587}", "\u{6587}"),
            ("\x1b\x1b\x1bX", ""), // pairs left to right: (ESC ESC)(ESC X)
            ("\x1b\x1b\x1b\x1bX", "X"),
            ("\x1b", ""),
        ]);
    }

    #[test]
    fn escape_before_a_line_terminator_keeps_the_terminator() {
        check(&[
            ("\x1b\n", " "),
            ("\x1b\r", " "),
            ("\x1b\u{2028}x", " x"),
            ("write\x1b\u{2029}fix", "write fix"),
        ]);
    }

    #[test]
    fn escape_before_an_astral_character_drops_the_whole_character() {
        // Deviation: JS would leave a lone surrogate here.
        check(&[("\x1b\u{1f680}x", "x")]);
    }

    #[test]
    fn line_breaks_and_tabs_become_spaces() {
        check(&[
            ("\n\r\t", "   "),
            ("a\u{2028}b\u{2029}c", "a b c"),
            ("\r\n", "  "),
        ]);
    }

    #[test]
    fn controls_are_dropped() {
        check(&[
            ("c0[\0\x01\x07\x08\x0b\x0c\x1f]", "c0[]"),
            ("del[\x7f]", "del[]"),
            ("c1[\u{80}\u{85}\u{90}\u{9c}\u{9f}]", "c1[]"),
        ]);
    }

    #[test]
    fn bidi_controls_are_dropped_and_other_format_characters_kept() {
        check(&[
            (
                "\u{200e}\u{200f}\u{202a}\u{202b}\u{202c}\u{202d}\u{202e}x",
                "x",
            ),
            ("\u{2066}\u{2067}\u{2068}\u{2069}y", "y"),
            (
                "\u{61c}\u{200b}\u{200d}\u{2065}\u{206a}\u{a0}",
                "\u{61c}\u{200b}\u{200d}\u{2065}\u{206a}\u{a0}",
            ),
        ]);
    }

    #[test]
    fn display_also_drops_the_arabic_letter_mark() {
        assert_eq!(sanitize("a\u{61c}b"), "a\u{61c}b");
        assert_eq!(display("a\u{61c}b"), "ab");
        assert_eq!(display("\u{1b}[31m\u{61c}\u{202e}x\u{61c}"), "x");
        assert!(matches!(display("plain"), Cow::Borrowed("plain")));
    }

    #[test]
    fn js_trim_is_empty_follows_javascript_whitespace() {
        let cases: &[(&str, bool)] = &[
            ("", true),
            (" \t\n\r\u{b}\u{c}", true),
            (
                "\u{a0}\u{1680}\u{2000}\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{feff}",
                true,
            ),
            ("\u{85}", false),   // NEL is not JS whitespace
            ("\u{200b}", false), // nor is ZERO WIDTH SPACE
            ("\u{180e}", false), // nor MONGOLIAN VOWEL SEPARATOR (since ES2016)
            (" x ", false),
        ];
        for (s, want) in cases {
            assert_eq!(js_trim_is_empty(s), *want, "{:?}", s);
        }
    }
}
