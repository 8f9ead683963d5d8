-- rpiv_todo.options_check: the one options checker. Every function that takes a table of
-- options (setup, the editor's options, tool(), set_locale(), persist.enable(), each
-- adapter's tool(), the installer's run()) checks it here, so the messages read alike:
--
--   (rpiv_todo) <prefix><key>: unknown option (expected <every key>)
--   (rpiv_todo) <prefix><key>: <what was expected>[, got <type> <value>]
--   (rpiv_todo) <what a table of something else says>
--
--   local check = require("rpiv_todo.options_check").check
--   opts = check(opts, { prefix = "tool: ", names = { "strict" }, checks = { strict = is_boolean },
--     not_table = "tool: expected a table of options { strict = boolean } or nil" })
--
-- Nothing changes before the checks are over: each raises before its caller uses a value.
-- Plain Lua (5.1, 5.4, LuaJIT).

local M = {}

---@class rpiv_todo.OptionsSpec
---@field names string[] every known key, in the order their values are checked
---@field checks? table<string, fun(value: any): string|nil> nil when fine, else what was expected ("expected a boolean")
---@field prefix? string put before every key in a message ("nvim.", "tool: ")
---@field nil_checked? table<string, boolean> keys whose check also sees nil (others pass when absent)
---@field got? boolean a wrong value's message ends with `, got <type> <value>`
---@field not_table? string the message (after `(rpiv_todo) `) for anything but a table; default `<prefix>setup: expected a table of options, got ...`
---@field required? boolean nil is not allowed either (it gets the not_table message)

---`got <type> <value>`, what a message adds after what it expected (strings quoted,
---numbers and booleans written out, other values by type only).
---@param value any
---@return string
function M.got(value)
  local kind = type(value)
  if kind == "string" then
    return "got string " .. string.format("%q", value)
  elseif kind == "number" or kind == "boolean" then
    return "got " .. kind .. " " .. tostring(value)
  end
  return "got " .. kind
end

---Check `opts` against `spec`: raises the first problem (an unknown key before any value),
---else returns `opts` (an empty table for nil).
---@param opts any
---@param spec rpiv_todo.OptionsSpec
---@return table
function M.check(opts, spec)
  local prefix = spec.prefix or ""
  if opts == nil and not spec.required then
    return {}
  end
  if type(opts) ~= "table" then
    error("(rpiv_todo) " .. (spec.not_table or (prefix .. "setup: expected a table of options, " .. M.got(opts))), 0)
  end
  local names = spec.names
  local known = {}
  for _, name in ipairs(names) do
    known[name] = true
  end
  for k in pairs(opts) do
    if not known[k] then
      error(
        "(rpiv_todo) " .. prefix .. tostring(k) .. ": unknown option (expected " .. table.concat(names, ", ") .. ")",
        0
      )
    end
  end
  local checks, nil_checked = spec.checks or {}, spec.nil_checked
  for _, k in ipairs(names) do
    local v, check = opts[k], checks[k]
    if check ~= nil and (v ~= nil or (nil_checked ~= nil and nil_checked[k])) then
      local problem = check(v)
      if problem ~= nil then
        error("(rpiv_todo) " .. prefix .. k .. ": " .. problem .. (spec.got and (", " .. M.got(v)) or ""), 0)
      end
    end
  end
  return opts
end

return M
