-- rpiv_todo.tool.execute: running a `todo` call in the session its `ctx` names, in the
-- normal or the strict form (converted by the core).

local M = {}
local H = {}

---A strict-form call in the normal form: nullable fields given as null are left out, and
---metadata given as JSON text becomes the object it spells (its nulls, which delete keys on
---update, kept as core.null). Normal-form calls pass through unchanged, so hosts may use it
---on either; arguments that are neither are handed back as they are (the call reports what
---is wrong with them). The conversion is the core's (`core.from_strict`), the one
---`execute_strict` uses. Returns the converted call, or nil and an error naming the field.
---Under LuaJIT a metadata integer past 2^53 is rounded in the table this returns (a Lua
---number cannot hold it); `execute_strict` never converts through Lua numbers and keeps it.
---@param params any the call's arguments (a table, or JSON text)
---@return any params, string|nil error
function M.from_strict(params)
  return require("rpiv_todo.native").from_strict(params)
end

---Run a strict-form call (or a normal one) in the session named by `ctx.session`. The
---call is converted in the core and then takes the path of every other call; metadata
---text that is not a JSON object is rejected in-band, the list unchanged.
---@param params table|string
---@param ctx? rpiv_todo.ToolContext
---@return rpiv_todo.Result
function M.execute_strict(params, ctx)
  return H.session(ctx, "execute_strict"):execute_strict(params)
end

---The session a call's `ctx` names ("default" when absent). `ctx.by` names the session's
---agent (the front end: "codecompanion", "avante"), which other writers' notes name.
---@param ctx any
---@param what string the caller's name in the error
---@return rpiv_todo.Session
function H.session(ctx, what)
  local id, by
  if ctx ~= nil then
    if type(ctx) ~= "table" then
      error("(rpiv_todo) " .. what .. ": ctx must be a table { session = id } or nil", 0)
    end
    id, by = ctx.session, ctx.by
  end
  local session = require("rpiv_todo.session").get(id)
  if by ~= nil then
    session.list:set_writer(by)
  end
  return session
end

---Run a call in the session named by `ctx.session` ("default" when absent).
---@param params table|string
---@param ctx? rpiv_todo.ToolContext
---@return rpiv_todo.Result
function M.execute(params, ctx)
  return H.session(ctx, "execute"):execute(params)
end

return M
