//! rpiv_todo: the `todo` tool of an LLM agent as a native Lua module.
//! (crate docs are written in the README pass)

pub mod task;
