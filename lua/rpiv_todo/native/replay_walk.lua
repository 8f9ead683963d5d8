-- rpiv_todo.native.replay_walk: `core.replay` over Lua tables, in every flavour (the
-- native module loads this file; see `walk_in_lua` in src/lua/from_lua.rs). The walk over a
-- conversation's entries is Lua: LuaJIT compiles it, where each C API call would cost
-- about ten times a compiled read, and Lua 5.4 and 5.1 read fields faster with their own
-- instructions than with calls. The winning snapshot is read natively: the list's rules
-- (ids, blockedBy links and cycles, nextId) have one owner, in Rust. JSON text and misuse
-- go to the native `core.replay`.
--
-- The module is a factory: `require("rpiv_todo.native.replay_walk")(native, snapshot)`
-- gives `replay(entries)`, where `native` is the native `core.replay` (JSON text, nil,
-- misuse) and `snapshot(tasks, nextId)` the native reading of one snapshot (a state
-- table, or nil when it makes none).
return function(native, snapshot)
  local type, rawget, next, floor, find_text = type, rawget, next, math.floor, string.find
  local getmetatable = getmetatable
  local len = rawlen or function(t)
    return #t
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
    return snapshot(tasks, n)
  end

  -- The newest entry of `list[1..top]` that is a todo tool result whose snapshot makes a
  -- state: that state. Fields inside entries are read as Lua reads them (entries are the
  -- host's conversation); `list` itself is read raw unless `plain` (no metatable, where
  -- Lua's own index instruction reads the same), so a metatable cannot make the holes of
  -- a long border look full. After 64 holes it gives up: nil and where it stopped.
  --
  -- Only tables are entries and messages. When `careful`, a value's type is checked before
  -- it is indexed. Otherwise fields are read first and the types checked only for a todo
  -- tool result: `type` is a C call that costs PUC Lua as much as the rest of the test,
  -- and most entries are refused by their role or tool name. Indexing a value that cannot be
  -- indexed raises there, and `find` then walks again with care.
  local function newest(list, top, plain, careful)
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
      else
        local m
        if careful then
          m = type(e) == "table" and e.type == "message" and e.message
          m = type(m) == "table" and m.role == "toolResult" and m.toolName == "todo" and m
        else
          m = e.type == "message" and e.message
          m = m and m.role == "toolResult" and m.toolName == "todo" and type(e) == "table" and type(m) == "table" and m
        end
        if m then
          local state = state_of(m.details)
          if state then
            return state
          end
        end
      end
    end
  end

  -- `newest`, walked without care first (see there). Only the error of indexing a value
  -- that cannot be indexed makes it walk again: any other (a metamethod's, a hook's, out
  -- of memory) is raised as it came, once.
  local function find(list, top, plain)
    local ok, state, stopped = pcall(newest, list, top, plain, false)
    if ok then
      return state, stopped
    end
    if type(state) ~= "string" or not find_text(state, "attempt to index", 1, true) then
      error(state, 0)
    end
    return newest(list, top, plain, true)
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
    local state, stopped = find(entries, len(entries), getmetatable(entries) == nil)
    if stopped then
      local dense = present(entries, stopped)
      state = find(dense, #dense, true)
    end
    return state or native(nil)
  end
end
