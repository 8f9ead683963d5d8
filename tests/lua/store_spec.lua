-- tests/lua/store_spec.lua: files a user can trust, through the public Lua API from a real
-- interpreter against the built module: core.save / core.load, session:save /
-- session:load, and todo.set_locale(code, { persist = true }). Bad files and unwritable
-- paths come back as `nil, err` naming the path; nothing half-written is left behind.
-- (A writer killed at random moments, and a full disk, need a child process the test
-- controls: tests/contract/store.rs.) By hand, from the crate root:
--   lua5.4 tests/lua/store_spec.lua      (also luajit, lua5.1)

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local json = dofile(T.root() .. "/tests/lua/json.lua")
local core = require("rpiv_todo.core")
local todo = require("rpiv_todo")
local i18n = require("rpiv_todo.i18n")
local H = {}

-- The names in a directory, sorted, dot files included.
function H.names(dir)
  local pipe = assert(io.popen("ls -A '" .. dir .. "'"))
  local names = {}
  for name in pipe:lines() do
    names[#names + 1] = name
  end
  pipe:close()
  table.sort(names)
  return names
end

-- True when `path` is a symbolic link.
function H.is_link(path)
  local ok = os.execute("test -L '" .. path .. "'")
  return ok == true or ok == 0
end

-- The locale chain of a host whose config directory is `config` and whose environment
-- names no locale; nothing set explicitly, nothing cached.
function H.env(config, lang)
  i18n.reset()
  i18n.set_env({
    XDG_CONFIG_HOME = config,
    RPIV_TODO_LOCALE = false,
    LC_ALL = false,
    LC_MESSAGES = false,
    LANG = lang or false,
  })
end

T.before_each(function()
  todo.sessions.reset()
  H.env(T.tempdir())
  todo.setup({ locale = "en" })
end)

-- Three tasks with a dependency, a description, metadata and one in progress.
function H.three()
  local l = core.list()
  l:apply({ action = "create", subject = "Write the parser" })
  l:apply({ action = "create", subject = "Test it", blockedBy = { 1 } })
  l:apply({ action = "create", subject = "Ship", description = "tag and push", metadata = { k = "v" } })
  l:apply({ action = "update", id = 1, status = "in_progress", activeForm = "Writing" })
  return l
end

T.test("a list saved from a handle, a table or JSON text loads back equal", function()
  local dir = T.tempdir()
  local path = dir .. "/list.json"
  local want = H.three():state()
  for how, arg_of in pairs({
    handle = function(l)
      return l
    end,
    table = function(l)
      return l:state()
    end,
    ["JSON text"] = function(l)
      return l:state_json()
    end,
  }) do
    local ok, err = core.save(path, arg_of(H.three()))
    T.eq(ok, true, how .. ": saved")
    T.eq(err, nil, how .. ": no message")
    local state, err2 = core.load(path)
    T.eq(err2, nil, how .. ": loaded")
    T.same(state, want, "saved from a " .. how)
  end
  T.eq(T.read(path):sub(1, 31), '{"version":1,"tasks":[{"id":1,"', "the file's start")
  T.same(H.names(dir), { "list.json" }, "no temporary file left")
end)

T.test("session:save and session:load carry a list from one session to another", function()
  local dir = T.tempdir()
  local a = todo.session("a")
  a:execute({ action = "create", subject = "Carry me" })
  a:execute({ action = "update", id = 1, status = "in_progress" })
  T.eq(a:save(dir .. "/a.json"), true, "saved")
  local events = {}
  local stop = todo.listen(function(event, id)
    events[#events + 1] = event .. ":" .. id
  end)
  local b = todo.session("b")
  local state = assert(b:load(dir .. "/a.json"))
  stop()
  T.eq(#state.tasks, 1, "loaded")
  T.same(events, { "loaded:b" }, "events")
  T.eq(b:execute({ action = "create", subject = "Next" }).content[1].text, "Created #2: Next (pending)")
  T.eq(b:state().nextId, 3, "b's nextId")
  T.eq(a:state().nextId, 2, "a's nextId")
end)

T.test("bad files give nil and a message naming the path, and leave the list alone", function()
  local dir = T.tempdir()
  local full =
    '{"version":1,"tasks":[{"id":1,"subject":"a","status":"pending"},{"id":2,"subject":"b","status":"pending"}],"nextId":3}'
  T.sh("mkdir '" .. dir .. "/dir.json'")
  for _, case in ipairs({
    { "missing.json", nil, "no such file" },
    { "empty.json", "", "the file is empty" },
    { "truncated.json", full:sub(1, 60), "truncated JSON (the text stops at line 1, column 60)" },
    { "garbage.json", "\255\254 garbage", "invalid JSON (expected value at line 1 column 1)" },
    {
      "array.json",
      "[]",
      'not a todo list: expected an object {"tasks": [...], "nextId": n}, got an array',
    },
    { "shape.json", '{"tasks":"none","nextId":1}', 'not a todo list: tasks: expected an array, got string "none"' },
    {
      "task.json",
      '{"tasks":[{"id":"1","subject":"a","status":"pending"}],"nextId":2}',
      'not a todo list: tasks[1].id: expected an integer id, got string "1"',
    },
    { "dir.json", nil, "cannot read: it is a directory" },
    {
      "rules.json",
      '{"tasks":[{"id":1,"subject":"a","status":"pending","blockedBy":[1]}],"nextId":2}',
      "breaks the list's rules: tasks: the blockedBy edges form a cycle through #1",
    },
  }) do
    local name, content, want = case[1], case[2], case[3]
    local path = dir .. "/" .. name
    if content then
      T.write(path, content)
    end
    local s = todo.session("keep")
    s:execute({ action = "create", subject = "untouched" })
    local state, err = core.load(path)
    local sstate, serr = s:load(path)
    T.eq(state, nil, name .. ": core.load's state")
    T.eq(err, path .. ": " .. want, name .. ": core.load's message")
    T.eq(sstate, nil, name .. ": session:load's state")
    T.eq(serr, path .. ": " .. want, name .. ": session:load's message")
    T.eq(#s:state().tasks, 1, name .. ": the list")
    T.eq(s:state().tasks[1].subject, "untouched", name .. ": the list")
    todo.shutdown("keep")
  end
end)

T.test("an unwritable path gives nil and a message, and writes nothing", function()
  local dir = T.tempdir()
  T.write(dir .. "/plain-file", "x")
  T.sh("mkdir '" .. dir .. "/a-dir'")
  for _, case in ipairs({
    { dir .. "/no-such-dir/list.json", "cannot write: the directory " .. dir .. "/no-such-dir does not exist" },
    {
      dir .. "/plain-file/list.json",
      "cannot write: cannot create a file in " .. dir .. "/plain-file: Not a directory (os error 20)",
    },
    { dir .. "/a-dir", "cannot write: it is a directory" },
    { "", "cannot write: the path is empty" },
  }) do
    local path, want = case[1], case[2]
    local ok, err = core.save(path, core.list())
    local sok, serr = todo.session("w"):save(path)
    T.eq(ok, nil, path .. ": core.save")
    T.eq(err, path .. ": " .. want, path .. ": core.save's message")
    T.eq(sok, nil, path .. ": session:save")
    T.eq(serr, path .. ": " .. want, path .. ": session:save's message")
  end
  T.same(H.names(dir), { "a-dir", "plain-file" }, "what the directory holds")
  T.same(H.names(dir .. "/a-dir"), {}, "what a-dir holds")
end)

T.test("wrong argument types are Lua errors naming the function", function()
  local path = T.tempdir() .. "/x.json"
  T.raises(function()
    core.save(nil, core.list())
  end, "rpiv_todo.core.save: path: expected a string, got nil")
  T.raises(function()
    core.save(path)
  end, "rpiv_todo.core.save: state: expected a list, a state table or its JSON text, got nil")
  T.raises(function()
    core.save(path, { tasks = 5 })
  end, "rpiv_todo.core.save: tasks: expected an array, got number 5")
  -- What core.list refuses is never written (so never read back as garbage).
  T.raises(function()
    core.save(path, {
      tasks = { { id = 1, subject = "a", status = "pending" }, { id = 1, subject = "b", status = "pending" } },
      nextId = 2,
    })
  end, "rpiv_todo.core.save: state: tasks[2].id: #1 is already the id of tasks[1]")
  T.eq(io.open(path, "rb"), nil, "nothing written")
  T.raises(function()
    core.load(42)
  end, "rpiv_todo.core.load: path: expected a string, got integer")
end)

T.test("set_locale with persist writes the choice and keeps other programs' keys", function()
  local config = T.tempdir() .. "/config"
  local file = config .. "/rpiv-i18n/locale.json"
  local function set(code)
    H.env(config)
    local ok, err = todo.set_locale(code, { persist = true })
    return { ok = ok or false, err = err or false, locale = todo.locale(), file = i18n.locale_file() }
  end
  -- No file, no directory yet: both are created.
  T.same(set("de"), { ok = true, err = false, locale = "de", file = file }, "de")
  T.eq(T.read(file), '{\n  "locale": "de"\n}\n', "the file")
  -- Another program's keys survive, in their order.
  T.write(file, '{"theme": "dark", "locale": "de", "plugins": {"x": [1, 2]}}')
  T.eq(set("pt-BR").ok, true, "pt-BR")
  local text = T.read(file)
  T.same(json.decode(text), { theme = "dark", locale = "pt-BR", plugins = { x = { 1, 2 } } }, "the keys")
  T.ok(text:find("theme", 1, true) < text:find("locale", 1, true), "theme before locale: " .. text)
  T.ok(text:find("locale", 1, true) < text:find("plugins", 1, true), "locale before plugins: " .. text)
  -- A new start reads the choice back through the locale chain (over LANG).
  H.env(config, "ru_RU.UTF-8")
  T.eq(i18n.locale(), "pt-BR", "read back")
  -- An unknown code: refused, the locale stays, the file is byte for byte the same.
  T.same(set("xx"), {
    ok = false,
    err = 'unknown locale "xx" (expected one of de, en, es, fr, pt, pt-BR, ru, uk, zh)',
    locale = "pt-BR",
    file = file,
  }, "xx")
  T.eq(T.read(file), text, "the file after xx")
  T.same(H.names(config .. "/rpiv-i18n"), { "locale.json" }, "no temporary file left")
end)

T.test("set_locale without persist writes nothing, and a bad option raises", function()
  local dir = T.tempdir()
  H.env(dir)
  T.eq(todo.set_locale("fr"), true, "fr")
  T.eq(todo.set_locale("es", { persist = false }), true, "es")
  T.raises(function()
    todo.set_locale("de", { persist = "yes" })
  end, "(rpiv_todo) set_locale.persist: expected a boolean")
  T.raises(function()
    todo.set_locale("de", { save = true })
  end, "(rpiv_todo) set_locale.save: unknown option (expected persist)")
  T.eq(todo.locale(), "es", "the locale")
  T.same(H.names(dir), {}, "nothing written")
end)

T.test("a locale file that is not an object is left as it is", function()
  local dir = T.tempdir()
  local file = dir .. "/rpiv-i18n/locale.json"
  T.sh("mkdir -p '" .. dir .. "/rpiv-i18n'")
  T.write(file, "de\n")
  H.env(dir)
  local ok, err = todo.set_locale("uk", { persist = true })
  T.eq(ok, nil, "ok")
  T.eq(err, file .. ": invalid JSON (expected value at line 1 column 1); left as it is", "the message")
  T.eq(todo.locale(), "uk", "the locale")
  T.eq(T.read(file), "de\n", "the file")
end)

T.test("set_locale writes through a dangling link and refuses a loop", function()
  local dir = T.tempdir()
  local conf = dir .. "/rpiv-i18n"
  T.sh("mkdir -p '" .. conf .. "' '" .. dir .. "/dotfiles'")
  -- A dotfiles link whose target does not exist yet.
  T.sh("ln -s '" .. dir .. "/dotfiles/locale.json' '" .. conf .. "/locale.json'")
  local function set(code)
    H.env(dir)
    local ok, err = todo.set_locale(code, { persist = true })
    return { ok = ok or false, err = err and err:sub(#dir + 2) or false }
  end
  T.same(set("de"), { ok = true, err = false }, "de")
  T.ok(H.is_link(conf .. "/locale.json"), "the link stays a link")
  T.eq(T.read(dir .. "/dotfiles/locale.json"), '{\n  "locale": "de"\n}\n', "written through the link")
  -- A loop: refused, the links stay.
  T.sh("rm '" .. conf .. "/locale.json'")
  T.sh("ln -s '" .. conf .. "/other.json' '" .. conf .. "/locale.json'")
  T.sh("ln -s '" .. conf .. "/locale.json' '" .. conf .. "/other.json'")
  T.same(set("fr"), {
    ok = false,
    err = "rpiv-i18n/locale.json: cannot read: a symbolic link that never reaches a file (a loop, or too many links)",
  }, "fr")
  T.ok(H.is_link(conf .. "/locale.json"), "locale.json stays a link")
  T.ok(H.is_link(conf .. "/other.json"), "other.json stays a link")
end)

T.finish("store_spec")
