-- tests/lua/hostile_shapes_spec.lua: hostile Lua values through every entry point that
-- takes one (issue 18): the native module's functions and list methods, the tool, sessions
-- and the overlay. The shapes are what a host or another plugin can hand over by mistake
-- or on purpose: sparse arrays whose length is a border far past their keys, non-sequence
-- and float keys, NaN, infinities and -0.0, strings with NUL, metatables whose metamethods
-- raise, yield or call back into the module, nesting at 64 and 65 levels, very wide tables.
-- Each call must either answer or raise a Lua error, and the process must live (it used to
-- abort with exit 134 on a border of 2^28: the reader reserved memory for that length).
-- Runs in every interpreter (scripts/test.sh, and under valgrind for Lua 5.4); by hand:
--   lua5.4 tests/lua/hostile_shapes_spec.lua      (also luajit, lua5.1)

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local H = {}

local todo = require("rpiv_todo")
local core = require("rpiv_todo.core")
local session = require("rpiv_todo.session")
local overlay = require("rpiv_todo.overlay")

-- Under valgrind (scripts/test.sh) the widest shapes are smaller: it runs 20-50x slower.
H.WIDE = os.getenv("RPIV_VALGRIND") and 5000 or 50000
H.MANY = os.getenv("RPIV_VALGRIND") and 2000 or 20000

-- A small LCG, the same on every interpreter (5.1 has no integers: stay below 2^31).
H.seed = 4242
function H.rand(n)
  H.seed = (H.seed * 16807) % 2147483647
  return H.seed % n + 1
end

function H.task(id)
  return { id = id, subject = "task " .. id, status = "pending" }
end

-- Keys at powers of two, 2^28 down to 2^0, set in that order: the length operator
-- reports a border of 2^28 (each interpreter finds one by doubling; 5.1 and LuaJIT stop
-- doubling at 2^31) with only 29 entries there.
H.BORDER = 2 ^ 28
function H.border(make)
  local t = {}
  for k = 28, 0, -1 do
    t[2 ^ k] = make(k)
  end
  return t
end

function H.nested(depth)
  local t = { leaf = true }
  for _ = 2, depth do
    t = { t }
  end
  return t
end

function H.wide(n)
  local t = {}
  for i = 1, n do
    t["k" .. i] = i
  end
  return t
end

function H.raising_mt()
  local function raise()
    error("metamethod raised")
  end
  return setmetatable({}, {
    __index = raise,
    __newindex = raise,
    __len = raise,
    __pairs = raise,
    __ipairs = raise,
    __eq = raise,
    __lt = raise,
    __le = raise,
    __concat = raise,
    __call = raise,
    __tostring = raise,
  })
end

function H.yielding_mt()
  local function yield()
    return coroutine.yield("yielded")
  end
  return setmetatable({}, { __index = yield, __len = yield, __pairs = yield, __tostring = yield })
end

-- A metatable whose metamethods call the module again (on a list of its own).
function H.reentrant_mt()
  local inner = core.list(nil)
  local function again()
    inner:apply({ action = "create", subject = "from a metamethod" })
    return core.replay({})
  end
  return setmetatable({}, { __index = again, __len = again, __pairs = again, __tostring = again })
end

-- Every hostile value, by name. A function makes each one fresh.
H.values = {
  ["border 2^28 of tasks"] = function()
    return H.border(function()
      return H.task(1)
    end)
  end,
  ["border 2^28 of numbers"] = function()
    return H.border(function(k)
      return k
    end)
  end,
  ["state with tasks at a border"] = function()
    return {
      tasks = H.border(function(k)
        return H.task(k + 1)
      end),
      nextId = 2,
    }
  end,
  ["state with blockedBy at a border"] = function()
    local t = H.task(1)
    t.blockedBy = H.border(function()
      return 1
    end)
    return { tasks = { t }, nextId = 2 }
  end,
  ["state with metadata at a border"] = function()
    local t = H.task(1)
    t.metadata = {
      m = H.border(function()
        return 1
      end),
    }
    return { tasks = { t }, nextId = 2 }
  end,
  ["non-sequence keys"] = function()
    return { [1] = H.task(1), [3] = H.task(3), [-1] = 1, [0] = 0 }
  end,
  ["float keys"] = function()
    return { [1.5] = H.task(1), [2.25] = "x" }
  end,
  ["NaN"] = function()
    return 0 / 0
  end,
  ["+inf"] = function()
    return 1 / 0
  end,
  ["-inf"] = function()
    return -1 / 0
  end,
  ["-0.0"] = function()
    return -0.0
  end,
  ["tasks with NaN, inf and -0.0"] = function()
    return {
      tasks = {
        { id = 0 / 0, subject = "a", status = "pending" },
        { id = 1 / 0, subject = "b", status = "pending", metadata = { x = -0.0, y = 0 / 0 } },
        { id = -0.0, subject = "c", status = "pending" },
      },
      nextId = 0 / 0,
    }
  end,
  ["args with NaN, inf and -0.0"] = function()
    return { action = "update", id = 0 / 0, metadata = { a = 1 / 0, b = -0.0 }, blockedBy = { -1 / 0 } }
  end,
  ["string with NUL"] = function()
    return "a\0b"
  end,
  ["args with NUL"] = function()
    return { action = "create\0", subject = "a\0b", activeForm = "\0" }
  end,
  ["state with NUL"] = function()
    return { tasks = { { id = 1, subject = "a\0b", status = "pending\0" } }, nextId = 2 }
  end,
  ["metamethods raise"] = H.raising_mt,
  ["state whose tasks raise"] = function()
    return { tasks = H.raising_mt(), nextId = 2 }
  end,
  ["args whose fields raise"] = function()
    return { action = "create", subject = "x", metadata = H.raising_mt() }
  end,
  ["metamethods yield"] = H.yielding_mt,
  ["state whose tasks yield"] = function()
    return { tasks = H.yielding_mt(), nextId = 2 }
  end,
  ["metamethods re-enter"] = H.reentrant_mt,
  ["state whose tasks re-enter"] = function()
    return { tasks = H.reentrant_mt(), nextId = 2 }
  end,
  ["nested 64"] = function()
    return H.nested(64)
  end,
  ["nested 65"] = function()
    return H.nested(65)
  end,
  ["args with metadata nested 64"] = function()
    return { action = "create", subject = "deep", metadata = { m = H.nested(62) } }
  end,
  ["args with metadata nested 65"] = function()
    return { action = "create", subject = "deep", metadata = { m = H.nested(64) } }
  end,
  ["state with metadata nested 65"] = function()
    local t = H.task(1)
    t.metadata = { m = H.nested(64) }
    return { tasks = { t }, nextId = 2 }
  end,
  ["cyclic"] = function()
    local t = {}
    t.t = t
    t[1] = t
    return t
  end,
  ["wide"] = function()
    return H.wide(H.WIDE)
  end,
  ["args wide"] = function()
    local t = H.wide(H.WIDE)
    t.action = "create"
    t.subject = "wide"
    return t
  end,
  ["state with many tasks, the last bad"] = function()
    local tasks = {}
    for i = 1, H.MANY do
      tasks[i] = H.task(i)
    end
    tasks[H.MANY].status = "done"
    return { tasks = tasks, nextId = H.MANY + 1 }
  end,
  ["function"] = function()
    return print
  end,
  ["coroutine"] = function()
    return coroutine.create(function() end)
  end,
  ["null"] = function()
    return core.null
  end,
  ["userdata"] = function()
    return io.stdout
  end,
  ["true"] = function()
    return true
  end,
  ["nil"] = function()
    return nil
  end,
}

-- Entry points, each taking one hostile value `v` (and whatever else it needs, plain).
H.scratch = os.tmpname()
H.calls = {
  ["core.apply(v, args)"] = function(v)
    return core.apply(v, { action = "list" })
  end,
  ["core.apply(nil, v)"] = function(v)
    return core.apply(nil, v)
  end,
  ["core.list(v)"] = function(v)
    return core.list(v)
  end,
  ["core.list(v):state()"] = function(v)
    return core.list(v):state()
  end,
  ["list:apply(v)"] = function(v)
    return core.list(nil):apply(v)
  end,
  ["list:apply_json(v)"] = function(v)
    return core.list(nil):apply_json(v)
  end,
  ["list:replace(v)"] = function(v)
    return core.list(nil):replace(v)
  end,
  ["core.replay(v)"] = function(v)
    return core.replay(v)
  end,
  ["core.replay({ entry with v })"] = function(v)
    return core.replay({
      {
        type = "message",
        message = { role = "toolResult", toolName = "todo", details = { tasks = v, nextId = 2 } },
      },
    })
  end,
  ["core.sanitize(v)"] = function(v)
    return core.sanitize(v)
  end,
  ["core.sanitize_display(v)"] = function(v)
    return core.sanitize_display(v)
  end,
  ["core.width(v)"] = function(v)
    return core.width(v)
  end,
  ["core.truncate(v, 3)"] = function(v)
    return core.truncate(v, 3)
  end,
  ["core.truncate('abcdef', v, v)"] = function(v)
    return core.truncate("abcdef", v, v)
  end,
  ["core.overlay_view(v, 5)"] = function(v)
    return core.overlay_view(v, 5)
  end,
  ["core.overlay_view(list, v, v)"] = function(v)
    return core.overlay_view(core.list(nil), v, v)
  end,
  ["core._overlay_layout(v, 5)"] = function(v)
    return core._overlay_layout(v, 5)
  end,
  ["core._overlay_layout(state, 5, v)"] = function(v)
    return core._overlay_layout({ tasks = { H.task(1) }, nextId = 2 }, 5, v)
  end,
  ["core.save(path, v)"] = function(v)
    return core.save(H.scratch, v)
  end,
  ["core.load(v)"] = function(v)
    return core.load(v)
  end,
  ["core.tr(v, v)"] = function(v)
    return core.tr(v, v)
  end,
  ["core.resolve_locale(v)"] = function(v)
    return core.resolve_locale(v)
  end,
  ["core.locale_file(v)"] = function(v)
    return core.locale_file(v)
  end,
  ["tool.execute(v)"] = function(v)
    return todo.tool().execute(v)
  end,
  ["tool.execute_strict(v)"] = function(v)
    return todo.tool({ strict = true }).execute(v)
  end,
  ["session:execute(v)"] = function(v)
    return session.get("hostile"):execute(v)
  end,
  ["session:replay(v)"] = function(v)
    return session.get("hostile"):replay(v)
  end,
  ["session.on_session_start(id, v)"] = function(v)
    return session.on_session_start("hostile", v)
  end,
  ["overlay.render(v)"] = function(v)
    return overlay.render(v)
  end,
  ["overlay.render(state, v)"] = function(v)
    return overlay.render({ tasks = { H.task(1) }, nextId = 2 }, v)
  end,
}

function H.sorted_keys(t)
  local keys = {}
  for k in pairs(t) do
    keys[#keys + 1] = k
  end
  table.sort(keys)
  return keys
end

-- Every entry point with every value, inside a coroutine (so a yielding metamethod has
-- somewhere to yield to): each call returns, raises, or yields out; the process lives.
T.test("the borders here are what the length operator reports", function()
  T.eq(#H.border(function()
    return true
  end), H.BORDER, "#t")
end)

T.test("every entry point answers or raises on every hostile value", function()
  local calls, answered, raised, yielded = 0, 0, 0, 0
  for _, call_name in ipairs(H.sorted_keys(H.calls)) do
    for _, value_name in ipairs(H.sorted_keys(H.values)) do
      local co = coroutine.create(function()
        return pcall(H.calls[call_name], H.values[value_name]())
      end)
      local resumed, ok = coroutine.resume(co)
      calls = calls + 1
      if not resumed then
        raised = raised + 1
      elseif coroutine.status(co) == "suspended" then
        yielded = yielded + 1
      elseif ok then
        answered = answered + 1
      else
        raised = raised + 1
      end
    end
  end
  T.eq(calls, answered + raised + yielded, "every call accounted for")
  T.ok(answered > 0 and raised > 0, "some calls answer, some raise")
  -- The interpreter is sound afterwards: errors unwind to the right frame.
  for _ = 1, 100 do
    local ok, err = pcall(error, "after")
    T.eq(ok, false, "error still raises")
    T.contains(tostring(err), "after", "error message")
  end
  collectgarbage("collect")
  local list = core.list(nil)
  local r = list:apply({ action = "create", subject = "still works" })
  T.eq(r.content[1].text, "Created #1: still works (pending)", "a call afterwards")
end)

-- The shapes that used to abort the process, one by one, with the answer each must give.
T.test("a border of 2^28 in a state's tasks is a Lua error naming tasks", function()
  local state = H.values["state with tasks at a border"]()
  T.raises(function()
    core.list(state)
  end, "tasks", "core.list")
  T.raises(function()
    core.apply(state, { action = "list" })
  end, "tasks", "core.apply")
  T.raises(function()
    core.list(nil):replace(state)
  end, "tasks", "list:replace")
  T.raises(function()
    core.save(H.scratch, state)
  end, "tasks", "core.save")
  T.raises(function()
    core.overlay_view(state, 5)
  end, "tasks[3]", "core.overlay_view")
end)

T.test("a replay over entries at a border reads the entries that are there", function()
  local entries = H.border(function(k)
    return {
      type = "message",
      message = {
        role = "toolResult",
        toolName = "todo",
        details = { tasks = { H.task(k + 1) }, nextId = k + 2 },
      },
    }
  end)
  local state = core.replay(entries)
  -- The newest entry is the one at 2^28: task 29.
  T.eq(state.nextId, 30, "nextId")
  T.eq(state.tasks[1].subject, "task 29", "subject")
end)

T.test("arguments at a border are refused in-band", function()
  local r =
    core.list(nil):apply({ action = "create", subject = "a", blockedBy = H.border(function()
      return 1
    end) })
  T.contains(r.content[1].text, "Error: ", "in-band")
  T.contains(r.content[1].text, "blockedBy", "names the field")
end)

-- Issue 18, fault 9: a rejected call echoes its arguments in details.params; nested past
-- the limit, they made replay refuse the whole entry, and after compaction (only that
-- entry kept) the list was lost. Replay reads only tasks and nextId.
T.test("replay keeps the list of an entry whose echoed arguments are nested too deep", function()
  local deep = string.rep("[", 300) .. "1" .. string.rep("]", 300)
  local text = '[{"type":"message","message":{"role":"toolResult","toolName":"todo","details":'
    .. '{"action":"update","params":{"action":"update","metadata":'
    .. deep
    .. '},"error":"Error: too deep",'
    .. '"tasks":[{"id":1,"subject":"kept","status":"pending"}],"nextId":2}}}]'
  session.on_compaction("deep", text)
  local state = session.get("deep"):state()
  T.eq(#state.tasks, 1, "one task")
  T.eq(state.tasks[1].subject, "kept", "from text")
  local params = H.nested(300)
  local entries = {
    {
      type = "message",
      message = {
        role = "toolResult",
        toolName = "todo",
        details = { params = params, tasks = { H.task(1) }, nextId = 2 },
      },
    },
  }
  session.on_compaction("deep-tables", entries)
  state = session.get("deep-tables"):state()
  T.eq(state.tasks[1].subject, "task 1", "from tables")
  T.eq(state.nextId, 2, "nextId")
end)

os.remove(H.scratch)
T.finish()
