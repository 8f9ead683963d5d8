-- Loader spec: a module built for another Lua flavour must be refused with a Lua error,
-- never crash the interpreter. scripts/test.sh runs it in one interpreter
-- (RPIV_FLAVOUR) with package.cpath pointing only at another flavour's build
-- (RPIV_BUILD_FLAVOUR); a crash shows up there as a signal exit, not here.
--
-- LuaJIT implements the Lua 5.1 C API, so a lua51 build loaded by luajit (or the other
-- way round) may legitimately load; then it must also work. Every pairing that involves
-- Lua 5.4 must be refused.

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local H = {}

H.flavour = os.getenv("RPIV_FLAVOUR")
H.build = os.getenv("RPIV_BUILD_FLAVOUR")
H.compatible = H.flavour ~= "lua54" and H.build ~= "lua54"

T.note(string.format("%s loading the %s build", tostring(H.flavour), tostring(H.build)))

T.test("a " .. tostring(H.build) .. " build in " .. tostring(H.flavour) .. " is refused or works", function()
  local ok, core = pcall(require, "rpiv_todo.core")
  if not ok then
    T.eq(type(core), "string", "type of the error")
    T.contains(core, "rpiv_todo", "error message")
    T.note("refused: " .. (core:gsub("%s*\n%s*", " ")))
    return
  end
  if not H.compatible then
    error("a " .. H.build .. " build loaded into " .. H.flavour .. " without an error", 0)
  end
  T.note("loaded (same C API): checking that it works")
  T.eq(core.flavour, H.build, "core.flavour")
  local result = core.apply(nil, { action = "create", subject = "A" })
  T.eq(result.content[1].text, "Created #1: A (pending)", "content text")
end)

T.finish()
