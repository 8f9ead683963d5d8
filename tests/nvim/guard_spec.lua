-- tests/nvim/guard_spec.lua: the guarded load of the native module, seen from Neovim.
-- A copy of the Lua scripts on a temporary 'runtimepath' without core.so must fail with
-- a message naming the build step; a core reporting another version must be refused and
-- the message must say to rebuild. In-process: the repository leaves 'runtimepath' and
-- package.loaded for the duration, and both come back afterwards.

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local H = {}

H.root = T.root()
H.version = T.cargo_version()

---Copy lua/rpiv_todo/*.lua into `dir`/lua/rpiv_todo/.
function H.copy_scripts(dir)
  local dest = dir .. "/lua/rpiv_todo"
  vim.fn.mkdir(dest, "p")
  for _, file in ipairs(vim.fn.glob(H.root .. "/lua/rpiv_todo/*.lua", false, true)) do
    vim.fn.writefile(vim.fn.readfile(file, "b"), dest .. "/" .. vim.fn.fnamemodify(file, ":t"), "b")
  end
  return dest
end

---Run `fn` with only `dir` (and $VIMRUNTIME) on 'runtimepath' and no rpiv_todo module loaded.
function H.isolated(dir, fn)
  local saved_rtp = vim.o.runtimepath
  local saved = {}
  for name, mod in pairs(package.loaded) do
    if name == "rpiv_todo" or name:sub(1, 10) == "rpiv_todo." then
      saved[name] = mod
    end
  end
  for name in pairs(saved) do
    package.loaded[name] = nil
  end
  vim.o.runtimepath = dir .. "," .. vim.env.VIMRUNTIME
  local ok, err = pcall(fn)
  vim.o.runtimepath = saved_rtp
  for name in pairs(package.loaded) do
    if name == "rpiv_todo" or name:sub(1, 10) == "rpiv_todo." then
      package.loaded[name] = nil
    end
  end
  for name, mod in pairs(saved) do
    package.loaded[name] = mod
  end
  if not ok then
    error(err, 0)
  end
end

T.test("the real build loads first (baseline)", function()
  local todo = require("rpiv_todo")
  T.eq(todo.core.version, H.version, "version")
end)

T.test("a missing native library says how to build it", function()
  local dir = vim.fn.tempname()
  H.copy_scripts(dir)
  H.isolated(dir, function()
    local ok, err = pcall(require, "rpiv_todo")
    T.eq(ok, false, "require fails")
    err = tostring(err)
    T.contains(err, "(rpiv_todo) core:", "names the module")
    T.contains(err, "luajit", "names Neovim's flavour")
    T.contains(err, "lua/rpiv_todo/core.so", "names where the library goes")
    T.contains(err, "cargo build --release --lib --no-default-features --features module,", "names the build command")
  end)
  vim.fn.delete(dir, "rf")
end)

T.test("a native library of another version is refused with the rebuild step", function()
  local dir = vim.fn.tempname()
  local dest = H.copy_scripts(dir)
  -- A stand-in core (Lua files are found before .so on 'runtimepath').
  vim.fn.writefile({ 'return { version = "0.0.0-stale", flavour = "luajit" }' }, dest .. "/core.lua")
  H.isolated(dir, function()
    local ok, err = pcall(require, "rpiv_todo")
    T.eq(ok, false, "require fails")
    err = tostring(err)
    T.contains(err, "0.0.0-stale", "names the library's version")
    T.contains(err, H.version, "names the scripts' version")
    T.contains(err, "rebuild", "says to rebuild")
  end)
  vim.fn.delete(dir, "rf")
end)

T.test(":checkhealth reports the missing library as an ERROR with the build step", function()
  local dir = vim.fn.tempname()
  H.copy_scripts(dir)
  H.isolated(dir, function()
    require("rpiv_todo.health") -- from the copy
    vim.cmd("checkhealth rpiv_todo")
    local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
    T.contains(text, "ERROR", "an error is reported")
    T.contains(text, "scripts/build-module.sh luajit", "the advice names the build script")
  end)
  vim.fn.delete(dir, "rf")
end)

---:checkhealth rpiv_todo's text; the health buffer is wiped afterwards.
function H.health()
  vim.cmd("checkhealth rpiv_todo")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  vim.cmd("bwipeout!")
  return text
end

T.test(":checkhealth reports a stale library as an ERROR naming both versions and the rebuild step", function()
  local dir = vim.fn.tempname()
  local dest = H.copy_scripts(dir)
  vim.fn.writefile({ 'return { version = "0.0.0-stale", flavour = "luajit" }' }, dest .. "/core.lua")
  H.isolated(dir, function()
    local text = H.health()
    T.contains(text, "ERROR", "an error is reported")
    T.contains(text, "0.0.0-stale", "the library's version")
    T.contains(text, H.version, "the scripts' version")
    T.contains(text, "scripts/build-module.sh luajit", "the advice names the build script")
  end)
  vim.fn.delete(dir, "rf")
end)

T.test(":checkhealth reports a library built for another Lua as an ERROR", function()
  local dir = vim.fn.tempname()
  local dest = H.copy_scripts(dir)
  vim.fn.writefile({ 'return { version = "' .. H.version .. '", flavour = "lua54" }' }, dest .. "/core.lua")
  H.isolated(dir, function()
    local text = H.health()
    T.contains(text, "ERROR", "an error is reported")
    T.contains(text, "lua54", "names the flavour found")
    T.contains(text, "scripts/build-module.sh luajit", "the advice names the build script")
  end)
  vim.fn.delete(dir, "rf")
end)

T.test(":checkhealth warns about a second core.so on 'runtimepath' and about an unmappable collapse key", function()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. "/lua/rpiv_todo", "p")
  vim.fn.writefile(vim.fn.readfile(H.root .. "/lua/rpiv_todo/core.so", "b"), dir .. "/lua/rpiv_todo/core.so", "b")
  local saved = vim.o.runtimepath
  vim.cmd("set rtp+=" .. vim.fn.fnameescape(dir))
  require("rpiv_todo").setup({ locale = "en", collapse_key = "t" })
  local ok, text = pcall(H.health)
  vim.o.runtimepath = saved
  require("rpiv_todo").setup({ locale = "en" })
  vim.fn.delete(dir, "rf")
  if not ok then
    error(text, 0)
  end
  T.eq(text:find("ERROR", 1, true), nil, "no ERROR in:\n" .. text)
  T.contains(text, "several builds on 'runtimepath'", "second build")
  T.contains(text, dir .. "/lua/rpiv_todo/core.so", "names the second build")
  T.contains(text, 'collapse_key "t" is not mapped', "bare key")
  T.contains(text, "WARN", "warnings are reported")
end)

T.test("the real build still works afterwards", function()
  local todo = require("rpiv_todo")
  local result = todo.session("after"):execute({ action = "create", subject = "Still here" })
  T.eq(result.content[1].text, "Created #1: Still here (pending)", "content")
end)

T.finish()
