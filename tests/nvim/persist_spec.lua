-- tests/nvim/persist_spec.lua: lists that survive an editor restart, and the language
-- picker, in headless Neovim 0.7.2 and current (through scripts/nvim-runner.lua). Each
-- case starts child Neovims (v:progpath, tests/nvim/persist_child.lua) in a project
-- directory with their own XDG_STATE_HOME and XDG_CONFIG_HOME: one writes a list with
-- setup({ persist = true }), a second started in the same directory finds it.

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local H = {}

H.root = T.root()
H.run_child = dofile(H.root .. "/tests/nvim/child.lua").run

---A scratch directory (removed at the end).
function H.tempdir()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  H.dirs[#H.dirs + 1] = dir
  return vim.fn.resolve(dir)
end
H.dirs = {}

---Run persist_child.lua as `role`, started in `cwd`, with the given state and config homes.
---@return table what the child recorded
function H.child(role, cwd, state_home, config_home)
  local got = H.run_child({
    root = H.root,
    file = "tests/nvim/persist_child.lua",
    cwd = cwd,
    unset = { "RPIV_TODO_LOCALE" },
    vars = { XDG_STATE_HOME = state_home, XDG_CONFIG_HOME = config_home, RPIV_ROLE = role },
    label = role,
  }, 2)
  return got
end

---The file a project directory's default list goes to under `state_home`.
function H.file(state_home, project)
  local escaped = project:gsub("[^A-Za-z0-9._%-]", function(c)
    return string.format("%%%02X", c:byte())
  end)
  return state_home .. "/nvim/rpiv_todo/" .. escaped .. "@default.json"
end

---Every file under `dir` (recursively), relative to it.
function H.files(dir)
  local out = {}
  for _, f in ipairs(vim.fn.globpath(dir, "**", true, true)) do
    if vim.fn.isdirectory(f) == 0 then
      out[#out + 1] = f:sub(#dir + 2)
    end
  end
  table.sort(out)
  return out
end

local state_home = H.tempdir()
local config_home = H.tempdir()
local project = H.tempdir()
local other = H.tempdir()
local file = H.file(state_home, project)

T.test("a Neovim with persist = true writes the list under stdpath('state')/rpiv_todo", function()
  local got = H.child("write", project, state_home, config_home)
  T.eq(got.cwd, project, "started in the project")
  T.same(got.subjects, { "Write the parser", "Test it" }, "its list")
  T.eq(got.path, file, "the file: keyed by the working directory and the session")
  local saved = vim.json.decode(table.concat(vim.fn.readfile(file), "\n"))
  T.eq(saved.version, 1, "format version")
  T.eq(saved.nextId, 3, "nextId")
  T.eq(saved.tasks[1].status, "in_progress", "the last change is in the file")
  T.eq(got.file_note.msg, "session default: " .. file, ":Todos file names it")
  T.contains(got.health, "lists are saved after every change in " .. state_home .. "/nvim/rpiv_todo", "health: dir")
  T.contains(got.health, "this directory's list: " .. file, "health: file")
  T.contains(
    got.health,
    ":TodosLanguage saves the UI language to " .. config_home .. "/rpiv-i18n/locale.json",
    "health"
  )
  T.eq(got.health_error, false, "no ERROR in :checkhealth")
  T.same(H.files(state_home .. "/nvim/rpiv_todo"), { file:sub(#state_home + #"/nvim/rpiv_todo/" + 1) }, "one file")
end)

T.test("a second Neovim started in the same directory finds the list", function()
  local got = H.child("read", project, state_home, config_home)
  T.same(got.subjects, { "Write the parser", "Test it" }, "restored on first use")
  T.contains(table.concat(got.panel, "\n"), "Write the parser", "the panel shows it right after setup")
  T.contains(table.concat(got.panel, "\n"), "Test it", "both tasks")
  T.eq(got.messages, "", "nothing reported")
end)

T.test("a Neovim started in another directory starts with its own, empty list", function()
  local got = H.child("read", other, state_home, config_home)
  T.same(got.subjects, {}, "empty")
  T.same(got.panel, {}, "no panel")
  T.eq(got.path, H.file(state_home, other), "its own file")
  T.eq(
    got.file_note.msg,
    "session default: " .. H.file(state_home, other) .. " (not written yet: no change so far)",
    ":Todos file"
  )
  T.eq(vim.fn.filereadable(H.file(state_home, other)), 0, "reading writes nothing")
end)

T.test("a host that replays history wins, and the replayed list is what the next start finds", function()
  local got = H.child("replay", project, state_home, config_home)
  T.same(got.subjects, { "From history" }, "replay wins")
  got = H.child("read", project, state_home, config_home)
  T.same(got.subjects, { "From history" }, "saved after the replay")
end)

T.test("persist = false (the default) writes nothing", function()
  local fresh_state = H.tempdir()
  local got = H.child("off", project, fresh_state, config_home)
  T.same(got.subjects, { "Write the parser", "Test it" }, "the list works")
  T.eq(got.path, nil, "no file")
  T.contains(got.file_note.msg, "lists are not saved to disk", ":Todos file says so")
  T.same(H.files(fresh_state), {}, "nothing under XDG_STATE_HOME")
end)

T.test(":TodosLanguage offers the nine locales, switches and saves the pick; an unknown code saves nothing", function()
  local config = H.tempdir()
  vim.fn.mkdir(config .. "/rpiv-i18n", "p")
  vim.fn.writefile({ '{"theme": "dark", "locale": "de"}' }, config .. "/rpiv-i18n/locale.json")
  local got = H.child("language", project, H.tempdir(), config)
  T.same(got.select.items, { "de", "en", "es", "fr", "pt", "pt-BR", "ru", "uk", "zh" }, "items")
  T.eq(got.select.shown[1], "de  Deutsch", "shown with the language's own name")
  T.eq(got.select.shown[2], "en  English  (current)", "the current one marked")
  T.eq(got.locale_after_pick, "fr", "switched")
  local saved = vim.json.decode(got.file_after_pick)
  T.eq(saved.locale, "fr", "saved")
  T.eq(saved.theme, "dark", "other keys kept")
  T.contains(got.unknown_note.msg, 'language: unknown locale "xx"', "unknown code reported")
  T.eq(got.locale_after_unknown, "fr", "unknown code: locale unchanged")
  T.eq(got.file_after_unknown, got.file_after_pick, "unknown code: file unchanged")
end)

for _, dir in ipairs(H.dirs) do
  vim.fn.delete(dir, "rf")
end
T.finish("persist (nvim)")
