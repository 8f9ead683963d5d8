-- tests/install/refuse_spec.lua: downloads that must be refused, each leaving the module
-- and the MCP server installed before (by tests/install/fresh_spec.lua, in the same clone)
-- in place and working: a tampered asset, a wrong .sha256, a truncated download, a server
-- that is down, an asset that does not load, a tampered MCP server, an MCP server that
-- does not run. Then: curl goes through the proxy the environment names, from_source =
-- "auto" falls back to cargo (a stand-in cargo that records its arguments), and a newer
-- release goes to a new file while the loaded one stays as it was. Run by
-- tests/install/install.sh.

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local C = dofile(os.getenv("RPIV_ROOT") .. "/tests/install/common.lua")
local H = {}

H.install = require("rpiv_todo.nvim.install")
H.before = C.record()
H.before_bytes = H.before and C.read(H.before.path)
H.before_record = C.read(C.root .. "/lib/installed.txt")
H.before_server = C.server_record()
H.before_server_record = C.read(C.root .. "/lib/mcp.txt")
H.before_server_bytes = H.before_server and C.read(H.before_server.path)

-- This Neovim loads the installed module first, as a user's would.
T.test("the module installed before loads and answers (baseline)", function()
  T.eq(H.before and H.before.source, "downloaded", "installed by fresh_spec.lua")
  local result = require("rpiv_todo").session("baseline"):execute({ action = "create", subject = "Before" })
  T.eq(result.content[1].text, "Created #1: Before (pending)", "tool reply")
  T.eq(require("rpiv_todo.installed").loaded.path, H.before.path, "loaded from lib/")
end)

---The files in lib/, sorted.
function H.lib_files()
  local files = vim.fn.readdir(C.root .. "/lib")
  table.sort(files)
  return files
end

H.files_before = H.lib_files()

---run() one case: it must fail at `step`, name the URL of `asset` (default the module's),
---and leave everything as it was.
function H.refused(name, base_url, step, detail, asset)
  T.test(name .. " is refused and the earlier module still works", function()
    local ok, err = H.install.run({ base_url = base_url, force = true, from_source = false, quiet = true })
    T.eq(ok, nil, "run() returns nil")
    err = tostring(err)
    T.contains(err, "(rpiv_todo) install: " .. step .. " failed", "the error names the step")
    T.contains(err, "URL: " .. base_url .. "/v" .. C.version .. "/" .. (asset or C.asset), "the error names the URL")
    T.contains(err, "What to do:", "the error says what to do")
    if detail then
      T.contains(err, detail, "the error says why")
    end
    T.eq(C.read(C.root .. "/lib/installed.txt"), H.before_record, "the record is untouched")
    T.eq(C.read(H.before.path), H.before_bytes, "the earlier module is untouched")
    T.eq(C.read(C.root .. "/lib/mcp.txt"), H.before_server_record, "the server's record is untouched")
    T.eq(C.read(H.before_server.path), H.before_server_bytes, "the earlier server is untouched")
    T.same(H.lib_files(), H.files_before, "no file added or left behind in lib/")
    local result = require("rpiv_todo").session(name):execute({ action = "create", subject = "Still" })
    T.eq(result.content[1].text, "Created #1: Still (pending)", "this Neovim's module still answers")
    local text, loaded = C.tool_call_in_new_nvim()
    T.eq(text, "Created #1: Ship it (pending)", "a new Neovim still makes a tool call")
    T.eq(loaded, H.before.path, "with the earlier module")
  end)
end

H.refused("a tampered asset", C.release:gsub("/good$", "/tampered"), "verify", "the .sha256 says")
H.refused("a wrong .sha256", C.release:gsub("/good$", "/badsum"), "verify", "the .sha256 says")
H.refused("a truncated download", C.release:gsub("/good$", "/truncated/good"), "download", "curl exited with")
H.refused("a server that is down", C.dead, "download", "curl exited with 7")
H.refused("an asset that does not load", C.release:gsub("/good$", "/unloadable"), "load", "package.loadlib refused it")
H.refused("a .sha256 that is not a checksum", C.release:gsub("/good$", "/notasum"), "verify", "64 hex digits")
H.refused("a tampered MCP server", C.release:gsub("/good$", "/badserver"), "verify", "the .sha256 says", C.server_asset)
H.refused(
  "an MCP server that does not run",
  C.release:gsub("/good$", "/deadserver"),
  "run the server",
  "--version` exited with",
  C.server_asset
)

T.test("the offline advice names the files and the folder to put them in", function()
  local _, err = H.install.run({ base_url = C.dead, force = true, from_source = false, quiet = true })
  local url = C.dead .. "/v" .. C.version .. "/" .. C.asset
  local server = C.dead .. "/v" .. C.version .. "/" .. C.server_asset
  T.contains(
    tostring(err),
    "download " .. url .. " and " .. url .. ".sha256, and " .. server .. " and " .. server .. ".sha256",
    "all four files"
  )
  T.contains(tostring(err), "put all four in " .. C.root .. "/lib/", "the folder")
end)

T.test("files put in lib/ by hand are used offline, then removed", function()
  local lib = C.root .. "/lib/"
  for _, name in ipairs({ C.asset, C.asset .. ".sha256", C.server_asset, C.server_asset .. ".sha256" }) do
    vim.fn.writefile(vim.fn.readfile(C.dist .. "/" .. name, "b"), lib .. name, "b")
  end
  local ok, err = H.install.run({ base_url = C.dead, force = true, from_source = false, quiet = true })
  T.eq(err, nil, "no error")
  T.eq(ok, true, "installed")
  local record = C.record()
  T.eq(record.source, "copied", "record: source")
  T.eq(record.file, H.before.file, "the same bytes keep the same file")
  T.eq(C.read(record.path), H.before_bytes, "untouched")
  T.eq(vim.fn.filereadable(lib .. C.asset), 0, "the hand-placed asset is gone")
  local server = C.server_record()
  T.eq(server.source, "copied", "mcp.txt: source")
  T.eq(server.file, H.before_server.file, "the same server bytes keep the same file")
  T.eq(vim.fn.filereadable(lib .. C.server_asset), 0, "the hand-placed server is gone")
end)

T.test("curl goes through the proxy the environment names (http_proxy)", function()
  local before = #C.log_lines()
  local host = C.release:match("^(https?://[^/]+)")
  local saved = { http_proxy = vim.env.http_proxy, no_proxy = vim.env.no_proxy, NO_PROXY = vim.env.NO_PROXY }
  vim.env.http_proxy = host
  vim.env.no_proxy = nil
  vim.env.NO_PROXY = nil
  local ok, err = H.install.run({ base_url = "http://release.invalid/good", force = true, quiet = true })
  for k, v in pairs(saved) do
    vim.env[k] = v
  end
  T.eq(err, nil, "no error")
  T.eq(ok, true, "installed through the proxy")
  local lines = C.log_lines()
  T.same({ lines[before + 1], lines[before + 2], lines[before + 3], lines[before + 4] }, {
    "proxy GET /good/v" .. C.version .. "/" .. C.asset .. ".sha256",
    "proxy GET /good/v" .. C.version .. "/" .. C.asset,
    "proxy GET /good/v" .. C.version .. "/" .. C.server_asset .. ".sha256",
    "proxy GET /good/v" .. C.version .. "/" .. C.server_asset,
  }, "all four requests reached the proxy")
  T.eq(C.record().url, "http://release.invalid/good/v" .. C.version .. "/" .. C.asset, "record: url")
end)

-- A stand-in cargo: records its arguments (each run's, then a line "--"), and "builds" by
-- copying the release's module, or its server for `-p rpiv_todo_mcp`, to where cargo
-- would put it.
function H.fake_cargo()
  local bin = vim.fn.tempname()
  vim.fn.mkdir(bin, "p")
  local args = bin .. "/args"
  vim.fn.writefile({
    "#!/bin/sh",
    'printf "%s\\n" "$@" -- >> ' .. vim.fn.shellescape(args),
    "server=",
    'while [ $# -gt 0 ]; do [ "$1" = --target-dir ] && dir=$2; [ "$1" = rpiv_todo_mcp ] && server=1; shift; done',
    'mkdir -p "$dir/release"',
    'if [ -n "$server" ]; then cp '
      .. vim.fn.shellescape(C.dist .. "/" .. C.server_asset)
      .. ' "$dir/release/rpiv_todo_mcp"; else cp '
      .. vim.fn.shellescape(C.dist .. "/" .. C.asset)
      .. ' "$dir/release/librpiv_todo.so"; fi',
  }, bin .. "/cargo")
  vim.fn.setfperm(bin .. "/cargo", "rwxr-xr-x")
  return bin, args
end

T.test('from_source = "auto" builds with cargo when the download fails', function()
  local bin, args = H.fake_cargo()
  local saved = vim.env.PATH
  vim.env.PATH = bin .. ":" .. saved
  local ok, err = H.install.run({ base_url = C.dead, force = true, quiet = true })
  vim.env.PATH = saved
  T.eq(err, nil, "no error")
  T.eq(ok, true, "installed")
  T.eq(C.record().source, "built", "record: source")
  T.eq(C.server_record().source, "built", "mcp.txt: source")
  T.eq(C.read(C.server_record().path), C.read(C.dist .. "/" .. C.server_asset), "the built server is installed")
  T.same(vim.fn.readfile(args), {
    "build",
    "--manifest-path",
    C.root .. "/Cargo.toml",
    "--release",
    "--lib",
    "--no-default-features",
    "--features",
    "module,luajit",
    "--target-dir",
    C.root .. "/target/module-luajit",
    "--",
    "build",
    "--manifest-path",
    C.root .. "/Cargo.toml",
    "--release",
    "-p",
    "rpiv_todo_mcp",
    "--target-dir",
    C.root .. "/target",
    "--",
  }, "what scripts/build-module.sh luajit runs, then the server's build")
  vim.fn.delete(bin, "rf")
end)

T.test("from_source = false never runs cargo", function()
  local bin, args = H.fake_cargo()
  local saved = vim.env.PATH
  vim.env.PATH = bin .. ":" .. saved
  local ok, err = H.install.run({ base_url = C.dead, force = true, from_source = false, quiet = true })
  vim.env.PATH = saved
  T.eq(ok, nil, "fails")
  T.contains(tostring(err), "download failed", "the download's error")
  T.eq(vim.fn.filereadable(args), 0, "cargo did not run")
  vim.fn.delete(bin, "rf")
end)

T.test("without cargo, auto reports the download's error and the missing cargo", function()
  local ok, err = H.install.run({ base_url = C.dead, force = true, quiet = true })
  T.eq(ok, nil, "fails")
  T.eq(vim.fn.executable("cargo"), 0, "no cargo on PATH")
  T.contains(tostring(err), "download failed", "the download's error")
  T.contains(tostring(err), "cargo is not on PATH, so no build from source was tried", "why nothing was built")
end)

T.test(":TodosInstall! download installs from RPIV_TODO_BASE_URL and says to restart", function()
  vim.g.loaded_rpiv_todo = nil
  vim.cmd("runtime plugin/rpiv_todo.lua")
  local notes = {}
  local saved_notify, saved_url = vim.notify, vim.env.RPIV_TODO_BASE_URL
  vim.notify = function(msg, level)
    notes[#notes + 1] = { msg = msg, level = level }
  end
  vim.env.RPIV_TODO_BASE_URL = C.release
  local before = #C.log_lines()
  vim.cmd("TodosInstall! download")
  vim.notify, vim.env.RPIV_TODO_BASE_URL = saved_notify, saved_url
  T.eq(#notes, 1, "one message")
  T.eq(notes[1] and notes[1].level, vim.log.levels.INFO, "level")
  T.eq(
    notes[1] and notes[1].msg,
    "(rpiv_todo) native module downloaded: "
      .. C.record().path
      .. "\nMCP server: "
      .. C.server_record().path
      .. " (what scripts/mcp.sh starts)"
      .. "\nRestart Neovim to use it (this one keeps the module it loaded).",
    "message"
  )
  T.eq(#C.log_lines(), before + 4, "the four files were fetched")
  T.eq(C.record().url, C.release .. "/v" .. C.version .. "/" .. C.asset, "record: url")
end)

T.test("a release without the MCP server installs the module and warns", function()
  local notes = {}
  local saved = vim.notify
  vim.notify = function(msg, level)
    notes[#notes + 1] = { msg = msg, level = level }
  end
  local base = C.release:gsub("/good$", "/noserver")
  local server_before = C.read(C.root .. "/lib/mcp.txt")
  local ok, err = H.install.run({ base_url = base, force = true })
  vim.notify = saved
  T.eq(err, nil, "no error")
  T.eq(ok, true, "installed")
  T.eq(C.record().url, base .. "/v" .. C.version .. "/" .. C.asset, "the module came from that release")
  T.eq(#notes, 2, "two messages")
  T.eq(notes[1] and notes[1].level, vim.log.levels.INFO, "the module's")
  T.eq(notes[2] and notes[2].level, vim.log.levels.WARN, "then a warning")
  local warning = notes[2] and notes[2].msg or ""
  T.contains(warning, "the MCP server was not installed (the module works without it)", "says so")
  T.contains(warning, base .. "/v" .. C.version .. "/" .. C.server_asset, "names the server's URL")
  T.eq(C.read(C.root .. "/lib/mcp.txt"), server_before, "the earlier server's record is untouched")
end)

T.test("a new release goes to a new file; the one this Neovim loaded is not rewritten", function()
  local uv = vim.uv or vim.loop
  local loaded = require("rpiv_todo.installed").loaded.path
  local before = uv.fs_stat(loaded)
  local ok, err = H.install.run({ base_url = C.release:gsub("/good$", "/newer"), force = true, quiet = true })
  T.eq(err, nil, "no error")
  T.eq(ok, true, "installed")
  local record = C.record()
  T.eq(record.path ~= loaded, true, "a new name: " .. record.file)
  T.eq(C.read(record.path), C.read(C.dist .. "/" .. C.asset) .. "\n", "the new bytes")
  local after = uv.fs_stat(loaded)
  T.eq(after and after.ino, before.ino, "the loaded file is the same inode")
  T.eq(C.read(loaded), H.before_bytes, "with the same bytes")
  local result = require("rpiv_todo").session("after-update"):execute({ action = "create", subject = "Old" })
  T.eq(result.content[1].text, "Created #1: Old (pending)", "this Neovim's module still answers")
  local text, path = C.tool_call_in_new_nvim()
  T.eq(text, "Created #1: Ship it (pending)", "a new Neovim makes a tool call")
  T.eq(path, record.path, "with the new module")
end)

T.finish("tests/install/refuse_spec.lua")
