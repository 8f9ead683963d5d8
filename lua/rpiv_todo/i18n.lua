-- rpiv_todo.i18n: UI chrome strings (overlay, /todos) in the user's language.
-- Everything the model reads stays English; only what a person sees goes through here.
-- Bootstrap version: English strings inline; the Fluent-backed version replaces the table.

local M = {}
local H = {}

-- Supported locale codes, in the order `locales()` reports them.
H.codes = { "de", "en", "es", "fr", "pt", "pt-BR", "ru", "uk", "zh" }

-- English messages. A function receives the args table; a string is returned as is.
H.en = {
  ["overlay-heading"] = "Todos",
  ["overlay-more"] = function(a)
    local parts = {}
    if (tonumber(a.completed) or 0) > 0 then
      parts[#parts + 1] = tostring(a.completed) .. " completed"
    end
    if (tonumber(a.pending) or 0) > 0 then
      parts[#parts + 1] = tostring(a.pending) .. " pending"
    end
    local s = "+" .. tostring(a.count) .. " more"
    if #parts > 0 then
      s = s .. " (" .. table.concat(parts, ", ") .. ")"
    end
    return s
  end,
  ["overlay-expand-hint"] = function(a) return tostring(a.key) .. " to expand" end,
  ["overlay-collapsed"] = "collapsed",
  ["status-pending"] = "pending",
  ["status-in_progress"] = "in progress",
  ["status-completed"] = "completed",
  ["status-deleted"] = "deleted",
  ["todos-completed"] = function(a) return tostring(a.done) .. "/" .. tostring(a.total) .. " completed" end,
  ["todos-in-progress"] = function(a) return tostring(a.count) .. " in progress" end,
  ["todos-pending"] = function(a) return tostring(a.count) .. " pending" end,
  ["todos-section-pending"] = "Pending",
  ["todos-section-in-progress"] = "In Progress",
  ["todos-section-completed"] = "Completed",
  ["todos-empty"] = "No todos yet. Ask the agent to plan a multi-step task.",
  ["todos-noninteractive"] = "/todos needs an interactive UI.",
}

H.current = "en"

---Translate a message id with optional arguments.
---@param id string message id, e.g. "overlay-heading"
---@param args? table<string, string|number> Fluent variables
---@return string
function M.t(id, args)
  local msg = H.en[id]
  if type(msg) == "function" then
    return msg(args or {})
  end
  if msg == nil then
    return id
  end
  return msg
end

---The active locale code, e.g. "pt-BR".
---@return string
function M.locale()
  return H.current
end

---Switch the active locale; the next render uses it.
---@param code string one of `M.locales()`
function M.set_locale(code)
  for _, c in ipairs(H.codes) do
    if c == code then
      H.current = code
      return
    end
  end
  error("(rpiv_todo) locale: expected one of " .. table.concat(H.codes, ", "), 0)
end

---Every supported locale code.
---@return string[]
function M.locales()
  local out = {}
  for i, c in ipairs(H.codes) do
    out[i] = c
  end
  return out
end

return M
