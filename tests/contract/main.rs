//! The one integration binary: what only a Rust host or a Rust test can check, through an
//! embedded Lua 5.4 and `rpiv_todo::preload`. Embedding itself (the preloaded scripts, the
//! example host), the tool's schema through a JSON Schema validator, display width against
//! the unicode-width crate, and a writer killed or starved of disk in a child process.
//! The public Lua contract as such is checked once, from real interpreters (luajit,
//! lua5.1, lua5.4): tests/lua/*_spec.lua.

mod support;

mod core;
mod layer;
mod overlay;
mod store;
