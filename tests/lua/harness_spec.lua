-- tests/lua/harness_spec.lua: the test harness (tests/harness.lua) itself. A failed check
-- must say what differed (expected, then got, and where), a failing check must not stop
-- the others, and T.finish must raise exactly when something failed or nothing ran.
--   luajit tests/lua/harness_spec.lua    (also lua5.1, lua5.4; from the repository root)

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local H = {}

-- The message a check raises, or nil when it passed.
function H.message(check, ...)
  local ok, err = pcall(check, ...)
  if ok then
    return nil
  end
  return tostring(err)
end

-- A fresh harness whose output goes to a buffer: returns it and a function that
-- returns everything written so far.
function H.captured()
  local inner = dofile(T.root() .. "/tests/harness.lua")
  local buffer = {}
  local sink = {
    write = function(self, ...)
      for i = 1, select("#", ...) do
        buffer[#buffer + 1] = tostring((select(i, ...)))
      end
      return self
    end,
    flush = function() end,
  }
  -- luacheck: push ignore 122 (io.stdout is replaced for the inner harness's output)
  local function run(fn)
    local real = io.stdout
    io.stdout = sink
    local ok, err = pcall(fn)
    io.stdout = real
    return ok, err
  end
  -- luacheck: pop
  return inner, run, function()
    return table.concat(buffer)
  end
end

T.test("eq on unequal strings shows expected, got and the first differing byte", function()
  local msg = H.message(T.eq, "a\nb", "a\nc", "the text")
  T.contains(msg, "the text (first difference at byte 3)", "message")
  T.contains(msg, 'expected: "a\\nc"', "message")
  T.contains(msg, 'got: "a\\nb"', "message")
end)

T.test("eq passes on equal values and fails on two distinct tables, saying so", function()
  T.eq(H.message(T.eq, 3, 3), nil, "equal numbers")
  local msg = H.message(T.eq, {}, {})
  T.contains(msg, "two distinct tables", "message")
end)

T.test("same names the first path where two tables differ", function()
  local got = { tasks = { { id = 1, status = "pending" }, { id = 2, status = "x" } }, nextId = 3 }
  local want = { tasks = { { id = 1, status = "pending" }, { id = 2, status = "completed" } }, nextId = 3 }
  local msg = H.message(T.same, got, want, "snapshot")
  T.contains(msg, "snapshot at .tasks[2].status", "message")
  T.contains(msg, 'expected: "completed"', "message")
  T.contains(msg, 'got: "x"', "message")
end)

T.test("same reports a key only the got side has, and a missing one", function()
  T.contains(H.message(T.same, { a = 1, b = 2 }, { a = 1 }), "at .b\n    expected: nil\n         got: 2", "extra")
  T.contains(H.message(T.same, { a = 1 }, { a = 1, b = 2 }), "at .b\n    expected: 2\n         got: nil", "missing")
  T.contains(H.message(T.same, { 1, 2 }, { 1, 2, 3 }), "at [3]", "array tail")
end)

T.test("same accepts equal contents, NaN included, and cycles", function()
  local a, b = { x = 0 / 0, list = { 1, "two" } }, { x = 0 / 0, list = { 1, "two" } }
  a.self, b.self = a, b
  T.eq(H.message(T.same, a, b), nil, "equal tables")
end)

T.test("raises fails when nothing is raised or the text does not match", function()
  T.contains(H.message(T.raises, function() end, "boom"), 'expected an error containing "boom", got none', "none")
  local msg = H.message(T.raises, function()
    error("bang", 0)
  end, "boom")
  T.contains(msg, 'expected: an error containing "boom"', "message")
  T.contains(msg, 'got: "bang"', "message")
  T.eq(
    T.raises(function()
      error("a boom here", 0)
    end, "boom"),
    "a boom here",
    "returned error text"
  )
end)

T.test("contains and ok say what they got", function()
  T.contains(
    H.message(T.contains, "abc", "x", "label"),
    'label\n    expected: text containing "x"\n         got: "abc"',
    "contains"
  )
  T.contains(H.message(T.ok, nil, "a flag"), "a flag\n         got: nil", "ok")
end)

T.test("a failing check is reported and the next one still runs", function()
  local inner, run, output = H.captured()
  local ran_second = false
  run(function()
    inner.test("first", function()
      inner.eq(1, 2, "one")
    end)
    inner.test("second", function()
      ran_second = true
    end)
  end)
  T.eq(ran_second, true, "second check ran")
  T.contains(output(), "not ok - first\n", "output")
  T.contains(output(), "expected: 2\n         got: 1", "output")
  T.contains(output(), "ok - second\n", "output")
  local passed, failed = inner.counts()
  T.eq(passed, 1, "passed")
  T.eq(failed, 1, "failed")
end)

T.test("finish raises when a check failed, passes when all passed, raises when none ran", function()
  local failing, run = H.captured()
  local ok, err = run(function()
    failing.test("bad", function()
      error("no", 0)
    end)
    failing.finish("inner")
  end)
  T.eq(ok, false, "finish after a failure")
  T.eq(tostring(err), "inner: 1 of 1 checks failed", "error")

  local passing, run2 = H.captured()
  T.eq((run2(function()
    passing.test("good", function() end)
    passing.finish("inner")
  end)), true, "finish after passes")

  local empty, run3 = H.captured()
  local ok3, err3 = run3(function()
    empty.finish("inner")
  end)
  T.eq(ok3, false, "finish with no check")
  T.eq(tostring(err3), "inner: no check ran", "error")
end)

T.test("before_each runs before every check", function()
  local inner, run = H.captured()
  local calls = 0
  run(function()
    inner.before_each(function()
      calls = calls + 1
    end)
    inner.test("a", function() end)
    inner.test("b", function() end)
  end)
  T.eq(calls, 2, "before_each calls")
end)

T.test("fixture paths point inside the repository", function()
  T.eq(T.fixture("schema.json"), T.root() .. "/tests/fixtures/schema.json", "path")
  local lines = T.fixture_lines("sanitize-cases.jsonl", function(text)
    return text
  end)
  T.ok(#lines > 100, "sanitize cases read: " .. #lines)
end)

T.test("tempdir gives a fresh directory that finish removes with what it holds", function()
  local inner, run = H.captured()
  local dir = inner.tempdir()
  local file = io.open(dir .. "/x.txt", "wb")
  T.ok(file ~= nil, "a file can be made in " .. dir)
  file:write("x")
  file:close()
  T.ok(dir ~= inner.tempdir(), "each call a new directory")
  T.eq((run(function()
    inner.test("good", function() end)
    inner.finish("inner")
  end)), true, "finish")
  T.eq(io.open(dir .. "/x.txt", "rb"), nil, "the directory is gone with its file")
end)

T.test("write puts text in a file that read gives back; sh runs a command or names it", function()
  local dir = T.tempdir()
  T.write(dir .. "/a.txt", "one\0two\n")
  T.eq(T.read(dir .. "/a.txt"), "one\0two\n", "read back byte for byte")
  T.write(dir .. "/a.txt", "x")
  T.eq(T.read(dir .. "/a.txt"), "x", "replaced")
  T.raises(function()
    T.write(dir .. "/no/such/dir/b.txt", "x")
  end, "cannot write " .. dir .. "/no/such/dir/b.txt")
  T.sh("mkdir '" .. dir .. "/sub'")
  T.write(dir .. "/sub/c.txt", "c")
  T.eq(T.read(dir .. "/sub/c.txt"), "c", "in the directory sh made")
  T.raises(function()
    T.sh("exit 3")
  end, "command failed: exit 3")
end)

T.finish("harness_spec")
