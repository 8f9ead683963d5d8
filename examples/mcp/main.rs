//! An MCP server on stdio for rpiv_todo's `todo` tool, for agents that run outside the editor
//! (Claude Code, Codex, Gemini CLI, or any client of the Model Context Protocol).
//!
//! Lua runs once, at start: the user's config file first (so a guidance override applies),
//! then the Lua layer gives the tool's name, title, description, JSON Schema, the
//! instructions and the version. While it runs, and after, the process's stdout is
//! stderr: whatever a config prints (`print`, `io.write`, a command it runs) goes to the
//! log, and only the protocol's messages reach the client (the protocol writes to its own
//! copy of stdout). Each call then goes straight to the core: the arguments rmcp parsed
//! are run by `rpiv_todo::call` in one `SharedFile` transaction on the list file, on a
//! thread of its own (`list.rs`), so a call waiting for another program's lock never
//! holds up a ping or a cancellation. The protocol side is `rmcp`, the official Rust SDK,
//! over a stdio transport of its own (`transport.rs`, which answers the lines rmcp would
//! drop): `initialize`, `tools/list` and `tools/call` (revision 2025-11-25, and
//! `server/discover` of 2026-07-28, which rmcp answers; never 2025-03-26, whose batches
//! it refuses).
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
//! rpiv_todo_mcp [--state-dir DIR] [--session NAME] [--config FILE] [--structured] [--resources]
//! rpiv_todo_mcp export [--state-dir DIR] [--session NAME]   # the list as Markdown
//! rpiv_todo_mcp --help | --version
//! ```
//!
//! With `--resources` the list is also a resource (`todo://list/<session>`,
//! `text/markdown`, `resource.rs`): `resources/read` gives the checklist `:Todos edit`
//! shows, and a subscribed client is sent `notifications/resources/updated` when another
//! program changes the list file. Off by default: Claude Code, Gemini CLI and opencode turn
//! a server's resources into tools of their own, sent with every request.

mod hook;
mod list;
mod resource;
mod transport;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, JsonObject, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ResourceContents, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, Tool, ToolAnnotations, UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use rpiv_todo::mlua::{self, Function, Lua, Table};
use serde_json::Value;

/// The Lua side: the tool's description.
const GLUE: &str = include_str!("server.lua");

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const USAGE: &str = "usage: rpiv_todo_mcp [--state-dir DIR] [--session NAME] [--config FILE] \
                     [--structured] [--resources] [--help] [--version]";

/// What `--help` prints.
const HELP: &str = r#"usage: rpiv_todo_mcp [--state-dir DIR] [--session NAME] [--config FILE] [--structured]
                     [--resources]
       rpiv_todo_mcp export [--state-dir DIR] [--session NAME]
       rpiv_todo_mcp --help | --version

An MCP server on stdio offering rpiv_todo's `todo` tool; an MCP client starts it (through
`npx -y rpiv-todo-mcp`, the plugin's scripts/mcp.sh, or this binary). The list is saved
after every change, one list per working directory, in the files Neovim's persist = true
uses, so the editor shows the agent's tasks.

`export` prints the list the server would use as a Markdown checklist (for a terminal or
a git hook), and writes nothing. With --resources the server also offers the list as a
resource, todo://list/<session> (text/markdown), and tells a subscribed client when
another program changes it.

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
  --resources       offer the list as a resource (also the config's { resources = true }).
                    Off by default: Claude Code, Gemini CLI and opencode add tools of their
                    own for a server's resources (ListMcpResourcesTool, read_mcp_resource,
                    ...), 240 to 290 tokens sent with every request
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
    resources: bool,
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
            "--resources" => opts.resources = true,
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

/// The server: the tool as advertised, and the list thread its calls go to.
struct Server {
    tool: Tool,
    instructions: String,
    version: String,
    jobs: mpsc::Sender<list::Job>,
    /// The list as a resource (`todo://list/<session>`).
    resource: Arc<resource::ListResource>,
    /// Whether the resource is offered (`--resources`).
    resources: bool,
}

/// What the Lua layer says about the tool (and the config about the server).
struct Described {
    tool: Tool,
    instructions: String,
    version: String,
    structured: bool,
    /// Whether the list is offered as a resource.
    resources: bool,
}

/// What the config file may return: a table of server options, or nothing.
#[derive(Debug, Default, PartialEq)]
struct ConfigOptions {
    structured: Option<bool>,
    resources: Option<bool>,
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
            ("resources", mlua::Value::Boolean(b)) => opts.resources = Some(b),
            (key @ ("structured" | "resources"), other) => {
                return Err(format!(
                    "config {name}: {key}: expected a boolean, got a {}",
                    other.type_name()
                )
                .into())
            }
            (key, _) => {
                return Err(format!(
                    "config {name}: unknown server option {key:?} in the returned table (known: structured, resources)"
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

/// Run Lua once: the user's config, then the tool's description. `structured` is
/// `--structured`; the config's `structured` also turns it on. `resources` is
/// `--resources`; the config's `resources = true` also turns the resource on. The Lua
/// state is gone when this returns.
fn describe(config: Option<&Path>, structured: bool, resources: bool) -> Result<Described> {
    let lua = Lua::new();
    rpiv_todo::preload(&lua)?;
    #[cfg(not(unix))]
    lua.load(TO_STDERR).exec()?;
    let from_config = match config {
        Some(config) => run_config(&lua, config),
        None => Ok(ConfigOptions::default()),
    };
    // What a config wrote to io.stdout (stderr by now) goes out before anything else.
    let _ = lua.load("io.stdout:flush()").exec();
    let from_config = from_config?;
    let structured = structured || from_config.structured == Some(true);
    let resources = resources || from_config.resources == Some(true);
    let glue: Table = lua.load(GLUE).set_name("@examples/mcp/server.lua").eval()?;
    let desc: Table = glue.get::<Function>("describe")?.call(())?;
    // JSON text in a fixed order (`action` first), the same bytes at every start, so the
    // agents' prompt caches hold across sessions: never a Lua table's order.
    let parameters: Value = serde_json::from_str(&desc.get::<String>("parameters_json")?)?;
    let Value::Object(schema) = parameters else {
        return Err("the tool's parameters are not a JSON object".into());
    };
    let title = desc.get::<String>("title")?;
    let mut tool = Tool::new(
        desc.get::<String>("name")?,
        desc.get::<String>("description")?,
        Arc::new(schema as JsonObject),
    )
    .with_title(title.clone())
    .with_annotations(annotations(title));
    if structured {
        tool = tool.with_raw_output_schema(Arc::new(output_schema()));
    }
    Ok(Described {
        tool,
        instructions: desc.get("instructions")?,
        version: desc.get("version")?,
        structured,
        resources,
    })
}

/// What the tool does, as MCP's hints say it: it changes the list (not read-only), `delete`
/// and `clear` remove tasks (destructive), a repeated `create` makes another task (not
/// idempotent), and it touches nothing outside its list file (a closed world).
fn annotations(title: String) -> ToolAnnotations {
    ToolAnnotations::with_title(title)
        .read_only(false)
        .destructive(true)
        .idempotent(false)
        .open_world(false)
}

/// The protocol revisions served: rmcp's, without 2025-03-26, whose JSON-RPC batches this
/// server refuses (a client asking for it is answered with 2025-11-25).
const VERSIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2024_11_05,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2026_07_28,
];

impl Server {
    /// `uri` is this server's resource, or the error MCP gives for an unknown one.
    fn known(&self, uri: &str) -> std::result::Result<(), ErrorData> {
        if !self.resources {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode(-32002),
                format!("resource not found: {uri} (this server offers none without --resources)"),
                None,
            ));
        }
        if uri == self.resource.uri {
            return Ok(());
        }
        Err(ErrorData::new(
            rmcp::model::ErrorCode(-32002),
            format!(
                "resource not found: {uri} (this server has {})",
                self.resource.uri
            ),
            None,
        ))
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let capabilities = if self.resources {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .build()
        } else {
            ServerCapabilities::builder().enable_tools().build()
        };
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("rpiv_todo", self.version.clone()).with_title("rpiv_todo"),
            )
            .with_instructions(self.instructions.clone())
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(VERSIONS)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        // One page: no cursor this server gave out can come back.
        if let Some(cursor) = request.and_then(|r| r.cursor) {
            return Err(ErrorData::invalid_params(
                format!("invalid cursor {cursor:?}: the tool list has one page"),
                None,
            ));
        }
        Ok(ListToolsResult::with_all_items(vec![self.tool.clone()]))
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListResourcesResult, ErrorData> {
        if let Some(cursor) = request.and_then(|r| r.cursor) {
            return Err(ErrorData::invalid_params(
                format!("invalid cursor {cursor:?}: the resource list has one page"),
                None,
            ));
        }
        let offered = if self.resources {
            vec![self.resource.describe()]
        } else {
            Vec::new()
        };
        Ok(ListResourcesResult::with_all_items(offered))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ReadResourceResponse, ErrorData> {
        self.known(&request.uri)?;
        let text = self
            .resource
            .markdown()
            .map_err(|e| ErrorData::internal_error(e, None))?;
        let contents = ResourceContents::text(text, request.uri).with_mime_type("text/markdown");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<(), ErrorData> {
        self.known(&request.uri)?;
        self.resource.watch(context.peer.clone());
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<(), ErrorData> {
        self.known(&request.uri)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
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
        let (reply, result) = tokio::sync::oneshot::channel();
        let ct = context.ct.clone();
        // The client's name is this server's name as a writer of the list: the others'
        // notes say "added by claude-code", not "another program".
        let by = context
            .peer
            .peer_info()
            .map(|info| info.client_info.name.clone())
            .filter(|name| !name.trim().is_empty());
        let job = list::Job {
            by,
            args: Value::Object(request.arguments.unwrap_or_default()),
            cancelled: Box::new(move || ct.is_cancelled()),
            reply,
        };
        let stopped = || ErrorData::internal_error("the list's thread has stopped", None);
        self.jobs.send(job).map_err(|_| stopped())?;
        result
            .await
            .map(CallToolResponse::from)
            .map_err(|_| stopped())
    }
}

fn main() {
    // `hook EVENT ...`: an agent's hook (hook.rs), not the server.
    if std::env::args().nth(1).as_deref() == Some("hook") {
        std::process::exit(hook::main(std::env::args().skip(2)));
    }
    // `export`: the list this server would use, as the Markdown checklist, on stdout.
    if std::env::args().nth(1).as_deref() == Some("export") {
        std::process::exit(export(std::env::args().skip(2)));
    }
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

/// The protocol's channel: its input and its output.
type Channel = (
    Box<dyn std::io::Read + Send>,
    Box<dyn std::io::Write + Send>,
);

/// The protocol's own copies of stdin and stdout; from now on the process's stdout is its
/// stderr and its stdin is empty, so that nothing else (a config's `print`, a command it
/// runs, a stray write) can reach the protocol channel or read from it.
#[cfg(unix)]
fn protocol_channel() -> Result<Channel> {
    use std::os::fd::AsFd;
    let input = std::io::stdin().as_fd().try_clone_to_owned()?;
    let output = std::io::stdout().as_fd().try_clone_to_owned()?;
    rustix::stdio::dup2_stdout(std::io::stderr())?;
    rustix::stdio::dup2_stdin(std::fs::File::open("/dev/null")?)?;
    Ok((
        Box::new(std::fs::File::from(input)),
        Box::new(std::fs::File::from(output)),
    ))
}

/// Elsewhere (Windows) stdout stays the protocol's, and Lua's `print` and `io.write` are
/// made to write to stderr before any Lua code runs (`TO_STDERR`).
#[cfg(not(unix))]
fn protocol_channel() -> Result<Channel> {
    Ok((Box::new(std::io::stdin()), Box::new(std::io::stdout())))
}

/// Lua's ways to stdout, pointed at stderr (where the process's stdout cannot be).
#[cfg_attr(unix, allow(dead_code))]
const TO_STDERR: &str = r##"
local err = io.stderr
io.output(err)
io.stdout = err
io.write = function(...) return err:write(...) end
print = function(...)
  local parts = {}
  for i = 1, select("#", ...) do
    parts[i] = tostring((select(i, ...)))
  end
  err:write(table.concat(parts, "\t"), "\n")
end
"##;

/// The state directory, made when missing (with its missing parents) readable by the user
/// alone, 0700: the list files' names spell out project paths. Named by its absolute path,
/// as Neovim names it.
/// `rpiv-todo-mcp export [--state-dir DIR] [--session NAME]`: the list the server would use
/// in this directory, as a Markdown checklist on stdout; nothing is created or written.
fn export(args: impl IntoIterator<Item = String>) -> i32 {
    let opts = match parse_args(args) {
        Ok(Command::Serve(opts)) if opts.config.is_none() && !opts.structured => opts,
        Ok(Command::Help) => {
            println!("usage: rpiv_todo_mcp export [--state-dir DIR] [--session NAME]");
            return 0;
        }
        Ok(_) => {
            eprintln!("usage: rpiv_todo_mcp export [--state-dir DIR] [--session NAME]");
            return 2;
        }
        Err(message) => {
            eprintln!("{message}");
            return 2;
        }
    };
    let state_dir = opts.state_dir.unwrap_or_else(default_state_dir);
    // Named as the server names it: by the absolute directory (when it exists at all).
    let state_dir = std::fs::canonicalize(&state_dir).unwrap_or(state_dir);
    let Some(key) = std::env::current_dir()
        .ok()
        .and_then(|d| d.to_str().map(str::to_owned))
    else {
        eprintln!("rpiv_todo_mcp export: the working directory is not valid UTF-8");
        return 1;
    };
    let session = opts.session.as_deref().unwrap_or("default");
    let path = state_dir.join(rpiv_todo::naming::file_name(
        key.as_bytes(),
        session.as_bytes(),
    ));
    match resource::markdown_of(&path) {
        Ok(text) => {
            print!("{text}");
            0
        }
        Err(e) => {
            eprintln!("rpiv_todo_mcp export: {e}");
            1
        }
    }
}

fn make_state_dir(dir: &Path) -> std::io::Result<PathBuf> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    std::fs::canonicalize(dir)
}

fn serve(opts: Options) -> Result<()> {
    let (input, output) = protocol_channel()?;
    let state_dir = opts.state_dir.unwrap_or_else(default_state_dir);
    let state_dir = make_state_dir(&state_dir)
        .map_err(|e| format!("--state-dir {}: {e}", state_dir.display()))?;
    let config = opts
        .config
        .or_else(|| Some(default_config()).filter(|p| p.is_file()));
    let cwd = std::env::current_dir()?;
    let key = cwd
        .to_str()
        .ok_or_else(|| format!("working directory {}: not valid UTF-8", cwd.display()))?;
    let session = opts.session.as_deref().unwrap_or("default");
    let described = describe(config.as_deref(), opts.structured, opts.resources)?;
    // The file rpiv_todo.persist names for this directory and session (the editor's).
    let path = state_dir.join(rpiv_todo::naming::file_name(
        key.as_bytes(),
        session.as_bytes(),
    ));
    let list = list::List::open(path.clone(), session, described.structured);
    let resource = Arc::new(resource::ListResource::new(
        path,
        session,
        list.own_generation(),
    ));
    let (jobs, worker) = list::spawn(list)?;
    let server = Server {
        tool: described.tool,
        instructions: described.instructions,
        version: described.version,
        jobs,
        resource,
        resources: described.resources,
    };
    let (stdio, flusher) = transport::start(input, output)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let served = runtime.block_on(async move {
        let running = server.serve(stdio).await?;
        running.waiting().await?;
        Ok::<(), Box<dyn std::error::Error>>(())
    });
    // Every task (and with it the server's end of the list thread's queue) goes; calls
    // not yet started are skipped, the one under way finishes.
    drop(runtime);
    let _ = worker.join();
    flusher.flush();
    served
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tool_text_is_the_same_bytes_at_every_start_and_says_the_snippet_once() {
        let (a, b) = (
            describe(None, false, false).unwrap(),
            describe(None, false, false).unwrap(),
        );
        let schema = |d: &Described| serde_json::to_string(&*d.tool.input_schema).unwrap();
        assert_eq!(schema(&a), schema(&b));
        let first = a.tool.input_schema["properties"]
            .as_object()
            .and_then(|p| p.keys().next().cloned());
        assert_eq!(first.as_deref(), Some("action"));
        let description = a.tool.description.as_deref().unwrap_or_default();
        // Claude Code keeps 2048 characters of an MCP tool's description.
        assert!(description.chars().count() <= 2048, "{}", description.len());
        assert!(!a.instructions.is_empty());
        assert!(
            !description.contains(a.instructions.as_str()),
            "the snippet twice"
        );
    }

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
            let got = serde_json::to_value(list::answer(&result(text, error), false)).unwrap();
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
        let bad = list::answer(&result("Error: #9 not found", Some("#9 not found")), true);
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
    fn the_config_file_may_turn_structured_content_and_the_resource_on() {
        let (_, opts, err) = config_file("return { structured = true }");
        assert_eq!((opts.structured, err.as_str()), (Some(true), ""));
        let (_, opts, err) = config_file("return { resources = true }");
        assert_eq!((opts.resources, err.as_str()), (Some(true), ""));
        let (path, _, err) = config_file("return { resources = 0 }");
        assert_eq!(
            err,
            format!(
                "config {}: resources: expected a boolean, got a integer",
                path.display()
            )
        );
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
                "config {}: unknown server option \"structure\" in the returned table (known: structured, resources)",
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

    /// Where the process's stdout cannot be made stderr (Windows), Lua's ways to it are.
    #[test]
    fn lua_can_be_pointed_at_stderr() {
        let path =
            std::env::temp_dir().join(format!("rpiv_todo_mcp-stderr-{}", std::process::id()));
        let lua = Lua::new();
        // A file stands for stderr here, so the test can read what went to it.
        lua.load("io.stderr = assert(io.open(..., 'w'))")
            .call::<()>(path.to_str().unwrap())
            .unwrap();
        lua.load(TO_STDERR).exec().unwrap();
        let (same, output): (bool, bool) = lua
            .load("return io.stdout == io.stderr, io.output() == io.stderr")
            .eval()
            .unwrap();
        assert!(same && output);
        lua.load("print(); print(1, nil, true); io.write('a', 2); io.stdout:write('b'); io.stderr:close()")
            .exec()
            .unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(written, "\n1\tnil\ttrue\na2b");
    }

    #[cfg(unix)]
    #[test]
    fn a_new_state_directory_is_the_users_alone() {
        use std::os::unix::fs::PermissionsExt;
        let base = std::env::temp_dir().join(format!("rpiv_todo_mcp-dir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let made = make_state_dir(&base.join("a/b")).unwrap();
        assert!(made.is_absolute() && made.ends_with("a/b"));
        for dir in [base.join("a"), base.join("a/b")] {
            let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", dir.display());
        }
        let _ = std::fs::remove_dir_all(&base);
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
