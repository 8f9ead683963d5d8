-- rpiv_todo.sha256: SHA-256 (FIPS 180-4) of a byte string, as 64 lowercase hex digits.
--
--   require("rpiv_todo.sha256")(data)
--
-- One algorithm over two sets of 32-bit operations: LuaJIT's `bit` library where it exists
-- (the installer hashes a whole native module with it), else plain arithmetic, which runs
-- the same in Lua 5.1 and 5.4 (file names of long session ids are hashed with it).
-- Plain Lua: no native call, no vim.*.

local H = {}

-- stylua: ignore
H.K = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5,
  0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
  0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
  0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
  0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
  0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
  0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}
H.INIT = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 }
H.W32 = 4294967296

---The operations from LuaJIT's `bit` library (results are signed 32-bit numbers).
---@return table|nil
function H.bit_ops()
  local ok, bit = pcall(require, "bit")
  if not ok or type(bit) ~= "table" or type(bit.ror) ~= "function" then
    return nil
  end
  local tobit = bit.tobit
  return {
    band = bit.band,
    bxor = bit.bxor,
    bnot = bit.bnot,
    ror = bit.ror,
    shr = bit.rshift,
    add = function(a, b, c, d, e)
      return tobit(a + b + (c or 0) + (d or 0) + (e or 0))
    end,
    hex = bit.tohex,
  }
end

---The same operations in arithmetic (numbers in [0, 2^32)), through 4-bit tables.
---@return table
function H.arith_ops()
  local W32 = H.W32
  local XOR4, AND4 = {}, {}
  for x = 0, 15 do
    for y = 0, 15 do
      local r_xor, r_and, b, p, q = 0, 0, 1, x, y
      for _ = 1, 4 do
        local u, v = p % 2, q % 2
        if u ~= v then
          r_xor = r_xor + b
        end
        if u == 1 and v == 1 then
          r_and = r_and + b
        end
        p, q, b = (p - u) / 2, (q - v) / 2, b * 2
      end
      XOR4[x * 16 + y + 1], AND4[x * 16 + y + 1] = r_xor, r_and
    end
  end
  local function op(t)
    local function f(a, b, c)
      local r, m, x0, y0 = 0, 1, a, b
      for _ = 1, 8 do
        local x, y = x0 % 16, y0 % 16
        r = r + t[x * 16 + y + 1] * m
        x0, y0, m = (x0 - x) / 16, (y0 - y) / 16, m * 16
      end
      if c ~= nil then
        return f(r, c)
      end
      return r
    end
    return f
  end
  return {
    band = op(AND4),
    bxor = op(XOR4),
    bnot = function(x)
      return W32 - 1 - x
    end,
    ror = function(x, n)
      local low = x % 2 ^ n
      return (x - low) / 2 ^ n + low * 2 ^ (32 - n)
    end,
    shr = function(x, n)
      return (x - x % 2 ^ n) / 2 ^ n
    end,
    add = function(a, b, c, d, e)
      return (a + b + (c or 0) + (d or 0) + (e or 0)) % W32
    end,
    hex = function(x)
      return string.format("%08x", x)
    end,
  }
end

H.ops = nil -- chosen at the first call

---@param data string
---@return string hex 64 lowercase hex digits
local function sha256(data)
  local o = H.ops
  if o == nil then
    o = H.bit_ops() or H.arith_ops()
    H.ops = o
  end
  local band, bxor, bnot, ror, shr, add = o.band, o.bxor, o.bnot, o.ror, o.shr, o.add
  local K, byte = H.K, string.byte
  local len = #data
  local bits, tail = len * 8, {}
  for i = 8, 1, -1 do
    local b = bits % 256
    tail[i] = string.char(b)
    bits = (bits - b) / 256
  end
  data = data .. "\128" .. string.rep("\0", (55 - len) % 64) .. table.concat(tail)
  local h0, h1, h2, h3 = H.INIT[1], H.INIT[2], H.INIT[3], H.INIT[4]
  local h4, h5, h6, h7 = H.INIT[5], H.INIT[6], H.INIT[7], H.INIT[8]
  local w = {}
  for chunk = 1, #data, 64 do
    for i = 0, 15 do
      local a, b, c, d = byte(data, chunk + 4 * i, chunk + 4 * i + 3)
      w[i] = add(((a * 256 + b) * 256 + c) * 256 + d, 0)
    end
    for i = 16, 63 do
      local x, y = w[i - 15], w[i - 2]
      local s0 = bxor(ror(x, 7), ror(x, 18), shr(x, 3))
      local s1 = bxor(ror(y, 17), ror(y, 19), shr(y, 10))
      w[i] = add(w[i - 16], s0, w[i - 7], s1)
    end
    local a, b, c, d, e, f, g, h = h0, h1, h2, h3, h4, h5, h6, h7
    for i = 0, 63 do
      local S1 = bxor(ror(e, 6), ror(e, 11), ror(e, 25))
      local ch = bxor(band(e, f), band(bnot(e), g))
      local t1 = add(h, S1, ch, add(K[i + 1], 0), w[i])
      local S0 = bxor(ror(a, 2), ror(a, 13), ror(a, 22))
      local maj = bxor(band(a, b), band(a, c), band(b, c))
      h, g, f, e = g, f, e, add(d, t1)
      d, c, b, a = c, b, a, add(t1, S0, maj)
    end
    h0, h1, h2, h3 = add(h0, a), add(h1, b), add(h2, c), add(h3, d)
    h4, h5, h6, h7 = add(h4, e), add(h5, f), add(h6, g), add(h7, h)
  end
  local hex = o.hex
  return hex(h0) .. hex(h1) .. hex(h2) .. hex(h3) .. hex(h4) .. hex(h5) .. hex(h6) .. hex(h7)
end

return sha256
