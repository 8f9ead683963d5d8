-- bench/sizes.lua: what the co-owned list adds to what the model and the user read, in
-- bytes: the note that ends a reply when others changed the list, and a line of the
-- Markdown checklist. Typical and worst cases; prints figures, asserts nothing.
--
--   luajit bench/sizes.lua     (the module on package.cpath, the scripts on package.path)

local core = require("rpiv_todo.core")

local function note_of(list)
  local text = list:apply({ action = "list" }).content[1].text
  return text:match("\n(%(Changed by others.*%))$") or ""
end

-- Typical: the example of the issue, two edits by the user and one by an agent.
local typical = core.list()
for _, s in ipairs({ "Parse the config", "Check the tree", "Emit code", "Ship" }) do
  typical:apply({ action = "create", subject = s })
end
typical:apply({ action = "list" })
typical:apply({ action = "update", id = 2, status = "completed" }, "user")
typical:apply({ action = "create", subject = "Write the changelog" }, "user")
typical:apply({ action = "delete", id = 4 }, "codex")

-- Worst: five changes named (subjects of 2048 bytes, four bytes a character, cut to 48
-- characters in the note), a writer's name of 64 bytes, and many more counted.
local worst = core.list()
worst:apply({ action = "list" })
local name = string.rep("n", 64)
for _ = 1, 200 do
  worst:apply({ action = "create", subject = string.rep("\240\159\152\128", 512) }, name)
end

local function md_line(subject, deps)
  local list = core.list()
  for i = 1, deps do
    list:apply({ action = "create", subject = "t" .. i })
  end
  local ids = {}
  for i = 1, deps do
    ids[i] = i
  end
  list:apply({ action = "create", subject = subject, blockedBy = deps > 0 and ids or nil })
  local text = core.markdown(list)
  local longest = 0
  for line in text:gmatch("[^\n]+") do
    longest = math.max(longest, #line)
  end
  return longest
end

print("the co-owned list, bytes:")
print(string.format("  %-58s %6d", "change note, the issue's example (3 changes)", #note_of(typical)))
print(string.format("  %-58s %6d", "change note, worst (5 named, 2048-byte subjects, 195 more)", #note_of(worst)))
print(
  string.format(
    "  %-58s %6d",
    "checklist line, a 24-byte subject waiting on 2 ids",
    md_line("Wire the limiter into /api", 2)
  )
)
print(string.format("  %-58s %6d", "checklist line, a 2048-byte subject, no ids", md_line(string.rep("x", 2048), 0)))
print(
  string.format(
    "  %-58s %6d",
    "checklist line, worst (2048 bytes, waiting on 1000 ids)",
    md_line(string.rep("x", 2048), 1000)
  )
)
