-- tests/nvim/editors_spec.lua: two live Neovims with setup({ persist = true }) in one
-- project directory, as a user with two editors (or an editor and the MCP server) has
-- them. Each is tests/nvim/editor_child.lua, started with jobstart and driven step by
-- step through files. Checks: a change the other editor saved since this one read the
-- file is merged, never dropped, and a taken id is told (the two-editors item); with file
-- watching (fs_event, or the poll) the panel follows the other editor's change and this
-- editor's own edit reaches the other one.

local N = dofile(os.getenv("RPIV_ROOT") .. "/tests/nvim/helpers.lua")
local T = N.T
local H = {}

H.root = N.root
H.jobs = {}
H.tempdir = N.tempdir

---Start an editor named `role` in `cwd`; returns a handle with :run(code).
function H.start(role, cwd, state_home, watch)
  local ctl = H.tempdir()
  local cmd = { "sh", "-c", 'cd "$0" && exec "$@"', cwd, "env" }
  for _, name in ipairs({ "NVIM", "NVIM_LISTEN_ADDRESS", "VIMINIT", "LUA_PATH", "LUA_CPATH", "RPIV_TODO_LOCALE" }) do
    cmd[#cmd + 1] = "-u"
    cmd[#cmd + 1] = name
  end
  local vars = {
    XDG_STATE_HOME = state_home,
    XDG_CONFIG_HOME = ctl,
    RPIV_CTL = ctl,
    RPIV_ROLE = role,
    RPIV_WATCH = watch,
    RPIV_ROOT = H.root,
    RPIV_SPEC = H.root .. "/tests/nvim/editor_child.lua",
  }
  for k, v in pairs(vars) do
    cmd[#cmd + 1] = k .. "=" .. v
  end
  for _, arg in ipairs({ vim.v.progpath, "--headless", "-u", "NONE", "-i", "NONE", "--noplugin" }) do
    cmd[#cmd + 1] = arg
  end
  cmd[#cmd + 1] = "-c"
  cmd[#cmd + 1] = "luafile " .. H.root .. "/scripts/nvim-runner.lua"
  local editor = { role = role, ctl = ctl, n = 0, output = {} }
  editor.job = vim.fn.jobstart(cmd, {
    on_stdout = function(_, data)
      vim.list_extend(editor.output, data)
    end,
    on_stderr = function(_, data)
      vim.list_extend(editor.output, data)
    end,
  })
  assert(editor.job > 0, "jobstart failed")
  H.jobs[#H.jobs + 1] = editor.job
  function editor.run(code)
    editor.n = editor.n + 1
    local base = ctl .. "/" .. role .. ".cmd." .. editor.n
    vim.fn.writefile(vim.split(code, "\n"), base .. ".part")
    assert(vim.loop.fs_rename(base .. ".part", base))
    local out = ctl .. "/" .. role .. ".out." .. editor.n
    local done = vim.wait(30000, function()
      return vim.fn.filereadable(out) == 1
    end, 10)
    if not done then
      error(role .. " did not answer step " .. editor.n .. ": " .. table.concat(editor.output, "\n"), 2)
    end
    local got = vim.json.decode(table.concat(vim.fn.readfile(out), "\n"))
    if not got.ok then
      error(role .. " step " .. editor.n .. " failed: " .. tostring(got.value), 2)
    end
    return got.value
  end
  return editor
end

function H.file(state_home, project)
  local escaped = project:gsub("[^A-Za-z0-9._%-]", function(c)
    return string.format("%%%02X", c:byte())
  end)
  return state_home .. "/nvim/rpiv_todo/" .. escaped .. "@default.json"
end

function H.tasks_in(path)
  local out = {}
  for i, t in ipairs(assert(require("rpiv_todo.core").load(path)).tasks) do
    out[i] = "#" .. t.id .. " " .. t.subject .. " " .. t.status
  end
  return out
end

T.test("two editors on one list: every change lands on the newest list, under the id its reply says", function()
  local states, project = H.tempdir(), H.tempdir()
  local a = H.start("a", project, states, "off")
  local b = H.start("b", project, states, "off")
  -- Both have the list open (empty) before either writes.
  T.eq(a.run('return E.call({ action = "list" })'), "No tasks", "a: empty")
  T.eq(b.run('return E.call({ action = "list" })'), "No tasks", "b: empty")
  T.eq(a.run('return E.call({ action = "create", subject = "From A" })'), "Created #1: From A (pending)", "a creates")
  T.eq(
    b.run('return E.call({ action = "create", subject = "From B" })'),
    'Created #2: From B (pending)\n(Changed by others since your last call: #1 "From A" added by another program.)',
    "b creates on a's list, and its model is told of a's task"
  )
  local file = H.file(states, project)
  T.same(H.tasks_in(file), { "#1 From A pending", "#2 From B pending" }, "the file keeps both")
  T.same(b.run("return E.tasks()"), { "#1 From A pending", "#2 From B pending" }, "b holds the file's list")
  T.eq(#b.run("return E.notes"), 0, "nothing to tell: nothing was renumbered")
  T.eq(
    a.run('return E.call({ action = "create", subject = "A again", blockedBy = { 1 } })'),
    'Created #3: A again (pending)\n(Changed by others since your last call: #2 "From B" added by another program.)',
    "a creates again without having seen b's task, and is told of it"
  )
  T.eq(
    b.run('return E.call({ action = "update", id = 3, status = "in_progress" })'),
    'Updated #3 (pending → in_progress)\n(Changed by others since your last call: #3 "A again" added by another program.)',
    "b updates a's newest task by the id a was told"
  )
  T.same(
    H.tasks_in(file),
    { "#1 From A pending", "#2 From B pending", "#3 A again in_progress" },
    "still nothing lost, no id twice"
  )
  a.run('return "quit"')
  b.run('return "quit"')
  -- A third editor started later finds all three.
  local c = H.start("c", project, states, "off")
  T.same(
    c.run("return E.tasks()"),
    { "#1 From A pending", "#2 From B pending", "#3 A again in_progress" },
    "after a restart"
  )
  c.run('return "quit"')
end)

for _, method in ipairs({ "auto", "poll" }) do
  T.test("with file watching (" .. method .. ") the panel follows the other editor, both ways", function()
    local states, project = H.tempdir(), H.tempdir()
    local a = H.start("a", project, states, method)
    local b = H.start("b", project, states, method)
    local how = a.run('return { require("rpiv_todo.nvim.persist").watching() }')
    if method == "auto" and how[1] == "poll" then
      -- The kernel can refuse a watch for a moment (inotify's per-user limits, shared with
      -- every other program of this user): auto must then poll and say why.
      local probe = a.run([[
        local h = vim.loop.new_fs_event()
        local ok, err = h:start(vim.fn.getcwd(), {}, function() end)
        h:close()
        return ok and "started" or tostring(err)
      ]])
      T.note("fs_event refused (" .. tostring(how[2]) .. "); auto polled; a watch tried now: " .. probe)
      T.ok(type(how[2]) == "string" and how[2] ~= "", "auto says why it polls: " .. tostring(how[2]))
    else
      T.same(how, { method == "auto" and "fs_event" or "poll" }, "how a watches")
    end
    local health = a.run([[
      vim.cmd("checkhealth rpiv_todo")
      local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
      vim.cmd("bwipeout!")
      return text
    ]])
    T.contains(
      health,
      "other programs' changes to these lists are followed ("
        .. how[1]
        .. (how[2] and (": fs_event could not start, " .. how[2]) or "")
        .. ")",
      "health says how a watches"
    )
    -- a works in a chat of its own; b, like an agent outside the editor, in "default".
    a.run('return E.nv.execute({ action = "create", subject = "Chat task" }, { session = "chat-1" })')
    T.eq(a.run('return E.panel_shows("Chat task")'), true, "a shows its chat")
    b.run('return E.call({ action = "create", subject = "Written by B" })')
    T.eq(a.run('return E.panel_shows("Written by B")'), true, "a's panel follows b's list")
    T.eq(a.run('return require("rpiv_todo.session").foreground_id()'), "default", "the shown session")
    a.run('vim.cmd("Todos done 1")')
    T.eq(b.run('return E.panel_shows("✓ Written by B")'), true, "b's panel shows a's edit")
    b.run('return E.call({ action = "create", subject = "Second" })')
    T.eq(a.run('return E.panel_shows("Second")'), true, "a follows again")
    T.same(
      a.run("return E.tasks()"),
      { "#1 Written by B completed", "#2 Second pending" },
      "a's edit was kept through b's next write"
    )
    T.same(
      a.run("return vim.tbl_map(function(n) return n.msg end, E.notes)"),
      { "Updated #1 (pending → completed)" },
      "a: its edit confirmed, nothing else to report"
    )
    if how[1] == "fs_event" then
      -- fs_event names the file: a list of this directory a doesn't use yet shows too.
      b.run('return E.nv.execute({ action = "create", subject = "In chat 9" }, { session = "chat-9" })')
      T.eq(a.run('return E.panel_shows("In chat 9")'), true, "a follows a new session's list")
    end
    a.run('return "quit"')
    b.run('return "quit"')
  end)
end

for _, job in ipairs(H.jobs) do
  pcall(vim.fn.jobstop, job)
end
N.cleanup()
T.finish("editors (nvim)")
