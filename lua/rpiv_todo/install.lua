-- rpiv_todo.install: put the native module and the MCP server in place without a Rust
-- toolchain.
--
--   require("rpiv_todo.install").run({ base_url = ..., from_source = "auto", force = false })
--     --> true | nil, err        (blocking; also :TodosInstall[!] [download|source])
--
-- It picks the prebuilt module for the running Neovim (OS, CPU, and on Linux glibc or
-- musl, told apart without a compiler), and the MCP server (rpiv_todo_mcp, the binary
-- scripts/mcp.sh starts for terminal agents) built for the same platform. It downloads
-- each with curl into a temporary file in <plugin>/lib (curl reads HTTPS_PROXY,
-- https_proxy, ALL_PROXY and NO_PROXY itself), checks each against its .sha256, loads the
-- module once with package.loadlib and runs the server once (`--version`), and only then
-- moves each to a name of its own (version and content hash) and points its record at it
-- with one rename: lib/installed.txt for the module, lib/mcp.txt for the server. No file
-- is ever rewritten in place, so a Neovim that has the old module loaded, or an agent
-- running the old server, keeps a file nobody writes to; any failure before the moves
-- leaves both previous files and records as they were. Without a fitting asset, or when a
-- download fails, it builds both from source with cargo when cargo is there
-- (from_source = "auto"). `server = false` installs the module alone.
--
-- Release layout: <base_url>/v<version>/rpiv_todo_core-<triple>.<ext>,
-- <base_url>/v<version>/rpiv_todo_mcp-<triple>[.exe], and a .sha256 beside each (what
-- scripts/package.sh writes). The URL is computed, never looked up through an API.
-- Neovim glue: uses vim.* (curl through vim.fn.system, libuv for renames).

local installed = require("rpiv_todo.installed")

local M = {}
local H = {}

-- The project's repository, and where its releases keep their files.
M.REPOSITORY = "https://github.com/rpiv-todo/rpiv_todo"
M.DEFAULT_BASE_URL = M.REPOSITORY .. "/releases/download"

-- Every prebuilt module a release carries (.github/workflows/release.yml builds each;
-- a test checks that). `os` is libuv's sysname, `arch` the normalised machine name.
M.TARGETS = {
  { os = "Linux", arch = "x86_64", libc = "gnu", triple = "x86_64-unknown-linux-gnu", ext = "so" },
  { os = "Linux", arch = "aarch64", libc = "gnu", triple = "aarch64-unknown-linux-gnu", ext = "so" },
  { os = "Linux", arch = "x86_64", libc = "musl", triple = "x86_64-unknown-linux-musl", ext = "so" },
  { os = "Linux", arch = "aarch64", libc = "musl", triple = "aarch64-unknown-linux-musl", ext = "so" },
  { os = "Darwin", arch = "x86_64", triple = "x86_64-apple-darwin", ext = "dylib" },
  { os = "Darwin", arch = "aarch64", triple = "aarch64-apple-darwin", ext = "dylib" },
  { os = "Windows_NT", arch = "x86_64", triple = "x86_64-pc-windows-msvc", ext = "dll" },
}

-- The MCP server's record inside lib/ (the module's is rpiv_todo.installed.RECORD).
M.SERVER_RECORD = "mcp.txt"

-- The oldest glibc the Linux gnu modules run on (scripts/package.sh checks the symbols).
M.MIN_GLIBC = "2.17"

-- Defaults of run()'s options.
M.defaults = {
  -- Where releases live; nil means $RPIV_TODO_BASE_URL, else M.DEFAULT_BASE_URL.
  base_url = nil,
  -- "auto": download, and build with cargo when no asset fits or the download fails and
  -- cargo is on PATH; true: build only; false: download only.
  from_source = "auto",
  -- Install again even when the module for this version is already in place.
  force = false,
  -- Install the MCP server (rpiv_todo_mcp) beside the module.
  server = true,
  -- Say nothing (run() reports its outcome with vim.notify otherwise).
  quiet = false,
}

---The SHA-256 of a byte string, as 64 lowercase hex digits (rpiv_todo.sha256).
---@param data string
---@return string
function M.sha256(data)
  return require("rpiv_todo.sha256")(data)
end

-- ---------------------------------------------------------------------------
-- The running Neovim: which asset fits
-- ---------------------------------------------------------------------------

H.ARCH = { x86_64 = "x86_64", amd64 = "x86_64", x64 = "x86_64", aarch64 = "aarch64", arm64 = "aarch64" }

---Compare dotted versions ("2.17" < "2.31").
---@return boolean
function H.version_less(a, b)
  local pa, pb = {}, {}
  for n in tostring(a):gmatch("%d+") do
    pa[#pa + 1] = tonumber(n)
  end
  for n in tostring(b):gmatch("%d+") do
    pb[#pb + 1] = tonumber(n)
  end
  for i = 1, math.max(#pa, #pb) do
    local x, y = pa[i] or 0, pb[i] or 0
    if x ~= y then
      return x < y
    end
  end
  return false
end

---The C library of this process on Linux, without a compiler: glibc answers
---gnu_get_libc_version() (through LuaJIT's FFI); else the libraries mapped into the
---process (/proc/self/maps) name musl's loader; else musl's loader on disk.
---@return string libc "gnu" | "musl", string|nil version, string how it was found
function H.linux_libc()
  local has_ffi, ffi = pcall(require, "ffi")
  if has_ffi then
    pcall(ffi.cdef, "const char *gnu_get_libc_version(void);")
    local ok, version = pcall(function()
      return ffi.string(ffi.C.gnu_get_libc_version())
    end)
    if ok and type(version) == "string" then
      return "gnu", version, "gnu_get_libc_version()"
    end
  end
  local maps = io.open("/proc/self/maps", "r")
  if maps then
    local text = maps:read("*a") or ""
    maps:close()
    if text:find("ld%-musl") or text:find("libc%.musl") then
      return "musl", nil, "/proc/self/maps"
    end
    if text:find("libc%.so%.6") then
      return "gnu", nil, "/proc/self/maps"
    end
  end
  if #vim.fn.glob("/lib/ld-musl-*.so.1", false, true) > 0 then
    return "musl", nil, "/lib/ld-musl-*.so.1"
  end
  return "gnu", nil, "assumed (no musl loader found)"
end

---The running Neovim's platform and the asset that fits it.
---@return table { os, arch, libc?, libc_version?, libc_how?, target? (an entry of M.TARGETS), why? }
function M.platform()
  local uv = vim.uv or vim.loop
  local uname = uv.os_uname()
  -- The CPU the running Neovim was built for (LuaJIT says: x64, arm64, x86...), which is
  -- what a module must match; the machine's name only when that is unknown.
  local jit = rawget(_G, "jit")
  local arch = type(jit) == "table" and type(jit.arch) == "string" and (H.ARCH[jit.arch:lower()] or jit.arch)
    or H.ARCH[(uname.machine or ""):lower()]
    or uname.machine
  local info = { os = uname.sysname, arch = arch }
  if info.os == "Linux" then
    info.libc, info.libc_version, info.libc_how = H.linux_libc()
  end
  for _, t in ipairs(M.TARGETS) do
    if t.os == info.os and t.arch == info.arch and (t.libc == nil or t.libc == info.libc) then
      info.target = t
    end
  end
  if info.target == nil then
    info.why = "no prebuilt module for " .. tostring(info.os) .. " on " .. tostring(info.arch)
  elseif info.libc == "gnu" and info.libc_version and H.version_less(info.libc_version, M.MIN_GLIBC) then
    info.why = "glibc " .. info.libc_version .. " is older than " .. M.MIN_GLIBC .. ", which the prebuilt module needs"
    info.target = nil
  end
  return info
end

---The file name of a release asset.
---@param target table an entry of M.TARGETS
---@return string
function M.asset_name(target)
  return "rpiv_todo_core-" .. target.triple .. "." .. target.ext
end

---The file name of the MCP server's release asset: rpiv_todo_mcp-<triple>, with .exe on
---Windows.
---@param target table an entry of M.TARGETS
---@return string
function M.server_asset_name(target)
  return "rpiv_todo_mcp-" .. target.triple .. (target.os == "Windows_NT" and ".exe" or "")
end

---The installed MCP server: its record (lib/mcp.txt) with `path` added, or nil and why.
---@param dir? string the lib folder (default rpiv_todo.installed.dir())
---@return table<string, string>|nil record, string|nil why
function M.server(dir)
  dir = dir or installed.dir()
  if dir == nil then
    return nil, "the plugin's folder is unknown"
  end
  local text = H.read(dir .. "/" .. M.SERVER_RECORD)
  if text == nil then
    return nil, "no " .. dir .. "/" .. M.SERVER_RECORD
  end
  local record = installed.parse(text)
  if not record.version or not record.file or record.file == "" or record.file:find("[/\\]") then
    return nil, dir .. "/" .. M.SERVER_RECORD .. " is incomplete"
  end
  record.path = dir .. "/" .. record.file
  return record
end

---The base URL in use: opts.base_url, else $RPIV_TODO_BASE_URL, else the project's
---release downloads. No trailing slash.
---@param opts? table
---@return string url, string where it came from
function M.base_url(opts)
  local url, from = opts and opts.base_url, "option base_url"
  if url == nil or url == "" then
    url, from = os.getenv("RPIV_TODO_BASE_URL"), "RPIV_TODO_BASE_URL"
  end
  if url == nil or url == "" then
    url, from = M.DEFAULT_BASE_URL, "default"
  end
  return (url:gsub("/+$", "")), from
end

---Where an asset of this version lives: <base_url>/v<version>/<asset>.
---@return string
function M.asset_url(base_url, version, asset)
  return base_url .. "/v" .. version .. "/" .. asset
end

-- ---------------------------------------------------------------------------
-- Files
-- ---------------------------------------------------------------------------

function H.uv()
  return vim.uv or vim.loop
end

function H.read(path)
  local file = io.open(path, "rb")
  if not file then
    return nil
  end
  local data = file:read("*a")
  file:close()
  return data
end

function H.write(path, data)
  local file, err = io.open(path, "wb")
  if not file then
    return nil, err
  end
  local ok, werr = file:write(data)
  local closed, cerr = file:close()
  if not ok or not closed then
    os.remove(path)
    return nil, werr or cerr
  end
  return true
end

function H.exists(path)
  return H.uv().fs_stat(path) ~= nil
end

-- A name in lib/ no other run (or Neovim) uses: pid and a high-resolution clock.
function H.temp(dir, what)
  H.counter = (H.counter or 0) + 1
  return string.format("%s/.%s-%d-%d-%d", dir, what, vim.fn.getpid(), H.uv().hrtime(), H.counter)
end

-- Rename over `to` (libuv replaces an existing file on every platform).
function H.rename(from, to)
  local ok, err = H.uv().fs_rename(from, to)
  if not ok then
    return nil, err
  end
  return true
end

-- ---------------------------------------------------------------------------
-- Steps
-- ---------------------------------------------------------------------------

---An error naming the step, the URL (when there is one) and what to do.
function H.fail(step, detail, url, todo)
  local text = "(rpiv_todo) install: " .. step .. " failed: " .. tostring(detail):gsub("%s+$", "")
  if url then
    text = text .. "\n  URL: " .. url
  end
  if todo then
    text = text .. "\n  What to do: " .. todo
  end
  return text
end

-- curl URL into the file OUT. Returns true, or nil and curl's own words.
function H.curl(url, out)
  if vim.fn.executable("curl") ~= 1 then
    return nil, "curl is not on PATH"
  end
  local output = vim.fn.system({
    "curl",
    "--fail",
    "--location",
    "--silent",
    "--show-error",
    "--connect-timeout",
    "20",
    "--max-time",
    "300",
    "--output",
    out,
    url,
  })
  if vim.v.shell_error ~= 0 then
    os.remove(out)
    return nil, "curl exited with " .. vim.v.shell_error .. ": " .. tostring(output):gsub("%s+$", "")
  end
  return true
end

---The hash in a .sha256 file (`sha256sum` format: "<64 hex>  <name>"), checked to name
---`asset` when it names a file at all.
---@return string|nil hash, string|nil err
function H.parse_sha256(text, asset)
  local hash, name = tostring(text):match("^%s*(%x+)%s*%*?([^\r\n]*)")
  if hash == nil or #hash ~= 64 then
    return nil, "the .sha256 file does not hold a SHA-256 (64 hex digits)"
  end
  name = name and name:gsub("%s+$", "") or ""
  if name ~= "" and name:gsub("^.*[/\\]", "") ~= asset then
    return nil, "the .sha256 file is for " .. name .. ", not " .. asset
  end
  return hash:lower()
end

---Load the file once (package.loadlib, then its luaopen_) and check what it says it is.
---@return table|nil core, string|nil err
function H.smoke(path, version)
  local open, err = package.loadlib(path, "luaopen_rpiv_todo_core")
  if not open then
    return nil, "package.loadlib refused it: " .. tostring(err)
  end
  local ok, core = pcall(open, "rpiv_todo.core", path)
  if not ok then
    return nil, "its luaopen_rpiv_todo_core raised: " .. tostring(core)
  end
  if type(core) ~= "table" then
    return nil, "its luaopen_rpiv_todo_core returned " .. type(core) .. ", not the module table"
  end
  if core.version ~= version then
    return nil, "it is version " .. tostring(core.version) .. ", but the Lua scripts are version " .. version
  end
  if core.flavour ~= "luajit" then
    return nil, "it is built for " .. tostring(core.flavour) .. ", but Neovim runs LuaJIT"
  end
  return core
end

-- What the current record points at, when it is this version's module and intact.
function H.current_ok(dir, version)
  local record = installed.read(dir)
  if record == nil or record.version ~= version or record.flavour ~= "luajit" then
    return nil
  end
  local data = H.read(record.path)
  if data == nil or (record.sha256 and M.sha256(data) ~= record.sha256) then
    return nil
  end
  return record
end

-- What the server record points at, when it is this version's server and intact.
function H.server_ok(dir, version)
  local record = M.server(dir)
  if record == nil or record.version ~= version then
    return nil
  end
  local data = H.read(record.path)
  if data == nil or (record.sha256 and M.sha256(data) ~= record.sha256) then
    return nil
  end
  return record
end

-- The two things run() installs: the file names each gets in lib/ and the record that
-- names the current one.
H.KINDS = {
  module = {
    what = "the native module",
    record = installed.RECORD,
    prefix = "rpiv_todo_core",
    pattern = "^rpiv_todo_core%-%d[^/]*%-%x+%.%a+$",
  },
  server = {
    what = "the MCP server",
    record = M.SERVER_RECORD,
    prefix = "rpiv_todo_mcp",
    pattern = "^rpiv_todo_mcp%-%d[^/]*%-%x+$",
    pattern_exe = "^rpiv_todo_mcp%-%d[^/]*%-%x+%.exe$",
  },
}

---Move a checked file (`tmp`, in lib/) to its versioned name and point the record at it.
---`kind` is "module" (the default) or "server".
---@return string|nil path, string|nil err
function H.place(ctx, tmp, hash, record, kind)
  kind = H.KINDS[kind or "module"]
  local name
  if kind == H.KINDS.module then
    name = string.format("rpiv_todo_core-%s-%s.%s", ctx.version, hash:sub(1, 16), ctx.ext)
  else
    name = string.format("rpiv_todo_mcp-%s-%s%s", ctx.version, hash:sub(1, 16), ctx.exe)
  end
  local final = ctx.dir .. "/" .. name
  if H.exists(final) then
    -- The same bytes are already there (a forced reinstall): keep that file, which a
    -- running Neovim may have loaded, and drop the copy.
    local data = H.read(final)
    if data ~= nil and M.sha256(data) == hash then
      os.remove(tmp)
    else
      return nil, final .. " exists with other content; remove it and run :TodosInstall again"
    end
  else
    local ok, err = H.rename(tmp, final)
    if not ok then
      return nil, "cannot rename " .. tmp .. " to " .. final .. ": " .. tostring(err)
    end
  end
  record.version, record.file, record.sha256 = ctx.version, name, hash
  if kind == H.KINDS.module then
    record.flavour = "luajit"
  end
  local rec_tmp = H.temp(ctx.dir, "record")
  local ok, err = H.write(rec_tmp, installed.format(record))
  if ok then
    ok, err = H.rename(rec_tmp, ctx.dir .. "/" .. kind.record)
  end
  if not ok then
    os.remove(rec_tmp)
    return nil, "cannot write " .. ctx.dir .. "/" .. kind.record .. ": " .. tostring(err)
  end
  H.sweep(ctx.dir, name, kind)
  return final
end

-- Remove earlier files of one kind (never the current one, nor the module this Neovim
-- loaded; a file another process has loaded or runs stays valid on Linux and macOS once
-- unlinked, and Windows refuses to remove it, which is fine) and leftovers of interrupted
-- runs.
function H.sweep(dir, keep, kind)
  local loaded = installed.loaded and installed.loaded.path
  for _, name in ipairs(vim.fn.readdir(dir)) do
    local path = dir .. "/" .. name
    local old = name:match(kind.pattern) or (kind.pattern_exe and name:match(kind.pattern_exe))
    if name ~= keep and path ~= loaded and old then
      os.remove(path)
    end
  end
end

---Run the server once (`--version`) and check what it says it is.
---@return true|nil ok, string|nil err
function H.smoke_server(path, version)
  local uv = H.uv()
  -- rwxr-xr-x: curl and io.open write files without the executable bit.
  uv.fs_chmod(path, 493)
  local ok, output = pcall(vim.fn.system, { path, "--version" })
  if not ok then
    return nil, "it does not run: " .. tostring(output)
  end
  output = tostring(output):gsub("%s+$", "")
  if vim.v.shell_error ~= 0 then
    return nil, "`" .. path .. " --version` exited with " .. vim.v.shell_error .. ": " .. output:sub(1, 300)
  end
  if output ~= "rpiv_todo_mcp " .. version then
    return nil, "it says " .. string.format("%q", output:sub(1, 200)) .. ", not rpiv_todo_mcp " .. version
  end
  return true
end

-- What to do without a network: the files to fetch by hand and the folder to put them in.
function H.offline_advice(ctx)
  local urls = { M.asset_url(ctx.base_url, ctx.version, M.asset_name(ctx.target)) }
  if ctx.server then
    urls[2] = M.asset_url(ctx.base_url, ctx.version, M.server_asset_name(ctx.target))
  end
  local files = {}
  for _, url in ipairs(urls) do
    files[#files + 1] = url .. " and " .. url .. ".sha256"
  end
  return "download "
    .. table.concat(files, ", and ")
    .. " where you are online, put "
    .. (#urls == 1 and "both" or "all four")
    .. " in "
    .. ctx.dir
    .. "/ and run :TodosInstall again"
end

---Fetch one asset and its .sha256 (from lib/ when both were put there by hand, else with
---curl) into a temporary file in lib/ (its name ending in `suffix`: .exe for a Windows
---program, which is run before it is moved), and verify it. Returns
---{ tmp, hash, url, source, by_hand }, or nil and the error.
function H.fetch(ctx, asset, suffix)
  local url = M.asset_url(ctx.base_url, ctx.version, asset)
  local by_hand = ctx.dir .. "/" .. asset
  local offline = H.offline_advice(ctx)
  local tmp = H.temp(ctx.dir, "download") .. (suffix or "")
  local data, sums, source
  if H.exists(by_hand) and H.exists(by_hand .. ".sha256") then
    -- Put there by hand (offline): use those two files instead of the network.
    url, source = "file://" .. by_hand, "copied"
    data, sums = H.read(by_hand), H.read(by_hand .. ".sha256")
    if data == nil or sums == nil then
      return nil, H.fail("read", "cannot read " .. by_hand .. " or its .sha256", url, offline)
    end
    local ok, err = H.write(tmp, data)
    if not ok then
      return nil, H.fail("copy", err, url, "check that " .. ctx.dir .. " is writable")
    end
  else
    source = "downloaded"
    local ok, err = H.curl(url .. ".sha256", tmp .. ".sha256")
    if ok then
      ok, err = H.curl(url, tmp)
    end
    if not ok then
      os.remove(tmp .. ".sha256")
      local proxy = os.getenv("HTTPS_PROXY") or os.getenv("https_proxy") or os.getenv("ALL_PROXY")
      local hint = proxy and (" (curl used the proxy " .. proxy .. ")") or ""
      return nil, H.fail("download", tostring(err) .. hint, url, offline)
    end
    sums = H.read(tmp .. ".sha256")
    os.remove(tmp .. ".sha256")
    data = H.read(tmp)
  end
  local want, perr = H.parse_sha256(sums or "", asset)
  local got = data and M.sha256(data)
  if want == nil or got ~= want then
    os.remove(tmp)
    local detail = perr or ("the file's SHA-256 is " .. tostring(got) .. ", the .sha256 says " .. want)
    return nil,
      H.fail(
        "verify",
        detail .. " (a truncated or altered download); nothing was changed",
        url,
        "run :TodosInstall again; if it keeps failing, " .. offline
      )
  end
  return { tmp = tmp, hash = want, url = url, source = source, by_hand = source == "copied" and by_hand or nil }
end

---Download and verify the module (and the server), load the module once and run the
---server once, then move both into place. Returns the module's path, or nil and the error.
function H.download(ctx)
  local module, err = H.fetch(ctx, M.asset_name(ctx.target))
  if not module then
    return nil, err
  end
  local _, lerr = H.smoke(module.tmp, ctx.version)
  if lerr then
    os.remove(module.tmp)
    return nil,
      H.fail("load", lerr .. "; nothing was changed", module.url, "report it with :checkhealth rpiv_todo's output")
  end
  local server
  if ctx.server then
    server, err = H.fetch(ctx, M.server_asset_name(ctx.target), ctx.exe)
    if not server then
      os.remove(module.tmp)
      return nil, err
    end
    local _, serr = H.smoke_server(server.tmp, ctx.version)
    if serr then
      os.remove(module.tmp)
      os.remove(server.tmp)
      return nil,
        H.fail("run the server", serr .. "; nothing was changed", server.url, "report it with the output above")
    end
  end
  local path, merr = H.place(ctx, module.tmp, module.hash, {
    source = module.source,
    url = module.url,
    triple = ctx.target.triple,
  })
  if not path then
    os.remove(module.tmp)
    if server then
      os.remove(server.tmp)
    end
    return nil, H.fail("move into place", merr, module.url, "check that " .. ctx.dir .. " is writable")
  end
  if server then
    local spath, serr = H.place(ctx, server.tmp, server.hash, {
      source = server.source,
      url = server.url,
      triple = ctx.target.triple,
    }, "server")
    if not spath then
      os.remove(server.tmp)
      return nil, H.fail("move into place", serr, server.url, "check that " .. ctx.dir .. " is writable")
    end
    ctx.server_path = spath
  end
  for _, fetched in ipairs({ module, server or {} }) do
    if fetched.by_hand then
      os.remove(fetched.by_hand)
      os.remove(fetched.by_hand .. ".sha256")
    end
  end
  return path, nil, module.source
end

-- The library cargo writes for this OS.
function H.cargo_output(target_dir)
  local os_name = (H.uv().os_uname().sysname or "")
  if os_name == "Darwin" then
    return target_dir .. "/release/librpiv_todo.dylib", "dylib"
  elseif os_name == "Windows_NT" then
    return target_dir .. "/release/rpiv_todo.dll", "dll"
  end
  return target_dir .. "/release/librpiv_todo.so", "so"
end

-- Run one cargo build; nil and cargo's last words when it fails.
function H.cargo(cmd)
  local output = vim.fn.system(cmd)
  local code = vim.v.shell_error
  if code ~= 0 then
    return nil, "cargo build exited with " .. code .. ":\n" .. tostring(output):gsub("%s+$", ""):sub(-1500)
  end
  return true
end

-- Copy what cargo built into a temporary file in lib/; the file, its bytes, or nil and why.
function H.take_build(ctx, built, suffix)
  local data = H.read(built)
  if data == nil then
    return nil, nil, "cargo built no " .. built
  end
  local tmp = H.temp(ctx.dir, "build") .. (suffix or "")
  local ok, err = H.write(tmp, data)
  if not ok then
    return nil, nil, "cannot copy it into " .. ctx.dir .. ": " .. tostring(err)
  end
  return tmp, data
end

---Build with cargo (the module as scripts/build-module.sh luajit does, the server as
---`cargo build --release -p rpiv_todo_mcp`), then load the module once, run the server
---once, and move both into place like a download.
function H.build(ctx)
  local todo = "install Rust (https://rustup.rs) and run :TodosInstall again, or "
    .. "run :TodosInstall download when a prebuilt module exists for this platform"
  if vim.fn.executable("cargo") ~= 1 then
    return nil, H.fail("build from source", "cargo is not on PATH", nil, todo)
  end
  local target_dir = ctx.root .. "/target/module-luajit"
  local saved = vim.env.RUSTFLAGS
  if H.uv().os_uname().sysname == "Darwin" then
    -- A macOS module leaves the Lua symbols for the host process to provide.
    vim.env.RUSTFLAGS = (saved or "") .. " -C link-arg=-undefined -C link-arg=dynamic_lookup"
  end
  local ok, err = H.cargo({
    "cargo",
    "build",
    "--manifest-path",
    ctx.root .. "/Cargo.toml",
    "--release",
    "--lib",
    "--no-default-features",
    "--features",
    "module,luajit",
    "--target-dir",
    target_dir,
  })
  vim.env.RUSTFLAGS = saved
  if not ok then
    return nil, H.fail("build from source", err, nil, todo)
  end
  local tmp, data, terr = H.take_build(ctx, H.cargo_output(target_dir))
  if not tmp then
    return nil, H.fail("build from source", terr, nil, todo)
  end
  local _, lerr = H.smoke(tmp, ctx.version)
  if lerr then
    os.remove(tmp)
    return nil, H.fail("load", lerr .. "; nothing was changed", nil, todo)
  end
  local server_tmp, server_data
  if ctx.server then
    -- The workspace's own target folder: scripts/mcp.sh also finds the build there.
    local server_dir = ctx.root .. "/target"
    ok, err = H.cargo({
      "cargo",
      "build",
      "--manifest-path",
      ctx.root .. "/Cargo.toml",
      "--release",
      "-p",
      "rpiv_todo_mcp",
      "--target-dir",
      server_dir,
    })
    if ok then
      server_tmp, server_data, err = H.take_build(ctx, server_dir .. "/release/rpiv_todo_mcp" .. ctx.exe, ctx.exe)
    end
    if server_tmp then
      ok, err = H.smoke_server(server_tmp, ctx.version)
      if not ok then
        os.remove(server_tmp)
        err = "the server built: " .. err
      end
    end
    if not ok or not server_tmp then
      os.remove(tmp)
      return nil, H.fail("build from source", tostring(err) .. "; nothing was changed", nil, todo)
    end
  end
  local triple = ctx.target and ctx.target.triple or (ctx.platform.os .. "-" .. tostring(ctx.platform.arch))
  local path, merr = H.place(ctx, tmp, M.sha256(data), { source = "built", triple = triple })
  if not path then
    os.remove(tmp)
    if server_tmp then
      os.remove(server_tmp)
    end
    return nil, H.fail("move into place", merr, nil, "check that " .. ctx.dir .. " is writable")
  end
  if server_tmp then
    local spath, serr = H.place(ctx, server_tmp, M.sha256(server_data), { source = "built", triple = triple }, "server")
    if not spath then
      os.remove(server_tmp)
      return nil, H.fail("move into place", serr, nil, "check that " .. ctx.dir .. " is writable")
    end
    ctx.server_path = spath
  end
  return path, nil, "built"
end

H.OPTION_TYPES = { base_url = "string", force = "boolean", quiet = "boolean", server = "boolean" }

function H.check_opts(opts)
  if opts == nil then
    return {}
  end
  if type(opts) ~= "table" then
    error("(rpiv_todo) install: opts: expected a table, got " .. type(opts), 0)
  end
  for key, value in pairs(opts) do
    if key == "from_source" then
      if value ~= "auto" and value ~= true and value ~= false then
        error('(rpiv_todo) install: from_source: expected "auto", true or false, got ' .. tostring(value), 0)
      end
    elseif H.OPTION_TYPES[key] == nil then
      error("(rpiv_todo) install: unknown option " .. tostring(key), 0)
    elseif type(value) ~= H.OPTION_TYPES[key] then
      error("(rpiv_todo) install: " .. key .. ": expected a " .. H.OPTION_TYPES[key] .. ", got " .. type(value), 0)
    end
  end
  return opts
end

function H.run(opts)
  local from_source = opts.from_source
  if from_source == nil then
    from_source = M.defaults.from_source
  end
  local root = installed.root()
  if root == nil then
    return nil, H.fail("prepare", "cannot tell the plugin's folder from " .. tostring(debug.getinfo(1, "S").source))
  end
  local dir = root .. "/lib"
  vim.fn.mkdir(dir, "p")
  if vim.fn.isdirectory(dir) ~= 1 or vim.fn.filewritable(dir) ~= 2 then
    return nil,
      H.fail("prepare", dir .. " is not a writable folder", nil, "make it writable, or install the plugin where it is")
  end
  local platform = M.platform()
  local base_url = M.base_url(opts)
  local ctx = {
    root = root,
    dir = dir,
    version = installed.VERSION,
    platform = platform,
    target = platform.target,
    ext = platform.target and platform.target.ext or select(2, H.cargo_output("")),
    exe = platform.os == "Windows_NT" and ".exe" or "",
    base_url = base_url,
    server = opts.server,
  }
  if ctx.server == nil then
    ctx.server = M.defaults.server
  end
  if not opts.force then
    local current = H.current_ok(dir, ctx.version)
    local server = ctx.server and H.server_ok(dir, ctx.version)
    if current and (server or not ctx.server) then
      return current.path, nil, "already installed", server and server.path
    end
  end
  local path, err, how
  if from_source ~= true then
    if ctx.target == nil then
      err = H.fail("choose an asset", platform.why, nil, "build from source: :TodosInstall source (needs cargo)")
    else
      path, err, how = H.download(ctx)
    end
  end
  if path == nil and (from_source == true or (from_source == "auto" and vim.fn.executable("cargo") == 1)) then
    local berr
    path, berr, how = H.build(ctx)
    if path == nil then
      err = err and (err .. "\n" .. berr) or berr
    end
  end
  if path == nil and from_source == "auto" and vim.fn.executable("cargo") ~= 1 then
    err = err .. "\n  (cargo is not on PATH, so no build from source was tried)"
  end
  if path == nil then
    return nil, err
  end
  return path, nil, how, ctx.server_path
end

---Install the native module for the running Neovim, and the MCP server beside it. Blocking.
---@param opts? { base_url?: string, from_source?: "auto"|boolean, force?: boolean, quiet?: boolean, server?: boolean }
---@return true|nil ok, string|nil err
function M.run(opts)
  opts = H.check_opts(opts)
  local ok, path, err, how, server = pcall(H.run, opts)
  if not ok then
    path, err = nil, H.fail("install", path)
  end
  if path == nil then
    if not opts.quiet then
      vim.notify(err, vim.log.levels.ERROR, { title = "rpiv_todo" })
    end
    return nil, err
  end
  if not opts.quiet then
    local text = "(rpiv_todo) native module " .. how .. ": " .. path
    if server then
      text = text .. "\nMCP server: " .. server .. " (what scripts/mcp.sh starts)"
    end
    local in_use = package.loaded["rpiv_todo.core"] ~= nil or package.loaded["rpiv_todo.native"] ~= nil
    if how ~= "already installed" and in_use then
      text = text .. "\nRestart Neovim to use it (this one keeps the module it loaded)."
    end
    vim.notify(text, vim.log.levels.INFO, { title = "rpiv_todo" })
  end
  return true
end

return M
