-- A few lines of test harness shared by the loader specs: named checks that keep going
-- after a failure, TAP-like output on stdout, and one error at the end when anything
-- failed (so `lua5.4 spec.lua` exits non-zero and the Neovim runner reports it).
-- Plain Lua 5.1/5.4/LuaJIT; loaded with dofile(RPIV_ROOT .. "/tests/loader/harness.lua").

local M = {}
local H = { failures = 0, count = 0 }

---Run one named check; an error inside it is a failure, reported with its message.
---@param name string
---@param fn fun()
function M.test(name, fn)
  H.count = H.count + 1
  local ok, err = pcall(fn)
  if ok then
    io.stdout:write("ok - ", name, "\n")
  else
    H.failures = H.failures + 1
    io.stdout:write("not ok - ", name, "\n    ", tostring(err), "\n")
  end
end

---Fail unless `got == want`, naming what was compared.
---@param got any
---@param want any
---@param what string
function M.eq(got, want, what)
  if got ~= want then
    error(string.format("%s: expected %q, got %q", what, tostring(want), tostring(got)), 2)
  end
end

---Fail unless the plain text `needle` occurs in the string `hay`.
---@param hay any
---@param needle string
---@param what string
function M.contains(hay, needle, what)
  if type(hay) ~= "string" or not hay:find(needle, 1, true) then
    error(string.format("%s: expected text containing %q, got %q", what, needle, tostring(hay)), 2)
  end
end

---Print a note line (not a check).
---@param text string
function M.note(text)
  io.stdout:write("# ", text, "\n")
end

---Raise when any check failed; otherwise print the tally.
function M.finish()
  io.stdout:write(string.format("# %d checks, %d failed\n", H.count, H.failures))
  io.stdout:flush()
  if H.failures > 0 then
    error(string.format("%d of %d loader checks failed", H.failures, H.count), 0)
  end
end

---The repository root (RPIV_ROOT, set by scripts/test.sh and the Neovim runner).
---@return string
function M.root()
  local root = os.getenv("RPIV_ROOT")
  if not root or root == "" then
    error("RPIV_ROOT is not set: run the loader specs through scripts/test.sh", 0)
  end
  return root
end

---The crate version from Cargo.toml's [package] table.
---@return string|nil
function M.cargo_version()
  local file = io.open(M.root() .. "/Cargo.toml", "r")
  if not file then
    return nil
  end
  local in_package, version = false, nil
  for line in file:lines() do
    local section = line:match("^%[(.-)%]")
    if section then
      in_package = section == "package"
    elseif in_package and not version then
      version = line:match('^version%s*=%s*"([^"]+)"')
    end
  end
  file:close()
  return version
end

return M
