-- tests/lua/json.lua: a small JSON decoder for the Lua test scripts, used when lua-cjson
-- is not installed for the interpreter running them. Decoding only; `null` becomes
-- `M.null` (or the `null` value given to `decode`), numbers become Lua numbers.

local M = {}
local H = {}

M.null = setmetatable({}, {
  __tostring = function()
    return "null"
  end,
})

H.escapes = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" }

function H.fail(s, i, what)
  error(string.format("json: %s at byte %d near %q", what, i, s:sub(i, i + 10)), 0)
end

function H.skip(s, i)
  return (s:find("[^ \t\r\n]", i)) or (#s + 1)
end

function H.utf8(cp)
  if cp < 0x80 then
    return string.char(cp)
  elseif cp < 0x800 then
    return string.char(0xC0 + math.floor(cp / 0x40), 0x80 + cp % 0x40)
  elseif cp < 0x10000 then
    return string.char(0xE0 + math.floor(cp / 0x1000), 0x80 + math.floor(cp / 0x40) % 0x40, 0x80 + cp % 0x40)
  end
  return string.char(
    0xF0 + math.floor(cp / 0x40000),
    0x80 + math.floor(cp / 0x1000) % 0x40,
    0x80 + math.floor(cp / 0x40) % 0x40,
    0x80 + cp % 0x40
  )
end

function H.string(s, i)
  local out = {}
  local j = i + 1
  while true do
    local k = s:find('["\\]', j)
    if not k then
      H.fail(s, i, "unterminated string")
    end
    out[#out + 1] = s:sub(j, k - 1)
    if s:sub(k, k) == '"' then
      return table.concat(out), k + 1
    end
    local e = s:sub(k + 1, k + 1)
    if e == "u" then
      local cp = tonumber(s:sub(k + 2, k + 5), 16)
      if not cp then
        H.fail(s, k, "bad \\u escape")
      end
      j = k + 6
      if cp >= 0xD800 and cp < 0xDC00 and s:sub(j, j + 1) == "\\u" then
        local lo = tonumber(s:sub(j + 2, j + 5), 16)
        if lo and lo >= 0xDC00 and lo < 0xE000 then
          cp = 0x10000 + (cp - 0xD800) * 0x400 + (lo - 0xDC00)
          j = j + 6
        end
      end
      out[#out + 1] = H.utf8(cp)
    elseif H.escapes[e] then
      out[#out + 1] = H.escapes[e]
      j = k + 2
    else
      H.fail(s, k, "bad escape")
    end
  end
end

function H.value(s, i, null, depth)
  if depth > 200 then
    H.fail(s, i, "nesting too deep")
  end
  i = H.skip(s, i)
  local c = s:sub(i, i)
  if c == "{" then
    local obj = {}
    i = H.skip(s, i + 1)
    if s:sub(i, i) == "}" then
      return obj, i + 1
    end
    while true do
      i = H.skip(s, i)
      if s:sub(i, i) ~= '"' then
        H.fail(s, i, "expected a key")
      end
      local key
      key, i = H.string(s, i)
      i = H.skip(s, i)
      if s:sub(i, i) ~= ":" then
        H.fail(s, i, "expected ':'")
      end
      obj[key], i = H.value(s, i + 1, null, depth + 1)
      i = H.skip(s, i)
      local d = s:sub(i, i)
      if d == "}" then
        return obj, i + 1
      elseif d ~= "," then
        H.fail(s, i, "expected ',' or '}'")
      end
      i = i + 1
    end
  elseif c == "[" then
    local arr, n = {}, 0
    i = H.skip(s, i + 1)
    if s:sub(i, i) == "]" then
      return arr, i + 1
    end
    while true do
      n = n + 1
      arr[n], i = H.value(s, i, null, depth + 1)
      i = H.skip(s, i)
      local d = s:sub(i, i)
      if d == "]" then
        return arr, i + 1
      elseif d ~= "," then
        H.fail(s, i, "expected ',' or ']'")
      end
      i = i + 1
    end
  elseif c == '"' then
    return H.string(s, i)
  elseif s:sub(i, i + 3) == "true" then
    return true, i + 4
  elseif s:sub(i, i + 4) == "false" then
    return false, i + 5
  elseif s:sub(i, i + 3) == "null" then
    return null, i + 4
  end
  local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", i)
  if not num or num == "" or not tonumber(num) then
    H.fail(s, i, "unexpected character")
  end
  return tonumber(num), i + #num
end

---Decode one JSON text.
---@param s string
---@param null? any the value `null` decodes to (default `M.null`)
---@return any
function M.decode(s, null)
  if null == nil then
    null = M.null
  end
  local v, i = H.value(s, 1, null, 0)
  i = H.skip(s, i)
  if i <= #s then
    H.fail(s, i, "trailing characters")
  end
  return v
end

return M
