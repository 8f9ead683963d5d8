-- tests/lua/persist_spec.lua: files a user can trust, from a real interpreter against the
-- built module: session:save / session:load and bad files through core.so, and
-- rpiv_todo.persist (a list kept per key and session, restored on first use in a new
-- process, replay wins, unreadable files kept aside, failures reported and never raised).
-- scripts/test.sh runs it per flavour; by hand from the crate root:
--   lua5.4 tests/lua/persist_spec.lua      (also luajit, lua5.1)
-- A "new process" is simulated by dropping every session and enabling persistence again.

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local H = {}

local todo = require("rpiv_todo")
local core = require("rpiv_todo.core")
local persist = require("rpiv_todo.persist")

-- A fresh scratch directory (POSIX shell; these specs run on Linux and macOS).
function H.tempdir()
  local path = os.tmpname()
  os.remove(path)
  assert(os.execute("mkdir -p '" .. path .. "'"))
  H.dirs[#H.dirs + 1] = path
  return path
end
H.dirs = {}

function H.read(path)
  local f = io.open(path, "rb")
  if f == nil then
    return nil
  end
  local text = f:read("*a")
  f:close()
  return text
end

function H.write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

function H.exists(path)
  return H.read(path) ~= nil
end

function H.subjects(state)
  local out = {}
  for i, t in ipairs(state.tasks) do
    out[i] = t.subject
  end
  return table.concat(out, ",")
end

-- A new process: no sessions, persistence enabled again with the same options.
function H.restart(opts)
  persist.disable()
  todo.sessions.reset()
  persist.enable(opts)
end

T.before_each(function()
  persist.disable()
  todo.sessions.reset()
  todo.setup({ locale = "en" })
end)

T.test("session:save and session:load carry a list through a file", function()
  local dir = H.tempdir()
  local a = todo.session("a")
  a:execute({ action = "create", subject = "Keep me" })
  T.eq(a:save(dir .. "/a.json"), true, "save")
  local b = todo.session("b")
  local state = b:load(dir .. "/a.json")
  T.eq(H.subjects(state), "Keep me", "loaded")
  T.eq(b:execute({ action = "create", subject = "Next" }).content[1].text, "Created #2: Next (pending)", "nextId")
end)

T.test("bad files give nil and a message naming the path, never a Lua error", function()
  local dir = H.tempdir()
  local cases = {
    { "missing.json", nil, "no such file" },
    { "empty.json", "", "the file is empty" },
    { "cut.json", '{"version":1,"tasks":[{"id":1,"subj', "truncated JSON" },
    { "garbage.json", "\0\1\2 not json", "invalid JSON" },
    { "shape.json", '{"tasks":[],"nextId":"x"}', "not a todo list: nextId:" },
  }
  local s = todo.session("keep")
  s:execute({ action = "create", subject = "untouched" })
  for _, c in ipairs(cases) do
    local path = dir .. "/" .. c[1]
    if c[2] then
      H.write(path, c[2])
    end
    local state, err = core.load(path)
    T.eq(state, nil, c[1] .. " state")
    T.contains(err, path .. ": " .. c[3], c[1] .. " message")
    local sstate, serr = s:load(path)
    T.eq(sstate, nil, c[1] .. " session state")
    T.eq(serr, err, c[1] .. " session message")
    T.eq(H.subjects(s:state()), "untouched", c[1] .. " list unchanged")
  end
  local ok, err = core.save(dir .. "/no/such/dir/list.json", s.list)
  T.eq(ok, nil, "unwritable: ok")
  T.contains(err, "cannot write: the directory " .. dir .. "/no/such/dir does not exist", "unwritable: message")
end)

T.test("file names escape the key and the session id, and long ones end with a hash", function()
  T.eq(persist.file_name("/home/me/project", "default"), "%2Fhome%2Fme%2Fproject@default.json", "plain")
  T.eq(persist.file_name("C:\\w x", "chat@1"), "C%3A%5Cw%20x@chat%401.json", "escaped")
  local long = "/" .. string.rep("d", 300)
  local name = persist.file_name(long, "default")
  T.eq(#name, 200 + #".json", "length")
  T.eq(name:sub(-17), "dddd@default.json", "keeps the end")
  T.ok(name ~= persist.file_name(long .. "e", "default"), "different keys, different names")
end)

T.test("with persistence each change is saved, and a new process restores the list", function()
  local dir = H.tempdir()
  local opts = { dir = dir, key = "/work/project" }
  persist.enable(opts)
  local file = dir .. "/%2Fwork%2Fproject@default.json"
  T.eq(persist.path("default"), file, "path")
  T.eq(H.exists(file), false, "nothing written before a change")
  local run = todo.tool().execute
  run({ action = "create", subject = "Write the parser" })
  run({ action = "create", subject = "Test it" })
  run({ action = "update", id = 1, status = "in_progress" })
  local saved = assert(core.load(file))
  T.eq(H.subjects(saved), "Write the parser,Test it", "saved after each change")
  T.eq(saved.tasks[1].status, "in_progress", "the latest change is in the file")
  -- A call that changes nothing writes nothing.
  os.remove(file)
  run({ action = "list" })
  run({ action = "update", id = 99, status = "completed" })
  T.eq(H.exists(file), false, "unchanged list, no write")
  run({ action = "update", id = 2, status = "in_progress" })
  T.ok(H.exists(file), "a change writes again")

  H.restart(opts)
  local state = todo.session("default"):state()
  T.eq(H.subjects(state), "Write the parser,Test it", "restored in the new process")
  T.eq(
    run({ action = "create", subject = "Third" }).content[1].text,
    "Created #3: Third (pending)",
    "ids continue after the restore"
  )
end)

T.test("keys and sessions keep their lists apart", function()
  local dir = H.tempdir()
  persist.enable({ dir = dir, key = "/a" })
  todo.tool().execute({ action = "create", subject = "in a" })
  todo.tool().execute({ action = "create", subject = "chat 2 in a" }, { session = "chat-2" })
  H.restart({ dir = dir, key = "/b" })
  T.eq(#todo.session("default"):state().tasks, 0, "another key starts empty")
  todo.tool().execute({ action = "create", subject = "in b" })
  H.restart({ dir = dir, key = "/a" })
  T.eq(H.subjects(todo.session("default"):state()), "in a", "key /a, default")
  T.eq(H.subjects(todo.session("chat-2"):state()), "chat 2 in a", "key /a, chat-2")
  T.ok(H.exists(dir .. "/%2Fb@default.json"), "key /b has its own file")
end)

T.test("a host that replays history wins over the saved list, and the replay is saved", function()
  local dir = H.tempdir()
  local opts = { dir = dir, key = "/p" }
  persist.enable(opts)
  todo.tool().execute({ action = "create", subject = "from the file" })
  H.restart(opts)
  local entries = {
    {
      type = "message",
      message = {
        role = "toolResult",
        toolName = "todo",
        details = { tasks = { { id = 4, subject = "from history", status = "pending" } }, nextId = 5 },
      },
    },
  }
  todo.on_session_start("default", entries)
  T.eq(H.subjects(todo.session("default"):state()), "from history", "replay wins")
  T.eq(H.subjects(assert(core.load(dir .. "/%2Fp@default.json"))), "from history", "the replayed list is saved")
end)

T.test("an unreadable file is kept aside and reported; the session starts empty", function()
  local dir = H.tempdir()
  local file = dir .. "/%2Fp@default.json"
  H.write(file, '{"tasks":[{"id":1,"subject":"cut')
  local errors = {}
  persist.enable({
    dir = dir,
    key = "/p",
    on_error = function(msg)
      errors[#errors + 1] = msg
    end,
  })
  T.eq(#todo.session("default"):state().tasks, 0, "starts empty")
  T.eq(#errors, 1, "reported once")
  T.contains(errors[1], "(rpiv_todo) persist: " .. file .. ": truncated JSON", "what")
  T.contains(errors[1], "kept as " .. file .. ".unreadable", "where it went")
  T.eq(H.read(file .. ".unreadable"), '{"tasks":[{"id":1,"subject":"cut', "the bad file is kept byte for byte")
  todo.tool().execute({ action = "create", subject = "fresh" })
  T.eq(H.subjects(assert(core.load(file))), "fresh", "the next change saves a whole list")
end)

T.test("a directory that cannot be written is reported once and never breaks a call", function()
  local dir = H.tempdir()
  local errors = {}
  persist.enable({
    dir = dir .. "/missing",
    key = "/p",
    on_error = function(msg)
      errors[#errors + 1] = msg
    end,
  })
  local r1 = todo.tool().execute({ action = "create", subject = "one" })
  local r2 = todo.tool().execute({ action = "create", subject = "two" })
  T.eq(r1.content[1].text, "Created #1: one (pending)", "first call")
  T.eq(r2.content[1].text, "Created #2: two (pending)", "second call")
  T.eq(#errors, 1, "one report for the same failure")
  T.contains(errors[1], "cannot write: the directory " .. dir .. "/missing does not exist", "message")
  T.eq(persist.status().last_error, errors[1], "status keeps it")
end)

T.test("disabled (the default) writes nothing", function()
  local dir = H.tempdir()
  persist.enable({ dir = dir, key = "/p" })
  persist.disable()
  todo.tool().execute({ action = "create", subject = "not saved" })
  T.eq(H.exists(dir .. "/%2Fp@default.json"), false, "no file")
  T.eq(persist.status().enabled, false, "status")
  T.eq(persist.path("default"), nil, "no path")
end)

T.test("enable checks its options", function()
  T.raises(function()
    persist.enable({ dir = "", key = "/p" })
  end, "(rpiv_todo) persist.dir: expected the path of an existing directory", "dir")
  T.raises(function()
    persist.enable({ dir = "/tmp", key = 5 })
  end, "(rpiv_todo) persist.key:", "key")
  T.raises(function()
    persist.enable({ dir = "/tmp", key = "/p", when = "always" })
  end, "(rpiv_todo) persist.when: unknown option", "unknown")
end)

persist.disable()
for _, dir in ipairs(H.dirs) do
  os.execute("rm -rf '" .. dir .. "'")
end
T.finish("persist")
