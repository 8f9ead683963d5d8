-- tests/lua/files_spec.lua: odd things where a file belongs, from a real interpreter
-- against the built module. core.load names the kind of each failure (missing, not_file,
-- too_large, io, invalid) as its third result, decided from the system's error, not the
-- message; a pipe at the list path or at rpiv-i18n's locale.json is never opened for
-- reading, so nothing waits for a writer. By hand from the crate root:
--   lua5.4 tests/lua/files_spec.lua      (also luajit, lua5.1)

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local H = {}

local core = require("rpiv_todo.core")

H.tempdir = T.tempdir

T.test("core.load names the kind of each failure", function()
  local dir = H.tempdir()
  T.sh("mkfifo '" .. dir .. "/pipe.json'")
  T.sh("mkdir '" .. dir .. "/dir.json'")
  -- 2 GiB, sparse: no disk used; refused from its size.
  T.sh("truncate -s 2G '" .. dir .. "/huge.json'")
  T.write(dir .. "/bad.json", '{"tasks":')
  T.write(dir .. "/brace.json", "{")
  local cases = {
    { "missing.json", "missing", "no such file" },
    { "dir.json", "not_file", "cannot read: it is a directory" },
    { "pipe.json", "not_file", "cannot read: it is a pipe (FIFO), not a regular file" },
    { "huge.json", "too_large", "larger than 67108864 bytes, the most this file may hold: not read" },
    { "bad.json", "invalid", "truncated JSON (the text stops at line 1, column 9)" },
    { "brace.json", "invalid", "truncated JSON (the text stops at line 1, column 1)" },
    { "bad.json/x", "io", "cannot read: Not a directory (os error 20)" },
  }
  for _, case in ipairs(cases) do
    local path = dir .. "/" .. case[1]
    local state, err, kind = core.load(path)
    T.eq(state, nil, case[1] .. " state")
    T.eq(kind, case[2], case[1] .. " kind")
    T.eq(err, path .. ": " .. case[3], case[1] .. " message")
  end
end)

T.test("session:load passes the kind on, and leaves the list as it was", function()
  local dir = H.tempdir()
  local s = require("rpiv_todo").session("kinds")
  s:execute({ action = "create", subject = "kept" })
  local state, err, kind = s:load(dir .. "/missing.json")
  T.eq(state, nil, "no state")
  T.eq(err, dir .. "/missing.json: no such file", "the message")
  T.eq(kind, "missing", "the kind")
  T.eq(s:state().tasks[1].subject, "kept", "list unchanged")
  require("rpiv_todo").shutdown("kinds")
end)

T.test("a good file loads with no second or third result", function()
  local dir = H.tempdir()
  local l = core.list()
  l:apply({ action = "create", subject = "kept" })
  T.eq(core.save(dir .. "/list.json", l), true, "saved")
  local state, err, kind = core.load(dir .. "/list.json")
  T.eq(state.tasks[1].subject, "kept", "loaded")
  T.eq(err, nil, "no message")
  T.eq(kind, nil, "no kind")
end)

T.test("a pipe at rpiv-i18n's locale.json is passed over, not waited on", function()
  local dir = H.tempdir()
  T.sh("mkdir -p '" .. dir .. "/rpiv-i18n'")
  T.sh("mkfifo '" .. dir .. "/rpiv-i18n/locale.json'")
  -- Were the pipe opened for reading, this call would wait for a writer forever (the
  -- harness's run would never end); the chain goes on to LANG instead.
  local code = core.resolve_locale(nil, {
    XDG_CONFIG_HOME = dir,
    RPIV_TODO_LOCALE = false,
    LC_ALL = false,
    LC_MESSAGES = false,
    LANG = "de_DE.UTF-8",
  })
  T.eq(code, "de", "the next step of the chain decides")
end)

T.test("a call that would add more than a list file can load back is refused naming the field", function()
  -- Issue 19, item 5: 1 MiB descriptions were acknowledged, saved, and then refused at load.
  local dir = H.tempdir()
  local s = require("rpiv_todo").session("bounded")
  s:execute({ action = "create", subject = "kept" })
  local result = s:execute({ action = "create", subject = "big", description = string.rep("d", 1024 * 1024) })
  T.eq(
    result.content[1].text,
    "Error: description: expected at most 32768 bytes (as JSON text), got 1048576 bytes",
    "in-band error"
  )
  result = s:execute({ action = "update", id = 1, metadata = { notes = string.rep("n", 9000) } })
  T.eq(result.details.error, "metadata: expected at most 8192 bytes (as JSON text), got 9012 bytes", "metadata")
  T.eq(#s:state().tasks, 1, "nothing added")
  T.eq(s:save(dir .. "/list.json"), true, "saved")
  T.eq(core.load(dir .. "/list.json").tasks[1].subject, "kept", "and loads back")
  require("rpiv_todo").shutdown("bounded")
end)

T.finish()
