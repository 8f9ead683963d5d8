-- tests/lua/naming_spec.lua: the list files' names, the core's (src/naming.rs, which the MCP
-- server uses) and persist.lua's plain-Lua copy (rpiv_todo.sha256), agree in every
-- interpreter: on many keys and ids, long ones hashed, odd bytes escaped, and on reading
-- names back.
local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")

local core = require("rpiv_todo.native")
local persist = require("rpiv_todo.persist")

-- A second copy of persist.lua that finds no core: its plain-Lua naming.
local function plain_persist()
  local saved_persist, saved_native = package.loaded["rpiv_todo.persist"], package.loaded["rpiv_todo.native"]
  package.loaded["rpiv_todo.persist"], package.loaded["rpiv_todo.native"] = nil, nil
  package.preload["rpiv_todo.native"] = function()
    error("no core for this copy")
  end
  local plain = require("rpiv_todo.persist")
  plain.key_prefix("k") -- it looks for the core now, once, and finds none
  package.preload["rpiv_todo.native"] = nil
  package.loaded["rpiv_todo.persist"], package.loaded["rpiv_todo.native"] = saved_persist, saved_native
  return plain
end
local plain = plain_persist()

-- Deterministic bytes (Park and Miller's generator, exact in a double; math.random
-- differs between interpreters), with every kind of byte and lengths on both sides of the
-- limits.
local seed = 12345
local function rand(n)
  seed = (seed * 16807) % 2147483647
  return seed % n
end
local ODD = { "%", "@", "/", "~", " ", "\0", "\n", "\\", ":", "\255", "\128" }
local function text()
  local lengths = { rand(8), 20 + rand(30), 38 + rand(90), rand(300) }
  local parts = {}
  for i = 1, lengths[rand(4) + 1] do
    local kind = rand(3)
    if kind == 0 then
      local c = rand(12) + 1
      parts[i] = ("abcXYZ019._-"):sub(c, c)
    elseif kind == 1 then
      parts[i] = ODD[rand(#ODD) + 1]
    else
      parts[i] = string.char(rand(256))
    end
  end
  return table.concat(parts)
end

T.test("the core is the naming persist uses", function()
  T.eq(type(rawget(core, "file_name")), "function", "core.file_name")
  T.eq(persist.file_name("/home/me/project", "default"), "%2Fhome%2Fme%2Fproject@default.json", "a name")
  T.eq(plain.file_name("/home/me/project", "default"), "%2Fhome%2Fme%2Fproject@default.json", "the plain copy")
  T.eq(package.loaded["rpiv_todo.sha256"] ~= nil, false, "no Lua SHA-256 loaded by the core's naming")
  plain.sha256("x")
  T.eq(package.loaded["rpiv_todo.sha256"] ~= nil, true, "the plain copy hashes in Lua")
end)

T.test("the core's names and the plain-Lua names agree", function()
  local differ, hashed_keys, hashed_ids = 0, 0, 0
  for case = 1, 400 do
    local key, id = text(), text()
    local a, b = core.file_name(key, id), plain.file_name(key, id)
    if a ~= b or core.key_prefix(key) ~= plain.key_prefix(key) then
      differ = differ + 1
      T.eq(a, b, "case " .. case)
    end
    if a:sub(1, 1) == "~" then
      hashed_keys = hashed_keys + 1
    end
    if a:find("@~", 1, true) then
      hashed_ids = hashed_ids + 1
    end
    for _, name in ipairs({ a, text(), text() .. "@" .. text() .. ".json" }) do
      local k1, i1, d1 = core.parse_name(name)
      local k2, i2, d2 = plain.parse_name(name)
      if k1 ~= k2 or i1 ~= i2 or d1 ~= d2 then
        differ = differ + 1
        T.same({ k1, i1, d1 }, { k2, i2, d2 }, "parse case " .. case)
      end
    end
  end
  T.eq(differ, 0, "names that differ")
  T.ok(hashed_keys > 40 and hashed_ids > 40, "both limits crossed (" .. hashed_keys .. ", " .. hashed_ids .. ")")
  for _, n in ipairs({ 0, 1, 55, 56, 63, 64, 65, 120, 121, 1000 }) do
    local s = string.rep("\165", n)
    T.eq(core.sha256(s), plain.sha256(s), "sha256 of " .. n .. " bytes")
  end
end)

T.finish()
