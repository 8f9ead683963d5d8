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

H.tempdir = T.tempdir

function H.read(path)
  local f = io.open(path, "rb")
  if f == nil then
    return nil
  end
  local text = f:read("*a")
  f:close()
  return text
end

-- The names in a directory, sorted, dot files included.
function H.names(dir)
  local names = {}
  for name in io.popen("ls -A '" .. dir .. "'"):lines() do
    names[#names + 1] = name
  end
  table.sort(names)
  return names
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
      T.write(path, c[2])
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

T.test("file names escape the key and the session id, and long parts are a SHA-256", function()
  T.eq(persist.file_name("/home/me/project", "default"), "%2Fhome%2Fme%2Fproject@default.json", "plain")
  T.eq(persist.file_name("C:\\w x", "chat@1"), "C%3A%5Cw%20x@chat%401.json", "escaped")
  -- Known SHA-256 values (FIPS 180-2 examples and `printf abc | sha256sum`).
  T.eq(persist.sha256(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "sha256 empty")
  T.eq(persist.sha256("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "sha256 abc")
  T.eq(
    persist.sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    "sha256 two blocks"
  )
  local long = "/" .. string.rep("d", 300)
  T.eq(persist.file_name(long, "default"), "~" .. persist.sha256(long) .. "@default.json", "a long key is hashed")
  T.eq(
    persist.file_name("/p", string.rep("i", 65)),
    "%2Fp@~" .. persist.sha256(string.rep("i", 65)) .. ".json",
    "a long id is hashed"
  )
  T.eq(persist.file_name("/p", string.rep("i", 64)), "%2Fp@" .. string.rep("i", 64) .. ".json", "64 bytes stay")
  -- djb2, the old hash, gives "Ab..." and "BA..." the same value: the names must differ.
  local a, b = "Ab" .. string.rep("/d", 150), "BA" .. string.rep("/d", 150)
  T.ok(persist.file_name(a, "x") ~= persist.file_name(b, "x"), "Ab/BA keys")
  T.ok(persist.file_name("/p", a) ~= persist.file_name("/p", b), "Ab/BA ids")
  local key_part, id_part, id = persist.parse_name("%2Fp@chat%401.json")
  T.eq(key_part, "%2Fp", "parse: key part")
  T.eq(id_part, "chat%401", "parse: id part")
  T.eq(id, "chat@1", "parse: id")
  T.eq(persist.parse_name(".%2Fp@x.json.abc123.tmp"), nil, "a temporary file is not a list")
  T.eq(persist.key_prefix("/p"), "%2Fp@", "key prefix")
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

T.test("an invalid file is kept aside under a new name each time; the session starts empty", function()
  local dir = H.tempdir()
  local file = dir .. "/%2Fp@default.json"
  T.write(file, '{"tasks":[{"id":1,"subject":"cut')
  local errors = {}
  local opts = {
    dir = dir,
    key = "/p",
    on_error = function(msg)
      errors[#errors + 1] = msg
    end,
  }
  persist.enable(opts)
  T.eq(#todo.session("default"):state().tasks, 0, "starts empty")
  T.eq(#errors, 1, "reported once")
  T.contains(errors[1], "(rpiv_todo) persist: " .. file .. ": truncated JSON", "what")
  local first = errors[1]:match("kept as (%S+%.unreadable%-%d+T%d+Z), and a new list is saved in its place$")
  T.ok(first ~= nil, "where it went: " .. errors[1])
  T.eq(H.read(first or ""), '{"tasks":[{"id":1,"subject":"cut', "the bad file is kept byte for byte")
  todo.tool().execute({ action = "create", subject = "fresh" })
  T.eq(H.subjects(assert(core.load(file))), "fresh", "the next change saves a whole list")
  -- A second bad file in the same second: a new name, the first one stays.
  T.write(file, "second bad")
  H.restart(opts)
  todo.session("default")
  local second = errors[#errors]:match("kept as (%S+), and a new list")
  T.ok(second ~= nil and second ~= first, "another name: " .. tostring(second))
  T.eq(H.read(first or ""), '{"tasks":[{"id":1,"subject":"cut', "the first one is still there")
  T.eq(H.read(second or ""), "second bad", "the second one too")
end)

T.test("a file that cannot be read now (not invalid) is neither moved nor written over", function()
  local dir = H.tempdir()
  local file = dir .. "/%2Fp@default.json"
  local opts = { dir = dir, key = "/p" }
  persist.enable(opts)
  todo.tool().execute({ action = "create", subject = "Good list" })
  local good = H.read(file)
  local errors = {}
  opts.on_error = function(msg)
    errors[#errors + 1] = msg
  end
  -- A pipe where the list belongs: never opened to read, never replaced.
  os.rename(file, file .. ".kept")
  T.ok(os.execute("mkfifo '" .. file .. "'"), "mkfifo")
  H.restart(opts)
  local run = todo.tool().execute
  local r1 = run({ action = "create", subject = "Mine" })
  T.eq(
    r1.content[1].text,
    "Error: " .. file .. ": cannot read: it is a pipe (FIFO), not a regular file; nothing was changed",
    "the call is refused in-band, naming the file"
  )
  T.eq(r1.details.error ~= nil, true, "details.error")
  T.eq(#todo.session("default"):state().tasks, 0, "nothing claimed")
  T.contains(errors[1], "it is a pipe (FIFO)", "reported")
  local others = 0
  for _ in io.popen("ls -a '" .. dir .. "'"):lines() do
    others = others + 1
  end
  T.eq(others, 5, "nothing moved aside (., .., the pipe, the kept list, the lock)")
  -- Once the file reads again, the next call starts from its list.
  os.remove(file)
  os.rename(file .. ".kept", file)
  T.eq(H.read(file), good, "the good list is back")
  local r2 = run({ action = "create", subject = "Next" })
  T.eq(r2.content[1].text, "Created #2: Next (pending)", "the id the file's list gives")
  T.eq(H.subjects(assert(core.load(file))), "Good list,Next", "the good list and every acknowledged task")
end)

T.test("a list written by a newer rpiv_todo is refused in-band, never moved aside or written over", function()
  local dir = H.tempdir()
  local file = dir .. "/%2Fp@default.json"
  local newer = '{"version":2,"generation":9,"tasks":[],"nextId":1,"log":[]}\n'
  local f = assert(io.open(file, "wb"))
  f:write(newer)
  f:close()
  local errors = {}
  persist.enable({
    dir = dir,
    key = "/p",
    on_error = function(msg)
      errors[#errors + 1] = msg
    end,
  })
  local r = todo.tool().execute({ action = "create", subject = "Mine" })
  T.eq(
    r.content[1].text,
    "Error: "
      .. file
      .. ": written by a newer rpiv_todo (file format version 2; this one reads up to 1); nothing was changed",
    "refused in-band, saying why"
  )
  T.eq(#todo.session("default"):state().tasks, 0, "nothing claimed")
  T.contains(errors[1] or "", "written by a newer rpiv_todo", "reported to the host")
  local _, _, kind = core.load(file)
  T.eq(kind, "newer", "core.load names the kind")
  T.eq(H.read(file), newer, "the file is as the newer program left it")
  T.same(H.names(dir), { "%2Fp@default.json", ".%2Fp@default.json.lock" }, "nothing moved aside")
end)

T.test("a directory that cannot be written: every change is refused in-band, reported once", function()
  local dir = H.tempdir()
  local errors = {}
  persist.enable({
    dir = dir .. "/missing",
    key = "/p",
    on_error = function(msg)
      errors[#errors + 1] = msg
    end,
  })
  local file = dir .. "/missing/%2Fp@default.json"
  local r1 = todo.tool().execute({ action = "create", subject = "one" })
  local r2 = todo.tool().execute({ action = "create", subject = "two" })
  local want = "Error: "
    .. file
    .. ": cannot write: the directory "
    .. dir
    .. "/missing does not exist; nothing was changed"
  T.eq(r1.content[1].text, want, "first call")
  T.eq(r2.content[1].text, want, "second call")
  T.eq(#todo.session("default"):state().tasks, 0, "nothing claimed, nothing held")
  T.eq(todo.tool().execute({ action = "list" }).content[1].text, "No tasks", "a read still answers")
  T.eq(#errors, 1, "one report for the same failure")
  T.contains(errors[1], "the directory " .. dir .. "/missing does not exist", "message")
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

T.test("a change is made on the newest list in the file: nothing dropped, ids as saved", function()
  local dir = H.tempdir()
  local file = dir .. "/%2Fp@default.json"
  local errors = {}
  persist.enable({
    dir = dir,
    key = "/p",
    on_error = function(msg)
      errors[#errors + 1] = msg
    end,
  })
  local run = todo.tool().execute
  run({ action = "create", subject = "Shared" })
  -- Another editor read the file, added its task, and wrote it.
  local other = core.list(assert(core.load(file)))
  other:apply({ action = "create", subject = "Theirs" })
  assert(core.save(file, other))
  local r = run({ action = "create", subject = "Mine", blockedBy = { 1 } })
  T.eq(
    r.content[1].text,
    "Created #3: Mine (pending)\n"
      .. "(The list was changed by another program since your last call; call list to see it.)",
    "the reply names the id in the file, and that another program (which keeps no log) changed it"
  )
  T.eq(r.details.nextId, 4, "and the file's nextId")
  local saved = assert(core.load(file))
  T.eq(H.subjects(saved), "Shared,Theirs,Mine", "both lists' tasks are in the file")
  T.eq(saved.tasks[3].id, 3, "under the id the reply said")
  T.same(saved.tasks[3].blockedBy, { 1 }, "its fields came along")
  T.eq(H.subjects(todo.session("default"):state()), "Shared,Theirs,Mine", "this process holds the file's list")
  T.eq(#errors, 0, "nothing to report: nothing was lost")
  -- A call the newest list does not allow is refused to the model, not dropped later.
  -- This time the other editor keeps the file's log, so the model is told what it did.
  other = core.list()
  other:bind(file)
  other:set_writer("another editor")
  other:apply({ action = "update", id = 1, status = "completed" })
  other:apply({ action = "delete", id = 2 })
  local u = run({ action = "update", id = 2, status = "in_progress" })
  T.eq(
    u.content[1].text,
    "Error: illegal transition deleted → in_progress\n"
      .. "(Changed by others since your last call: #1 completed by another editor; #2 deleted by another editor.)",
    "the model hears it at once, and why"
  )
  saved = assert(core.load(file))
  T.eq(saved.tasks[2].status, "deleted", "their delete stands")
  T.eq(saved.tasks[1].status, "completed", "their update stands")
end)

T.test("check() takes in another process's list when nothing changed here", function()
  local dir = H.tempdir()
  local file = dir .. "/%2Fp@default.json"
  local errors = {}
  persist.enable({
    dir = dir,
    key = "/p",
    on_error = function(msg)
      errors[#errors + 1] = msg
    end,
  })
  todo.tool().execute({ action = "create", subject = "One" })
  T.eq(persist.check("default"), "unchanged", "our own write")
  local other = core.list(assert(core.load(file)))
  other:apply({ action = "update", id = 1, status = "completed" })
  assert(core.save(file, other))
  T.eq(persist.check("default"), "reloaded", "theirs")
  T.eq(todo.session("default"):state().tasks[1].status, "completed", "the list follows the file")
  T.eq(
    todo.tool().execute({ action = "create", subject = "Two" }).content[1].text,
    "Created #2: Two (pending)\n"
      .. "(The list was changed by another program since your last call; call list to see it.)",
    "ids continue from the file's list"
  )
  T.eq(#errors, 0, "nothing to report")
  os.remove(file)
  T.eq(persist.check("default"), "missing", "a removed file")
  T.eq(#todo.session("default"):state().tasks, 2, "leaves the list here")
end)

T.test("check() binds an empty session made before persistence was enabled, and takes in the file", function()
  local dir = H.tempdir()
  local file = dir .. "/%2Fp@default.json"
  todo.session("default") -- the panel's foreground session exists before setup({ persist = true })
  persist.enable({ dir = dir, key = "/p" })
  T.eq(persist.check("default"), "none", "no file yet")
  local other = core.list()
  other:bind(file)
  other:apply({ action = "create", subject = "From the agent" })
  T.eq(persist.check("default"), "reloaded", "another program's first write")
  T.eq(H.subjects(todo.session("default"):state()), "From the agent", "the session holds the file's list")
  T.eq(
    todo.tool().execute({ action = "create", subject = "Mine" }).content[1].text,
    "Created #2: Mine (pending)",
    "and its next call is a transaction on the file"
  )
  T.eq(H.subjects(assert(core.load(file))), "From the agent,Mine", "both in the file")
end)

T.test("two lists bound to one file take turns: every change lands, no id is given twice", function()
  local dir = H.tempdir()
  local file = dir .. "/shared.json"
  local a, b = core.list(), core.list()
  a:bind(file)
  b:bind(file, { wait_ms = 50 })
  T.eq(a:file(), file, "a:file()")
  local replies = {}
  for i = 1, 20 do
    local who = (i % 3 == 0) and b or a
    -- The first line: the second, if any, names the other list's changes.
    replies[#replies + 1] = who:apply({ action = "create", subject = "task " .. i }).content[1].text:match("^[^\n]*")
    if i % 4 == 0 then
      b:apply({ action = "update", id = i - 1, status = "in_progress" })
    end
    if i % 5 == 0 then
      a:apply({ action = "delete", id = i - 2 })
    end
  end
  for i, text in ipairs(replies) do
    T.eq(text, "Created #" .. i .. ": task " .. i .. " (pending)", "create " .. i .. " under the next id")
  end
  local saved = assert(core.load(file))
  T.eq(#saved.tasks, 20, "20 created")
  local deleted = 0
  for _, t in ipairs(saved.tasks) do
    deleted = deleted + (t.status == "deleted" and 1 or 0)
  end
  T.eq(deleted, 4, "4 deleted")
  T.eq(saved.nextId, 21, "nextId")
  T.eq(a:state_json(), b:apply({ action = "list" }) and b:state_json(), "both hold the file's list")
  local seen = {}
  for _, t in ipairs(saved.tasks) do
    T.eq(seen[t.id], nil, "id " .. t.id .. " held once")
    seen[t.id] = true
    if t.id % 4 == 3 and t.id < 20 and t.status ~= "deleted" then
      T.eq(t.status, "in_progress", "b's update of #" .. t.id .. " kept")
    end
  end
  local _, generation = a:file()
  T.eq(generation > 20, true, "each change wrote a new generation (" .. tostring(generation) .. ")")
  a:apply({ action = "update", id = 1, subject = "task one" })
  T.eq(b:sync(), "reloaded", "b takes in a's last change")
  T.eq(b:state().tasks[1].subject, "task one", "a's change")
  T.eq(b:sync(), "unchanged", "then nothing to read")
end)

T.test("enabling again with the same directory keeps each session's file (a second setup, then :cd)", function()
  local dir = H.tempdir()
  local cwd = "/a"
  local opts = {
    dir = dir,
    key = function()
      return cwd
    end,
  }
  persist.enable(opts)
  local run = todo.tool().execute
  run({ action = "create", subject = "in a" })
  cwd = "/b"
  persist.enable(opts)
  run({ action = "list" })
  run({ action = "create", subject = "still a" })
  T.eq(H.exists(dir .. "/%2Fb@default.json"), false, "nothing written for /b")
  T.eq(H.subjects(assert(core.load(dir .. "/%2Fa@default.json"))), "in a,still a", "the session's own file")
  T.eq(persist.path("default"), dir .. "/%2Fa@default.json", "its path")
  run({ action = "create", subject = "chat in b" }, { session = "chat-b" })
  T.eq(H.subjects(assert(core.load(dir .. "/%2Fb@chat-b.json"))), "chat in b", "a new session takes the new key")
end)

T.test("a session the host shuts down takes its file with it, unless another process changed it", function()
  local dir = H.tempdir()
  persist.enable({ dir = dir, key = "/p" })
  local run = todo.tool().execute
  run({ action = "create", subject = "Short-lived" }, { session = "chat-1" })
  run({ action = "create", subject = "Shared" }, { session = "chat-2" })
  T.ok(H.exists(dir .. "/%2Fp@chat-1.json"), "saved while it lives")
  todo.shutdown("chat-1")
  T.eq(H.exists(dir .. "/%2Fp@chat-1.json"), false, "removed at shutdown")
  local other = core.list(assert(core.load(dir .. "/%2Fp@chat-2.json")))
  other:apply({ action = "create", subject = "Theirs" })
  assert(core.save(dir .. "/%2Fp@chat-2.json", other))
  todo.shutdown("chat-2")
  T.eq(H.subjects(assert(core.load(dir .. "/%2Fp@chat-2.json"))), "Shared,Theirs", "another's change keeps it")
  H.restart({ dir = dir, key = "/p" })
  T.eq(#todo.session("chat-1"):state().tasks, 0, "an ended session does not come back")
end)

persist.disable()
T.finish("persist")
