-- tests/nvim/checklist_spec.lua: the list as a Markdown checklist both ways (:Todos edit
-- and :w, :Todos export, :Todos import), and the model told of the user's edits, in
-- headless Neovim 0.7.2 and current (through scripts/nvim-runner.lua).

local N = dofile(os.getenv("RPIV_ROOT") .. "/tests/nvim/helpers.lua")
local T = N.T
local H = {}

N.plugin()
N.capture_notify(H)

local nv

function H.text(result)
  return result.content[1].text
end

function H.lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

function H.tasks()
  local out = {}
  for _, t in ipairs(require("rpiv_todo.session").foreground():state().tasks) do
    out[#out + 1] = "#" .. t.id .. " " .. t.status .. " " .. t.subject
  end
  return out
end

function H.set(buf, lines)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
end

T.test(":Todos edit shows the list as a checklist; :w applies each kind of edit as the user's", function()
  require("rpiv_todo").setup({ locale = "en" })
  nv = require("rpiv_todo.nvim")
  nv.execute({ action = "create", subject = "Write the parser", activeForm = "Writing the parser" })
  nv.execute({ action = "create", subject = "Test it", blockedBy = { 1 } })
  nv.execute({ action = "create", subject = "Read the spec", description = "Both documents" })
  nv.execute({ action = "update", id = 1, status = "in_progress" })
  vim.cmd("Todos edit")
  local buf = vim.api.nvim_get_current_buf()
  T.eq(vim.api.nvim_buf_get_name(buf), "rpiv-todo://checklist/default", "its own buffer")
  local lines = H.lines(buf)
  T.contains(lines[1], "<!-- rpiv_todo: session default. :w applies the changes.", "a heading comment")
  T.same({ unpack(lines, 3) }, {
    "- [/] #1 Write the parser",
    "  > Writing the parser",
    "- [ ] #2 Test it ⛓ #1",
    "- [ ] #3 Read the spec",
    "  Both documents",
  }, "one task a line, activeForm and description indented")
  H.notes = {}
  -- #1 done, #2 renamed, #3 removed, a new task in progress, and two bad lines.
  H.set(buf, {
    lines[1],
    "",
    "- [x] #1 Write the parser",
    "  > Writing the parser",
    "- [ ] #2 Test the parser ⛓ #1",
    "- [/] Write the changelog",
    "  > Writing the changelog",
    "- [ ] #9 Not a task of this list",
    "- [?] #2 A box that is not one",
  })
  vim.cmd("write")
  T.same(H.tasks(), {
    "#1 completed Write the parser",
    "#2 pending Test the parser",
    "#3 deleted Read the spec",
    "#4 in_progress Write the changelog",
  }, "every edit that could apply did")
  local note = H.notes[#H.notes]
  T.eq(note.level, vim.log.levels.WARN, "a warning: two lines were refused")
  T.eq(
    note.msg,
    table.concat({
      "rpiv_todo: checklist: 5 changes",
      "  Updated #1 (in_progress → completed)",
      "  Updated #2",
      "  Created #4: Write the changelog (pending)",
      "  Updated #4 (pending → in_progress)",
      "  Deleted #3: Read the spec",
      "  not applied: line 8: #9 is not in the list; remove the id to add a new task",
      "  not applied: line 9: [?] is not a box; use [ ] pending, [/] in progress or [x] completed",
    }, "\n"),
    "what was done, and each refused line with its number"
  )
  T.same({ unpack(H.lines(buf), 3) }, {
    "- [x] #1 Write the parser",
    "  > Writing the parser",
    "- [ ] #2 Test the parser ⛓ #1",
    "- [/] #4 Write the changelog",
    "  > Writing the changelog",
  }, "the buffer shows the list as saved")
  T.eq(vim.bo[buf].modified, false, "and is unmodified")
  -- The model hears of the user's edits once, at its next call.
  local r = nv.execute({ action = "get", id = 2 })
  T.contains(
    H.text(r),
    "\n(Changed by others since your last call: #1 completed by the user; #2 changed by the user (subject); "
      .. '#4 "Write the changelog" added by the user; #4 started by the user; #3 deleted by the user.)',
    "named, in the order made"
  )
  T.eq(H.text(nv.execute({ action = "get", id = 2 })):find("Changed by others", 1, true), nil, "once")
  vim.cmd("bwipeout!")
end)

T.test("a task another writer changed after the buffer was made is never written over", function()
  local dir = N.tempdir()
  require("rpiv_todo.session").reset()
  require("rpiv_todo.persist").enable({ dir = dir, key = "/project" })
  nv.execute({ action = "create", subject = "One" })
  nv.execute({ action = "create", subject = "Two" })
  vim.cmd("Todos edit")
  local buf = vim.api.nvim_get_current_buf()
  -- Another program (an MCP server, say) changes #2 in the file.
  local other = require("rpiv_todo.core").list()
  other:bind(require("rpiv_todo.persist").path("default"))
  other:set_writer("codex")
  T.eq(H.text(other:apply({ action = "update", id = 2, subject = "Two, as codex has it" })), "Updated #2", "codex")
  H.set(buf, { "- [x] #1 One", "- [ ] #2 Two, as the user has it" })
  H.notes = {}
  vim.cmd("write")
  T.same(
    H.tasks(),
    { "#1 completed One", "#2 pending Two, as codex has it" },
    "the user's #1 applies, codex's #2 stands"
  )
  T.contains(
    H.notes[#H.notes].msg,
    "not applied: line 2: #2 was changed by another writer since this checklist was made",
    "the refused line, with its number"
  )
  T.same(H.lines(buf), {
    H.lines(buf)[1],
    "",
    "- [x] #1 One",
    "- [ ] #2 Two, as codex has it",
  }, "the buffer shows the list as it is")
  vim.cmd("bwipeout!")
  require("rpiv_todo.persist").disable()
end)

T.test(":Todos export writes the checklist; :Todos import adds a file's items with their ⛓", function()
  require("rpiv_todo.session").reset()
  nv.execute({ action = "create", subject = "Kept" })
  local dir = N.tempdir()
  vim.cmd("Todos export " .. dir .. "/out.md")
  T.eq(table.concat(vim.fn.readfile(dir .. "/out.md"), "\n"), "- [ ] #1 Kept", "the file")
  vim.fn.writefile({
    "# A plan from elsewhere",
    "- [x] #7 Read the issue",
    "- [ ] #8 Fix it ⛓ #7",
    "- [ ] Ship ⛓ #8, #99",
    "Notes that are not items.",
  }, dir .. "/plan.md")
  H.notes = {}
  vim.cmd("Todos import " .. dir .. "/plan.md")
  T.same(H.tasks(), {
    "#1 pending Kept",
    "#2 completed Read the issue",
    "#3 pending Fix it",
    "#4 pending Ship",
  }, "added after what was there")
  local state = require("rpiv_todo.session").foreground():state()
  T.same(state.tasks[3].blockedBy, { 2 }, "⛓ #7 is the new #2")
  T.same(state.tasks[4].blockedBy, { 3 }, "⛓ #8 is the new #3; #99 was not in the file")
  T.contains(H.notes[#H.notes].msg, "not applied: line 4: waits for #99, which is not in the file; left out", "said")
  vim.cmd("Todos export")
  T.same(
    H.lines(0),
    { "- [ ] #1 Kept", "- [x] #2 Read the issue", "- [ ] #3 Fix it ⛓ #2", "- [ ] #4 Ship ⛓ #3" },
    "to a buffer"
  )
end)

T.finish()
