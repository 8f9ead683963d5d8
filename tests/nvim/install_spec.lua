-- tests/nvim/install_spec.lua: the installer's parts that need no server, in both Neovims:
-- SHA-256 of a file against the FIPS 180-2 examples, the base URL's precedence, the release layout,
-- this machine's platform, option errors, :TodosInstall, and the loader with a module
-- installed in <plugin>/lib (loaded by its versioned name; another version refused with
-- one message naming both versions and :TodosInstall), and :checkhealth's install lines.
-- The end-to-end installs (a local release on 127.0.0.1) are in tests/install/.

local N = dofile(os.getenv("RPIV_ROOT") .. "/tests/nvim/helpers.lua")
local T = N.T
local H = {}

H.root = T.root()
H.version = T.cargo_version()
local install = require("rpiv_todo.nvim.install")

-- A file holding `data`, for sha256_file.
function H.file_of(data)
  local path = vim.fn.tempname()
  local file = assert(io.open(path, "wb"))
  file:write(data)
  file:close()
  return path
end

T.test("sha256_file matches the FIPS 180-2 examples, and the core on bytes with NUL", function()
  local cases = {
    { "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "empty" },
    { "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "abc" },
    {
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
      "two blocks",
    },
    { string.rep("a", 1000000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0", "a million a" },
  }
  for _, case in ipairs(cases) do
    local path = H.file_of(case[1])
    T.same({ install.sha256_file(path) }, { case[2] }, case[3])
    os.remove(path)
  end
  -- Binary bytes (what a module is), against the core's own SHA-256 (src/naming.rs).
  local bytes = {}
  for i = 0, 4095 do
    bytes[#bytes + 1] = string.char((i * 37) % 256)
  end
  local data = "\0\0ELF" .. table.concat(bytes) .. "\0"
  local path = H.file_of(data)
  T.eq(install.sha256_file(path), require("rpiv_todo.core").sha256(data), "binary with NUL bytes")
  os.remove(path)
end)

T.test("sha256_file: a missing file, and no SHA-256 program on PATH, each say so", function()
  local missing = vim.fn.tempname()
  local hash, err = install.sha256_file(missing)
  T.eq(hash, nil, "no hash for a missing file")
  T.contains(tostring(err), "could not hash " .. missing, "names the file")
  local path = H.file_of("abc")
  local saved = vim.env.PATH
  vim.env.PATH = vim.fn.tempname()
  hash, err = install.sha256_file(path)
  vim.env.PATH = saved
  os.remove(path)
  T.eq(hash, nil, "no hash without a program")
  T.eq(err, "no SHA-256 program on PATH (sha256sum, shasum or certutil): install coreutils", "what is missing")
end)

T.test("the deprecated rpiv_todo.install is the same table", function()
  T.eq(require("rpiv_todo.install"), install, "alias")
end)

T.test("the Lua scripts' version is Cargo.toml's", function()
  T.eq(require("rpiv_todo.installed").VERSION, H.version, "installed.VERSION")
  T.eq(require("rpiv_todo").version, H.version, "rpiv_todo.version")
end)

T.test("base URL: the option, else RPIV_TODO_BASE_URL, else the project's releases", function()
  local saved = vim.env.RPIV_TODO_BASE_URL
  vim.env.RPIV_TODO_BASE_URL = nil
  T.same({ install.base_url() }, { "https://github.com/rpiv-todo/rpiv_todo/releases/download", "default" }, "default")
  vim.env.RPIV_TODO_BASE_URL = "http://mirror.example/rel/"
  T.same({ install.base_url() }, { "http://mirror.example/rel", "RPIV_TODO_BASE_URL" }, "environment")
  T.same(
    { install.base_url({ base_url = "file:///srv/rel" }) },
    { "file:///srv/rel", "option base_url" },
    "option first"
  )
  vim.env.RPIV_TODO_BASE_URL = saved
end)

T.test("release layout: <base_url>/v<version>/rpiv_todo_core-<triple>.<ext>", function()
  local target = { triple = "aarch64-apple-darwin", ext = "dylib" }
  T.eq(install.asset_name(target), "rpiv_todo_core-aarch64-apple-darwin.dylib", "asset")
  T.eq(
    install.asset_url("https://h/r", "1.2.3", install.asset_name(target)),
    "https://h/r/v1.2.3/rpiv_todo_core-aarch64-apple-darwin.dylib",
    "url"
  )
end)

T.test("this machine: Linux x86_64 with glibc, the version ldd reports", function()
  local p = install.platform()
  local ldd = vim.fn.systemlist({ "ldd", "--version" })[1] or ""
  T.eq(p.os, "Linux", "os")
  T.eq(p.arch, "x86_64", "arch")
  T.eq(p.libc, "gnu", "libc")
  T.eq(p.libc_version, ldd:match("(%d+%.%d+)%s*$"), "glibc version (ldd: " .. ldd .. ")")
  T.eq(p.target and p.target.triple, "x86_64-unknown-linux-gnu", "triple")
end)

T.test("run() names a bad option", function()
  T.raises(function()
    install.run({ base_url = 1 })
  end, "(rpiv_todo) install: base_url: expected a string, got number 1", "base_url")
  T.raises(function()
    install.run({ from_source = "yes" })
  end, '(rpiv_todo) install: from_source: expected "auto", true or false, got string "yes"', "from_source")
  T.raises(
    function()
      install.run({ forse = true })
    end,
    "(rpiv_todo) install: forse: unknown option (expected base_url, from_source, force, server, quiet)",
    "unknown key"
  )
  T.raises(function()
    install.run({ quiet = "yes" })
  end, '(rpiv_todo) install: quiet: expected a boolean, got string "yes"', "quiet")
  T.raises(
    function()
      install.run("fast")
    end,
    "(rpiv_todo) install: expected a table of options { base_url, from_source, force, server, quiet }",
    "not a table"
  )
end)

T.test(":TodosInstall is defined with its completion, and refuses a bad argument", function()
  vim.g.loaded_rpiv_todo = nil
  vim.cmd("runtime plugin/rpiv_todo.lua")
  T.eq(vim.fn.exists(":TodosInstall"), 2, "command exists")
  T.eq(table.concat(vim.fn.getcompletion("TodosInstall ", "cmdline"), ","), "download,source", "completion")
  local notes = {}
  local saved = vim.notify
  vim.notify = function(msg, level)
    notes[#notes + 1] = { msg = msg, level = level }
  end
  vim.cmd("TodosInstall bogus")
  vim.notify = saved
  T.eq(#notes, 1, "one message")
  T.eq(notes[1].msg, "(rpiv_todo) :TodosInstall takes download or source, not bogus", "message")
  T.eq(notes[1].level, vim.log.levels.ERROR, "level")
end)

-- A copy of the Lua scripts in `dir` (no core.so), like a fresh clone.
function H.copy_scripts(dir)
  local from = H.root .. "/lua/rpiv_todo/"
  for _, file in ipairs(vim.fn.glob(from .. "**/*.lua", false, true)) do
    local target = dir .. "/lua/rpiv_todo/" .. file:sub(#from + 1)
    vim.fn.mkdir(vim.fn.fnamemodify(target, ":h"), "p")
    vim.fn.writefile(vim.fn.readfile(file, "b"), target, "b")
  end
end

-- A plugin folder whose lib/ holds the real build under a versioned name, with a record
-- saying `version`.
function H.installed_copy(version)
  local dir = vim.fn.resolve(vim.fn.tempname())
  H.copy_scripts(dir)
  vim.fn.mkdir(dir .. "/lib", "p")
  local file = "rpiv_todo_core-" .. version .. "-0123456789abcdef.so"
  vim.fn.writefile(vim.fn.readfile(H.root .. "/lua/rpiv_todo/core.so", "b"), dir .. "/lib/" .. file, "b")
  vim.fn.writefile({
    "version=" .. version,
    "file=" .. file,
    "source=downloaded",
    "url=https://example.invalid/v" .. version .. "/rpiv_todo_core-x86_64-unknown-linux-gnu.so",
    "triple=x86_64-unknown-linux-gnu",
    "flavour=luajit",
  }, dir .. "/lib/installed.txt")
  return dir, dir .. "/lib/" .. file
end

T.test("the loader finds the installed module by its versioned name", function()
  local dir, path = H.installed_copy(H.version)
  N.isolated(dir, function()
    local result = require("rpiv_todo").session("lib"):execute({ action = "create", subject = "From lib" })
    T.eq(result.content[1].text, "Created #1: From lib (pending)", "tool call")
    T.eq(require("rpiv_todo.installed").loaded.path, path, "loaded from lib/")
    T.eq(package.loaded["rpiv_todo.core"].version, H.version, "core version")
  end)
  vim.fn.delete(dir, "rf")
end)

T.test(":checkhealth shows the triple, the libc, the module's path and version, how it came, the base URL", function()
  local dir, path = H.installed_copy(H.version)
  local text
  N.isolated(dir, function()
    -- Nothing loaded yet: the health check finds the installed module as the loader does.
    vim.cmd("checkhealth rpiv_todo")
    text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
    vim.cmd("bwipeout!")
  end)
  vim.fn.delete(dir, "rf")
  T.contains(text, "platform: Linux x86_64, libc glibc", "libc")
  T.contains(text, "triple x86_64-unknown-linux-gnu, asset rpiv_todo_core-x86_64-unknown-linux-gnu.so", "triple")
  T.contains(
    text,
    "installed module: "
      .. path
      .. ", version "
      .. H.version
      .. ", downloaded from https://example.invalid/v"
      .. H.version
      .. "/rpiv_todo_core-x86_64-unknown-linux-gnu.so",
    "module"
  )
  T.contains(text, "base URL: ", "base URL")
  T.contains(text, "loaded: " .. path, "what this Neovim loaded")
  T.contains(text, "version " .. H.version .. " (the Lua scripts' version is " .. H.version .. ")", "library")
  T.eq(text:find("ERROR", 1, true), nil, "no ERROR in:\n" .. text)
end)

T.test(":checkhealth warns of an install.lua left from an older copy of the plugin", function()
  local old = vim.fn.tempname()
  vim.fn.mkdir(old .. "/lua/rpiv_todo", "p")
  vim.fn.writefile({ "return {}" }, old .. "/lua/rpiv_todo/install.lua")
  local rtp = vim.o.runtimepath
  vim.o.runtimepath = rtp .. "," .. old
  vim.cmd("checkhealth rpiv_todo")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  vim.cmd("bwipeout!")
  vim.o.runtimepath = rtp
  vim.cmd("checkhealth rpiv_todo")
  local clean = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  vim.cmd("bwipeout!")
  vim.fn.delete(old, "rf")
  T.contains(text, "left from an older copy of the plugin: " .. old .. "/lua/rpiv_todo/install.lua", "the file named")
  T.contains(text, "delete it: the installer is lua/rpiv_todo/nvim/install/ now", "what to do")
  T.eq(clean:find("older copy", 1, true), nil, "no warning without the file")
end)

T.test("an installed module of another version: one message with both versions and :TodosInstall", function()
  local dir = H.installed_copy("0.0.9")
  local notes = {}
  local saved = vim.notify
  vim.notify = function(msg, level)
    notes[#notes + 1] = { msg = msg, level = level }
  end
  local ok, err = pcall(N.isolated, dir, function()
    local todo = require("rpiv_todo")
    local used, msg = pcall(function()
      return todo.session("x"):execute({ action = "list" })
    end)
    T.eq(used, false, "no tool call with a stale module")
    T.contains(tostring(msg), ":TodosInstall", "the call's error names the fix")
    T.eq(require("rpiv_todo.installed").loaded, nil, "the stale module was not loaded")
  end)
  vim.notify = saved
  vim.fn.delete(dir, "rf")
  if not ok then
    error(err, 0)
  end
  T.eq(#notes, 1, "one message")
  local msg = notes[1] and notes[1].msg or ""
  T.contains(msg, "is version 0.0.9", "the module's version")
  T.contains(msg, "the Lua scripts are version " .. H.version, "the scripts' version")
  T.contains(msg, "Run :TodosInstall", "the fix")
end)

T.finish()
