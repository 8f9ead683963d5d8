-- tests/install/fresh_spec.lua: a fresh clone with no lua/rpiv_todo/core.so and no cargo
-- on PATH installs the prebuilt module and the MCP server from a local release
-- (127.0.0.1); a new headless Neovim then makes a tool call with the module, and the
-- server, started through the clone's scripts/mcp.sh as an agent starts it, answers
-- initialize in under 100 ms and makes tool calls. Before the install, scripts/mcp.sh
-- fails at once with the command that installs the server. Run by tests/install/install.sh.

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local C = dofile(os.getenv("RPIV_ROOT") .. "/tests/install/common.lua")

T.test("the clone starts without a native module and without cargo", function()
  T.eq(vim.fn.filereadable(C.root .. "/lua/rpiv_todo/core.so"), 0, "no lua/rpiv_todo/core.so")
  T.eq(vim.fn.isdirectory(C.root .. "/lib"), 0, "no lib/")
  T.eq(vim.fn.executable("cargo"), 0, "cargo is not on PATH")
  T.eq(vim.fn.executable("curl"), 1, "curl is on PATH")
end)

T.test("the asset chosen for this machine is the one scripts/package.sh wrote", function()
  local install = require("rpiv_todo.nvim.install")
  local platform = install.platform()
  T.eq(platform.target and install.asset_name(platform.target), C.asset, "asset name")
  T.eq(platform.target and install.server_asset_name(platform.target), C.server_asset, "server asset name")
end)

T.test("without a server binary scripts/mcp.sh prints the command that installs it and fails at once", function()
  local uv = vim.uv or vim.loop
  local err = vim.fn.tempname()
  local t0 = uv.hrtime()
  -- Without CARGO_TARGET_DIR: the clone's own target/ is what the script looks in.
  local out =
    vim.fn.system({ "env", "-u", "CARGO_TARGET_DIR", "sh", "-c", '"$0" 2>"$1"', C.root .. "/scripts/mcp.sh", err }, "")
  local ms = (uv.hrtime() - t0) / 1e6
  local code = vim.v.shell_error
  local text = C.read(err) or ""
  os.remove(err)
  T.eq(code, 1, "exit status")
  T.eq(out, "", "nothing on stdout (the protocol channel)")
  T.eq(
    text,
    "rpiv_todo_mcp: no server binary in "
      .. C.root
      .. "/lib (lib/mcp.txt) or "
      .. C.root
      .. "/target/release; install the prebuilt one (what :TodosInstall does):\n"
      .. "  nvim --headless -u NONE --cmd 'set rtp^="
      .. C.root
      .. '\' -c \'lua if not require("rpiv_todo.nvim.install").run() then vim.cmd("cquit 1") end\' -c qa\n',
    "stderr: the one command"
  )
  T.eq(ms < 1000, true, "at once (" .. math.floor(ms) .. " ms)")
end)

T.test("with neither nvim nor cargo on PATH scripts/mcp.sh says what works without them", function()
  -- A PATH with the tools the script itself uses, and no nvim or cargo.
  local bin = vim.fn.tempname()
  vim.fn.mkdir(bin, "p")
  for _, tool in ipairs({ "bash", "sed", "cat", "dirname" }) do
    vim.loop.fs_symlink(vim.fn.exepath(tool), bin .. "/" .. tool)
  end
  local err = vim.fn.tempname()
  local script = C.root .. "/scripts/mcp.sh"
  local out = vim.fn.system({ "env", "-i", "PATH=" .. bin, bin .. "/bash", "-c", '"$0" 2>"$1"', script, err }, "")
  local code = vim.v.shell_error
  local text = C.read(err) or ""
  os.remove(err)
  vim.fn.delete(bin, "rf")
  T.eq(code, 1, "exit status")
  T.eq(out, "", "nothing on stdout")
  T.eq(
    text,
    "rpiv_todo_mcp: no server binary in "
      .. C.root
      .. "/lib (lib/mcp.txt) or "
      .. C.root
      .. "/target/release,\n"
      .. "and neither nvim (to install the prebuilt one) nor cargo (to build it) is on PATH.\n"
      .. "What works without them: the npm package, once published (npx -y rpiv-todo-mcp),\n"
      .. "or its tarballs packed on a machine with Rust and Node (scripts/package.sh --npm DIR,\n"
      .. "then npm install -g DIR/*.tgz here); or a built rpiv_todo_mcp copied here and named\n"
      .. "by RPIV_TODO_MCP_BINARY for the npm launcher and the agents' plugins.\n",
    "stderr: what works"
  )
end)

T.test("run({ base_url }) downloads, verifies and installs the module", function()
  local ok, err = require("rpiv_todo.nvim.install").run({ base_url = C.release, quiet = true })
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
    "GET " .. prefix .. "/v" .. C.version .. "/" .. C.server_asset .. ".sha256",
    "GET " .. prefix .. "/v" .. C.version .. "/" .. C.server_asset,
  }, "four plain GETs of the release layout, no API call")
  T.eq(vim.fn.filereadable(C.root .. "/lua/rpiv_todo/core.so"), 0, "still no lua/rpiv_todo/core.so")
end)

T.test("the MCP server is installed beside the module, under a versioned name named by lib/mcp.txt", function()
  local record = C.server_record()
  T.eq(record and record.version, C.version, "mcp.txt: version")
  T.eq(record and record.source, "downloaded", "mcp.txt: source")
  T.eq(record and record.url, C.release .. "/v" .. C.version .. "/" .. C.server_asset, "mcp.txt: url")
  local sums = C.read(C.dist .. "/" .. C.server_asset .. ".sha256")
  T.eq(record and record.sha256, sums and sums:match("^(%x+)"), "mcp.txt: the release's checksum")
  T.eq(C.read(record.path), C.read(C.dist .. "/" .. C.server_asset), "the installed file is the release's server")
  T.eq(
    record.file:match("^rpiv_todo_mcp%-" .. C.version:gsub("%p", "%%%0") .. "%-%x+$") ~= nil,
    true,
    "versioned name: " .. record.file
  )
  T.eq(vim.fn.executable(record.path), 1, "executable")
end)

T.test("the installed server runs: --version, --help", function()
  local path = C.server_record().path
  T.eq(vim.fn.system({ path, "--version" }), "rpiv_todo_mcp " .. C.version .. "\n", "--version")
  T.eq(vim.v.shell_error, 0, "--version exits 0")
  local help = vim.fn.system({ path, "--help" })
  T.eq(vim.v.shell_error, 0, "--help exits 0")
  T.contains(help, "usage: rpiv_todo_mcp [--state-dir DIR]", "--help: usage")
  T.contains(help, "--structured", "--help: --structured")
end)

T.test("scripts/mcp.sh starts the installed server: initialize in under 100 ms, tool calls answered", function()
  local report = C.probe({ C.root .. "/scripts/mcp.sh" }, 5)
  T.eq(report.failure, nil, "the probe talked to the server")
  T.note("initialize through scripts/mcp.sh, ms: " .. table.concat(report.initialize_ms or {}, ", "))
  T.eq(#(report.initialize_ms or {}), 5, "five starts")
  T.eq(C.min(report.initialize_ms) < 100, true, "initialize answered in under 100 ms")
  T.eq(report.server and report.server.name, "rpiv_todo", "serverInfo.name")
  T.eq(report.server and report.server.version, C.version, "serverInfo.version")
  T.same(report.tools, { "todo" }, "tools/list")
  T.eq(report.output_schema, false, "no outputSchema by default")
  T.same(report.texts, {
    "Created #1: Write the parser (pending)",
    "[pending] #1 Write the parser",
    "Error: #9 not found",
  }, "the reply texts")
  T.same(report.is_error, { false, false, true }, "isError")
  T.same(report.structured, { false, false, false }, "no structuredContent by default")
  T.eq(report.exit, 0, "it exits 0 when stdin closes")
  T.eq(report.stderr, "", "nothing on stderr")
end)

T.test("scripts/mcp.sh passes --structured on: outputSchema and structuredContent", function()
  local report = C.probe({ C.root .. "/scripts/mcp.sh", "--structured" })
  T.eq(report.failure, nil, "the probe talked to the server")
  T.eq(report.output_schema, true, "outputSchema declared")
  T.same(report.structured, { true, true, true }, "structuredContent in every result")
  T.same(report.is_error, { false, false, true }, "isError")
  T.eq(report.texts and report.texts[3], "Error: #9 not found", "the rejected call's text")
end)

T.test("a new headless Neovim loads the installed module and makes a tool call", function()
  local text, loaded, raised = C.tool_call_in_new_nvim()
  T.eq(text, "Created #1: Ship it (pending)", "tool reply")
  T.eq(loaded, C.record().path, "it loaded the installed module")
  -- The release asset is linked by zig: a Lua error raised through it once crashed Neovim
  -- (zig's own unwinder under LuaJIT's; scripts/unwind/libgcc_s.c).
  T.contains(raised or "", "rpiv_todo.core.list: state: expected an object", "a raised error is a Lua error")
end)

T.test("a second run finds the module in place and downloads nothing", function()
  local before = #C.log_lines()
  T.eq(require("rpiv_todo.nvim.install").run({ base_url = C.release, quiet = true }), true, "run() returns true")
  T.eq(#C.log_lines(), before, "no request")
end)

T.finish("tests/install/fresh_spec.lua")
