-- rpiv_todo.native: the one guarded load of the native module `rpiv_todo.core`. Every
-- script that needs the core requires this instead, so a missing build says how to make
-- one, and a stale build (whose reducer may disagree with these scripts) is refused,
-- whichever module a host loads first. Returns the core table itself.

-- The Lua scripts' version; the native core must report the same one.
local VERSION = "0.1.0"

local ok, core = pcall(require, "rpiv_todo.core")
if not ok then
  error(
    "(rpiv_todo) core: the native module rpiv_todo.core could not be loaded. Build it for\n"
      .. "your interpreter with  scripts/build-module.sh <luajit|lua51|lua54>  (Neovim: luajit),\n"
      .. "which runs  cargo build --release --lib --no-default-features --features module,<flavour>\n"
      .. "and puts the library at lua/rpiv_todo/core.so. Rust hosts call rpiv_todo::preload(&lua).\n"
      .. "Cause: "
      .. tostring(core),
    0
  )
end
if type(core) ~= "table" or core.version ~= VERSION then
  error(
    "(rpiv_todo) core: native module version "
      .. tostring(type(core) == "table" and core.version or core)
      .. " does not match the Lua scripts' "
      .. VERSION
      .. "; rebuild lua/rpiv_todo/core.so",
    0
  )
end

return core
