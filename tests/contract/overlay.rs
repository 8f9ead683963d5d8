//! What only Rust can check of the overlay: display width against an independent measure.
//! `core.width`, which the Lua specs use, is the code under test; here every line of every
//! theme at widths 1 to 120 is measured with the unicode-width and unicode-segmentation
//! crates (grapheme clusters, as a terminal draws them), and a cut line must keep whole
//! clusters. Everything else of the overlay (recorded cases, themes, the live object,
//! options, layout overrides) is checked from real interpreters in
//! tests/lua/overlay_spec.lua.

use mlua::{Function, Lua, Value as LuaValue};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

use crate::support;

/// A Lua state with the plugin loaded, the English UI, and helpers in globals:
/// `task(id, status, subject, extra)`, `joined(line)` (a segments line as text).
fn overlay_lua() -> Lua {
    let lua = support::lua();
    lua.load(
        r#"todo = require('rpiv_todo')
           todo.setup({ locale = 'en' })
           overlay = todo.overlay
           function task(id, status, subject, extra)
             local t = { id = id, status = status, subject = subject or ('task ' .. id) }
             for k, v in pairs(extra or {}) do t[k] = v end
             return t
           end
           function joined(line)
             local parts = {}
             for i, seg in ipairs(line) do parts[i] = seg[1] end
             return table.concat(parts)
           end"#,
    )
    .exec()
    .expect("overlay test prelude");
    lua
}

/// Drop ANSI CSI sequences (`ESC [ params final`).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            chars.next();
            for f in chars.by_ref() {
                if ('@'..='~').contains(&f) {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Terminal columns of escape-free text, by grapheme cluster (what a terminal draws):
/// unicode-width's measure of each cluster, at most 2 (one cell pair).
fn columns(plain: &str) -> usize {
    plain.graphemes(true).map(|g| g.width().min(2)).sum()
}

const WIDE_STATE: &str = r#"{ tasks = {
    task(1, 'in_progress', '汉字の表示テスト 한국어 完成', { activeForm = '写作中 ✍️' }),
    task(2, 'pending', 'emoji 👨‍👩‍👧 family 🚀🚀 rocket', { blockedBy = { 1 } }),
    task(3, 'completed', 'combining e\204\129e\204\129e\204\129 marks a\204\136o\204\136'),
    task(4, 'pending', 'ansi \27[31mred\27[0m and \27]8;;http://x\27\\link\27]8;;\27\\ text'),
    task(5, 'pending', 'flags 🇺🇸🇯🇵 and zwj 🏳️‍🌈 done'),
    task(6, 'pending', string.rep('long ', 40)),
  }, nextId = 7 }"#;

#[test]
fn no_line_exceeds_the_width_and_cut_lines_end_with_the_ellipsis_at_widths_1_to_120() {
    let lua = overlay_lua();
    let render_at: Function = support::eval(
        &lua,
        &format!(
            r#"local state = {WIDE_STATE}
               return function(width, theme)
                 local lines = overlay.render(state, {{ width = width, max_widget_lines = 20, theme = theme }})
                 if theme == 'segments' then
                   for i, line in ipairs(lines) do lines[i] = joined(line) end
                 end
                 return lines
               end"#
        ),
    );
    let width: Function = support::eval(&lua, "return require('rpiv_todo.core').width");
    let full: Vec<String> = render_at.call((LuaValue::Nil, LuaValue::Nil)).unwrap();
    assert_eq!(
        full[4], "├─ ○ #4 ansi red and link text",
        "model escapes are gone"
    );
    for w in 1..=120usize {
        let plain: Vec<String> = render_at.call((w, LuaValue::Nil)).unwrap();
        let ansi: Vec<String> = render_at.call((w, "ansi")).unwrap();
        let segs: Vec<String> = render_at.call((w, "segments")).unwrap();
        assert_eq!(plain.len(), full.len(), "width {w}");
        for (i, line) in plain.iter().enumerate() {
            let at = format!("width {w}, line {i}: {line:?}");
            let cols = columns(line);
            assert!(cols <= w, "{at} takes {cols} columns");
            assert_eq!(width.call::<usize>(line.as_str()).unwrap(), cols, "{at}");
            if columns(&full[i]) > w {
                let kept = line
                    .strip_suffix('…')
                    .unwrap_or_else(|| panic!("{at} lacks the ellipsis"));
                assert!(full[i].starts_with(kept), "{at} is not a prefix");
                // Whole grapheme clusters only: the kept clusters are the full line's first.
                let kept_g: Vec<&str> = kept.graphemes(true).collect();
                let full_g: Vec<&str> = full[i].graphemes(true).take(kept_g.len()).collect();
                assert_eq!(kept_g, full_g, "{at} splits a grapheme cluster");
            } else {
                assert_eq!(line, &full[i], "{at} fits and is untouched");
            }
            assert!(columns(&strip_ansi(&ansi[i])) <= w, "ansi {at}");
            for (pos, _) in ansi[i].match_indices('\x1b') {
                let seq = &ansi[i][pos + 1..];
                let whole = seq.starts_with('[')
                    && seq[1..]
                        .find(|c: char| !(c.is_ascii_digit() || c == ';'))
                        .is_some_and(|end| seq[1 + end..].starts_with('m'));
                assert!(whole, "ansi {at}: a cut escape sequence");
            }
            assert_eq!(
                &strip_ansi(&ansi[i]),
                line,
                "ansi strips to the plain line, {at}"
            );
            assert_eq!(&segs[i], line, "segments join to the plain line, {at}");
        }
    }
}
