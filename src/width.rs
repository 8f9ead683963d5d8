//! Terminal display width and truncation, for overlay lines that may carry ANSI styling.
//!
//! Text is measured per grapheme cluster, because that is the unit a terminal draws: a ZWJ
//! family or a flag is one cell pair, `e` + U+0301 is one cell. Escape sequences take no
//! columns and are never split.

use std::borrow::Cow;

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Appended after the ellipsis when the kept text changed the style, so colors do not leak
/// into whatever the host draws next.
const SGR_RESET: &str = "\x1b[0m";

/// Columns `s` takes in a terminal. ANSI CSI (SGR included) and OSC sequences count 0,
/// control characters 0, combining and zero-width marks 0, East Asian wide characters and
/// emoji clusters 2.
pub fn width(s: &str) -> usize {
    if is_printable_ascii(s) {
        return s.len();
    }
    let mut total = 0;
    for_each_token(s, |token| {
        total += token.width;
        true
    });
    total
}

/// Cut `s` to at most `max` columns. Unchanged when it fits; otherwise the longest prefix of
/// whole grapheme clusters (escape sequences inside it kept intact) that leaves room for
/// `ellipsis`, then `ellipsis`, then an SGR reset when the kept text contained SGR. When not
/// even the ellipsis fits, as much of the ellipsis as fits (possibly "").
pub fn truncate<'a>(s: &'a str, max: usize, ellipsis: &str) -> Cow<'a, str> {
    if width(s) <= max {
        return Cow::Borrowed(s);
    }
    let ellipsis_width = width(ellipsis);
    let Some(budget) = max.checked_sub(ellipsis_width) else {
        let (end, styled) = fitting_prefix(ellipsis, max);
        let mut out = ellipsis[..end].to_owned();
        if styled {
            out.push_str(SGR_RESET);
        }
        return Cow::Owned(out);
    };
    let (end, styled) = fitting_prefix(s, budget);
    let mut out = String::with_capacity(end + ellipsis.len() + SGR_RESET.len());
    out.push_str(&s[..end]);
    out.push_str(ellipsis);
    if styled {
        out.push_str(SGR_RESET);
    }
    Cow::Owned(out)
}

/// Byte length of the longest token prefix of `s` within `budget` columns, and whether it
/// holds an SGR sequence. Zero-width tokens right after the last visible one are kept.
fn fitting_prefix(s: &str, budget: usize) -> (usize, bool) {
    if is_printable_ascii(s) {
        return (s.len().min(budget), false);
    }
    let (mut end, mut used, mut styled) = (0, 0, false);
    for_each_token(s, |token| {
        if used + token.width > budget {
            return false;
        }
        used += token.width;
        end += token.text.len();
        styled |= token.sgr;
        true
    });
    (end, styled)
}

fn is_printable_ascii(s: &str) -> bool {
    s.bytes().all(|b| (0x20..0x7f).contains(&b))
}

/// One unit that is either kept whole or cut: an escape sequence or a grapheme cluster.
struct Token<'a> {
    text: &'a str,
    width: usize,
    /// A CSI ending in `m` (Select Graphic Rendition).
    sgr: bool,
}

/// Walk `s` token by token, in order, until `f` returns false. Tokens tile `s` exactly.
fn for_each_token<'a>(s: &'a str, mut f: impl FnMut(Token<'a>) -> bool) {
    let bytes = s.as_bytes();
    let mut at = 0;
    while at < s.len() {
        let esc = bytes[at..].iter().position(|&b| b == 0x1b).map(|i| at + i);
        let run_end = esc.unwrap_or(s.len());
        for g in s[at..run_end].graphemes(true) {
            let token = Token {
                text: g,
                width: cluster_width(g),
                sgr: false,
            };
            if !f(token) {
                return;
            }
        }
        let Some(esc) = esc else { return };
        let end = escape_end(bytes, esc);
        let token = Token {
            text: &s[esc..end],
            width: 0,
            sgr: end - esc > 2 && bytes[esc + 1] == b'[' && bytes[end - 1] == b'm',
        };
        if !f(token) {
            return;
        }
        at = end;
    }
}

/// End of the escape sequence starting with the ESC at `esc`. A CSI is `ESC [`, parameter
/// bytes, intermediate bytes and one final byte; an OSC is `ESC ]` up to BEL, `ESC \` or
/// 0x9C (unterminated: the rest of the text, which a terminal would swallow too). Anything
/// else is a lone ESC, a zero-width control.
fn escape_end(b: &[u8], esc: usize) -> usize {
    let lone = esc + 1;
    match b.get(esc + 1) {
        Some(b'[') => {
            let mut at = esc + 2;
            while matches!(b.get(at), Some(0x30..=0x3f)) {
                at += 1;
            }
            while matches!(b.get(at), Some(0x20..=0x2f)) {
                at += 1;
            }
            match b.get(at) {
                Some(0x40..=0x7e) => at + 1,
                _ => lone,
            }
        }
        Some(b']') => {
            let mut at = esc + 2;
            while at < b.len() {
                match (b[at], b.get(at + 1)) {
                    (0x07, _) => return at + 1,
                    (0x1b, Some(b'\\')) | (0xc2, Some(0x9c)) => return at + 2,
                    _ => at += 1,
                }
            }
            b.len()
        }
        _ => lone,
    }
}

/// Columns of one grapheme cluster: 0 for controls (a cluster that starts with one is only
/// controls), otherwise what unicode-width says for the sequence, capped at 2 because a
/// terminal draws a cluster in at most two cells (an unqualified ZWJ sequence sums to more).
fn cluster_width(g: &str) -> usize {
    match g.chars().next() {
        Some(c) if c.is_control() => 0,
        _ => g.width().min(2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAMILY: &str = "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}";
    const FLAG_US: &str = "\u{1f1fa}\u{1f1f8}";
    const E_ACUTE: &str = "e\u{301}";

    /// Remove CSI and OSC sequences, for comparing styled results with plain ones.
    fn strip_ansi(s: &str) -> String {
        let mut out = String::new();
        for_each_token(s, |t| {
            if !t.text.starts_with('\x1b') || t.text.len() == 1 {
                out.push_str(t.text);
            }
            true
        });
        out
    }

    #[test]
    fn width_counts_terminal_columns() {
        let cases: &[(&str, usize)] = &[
            ("", 0),
            ("hello", 5),
            ("日本語", 6),
            ("测试任务한국어", 14),
            ("ｈｉ", 4),      // fullwidth forms
            ("\u{1f680}", 2), // emoji presentation
            ("\u{2705}", 2),
            ("\u{263a}\u{fe0f}", 2),           // text-default emoji with VS16
            ("1\u{fe0f}\u{20e3}", 2),          // keycap
            (FAMILY, 2),                       // ZWJ sequence is one cluster
            ("\u{1f680}\u{200d}\u{1f680}", 2), // not an RGI sequence: still one cluster
            ("\u{1f44d}\u{1f3fd}", 2),         // skin tone modifier
            (FLAG_US, 2),
            (E_ACUTE, 1),
            ("\u{301}", 0),                  // lone combining mark
            ("a\u{200b}b", 2),               // zero width space
            ("\u{1100}\u{1161}\u{11a8}", 2), // conjoining jamo form one syllable
            ("├─ ⛓ #1", 7),
            ("…", 1),
        ];
        for (s, want) in cases {
            assert_eq!(width(s), *want, "{:?}", s);
        }
    }

    #[test]
    fn escape_sequences_and_controls_take_no_columns() {
        let cases: &[(&str, usize)] = &[
            ("\x1b[31mred\x1b[0m", 3),
            ("\x1b[38;5;196m\x1b[1mbold\x1b[22m", 4),
            ("\x1b[?25l", 0),
            ("\x1b]8;;https://example.com\x07link\x1b]8;;\x07", 4),
            ("\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\", 4),
            ("\x1b]0;title\u{9c}x", 1),
            ("\x1b]0;unterminated", 0),
            ("\x1b", 0),
            ("\x1b[31", 3), // incomplete CSI: the ESC is a control, the rest is text
            ("a\tb\r\nc\x07\u{85}\u{7f}", 3),
        ];
        for (s, want) in cases {
            assert_eq!(width(s), *want, "{:?}", s);
        }
    }

    #[test]
    fn truncate_cuts_whole_clusters_and_appends_the_ellipsis() {
        let cases: &[(&str, usize, &str, &str)] = &[
            ("hello world", 20, "…", "hello world"),
            ("hello world", 11, "…", "hello world"),
            ("hello world", 10, "…", "hello wor…"),
            ("hello world", 5, "...", "he..."),
            ("hello", 1, "…", "…"),
            ("日本語テキスト", 7, "…", "日本語…"),
            ("日本語テキスト", 6, "…", "日本…"), // a wide char never straddles the edge
            ("日本語テキスト", 2, "…", "…"),
            ("ab\u{1f680}cd", 4, "…", "ab…"),
            ("e\u{301}e\u{301}e\u{301}", 2, "…", "e\u{301}…"),
            (
                "x\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}yz",
                4,
                "…",
                "x\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}…",
            ),
            (
                "x\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}yz",
                3,
                "…",
                "x…",
            ),
            (
                "\u{1f1fa}\u{1f1f8}\u{1f1eb}\u{1f1f7}",
                3,
                "…",
                "\u{1f1fa}\u{1f1f8}…",
            ),
        ];
        for (s, max, ell, want) in cases {
            assert_eq!(truncate(s, *max, ell), *want, "{:?} at {}", s, max);
        }
    }

    #[test]
    fn truncate_returns_the_input_borrowed_when_it_fits() {
        for s in ["", "abc", "日本", "\x1b[31mred\x1b[0m"] {
            assert!(matches!(truncate(s, 6, "…"), Cow::Borrowed(b) if b == s));
        }
    }

    #[test]
    fn truncate_keeps_escapes_whole_and_resets_after_sgr() {
        let cases: &[(&str, usize, &str)] = &[
            ("\x1b[31mred text\x1b[0m", 4, "\x1b[31mred…\x1b[0m"),
            ("ab\x1b[1;38;5;196mcdef", 4, "ab\x1b[1;38;5;196mc…\x1b[0m"),
            ("abc\x1b[2mdef", 3, "ab…"), // the SGR was past the cut: nothing to reset
            (
                "\x1b]8;;http://x\x07link text\x1b]8;;\x07",
                5,
                "\x1b]8;;http://x\x07link…",
            ),
            ("\x1b[?25lhidden cursor", 4, "\x1b[?25lhid…"), // not SGR: no reset
        ];
        for (s, max, want) in cases {
            assert_eq!(truncate(s, *max, "…"), *want, "{:?} at {}", s, max);
        }
    }

    #[test]
    fn truncate_shortens_an_ellipsis_that_does_not_fit() {
        let cases: &[(&str, usize, &str, &str)] = &[
            ("hello", 0, "…", ""),
            ("hello", 2, "...", ".."),
            ("hello", 0, "...", ""),
            ("日本語", 1, "（略）", ""),
            ("日本語", 3, "（略）", "（"),
            ("hello", 3, "", "hel"),
        ];
        for (s, max, ell, want) in cases {
            assert_eq!(
                truncate(s, *max, ell),
                *want,
                "{:?} at {} with {:?}",
                s,
                max,
                ell
            );
        }
    }

    #[test]
    fn truncated_lines_fit_and_end_with_the_ellipsis_at_every_width() {
        let lines = [
            "├─ ○ #12 Write the migration for the orders table (Writing migration) ⛓ #3,#4",
            "└─ ◐ 日本語のテキストを翻訳する (翻訳中) ✅ done",
            "├─ ✓ Ship 🚀 the release with the 👨‍👩‍👧 family and 🇺🇸🇫🇷 flags",
            "├─ ○ Caf\u{e9} vs Cafe\u{301} na\u{ef}ve re\u{301}sume\u{301} cr\u{e8}me",
            "\x1b[2m├─ \x1b[0m\x1b[33m◐\x1b[0m \x1b[1mRefactor\x1b[22m the parser \x1b[2m(refactoring 解析器)\x1b[0m",
            "\x1b]8;;https://example.com\x1b\\linked 🔗 text\x1b]8;;\x1b\\ and more words after it",
        ];
        for line in lines {
            let full = width(line);
            for w in 0..=120 {
                let cut = truncate(line, w, "…");
                assert!(width(&cut) <= w, "{:?} at {}: {:?}", line, w, cut);
                if full <= w {
                    assert_eq!(cut, line);
                } else if w >= 1 {
                    let body = cut.strip_suffix(SGR_RESET).unwrap_or(&cut);
                    assert!(body.ends_with('…'), "{:?} at {}: {:?}", line, w, cut);
                    assert!(
                        width(&cut) >= w.saturating_sub(1),
                        "wasted columns at {}: {:?}",
                        w,
                        cut
                    );
                } else {
                    assert_eq!(cut, "");
                }
            }
        }
    }

    #[test]
    fn stripping_ansi_from_a_truncated_colored_line_equals_truncating_the_plain_line() {
        let colored = [
            "\x1b[31mred\x1b[0m and \x1b[1;32mbold green 日本語\x1b[0m then 🚀 plain tail",
            "\x1b[2m├─ \x1b[0m\x1b[33m◐\x1b[0m \x1b[9me\u{301}t\u{e9} 👨‍👩‍👧 🇺🇸\x1b[29m done",
            "\x1b]8;;https://example.com\x07link\x1b]8;;\x07 测试任务 \x1b[38;5;196m!!\x1b[39m",
        ];
        for line in colored {
            let plain = strip_ansi(line);
            assert_eq!(width(line), width(&plain));
            for w in 0..=60 {
                let cut = truncate(line, w, "…");
                assert_eq!(
                    strip_ansi(&cut),
                    truncate(&plain, w, "…"),
                    "{:?} at {}",
                    line,
                    w
                );
            }
        }
    }
}
