-- bench/tokens.lua: the texts the token bench counts (scripts/bench.sh --tokens), as one
-- JSON object on stdout, for the Lua tree on package.path (this one, or a base revision's
-- exported by the script). bench/tokens.mjs counts them with real tokenizers.
--
--   lua5.4 bench/tokens.lua          (LUA_PATH/LUA_CPATH naming the tree and its core)
--
-- What it writes:
-- - definition: what the MCP server advertises, as a client shows it to the model: the
--   tool's description, its input schema as JSON text, and the server's instructions.
--   Before `tool.definition` existed (issue 39), the server composed them itself:
--   description, snippet, "Guidelines:" and the guidelines, with the snippet again as the
--   instructions, and the schema converted from the Lua table.
-- - sessions: the issue's scripted session (6 tasks, 2 waiting on another, 12 status
--   changes, 2 lists), each call's arguments as JSON text and the reply the core gives, in
--   two shapes: one call per change, and with batches where this tree takes them.
-- - reinjected: what comes back into the model's context without a call: the compact list
--   after a compaction (the adapters' and the terminal hooks' text), the end-of-turn
--   reminder, and the note of what another writer changed (co-owned list).

local cjson = require("cjson")
local todo = require("rpiv_todo")
local tool = require("rpiv_todo.tool")
local core = require("rpiv_todo.core")

if cjson.encode_escape_forward_slash then
  cjson.encode_escape_forward_slash(false)
end

local H = {}

---What the MCP server sends for the tool: with this tree's `tool.definition` when it has
---one, else composed the way the server did before it.
function H.definition()
  local spec = todo.tool()
  if type(tool.definition) == "function" then
    local d = tool.definition(spec)
    return { description = d.description, schema = d.parameters_json, instructions = d.instructions }
  end
  local parts = { spec.description, "", spec.prompt_snippet, "", "Guidelines:" }
  for _, line in ipairs(spec.prompt_guidelines) do
    parts[#parts + 1] = "- " .. line
  end
  return {
    description = table.concat(parts, "\n"),
    schema = cjson.encode(spec.parameters),
    instructions = spec.prompt_snippet,
  }
end

H.SUBJECTS = {
  { "Read the config loader", "Reading the config loader" },
  { "Write the parser", "Writing the parser" },
  { "Test the parser", "Testing the parser" },
  { "Wire the parser into the loader", "Wiring the parser into the loader" },
  { "Update the docs", "Updating the docs" },
  { "Run the whole test suite", "Running the whole test suite" },
}
-- Two tasks wait on another: #3 on #2, #6 on #5.
H.WAITS = { [3] = { 2 }, [6] = { 5 } }

---The scripted session as calls (Lua tables), one change per call or batched.
---@param batched boolean
---@return table[]
function H.script(batched)
  local calls = {}
  local function add(c)
    calls[#calls + 1] = c
  end
  local items = {}
  for i, s in ipairs(H.SUBJECTS) do
    items[i] = { subject = s[1], activeForm = s[2], blockedBy = H.WAITS[i] }
  end
  if batched then
    add({ action = "create", tasks = items })
  else
    for _, item in ipairs(items) do
      local c = { action = "create" }
      for k, v in pairs(item) do
        c[k] = v
      end
      add(c)
    end
  end
  local n = #H.SUBJECTS
  for i = 1, n do
    if i == 1 or not batched then
      if i > 1 then
        add({ action = "update", id = i - 1, status = "completed" })
      end
      add({ action = "update", id = i, status = "in_progress" })
    else
      add({
        action = "update",
        tasks = { { id = i - 1, status = "completed" }, { id = i, status = "in_progress" } },
      })
    end
    if i == 3 then
      add({ action = "list" })
    end
  end
  add({ action = "update", id = n, status = "completed" })
  add({ action = "list" })
  return calls
end

-- Keys of a call in the order a model writes them.
H.KEY_ORDER = { "action", "id", "subject", "activeForm", "status", "blockedBy", "tasks" }

---A call as the JSON text a model writes (keys in a fixed, natural order).
function H.args_json(v)
  if type(v) ~= "table" then
    return cjson.encode(v)
  end
  if #v > 0 then
    local parts = {}
    for i, x in ipairs(v) do
      parts[i] = H.args_json(x)
    end
    return "[" .. table.concat(parts, ",") .. "]"
  end
  local parts = {}
  for _, k in ipairs(H.KEY_ORDER) do
    if v[k] ~= nil then
      parts[#parts + 1] = cjson.encode(k) .. ":" .. H.args_json(v[k])
    end
  end
  return "{" .. table.concat(parts, ",") .. "}"
end

---Run a script through the core: each call's arguments and reply text.
function H.run(calls)
  local list = core.list()
  local out = {}
  for i, c in ipairs(calls) do
    local args = H.args_json(c)
    local reply = cjson.decode(list:apply_json(args))
    out[i] = { args = args, reply = reply.content[1].text }
  end
  return out, list
end

local sessions = { { name = "one call per change", calls = H.script(false) } }
if type(tool.definition) == "function" then
  sessions[2] = { name = "batched", calls = H.script(true) }
end
local result = { definition = H.definition(), sessions = {}, reinjected = {} }
for i, s in ipairs(sessions) do
  result.sessions[i] = { name = s.name, calls = (H.run(s.calls)) }
end

-- Re-injected text, on the list as it stands mid-session (#1 and #2 done, #3 in progress).
local state = core.list()
for _, c in ipairs(H.script(false)) do
  state:apply(c)
  if c.action == "list" then
    break
  end
end
state:apply({ action = "update", id = 3, status = "in_progress" })
local snapshot = state:state()
result.reinjected.compaction = require("rpiv_todo.session.compaction").compact_text(snapshot)
result.reinjected.reminder = require("rpiv_todo.guidance").reminder(snapshot) or ""

-- The co-owned list's note: the user completes #3 and deletes #5 between the agent's calls.
local ok, note = pcall(function()
  local shared = core.list()
  for _, c in ipairs(H.script(false)) do
    shared:apply(c, "agent")
    if c.action == "list" then
      break
    end
  end
  shared:apply({ action = "update", id = 3, status = "in_progress" }, "agent")
  shared:apply({ action = "update", id = 3, status = "completed" }, "user")
  shared:apply({ action = "delete", id = 5 }, "user")
  local plain = core.list()
  plain:replace(shared:state())
  local with = shared:apply({ action = "get", id = 4 }, "agent").content[1].text
  local without = plain:apply({ action = "get", id = 4 }).content[1].text
  return with:sub(#without + 1):gsub("^\n", "")
end)
result.reinjected.change_note = ok and note or ""

io.write(cjson.encode(result), "\n")
