-- rpiv_todo.native.task_builder: LuaJIT's builder of result task tables (the native
-- module loads this file; see `built_in_lua` in src/lua/to_lua.rs). The C side writes
-- each task's values into the flat array `buf`, 8 slots a task (kind, id, subject, status,
-- description, activeForm, owner, blockedBy); this function, compiled by the JIT, makes
-- the tables with constructors, which store into known slots where the C API would hash
-- every key. Kind 0: the three required fields; 1: and activeForm; 2: any optional
-- field; 3: a table the C side built whole (metadata, fields of its own), in slot 2.
-- Plain Lua: it loads in every flavour.
return function(buf, n, out)
  for i = 1, n do
    local b = (i - 1) * 8
    local kind = buf[b + 1]
    if kind == 0 then
      out[i] = { id = buf[b + 2], subject = buf[b + 3], status = buf[b + 4] }
    elseif kind == 1 then
      out[i] = { id = buf[b + 2], subject = buf[b + 3], status = buf[b + 4], activeForm = buf[b + 6] }
    elseif kind == 2 then
      local ids = buf[b + 8]
      if ids then
        local copy = {}
        for k = 1, #ids do
          copy[k] = ids[k]
        end
        ids = copy
      end
      out[i] = {
        id = buf[b + 2],
        subject = buf[b + 3],
        status = buf[b + 4],
        description = buf[b + 5],
        activeForm = buf[b + 6],
        owner = buf[b + 7],
        blockedBy = ids,
      }
    else
      out[i] = buf[b + 2]
    end
  end
end
