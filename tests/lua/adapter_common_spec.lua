-- tests/lua/adapter_common_spec.lua: what every adapter shares (rpiv_todo.adapters.common):
-- a result as the chat reads it, and registering chat buffers outside Neovim.

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")

T.test("outcome: the reply text, and whether the call was rejected", function()
  local common = require("rpiv_todo.adapters.common")
  local tool = require("rpiv_todo").tool()
  local text, failed = common.outcome(tool.execute({ action = "create", subject = "A" }, { session = "outcome" }))
  T.eq(text, "Created #1: A (pending)", "text of a call that applied")
  T.eq(failed, false, "applied")
  text, failed = common.outcome(tool.execute({ action = "get", id = 9 }, { session = "outcome" }))
  T.eq(text, "Error: #9 not found", "text of a rejected call")
  T.eq(failed, true, "rejected")
  text, failed = common.outcome({ content = { { type = "text" } }, details = {} })
  T.eq(text, "", "no text")
  T.eq(failed, false, "no error")
  text, failed = common.outcome(nil)
  T.eq(text, "", "nothing")
  T.eq(failed, true, "nothing is a failure")
end)

T.test("register_chat outside Neovim does nothing and raises nothing", function()
  require("rpiv_todo").register_chat("x", function()
    return nil
  end)
  T.eq(package.loaded["rpiv_todo.nvim"], nil, "the editor's front end is not loaded")
  require("rpiv_todo").register_chat("x", nil)
end)

T.finish()
