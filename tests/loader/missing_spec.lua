-- Loader spec: with no built module on package.cpath, require fails with Lua's own
-- "module not found" error, which lists every file it tried: the message that tells a
-- user where the .so was expected; and every script that needs the core (they all load it
-- through rpiv_todo.native) fails with the message that says how to build it.

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")

T.test("require of a missing core says which files it tried", function()
  local ok, err = pcall(require, "rpiv_todo.core")
  T.eq(ok, false, "require succeeded")
  T.contains(err, "module 'rpiv_todo.core' not found", "error message")
  T.contains(err, "rpiv_todo/core.so", "error message")
end)

for _, name in ipairs({ "rpiv_todo", "rpiv_todo.overlay", "rpiv_todo.session", "rpiv_todo.native" }) do
  T.test("require('" .. name .. "') without a core says how to build it", function()
    for k in pairs(package.loaded) do
      if k:sub(1, 9) == "rpiv_todo" then
        package.loaded[k] = nil
      end
    end
    local ok, err = pcall(function()
      local m = require(name)
      -- Scripts that load the core lazily meet it on first use.
      if name == "rpiv_todo.overlay" then
        m.render({ tasks = { { id = 1, subject = "a", status = "pending" } }, nextId = 2 })
      elseif name == "rpiv_todo.session" then
        m.get("default")
      end
    end)
    T.eq(ok, false, "loading succeeded without a core")
    T.contains(tostring(err), "scripts/build-module.sh", "error message")
  end)
end

T.finish()
