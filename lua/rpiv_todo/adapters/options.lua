-- rpiv_todo.adapters.options: the one option check every adapter runs on what a user
-- passes to its `tool()` (or, for ACP, `entries()`), so the messages read alike:
--
--   local opts = require("rpiv_todo.adapters.options").check("avante", user_opts, {
--     { "session", "a session id string or a function returning one", H.is_session },
--   })
--
-- A wrong type or value raises `(rpiv_todo) <adapter>: <key>: expected <what>`; an unknown
-- key raises `(rpiv_todo) <adapter>: <key>: unknown option (expected <keys>)`; anything but
-- a table or nil raises `(rpiv_todo) <adapter>: expected a table of options { <keys> }`.
-- Plain Lua: no `vim.*` here.

local M = {}

---@alias rpiv_todo.AdapterOption { [1]: string, [2]: string, [3]: fun(value: any): boolean }

---Check `opts` against `known` (key, what is expected, predicate); nil values always pass.
---Returns `opts`, or an empty table for nil.
---@param adapter string the adapter's name, for messages
---@param opts any
---@param known rpiv_todo.AdapterOption[]
---@return table
function M.check(adapter, opts, known)
  local names = {}
  for i, option in ipairs(known) do
    names[i] = option[1]
  end
  local list = table.concat(names, ", ")
  if opts == nil then
    return {}
  end
  if type(opts) ~= "table" then
    error("(rpiv_todo) " .. adapter .. ": expected a table of options { " .. list .. " }", 0)
  end
  local by_name = {}
  for _, option in ipairs(known) do
    by_name[option[1]] = option
  end
  for key in pairs(opts) do
    if by_name[key] == nil then
      error("(rpiv_todo) " .. adapter .. ": " .. tostring(key) .. ": unknown option (expected " .. list .. ")", 0)
    end
  end
  for _, option in ipairs(known) do
    local value = opts[option[1]]
    if value ~= nil and not option[3](value) then
      error("(rpiv_todo) " .. adapter .. ": " .. option[1] .. ": expected " .. option[2], 0)
    end
  end
  return opts
end

---A session option: a session id string, or a function that returns one.
---@param v any
---@return boolean
function M.is_session(v)
  return type(v) == "string" or type(v) == "function"
end

---@param v any
---@return boolean
function M.is_boolean(v)
  return type(v) == "boolean"
end

---A name: a non-empty string.
---@param v any
---@return boolean
function M.is_name(v)
  return type(v) == "string" and v ~= ""
end

---@param v any
---@return boolean
function M.is_function(v)
  return type(v) == "function"
end

return M
