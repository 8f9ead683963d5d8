-- rpiv_todo.adapters.options: the option check every adapter runs on what a user passes to
-- its `tool()` (or, for ACP, `entries()`), through rpiv_todo.options_check:
--
--   local opts = require("rpiv_todo.adapters.options").check("avante", user_opts, {
--     { "session", "a session id string or a function returning one", H.is_session },
--   })
--
-- A wrong type or value raises `(rpiv_todo) <adapter>: <key>: expected <what>`, an unknown
-- key names the known ones (the checker's message, with `<adapter>: ` before the key), and
-- anything but a table or nil raises `(rpiv_todo) <adapter>: expected a table of options
-- { <keys> }`.

local M = {}

---@alias rpiv_todo.AdapterOption { [1]: string, [2]: string, [3]: fun(value: any): boolean }

---Check `opts` against `known` (key, what is expected, predicate); nil values always pass.
---Returns `opts`, or an empty table for nil.
---@param adapter string the adapter's name, for messages
---@param opts any
---@param known rpiv_todo.AdapterOption[]
---@return table
function M.check(adapter, opts, known)
  local names, checks = {}, {}
  for i, option in ipairs(known) do
    local name, what, ok = option[1], option[2], option[3]
    names[i] = name
    checks[name] = function(value)
      if not ok(value) then
        return "expected " .. what
      end
    end
  end
  return require("rpiv_todo.options_check").check(opts, {
    prefix = adapter .. ": ",
    names = names,
    checks = checks,
    not_table = adapter .. ": expected a table of options { " .. table.concat(names, ", ") .. " }",
  })
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
