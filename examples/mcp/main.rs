//! An MCP server on stdio for rpiv_todo's `todo` tool, for agents that run outside the editor
//! (Claude Code, Codex, Gemini CLI, or any client of the Model Context Protocol).
//!
//! It embeds Lua like `examples/host`: `rpiv_todo::preload` makes `require("rpiv_todo")`
//! work, the user's config file runs first (so a guidance override applies), and the tool's
//! name, description and JSON Schema come from the Lua layer. The protocol side is `rmcp`,
//! the official Rust SDK: `initialize`, `tools/list` and `tools/call` (revision 2025-11-25,
//! and `server/discover` of 2026-07-28, which rmcp answers).
//!
//! Each call answers with the reply text as its one content block, as the tool returns it
//! to the model, and `isError` on a rejected call (its text is the `Error: ...` reply). No
//! `structuredContent` by default: clients that have it hand the model that instead of the
//! text (Claude Code does). With `--structured` (or `structured = true` from the config
//! file) the tool declares an `outputSchema` and each result also carries
//! `structuredContent`: the reply text first, then the result's `details` (the call echoed,
//! the whole list after it, the error of a rejected call). The list is saved after every
//! change where Neovim's `persist = true` keeps it (`stdpath("state")/rpiv_todo`), one list
//! per working directory, so the editor's panel shows what the agent does.
//!
//! ```text
//! rpiv_todo_mcp [--state-dir DIR] [--session NAME] [--config FILE] [--structured]
//! rpiv_todo_mcp --help | --version
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use rpiv_todo::mlua::{self, Function, Lua, LuaSerdeExt, Table};
use serde_json::Value;

/// The Lua side: persistence, the tool's description, the calls.
const GLUE: &str = include_str!("server.lua");

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const USAGE: &str = "usage: rpiv_todo_mcp [--state-dir DIR] [--session NAME] [--config FILE] \
                     [--structured] [--help] [--version]";

/// What `--help` prints.
const HELP: &str = r#"usage: rpiv_todo_mcp [--state-dir DIR] [--session NAME] [--config FILE] [--structured]
       rpiv_todo_mcp --help | --version

An MCP server on stdio offering rpiv_todo's `todo` tool; an MCP client starts it (through
`npx -y rpiv-todo-mcp`, the plugin's scripts/mcp.sh, or this binary). The list is saved
after every change, one list per working directory, in the files Neovim's persist = true
uses, so the editor shows the agent's tasks.

options:
  --state-dir DIR   where the lists are saved (default: the directory Neovim uses,
                    $XDG_STATE_HOME/nvim/rpiv_todo or ~/.local/state/nvim/rpiv_todo;
                    NVIM_APPNAME replaces "nvim" as it does for Neovim)
  --session NAME    the list to use in this directory (default: "default", the one the
                    editor shows)
  --config FILE     a Lua file run first, e.g. require("rpiv_todo").setup({ guidance = ... });
                    it may return a table of server options: return { structured = true }
                    (default: $XDG_CONFIG_HOME/rpiv_todo/mcp.lua or
                    ~/.config/rpiv_todo/mcp.lua, when it exists)
  --structured      declare an outputSchema and send structuredContent with each result:
                    {"text": <the reply text>, "action", "params", "tasks", "nextId",
                    "error"?}. Off by default: clients that get structuredContent may show
                    the model that instead of the reply text (Claude Code, Codex)
  -h, --help        this text
  -V, --version     the version
"#;

/// Command-line options.
#[derive(Debug, Default)]
struct Options {
    state_dir: Option<PathBuf>,
    session: Option<String>,
    config: Option<PathBuf>,
    structured: bool,
}

/// What the command line asks for.
#[derive(Debug)]
enum Command {
    Serve(Options),
    Help,
    Version,
}

/// Parse the arguments.
fn parse_args(args: impl IntoIterator<Item = String>) -> std::result::Result<Command, String> {
    let mut opts = Options::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("{name} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--state-dir" => opts.state_dir = Some(PathBuf::from(value("--state-dir")?)),
            "--session" => opts.session = Some(value("--session")?),
            "--config" => opts.config = Some(PathBuf::from(value("--config")?)),
            "--structured" => opts.structured = true,
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok(Command::Serve(opts))
}

/// An environment variable when it holds an absolute path (the XDG rule).
fn absolute_env(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// The directory Neovim's `persist = true` uses: `stdpath("state")/rpiv_todo`.
fn default_state_dir() -> PathBuf {
    let appname = std::env::var("NVIM_APPNAME")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "nvim".to_string());
    let base = absolute_env("XDG_STATE_HOME").unwrap_or_else(|| home().join(".local/state"));
    base.join(appname).join("rpiv_todo")
}

/// The config file run when `--config` names none: `$XDG_CONFIG_HOME/rpiv_todo/mcp.lua`.
fn default_config() -> PathBuf {
    absolute_env("XDG_CONFIG_HOME")
        .unwrap_or_else(|| home().join(".config"))
        .join("rpiv_todo")
        .join("mcp.lua")
}

/// The server: one Lua state (not `Send`: rmcp's `local` feature runs the handler on one
/// thread), the glue module, and the tool as advertised.
struct Server {
    _lua: Lua,
    call: Function,
    take_errors: Function,
    tool: Tool,
    instructions: String,
    version: String,
    /// Send `structuredContent` (and declare the tool's `outputSchema`).
    structured: bool,
}

/// What the config file may return: a table of server options, or nothing.
#[derive(Debug, Default, PartialEq)]
struct ConfigOptions {
    structured: Option<bool>,
}

/// Run the config file in `lua` and read the options it returns.
fn run_config(lua: &Lua, config: &Path) -> Result<ConfigOptions> {
    let name = config.display();
    let text = std::fs::read_to_string(config).map_err(|e| format!("config {name}: {e}"))?;
    let returned: mlua::Value = lua
        .load(text)
        .set_name(format!("@{name}"))
        .eval()
        .map_err(|e| format!("config {name}: {e}"))?;
    let mut opts = ConfigOptions::default();
    let table = match returned {
        mlua::Value::Nil => return Ok(opts),
        mlua::Value::Table(table) => table,
        other => {
            return Err(format!(
                "config {name}: must return nothing or a table such as {{ structured = true }}, not a {}",
                other.type_name()
            )
            .into())
        }
    };
    for pair in table.pairs::<mlua::Value, mlua::Value>() {
        let (key, value) = pair?;
        match (key.to_string()?.as_str(), value) {
            ("structured", mlua::Value::Boolean(b)) => opts.structured = Some(b),
            ("structured", other) => {
                return Err(format!(
                    "config {name}: structured: expected a boolean, got a {}",
                    other.type_name()
                )
                .into())
            }
            (key, _) => {
                return Err(format!(
                    "config {name}: unknown server option {key:?} in the returned table (known: structured)"
                )
                .into())
            }
        }
    }
    Ok(opts)
}

/// The `outputSchema` declared with `--structured`: what `structuredContent` holds. The
/// echoed `action` and `params` are whatever the model sent, so they are left open.
fn output_schema() -> JsonObject {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "text": {
                "type": "string",
                "description": "The reply text, as the tool answers the model (also the call's content)"
            },
            "action": { "description": "The call's action, echoed" },
            "params": { "description": "The call's arguments, echoed" },
            "tasks": {
                "type": "array",
                "description": "The whole list after the call",
                "items": { "type": "object" }
            },
            "nextId": { "type": "integer", "description": "The id the next created task gets" },
            "error": { "type": "string", "description": "Why the call was rejected (nothing changed)" }
        },
        "required": ["text", "tasks", "nextId"]
    });
    match schema {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

impl Server {
    /// A Lua state with rpiv_todo preloaded, the user's config run, the list restored.
    /// `structured` is `--structured`; the config's `structured` also turns it on.
    fn new(
        state_dir: &Path,
        session: &str,
        config: Option<&Path>,
        key: &str,
        structured: bool,
    ) -> Result<Server> {
        let lua = Lua::new();
        rpiv_todo::preload(&lua)?;
        let from_config = match config {
            Some(config) => run_config(&lua, config)?,
            None => ConfigOptions::default(),
        };
        let structured = structured || from_config.structured == Some(true);
        let glue: Table = lua.load(GLUE).set_name("@examples/mcp/server.lua").eval()?;
        let dir = state_dir
            .to_str()
            .ok_or_else(|| format!("--state-dir {}: not valid UTF-8", state_dir.display()))?;
        glue.get::<Function>("start")?
            .call::<Option<String>>((dir, key, session))?;
        let desc: Table = glue.get::<Function>("describe")?.call(())?;
        let parameters: Value = lua.from_value(desc.get::<mlua::Value>("parameters")?)?;
        let Value::Object(schema) = parameters else {
            return Err("the tool's parameters are not a JSON object".into());
        };
        let mut tool = Tool::new(
            desc.get::<String>("name")?,
            desc.get::<String>("description")?,
            Arc::new(schema as JsonObject),
        )
        .with_title(desc.get::<String>("title")?);
        if structured {
            tool = tool.with_raw_output_schema(Arc::new(output_schema()));
        }
        Ok(Server {
            call: glue.get("call")?,
            take_errors: glue.get("take_errors")?,
            tool,
            instructions: desc.get("instructions")?,
            version: desc.get("version")?,
            structured,
            _lua: lua,
        })
    }

    /// Run one call: the arguments as JSON text in, the result JSON out.
    fn run(&self, arguments: Option<JsonObject>) -> std::result::Result<CallToolResult, String> {
        let args =
            serde_json::to_string(&arguments.unwrap_or_default()).map_err(|e| e.to_string())?;
        let out: String = self.call.call(args).map_err(|e| e.to_string())?;
        if let Ok(errors) = self.take_errors.call::<Vec<String>>(()) {
            for message in errors {
                // stderr is the MCP stdio transport's log channel.
                eprintln!("{message}");
            }
        }
        let result: Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
        Ok(answer(result, self.structured))
    }
}

/// The MCP result of one tool result (`{ content, details }`): the reply text as content,
/// `isError` when the call was rejected, and with `structured` the text and the details as
/// `structuredContent`, text first.
fn answer(result: Value, structured: bool) -> CallToolResult {
    let text = result
        .pointer("/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let details = match result.get("details") {
        Some(Value::Object(map)) => map.clone(),
        _ => JsonObject::new(),
    };
    let rejected = details.get("error").is_some_and(|e| !e.is_null());
    let mut answer = if rejected {
        CallToolResult::error(vec![ContentBlock::text(text.clone())])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text.clone())])
    };
    if structured {
        let mut content = JsonObject::new();
        content.insert("text".to_string(), Value::String(text));
        for (key, value) in details {
            if key != "text" {
                content.insert(key, value);
            }
        }
        answer.structured_content = Some(Value::Object(content));
    }
    answer
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("rpiv_todo", self.version.clone()).with_title("rpiv_todo"),
            )
            .with_instructions(self.instructions.clone())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![self.tool.clone()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        if request.name != self.tool.name {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool {:?} (this server has {:?})",
                    request.name, self.tool.name
                ),
                None,
            ));
        }
        self.run(request.arguments)
            .map(CallToolResponse::from)
            .map_err(|e| ErrorData::internal_error(e, None))
    }
}

fn main() {
    let opts = match parse_args(std::env::args().skip(1)) {
        Ok(Command::Serve(opts)) => opts,
        Ok(Command::Help) => {
            print!("{HELP}");
            return;
        }
        Ok(Command::Version) => {
            match version() {
                Ok(v) => println!("rpiv_todo_mcp {v}"),
                Err(e) => {
                    eprintln!("rpiv_todo_mcp: {e}");
                    std::process::exit(1);
                }
            }
            return;
        }
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    if let Err(e) = serve(opts) {
        eprintln!("rpiv_todo_mcp: {e}");
        std::process::exit(1);
    }
}

/// The version the embedded Lua scripts carry (the one a release and the installer use).
fn version() -> Result<String> {
    let lua = Lua::new();
    rpiv_todo::preload(&lua)?;
    Ok(lua.load(r#"return require("rpiv_todo").version"#).eval()?)
}

fn serve(opts: Options) -> Result<()> {
    let state_dir = opts.state_dir.unwrap_or_else(default_state_dir);
    // Made when missing, and named by its absolute path, as Neovim names it.
    let state_dir = std::fs::create_dir_all(&state_dir)
        .and_then(|()| std::fs::canonicalize(&state_dir))
        .map_err(|e| format!("--state-dir {}: {e}", state_dir.display()))?;
    let config = opts
        .config
        .or_else(|| Some(default_config()).filter(|p| p.is_file()));
    let cwd = std::env::current_dir()?;
    let key = cwd
        .to_str()
        .ok_or_else(|| format!("working directory {}: not valid UTF-8", cwd.display()))?;
    let session = opts.session.as_deref().unwrap_or("default");
    let server = Server::new(&state_dir, session, config.as_deref(), key, opts.structured)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async move {
        let running = server.serve(rmcp::transport::stdio()).await?;
        running.waiting().await?;
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn serve_opts(list: &[&str]) -> Options {
        match parse_args(args(list)).unwrap() {
            Command::Serve(opts) => opts,
            other => panic!("not a serve command: {other:?}"),
        }
    }

    #[test]
    fn options_are_read() {
        let opts = serve_opts(&["--state-dir", "/tmp/s", "--session", "work"]);
        assert_eq!(opts.state_dir, Some(PathBuf::from("/tmp/s")));
        assert_eq!(opts.session.as_deref(), Some("work"));
        assert!(!opts.structured);
        assert!(serve_opts(&["--structured"]).structured);
        assert!(matches!(parse_args(args(&["--help"])), Ok(Command::Help)));
        assert!(matches!(parse_args(args(&["-V"])), Ok(Command::Version)));
        assert!(matches!(
            parse_args(args(&["--version"])),
            Ok(Command::Version)
        ));
    }

    #[test]
    fn the_version_is_the_lua_scripts() {
        assert_eq!(version().unwrap(), env!("CARGO_PKG_VERSION"));
    }

    fn result(text: &str, error: Option<&str>) -> Value {
        let mut details = serde_json::json!({
            "action": "update",
            "params": {"action": "update", "id": 9},
            "tasks": [{"id": 1, "subject": "a", "status": "pending"}],
            "nextId": 2
        });
        if let Some(e) = error {
            details["error"] = Value::String(e.to_string());
        }
        serde_json::json!({"content": [{"type": "text", "text": text}], "details": details})
    }

    #[test]
    fn by_default_the_answer_is_the_reply_text_alone() {
        for (text, error) in [
            ("Created #1: a (pending)", None),
            ("Error: #9 not found", Some("#9 not found")),
        ] {
            let got = serde_json::to_value(answer(result(text, error), false)).unwrap();
            assert_eq!(
                got["content"],
                serde_json::json!([{"type": "text", "text": text}])
            );
            assert_eq!(got["isError"], error.is_some());
            assert_eq!(got.get("structuredContent"), None);
        }
    }

    #[test]
    fn structured_content_starts_with_the_reply_text() {
        let bad = answer(result("Error: #9 not found", Some("#9 not found")), true);
        assert_eq!(bad.is_error, Some(true));
        let content = bad.structured_content.unwrap();
        let keys: Vec<&String> = content.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["text", "action", "params", "tasks", "nextId", "error"]
        );
        assert_eq!(content["text"], "Error: #9 not found");
        assert_eq!(content["error"], "#9 not found");
        assert_eq!(content["nextId"], 2);
        let schema = output_schema();
        assert_eq!(
            schema["required"],
            serde_json::json!(["text", "tasks", "nextId"])
        );
    }

    fn config_file(text: &str) -> (PathBuf, ConfigOptions, String) {
        let dir = std::env::temp_dir().join(format!(
            "rpiv_todo_mcp-config-{}-{}",
            std::process::id(),
            text.len()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("mcp.lua");
        std::fs::write(&path, text).unwrap();
        let lua = Lua::new();
        rpiv_todo::preload(&lua).unwrap();
        let got = run_config(&lua, &path);
        let _ = std::fs::remove_dir_all(&dir);
        match got {
            Ok(opts) => (path, opts, String::new()),
            Err(e) => (path, ConfigOptions::default(), e.to_string()),
        }
    }

    #[test]
    fn the_config_file_may_turn_structured_content_on() {
        let (_, opts, err) = config_file("return { structured = true }");
        assert_eq!((opts.structured, err.as_str()), (Some(true), ""));
        let (_, opts, err) = config_file("local x = 1");
        assert_eq!((opts, err.as_str()), (ConfigOptions::default(), ""));
        let (path, _, err) = config_file("return { structured = 'yes' }");
        assert_eq!(
            err,
            format!(
                "config {}: structured: expected a boolean, got a string",
                path.display()
            )
        );
        let (path, _, err) = config_file("return { structure = true }");
        assert_eq!(
            err,
            format!(
                "config {}: unknown server option \"structure\" in the returned table (known: structured)",
                path.display()
            )
        );
        let (_, _, err) = config_file("return 42");
        assert!(
            err.ends_with(
                "must return nothing or a table such as { structured = true }, not a integer"
            ),
            "{err}"
        );
    }

    #[test]
    fn a_bad_argument_is_refused_with_the_usage() {
        let err = parse_args(args(&["--bogus"])).unwrap_err();
        assert!(err.starts_with("unknown argument \"--bogus\"\nusage: rpiv_todo_mcp"));
        let err = parse_args(args(&["--session"])).unwrap_err();
        assert!(err.starts_with("--session needs a value"));
        let err = parse_args(args(&["--session", ""])).unwrap_err();
        assert!(err.starts_with("--session needs a value"));
    }
}
