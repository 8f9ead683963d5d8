-- tests/lua/same_tables.lua: a function `(a, b)` that compares two values deeply (same
-- keys; strings and other values raw-equal, numbers equal bit for bit so -0 differs from 0;
-- tables within, with the same metatable) and gives nil when they are the same, else where
-- they differ. The Rust unit tests of the boundary load it (`crate::lua::same_tables`).
local function same(a, b, path)
  if type(a) ~= type(b) then
    return path .. ": " .. type(a) .. " vs " .. type(b)
  end
  if type(a) == "number" then
    if a ~= b or 1 / a ~= 1 / b then
      return path .. ": " .. tostring(a) .. " vs " .. tostring(b)
    end
  elseif type(a) == "table" then
    if getmetatable(a) ~= getmetatable(b) then
      return path .. ": metatables differ"
    end
    for k, v in pairs(a) do
      local bad = same(v, rawget(b, k), path .. "." .. tostring(k))
      if bad then
        return bad
      end
    end
    for k in pairs(b) do
      if rawget(a, k) == nil then
        return path .. "." .. tostring(k) .. ": only in the second"
      end
    end
  elseif not rawequal(a, b) then
    return path .. ": " .. tostring(a) .. " vs " .. tostring(b)
  end
end
return function(a, b)
  return same(a, b, "state")
end
