-- LuaRocks package of rpiv_todo: the Lua scripts plus the native module rpiv_todo.core,
-- built with cargo for the Lua that LuaRocks installs for (LuaJIT, 5.1 or 5.4). From a
-- checkout (needs cargo and a C linker, and the Lua headers LuaRocks checks for):
--
--   luarocks --lua-version 5.4 make rpiv_todo-0.1.0-1.rockspec   (or 5.1; add --local or --tree DIR)
--
-- (rpiv_todo-scm-1.rockspec beside it is the Neovim plugin managers' rock: Lua files
-- only, the native module installed prebuilt by :TodosInstall.)
--
-- The `command` build type runs scripts/luarocks.sh, which picks the flavour from the
-- interpreter ($(LUA)) and calls scripts/build-module.sh. The usual backend for mlua
-- modules, `luarocks-build-rust-mlua` (build.type = "rust-mlua"), does the same from
-- Cargo.toml's features; it is itself a rock to install first, so this rockspec keeps to
-- what a stock LuaRocks has.
rockspec_format = "3.0"
package = "rpiv_todo"
version = "0.1.0-1"
source = {
  -- `luarocks make` builds the checkout it runs in and never fetches this.
  url = "git+https://github.com/rpiv-todo/rpiv_todo.git",
  tag = "v0.1.0",
}
description = {
  summary = "The todo tool of an LLM agent as a native Lua module (Rust core)",
  detailed = [[
The task list an LLM agent keeps across a long session: the tool spec to register with a
model (JSON Schema, prompt guidance, execute), one list per agent session restored by
replaying the conversation, the /todos view and a live overlay panel. A Rust core
(reducer, replay, sanitizing, display-width truncation) under a Lua layer; runs in Lua
5.1, Lua 5.4, LuaJIT and Neovim.]],
  license = "MIT",
  labels = { "llm", "agent", "todo", "neovim" },
}
dependencies = {
  "lua >= 5.1, < 5.5",
}
build = {
  type = "command",
  build_command = [[scripts/luarocks.sh build "$(LUA)"]],
  install_command = [[scripts/luarocks.sh install "$(LUA)" "$(LUADIR)" "$(LIBDIR)"]],
  copy_directories = { "doc" },
}
