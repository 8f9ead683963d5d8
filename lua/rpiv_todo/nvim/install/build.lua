-- rpiv_todo.nvim.install.build: the path without a prebuilt asset. cargo builds the module
-- (as scripts/build-module.sh luajit does) and the server (`cargo build --release -p
-- rpiv_todo_mcp`); each is copied into a temporary file in lib/, the module loaded once
-- and the server run once, then both are moved into place like a download
-- (rpiv_todo.nvim.install.lib).
-- Neovim glue: cargo and the SHA-256 tool through rpiv_todo.nvim.install.proc, libuv's
-- uname.

local fail = require("rpiv_todo.nvim.install.fail").fail
local lib = require("rpiv_todo.nvim.install.lib")
local proc = require("rpiv_todo.nvim.install.proc")
local smoke = require("rpiv_todo.nvim.install.smoke")

local M = {}
local H = {}

---@return table uv
function H.uv()
  return vim.uv or vim.loop
end

---The library cargo writes for this OS, and its extension.
---@param target_dir string
---@return string path, string ext "so" | "dylib" | "dll"
function M.cargo_output(target_dir)
  local os_name = (H.uv().os_uname().sysname or "")
  if os_name == "Darwin" then
    return target_dir .. "/release/librpiv_todo.dylib", "dylib"
  elseif os_name == "Windows_NT" then
    return target_dir .. "/release/rpiv_todo.dll", "dll"
  end
  return target_dir .. "/release/librpiv_todo.so", "so"
end

-- Run one cargo build; nil and cargo's last words when it fails.
function H.cargo(cmd, env)
  local code, output = proc.run(cmd, env)
  if code ~= 0 then
    return nil, code and ("cargo build exited with " .. code .. ":\n" .. output:gsub("%s+$", ""):sub(-1500)) or output
  end
  return true
end

-- Copy what cargo built into a temporary file in lib/; the file and its SHA-256, or nil
-- and why.
function H.take_build(ctx, built, suffix)
  local data = lib.read(built)
  if data == nil then
    return nil, nil, "cargo built no " .. built
  end
  local tmp = lib.temp(ctx.dir, "build") .. (suffix or "")
  local ok, err = lib.write(tmp, data)
  if not ok then
    return nil, nil, "cannot copy it into " .. ctx.dir .. ": " .. tostring(err)
  end
  local hash, herr = proc.sha256_file(tmp)
  if hash == nil then
    os.remove(tmp)
    return nil, nil, herr
  end
  return tmp, hash
end

---Build with cargo (the module as scripts/build-module.sh luajit does, the server as
---`cargo build --release -p rpiv_todo_mcp`), then load the module once, run the server
---once, and move both into place like a download.
---@param ctx rpiv_todo.InstallContext
---@return rpiv_todo.Installed|nil installed, string|nil err
function M.build(ctx)
  local todo = "install Rust (https://rustup.rs) and run :TodosInstall again, or "
    .. "run :TodosInstall download when a prebuilt module exists for this platform"
  if vim.fn.executable("cargo") ~= 1 then
    return nil, fail("build from source", "cargo is not on PATH", nil, todo)
  end
  local target_dir = ctx.root .. "/target/module-luajit"
  local env
  if H.uv().os_uname().sysname == "Darwin" then
    -- A macOS module leaves the Lua symbols for the host process to provide.
    env = { RUSTFLAGS = (vim.env.RUSTFLAGS or "") .. " -C link-arg=-undefined -C link-arg=dynamic_lookup" }
  end
  ctx.progress("building the module with cargo (minutes the first time)")
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
  }, env)
  if not ok then
    return nil, fail("build from source", err, nil, todo)
  end
  local tmp, hash, terr = H.take_build(ctx, M.cargo_output(target_dir))
  if not tmp then
    return nil, fail("build from source", terr, nil, todo)
  end
  local _, lerr = smoke.load_module(tmp, ctx.version)
  if lerr then
    os.remove(tmp)
    return nil, fail("load", lerr .. "; nothing was changed", nil, todo)
  end
  local server_tmp, server_hash
  if ctx.server then
    -- The workspace's own target folder: scripts/mcp.sh also finds the build there.
    local server_dir = ctx.root .. "/target"
    ctx.progress("building the MCP server with cargo")
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
      server_tmp, server_hash, err = H.take_build(ctx, server_dir .. "/release/rpiv_todo_mcp" .. ctx.exe, ctx.exe)
    end
    if server_tmp then
      ok, err = smoke.run_server(server_tmp, ctx.version)
      if not ok then
        os.remove(server_tmp)
        err = "the server built: " .. err
      end
    end
    if not ok or not server_tmp then
      os.remove(tmp)
      return nil, fail("build from source", tostring(err) .. "; nothing was changed", nil, todo)
    end
  end
  local triple = ctx.target and ctx.target.triple or (ctx.platform.os .. "-" .. tostring(ctx.platform.arch))
  local path, merr = lib.place(ctx, tmp, hash, { source = "built", triple = triple })
  if not path then
    os.remove(tmp)
    if server_tmp then
      os.remove(server_tmp)
    end
    return nil, fail("move into place", merr, nil, "check that " .. ctx.dir .. " is writable")
  end
  local spath
  if server_tmp then
    local serr
    spath, serr = lib.place(ctx, server_tmp, server_hash, { source = "built", triple = triple }, "server")
    if not spath then
      os.remove(server_tmp)
      return nil, fail("move into place", serr, nil, "check that " .. ctx.dir .. " is writable")
    end
  end
  return { path = path, how = "built", server_path = spath }
end

return M
