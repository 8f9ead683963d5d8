//! An example Rust host for the `todo` tool: what an agent application embedding Lua does.
//!
//! It creates a Lua state with `rpiv_todo::preload`, runs the user's config (Lua, calling
//! `require("rpiv_todo").setup{...}`), prints the tool spec it would register with an LLM,
//! then plays a recorded agent session turn by turn: every tool call, its result text, the
//! list as `/todos` shows it and, when the overlay module is present, the overlay panel.
//! Halfway (or at an `{"event":"compaction"}` line) it compacts, throws the Lua state away,
//! starts a new one and rebuilds the list by replaying the branch it kept, as a host does
//! on `/reload`, and checks the list survived.
//!
//! ```text
//! scripts/run.sh                       # = cargo run --release -p rpiv_todo_host --
//! scripts/run.sh --session my_session.jsonl --config my_init.lua --width 100 --plain
//! scripts/run.sh --help                # the options and the session-file format
//! ```
//!
//! The panel is drawn with ANSI colours only when standard output is a terminal and
//! `NO_COLOR` is unset or empty; `--plain` and `--color` decide instead. Text from the
//! session file is sanitized before it is printed, like everything the model writes.

use std::io::Write;
use std::path::PathBuf;

use rpiv_todo::mlua::{self, Function, Lua, ObjectLike, Table, Value as LuaValue};
use serde_json::{json, Value};

/// The config and session shipped with the example (used when no flag names others).
pub const DEFAULT_CONFIG: &str = include_str!("init.lua");
pub const DEFAULT_SESSION: &str = include_str!("session.jsonl");

/// The session id this host plays in (the foreground session).
const SESSION_ID: &str = "main";

pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Command-line options.
#[derive(Debug, Clone)]
pub struct Options {
    pub config: Option<PathBuf>,
    pub session: Option<PathBuf>,
    /// Terminal columns for the overlay panel.
    pub width: usize,
    /// No ANSI colors in the overlay: what `run` draws with. `main` sets it from `color`,
    /// the terminal and `NO_COLOR` (see [`use_color`]).
    pub plain: bool,
    /// `--color` (Some(true)) or `--plain` (Some(false)); None: decide from the terminal.
    pub color: Option<bool>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            config: None,
            session: None,
            width: 80,
            plain: false,
            color: None,
        }
    }
}

const USAGE: &str = "usage: host [--session <file.jsonl>] [--config <init.lua>] [--width <columns>] [--plain | --color]";

/// What `--help` prints: the options and the session-file format.
pub const HELP: &str = r#"usage: host [--session <file.jsonl>] [--config <init.lua>] [--width <columns>] [--plain | --color]

The example Rust host of rpiv_todo. It embeds Lua, runs a config, prints the tool spec it
would register with an LLM, then plays a recorded agent session: every todo call with the
reply the model reads, /todos and the panel. Halfway (or at a compaction event) it throws
its Lua state away, starts a new one and rebuilds the list by replaying the conversation,
and checks that nothing was lost. Exit status: 0 when the list survived, 1 when it did
not or on an error, 2 on a bad argument.

options:
  --session <file.jsonl>  the session to play (default: examples/host/session.jsonl)
  --config <init.lua>     a Lua file run first, e.g. require("rpiv_todo").setup({ ... })
                          (default: examples/host/init.lua)
  --width <columns>       width of the panel (default: 80)
  --plain                 no colours
  --color                 colours even when standard output is not a terminal
  -h, --help              this text
Without --plain or --color the panel is coloured only when standard output is a
terminal and NO_COLOR is unset or empty.

session file: JSON Lines, one event per line (blank lines are skipped):
  {"user": "text"}            the user speaks; starts a new turn
  {"assistant": "text"}       the assistant speaks
  {"call": {...}}             a todo tool call; the object is the arguments, e.g.
                              {"call": {"action": "create", "subject": "Write the parser"}}
  {"call": "<JSON text>"}     a call whose arguments are JSON text, passed on verbatim
                              as an LLM API delivers them
  {"action": "...", ...}      a bare arguments object is a call too
  {"event": "compaction"}     compact the conversation and reload here (without one,
                              the host does it after half of the calls)
Arguments may be anything a model could send: a call the tool rejects is played and its
"Error: ..." reply shown, as the model would see it.
"#;

/// Whether to draw in colour: an explicit `--color`/`--plain` wins; otherwise colour only
/// on a terminal and when `NO_COLOR` is unset or empty (https://no-color.org).
pub fn use_color(
    flag: Option<bool>,
    stdout_is_terminal: bool,
    no_color: Option<&std::ffi::OsStr>,
) -> bool {
    match flag {
        Some(choice) => choice,
        None => stdout_is_terminal && no_color.is_none_or(|v| v.is_empty()),
    }
}

/// Parse `--session`, `--config`, `--width`, `--plain`; `Ok(None)` for `--help`.
pub fn parse_args(
    args: impl IntoIterator<Item = String>,
) -> std::result::Result<Option<Options>, String> {
    let mut opts = Options::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .ok_or_else(|| format!("{name} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--session" => opts.session = Some(PathBuf::from(value("--session")?)),
            "--config" => opts.config = Some(PathBuf::from(value("--config")?)),
            "--width" => {
                let v = value("--width")?;
                opts.width = v
                    .parse()
                    .map_err(|_| format!("--width expects a number, got {v:?}"))?;
            }
            "--plain" => {
                opts.plain = true;
                opts.color = Some(false);
            }
            "--color" => {
                opts.plain = false;
                opts.color = Some(true);
            }
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok(Some(opts))
}

/// One line of a recorded session.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    User(String),
    Assistant(String),
    Call(Value),
    Compaction,
}

/// Parse a session file; errors name the line.
pub fn parse_session(text: &str) -> Result<Vec<Event>> {
    let mut events = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value =
            serde_json::from_str(line).map_err(|e| format!("session line {}: {e}", n + 1))?;
        let event = if let Some(t) = v.get("user").and_then(Value::as_str) {
            Event::User(t.to_owned())
        } else if let Some(t) = v.get("assistant").and_then(Value::as_str) {
            Event::Assistant(t.to_owned())
        } else if let Some(call) = v.get("call") {
            Event::Call(call.clone())
        } else if v.get("event").and_then(Value::as_str) == Some("compaction") {
            Event::Compaction
        } else if v.get("action").is_some() {
            Event::Call(v)
        } else {
            return Err(format!(
                "session line {}: expected user, assistant, call or event",
                n + 1
            )
            .into());
        };
        events.push(event);
    }
    Ok(events)
}

/// The host's Lua side: one Lua state with the plugin loaded and configured.
struct Host {
    lua: Lua,
    todo: Table,
    session: Table,
    /// The live overlay panel, when the overlay module is there.
    overlay: Option<Table>,
}

// Creates the live overlay when `todo.overlay` exists, keeps it in step with replays, and
// returns nil otherwise. The overlay's theme comes from the host's `--plain` choice.
const OVERLAY_HOOK: &str = r#"
local todo, plain = ...
local ok, overlay = pcall(function() return todo.overlay end)
if not ok or type(overlay) ~= "table" or type(overlay.new) ~= "function" then
  return nil
end
local ov = overlay.new({ theme = (not plain) and overlay.themes.ansi or nil })
todo.attach_overlay(ov)
return ov
"#;

impl Host {
    /// A fresh Lua state: preload the plugin, run the user's config, open the session.
    fn start(config: &str, config_name: &str, plain: bool) -> Result<Host> {
        let lua = Lua::new();
        rpiv_todo::preload(&lua)?;
        lua.load(config)
            .set_name(format!("@{config_name}"))
            .exec()?;
        let require: Function = lua.globals().get("require")?;
        let todo: Table = require.call("rpiv_todo")?;
        let foreground: Function = todo.get("foreground")?;
        let session: Table = foreground.call(SESSION_ID)?;
        let overlay: Option<Table> = lua
            .load(OVERLAY_HOOK)
            .set_name("=overlay_hook")
            .call((todo.clone(), plain))?;
        Ok(Host {
            lua,
            todo,
            session,
            overlay,
        })
    }

    fn spec(&self) -> Result<Table> {
        let tool: Function = self.todo.get("tool")?;
        Ok(tool.call(())?)
    }

    /// `/todos` as a person sees it.
    fn todos(&self) -> Result<String> {
        let command: Table = self.todo.get("command")?;
        let todos: Function = command.get("todos")?;
        let opts = self.lua.create_table()?;
        opts.set("interactive", true)?;
        let (text, _level): (String, String) = todos.call((self.session.clone(), opts))?;
        Ok(text)
    }

    /// Run one call given as JSON text (what an LLM host receives); the result as JSON text.
    fn call(&self, args_json: &str) -> Result<String> {
        Ok(self.session.call_method("execute_json", args_json)?)
    }

    fn render_call(&self, args: &Value) -> Result<String> {
        let spec = self.spec()?;
        let render: Function = spec.get("render_call")?;
        let state: Table = self.session.call_method("state", ())?;
        Ok(render.call((json_to_lua(&self.lua, args, 0)?, state))?)
    }

    fn render_result(&self, result: &Value) -> Result<String> {
        let spec = self.spec()?;
        let render: Function = spec.get("render_result")?;
        Ok(render.call(json_to_lua(&self.lua, result, 0)?)?)
    }

    fn overlay_lines(&self, width: usize) -> Result<Vec<String>> {
        let Some(ov) = &self.overlay else {
            return Ok(Vec::new());
        };
        // The session itself: the overlay reads its list in place, no snapshot copied.
        let lines: Vec<String> = ov.call_method("render", (self.session.clone(), width))?;
        Ok(lines)
    }

    fn turn_started(&self) -> Result<()> {
        if let Some(ov) = &self.overlay {
            ov.call_method::<()>("turn_started", ())?;
        }
        Ok(())
    }

    /// Hand the host's branch to a lifecycle hook (`on_compaction`, `on_session_start`).
    fn lifecycle(&self, hook: &str, branch: &[Value]) -> Result<()> {
        let f: Function = self.todo.get(hook)?;
        f.call::<LuaValue>((SESSION_ID, serde_json::to_string(branch)?))?;
        Ok(())
    }
}

/// JSON (the session file, a result) to a Lua value; null is the plugin's null.
fn json_to_lua(lua: &Lua, v: &Value, depth: usize) -> Result<LuaValue> {
    if depth > 64 {
        return Err("JSON nested too deeply".into());
    }
    Ok(match v {
        Value::Null => LuaValue::NULL,
        Value::Bool(b) => LuaValue::Boolean(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => LuaValue::Integer(i),
            None => LuaValue::Number(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => LuaValue::String(lua.create_string(s)?),
        Value::Array(items) => {
            let t = lua.create_table()?;
            for (i, item) in items.iter().enumerate() {
                t.raw_set(i + 1, json_to_lua(lua, item, depth + 1)?)?;
            }
            LuaValue::Table(t)
        }
        Value::Object(map) => {
            let t = lua.create_table()?;
            for (k, item) in map {
                t.raw_set(k.as_str(), json_to_lua(lua, item, depth + 1)?)?;
            }
            LuaValue::Table(t)
        }
    })
}

fn message(role: &str, text: &str) -> Value {
    json!({ "type": "message", "message": { "role": role, "content": [{ "type": "text", "text": text }] } })
}

fn indent(out: &mut dyn Write, prefix: &str, text: &str) -> Result<()> {
    for line in text.lines() {
        writeln!(out, "{prefix}{line}")?;
    }
    Ok(())
}

/// Play the session; returns whether the list survived the reload.
pub fn run(opts: &Options, out: &mut dyn Write) -> Result<bool> {
    let (config, config_name) = match &opts.config {
        Some(p) => (
            std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?,
            p.display().to_string(),
        ),
        None => (
            DEFAULT_CONFIG.to_owned(),
            "examples/host/init.lua".to_owned(),
        ),
    };
    let session_text = match &opts.session {
        Some(p) => std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?,
        None => DEFAULT_SESSION.to_owned(),
    };
    let events = parse_session(&session_text)?;
    let calls = events
        .iter()
        .filter(|e| matches!(e, Event::Call(_)))
        .count();
    // Without a marker, compact after half of the calls.
    let has_marker = events.contains(&Event::Compaction);
    let halfway = calls.div_ceil(2);

    let mut host = Host::start(&config, &config_name, opts.plain)?;
    print_spec(&host, out)?;

    let mut branch: Vec<Value> = Vec::new();
    let mut call_no = 0usize;
    let mut turn = 0usize;
    let mut survived = true;
    writeln!(out, "\n=== session {SESSION_ID}: {calls} tool calls ===")?;
    for event in &events {
        match event {
            Event::User(text) => {
                turn += 1;
                host.turn_started()?;
                writeln!(out, "\n--- turn {turn} ---")?;
                writeln!(out, "user: {}", rpiv_todo::sanitize::sanitize(text))?;
                branch.push(message("user", text));
            }
            Event::Assistant(text) => {
                writeln!(out, "assistant: {}", rpiv_todo::sanitize::sanitize(text))?;
                branch.push(message("assistant", text));
            }
            Event::Call(args) => {
                call_no += 1;
                play_call(&host, args, call_no, &mut branch, opts.width, out)?;
                if !has_marker && call_no == halfway {
                    let (next, ok) =
                        compact_and_reload(host, &mut branch, &config, &config_name, opts, out)?;
                    host = next;
                    survived &= ok;
                }
            }
            Event::Compaction => {
                let (next, ok) =
                    compact_and_reload(host, &mut branch, &config, &config_name, opts, out)?;
                host = next;
                survived &= ok;
            }
        }
    }
    writeln!(
        out,
        "\n=== end of session: {call_no} calls, {} branch entries ===",
        branch.len()
    )?;
    indent(out, "", &host.todos()?)?;
    Ok(survived)
}

fn print_spec(host: &Host, out: &mut dyn Write) -> Result<()> {
    let spec = host.spec()?;
    let name: String = spec.get("name")?;
    let label: String = spec.get("label")?;
    let description: String = spec.get("description")?;
    let snippet: String = spec.get("prompt_snippet")?;
    let guidelines: Vec<String> = spec.get("prompt_guidelines")?;
    writeln!(out, "=== tool registered with the LLM ===")?;
    writeln!(out, "name: {name}    label: {label}")?;
    writeln!(out, "description: {description}")?;
    writeln!(out, "parameters:")?;
    let parameters: Table = spec.get("parameters")?;
    let properties: Table = parameters.get("properties")?;
    let required: Vec<String> = parameters.get("required")?;
    let mut names: Vec<(String, Table)> = properties
        .pairs::<String, Table>()
        .collect::<mlua::Result<_>>()?;
    names.sort_by(|a, b| a.0.cmp(&b.0));
    for (prop, schema) in names {
        let mut ty: String = schema.get("type")?;
        if let Some(items) = schema.get::<Option<Table>>("items")? {
            let item_type: String = items.get("type")?;
            ty = format!("{ty} of {item_type}");
        }
        let enumeration: Option<Vec<String>> = schema.get("enum")?;
        let items = match enumeration {
            Some(values) => format!(" ({})", values.join(" | ")),
            None => String::new(),
        };
        let req = if required.contains(&prop) {
            ", required"
        } else {
            ""
        };
        writeln!(out, "  {prop}: {ty}{items}{req}")?;
    }
    writeln!(out, "prompt snippet: {snippet}")?;
    writeln!(out, "prompt guidelines:")?;
    for (i, g) in guidelines.iter().enumerate() {
        writeln!(out, "  {}. {g}", i + 1)?;
    }
    Ok(())
}

fn play_call(
    host: &Host,
    args: &Value,
    n: usize,
    branch: &mut Vec<Value>,
    width: usize,
    out: &mut dyn Write,
) -> Result<()> {
    // Arguments given as text are passed on verbatim, as an LLM API delivers them.
    let (args_json, parsed) = match args {
        Value::String(text) => (
            text.clone(),
            serde_json::from_str(text).unwrap_or(Value::Null),
        ),
        other => (serde_json::to_string(other)?, other.clone()),
    };
    writeln!(out, "\n[call {n}] todo {}", host.render_call(&parsed)?)?;
    // Shown sanitized (the text itself goes to the tool verbatim).
    writeln!(
        out,
        "  arguments: {}",
        rpiv_todo::sanitize::sanitize(&args_json)
    )?;
    let result_json = host.call(&args_json)?;
    let result: Value = serde_json::from_str(&result_json)?;
    let text = result
        .pointer("/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let is_error = result.pointer("/details/error").is_some();
    let mut result_lines = text.lines();
    writeln!(out, "  result: {}", result_lines.next().unwrap_or_default())?;
    for more in result_lines {
        writeln!(out, "          {more}")?;
    }
    writeln!(out, "  shown: {}", host.render_result(&result)?)?;
    writeln!(out, "  /todos:")?;
    indent(out, "    ", &host.todos()?)?;
    // The panel is printed indented by four columns.
    let panel = host.overlay_lines(width.saturating_sub(4))?;
    if !panel.is_empty() {
        writeln!(out, "  overlay:")?;
        for line in panel {
            writeln!(out, "{}", format!("    {line}").trim_end())?;
        }
    }
    // The branch entry a host records for a tool result; replay reads `details` back.
    branch.push(json!({
        "type": "message",
        "message": {
            "role": "toolResult",
            "toolCallId": format!("call_{n}"),
            "toolName": "todo",
            "content": result.get("content").cloned().unwrap_or(Value::Null),
            "details": result.get("details").cloned().unwrap_or(Value::Null),
            "isError": is_error,
        }
    }));
    Ok(())
}

/// Compaction, then a reload: the Lua state is dropped and a new one replays the branch.
fn compact_and_reload(
    host: Host,
    branch: &mut Vec<Value>,
    config: &str,
    config_name: &str,
    opts: &Options,
    out: &mut dyn Write,
) -> Result<(Host, bool)> {
    let todo_results = branch
        .iter()
        .filter(|e| e.pointer("/message/toolName").and_then(Value::as_str) == Some("todo"))
        .count();
    // Compaction shortens what the model sees, not the branch: the host appends a summary
    // entry and the tool results stay on the branch for replay to find.
    branch.push(json!({
        "type": "compaction",
        "summary": format!("Earlier conversation summarised ({} entries).", branch.len()),
    }));
    writeln!(out, "\n=== compaction: the conversation so far is summarised; the branch keeps {} entries ({todo_results} todo results) ===", branch.len())?;
    host.lifecycle("on_compaction", branch)?;
    let before = host.todos()?;
    drop(host);
    writeln!(out, "=== reload: Lua state dropped; new state, config loaded again, list replayed from the branch ===")?;
    let host = Host::start(config, config_name, opts.plain)?;
    host.lifecycle("on_session_start", branch)?;
    let after = host.todos()?;
    indent(out, "  ", &after)?;
    let same = before == after;
    if same {
        writeln!(out, "  the list survived the reload: /todos is identical")?;
    } else {
        writeln!(out, "  THE LIST CHANGED ACROSS THE RELOAD; before:")?;
        indent(out, "    ", &before)?;
    }
    Ok((host, same))
}

fn main() {
    use std::io::IsTerminal;
    let mut opts = match parse_args(std::env::args().skip(1)) {
        Ok(Some(opts)) => opts,
        Ok(None) => {
            print!("{HELP}");
            return;
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let stdout = std::io::stdout();
    let no_color = std::env::var_os("NO_COLOR");
    opts.plain = !use_color(opts.color, stdout.is_terminal(), no_color.as_deref());
    let mut out = stdout.lock();
    match run(&opts, &mut out) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("host: {e}");
            std::process::exit(1);
        }
    }
}
