-- tests/screen/screen_spec.lua: what a person sees. Neovim (RPIV_NVIM, the current release)
-- runs in a tmux pane of 100x30 cells with tests/screen/init.lua; keys go in with
-- `tmux send-keys`, the screen comes back with `tmux capture-pane` (with -e, the SGR
-- colours of each cell), and the checks read the panel's place and colours off that
-- screen:
--   * a plan of five tasks: the panel in the bottom-right corner, six rows;
--   * the cursor at the bottom (`L`, then `A` and typing): the panel moves to the top
--     and the line being typed stays visible; `gg` brings it back;
--   * :vsplit, <C-w>l, two more :vsplit: over the current window only, the window
--     separators intact on every row of the panel; :only: still there;
--   * :help: the panel stays off the help window;
--   * TERM=screen-256color with 'notermguicolors': the panel has a background of its own,
--     and under `:colorscheme morning` one background across the whole panel (no patches).
-- Plain Lua (5.1, 5.4, LuaJIT); needs tmux. Run by scripts/test.sh as
--   RPIV_ROOT=<repo> RPIV_NVIM=<nvim> luajit tests/screen/screen_spec.lua
-- Waiting for the screen to show something polls capture-pane (at most 10 s per wait);
-- nothing is measured.

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local H = {}

H.root = T.root()
H.nvim = os.getenv("RPIV_NVIM") or "nvim"
-- A tmux server of our own (never the user's); a new one per start, as a server killed
-- a moment ago refuses to come back under the same name.
H.socket_base = "rpiv-screen-" .. tostring(os.time()) .. "-" .. tostring(math.random(100000))
H.starts = 0
H.socket = H.socket_base
H.scratch = os.tmpname()
os.remove(H.scratch)
os.execute("mkdir -p '" .. H.scratch .. "'")
H.ROWS, H.COLS = 30, 100

---@param s string
---@return string
function H.quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

---Run a shell command; its output.
---@param cmd string
---@return string
function H.read(cmd)
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read("*a")
  p:close()
  return out
end

---@param args string
---@return string
function H.tmux(args)
  return H.read("tmux -L " .. H.socket .. " -f /dev/null " .. args)
end

---Start Neovim in a fresh pane; `term` is the pane's TERM. `opts.root` is the plugin's
---folder (default the repository), `opts.path` what goes before $PATH.
---@param term string
---@param opts? { root?: string, path?: string }
function H.start(term, opts)
  opts = opts or {}
  H.tmux("kill-server")
  H.starts = H.starts + 1
  H.socket = H.socket_base .. "-" .. H.starts
  local file = H.scratch .. "/notes.txt"
  local f = assert(io.open(file, "w"))
  for i = 1, 200 do
    f:write("line ", i, ": some text the person is editing\n")
  end
  f:close()
  local env = table.concat({
    "env",
    "-u NVIM -u NVIM_LISTEN_ADDRESS -u VIMINIT -u LUA_PATH -u LUA_CPATH -u COLORTERM",
    "TERM=" .. term,
    "RPIV_ROOT=" .. H.quote(opts.root or H.root),
    opts.path and ("PATH=" .. H.quote(opts.path .. ":" .. os.getenv("PATH"))) or "",
    "XDG_CONFIG_HOME=" .. H.quote(H.scratch .. "/config"),
    "XDG_STATE_HOME=" .. H.quote(H.scratch .. "/state"),
    "XDG_DATA_HOME=" .. H.quote(H.scratch .. "/data"),
    "XDG_CACHE_HOME=" .. H.quote(H.scratch .. "/cache"),
  }, " ")
  local cmd = env
    .. " "
    .. H.quote(H.nvim)
    .. " -i NONE -u "
    .. H.quote(H.root .. "/tests/screen/init.lua")
    .. " "
    .. H.quote(file)
  H.tmux("new-session -d -s main -x " .. H.COLS .. " -y " .. H.ROWS .. " -e TERM=" .. term .. " " .. H.quote(cmd))
  H.tmux("set-option -t main default-terminal " .. term)
  H.wait(function(now)
    return now[1]:find("line 1:", 1, true) ~= nil
  end, "Neovim shows the file")
end

---Send keys: each argument is one tmux key or a literal string (use `-l` semantics).
function H.keys(...)
  for _, k in ipairs({ ... }) do
    if k:match("^[A-Z]%-") or k == "Enter" or k == "Escape" then
      H.tmux("send-keys -t main " .. k)
    else
      H.tmux("send-keys -t main -l " .. H.quote(k))
    end
  end
end

---An ex command typed as a person would.
---@param cmd string
function H.ex(cmd)
  H.keys("Escape", ":" .. cmd, "Enter")
end

---The screen as lines of text.
---@return string[]
function H.screen()
  local out = H.tmux("capture-pane -p -t main")
  local lines = {}
  for line in (out .. "\n"):gmatch("([^\n]*)\n") do
    lines[#lines + 1] = line
  end
  while #lines > H.ROWS do
    lines[#lines] = nil
  end
  return lines
end

---Poll the screen until `pred(screen)` holds (`seconds`, default 10, at most); the screen.
---@param pred fun(s: string[]): boolean
---@param what string
---@param seconds? number
---@return string[]
function H.wait(pred, what, seconds)
  local s
  for _ = 1, (seconds or 10) * 20 do
    s = H.screen()
    if #s >= H.ROWS and pred(s) then
      return s
    end
    os.execute("sleep 0.05")
  end
  error(what .. ": not seen on the screen:\n" .. table.concat(s or {}, "\n"), 2)
end

---Display columns of the UTF-8 text (every character here is one cell wide).
---@param text string
---@return integer
function H.width(text)
  local _, n = text:gsub("[^\128-\191]", "")
  return n
end

---Where `needle` first shows: row and column (1-based cells), or nil.
---@param s string[]
---@param needle string
---@return integer|nil row, integer|nil col
function H.find(s, needle)
  for r, line in ipairs(s) do
    local at = line:find(needle, 1, true)
    if at then
      return r, H.width(line:sub(1, at - 1)) + 1
    end
  end
  return nil, nil
end

---The character in a cell ("" past the end of the line).
function H.cell(line, col)
  local i = 0
  for ch in line:gmatch("[%z\1-\127\194-\244][\128-\191]*") do
    i = i + 1
    if i == col then
      return ch
    end
  end
  return ""
end

---The panel on the screen: heading row and column, its rows, and the rightmost column
---any text on its rows reaches (the panel's right edge when it is the last window).
---@param s string[]
---@return table|nil { top, bottom, col, right }
function H.panel(s)
  local top, col = H.find(s, "● Todos")
  if not top then
    return nil
  end
  local bottom = top
  for r = top + 1, #s do
    local c = H.cell(s[r], col)
    if c == "├" or c == "└" then
      bottom = r
    end
    if c == "└" then
      break
    end
  end
  local right = 0
  for r = top, bottom do
    local line = s[r]
    local text = line:gsub("%s+$", "")
    right = math.max(right, H.width(text))
  end
  return { top = top, bottom = bottom, col = col, right = right }
end

---Columns of the vertical window separators (from a row the panel does not reach).
---@param line string
---@return integer[]
function H.separators(line)
  local cols, i = {}, 0
  for ch in line:gmatch("[%z\1-\127\194-\244][\128-\191]*") do
    i = i + 1
    if ch == "│" then
      cols[#cols + 1] = i
    end
  end
  return cols
end

-- The text area is rows 1-28 (29: status line, 30: command line).
H.LAST_TEXT_ROW = H.ROWS - 2

T.test("tmux and the Neovim under test are there", function()
  T.contains(H.read("tmux -V"), "tmux", "tmux")
  T.contains(H.read(H.quote(H.nvim) .. " --version"), "NVIM", "nvim")
  H.start("tmux-256color")
end)

T.test("a plan of five tasks: the panel in the bottom-right corner, heading and five rows", function()
  H.ex("Agent plan 5")
  local s = H.wait(function(now)
    return H.panel(now) ~= nil
  end, "the panel")
  local p = H.panel(s)
  T.eq(p.bottom - p.top + 1, 6, "six rows, no blank line")
  T.eq(p.bottom, H.LAST_TEXT_ROW, "its last row on the window's last text row")
  T.eq(p.right, H.COLS - 1, "its text ends one padding column before the right edge")
  T.ok(p.col > H.COLS / 2, "on the right-hand side (column " .. p.col .. ")")
  T.contains(s[p.top + 1], "◐ Task number 1 of the plan (Working)", "the task in progress")
  T.ok(s[p.top]:find("^line %d+: some text") ~= nil, "the file's text shows left of it")
end)

T.test("the cursor at the bottom: the panel moves to the top; the line being typed stays visible", function()
  H.keys("L")
  local s = H.wait(function(now)
    local p = H.panel(now)
    return p ~= nil and p.top == 1
  end, "the panel at the top after L")
  T.eq(H.panel(s).right, H.COLS - 1, "still on the right")
  H.keys("A", " typing at the end")
  s = H.wait(function(now)
    return now[H.LAST_TEXT_ROW]:find("typing at the end", 1, true) ~= nil
  end, "the typed text on the last row")
  T.contains(s[H.ROWS], "INSERT", "insert mode")
  T.eq(H.panel(s).top, 1, "the panel at the top while typing")
  H.keys("Escape", "g", "g")
  s = H.wait(function(now)
    local p = H.panel(now)
    return p ~= nil and p.bottom == H.LAST_TEXT_ROW
  end, "the panel back at the bottom after gg")
  T.eq(s[1]:find("line 1:", 1, true), 1, "the cursor's line at the top is clear")
end)

T.test(":vsplit, <C-w>l, two more :vsplit: over the current window only, :only keeps it", function()
  H.ex("vsplit")
  local s = H.wait(function(now)
    return #H.separators(now[1]) == 1 and H.panel(now) ~= nil and H.panel(now).col < H.separators(now[1])[1]
  end, "the panel over the new left window")
  local sep = H.separators(s[1])[1]
  local p = H.panel(s)
  for r = p.top, p.bottom do
    T.eq(H.cell(s[r], sep), "│", "the separator is intact on row " .. r)
  end
  -- Its right edge on the window's: the padding column just left of the separator, and
  -- the longest row reaching the column before it.
  local reaches = false
  for r = p.top, p.bottom do
    T.eq(H.cell(s[r], sep - 1), " ", "padding before the separator on row " .. r)
    reaches = reaches or H.cell(s[r], sep - 2) ~= " "
  end
  T.ok(reaches, "in the left window's bottom-right corner")
  H.keys("C-w", "l")
  s = H.wait(function(now)
    local q = H.panel(now)
    return q ~= nil and q.col > sep
  end, "the panel over the right window after <C-w>l")
  T.eq(H.panel(s).right, H.COLS - 1, "in the right window's corner")
  H.ex("vsplit")
  H.ex("vsplit")
  s = H.wait(function(now)
    return #H.separators(now[1]) == 3
  end, "four windows")
  local seps = H.separators(s[1])
  p = H.panel(s)
  T.ok(p ~= nil, "the panel is shown")
  for r = p.top, p.bottom do
    for _, c in ipairs(seps) do
      T.eq(H.cell(s[r], c), "│", "separator " .. c .. " intact on row " .. r)
    end
  end
  -- Each :vsplit opens the new window on the left of the current one and enters it: the
  -- current window is the second of four.
  T.ok(p.col > seps[1] and p.col < seps[2], "inside the current (second) window:\n" .. table.concat(s, "\n"))
  T.contains(s[p.top + 1], "…", "rows cut with an ellipsis")
  H.ex("only")
  H.wait(function(now)
    local q = H.panel(now)
    return #H.separators(now[1]) == 0 and q ~= nil and q.right == H.COLS - 1
  end, "the panel after :only, without a tool call")
end)

T.test(":help opens: the panel stays over the window being edited", function()
  H.ex("help")
  local s = H.wait(function(now)
    local row = H.find(now, "help.txt")
    return row ~= nil and row < H.ROWS - 2 and H.panel(now) ~= nil
  end, "a help window above the file")
  local help_status = nil
  for r = 1, H.ROWS - 2 do
    if s[r]:find("help.txt", 1, true) and s[r]:find("%[Help%]") then
      help_status = r
    end
  end
  T.ok(help_status ~= nil, "the help window's status line")
  local p = H.panel(s)
  T.ok(p.top > help_status, "the panel below the help window (row " .. p.top .. " > " .. help_status .. ")")
  H.ex("helpclose")
end)

-- ---------------------------------------------------------------------------
-- Colours: a 256-colour terminal
-- ---------------------------------------------------------------------------

---One line of `capture-pane -e` as cells { ch, bg }; SGR state starts afresh per line.
---@param line string
---@return table[]
function H.cells(line)
  local out = {}
  local bg = "default"
  local i = 1
  while i <= #line do
    local esc = line:match("^\27%[([%d;:]*)m", i)
    if esc then
      local params = {}
      for p in (esc .. ";"):gmatch("([^;]*);") do
        params[#params + 1] = p
      end
      local k = 1
      while k <= #params do
        local p = params[k]
        if p == "" or p == "0" or p == "49" then
          bg = "default"
        elseif p == "48" and params[k + 1] == "5" then
          bg = "256:" .. params[k + 2]
          k = k + 2
        elseif p == "48" and params[k + 1] == "2" then
          bg = "rgb:" .. params[k + 2] .. "," .. params[k + 3] .. "," .. params[k + 4]
          k = k + 4
        elseif p == "38" then
          k = k + ((params[k + 1] == "5") and 2 or 4)
        elseif
          tonumber(p) and ((tonumber(p) >= 40 and tonumber(p) <= 47) or (tonumber(p) >= 100 and tonumber(p) <= 107))
        then
          bg = "basic:" .. p
        end
        k = k + 1
      end
      i = i + #esc + 3
    else
      local ch = line:match("^[%z\1-\127\194-\244][\128-\191]*", i)
      out[#out + 1] = { ch = ch, bg = bg }
      i = i + #ch
    end
  end
  return out
end

---The panel's cells (from its first column to the right end of each of its rows) and
---the cells left of it, from a coloured capture.
function H.colours()
  local s = H.screen()
  local p = assert(H.panel(s), "no panel:\n" .. table.concat(s, "\n"))
  local out = H.tmux("capture-pane -e -p -t main")
  local lines = {}
  for line in (out .. "\n"):gmatch("([^\n]*)\n") do
    lines[#lines + 1] = line
  end
  local panel_bgs, left_bgs = {}, {}
  for r = p.top, p.bottom do
    local cells = H.cells(lines[r])
    -- The padding column before the heading belongs to the panel too.
    for c = p.col - 1, math.min(#cells, p.right + 1) do
      panel_bgs[cells[c].bg] = (panel_bgs[cells[c].bg] or 0) + 1
    end
    left_bgs[cells[1].bg] = true
  end
  return panel_bgs, left_bgs, p
end

function H.keys_of(t)
  local out = {}
  for k in pairs(t) do
    out[#out + 1] = k
  end
  table.sort(out)
  return out
end

T.test("a 256-colour terminal (notermguicolors): the panel has a background of its own", function()
  H.start("screen-256color")
  H.ex("set notermguicolors")
  H.ex("Agent plan 4")
  H.wait(function(now)
    return H.panel(now) ~= nil
  end, "the panel")
  local panel, left = H.colours()
  local bgs = H.keys_of(panel)
  T.eq(#bgs, 1, "one background across the panel (" .. table.concat(bgs, " ") .. ")")
  T.ok(bgs[1] ~= "default", "not the terminal's default background")
  T.eq(left[bgs[1]], nil, "different from the buffer's beside it")
end)

T.test("colorscheme morning (light) in 256 colours: one background across the panel, no grey patches", function()
  H.ex("colorscheme morning")
  H.wait(function(now)
    return H.panel(now) ~= nil
  end, "the panel")
  local panel, left = H.colours()
  local bgs = H.keys_of(panel)
  T.eq(#bgs, 1, "one background across the panel (" .. table.concat(bgs, " ") .. ")")
  T.eq(left[bgs[1]], nil, "different from the buffer's beside it")
end)

-- :TodosInstall in a Neovim with a screen does not block it. The plugin is a copy in the
-- scratch folder (the install writes its lib/), and cargo a stand-in that takes 4 s per
-- build and leaves a file when it is done: the repository's module, or a script that
-- answers --version as the server does.
function H.slow_cargo(dir)
  local f = assert(io.open(dir .. "/cargo", "w"))
  f:write(table.concat({
    "#!/bin/sh",
    "server=",
    'while [ $# -gt 0 ]; do [ "$1" = --target-dir ] && dir=$2; [ "$1" = rpiv_todo_mcp ] && server=1; shift; done',
    "sleep 4",
    'mkdir -p "$dir/release"',
    'if [ -n "$server" ]; then',
    "  printf '#!/bin/sh\\necho rpiv_todo_mcp " .. T.cargo_version() .. '\\n\' > "$dir/release/rpiv_todo_mcp"',
    "  touch " .. H.quote(dir .. "/server-built"),
    "else",
    "  cp " .. H.quote(H.root .. "/lua/rpiv_todo/core.so") .. ' "$dir/release/librpiv_todo.so"',
    "  touch " .. H.quote(dir .. "/module-built"),
    "fi",
    "",
  }, "\n"))
  f:close()
  os.execute("chmod +x " .. H.quote(dir .. "/cargo"))
end

---@param path string
---@return boolean
function H.exists(path)
  local f = io.open(path)
  if f then
    f:close()
  end
  return f ~= nil
end

T.test(":TodosInstall! source: the editor takes keys while cargo builds; the steps and the end show", function()
  local plugin, bin = H.scratch .. "/plugin", H.scratch .. "/bin"
  os.execute("mkdir -p " .. H.quote(plugin) .. " " .. H.quote(bin))
  for _, part in ipairs({ "lua", "plugin", "Cargo.toml" }) do
    os.execute("cp -R " .. H.quote(H.root .. "/" .. part) .. " " .. H.quote(plugin .. "/"))
  end
  H.slow_cargo(bin)
  H.start("tmux-256color", { root = plugin, path = bin })
  H.ex("TodosInstall! source")
  H.keys("G", "o", "typed while cargo builds", "Escape")
  H.wait(function(now)
    return H.find(now, "typed while cargo builds") ~= nil
  end, "the typed line", 3)
  T.eq(H.exists(bin .. "/module-built"), false, "the typed line showed before the module's build ended")
  H.wait(function(now)
    return H.find(now, "native module built:") ~= nil
  end, "the end of the install", 30)
  T.eq(H.exists(bin .. "/server-built"), true, "the server was built too")
  H.ex("messages")
  H.wait(function(now)
    return H.find(now, "install: building the module with cargo") ~= nil
      and H.find(now, "install: building the MCP server with cargo") ~= nil
  end, "each step in :messages", 3)
  local record = assert(io.open(plugin .. "/lib/installed.txt")):read("*a")
  T.contains(record, "source=built", "lib/installed.txt: built")
  T.contains(assert(io.open(plugin .. "/lib/mcp.txt")):read("*a"), "source=built", "lib/mcp.txt: built")
end)

H.tmux("kill-server")
os.execute("rm -rf '" .. H.scratch .. "'")
T.finish()
