-- rpiv_todo.nvim.install: put the native module and the MCP server in place without a
-- Rust toolchain (`rpiv_todo.install` is its deprecated alias).
--
--   require("rpiv_todo.nvim.install").run({ base_url = ..., from_source = "auto", force = false })
--     --> true | nil, err        (blocking: build hooks and scripts wait for it)
--   require("rpiv_todo.nvim.install").start(opts, on_done)
--     --> true | nil, err        (:TodosInstall: on Neovim 0.10+ the editor stays usable,
--                                 progress in the notifications, on_done(ok, err) at the end)
--
-- It picks the prebuilt module for the running Neovim (OS, CPU, and on Linux glibc or
-- musl, told apart without a compiler), and the MCP server (rpiv_todo_mcp, the binary
-- scripts/mcp.sh starts for terminal agents) built for the same platform. It downloads
-- each with curl into a temporary file in <plugin>/lib (curl reads HTTPS_PROXY,
-- https_proxy, ALL_PROXY and NO_PROXY itself), checks each against its .sha256 with the
-- system's SHA-256 program, loads the module once with package.loadlib and runs the
-- server once (`--version`), and only then moves each to a name of its own (version and
-- content hash) and points its record at it with one rename: lib/installed.txt for the
-- module, lib/mcp.txt for the server. No file is ever rewritten in place, so a Neovim
-- that has the old module loaded, or an agent running the old server, keeps a file nobody
-- writes to; any failure before the moves leaves both previous files and records as they
-- were. Without a fitting asset, or when a download fails, it builds both from source
-- with cargo when cargo is there (from_source = "auto"). `server = false` installs the
-- module alone.
--
-- Release layout: <base_url>/v<version>/rpiv_todo_core-<triple>.<ext>,
-- <base_url>/v<version>/rpiv_todo_mcp-<triple>[.exe], and a .sha256 beside each (what
-- scripts/package.sh writes). The URL is computed, never looked up through an API.
--
-- The module is this file (the public functions, run() and start(), which put the steps
-- together) and one file per step beside it: platform.lua (which asset fits), release.lua
-- (names and URLs of a release, the .sha256 format), fetch.lua (download and verify),
-- build.lua (cargo), smoke.lua (load or run a file once before it is placed), lib.lua
-- (lib/: temporary files, records, the move into place), proc.lua (the programs, and the
-- task that waits for them without blocking) and fail.lua (the error text). Each step
-- takes the run's context (inputs only) and returns what it did.
-- Neovim glue: uses vim.* (vim.fn to prepare lib/ and look for cargo, vim.notify).

local build = require("rpiv_todo.nvim.install.build")
local fail = require("rpiv_todo.nvim.install.fail").fail
local fetch = require("rpiv_todo.nvim.install.fetch")
local installed = require("rpiv_todo.installed")
local lib = require("rpiv_todo.nvim.install.lib")
local options_check = require("rpiv_todo.options_check")
local platform = require("rpiv_todo.nvim.install.platform")
local proc = require("rpiv_todo.nvim.install.proc")
local release = require("rpiv_todo.nvim.install.release")

local M = {}
local H = {}

-- The project's repository, and where its releases keep their files.
M.REPOSITORY = release.REPOSITORY
M.DEFAULT_BASE_URL = release.DEFAULT_BASE_URL

-- Every prebuilt module a release carries (rpiv_todo.nvim.install.platform.TARGETS).
M.TARGETS = platform.TARGETS

-- The MCP server's record inside lib/ (the module's is rpiv_todo.installed.RECORD).
M.SERVER_RECORD = lib.SERVER_RECORD

-- The oldest glibc the Linux gnu modules run on (scripts/package.sh checks the symbols).
M.MIN_GLIBC = platform.MIN_GLIBC

---The options of run(), every one optional.
---@class rpiv_todo.InstallOptions
---Where releases live (default: the environment variable `RPIV_TODO_BASE_URL`, else
---the project's GitHub release downloads); files:
---`<base_url>/v<version>/rpiv_todo_core-<triple>.<ext>` and its `.sha256`.
---@field base_url? string
---`"auto"` (default: build with cargo when no asset fits or the download fails and
---cargo is on PATH), `true` (only build), `false` (never).
---@field from_source? "auto"|boolean
---Install even when this version's module is already in place (default `false`).
---@field force? boolean
---Install the MCP server (`rpiv_todo_mcp`, which `scripts/mcp.sh` starts for terminal
---agents) beside the module (default `true`; `false` installs the module alone).
---@field server? boolean
---Show nothing: run() reports its outcome with |vim.notify()| unless this is `true`
---(default `false`).
---@field quiet? boolean

-- Defaults of run()'s options (rpiv_todo.InstallOptions says what each does); a nil
-- base_url means $RPIV_TODO_BASE_URL, else M.DEFAULT_BASE_URL.
M.defaults = {
  base_url = nil,
  from_source = "auto",
  force = false,
  server = true,
  quiet = false,
}

---A file's SHA-256, as 64 lowercase hex digits, from the system's program (`sha256sum`,
---`shasum -a 256` or `certutil`), or nil and why.
---@param path string
---@return string|nil hash, string|nil err
function M.sha256_file(path)
  return proc.sha256_file(path)
end

-- The running Neovim's platform and the asset that fits it (rpiv_todo.nvim.install.platform).
M.platform = platform.platform

-- The file names of a release's assets, the base URL in use and where an asset of a
-- version lives (rpiv_todo.nvim.install.release).
M.asset_name = release.asset_name
M.server_asset_name = release.server_asset_name
M.base_url = release.base_url
M.asset_url = release.asset_url

-- The installed MCP server: its record (lib/mcp.txt) with `path` added, or nil and why
-- (rpiv_todo.nvim.install.lib).
M.server = lib.server

-- ---------------------------------------------------------------------------
-- run()
-- ---------------------------------------------------------------------------

-- run()'s options, checked by the one options checker.
H.OPTIONS = {
  prefix = "install: ",
  names = { "base_url", "from_source", "force", "server", "quiet" },
  checks = {
    base_url = function(v)
      return type(v) ~= "string" and "expected a string" or nil
    end,
    from_source = function(v)
      return v ~= "auto" and v ~= true and v ~= false and 'expected "auto", true or false' or nil
    end,
  },
  got = true,
  not_table = "install: expected a table of options { base_url, from_source, force, server, quiet }",
}
for _, name in ipairs({ "force", "server", "quiet" }) do
  H.OPTIONS.checks[name] = function(v)
    return type(v) ~= "boolean" and "expected a boolean" or nil
  end
end

---What every step of a run reads (never writes).
---@class rpiv_todo.InstallContext
---@field root string the plugin's folder
---@field dir string its lib/
---@field version string the Lua scripts' version
---@field platform table rpiv_todo.nvim.install.platform.platform()
---@field target table|nil the asset that fits
---@field ext string the module's extension
---@field exe string ".exe" on Windows
---@field base_url string
---@field server boolean install the MCP server too
---@field progress fun(text: string) tells the user what the run is doing

---What a step put in place.
---@class rpiv_todo.Installed
---@field path string the module
---@field how string "downloaded" | "copied" | "built" | "already installed"
---@field server_path? string the MCP server, when it was placed
---@field server_warning? string why the server was not (the module was installed alone)

---One run; the steps in order.
---@param opts rpiv_todo.InstallOptions
---@param progress fun(text: string)
---@return rpiv_todo.Installed|nil installed, string|nil err
function H.run(opts, progress)
  local from_source = opts.from_source
  if from_source == nil then
    from_source = M.defaults.from_source
  end
  local root = installed.root()
  if root == nil then
    return nil, fail("prepare", "cannot tell the plugin's folder from " .. tostring(debug.getinfo(1, "S").source))
  end
  local dir = root .. "/lib"
  vim.fn.mkdir(dir, "p")
  if vim.fn.isdirectory(dir) ~= 1 or vim.fn.filewritable(dir) ~= 2 then
    return nil,
      fail("prepare", dir .. " is not a writable folder", nil, "make it writable, or install the plugin where it is")
  end
  local info = M.platform()
  local server = opts.server
  if server == nil then
    server = M.defaults.server
  end
  ---@type rpiv_todo.InstallContext
  local ctx = {
    root = root,
    dir = dir,
    version = installed.VERSION,
    platform = info,
    target = info.target,
    ext = info.target and info.target.ext or select(2, build.cargo_output("")),
    exe = info.os == "Windows_NT" and ".exe" or "",
    base_url = M.base_url(opts),
    server = server,
    progress = progress,
  }
  if not opts.force then
    local current = lib.current_ok(dir, ctx.version)
    local server_now = server and lib.server_ok(dir, ctx.version)
    if current and (server_now or not server) then
      return { path = current.path, how = "already installed", server_path = server_now and server_now.path }
    end
  end
  local done, err
  if from_source ~= true then
    if ctx.target == nil then
      err = fail("choose an asset", info.why, nil, "build from source: :TodosInstall source (needs cargo)")
    else
      done, err = fetch.download(ctx)
    end
  end
  local cargo = vim.fn.executable("cargo") == 1
  if done == nil and (from_source == true or (from_source == "auto" and cargo)) then
    local berr
    done, berr = build.build(ctx)
    if done == nil then
      err = err and (err .. "\n" .. berr) or berr
    end
  end
  if done == nil and from_source == "auto" and not cargo then
    err = err .. "\n  (cargo is not on PATH, so no build from source was tried)"
  end
  return done, err
end

-- Tell the user how a run ended (unless quiet).
function H.report(opts, done, err)
  if opts.quiet then
    return
  end
  if done == nil then
    vim.notify(err, vim.log.levels.ERROR, { title = "rpiv_todo" })
    return
  end
  local text = "(rpiv_todo) native module " .. done.how .. ": " .. done.path
  if done.server_path then
    text = text .. "\nMCP server: " .. done.server_path .. " (what scripts/mcp.sh starts)"
  end
  local in_use = package.loaded["rpiv_todo.core"] ~= nil or package.loaded["rpiv_todo.native"] ~= nil
  if done.how ~= "already installed" and in_use then
    text = text .. "\nRestart Neovim to use it (this one keeps the module it loaded)."
  end
  vim.notify(text, vim.log.levels.INFO, { title = "rpiv_todo" })
  if done.server_warning then
    vim.notify(
      "(rpiv_todo) the MCP server was not installed (the module works without it):\n" .. done.server_warning,
      vim.log.levels.WARN,
      { title = "rpiv_todo" }
    )
  end
end

H.BUSY = "(rpiv_todo) install: another install is still running; wait for it to finish"

---Installs the native module for the running Neovim, and the MCP server beside it.
---Blocking (what a plugin manager's build step and scripts want); returns `true`, or
---`nil` and an error naming the step, the URL and what to do (also shown with
---|vim.notify()| unless `quiet = true`). A release (or an offline folder) without the
---server's files installs the module alone and warns. |:TodosInstall| uses
---|rpiv_todo.nvim.install.start()| instead, which does not block.
---
---The download goes to a temporary file in `<plugin>/lib/` (curl honours `HTTPS_PROXY`
---and `NO_PROXY`); its SHA-256 (from `sha256sum`, `shasum` or `certutil`) must match, it
---must load once with |package.loadlib()| (the server must run once), and only then is it
---moved to `lib/rpiv_todo_core-<version>-<hash>.<ext>` and named in `lib/installed.txt`
---(the server: `lib/mcp.txt`). A file is never rewritten in place: a running Neovim keeps
---the module it loaded. Offline, put the four files (the module's asset, the server's,
---and the `.sha256` of each) in `<plugin>/lib/` and run |:TodosInstall|.
---@param opts? rpiv_todo.InstallOptions
---@return true|nil ok, string|nil err
function M.run(opts)
  opts = options_check.check(opts, H.OPTIONS)
  if proc.busy() then
    return nil, H.BUSY
  end
  local ok, done, err = pcall(H.run, opts, function() end)
  if not ok then
    done, err = nil, fail("install", done)
  end
  H.report(opts, done, err)
  if done == nil then
    return nil, err
  end
  return true
end

---Installs as |rpiv_todo.nvim.install.run()| does, without blocking the editor on Neovim
---0.10+: curl, cargo and the checks run as separate processes (|vim.system()|), each
---step is shown with |vim.notify()|, and `on_done(ok, err)` is called at the end. On
---Neovim 0.7-0.9 it runs to its end before it returns, as run() does. Returns `true`
---when the install started, or `nil` and why (one install at a time).
---@param opts? rpiv_todo.InstallOptions
---@param on_done? fun(ok: true|nil, err: string|nil)
---@return true|nil started, string|nil err
function M.start(opts, on_done)
  opts = options_check.check(opts, H.OPTIONS)
  if proc.busy() then
    if not opts.quiet then
      vim.notify(H.BUSY, vim.log.levels.WARN, { title = "rpiv_todo" })
    end
    return nil, H.BUSY
  end
  local function progress(text)
    if not opts.quiet and proc.can_wait() then
      vim.notify("(rpiv_todo) install: " .. text, vim.log.levels.INFO, { title = "rpiv_todo" })
    end
  end
  proc.start(function()
    return H.run(opts, progress)
  end, function(done, err)
    H.report(opts, done, err)
    if on_done then
      on_done(done and true or nil, done == nil and err or nil)
    end
  end)
  return true
end

return M
