//! `rpiv_todo_mcp hook EVENT`: the terminal agents' hooks, run by the server's own binary.
//!
//! An agent starts it once per event with the event's JSON on stdin (Claude Code, Codex and
//! Qwen Code share one shape: `session_id`, `cwd`, `hook_event_name`, `source`,
//! `stop_hook_active`; Gemini CLI's is close to it). It reads the list the MCP server of that
//! directory uses, without a lock (the server replaces the file by a rename), writes its
//! answer to stdout and exits 0. Anything else (a message, a malformed input, a list that
//! does not read) goes to stderr, and the answer is then empty: a hook never stops the
//! agent.
//!
//! - `session-start`: after a compaction, a `/clear`, a resume (and at startup), the list in
//!   the compact form the editor's adapters use after a compaction, with the note of what
//!   the user changed since the session last saw the list; only when a task is open, and
//!   once: a per-session record (`<state dir>/.hooks/`) keeps what was put in, so a resume
//!   followed at once by a compaction does not show it twice. A resume puts it in only when
//!   it changed since it was last put in (a resumed history keeps the earlier copy).
//! - `prompt` (UserPromptSubmit): counts the prompts, so that a compaction after a prompt
//!   puts the list back again although nothing ended a turn in between.
//! - `stop`: a turn ended with a task `in_progress`: `{"decision":"block","reason":...}`
//!   with the end-of-turn reminder, once (`stop_hook_active` says the turn was continued by
//!   this hook already), and only for a list other than the one last reminded of.
//! - `before-agent` (Gemini CLI, which has no compaction source at SessionStart): the list
//!   when it changed since the session last saw it or the history was compressed since
//!   (`pre-compress` records that).
//! - `pre-tool`: the agent's own todo tool refused, with the name of this one.
//!
//! The texts are the Lua layer's (`session.compaction.compact_text`, `reminder`): Lua runs
//! once, only when there is something to say.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use rpiv_todo::journal::{Entry, Journal, Mark};
use rpiv_todo::mlua::{Function, Lua, LuaSerdeExt};
use rpiv_todo::shared::{SharedFile, DEFAULT_WAIT};
use rpiv_todo::task::{State, Status};
use serde_json::{json, Value};

/// The most of a hook's input read (an agent's event is a few hundred bytes).
const MAX_INPUT: u64 = 1 << 20;

const HOOK_USAGE: &str =
    "usage: rpiv_todo_mcp hook session-start|stop|prompt|before-agent|pre-compress|pre-tool \
                          [--state-dir DIR] [--session NAME] [--agent NAME]";

/// The event a hook answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    SessionStart,
    Stop,
    Prompt,
    BeforeAgent,
    PreCompress,
    PreTool,
}

/// A hook's command line.
#[derive(Debug, PartialEq)]
pub struct HookOptions {
    pub event: Event,
    pub state_dir: Option<PathBuf>,
    pub session: Option<String>,
    pub agent: String,
}

/// Parse `hook`'s arguments (the ones after `hook`).
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<HookOptions, String> {
    let mut args = args.into_iter();
    let event = match args.next().as_deref() {
        Some("session-start") => Event::SessionStart,
        Some("stop") => Event::Stop,
        Some("prompt") => Event::Prompt,
        Some("before-agent") => Event::BeforeAgent,
        Some("pre-compress") => Event::PreCompress,
        Some("pre-tool") => Event::PreTool,
        Some(other) => return Err(format!("unknown hook event {other:?}\n{HOOK_USAGE}")),
        None => return Err(format!("hook needs an event\n{HOOK_USAGE}")),
    };
    let mut opts = HookOptions {
        event,
        state_dir: None,
        session: None,
        agent: String::new(),
    };
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("{name} needs a value\n{HOOK_USAGE}"))
        };
        match arg.as_str() {
            "--state-dir" => opts.state_dir = Some(PathBuf::from(value("--state-dir")?)),
            "--session" => opts.session = Some(value("--session")?),
            "--agent" => opts.agent = value("--agent")?,
            other => return Err(format!("unknown argument {other:?}\n{HOOK_USAGE}")),
        }
    }
    Ok(opts)
}

/// `rpiv_todo_mcp hook ...`: the process's exit code.
pub fn main(args: impl IntoIterator<Item = String>) -> i32 {
    let opts = match parse(args) {
        Ok(opts) => opts,
        Err(message) => {
            eprintln!("{message}");
            return 1;
        }
    };
    let mut raw = Vec::new();
    let _ = std::io::stdin().take(MAX_INPUT).read_to_end(&mut raw);
    // From here on stdout is stderr: only the answer goes to the agent.
    let out = match answer_channel() {
        Ok(out) => out,
        Err(e) => {
            eprintln!("rpiv_todo_mcp hook: {e}");
            return 0;
        }
    };
    let input = match serde_json::from_slice::<Value>(&raw) {
        Ok(v @ Value::Object(_)) => v,
        _ => {
            eprintln!("rpiv_todo_mcp hook: the input is not a JSON object; nothing to do");
            return 0;
        }
    };
    let answer = run(&opts, &input, &super::default_state_dir());
    if let Some(answer) = answer {
        let mut out = out;
        let _ = out.write_all(answer.to_string().as_bytes());
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }
    0
}

/// A copy of stdout for the answer; stdout itself becomes stderr.
fn answer_channel() -> std::io::Result<std::fs::File> {
    use std::os::fd::AsFd;
    let output = std::io::stdout().as_fd().try_clone_to_owned()?;
    rustix::stdio::dup2_stdout(std::io::stderr())?;
    Ok(output.into())
}

/// What a session's hooks remember between their runs.
#[derive(Debug, Default, PartialEq)]
pub struct Record {
    /// Turns ended (Stop events) in this session.
    pub turns: u64,
    /// Prompts sent (UserPromptSubmit events) in this session.
    pub prompts: u64,
    /// The last list text put into the model's context, and `turns + prompts` then.
    pub shown: Option<(String, u64)>,
    /// The change log's epoch and sequence number when the session last saw the list.
    pub mark: Option<(Option<String>, u64)>,
    /// The history was compressed since the list was last shown (Gemini CLI).
    pub compressed: bool,
    /// The turn count when a reminder was last given.
    pub reminded: Option<u64>,
    /// The list's identity (the hash of its tasks) when a reminder was last given.
    pub reminded_list: Option<String>,
}

/// The record's file for `session_id` of `agent` on the list at `list`.
pub fn record_path(state_dir: &Path, agent: &str, session_id: &str, list: &Path) -> PathBuf {
    let mut key = Vec::new();
    for part in [
        agent.as_bytes(),
        session_id.as_bytes(),
        list.as_os_str().as_encoded_bytes(),
    ] {
        key.extend_from_slice(part);
        key.push(0);
    }
    let name = rpiv_todo::naming::sha256(&key);
    state_dir
        .join(".hooks")
        .join(format!("{}.json", &name[..32]))
}

impl Record {
    /// The record as its file holds it.
    fn to_json(&self) -> Value {
        json!({
            "turns": self.turns,
            "prompts": self.prompts,
            "shown": self.shown.as_ref().map(|(text, turn)| json!({ "text": text, "turn": turn })),
            "mark": self.mark.as_ref().map(|(epoch, seq)| json!({ "epoch": epoch, "seq": seq })),
            "compressed": self.compressed,
            "reminded": self.reminded,
            "reminded_list": self.reminded_list,
        })
    }

    /// The record a file holds; what it does not hold (or holds wrong) is left at its
    /// default.
    fn from_json(v: &Value) -> Record {
        let num = |v: &Value| v.as_u64();
        Record {
            turns: v.get("turns").and_then(num).unwrap_or(0),
            prompts: v.get("prompts").and_then(num).unwrap_or(0),
            shown: v.get("shown").and_then(|s| {
                Some((
                    s.get("text")?.as_str()?.to_owned(),
                    s.get("turn").and_then(num)?,
                ))
            }),
            mark: v.get("mark").and_then(|m| {
                let epoch = m.get("epoch").and_then(Value::as_str).map(str::to_owned);
                Some((epoch, m.get("seq").and_then(num)?))
            }),
            compressed: v
                .get("compressed")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            reminded: v.get("reminded").and_then(num),
            reminded_list: v
                .get("reminded_list")
                .and_then(Value::as_str)
                .map(str::to_owned),
        }
    }
}

fn read_record(path: &Path) -> Record {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .map(|v| Record::from_json(&v))
        .unwrap_or_default()
}

fn write_record(path: &Path, record: &Record) {
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| {
            // Renamed into place, without an fsync: a record lost in a crash costs at most
            // one more copy of the list, and an fsync would cost more than the rest of the
            // hook (bench/hook.py).
            let tmp = path.with_extension(format!("tmp{}", std::process::id()));
            std::fs::write(&tmp, record.to_json().to_string())?;
            std::fs::rename(&tmp, path)
        });
    if let Err(e) = written {
        eprintln!("rpiv_todo_mcp hook: {}: {e}", path.display());
    }
}

/// The list file the server of `cwd` uses, as `serve` names it.
pub fn list_path(state_dir: &Path, cwd: &str, session: &str) -> PathBuf {
    state_dir.join(rpiv_todo::naming::file_name(
        cwd.as_bytes(),
        session.as_bytes(),
    ))
}

/// The hook's answer to `input` (None: nothing to say). `default_dir` is the state
/// directory when `--state-dir` names none.
pub fn run(opts: &HookOptions, input: &Value, default_dir: &Path) -> Option<Value> {
    let text = |key: &str| input.get(key).and_then(Value::as_str);
    if opts.event == Event::PreTool {
        return Some(refuse_builtin(
            text("hook_event_name").unwrap_or("PreToolUse"),
        ));
    }
    let state_dir = opts
        .state_dir
        .clone()
        .unwrap_or_else(|| default_dir.to_path_buf());
    // The server names its directory by its absolute path; a missing one has no list.
    let state_dir = std::fs::canonicalize(&state_dir).ok()?;
    let cwd = match text("cwd") {
        Some(cwd) if !cwd.is_empty() => cwd.to_owned(),
        _ => std::env::current_dir().ok()?.to_str()?.to_owned(),
    };
    let session = opts.session.as_deref().unwrap_or("default");
    let list = list_path(&state_dir, &cwd, session);
    let agent = if opts.agent.is_empty() {
        "agent"
    } else {
        opts.agent.as_str()
    };
    let record_file = record_path(&state_dir, agent, text("session_id").unwrap_or(""), &list);
    let mut record = read_record(&record_file);
    let before = record.to_json();
    let (state, journal) = read_list(&list);
    let history = History::of_agent(&opts.agent);
    let mut answer = decide_in(opts.event, input, &state, &journal, &mut record, history);
    if record.to_json() != before {
        write_record(&record_file, &record);
    }
    if opts.event == Event::SessionStart {
        answer = tell_once(&state_dir, answer);
    }
    answer
}

/// What the user (not the model) is told once per state directory, at a session's start:
/// that rpiv_todo keeps the list, and the agent's own task tools are refused. It goes in
/// `systemMessage`, which Claude Code shows the user and does not send to the model.
pub const TOLD: &str = "rpiv_todo keeps this agent's todo list (its todo tool; the agent's own task tools are refused). /todos shows it.";

/// `answer` with [`TOLD`] added the first time a session starts with this state directory.
fn tell_once(state_dir: &Path, answer: Option<Value>) -> Option<Value> {
    let marker = state_dir.join(".hooks").join("told");
    if marker.exists() {
        return answer;
    }
    let _ = std::fs::create_dir_all(state_dir.join(".hooks"));
    if std::fs::write(&marker, b"").is_err() {
        return answer;
    }
    let mut answer = answer.unwrap_or_else(|| json!({}));
    answer["systemMessage"] = Value::String(TOLD.to_owned());
    Some(answer)
}

/// The list and its log as the file holds them (an empty list when there is none).
fn read_list(path: &Path) -> (State, Journal) {
    if !path.exists() {
        return (State::default(), Journal::default());
    }
    let mut file = SharedFile::new(path, DEFAULT_WAIT);
    let mut state = State::default();
    if let Err(e) = file.sync(&mut state) {
        eprintln!("rpiv_todo_mcp hook: {e}");
        return (State::default(), Journal::default());
    }
    let journal = file.journal().clone();
    (state, journal)
}

fn count(state: &State, status: Status) -> usize {
    state.tasks.iter().filter(|t| t.status == status).count()
}

/// What a resumed session's history holds of what a hook put in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum History {
    /// The hooks' context is in the saved session (Claude Code, Codex, opencode's synthetic
    /// part): a resume already shows the list last put in.
    Keeps,
    /// The hooks' context lives in memory only (Qwen Code 0.24: not in its session file),
    /// so a resume has lost it, and a compaction or a /clear drops it with the rest.
    Forgets,
}

impl History {
    /// The agent's, by `--agent` or, for Qwen Code, by the variable it alone sets for its
    /// hooks (`QWEN_PROJECT_DIR`; Claude Code sets only `CLAUDE_PROJECT_DIR`).
    pub fn of_agent(agent: &str) -> History {
        if agent == "qwen" || std::env::var_os("QWEN_PROJECT_DIR").is_some() {
            History::Forgets
        } else {
            History::Keeps
        }
    }
}

/// The events' logic, on the list read and the session's record, for an agent whose
/// resumed history keeps what the hooks put in (the tests' shorthand).
#[cfg(test)]
pub fn decide(
    event: Event,
    input: &Value,
    state: &State,
    journal: &Journal,
    record: &mut Record,
) -> Option<Value> {
    decide_in(event, input, state, journal, record, History::Keeps)
}

/// The events' logic, on the list read and the session's record.
pub fn decide_in(
    event: Event,
    input: &Value,
    state: &State,
    journal: &Journal,
    record: &mut Record,
    history: History,
) -> Option<Value> {
    let open = count(state, Status::Pending) + count(state, Status::InProgress);
    match event {
        Event::PreTool => None,
        Event::PreCompress => {
            record.compressed = true;
            None
        }
        Event::Prompt => {
            record.prompts += 1;
            None
        }
        Event::Stop => {
            let continued = input.get("stop_hook_active").and_then(Value::as_bool) == Some(true);
            record.turns += 1;
            record.mark = Some(mark_of(journal));
            if continued || count(state, Status::InProgress) == 0 {
                return None;
            }
            // Once a turn, also for an agent that does not say stop_hook_active.
            if record.reminded == Some(record.turns - 1) {
                return None;
            }
            // Once a list: turns that leave it as it was at the last reminder (idle turns,
            // a resume) end without one. Each reminder costs a whole request more.
            let key = list_key(state);
            if record.reminded_list.as_ref() == Some(&key) {
                return None;
            }
            record.reminded = Some(record.turns);
            record.reminded_list = Some(key);
            let reason = lua_text(state, "reminder")?;
            Some(json!({ "decision": "block", "reason": reason }))
        }
        Event::SessionStart | Event::BeforeAgent => {
            let event_name = if event == Event::SessionStart {
                "SessionStart"
            } else {
                "BeforeAgent"
            };
            let mark = mark_of(journal);
            let changed = record.mark.as_ref() != Some(&mark);
            let compressed = std::mem::take(&mut record.compressed);
            let seen = record.mark.replace(mark.clone());
            if open == 0 {
                return None;
            }
            if event == Event::BeforeAgent && !compressed && !changed && record.shown.is_some() {
                return None;
            }
            let key = list_key(state);
            let activity = record.turns + record.prompts;
            let resumed = input.get("source").and_then(Value::as_str) == Some("resume");
            let last = record.shown.as_ref();
            // A history that keeps what was put in: after a resume, again only when it
            // changed; otherwise once between two prompts or turns (a resume and a
            // compaction at once show it once). A history that forgets it has lost every
            // earlier copy at a resume, a compaction and a /clear alike: every time.
            let kept = history == History::Keeps
                && ((resumed && last.map(|s| &s.0) == Some(&key))
                    || last == Some(&(key.clone(), activity)));
            if kept {
                return None;
            }
            // "Summarized" only where it was: a compaction, or Gemini CLI's compressed history.
            let summarized =
                input.get("source").and_then(Value::as_str) == Some("compact") || compressed;
            let mut text = lua_text(state, if summarized { "compact" } else { "list" })?;
            record.shown = Some((key, activity));
            let note = seen.and_then(|(epoch, seq)| {
                // The user's changes: the server names its writer after its client (an
                // agent's own calls are "claude-code", "codex", ...), and the hook cannot
                // tell which of those is this session's own.
                journal.note_where(&Mark::at(epoch, seq), |e: &Entry| {
                    e.by.as_deref() == Some(rpiv_todo::journal::USER)
                })
            });
            if let Some(note) = note {
                text.push('\n');
                text.push_str(&note);
            }
            Some(json!({
                "hookSpecificOutput": { "hookEventName": event_name, "additionalContext": text }
            }))
        }
    }
}

/// The list's identity, without rendering it (Lua runs only to put it in).
fn list_key(state: &State) -> String {
    let tasks = serde_json::to_vec(&state.tasks).unwrap_or_default();
    rpiv_todo::naming::sha256(&tasks)
}

fn mark_of(journal: &Journal) -> (Option<String>, u64) {
    let mark = journal.mark();
    (mark.epoch().map(str::to_owned), mark.seq())
}

/// The answer that refuses the agent's own todo tool (a PreToolUse hook).
fn refuse_builtin(event_name: &str) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": event_name,
            "permissionDecision": "deny",
            "permissionDecisionReason": "The task list is kept by the todo tool of the rpiv_todo MCP server; use that tool instead."
        }
    })
}

/// A text of the Lua layer for `state`: `compact` (the list after a compaction), `list`
/// (the same list where nothing was summarized: a start, a resume, a /clear) or `reminder`
/// (the end of a turn with tasks in_progress).
pub fn lua_text(state: &State, what: &str) -> Option<String> {
    let made = (|| -> rpiv_todo::mlua::Result<Option<String>> {
        let lua = Lua::new();
        rpiv_todo::preload(&lua)?;
        let value = json!({ "tasks": state.tasks, "nextId": state.next_id });
        let table = lua.to_value(&value)?;
        let f: Function = lua
            .load(
                r#"local what, state = ...
if what == "compact" or what == "list" then
  return require("rpiv_todo.session.compaction").compact_text(state, { summarized = what == "compact" })
end
return require("rpiv_todo").reminder(state)"#,
            )
            .set_name("@rpiv_todo_mcp hook")
            .into_function()?;
        f.call((what, table))
    })();
    match made {
        Ok(text) => text,
        Err(e) => {
            eprintln!("rpiv_todo_mcp hook: {e}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(tasks: Value) -> State {
        let next = tasks.as_array().map_or(1, |t| t.len() as i64 + 1);
        rpiv_todo::json::state_from_value(&json!({ "tasks": tasks, "nextId": next })).unwrap()
    }

    fn open_list() -> State {
        state(json!([
            {"id": 1, "subject": "Write the parser", "status": "completed"},
            {"id": 2, "subject": "Write the tests", "status": "in_progress", "activeForm": "Writing the tests"},
            {"id": 3, "subject": "Ship it", "status": "pending", "blockedBy": [1, 2]}
        ]))
    }

    const COMPACT: &str = "The todo list as it stands (the conversation before this point was summarized): 3 tasks (1 completed, 1 in progress, 1 pending).\n\
Open tasks:\n\
[in_progress] #2 Write the tests (Writing the tests)\n\
[pending] #3 Ship it ⛓ #1,#2\n\
Keep using these ids with the todo tool; `list` shows every task.";

    /// The same list where nothing was summarized (a start, a resume, a /clear).
    fn listed() -> String {
        COMPACT.replace(" (the conversation before this point was summarized)", "")
    }

    fn context(answer: &Option<Value>) -> Option<&str> {
        answer.as_ref()?["hookSpecificOutput"]["additionalContext"].as_str()
    }

    #[test]
    fn arguments_are_read_and_bad_ones_refused() {
        let args = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let opts = parse(args(&["stop", "--agent", "claude", "--session", "w"])).unwrap();
        assert_eq!(opts.event, Event::Stop);
        assert_eq!(
            (opts.agent.as_str(), opts.session.as_deref()),
            ("claude", Some("w"))
        );
        assert!(parse(args(&["nap"]))
            .unwrap_err()
            .starts_with("unknown hook event \"nap\""));
        assert!(parse(args(&[]))
            .unwrap_err()
            .starts_with("hook needs an event"));
        assert!(parse(args(&["stop", "--agent"]))
            .unwrap_err()
            .starts_with("--agent needs a value"));
    }

    #[test]
    fn a_resume_puts_the_list_in_again_where_the_history_forgets_it() {
        let (s, j) = (open_list(), Journal::default());
        let resume = json!({"source": "resume"});
        for history in [History::Keeps, History::Forgets] {
            let mut r = Record::default();
            let first = decide_in(Event::SessionStart, &resume, &s, &j, &mut r, history);
            assert_eq!(context(&first), Some(listed().as_str()), "{history:?}");
            decide_in(Event::Stop, &json!({}), &s, &j, &mut r, history);
            // Resumed again, the list unchanged: Qwen Code's history lost the first copy.
            let again = decide_in(Event::SessionStart, &resume, &s, &j, &mut r, history);
            let want = (history == History::Forgets).then(listed);
            assert_eq!(context(&again), want.as_deref(), "{history:?}");
            // A compaction right after that resume: in again either way (it was not in
            // where the history keeps it; it went with the rest where it forgets it).
            let compact = json!({"source": "compact"});
            let after = decide_in(Event::SessionStart, &compact, &s, &j, &mut r, history);
            assert_eq!(context(&after), Some(COMPACT), "{history:?}");
            // A /clear right after: once where the history keeps it; again where it forgets.
            let clear = json!({"source": "clear"});
            let cleared = decide_in(Event::SessionStart, &clear, &s, &j, &mut r, history);
            let want = (history == History::Forgets).then(listed);
            assert_eq!(context(&cleared), want.as_deref(), "{history:?}");
        }
        assert_eq!(History::of_agent("qwen"), History::Forgets);
    }

    #[test]
    fn session_start_puts_the_open_list_in_once_between_two_turns() {
        let (s, j) = (open_list(), Journal::default());
        let mut r = Record::default();
        let input = json!({"source": "resume"});
        let first = decide(Event::SessionStart, &input, &s, &j, &mut r);
        assert_eq!(context(&first), Some(listed().as_str()));
        assert_eq!(
            first.as_ref().unwrap()["hookSpecificOutput"]["hookEventName"],
            "SessionStart"
        );
        // A compaction right after the resume: already in.
        assert_eq!(
            decide(
                Event::SessionStart,
                &json!({"source": "compact"}),
                &s,
                &j,
                &mut r
            ),
            None
        );
        // After a turn, a compaction puts it in again.
        decide(Event::Stop, &json!({}), &s, &j, &mut r);
        let again = decide(
            Event::SessionStart,
            &json!({"source": "compact"}),
            &s,
            &j,
            &mut r,
        );
        assert_eq!(context(&again), Some(COMPACT));
    }

    #[test]
    fn a_resume_puts_it_in_again_only_when_it_changed_and_a_prompt_counts_as_activity() {
        let (s, j) = (open_list(), Journal::default());
        let mut r = Record::default();
        let resume = json!({"source": "resume"});
        let compact = json!({"source": "compact"});
        assert!(decide(Event::SessionStart, &resume, &s, &j, &mut r).is_some());
        decide(Event::Stop, &json!({}), &s, &j, &mut r);
        assert_eq!(
            decide(Event::SessionStart, &resume, &s, &j, &mut r),
            None,
            "the resumed history has it"
        );
        // A prompt, then a compaction in the same turn: back in.
        decide(Event::Prompt, &json!({}), &s, &j, &mut r);
        assert_eq!(
            context(&decide(Event::SessionStart, &compact, &s, &j, &mut r)),
            Some(COMPACT)
        );
        let changed = state(json!([{"id": 1, "subject": "Other", "status": "pending"}]));
        assert!(
            decide(Event::SessionStart, &resume, &changed, &j, &mut r).is_some(),
            "changed since"
        );
    }

    #[test]
    fn nothing_when_the_list_is_empty_or_all_done() {
        let mut r = Record::default();
        let j = Journal::default();
        for s in [
            State::default(),
            state(
                json!([{"id": 1, "subject": "a", "status": "completed"}, {"id": 2, "subject": "b", "status": "deleted"}]),
            ),
        ] {
            for event in [Event::SessionStart, Event::BeforeAgent, Event::Stop] {
                assert_eq!(decide(event, &json!({}), &s, &j, &mut r), None, "{event:?}");
            }
        }
    }

    #[test]
    fn stop_reminds_once_a_turn_and_once_a_list() {
        let (s, j) = (open_list(), Journal::default());
        let mut r = Record::default();
        let want = "Reminder from the todo tool: #2 Write the tests is still in_progress. Mark it completed if it is done, or pending if you stopped.";
        let first = decide(
            Event::Stop,
            &json!({"stop_hook_active": false}),
            &s,
            &j,
            &mut r,
        )
        .unwrap();
        assert_eq!(first, json!({"decision": "block", "reason": want}));
        assert_eq!(
            decide(
                Event::Stop,
                &json!({"stop_hook_active": true}),
                &s,
                &j,
                &mut r
            ),
            None
        );
        // An agent that does not say stop_hook_active: the record says it was given.
        let mut r = Record::default();
        assert!(decide(Event::Stop, &json!({}), &s, &j, &mut r).is_some());
        assert_eq!(decide(Event::Stop, &json!({}), &s, &j, &mut r), None);
        assert_eq!(
            decide(Event::Stop, &json!({}), &s, &j, &mut r),
            None,
            "the turn after, the list as it was at the reminder"
        );
        let started = state(json!([
            {"id": 1, "subject": "Write the parser", "status": "completed"},
            {"id": 2, "subject": "Write the tests", "status": "completed"},
            {"id": 3, "subject": "Ship it", "status": "in_progress"},
        ]));
        assert!(
            decide(Event::Stop, &json!({}), &started, &j, &mut r).is_some(),
            "a turn that leaves another list"
        );
        assert_eq!(
            decide(Event::Stop, &json!({}), &s, &j, &mut r),
            None,
            "the turn right after a reminder"
        );
        assert!(
            decide(Event::Stop, &json!({}), &s, &j, &mut r).is_some(),
            "back to the first list, a turn later"
        );
        // No task in progress: nothing.
        let pending = state(json!([{"id": 1, "subject": "a", "status": "pending"}]));
        assert_eq!(
            decide(
                Event::Stop,
                &json!({}),
                &pending,
                &j,
                &mut Record::default()
            ),
            None
        );
    }

    #[test]
    fn before_agent_only_when_the_list_changed_or_the_history_was_compressed() {
        let (s, j) = (open_list(), Journal::default());
        let mut r = Record::default();
        assert_eq!(
            context(&decide(Event::BeforeAgent, &json!({}), &s, &j, &mut r)),
            Some(listed().as_str())
        );
        decide(Event::Stop, &json!({}), &s, &j, &mut r);
        assert_eq!(
            decide(Event::BeforeAgent, &json!({}), &s, &j, &mut r),
            None,
            "unchanged"
        );
        decide(Event::PreCompress, &json!({}), &s, &j, &mut r);
        let after = decide(Event::BeforeAgent, &json!({}), &s, &j, &mut r);
        // After a compression the history was summarized: said so.
        assert_eq!(context(&after), Some(COMPACT));
        assert_eq!(
            after.unwrap()["hookSpecificOutput"]["hookEventName"],
            "BeforeAgent"
        );
        decide(Event::Stop, &json!({}), &s, &j, &mut r);
        assert_eq!(decide(Event::BeforeAgent, &json!({}), &s, &j, &mut r), None);
    }

    #[test]
    fn the_users_changes_since_the_session_last_saw_the_list_are_noted() {
        use rpiv_todo::journal::{Before, Writer};
        let mut s = open_list();
        let mut j = Journal::default();
        let mut r = Record::default();
        let server = Writer::new(Some("claude-code".into()));
        let change = |s: &mut State, j: &mut Journal, w: &Writer, args: Value| {
            let before = Before::of(s, &args);
            rpiv_todo::call::run(s, Ok(&args));
            j.record(w, &before, s);
        };
        change(
            &mut s,
            &mut j,
            &server,
            json!({"action": "create", "subject": "Docs"}),
        );
        decide(Event::Stop, &json!({}), &s, &j, &mut r);
        change(
            &mut s,
            &mut j,
            &Writer::new(Some("user".into())),
            json!({"action": "update", "id": 2, "status": "completed"}),
        );
        change(
            &mut s,
            &mut j,
            &server,
            json!({"action": "update", "id": 3, "status": "in_progress"}),
        );
        let got = decide(
            Event::SessionStart,
            &json!({"source": "compact"}),
            &s,
            &j,
            &mut r,
        );
        let text = context(&got).unwrap();
        assert!(
            text.ends_with("\n(Changed by others since your last call: #2 completed by the user.)"),
            "{text}"
        );
    }

    #[test]
    fn the_record_round_trips_and_a_hostile_one_reads_as_new() {
        let r = Record {
            turns: 3,
            prompts: 4,
            shown: Some(("ab".into(), 2)),
            mark: Some((Some("e".into()), 7)),
            compressed: true,
            reminded: Some(3),
            reminded_list: Some("cd".into()),
        };
        assert_eq!(Record::from_json(&r.to_json()), r);
        let hostile = json!({"turns": -1, "shown": [1], "mark": {"seq": "x"}, "reminded": 1.5, "reminded_list": 2});
        assert_eq!(Record::from_json(&hostile), Record::default());
    }

    #[test]
    fn the_agents_own_todo_tool_is_refused() {
        let opts = HookOptions {
            event: Event::PreTool,
            state_dir: None,
            session: None,
            agent: String::new(),
        };
        let got = run(
            &opts,
            &json!({"hook_event_name": "PreToolUse", "tool_name": "TodoWrite"}),
            Path::new("/nonexistent"),
        );
        assert_eq!(
            got.unwrap()["hookSpecificOutput"]["permissionDecision"],
            "deny"
        );
    }

    #[test]
    fn the_user_is_told_once_per_state_dir() {
        let dir = std::env::temp_dir().join(format!("rpiv_todo_mcp-told-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let opts = parse([
            "session-start".to_string(),
            "--state-dir".into(),
            dir.display().to_string(),
        ])
        .unwrap();
        let input = json!({"session_id": "a", "cwd": "/nowhere", "source": "startup"});
        let first = run(&opts, &input, Path::new("/nonexistent"));
        assert_eq!(first, Some(json!({ "systemMessage": TOLD })));
        assert_eq!(run(&opts, &input, Path::new("/nonexistent")), None, "once");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_missing_state_dir_has_no_list_and_nothing_to_say() {
        let opts = parse(["session-start".to_string()]).unwrap();
        assert_eq!(
            run(&opts, &json!({"cwd": "/"}), Path::new("/nonexistent/rpiv")),
            None
        );
    }
}
