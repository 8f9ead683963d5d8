-- The development rock of rpiv_todo, for Neovim plugin managers that read rockspecs:
-- lazy.nvim reads only `*-scm-1.rockspec` (or -git-1 / -dev-1) files, rocks.nvim installs
-- from them. It carries the Lua scripts, plugin/ and doc/; the native module comes
-- prebuilt from require("rpiv_todo.nvim.install").run() (:TodosInstall), so this build needs no
-- Rust. Its build is "builtin" without a module list, which lazy.nvim treats as nothing to
-- build: lazy then runs the plugin spec's own `build` function (see the README).
--
-- For plain Lua 5.1, 5.4 and LuaJIT, rpiv_todo-<version>-1.rockspec builds the native
-- module with cargo:  luarocks make rpiv_todo-0.1.0-1.rockspec
rockspec_format = "3.0"
package = "rpiv_todo"
version = "scm-1"
source = {
  url = "git+https://github.com/rpiv-todo/rpiv_todo.git",
}
description = {
  summary = "The todo tool of an LLM agent as a native Lua module (Rust core), for Neovim",
  detailed = [[
The task list an LLM agent keeps across a long session: the tool spec to register with a
model (JSON Schema, prompt guidance, execute), one list per agent session restored by
replaying the conversation, the /todos view and a live overlay panel in Neovim. The native
core is installed prebuilt by :TodosInstall.]],
  homepage = "https://github.com/rpiv-todo/rpiv_todo",
  license = "MIT",
  labels = { "llm", "agent", "todo", "neovim" },
}
dependencies = {
  "lua >= 5.1",
}
build = {
  type = "builtin",
  copy_directories = { "doc", "plugin" },
}
