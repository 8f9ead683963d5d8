//! The one integration binary: drives the public Lua contract (README, "Lua API") through an
//! embedded Lua 5.4 with `rpiv_todo::preload`.

mod support;

mod core;
mod layer;
mod overlay;
mod store;
