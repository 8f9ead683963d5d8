-- tests/install/async_spec.lua: `start()`, what :TodosInstall runs with a screen attached,
-- downloads without blocking on Neovim 0.10+ (curl, the SHA-256 program and the server's
-- `--version` through vim.system): it returns before the install ends, the main loop
-- keeps running, a second install is refused while one runs, a tampered asset is refused
-- through on_done with the earlier files untouched, and the good release is put in place.
-- Run by tests/install/install.sh after refuse_spec.lua, in the same clone, in the
-- current Neovim only (0.7.2 has no vim.system: start() is run() there).

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local C = dofile(os.getenv("RPIV_ROOT") .. "/tests/install/common.lua")
local H = {}

H.install = require("rpiv_todo.nvim.install")

---start(opts) and wait for on_done; what it returned at once, what on_done got, how many
---times a 5 ms timer ran on the main loop meanwhile, and whether on_done had run when
---start() returned.
function H.start(opts)
  local done, got = false, nil
  local ticks = 0
  local timer = (vim.uv or vim.loop).new_timer()
  timer:start(0, 5, function()
    ticks = ticks + 1
  end)
  local started = { H.install.start(opts, function(ok, err)
    done, got = true, { ok = ok, err = err }
  end) }
  local done_at_return = done
  local second = { H.install.start({ quiet = true }) }
  vim.wait(120000, function()
    return done
  end, 10)
  timer:stop()
  timer:close()
  return { started = started, second = second, got = got, ticks = ticks, done_at_return = done_at_return }
end

T.test("Neovim has vim.system: start() does not block", function()
  T.eq(type(vim.system), "function", "vim.system")
end)

T.test("a tampered asset through start(): refused in on_done, the earlier files as they were", function()
  local record = C.read(C.root .. "/lib/installed.txt")
  local server_record = C.read(C.root .. "/lib/mcp.txt")
  local r =
    H.start({ base_url = C.release:gsub("/good$", "/tampered"), force = true, from_source = false, quiet = true })
  T.same(r.started, { true }, "started")
  T.eq(r.done_at_return, false, "not done when start() returned")
  T.eq(r.second[1], nil, "a second install is refused while one runs")
  T.contains(tostring(r.second[2]), "another install is still running", "and says why")
  T.eq(r.got and r.got.ok, nil, "on_done: not installed")
  T.contains(tostring(r.got and r.got.err), "(rpiv_todo) install: verify failed", "on_done: the step")
  T.ok(r.ticks > 0, "the main loop ran meanwhile (" .. r.ticks .. " timer ticks)")
  T.eq(C.read(C.root .. "/lib/installed.txt"), record, "the module's record is untouched")
  T.eq(C.read(C.root .. "/lib/mcp.txt"), server_record, "the server's record is untouched")
end)

T.test("the good release through start(): both put in place, and a new Neovim makes a tool call", function()
  local r = H.start({ base_url = C.release, force = true, from_source = false, quiet = true })
  T.same(r.started, { true }, "started")
  T.eq(r.done_at_return, false, "not done when start() returned")
  T.same(r.got, { ok = true }, "on_done: installed")
  T.eq(C.record().source, "downloaded", "record: source")
  T.eq(C.record().url, C.release .. "/v" .. C.version .. "/" .. C.asset, "record: url")
  T.eq(C.server_record().url, C.release .. "/v" .. C.version .. "/" .. C.server_asset, "mcp.txt: url")
  local text = C.tool_call_in_new_nvim()
  T.eq(text, "Created #1: Ship it (pending)", "a new Neovim makes a tool call")
end)

T.finish()
