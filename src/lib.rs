//! The `todo` tool of an LLM agent — the task list a model keeps for itself across a long
//! session — as a native Lua module (`rpiv_todo.core`) with the Lua scripts hosts
//! `require` (`rpiv_todo`): the tool spec to register with a model (name, description,
//! JSON Schema, prompt guidance, `execute`), one list per agent session restored by
//! replaying the conversation, the `/todos` view and a live panel.
//!
//! A Rust host embeds it in its own Lua state: [`preload`] puts `rpiv_todo` and
//! `rpiv_todo.core` in `package.preload` (the Lua scripts are compiled in; nothing is read
//! from disk), and from then on the host works through the Lua API, as every other host
//! does:
//!
//! ```
//! use rpiv_todo::mlua::{Function, Lua, LuaSerdeExt, Table};
//!
//! # fn main() -> rpiv_todo::mlua::Result<()> {
//! let lua = Lua::new();
//! rpiv_todo::preload(&lua)?;
//! let todo: Table = lua.load(r#"return require("rpiv_todo")"#).eval()?;
//!
//! // The spec to register with the model: name, description, JSON Schema, execute.
//! let spec: Table = todo.get::<Function>("tool")?.call(())?;
//! assert_eq!(spec.get::<String>("name")?, "todo");
//! let schema: serde_json::Value = lua.from_value(spec.get("parameters")?)?;
//! assert_eq!(schema["required"][0], "action");
//!
//! // A call as the model sends it: the arguments as JSON text, in the session "chat-1".
//! let execute: Function = spec.get("execute")?;
//! let ctx = lua.create_table()?;
//! ctx.set("session", "chat-1")?;
//! let result: Table = execute.call((r#"{"action":"create","subject":"Write the parser"}"#, ctx))?;
//! let text: String = result.get::<Table>("content")?.get::<Table>(1)?.get("text")?;
//! assert_eq!(text, "Created #1: Write the parser (pending)");
//!
//! // `details` is the whole list after the call, for the host to keep with the reply.
//! let details: serde_json::Value = lua.from_value(result.get("details")?)?;
//! assert_eq!(details["tasks"][0]["status"], "pending");
//! assert_eq!(details["nextId"], 2);
//! # Ok(())
//! # }
//! ```
//!
//! Build against the mlua this crate re-exports ([`mlua`]), or name the same mlua version
//! with the same Lua flavour in your own `Cargo.toml`: two flavours in one build are a
//! compile error. The repository's docs/ has the Lua API in full (docs/lua.md), and the
//! Neovim, LuaRocks and plain Lua routes.
//!
//! The core is plain Rust and knows nothing of Lua: [`task`] (model and transitions),
//! [`params`], [`reducer`], [`call`] (one call from JSON text to JSON text), [`graph`],
//! [`json`] (snapshots and the result envelope), [`js`] (JSON as JavaScript compares it),
//! [`sanitize`], [`replay`], [`overlay`] (budget selection), [`width`], [`i18n`] and
//! [`store`] (atomic save and load of a list).
//! The Lua boundary is private; [`exports`] builds the `rpiv_todo.core` table and
//! [`ApiError`] is the source of the Lua errors it raises for API misuse.
//!
//! # Features
//!
//! Pick exactly one Lua flavour and one link mode; any other combination stops the build
//! with a compile error saying why.
//!
//! | feature | what it selects |
//! | --- | --- |
//! | `lua54` (default) | Lua 5.4 |
//! | `lua51` | Lua 5.1 |
//! | `luajit` | LuaJIT (Neovim's Lua) |
//! | `vendored` (default) | the interpreter compiled into the crate: Rust hosts, `cargo test` |
//! | `module` | a loadable library for an existing interpreter: `rpiv_todo/core.so` with the entry `luaopen_rpiv_todo_core` (`scripts/build-module.sh <flavour>`) |
//!
//! A Rust host on LuaJIT: `rpiv_todo = { version = "0.1", default-features = false,
//! features = ["luajit", "vendored"] }`.

#![warn(missing_docs)]

/// The mlua this crate was built with: use it (`rpiv_todo::mlua::Lua`) so the host's Lua
/// state and the crate's exports come from the same mlua and the same Lua.
pub use mlua;

#[cfg(any(
    all(feature = "lua54", feature = "lua51"),
    all(feature = "lua54", feature = "luajit"),
    all(feature = "lua51", feature = "luajit"),
))]
compile_error!("rpiv_todo: pick exactly one Lua flavour: `lua54`, `lua51` or `luajit` (with --no-default-features for the last two)");

#[cfg(not(any(feature = "lua54", feature = "lua51", feature = "luajit")))]
compile_error!("rpiv_todo: pick a Lua flavour feature: `lua54`, `lua51` or `luajit`");

#[cfg(all(feature = "vendored", feature = "module"))]
compile_error!("rpiv_todo: `module` builds a loadable library against the host's Lua and cannot be combined with `vendored`; build it with --no-default-features --features module,<flavour>");

#[cfg(not(any(feature = "vendored", feature = "module")))]
compile_error!(
    "rpiv_todo: pick a link mode: `vendored` (embed Lua) or `module` (loadable library)"
);

pub mod call;
pub mod error;
pub mod graph;
pub mod i18n;
pub mod journal;
pub mod js;
pub mod json;
pub mod limits;
pub mod markdown;
pub mod naming;
pub mod overlay;
pub mod params;
pub mod reducer;
pub mod replay;
pub mod sanitize;
pub mod shared;
pub mod store;
pub mod strict;
pub mod task;
pub mod width;

mod lua;

pub use error::Error;
pub use lua::{exports, preload, ApiError};

/// The Lua flavour this build links against.
pub const FLAVOUR: &str = if cfg!(feature = "luajit") {
    "luajit"
} else if cfg!(feature = "lua51") {
    "lua51"
} else {
    "lua54"
};

/// The embedded Lua scripts: (module name, source).
const SCRIPTS: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/scripts.rs"));

// The Rust blocks of the README and of docs/rust.md (the complete host `main.rs`) compile
// and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(doctest)]
#[doc = include_str!("../docs/rust.md")]
struct RustHostDoctests;

#[cfg(test)]
mod readme_tests {
    /// The `version = "..."` of the dependency line that starts with `name = ` in `toml`.
    fn version_of<'a>(toml: &'a str, name: &str) -> Option<&'a str> {
        let line = toml
            .lines()
            .find(|l| l.starts_with(&format!("{name} = ")))?;
        let rest = &line[line.find("version = \"")? + "version = \"".len()..];
        rest.get(..rest.find('"')?)
    }

    #[test]
    fn the_readme_names_the_mlua_and_crate_versions_a_host_builds_against() {
        // The Rust host page, docs/rust.md, where the README sends Rust hosts.
        let readme = include_str!("../docs/rust.md");
        let manifest = include_str!("../Cargo.toml");
        let mlua = version_of(manifest, "mlua").expect("Cargo.toml depends on mlua");
        assert_eq!(version_of(readme, "mlua"), Some(mlua), "the mlua line");
        // `rpiv_todo = "0.1"`: the major.minor of this crate.
        let version = env!("CARGO_PKG_VERSION");
        let minor = &version[..version.rfind('.').unwrap_or(version.len())];
        assert!(
            readme.contains(&format!("`rpiv_todo = \"{minor}\"`")),
            "docs/rust.md names rpiv_todo = \"{minor}\""
        );
    }
}
