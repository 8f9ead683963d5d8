-- tests/harness.lua: the one test harness of every Lua spec (tests/lua, tests/loader,
-- tests/nvim). Plain Lua 5.1, 5.4 and LuaJIT, and inside Neovim through
-- scripts/nvim-runner.lua. A spec loads a fresh copy with
--
--   local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
--
-- then names its checks with T.test(name, fn) and ends with T.finish(). Output is
-- TAP-like on stdout ("ok - name", "not ok - name" with what differed, expected then got);
-- a check that fails does not stop the others. The one exit convention: T.finish() raises
-- when anything failed, so `lua5.4 spec.lua` exits 1 and the Neovim runner quits with an
-- error status, and it returns normally when everything passed.
--
-- Run from a plain interpreter without LUA_PATH/LUA_CPATH (by hand), the harness puts the
-- repository's lua/ (scripts and lua/rpiv_todo/core.so) and tests/lua/ on the search paths;
-- scripts/test.sh sets both paths itself, to each flavour's own build.

local M = {}
local H = { passed = 0, failed = 0, before = nil, max_show = 600 }

-- ---------------------------------------------------------------------------
-- Where things are
-- ---------------------------------------------------------------------------

-- The repository root: RPIV_ROOT, else two levels above this file.
H.root = os.getenv("RPIV_ROOT")
if not H.root or H.root == "" then
  local source = debug.getinfo(1, "S").source
  local dir = source:match("^@(.*)/tests/harness%.lua$")
  H.root = (dir == nil or dir == "") and "." or dir
end

H.in_nvim = type(vim) == "table" and type(vim.api) == "table"

if not H.in_nvim and not os.getenv("LUA_PATH") then
  package.path = H.root
    .. "/lua/?.lua;"
    .. H.root
    .. "/lua/?/init.lua;"
    .. H.root
    .. "/tests/lua/?.lua;"
    .. package.path
end
if not H.in_nvim and not os.getenv("LUA_CPATH") then
  package.cpath = H.root .. "/lua/?.so;" .. package.cpath
end

---The repository root (RPIV_ROOT, or found from this file's own path).
---@return string
function M.root()
  return H.root
end

H.tempdirs = {}

---A fresh scratch directory (POSIX shell: these specs run on Linux and macOS), removed
---with everything in it when the spec calls T.finish().
---@return string path
function M.tempdir()
  local path = os.tmpname()
  os.remove(path)
  assert(os.execute("mkdir -p '" .. path .. "'"))
  H.tempdirs[#H.tempdirs + 1] = path
  return path
end

---True inside Neovim.
---@return boolean
function M.in_nvim()
  return H.in_nvim
end

---The path of a fixture file: tests/fixtures/<name> (the recorded behaviour of the
---TypeScript original, rpiv-todo; see tests/fixtures/README.md).
---@param name string
---@return string
function M.fixture(name)
  return H.root .. "/tests/fixtures/" .. name
end

---The whole content of a file (binary mode), or an error naming the path.
---@param path string
---@return string
function M.read(path)
  local file, err = io.open(path, "rb")
  if not file then
    error("cannot read " .. path .. ": " .. tostring(err), 2)
  end
  local text = file:read("*a")
  file:close()
  return text
end

---Write `text` to `path` (binary mode), replacing what was there; an error names the path.
---@param path string
---@param text string
function M.write(path, text)
  local file, err = io.open(path, "wb")
  if not file then
    error("cannot write " .. path .. ": " .. tostring(err), 2)
  end
  file:write(text)
  file:close()
end

---Run a shell command (mkdir, mkfifo, ln -s …); an error names it when it fails.
---@param cmd string
function M.sh(cmd)
  local ok = os.execute(cmd)
  -- Lua 5.1 and LuaJIT without 5.2 compatibility return the status code, 5.2+ true/nil.
  if ok ~= true and ok ~= 0 then
    error("command failed: " .. cmd, 2)
  end
end

---Every non-blank line of a JSONL fixture, each passed through `decode`.
---@param name string file name under tests/fixtures/
---@param decode fun(text: string): any
---@return any[]
function M.fixture_lines(name, decode)
  local out = {}
  for line in (M.read(M.fixture(name)) .. "\n"):gmatch("([^\n]*)\n") do
    if line:find("%S") then
      out[#out + 1] = decode(line)
    end
  end
  return out
end

---The crate version from Cargo.toml's [package] table.
---@return string|nil
function M.cargo_version()
  local file = io.open(H.root .. "/Cargo.toml", "r")
  if not file then
    return nil
  end
  local in_package, version = false, nil
  for line in file:lines() do
    local section = line:match("^%[(.-)%]")
    if section then
      in_package = section == "package"
    elseif in_package and not version then
      version = line:match('^version%s*=%s*"([^"]+)"')
    end
  end
  file:close()
  return version
end

-- ---------------------------------------------------------------------------
-- Showing values
-- ---------------------------------------------------------------------------

H.ESCAPES = { ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t", ['"'] = '\\"', ["\\"] = "\\\\" }

function H.quote(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return H.ESCAPES[c] or string.format("\\%03d", c:byte())
  end) .. '"'
end

function H.sorted_keys(t)
  local keys = {}
  for k in pairs(t) do
    keys[#keys + 1] = k
  end
  table.sort(keys, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then
      return ta < tb
    end
    if ta == "number" or ta == "string" then
      return a < b
    end
    return tostring(a) < tostring(b)
  end)
  return keys
end

function H.show(v, depth, seen)
  local kind = type(v)
  if kind == "string" then
    return H.quote(v)
  elseif kind ~= "table" then
    return tostring(v)
  end
  depth, seen = depth or 0, seen or {}
  if seen[v] then
    return "<cycle>"
  end
  if depth >= 5 then
    return "{...}"
  end
  seen[v] = true
  local parts, n = {}, #v
  for i = 1, n do
    parts[#parts + 1] = H.show(v[i], depth + 1, seen)
  end
  for _, k in ipairs(H.sorted_keys(v)) do
    local array_key = type(k) == "number" and k >= 1 and k <= n and k % 1 == 0
    if not array_key then
      local key = (type(k) == "string" and k:match("^[%a_][%w_]*$")) and k or ("[" .. H.show(k, depth + 1, seen) .. "]")
      parts[#parts + 1] = key .. " = " .. H.show(v[k], depth + 1, seen)
    end
  end
  seen[v] = nil
  return "{ " .. table.concat(parts, ", ") .. " }"
end

---A value as readable text: strings quoted with escapes, tables as Lua literals with
---sorted keys (long output is cut).
---@param v any
---@return string
function M.show(v)
  local s = H.show(v)
  if #s > H.max_show then
    s = s:sub(1, H.max_show) .. "... (" .. #s .. " bytes)"
  end
  return s
end

function H.label(what, default)
  return what and tostring(what) or default
end

-- Raise "<what>\n    expected: <want>\n         got: <got>" from the caller's caller;
-- `want_text` is already readable text (a description such as `text containing "x"`).
function H.fail(what, want_text, got, level)
  error(string.format("%s\n    expected: %s\n         got: %s", what, want_text, M.show(got)), level + 1)
end

-- A path step: `.name` for identifier keys, `[key]` otherwise.
function H.step(k)
  if type(k) == "string" and k:match("^[%a_][%w_]*$") then
    return "." .. k
  end
  return "[" .. H.show(k) .. "]"
end

-- Where two values first differ: nil when equal, else the path and both sides there.
function H.diff(got, want, path, seen)
  if type(got) ~= type(want) then
    return path, want, got
  end
  if type(got) ~= "table" then
    if got == want or (got ~= got and want ~= want) then
      return nil
    end
    return path, want, got
  end
  if rawequal(got, want) then
    return nil
  end
  seen = seen or {}
  if seen[got] then
    return nil
  end
  seen[got] = true
  for _, k in ipairs(H.sorted_keys(want)) do
    local p, w, g = H.diff(got[k], want[k], path .. H.step(k), seen)
    if p then
      return p, w, g
    end
  end
  for _, k in ipairs(H.sorted_keys(got)) do
    if want[k] == nil then
      return path .. H.step(k), nil, got[k]
    end
  end
  return nil
end

-- ---------------------------------------------------------------------------
-- Checks
-- ---------------------------------------------------------------------------

---Fail unless `got == want` (plain equality: two distinct tables differ; T.same
---compares contents).
---@param got any
---@param want any
---@param what? string what was compared
function M.eq(got, want, what)
  if got ~= want then
    H.fail(H.label(what, "values differ") .. H.hint(got, want), M.show(want), got, 2)
  end
end

-- Where two unequal strings part (long texts are compared byte for byte), or a note
-- that two tables are distinct objects.
function H.hint(got, want)
  if type(got) == "string" and type(want) == "string" then
    local i = 1
    while i <= #got and got:byte(i) == want:byte(i) do
      i = i + 1
    end
    return " (first difference at byte " .. i .. ")"
  elseif type(got) == "table" and type(want) == "table" then
    return " (two distinct tables; T.same compares contents)"
  end
  return ""
end

---Fail unless `got` and `want` have the same contents, compared key by key both ways
---(tables deep, NaN equal to NaN); the message names the first path that differs.
---@param got any
---@param want any
---@param what? string
function M.same(got, want, what)
  local path, w, g = H.diff(got, want, "")
  if path then
    local where = path == "" and "" or (" at " .. path)
    local message = string.format(
      "%s%s\n    expected: %s\n         got: %s",
      H.label(what, "values differ"),
      where,
      M.show(w),
      M.show(g)
    )
    if path ~= "" then
      message = message .. "\n  whole got: " .. M.show(got)
    end
    error(message, 2)
  end
end

---Fail unless `cond` is true (any value but false and nil).
---@param cond any
---@param what? string
function M.ok(cond, what)
  if not cond then
    error(H.label(what, "expected a true value") .. "\n         got: " .. M.show(cond), 2)
  end
end

---Fail unless the plain text `needle` occurs in the string `hay`.
---@param hay any
---@param needle string
---@param what? string
function M.contains(hay, needle, what)
  if type(hay) ~= "string" or not hay:find(needle, 1, true) then
    H.fail(H.label(what, "text"), "text containing " .. H.quote(needle), hay, 2)
  end
end

---Fail unless `fn()` raises an error whose text contains `needle`; returns that text.
---@param fn fun()
---@param needle string
---@param what? string
---@return string
function M.raises(fn, needle, what)
  local ok, err = pcall(fn)
  if ok then
    error(H.label(what, "call") .. ": expected an error containing " .. H.quote(needle) .. ", got none", 2)
  end
  err = tostring(err)
  if not err:find(needle, 1, true) then
    H.fail(H.label(what, "error"), "an error containing " .. H.quote(needle), err, 2)
  end
  return err
end

-- ---------------------------------------------------------------------------
-- Running
-- ---------------------------------------------------------------------------

---Run `fn` before every later T.test (resetting shared state, say).
---@param fn fun()
function M.before_each(fn)
  H.before = fn
end

---Run one named check. An error inside it (a failed T.eq, or any other) is reported
---with its message and counted; the spec goes on with the next check.
---@param name string
---@param fn fun()
function M.test(name, fn)
  local ok, err = pcall(function()
    if H.before then
      H.before()
    end
    fn()
  end)
  if ok then
    H.passed = H.passed + 1
    io.stdout:write("ok - ", name, "\n")
  else
    H.failed = H.failed + 1
    io.stdout:write("not ok - ", name, "\n    ", tostring(err), "\n")
  end
end

---Print a note line (not a check).
---@param text string
function M.note(text)
  io.stdout:write("# ", text, "\n")
end

---The counts so far.
---@return integer passed, integer failed
function M.counts()
  return H.passed, H.failed
end

---Print the tally; raise when any check failed (the spec's exit status), or when no
---check ran at all (a spec that tests nothing proves nothing).
---@param name? string the spec's name for the tally line (default: its file name)
function M.finish(name)
  for _, dir in ipairs(H.tempdirs) do
    os.execute("rm -rf '" .. dir .. "'")
  end
  H.tempdirs = {}
  if not name then
    local source = debug.getinfo(2, "S").source
    name = source:match("([^/\\]+)%.lua$") or "spec"
  end
  local runtime = _VERSION .. ((type(jit) == "table" and jit.version) and (" / " .. jit.version) or "")
  io.stdout:write(string.format("# %s (%s): %d passed, %d failed\n", name, runtime, H.passed, H.failed))
  io.stdout:flush()
  if H.failed > 0 then
    error(string.format("%s: %d of %d checks failed", name, H.failed, H.passed + H.failed), 0)
  end
  if H.passed == 0 then
    error(name .. ": no check ran", 0)
  end
end

return M
