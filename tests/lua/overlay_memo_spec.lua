-- tests/lua/overlay_memo_spec.lua: a live overlay reuses the lines of rows that did not
-- change since its last render. Whatever the calls do in between (status changes, new
-- and deleted tasks, blockers, other widths, another theme, texts cut at the width), its
-- lines are the stateless render's, and a line handed out is the caller's own.

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")

local todo = require("rpiv_todo")
local overlay = todo.overlay

---A line as text (segments joined, with their styles), for comparing.
local function shown(line)
  if type(line) ~= "table" then
    return tostring(line)
  end
  local parts = {}
  for i, seg in ipairs(line) do
    parts[i] = table.concat({
      seg[1],
      tostring(seg[2]),
      seg.bold and "b" or "",
      seg.strikethrough and "s" or "",
    }, "|")
  end
  return table.concat(parts, " ")
end

local function all(lines)
  local out = {}
  for i, line in ipairs(lines) do
    out[i] = shown(line)
  end
  return out
end

T.test("a live overlay's lines are the stateless render's through a run of changes", function()
  local s = todo.session("memo")
  for i = 1, 14 do
    s:execute({ action = "create", subject = "Task " .. i .. string.rep(" long words", i % 4) })
  end
  local themes = { "segments", "plain", "ansi" }
  local statuses = { "in_progress", "pending", "completed" }
  local lives = {}
  for _, theme in ipairs(themes) do
    lives[theme] = overlay.new({ theme = theme })
  end
  local seed = 7
  local function rand(n)
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed % n + 1
  end
  local checked = 0
  for step = 1, 120 do
    local what = rand(6)
    if what <= 3 then
      s:execute({ action = "update", id = rand(14), status = statuses[rand(3)] })
    elseif what == 4 then
      s:execute({ action = "update", id = rand(14), activeForm = "Working " .. step })
    elseif what == 5 then
      s:execute({ action = "update", id = rand(14), addBlockedBy = { rand(14) } })
    else
      s:execute({ action = "update", id = rand(14), subject = "Renamed " .. step })
    end
    local width = ({ 24, 40, 80, nil })[rand(4)]
    for _, theme in ipairs(themes) do
      local got = all(lives[theme]:render(s, width))
      local want = all(overlay.render(s, { width = width, theme = theme }))
      T.same(got, want, "step " .. step .. ", " .. theme .. ", width " .. tostring(width))
      checked = checked + 1
    end
  end
  T.eq(checked, 360, "renders compared")
end)

T.test("a line handed out is the caller's: changing it changes no later render", function()
  local s = todo.session("mine")
  s:execute({ action = "create", subject = "Keep me" })
  s:execute({ action = "create", subject = "Me too" })
  local ov = overlay.new({ theme = "segments" })
  local want = all(overlay.render(s, { width = 80, theme = "segments" }))
  -- The first render builds every line, the second reuses them: change both.
  for _ = 1, 2 do
    for _, line in ipairs(ov:render(s, 80)) do
      for _, seg in ipairs(line) do
        seg[1] = "changed"
      end
    end
  end
  T.same(all(ov:render(s, 80)), want, "unchanged")
end)

T.finish()
