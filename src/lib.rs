//! rpiv_todo: the `todo` tool of an LLM agent — a task list the model keeps across a long
//! session — as a native Lua module (`rpiv_todo.core`) plus the Lua scripts hosts
//! `require`.
//!
//! ```
//! let lua = mlua::Lua::new();
//! rpiv_todo::preload(&lua).unwrap();
//! let text: String = lua
//!     .load(r#"
//!         local core = require("rpiv_todo.core")
//!         local list = core.list()
//!         return list:apply({ action = "create", subject = "Write the parser" }).content[1].text
//!     "#)
//!     .eval()
//!     .unwrap();
//! assert_eq!(text, "Created #1: Write the parser (pending)");
//! ```
//!
//! The core is plain Rust and knows nothing of Lua: [`task`] (model and transitions),
//! [`params`], [`reducer`], [`call`] (one call from JSON text to JSON text), [`graph`],
//! [`json`] (snapshots and the result envelope), [`js`] (JSON as JavaScript compares it),
//! [`sanitize`], [`replay`], [`overlay`] (budget selection), [`width`] and [`i18n`].
//! The `lua` module is the boundary.
//!
//! # Features
//! Pick one Lua flavour — `lua54` (default), `lua51`, `luajit` — and one link mode:
//! `vendored` (default; the interpreter is compiled in, for Rust hosts and `cargo test`)
//! or `module` (a loadable `lua/rpiv_todo/core.so` with entry `luaopen_rpiv_todo_core`).

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
pub mod js;
pub mod json;
pub mod overlay;
pub mod params;
pub mod reducer;
pub mod replay;
pub mod sanitize;
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

// The README's Rust example (the complete host `main.rs`) compiles and runs as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
