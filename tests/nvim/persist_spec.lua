-- tests/nvim/persist_spec.lua: lists that survive an editor restart, and the language
-- picker, in headless Neovim 0.7.2 and current (through scripts/nvim-runner.lua). Each
-- case starts child Neovims (v:progpath, tests/nvim/persist_child.lua) in a project
-- directory with their own XDG_STATE_HOME and XDG_CONFIG_HOME: one writes a list with
-- setup({ persist = true }), a second started in the same directory finds it.

local N = dofile(os.getenv("RPIV_ROOT") .. "/tests/nvim/helpers.lua")
local T = N.T
local H = {}

H.root = N.root
H.run_child = N.run_child
H.tempdir = N.tempdir

---Run persist_child.lua as `role`, started in `cwd`, with the given state and config homes.
---@return table what the child recorded
function H.child(role, cwd, state_home, config_home, more)
  local vars = { XDG_STATE_HOME = state_home, XDG_CONFIG_HOME = config_home, RPIV_ROLE = role }
  for k, v in pairs(more or {}) do
    vars[k] = v
  end
  local got = H.run_child({
    root = H.root,
    file = "tests/nvim/persist_child.lua",
    cwd = cwd,
    unset = { "RPIV_TODO_LOCALE" },
    vars = vars,
    label = role,
  }, 2)
  return got
end

---The file a project directory's default list goes to under `state_home`.
function H.file(state_home, project, id)
  local escaped = project:gsub("[^A-Za-z0-9._%-]", function(c)
    return string.format("%%%02X", c:byte())
  end)
  return state_home .. "/nvim/rpiv_todo/" .. escaped .. "@" .. (id or "default") .. ".json"
end

---Save a list of { subject, status } to `path`, changed `age` seconds ago.
function H.save(path, tasks, age)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
  local state = { tasks = {}, nextId = #tasks + 1 }
  for i, t in ipairs(tasks) do
    state.tasks[i] = { id = i, subject = t[1], status = t[2] }
  end
  assert(require("rpiv_todo.core").save(path, state))
  local when = os.time() - age
  vim.loop.fs_utime(path, when, when)
end

function H.subjects_in(path)
  local out = {}
  for i, t in ipairs(assert(require("rpiv_todo.core").load(path)).tasks) do
    out[i] = t.subject
  end
  return out
end

---Every file under `dir` (recursively), relative to it.
function H.files(dir)
  local out = {}
  for _, f in ipairs(vim.fn.globpath(dir, "**", true, true)) do
    -- .last-prune: when the startup prune last ran.
    if vim.fn.isdirectory(f) == 0 and vim.fn.fnamemodify(f, ":t") ~= ".last-prune" then
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
  -- The names spell out project paths: the directory and the lock are the user's alone.
  local dir = state_home .. "/nvim/rpiv_todo"
  T.eq(vim.loop.fs_stat(dir).mode % 512, 448, "the state directory is 0700")
  local lock = dir .. "/." .. file:sub(#dir + 2) .. ".lock"
  T.eq(vim.loop.fs_stat(lock).mode % 512, 384, "the lock file is 0600")
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

T.test("a second setup() after :cd keeps the session's file; the new directory's list is untouched", function()
  local states, here, there = H.tempdir(), H.tempdir(), H.tempdir()
  H.save(H.file(states, there), { { "Theirs", "pending" } }, 0)
  local got = H.child("cd", here, states, config_home, { RPIV_OTHER = there })
  T.eq(got.cwd_after, there, "the child moved")
  T.eq(got.after_cd[1], "[pending] #1 Mine", "list still shows its own session")
  T.eq(got.after_cd[2], "Created #2: Second (pending)", "ids continue")
  T.same(H.subjects_in(H.file(states, here)), { "Mine", "Second" }, "the session's file has both")
  T.same(H.subjects_in(H.file(states, there)), { "Theirs" }, "the other directory's list is untouched")
end)

T.test("a relative XDG_STATE_HOME is ignored: lists go under $HOME/.local/state, not into the project", function()
  local home, here = H.tempdir(), H.tempdir()
  local got = H.child("write", here, "state", config_home, { HOME = home })
  T.eq(got.path, H.file(home .. "/.local/state", here), "the file")
  T.eq(vim.fn.filereadable(got.path), 1, "written there")
  T.same(H.files(here), {}, "nothing inside the project")
end)

T.test("at startup the latest list with open tasks shows; :Todos sessions lists and shows the saved ones", function()
  local states, here = H.tempdir(), H.tempdir()
  H.save(H.file(states, here, "chat-old"), { { "Old open", "pending" } }, 3000)
  H.save(H.file(states, here, "chat-new"), {
    { "Done one", "completed" },
    { "New open", "in_progress" },
    { "Later", "pending" },
  }, 2000)
  H.save(H.file(states, here, "chat-done"), { { "All done", "completed" } }, 1000)
  -- A session id too long for a name (65 bytes): its part is ~ and its SHA-256
  -- (python3 -c "import hashlib; print(hashlib.sha256(b'i' * 65).hexdigest())").
  local hashed = "~7db92d77e8b1d5ac593cd614244109b70618fe2a6a7eba541a5347ff383237d0"
  H.save(H.file(states, here, "x"):gsub("@x%.json$", "@" .. hashed .. ".json"), { { "Long id", "pending" } }, 4000)
  local got = H.child("recent", here, states, config_home, { RPIV_PICK = "chat-old" })
  T.eq(got.foreground, "chat-new", "the newest list with open tasks is the shown session")
  T.contains(table.concat(got.panel, "\n"), "New open", "the panel shows it after setup")
  T.contains(table.concat(got.listwin, "\n"), "Later", ":Todos shows it")
  T.eq(got.next_call, "Created #4: Continued (pending)", "the next call in that session continues it")
  T.eq(#got.select.shown, 4, "four saved lists")
  T.contains(got.select.shown[4], "Long id · 0/1 done, 1 open · ", "a hashed id's list")
  T.contains(got.select.shown[4], " · session saved-7db92d77e8b1", "shown under a stand-in id")
  T.contains(got.select.shown[1], "New open · 1/4 done, 3 open · ", "title, counts")
  T.contains(got.select.shown[1], " · session chat-new", "newest first (just written)")
  local done_at = os.date("%Y-%m-%d %H:%M", vim.loop.fs_stat(H.file(states, here, "chat-done")).mtime.sec)
  T.eq(got.select.shown[2], "(nothing open) · 1/1 done, 0 open · " .. done_at .. " · session chat-done", "all done")
  T.contains(got.select.shown[3], "Old open · 0/1 done, 1 open · ", "the oldest last")
  T.eq(got.foreground_after_pick, "chat-old", "the pick is shown")
  T.contains(table.concat(got.panel_after_pick, "\n"), "Old open", "in the panel")
  T.contains(got.health, "state directory: 4 lists, ", "health: count")
  T.contains(got.health, "(4 saved lists of this directory; lists not changed for 30 days are removed", "health")
end)

T.test("old lists are pruned at startup (30 days) and by :Todos prune N; live ones stay", function()
  local states, here = H.tempdir(), H.tempdir()
  H.save(H.file(states, here, "ancient"), { { "Ancient", "pending" } }, 40 * 86400)
  H.save(H.file(states, here, "week"), { { "Week", "pending" } }, 8 * 86400)
  H.save(H.file(states, here, "fresh"), { { "Fresh", "pending" } }, 0)
  local fresh_name = H.file(states, here, "fresh"):match("[^/]+$")
  local dir = states .. "/nvim/rpiv_todo/"
  -- What saves killed before their rename left: one two hours ago, one just now.
  local stale, recent = dir .. "." .. fresh_name .. ".a1B2c3.tmp", dir .. "." .. fresh_name .. ".z9Y8x7.tmp"
  vim.fn.writefile({ "{" }, stale)
  vim.fn.writefile({ "{" }, recent)
  vim.loop.fs_utime(stale, os.time() - 7200, os.time() - 7200)
  local name = H.file(states, here, "ancient"):match("[^/]+$")
  local got = H.child("prune", here, states, config_home, { RPIV_OLD_FILE = name, RPIV_DAYS = "7" })
  T.eq(got.startup_pruned, true, "the 40-day-old list went at startup")
  T.eq(
    got.prune_note.msg,
    ":Todos prune: removed 1 saved list not changed for 7 days (1 kept) in " .. states .. "/nvim/rpiv_todo",
    ":Todos prune 7"
  )
  T.eq(got.prune_bad.msg, ":Todos prune: expected a number of days, e.g. :Todos prune 30, got soon", "bad days")
  T.eq(vim.fn.filereadable(H.file(states, here, "week")), 0, "the week-old list went")
  T.same(H.subjects_in(H.file(states, here, "fresh")), { "Fresh" }, "the fresh one stays")
  T.eq(vim.fn.filereadable(stale), 0, "a killed save's temporary file from two hours ago went")
  T.eq(vim.fn.filereadable(recent), 1, "a recent one stays (a save may still be using it)")
end)

N.cleanup()
T.finish("persist (nvim)")
