-- tests/lua/json.lua: a small JSON decoder for the Lua test scripts, used when lua-cjson
-- is not installed for the interpreter running them. Decoding only; `null` becomes
-- `M.null` (or the `null` value given to `decode`), numbers become Lua numbers. Given a
-- `spans` table, `decode` also says where each object and array stood in the text, so a
-- test can hand a part of a recorded line on as the very JSON text it was (key order
-- included), not as a re-encoding.

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

-- A table's span: where it starts and ends in the text, when the caller asked for spans.
function H.spanned(v, first, next_i)
  if H.spans then
    H.spans[v] = { first, next_i - 1 }
  end
  return v, next_i
end

function H.value(s, i, null, depth)
  if depth > 200 then
    H.fail(s, i, "nesting too deep")
  end
  i = H.skip(s, i)
  local c = s:sub(i, i)
  if c == "{" or c == "[" then
    return H.spanned(H.container(s, i, c, null, depth))
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

-- An object or an array starting at `i`: the table, where it started, and the index after it.
function H.container(s, i, c, null, depth)
  local first = i
  if c == "{" then
    local obj = {}
    i = H.skip(s, i + 1)
    if s:sub(i, i) == "}" then
      return obj, first, i + 1
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
        return obj, first, i + 1
      elseif d ~= "," then
        H.fail(s, i, "expected ',' or '}'")
      end
      i = i + 1
    end
  else
    local arr, n = {}, 0
    i = H.skip(s, i + 1)
    if s:sub(i, i) == "]" then
      return arr, first, i + 1
    end
    while true do
      n = n + 1
      arr[n], i = H.value(s, i, null, depth + 1)
      i = H.skip(s, i)
      local d = s:sub(i, i)
      if d == "]" then
        return arr, first, i + 1
      elseif d ~= "," then
        H.fail(s, i, "expected ',' or ']'")
      end
      i = i + 1
    end
  end
end

---Decode one JSON text.
---@param s string
---@param null? any the value `null` decodes to (default `M.null`)
---@param spans? table filled with `spans[t] = { first, last }` for every object and array `t`
---@return any
function M.decode(s, null, spans)
  if null == nil then
    null = M.null
  end
  H.spans = spans
  local ok, v, i = pcall(H.value, s, 1, null, 0)
  H.spans = nil
  if not ok then
    error(v, 0)
  end
  i = H.skip(s, i)
  if i <= #s then
    H.fail(s, i, "trailing characters")
  end
  return v
end

---Every non-blank line of a JSON Lines text, decoded. Each entry is `{ value = v, source =
---fn }`, where `source(part)` is the JSON text, as written in the line, of an object or array
---`part` decoded from it.
---@param text string
---@param null? any the value `null` decodes to (default `M.null`)
---@return { value: any, source: fun(part: table): string }[]
function M.decode_lines(text, null)
  local out = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    if line:find("%S") then
      local spans = {}
      local value = M.decode(line, null, spans)
      out[#out + 1] = {
        value = value,
        source = function(part)
          local span = assert(spans[part], "not an object or array of this line")
          return line:sub(span[1], span[2])
        end,
      }
    end
  end
  return out
end

return M
