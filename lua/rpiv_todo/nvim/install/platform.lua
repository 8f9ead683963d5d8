-- rpiv_todo.nvim.install.platform: which prebuilt asset fits the running Neovim. The targets a
-- release carries, the oldest glibc the Linux gnu ones run on, and this process's OS, CPU
-- and (on Linux) C library, told apart without a compiler.
-- Neovim glue: libuv's uname and vim.fn.glob.

local M = {}
local H = {}

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

-- The oldest glibc the Linux gnu modules run on (scripts/package.sh checks the symbols).
M.MIN_GLIBC = "2.17"

H.ARCH = { x86_64 = "x86_64", amd64 = "x86_64", x64 = "x86_64", aarch64 = "aarch64", arm64 = "aarch64" }

---Compare dotted versions ("2.17" < "2.31").
---@param a string|number
---@param b string|number
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
---@return string libc "gnu" | "musl"
---@return string|nil version
---@return string how how it was found
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

return M
