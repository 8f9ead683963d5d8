-- rpiv_todo.nvim.install.fetch: the download path. Each asset and its .sha256 come with curl
-- (which reads HTTPS_PROXY, https_proxy, ALL_PROXY and NO_PROXY itself), or from lib/
-- when both were put there by hand, into a temporary file in lib/; the asset is checked
-- against its .sha256, the module loaded once and the server run once, and only then is
-- each moved into place (rpiv_todo.nvim.install.lib). Any failure before the moves leaves the
-- previous files and records as they were.
-- Neovim glue: curl and the SHA-256 tool through rpiv_todo.nvim.install.proc.

local fail = require("rpiv_todo.nvim.install.fail").fail
local lib = require("rpiv_todo.nvim.install.lib")
local release = require("rpiv_todo.nvim.install.release")
local proc = require("rpiv_todo.nvim.install.proc")
local smoke = require("rpiv_todo.nvim.install.smoke")

local M = {}
local H = {}

-- curl URL into the file OUT. Returns true, or nil and curl's own words.
function H.curl(url, out)
  local code, output = proc.run({
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
  if code ~= 0 then
    os.remove(out)
    return nil, code and ("curl exited with " .. code .. ": " .. output:gsub("%s+$", "")) or output
  end
  return true
end

-- What to do without a network: the files to fetch by hand and the folder to put them in.
function H.offline_advice(ctx)
  local urls = { release.asset_url(ctx.base_url, ctx.version, release.asset_name(ctx.target)) }
  if ctx.server then
    urls[2] = release.asset_url(ctx.base_url, ctx.version, release.server_asset_name(ctx.target))
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
---{ tmp, hash, url, source, by_hand }, or nil, the error and the step that failed
---("download" when the asset could not be fetched at all).
function H.fetch(ctx, asset, suffix)
  local url = release.asset_url(ctx.base_url, ctx.version, asset)
  local by_hand = ctx.dir .. "/" .. asset
  local offline = H.offline_advice(ctx)
  local tmp = lib.temp(ctx.dir, "download") .. (suffix or "")
  local data, sums, source
  if lib.exists(by_hand) and lib.exists(by_hand .. ".sha256") then
    -- Put there by hand (offline): use those two files instead of the network.
    url, source = "file://" .. by_hand, "copied"
    data, sums = lib.read(by_hand), lib.read(by_hand .. ".sha256")
    if data == nil or sums == nil then
      return nil, fail("read", "cannot read " .. by_hand .. " or its .sha256", url, offline)
    end
    local ok, err = lib.write(tmp, data)
    if not ok then
      return nil, fail("copy", err, url, "check that " .. ctx.dir .. " is writable")
    end
  else
    source = "downloaded"
    ctx.progress("downloading " .. url)
    local ok, err = H.curl(url .. ".sha256", tmp .. ".sha256")
    if ok then
      ok, err = H.curl(url, tmp)
    end
    if not ok then
      os.remove(tmp .. ".sha256")
      local proxy = os.getenv("HTTPS_PROXY") or os.getenv("https_proxy") or os.getenv("ALL_PROXY")
      local hint = proxy and (" (curl used the proxy " .. proxy .. ")") or ""
      return nil, fail("download", tostring(err) .. hint, url, offline), "download"
    end
    sums = lib.read(tmp .. ".sha256")
    os.remove(tmp .. ".sha256")
  end
  local want, perr = release.parse_sha256(sums or "", asset)
  local got, herr = proc.sha256_file(tmp)
  if want == nil or got ~= want then
    os.remove(tmp)
    local detail = perr or herr or ("the file's SHA-256 is " .. tostring(got) .. ", the .sha256 says " .. want)
    return nil,
      fail(
        "verify",
        detail .. " (a truncated or altered download); nothing was changed",
        url,
        "run :TodosInstall again; if it keeps failing, " .. offline
      )
  end
  return { tmp = tmp, hash = want, url = url, source = source, by_hand = source == "copied" and by_hand or nil }
end

---Download and verify the module (and the server), load the module once and run the
---server once, then move both into place. When the server's asset cannot be fetched (a
---release or an offline folder without it) the module is installed alone and
---`server_warning` says why; a server that fails its check or does not run still refuses
---the whole install.
---@param ctx rpiv_todo.InstallContext
---@return rpiv_todo.Installed|nil installed, string|nil err
function M.download(ctx)
  local module, err = H.fetch(ctx, release.asset_name(ctx.target))
  if not module then
    return nil, err
  end
  local _, lerr = smoke.load_module(module.tmp, ctx.version)
  if lerr then
    os.remove(module.tmp)
    return nil,
      fail("load", lerr .. "; nothing was changed", module.url, "report it with :checkhealth rpiv_todo's output")
  end
  local server, step, server_warning
  if ctx.server then
    server, err, step = H.fetch(ctx, release.server_asset_name(ctx.target), ctx.exe)
    if not server and step == "download" then
      server_warning = err
    elseif not server then
      os.remove(module.tmp)
      return nil, err
    end
  end
  if server then
    local _, serr = smoke.run_server(server.tmp, ctx.version)
    if serr then
      os.remove(module.tmp)
      os.remove(server.tmp)
      return nil, fail("run the server", serr .. "; nothing was changed", server.url, "report it with the output above")
    end
  end
  local path, merr = lib.place(ctx, module.tmp, module.hash, {
    source = module.source,
    url = module.url,
    triple = ctx.target.triple,
  })
  if not path then
    os.remove(module.tmp)
    if server then
      os.remove(server.tmp)
    end
    return nil, fail("move into place", merr, module.url, "check that " .. ctx.dir .. " is writable")
  end
  local spath
  if server then
    local serr
    spath, serr = lib.place(ctx, server.tmp, server.hash, {
      source = server.source,
      url = server.url,
      triple = ctx.target.triple,
    }, "server")
    if not spath then
      os.remove(server.tmp)
      return nil, fail("move into place", serr, server.url, "check that " .. ctx.dir .. " is writable")
    end
  end
  for _, fetched in ipairs({ module, server or {} }) do
    if fetched.by_hand then
      os.remove(fetched.by_hand)
      os.remove(fetched.by_hand .. ".sha256")
    end
  end
  return { path = path, how = module.source, server_path = spath, server_warning = server_warning }
end

return M
