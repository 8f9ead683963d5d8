-- rpiv_todo.adapters.acp: a session's list as an Agent Client Protocol `plan` update.
--
--   local acp = require("rpiv_todo.adapters.acp")
--   -- after each todo call in session `id`:
--   send("session/update", acp.notification(acp_session_id, todo.session(id)))
--   --> { sessionId = ..., update = { sessionUpdate = "plan", entries = {
--   -->     { content = "Write the parser", priority = "medium", status = "in_progress" }, ... } } }
--
-- ACP editors (Zed, and Neovim front ends speaking ACP) show the plan as the agent's task
-- list. A plan update replaces the whole plan, so every call sends every live task:
-- pending, in_progress and completed, in id order; tombstones are left out. The list has
-- no priorities of its own: every entry gets `default_priority` unless `priority` says
-- otherwise. Content is the sanitized subject. Plain Lua: no `vim.*` here.

---@helptext rpiv_todo-adapters-acp verbatim
--- Agent Client Protocol                                 *rpiv_todo-adapters-acp*
--- >
---     local acp = require("rpiv_todo.adapters.acp")
---     send_notification("session/update",
---       acp.notification(acp_session_id, todo.session(id)))
--- <
---     sends the list as a `plan` update (`send_notification` stands for your
---     ACP connection's way of sending one): one entry `{ content, priority,
---     status }` per pending, in-progress or completed task.
--- >
---     local stop = acp.follow(acp_session_id, id, send_notification)
--- <
---     sends it whenever the list changes, whoever changed it (the agent, the
---     user's |:Todos| edits, another program's write to the list file), and
---     only when the plan differs from the last one sent.

local M = {}
local H = {}

M.PRIORITIES = { high = true, medium = true, low = true }
M.STATUSES = { pending = true, in_progress = true, completed = true }

---@class rpiv_todo.AcpOptions
---@field default_priority? "high"|"medium"|"low" default "medium"
---@field priority? fun(task: rpiv_todo.Task): string|nil per-task priority; nil or an unknown value falls back to default_priority

---@param source any a state, a session (anything with :state()), or nil for the foreground session
---@return rpiv_todo.State
function H.state(source)
  return require("rpiv_todo.session").state_of(source, "acp")
end

H.OPTIONS = {
  {
    "default_priority",
    '"high", "medium" or "low"',
    function(v)
      return M.PRIORITIES[v] == true
    end,
  },
  {
    "priority",
    'a function(task) returning "high", "medium" or "low"',
    require("rpiv_todo.adapters.options").is_function,
  },
}

---@param opts any
---@return rpiv_todo.AcpOptions
function H.options(opts)
  return require("rpiv_todo.adapters.options").check("acp", opts, H.OPTIONS)
end

---The plan entries for a list: `{ content, priority, status }` per live task.
---@param source? rpiv_todo.State|rpiv_todo.Session
---@param opts? rpiv_todo.AcpOptions
---@return { content: string, priority: string, status: string }[]
function M.entries(source, opts)
  opts = H.options(opts)
  local core = require("rpiv_todo.native")
  local state = H.state(source)
  local default = opts.default_priority or "medium"
  local entries = {}
  local tasks = type(state.tasks) == "table" and state.tasks or {}
  for i = 1, #tasks do
    local task = tasks[i]
    if type(task) == "table" and M.STATUSES[task.status] then
      local priority = default
      if opts.priority then
        local p = opts.priority(task)
        if M.PRIORITIES[p] then
          priority = p
        end
      end
      entries[#entries + 1] = {
        content = core.sanitize(type(task.subject) == "string" and task.subject or ""),
        priority = priority,
        status = task.status,
      }
    end
  end
  -- An empty plan must still encode as a JSON array.
  return setmetatable(entries, core.array_mt)
end

---The `update` of a `session/update` notification: `{ sessionUpdate = "plan", entries }`.
---@param source? rpiv_todo.State|rpiv_todo.Session
---@param opts? rpiv_todo.AcpOptions
---@return { sessionUpdate: "plan", entries: table[] }
function M.plan(source, opts)
  return { sessionUpdate = "plan", entries = M.entries(source, opts) }
end

---The params of a `session/update` notification carrying the plan.
---@param session_id string the ACP session id
---@param source? rpiv_todo.State|rpiv_todo.Session
---@param opts? rpiv_todo.AcpOptions
---@return { sessionId: string, update: table }
function M.notification(session_id, source, opts)
  if type(session_id) ~= "string" or session_id == "" then
    error("(rpiv_todo) acp: session_id: expected a non-empty string", 0)
  end
  return { sessionId = session_id, update = M.plan(source, opts) }
end

-- Session events after which the plan may differ.
H.CHANGES = { executed = true, replayed = true, loaded = true, reloaded = true }

---Send session {id}'s plan to the ACP client whenever its list changes, whoever changed it:
---the agent's own calls, the user's `:Todos` edits, another program's write to the list
---file (`reloaded`), a replay. `send(method, params)` is your connection's way of sending a
---notification; it is called with `"session/update"` and the params of `notification`, only
---when the plan differs from the last one sent. Returns a function that stops it.
---@param session_id string the ACP session id
---@param id string the rpiv_todo session
---@param send fun(method: string, params: table)
---@param opts? rpiv_todo.AcpOptions
---@return fun() stop
function M.follow(session_id, id, send, opts)
  if type(send) ~= "function" then
    error("(rpiv_todo) acp: send: expected a function(method, params)", 0)
  end
  H.options(opts)
  M.notification(session_id, { tasks = {} }) -- checks the id now, not at the first change
  local sessions = require("rpiv_todo.session")
  local last = nil
  return sessions.listen(function(event, which, session)
    if which ~= id or not H.CHANGES[event] then
      return
    end
    local params = M.notification(session_id, session or sessions.get(id), opts)
    local key = H.key(params.update.entries)
    if key ~= last then
      last = key
      send("session/update", params)
    end
  end)
end

---A plan's entries as one string, to tell a changed plan from the last one sent.
---@param entries table[]
---@return string
function H.key(entries)
  local parts = {}
  for i, e in ipairs(entries) do
    parts[i] = e.status .. "\0" .. e.priority .. "\0" .. e.content
  end
  return table.concat(parts, "\1")
end

return M
