//! The example host as a person runs it (`scripts/run.sh`): the built binary, its standard
//! output a pipe (not a terminal), its exit status.

use std::path::PathBuf;
use std::process::{Command, Output};

fn host(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_host"));
    cmd.args(args).env_remove("NO_COLOR");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("the host binary runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

/// A file under cargo's scratch folder for integration tests.
fn scratch(name: &str, text: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, text).expect("the scratch folder is writable");
    path
}

/// The text with every SGR sequence (`ESC [ digits/; m`) removed.
fn without_sgr(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("\x1b[") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let end = after
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .unwrap_or(after.len());
        if after[end..].starts_with('m') {
            rest = &after[end + 1..];
        } else {
            // Not an SGR: keep it, so the caller sees the stray escape.
            out.push_str("\x1b[");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn help_describes_the_options_and_the_session_file_format() {
    let out = host(&["--help"], &[]);
    assert!(out.status.success());
    let text = stdout(&out);
    for needle in [
        "usage: host [--session <file.jsonl>] [--config <init.lua>] [--width <columns>] [--plain | --color]",
        "session file: JSON Lines, one event per line",
        "{\"user\": \"text\"}            the user speaks; starts a new turn",
        "{\"assistant\": \"text\"}       the assistant speaks",
        "{\"call\": {...}}             a todo tool call; the object is the arguments",
        "{\"call\": \"<JSON text>\"}     a call whose arguments are JSON text, passed on verbatim",
        "{\"action\": \"...\", ...}      a bare arguments object is a call too",
        "{\"event\": \"compaction\"}     compact the conversation and reload here",
        "NO_COLOR",
    ] {
        assert!(text.contains(needle), "--help lacks {needle:?}:\n{text}");
    }
    assert_eq!(host(&["-h"], &[]).stdout, out.stdout);
}

#[test]
fn piped_output_has_no_escape_codes() {
    let out = host(&[], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    assert_eq!(
        text.matches("\n  overlay:\n").count(),
        32,
        "a panel after each call"
    );
    assert!(text.contains("    ● Todos (0/1)\n"));
    assert!(text.contains("  the list survived the reload: /todos is identical\n"));
    assert!(!text.contains('\x1b'), "an escape code in piped output");
}

#[test]
fn color_draws_the_panel_with_sgr_even_through_a_pipe_and_no_color_does_not_override_it() {
    let plain = stdout(&host(&[], &[]));
    for envs in [&[][..], &[("NO_COLOR", "1")][..]] {
        let out = host(&["--color"], envs);
        assert!(out.status.success());
        let colored = stdout(&out);
        assert!(
            colored.contains("    \x1b[36m●\x1b[39m \x1b[1m\x1b[36mTodos (0/1)\x1b[39m\x1b[22m\n")
        );
        assert_eq!(
            without_sgr(&colored),
            plain,
            "the coloured run is the plain one plus SGR"
        );
    }
    let out = host(&["--color", "--plain"], &[]);
    assert!(!stdout(&out).contains('\x1b'), "the last flag wins");
}

#[test]
fn escape_codes_in_the_session_file_never_reach_the_output() {
    let session = scratch(
        "hostile-session.jsonl",
        concat!(
            "{\"user\": \"plan \\u001b[2J\\u001b]0;title\\u0007it\"}\n",
            "{\"assistant\": \"ok \\u001b[31mred\"}\n",
            "{\"call\": {\"action\": \"create\", \"subject\": \"A \\u001b[5mblink\"}}\n",
            "{\"call\": \"{\\\"action\\\":\\\"create\\\",\\\"subject\\\":\\\"B \\u001b[1mbold\\\"}\"}\n",
        ),
    );
    let session = session.to_str().unwrap();
    let out = host(&["--session", session], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    assert!(!text.contains('\x1b'), "{text}");
    assert!(text.contains("user: plan it\n"), "{text}");
    assert!(text.contains("assistant: ok red\n"), "{text}");
    assert!(
        text.contains("  result: Created #1: A blink (pending)\n"),
        "{text}"
    );
    // With colours on, the only escapes left are the theme's SGR.
    let colored = stdout(&host(&["--session", session, "--color"], &[]));
    assert!(colored.contains('\x1b'));
    assert!(!without_sgr(&colored).contains('\x1b'), "{colored}");
}

#[test]
fn a_bad_argument_exits_2_with_the_usage() {
    let out = host(&["--bogus"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("unknown argument \"--bogus\""), "{err}");
    assert!(err.contains("usage: host"), "{err}");
}
