-- tests/install/fresh_spec.lua: a fresh clone with no lua/rpiv_todo/core.so and no cargo
-- on PATH installs the prebuilt module from a local release (127.0.0.1), and a new
-- headless Neovim then makes a tool call with it. Run by tests/install/install.sh.

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local C = dofile(os.getenv("RPIV_ROOT") .. "/tests/install/common.lua")

T.test("the clone starts without a native module and without cargo", function()
  T.eq(vim.fn.filereadable(C.root .. "/lua/rpiv_todo/core.so"), 0, "no lua/rpiv_todo/core.so")
  T.eq(vim.fn.isdirectory(C.root .. "/lib"), 0, "no lib/")
  T.eq(vim.fn.executable("cargo"), 0, "cargo is not on PATH")
  T.eq(vim.fn.executable("curl"), 1, "curl is on PATH")
end)

T.test("the asset chosen for this machine is the one scripts/package.sh wrote", function()
  local install = require("rpiv_todo.install")
  local platform = install.platform()
  T.eq(platform.target and install.asset_name(platform.target), C.asset, "asset name")
end)

T.test("run({ base_url }) downloads, verifies and installs the module", function()
  local ok, err = require("rpiv_todo.install").run({ base_url = C.release, quiet = true })
  T.eq(err, nil, "no error")
  T.eq(ok, true, "run() returns true")
  local record = C.record()
  T.eq(record and record.version, C.version, "record: version")
  T.eq(record and record.source, "downloaded", "record: source")
  T.eq(record and record.url, C.release .. "/v" .. C.version .. "/" .. C.asset, "record: url")
  local sums = C.read(C.dist .. "/" .. C.asset .. ".sha256")
  T.eq(record and record.sha256, sums and sums:match("^(%x+)"), "record: the release's checksum")
  T.eq(C.read(record.path), C.read(C.dist .. "/" .. C.asset), "the installed file is the release's asset")
  T.eq(
    record.file:match("^rpiv_todo_core%-" .. C.version:gsub("%p", "%%%0") .. "%-%x+%.so$") ~= nil,
    true,
    "versioned name: " .. record.file
  )
  local prefix = C.release:match("^https?://[^/]+(.*)$")
  T.same(C.log_lines(), {
    "GET " .. prefix .. "/v" .. C.version .. "/" .. C.asset .. ".sha256",
    "GET " .. prefix .. "/v" .. C.version .. "/" .. C.asset,
  }, "two plain GETs of the release layout, no API call")
  T.eq(vim.fn.filereadable(C.root .. "/lua/rpiv_todo/core.so"), 0, "still no lua/rpiv_todo/core.so")
end)

T.test("a new headless Neovim loads the installed module and makes a tool call", function()
  local text, loaded = C.tool_call_in_new_nvim()
  T.eq(text, "Created #1: Ship it (pending)", "tool reply")
  T.eq(loaded, C.record().path, "it loaded the installed module")
end)

T.test("a second run finds the module in place and downloads nothing", function()
  local before = #C.log_lines()
  T.eq(require("rpiv_todo.install").run({ base_url = C.release, quiet = true }), true, "run() returns true")
  T.eq(#C.log_lines(), before, "no request")
end)

T.finish("tests/install/fresh_spec.lua")
