-- Loader spec: with no built module on package.cpath, require fails with Lua's own
-- "module not found" error, which lists every file it tried: the message that tells a
-- user where the .so was expected. (The friendlier "how to build it" message of the
-- guarded require in lua/rpiv_todo/init.lua is tested with the Lua layer.)

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/loader/harness.lua")

T.test("require of a missing core says which files it tried", function()
  local ok, err = pcall(require, "rpiv_todo.core")
  T.eq(ok, false, "require succeeded")
  T.contains(err, "module 'rpiv_todo.core' not found", "error message")
  T.contains(err, "rpiv_todo/core.so", "error message")
end)

T.finish()
