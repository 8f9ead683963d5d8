-- rpiv_todo.native.replay_walk: `core.replay` over Lua tables, in every flavour (the
-- native module loads this file; see `walk_in_lua` in src/lua/from_lua.rs). The walk over a
-- conversation's entries is Lua: LuaJIT compiles it, where each C API call would cost
-- about ten times a compiled read, and Lua 5.4 and 5.1 read fields faster with their own
-- instructions than with calls. Under LuaJIT the winning snapshot is copied here too; the
-- other flavours, and anything this copy does not take (snapshots with metadata or fields
-- of their own, any doubt), go to the native copy. JSON text and misuse go to the native
-- `core.replay`.
--
-- The module is a factory: `require("rpiv_todo.native.replay_walk")(native, snapshot,
-- utf8, copy_here)` gives `replay(entries)`, where `native` is the native `core.replay`
-- (JSON text, nil, misuse), `snapshot(tasks, nextId)` the native copy of one snapshot,
-- `utf8(s)` whether `s` is UTF-8, and `copy_here` whether to copy plain snapshots in Lua.
return function(native, snapshot, utf8, copy_here)
  local type, rawget, next, floor, find = type, rawget, next, math.floor, string.find
  local getmetatable = getmetatable
  local len = rawlen or function(t)
    return #t
  end
  local new = select(2, pcall(require, "table.new"))
  if type(new) ~= "function" then
    new = function()
      return {}
    end
  end
  local MAX = 2 ^ 53 - 1
  local STATUS = { pending = true, in_progress = true, completed = true, deleted = true }

  -- UTF-8 text: remembered, or ASCII, or checked natively; short text that passed is
  -- remembered (a table lookup costs less than the byte search).
  local seen, seen_n = {}, 0
  local function text(s)
    if seen[s] then
      return true
    end
    if type(s) ~= "string" or (find(s, "[\128-\255]") and not utf8(s)) then
      return false
    end
    if #s <= 512 then
      if seen_n >= 2048 then
        seen, seen_n = {}, 0
      end
      seen[s], seen_n = true, seen_n + 1
    end
    return true
  end

  -- An id as the reducer reads one: an integer of at most 2^53 - 1 either way; -0 is 0.
  local function id(v)
    if type(v) == "number" and v == floor(v) and v >= -MAX and v <= MAX then
      if v == 0 then
        return 0
      end
      return v
    end
  end

  local function count(t)
    local n = 0
    for _ in next, t do
      n = n + 1
    end
    return n
  end

  -- A non-empty array of ids (keys exactly 1..n), copied.
  local function ids(t)
    if type(t) ~= "table" then
      return nil
    end
    local n = len(t)
    if n == 0 or count(t) ~= n then
      return nil
    end
    local out = new(n, 0)
    for i = 1, n do
      local v = id(rawget(t, i))
      if v == nil then
        return nil
      end
      out[i] = v
    end
    return out
  end

  -- Do the blockedBy edges of the tasks at positions `linked` form a cycle? Depth first
  -- from each, one mark per task for the whole search, so every edge is followed once.
  local function cycle(out, at, linked)
    local mark = {} -- 1: on the current path, 2: done
    local path, edges = {}, {}
    for j = 1, #linked do
      local root = out[linked[j]].id
      if mark[root] == nil then
        path[1], edges[1], mark[root] = root, 0, 1
        local top = 1
        while top > 0 do
          local at_id = path[top]
          local deps = out[at[at_id]].blockedBy
          local e = edges[top] + 1
          if deps ~= nil and e <= #deps then
            edges[top] = e
            local d = deps[e]
            local m = mark[d]
            if m == 1 then
              return true
            elseif m == nil then
              top = top + 1
              path[top], edges[top], mark[d] = d, 0, 1
            end
          else
            mark[at_id] = 2
            top = top - 1
          end
        end
      end
    end
    return false
  end

  -- The copy of a snapshot whose tasks all have the plain shape and keep the list's rules
  -- (ids from 1, each once, blockedBy ids in the list and no cycle; nextId past the largest
  -- id, repaired as State::validate repairs it); nil to let C decide.
  local function copy(tasks, next_id)
    local n = len(tasks)
    next_id = id(next_id)
    if n == 0 or next_id == nil or count(tasks) ~= n then
      return nil
    end
    local out, at, linked, largest = new(n, 0), new(n + 1, 0), nil, 0
    for i = 1, n do
      local t = rawget(tasks, i)
      if type(t) ~= "table" then
        return nil
      end
      local tid, subject, status = id(rawget(t, "id")), rawget(t, "subject"), rawget(t, "status")
      if tid == nil or tid < 1 or at[tid] ~= nil or not STATUS[status] or not text(subject) then
        return nil
      end
      at[tid] = i
      if tid > largest then
        largest = tid
      end
      local d, a, o, b = rawget(t, "description"), rawget(t, "activeForm"), rawget(t, "owner"), rawget(t, "blockedBy")
      local keys = 3
      if d ~= nil then
        if not text(d) then
          return nil
        end
        keys = keys + 1
      end
      if a ~= nil then
        if not text(a) then
          return nil
        end
        keys = keys + 1
      end
      if o ~= nil then
        if not text(o) then
          return nil
        end
        keys = keys + 1
      end
      if b ~= nil then
        b = ids(b)
        if b == nil then
          return nil
        end
        keys = keys + 1
        linked = linked or {}
        linked[#linked + 1] = i
      end
      local left = keys
      for _ in next, t do
        left = left - 1
      end
      if left ~= 0 then
        return nil
      end
      -- The smallest table that holds the task: most have no optional field but activeForm.
      if keys == 3 then
        out[i] = { id = tid, subject = subject, status = status }
      elseif keys == 4 and a ~= nil then
        out[i] = { id = tid, subject = subject, status = status, activeForm = a }
      else
        out[i] = {
          id = tid,
          subject = subject,
          status = status,
          description = d,
          activeForm = a,
          owner = o,
          blockedBy = b,
        }
      end
    end
    if largest >= MAX then
      return nil
    end
    if linked ~= nil then
      for j = 1, #linked do
        local deps = out[linked[j]].blockedBy
        for k = 1, #deps do
          if at[deps[k]] == nil then
            return nil
          end
        end
      end
      if cycle(out, at, linked) then
        return nil
      end
    end
    if next_id <= largest or next_id < 1 then
      next_id = largest + 1
    end
    return { tasks = out, nextId = next_id }
  end

  -- The state a todo tool result's `details` make, or nil.
  local function state_of(d)
    if type(d) ~= "table" then
      return nil
    end
    local tasks, n = d.tasks, d.nextId
    -- An empty table counts as an empty array: hosts' JSON decoders cannot tell `{}` from
    -- `[]`. An object of tasks is no snapshot.
    if type(tasks) ~= "table" or type(n) ~= "number" or (len(tasks) == 0 and next(tasks) ~= nil) then
      return nil
    end
    return copy_here and copy(tasks, n) or snapshot(tasks, n)
  end

  -- The newest entry of `list[1..top]` that is a todo tool result whose snapshot makes a
  -- state: that state. Fields inside entries are read as Lua reads them (entries are the
  -- host's conversation); `list` itself is read raw unless `plain` (no metatable, where
  -- Lua's own index instruction reads the same), so a metatable cannot make the holes of
  -- a long border look full. After 64 holes it gives up: nil and where it stopped.
  local function newest(list, top, plain)
    local misses = 0
    for i = top, 1, -1 do
      local e
      if plain then
        e = list[i]
      else
        e = rawget(list, i)
      end
      if e == nil then
        misses = misses + 1
        if misses > 64 then
          return nil, i
        end
      elseif type(e) == "table" and e.type == "message" then
        local m = e.message
        if type(m) == "table" and m.role == "toolResult" and m.toolName == "todo" then
          local state = state_of(m.details)
          if state then
            return state
          end
        end
      end
    end
  end

  -- The entries at the integer keys of `entries` in `1..top`, oldest first, without holes:
  -- for a table whose length is a border far past its entries (keys at powers of two:
  -- 2^28 with 29 entries), walking down from the length would take forever.
  local function present(entries, top)
    local keys = {}
    for k in next, entries do
      if type(k) == "number" and k >= 1 and k <= top and k == floor(k) then
        keys[#keys + 1] = k
      end
    end
    table.sort(keys)
    for j = 1, #keys do
      keys[j] = rawget(entries, keys[j])
    end
    return keys
  end

  return function(entries)
    if type(entries) ~= "table" then
      return native(entries)
    end
    local state, stopped = newest(entries, len(entries), getmetatable(entries) == nil)
    if stopped then
      local dense = present(entries, stopped)
      state = newest(dense, #dense, true)
    end
    return state or native(nil)
  end
end
