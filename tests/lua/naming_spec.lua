-- tests/lua/naming_spec.lua: the list files' names are the core's alone (src/naming.rs,
-- which the MCP server uses), in every interpreter: persist.lua names, hashes and reads
-- names back through the core on many keys and ids, long ones hashed, odd bytes escaped;
-- there is no Lua copy (no rpiv_todo.sha256), and without the core persist's naming says
-- the module is not built.
local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")

local core = require("rpiv_todo.native")
local persist = require("rpiv_todo.persist")

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

T.test("the core is the naming persist uses, and the only one", function()
  T.eq(type(rawget(core, "file_name")), "function", "core.file_name")
  T.eq(persist.file_name("/home/me/project", "default"), "%2Fhome%2Fme%2Fproject@default.json", "a name")
  T.eq(pcall(require, "rpiv_todo.sha256"), false, "no Lua SHA-256")
  T.eq(
    persist.sha256("abc"),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    "FIPS 180-2's abc, through the core"
  )
end)

T.test("persist's names are the core's on many keys and ids", function()
  local differ, hashed_keys, hashed_ids = 0, 0, 0
  for case = 1, 400 do
    local key, id = text(), text()
    local a = core.file_name(key, id)
    if a ~= persist.file_name(key, id) or core.key_prefix(key) ~= persist.key_prefix(key) then
      differ = differ + 1
      T.eq(persist.file_name(key, id), a, "case " .. case)
    end
    T.eq(a:sub(1, #core.key_prefix(key)), core.key_prefix(key), "the name starts with its key prefix")
    if a:sub(1, 1) == "~" then
      hashed_keys = hashed_keys + 1
      T.eq(a:sub(2, 65), core.sha256(key), "a long key is its SHA-256")
    end
    if a:find("@~", 1, true) then
      hashed_ids = hashed_ids + 1
    end
    local _, _, read = persist.parse_name(a)
    if not a:find("@~", 1, true) and key ~= "" and id ~= "" and key:sub(1, 1) ~= "." and read ~= id then
      differ = differ + 1
      T.eq(read, id, "read back, case " .. case)
    end
  end
  T.eq(differ, 0, "names that differ")
  T.ok(hashed_keys > 40 and hashed_ids > 40, "both limits crossed (" .. hashed_keys .. ", " .. hashed_ids .. ")")
end)

T.test("without the core, persist's naming says the module is not built", function()
  local saved_persist, saved_native = package.loaded["rpiv_todo.persist"], package.loaded["rpiv_todo.native"]
  package.loaded["rpiv_todo.persist"], package.loaded["rpiv_todo.native"] = nil, nil
  package.preload["rpiv_todo.native"] = function()
    error("(rpiv_todo) core: the native module is not built", 0)
  end
  local ok, err = pcall(require("rpiv_todo.persist").file_name, "k", "id")
  package.preload["rpiv_todo.native"] = nil
  package.loaded["rpiv_todo.persist"], package.loaded["rpiv_todo.native"] = saved_persist, saved_native
  T.eq(ok, false, "raises")
  T.contains(tostring(err), "the native module is not built", "the loader's message")
end)

T.finish()
