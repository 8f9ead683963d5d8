//! An MCP server on stdio for rpiv_todo's `todo` tool, for agents that run outside the editor
//! (Claude Code, Codex, Gemini CLI, or any client of the Model Context Protocol).
//!
//! It embeds Lua like `examples/host`: `rpiv_todo::preload` makes `require("rpiv_todo")`
//! work, the user's config file runs first (so a guidance override applies), and the tool's
//! name, description and JSON Schema come from the Lua layer. The protocol side is `rmcp`,
//! the official Rust SDK: `initialize`, `tools/list` and `tools/call` (revision 2025-11-25,
//! and `server/discover` of 2026-07-28, which rmcp answers).
//!
//! Each call answers with the reply text as content, `isError` on a rejected call, and the
//! result's `details` (the whole list after the call) as `structuredContent`. The list is
//! saved after every change where Neovim's `persist = true` keeps it
//! (`stdpath("state")/rpiv_todo`), one list per working directory, so the editor's panel
//! shows what the agent does.
//!
//! ```text
//! scripts/mcp.sh                          # = cargo run --release -p rpiv_todo_mcp --
//! scripts/mcp.sh --state-dir DIR --session NAME --config FILE
//! scripts/mcp.sh --help
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

const USAGE: &str =
    "usage: rpiv_todo_mcp [--state-dir DIR] [--session NAME] [--config FILE] [--help]";

/// What `--help` prints.
const HELP: &str = r#"usage: rpiv_todo_mcp [--state-dir DIR] [--session NAME] [--config FILE] [--help]

An MCP server on stdio offering rpiv_todo's `todo` tool. Start it from an MCP client
(scripts/mcp.sh builds it on first use). The list is saved after every change, one list
per working directory, in the files Neovim's persist = true uses, so the editor shows
the agent's tasks.

options:
  --state-dir DIR   where the lists are saved (default: the directory Neovim uses,
                    $XDG_STATE_HOME/nvim/rpiv_todo or ~/.local/state/nvim/rpiv_todo;
                    NVIM_APPNAME replaces "nvim" as it does for Neovim)
  --session NAME    the list to use in this directory (default: "default", the one the
                    editor shows)
  --config FILE     a Lua file run first, e.g. require("rpiv_todo").setup({ guidance = ... })
                    (default: $XDG_CONFIG_HOME/rpiv_todo/mcp.lua or
                    ~/.config/rpiv_todo/mcp.lua, when it exists)
  -h, --help        this text
"#;

/// Command-line options.
#[derive(Debug, Default)]
struct Options {
    state_dir: Option<PathBuf>,
    session: Option<String>,
    config: Option<PathBuf>,
}

/// Parse the arguments; `Ok(None)` for `--help`.
fn parse_args(
    args: impl IntoIterator<Item = String>,
) -> std::result::Result<Option<Options>, String> {
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
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok(Some(opts))
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
}

impl Server {
    /// A Lua state with rpiv_todo preloaded, the user's config run, the list restored.
    fn new(state_dir: &Path, session: &str, config: Option<&Path>, key: &str) -> Result<Server> {
        let lua = Lua::new();
        rpiv_todo::preload(&lua)?;
        if let Some(config) = config {
            let text = std::fs::read_to_string(config)
                .map_err(|e| format!("config {}: {e}", config.display()))?;
            lua.load(text)
                .set_name(format!("@{}", config.display()))
                .exec()
                .map_err(|e| format!("config {}: {e}", config.display()))?;
        }
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
        let tool = Tool::new(
            desc.get::<String>("name")?,
            desc.get::<String>("description")?,
            Arc::new(schema as JsonObject),
        )
        .with_title(desc.get::<String>("title")?);
        Ok(Server {
            call: glue.get("call")?,
            take_errors: glue.get("take_errors")?,
            tool,
            instructions: desc.get("instructions")?,
            version: desc.get("version")?,
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
        let text = result
            .pointer("/content/0/text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let details = result.get("details").cloned().unwrap_or(Value::Null);
        let rejected = details.get("error").is_some_and(|e| !e.is_null());
        let mut answer = if rejected {
            CallToolResult::error(vec![ContentBlock::text(text)])
        } else {
            CallToolResult::success(vec![ContentBlock::text(text)])
        };
        answer.structured_content = Some(details);
        Ok(answer)
    }
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
        Ok(Some(opts)) => opts,
        Ok(None) => {
            print!("{HELP}");
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
    let server = Server::new(&state_dir, session, config.as_deref(), key)?;
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

    #[test]
    fn options_are_read() {
        let opts = parse_args(args(&["--state-dir", "/tmp/s", "--session", "work"]))
            .unwrap()
            .unwrap();
        assert_eq!(opts.state_dir, Some(PathBuf::from("/tmp/s")));
        assert_eq!(opts.session.as_deref(), Some("work"));
        assert!(parse_args(args(&["--help"])).unwrap().is_none());
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
