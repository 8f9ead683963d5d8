-- rpiv_todo.guidance: the prompt text the model reads about the todo tool.
--
-- Holds the default prompt snippet (one line for the host's tool list) and the eight
-- default guidelines (bullets for the system prompt), validates a host's override, and
-- writes the end-of-turn reminder (`reminder(source)`).
-- Everything here is read by the model, so it stays English and never goes through i18n.

local M = {}
local H = {}

-- The defaults double as documentation of what the guidance must teach: when to open a
-- list, one task in_progress, completing immediately and never saving completions up,
-- never with failing tests, never reopening (the state machine itself is in the tool's
-- description), the literal update call shape, dependencies, and subject vs description vs
-- activeForm. Each says its rule once and leaves to the tool's description what it says
-- (the actions, their fields, the statuses), so the whole text reaches the model once.
---@type rpiv_todo.Guidance
M.defaults = {
  prompt_snippet = "todo: a task list for multi-step work, kept when the conversation is summarized;"
    .. " call list rather than recreate tasks",
  prompt_guidelines = {
    "Use a list for three or more steps or several requests; skip it for one quick edit or a question.",
    "Keep exactly one task in_progress; mark it in_progress before you start on it.",
    "Mark a task completed the moment it is done, never saving completions up; finishing #1 and"
      .. " starting #2 is one call:"
      .. ' {"action":"update","tasks":[{"id":1,"status":"completed"},{"id":2,"status":"in_progress"}]}.',
    "Never mark a task completed while its tests fail or it is partly done: keep it in_progress"
      .. " and add a task for the blocker.",
    "Never reopen finished work: create a new task for it.",
    'A status change sends only id and status: {"action":"update","id":3,"status":"completed"}.',
    "Sequence work with blockedBy; addBlockedBy and removeBlockedBy take only the changed ids.",
    'subject: a short imperative ("Write the parser"); description: detail, acceptance criteria;'
      .. ' activeForm: shown while it runs ("Writing the parser").',
  },
}

-- The long form: the eight guidelines as they were before the compact defaults, each
-- whole in itself (the state machine, includeDeleted and the field roles said again). For a
-- host that sends the guidelines apart from the tool's description:
-- `setup({ guidance = { prompt_guidelines = require("rpiv_todo.guidance").long } })`.
---@type string[]
M.long = {
  "Open a todo list when the work needs three or more distinct steps, or when the user"
    .. " hands you several things at once. For a single quick edit or a plain question, skip"
    .. " the list and just do the work.",
  "Keep exactly one task in_progress at a time, and mark it in_progress before you start"
    .. " working on it, not after.",
  "Mark a task completed the moment it is done, one update per task. Never save completions"
    .. " up and report them in a batch at the end.",
  "Never mark a task completed while its tests fail, the build is broken or the work is only"
    .. " partly done. Leave it in_progress and create a new task for whatever blocks it.",
  "The status machine: pending ⇄ in_progress, either of them → completed, any → deleted."
    .. " A completed task can only be deleted and deleted is final, so never reopen finished"
    .. " work: create a new task for it. Sending the status a task already has is a harmless"
    .. " no-op.",
  "To change a status send just the id and the new status, for example"
    .. ' {"action":"update","id":3,"status":"completed"}. Ids are the numbers the tool'
    .. " returned, never positions in a list.",
  "Sequence work with dependencies: blockedBy on create lists the ids a task waits for; on"
    .. " update, addBlockedBy and removeBlockedBy take only the ids that change (they merge, so"
    .. " never resend the whole array). A dependency that would close a cycle is rejected.",
  'Write subject as a short imperative title ("Write the parser"), put detail and acceptance'
    .. " criteria in description, and give activeForm the present-continuous label shown while"
    .. ' the task runs ("Writing the parser"). list hides deleted tasks; pass includeDeleted:'
    .. " true to see them.",
}

---Raise `(rpiv_todo) <key>: <expected>` without a position prefix: the key names the place.
---@param key string
---@param expected string
function H.fail(key, expected)
  error("(rpiv_todo) " .. key .. ": " .. expected, 0)
end

---@param value any
---@return boolean
function H.is_nonempty_string(value)
  return type(value) == "string" and value:find("%S") ~= nil
end

---A copy of the defaults, so an override function may change what it receives freely.
---@return rpiv_todo.Guidance
function M.copy_defaults()
  local guidelines = {}
  for i, line in ipairs(M.defaults.prompt_guidelines) do
    guidelines[i] = line
  end
  return { prompt_snippet = M.defaults.prompt_snippet, prompt_guidelines = guidelines }
end

---Validate a guidance table, filling absent fields from `base`.
---@param value table
---@param base rpiv_todo.Guidance
---@param key string the key to name in errors
---@return rpiv_todo.Guidance
function H.check_table(value, base, key)
  for k in pairs(value) do
    if k ~= "prompt_snippet" and k ~= "prompt_guidelines" then
      H.fail(key, "unknown field " .. tostring(k) .. " (expected prompt_snippet, prompt_guidelines)")
    end
  end
  local out = { prompt_snippet = base.prompt_snippet, prompt_guidelines = base.prompt_guidelines }
  local snippet = value.prompt_snippet
  if snippet ~= nil then
    if not H.is_nonempty_string(snippet) then
      H.fail(key, "prompt_snippet: expected a non-empty string")
    end
    out.prompt_snippet = snippet
  end
  local guidelines = value.prompt_guidelines
  if guidelines ~= nil then
    if type(guidelines) ~= "table" then
      H.fail(key, "prompt_guidelines: expected a non-empty list of non-empty strings")
    end
    local n = #guidelines
    local count = 0
    for _ in pairs(guidelines) do
      count = count + 1
    end
    if n == 0 or count ~= n then
      H.fail(key, "prompt_guidelines: expected a non-empty list of non-empty strings")
    end
    -- The list replaces the defaults whole: a host that wants to keep some of them
    -- copies them from M.defaults (or the function form's argument).
    local copy = {}
    for i = 1, n do
      if not H.is_nonempty_string(guidelines[i]) then
        H.fail(key, "prompt_guidelines: item " .. i .. " must be a non-empty string")
      end
      copy[i] = guidelines[i]
    end
    out.prompt_guidelines = copy
  end
  return out
end

---Resolve a `guidance` option into the guidance the tool will use.
---Table form: fields replace the defaults (absent fields keep them). Function form: called
---with a copy of the defaults; must return a table in the table form.
---@param value rpiv_todo.GuidanceOption|nil
---@param key? string the key to name in errors (default "guidance")
---@return rpiv_todo.Guidance
function M.resolve(value, key)
  key = key or "guidance"
  if value == nil then
    return M.copy_defaults()
  end
  if type(value) == "function" then
    -- A host's function may fail; report it under the key like any other bad value.
    local ok, produced = pcall(value, M.copy_defaults())
    if not ok then
      H.fail(key, "the function raised an error: " .. tostring(produced))
    end
    if type(produced) ~= "table" then
      H.fail(key, "the function must return a table { prompt_snippet = string, prompt_guidelines = { string... } }")
    end
    return H.check_table(produced, M.defaults, key)
  end
  if type(value) ~= "table" then
    H.fail(
      key,
      "expected a table { prompt_snippet = string, prompt_guidelines = { string... } } or a function(defaults)"
    )
  end
  return H.check_table(value, M.defaults, key)
end

-- Tasks named one by one in a reminder; more are counted.
H.REMINDER_NAMED = 8

---The end-of-turn reminder: a short text for the model when tasks are left in_progress,
---or nil when nothing is. English, like everything the model reads.
---@param source any a session id, a session (anything with :state()), a state, or nil for "default"
---@return string|nil
function M.reminder(source)
  local state
  if type(source) == "table" and type(source.state) == "function" then
    state = source:state()
  elseif type(source) == "table" then
    state = source
  elseif source == nil or type(source) == "string" or type(source) == "number" then
    state = require("rpiv_todo.session").get(source):state()
  else
    error("(rpiv_todo) reminder: expected a session id, a session, a state or nil, got " .. type(source), 0)
  end
  local common, core = require("rpiv_todo.common"), require("rpiv_todo.native")
  local named, count = {}, 0
  for _, task in ipairs(type(state.tasks) == "table" and state.tasks or {}) do
    if type(task) == "table" and task.status == "in_progress" then
      count = count + 1
      if count <= H.REMINDER_NAMED then
        local subject = type(task.subject) == "string" and core.sanitize(task.subject) or ""
        named[#named + 1] = "#" .. common.num(task.id) .. " " .. subject
      end
    end
  end
  if count == 0 then
    return nil
  end
  local list = table.concat(named, "; ")
  if count > H.REMINDER_NAMED then
    list = list .. "; and " .. (count - H.REMINDER_NAMED) .. " more"
  end
  if count == 1 then
    return "Reminder from the todo tool: "
      .. list
      .. " is still in_progress. Mark it completed if it is done,"
      .. " or pending if you stopped."
  end
  return "Reminder from the todo tool: "
    .. list
    .. " are still in_progress. Mark each completed if it is done, or pending if you stopped;"
    .. " keep one in_progress."
end

return M
