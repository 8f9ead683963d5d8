-- tests/lua/files_spec.lua: odd things where a file belongs, from a real interpreter
-- against the built module. core.load names the kind of each failure (missing, not_file,
-- too_large, io, invalid) as its third result, decided from the system's error, not the
-- message; a pipe at the list path or at rpiv-i18n's locale.json is never opened for
-- reading, so nothing waits for a writer. By hand from the crate root:
--   lua5.4 tests/lua/files_spec.lua      (also luajit, lua5.1)

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local H = {}

local core = require("rpiv_todo.core")

-- A fresh scratch directory (POSIX shell).
function H.tempdir()
  local path = os.tmpname()
  os.remove(path)
  assert(os.execute("mkdir -p '" .. path .. "'"))
  H.dirs[#H.dirs + 1] = path
  return path
end
H.dirs = {}

function H.sh(cmd)
  local ok = os.execute(cmd)
  -- Lua 5.1 returns the status code, 5.2+ true/nil.
  assert(ok == true or ok == 0, cmd)
end

function H.write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

T.test("core.load names the kind of each failure", function()
  local dir = H.tempdir()
  H.sh("mkfifo '" .. dir .. "/pipe.json'")
  H.sh("mkdir '" .. dir .. "/dir.json'")
  -- 2 GiB, sparse: no disk used; refused from its size.
  H.sh("truncate -s 2G '" .. dir .. "/huge.json'")
  H.write(dir .. "/bad.json", '{"tasks":')
  local cases = {
    { "missing.json", "missing", "no such file" },
    { "dir.json", "not_file", "cannot read: it is a directory" },
    { "pipe.json", "not_file", "cannot read: it is a pipe (FIFO), not a regular file" },
    { "huge.json", "too_large", "larger than 67108864 bytes, the most this file may hold: not read" },
    { "bad.json", "invalid", "truncated JSON (the text stops at line 1, column 9)" },
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
  H.sh("mkdir -p '" .. dir .. "/rpiv-i18n'")
  H.sh("mkfifo '" .. dir .. "/rpiv-i18n/locale.json'")
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

for _, dir in ipairs(H.dirs) do
  os.execute("rm -rf '" .. dir .. "'")
end
T.finish()
