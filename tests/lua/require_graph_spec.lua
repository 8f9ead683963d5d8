-- The layers of lua/rpiv_todo, read from the sources: every `require("...")` of a module of
-- the plugin (at load time or inside a function, also `pcall(require, "...")`) is an edge
-- of the require graph. The graph has no cycle; the plain modules (all but the Neovim glue:
-- nvim/ (the installer is nvim/install/), health.lua and the files .luacheckrc gives the
-- `vim` global) never touch `vim`, not even through `_G`; and no
-- adapter requires the Neovim front end.
local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")

local H = {}

-- ---------------------------------------------------------------------------
-- A Lua lexer: just enough to tell names, strings and punctuation from comments
-- ---------------------------------------------------------------------------

---The end of a long bracket opened at `i` (`[[`, `[==[`), or nil when there is none.
---@param src string
---@param i integer
---@return integer|nil last the position of the closing bracket's last character
---@return integer|nil body_start
---@return integer|nil body_end
function H.long_bracket(src, i)
  local eqs = src:match("^%[(=*)%[", i)
  if eqs == nil then
    return nil
  end
  local open_len = #eqs + 2
  local close = "]" .. eqs .. "]"
  local s, e = src:find(close, i + open_len, true)
  if s == nil then
    error("unclosed long bracket at byte " .. i)
  end
  return e, i + open_len, s - 1
end

---The tokens of `src`: { kind = "name" | "string" | "op" | "number", value }.
---@param src string
---@return table[]
function H.tokens(src)
  local out, i, n = {}, 1, #src
  while i <= n do
    local c = src:sub(i, i)
    if c:match("%s") then
      i = i + 1
    elseif src:sub(i, i + 1) == "--" then
      local last = H.long_bracket(src, i + 2)
      if last ~= nil then
        i = last + 1
      else
        local nl = src:find("\n", i, true)
        i = nl and nl + 1 or n + 1
      end
    elseif c == '"' or c == "'" then
      local j, parts = i + 1, {}
      while true do
        local d = src:sub(j, j)
        if d == "" then
          error("unclosed string at byte " .. i)
        elseif d == "\\" then
          parts[#parts + 1] = src:sub(j, j + 1)
          j = j + 2
        elseif d == c then
          break
        else
          parts[#parts + 1] = d
          j = j + 1
        end
      end
      out[#out + 1] = { kind = "string", value = table.concat(parts) }
      i = j + 1
    elseif c == "[" and src:match("^%[=*%[", i) then
      local last, s, e = H.long_bracket(src, i)
      out[#out + 1] = { kind = "string", value = src:sub(s, e) }
      i = last + 1
    elseif c:match("[%a_]") then
      local name = src:match("^[%w_]+", i)
      out[#out + 1] = { kind = "name", value = name }
      i = i + #name
    elseif c:match("%d") or (c == "." and src:sub(i + 1, i + 1):match("%d")) then
      local num = src:match("^0[xX][%x%.]+[pP]?[%-+]?%d*", i) or src:match("^[%d%.]+[eE]?[%-+]?%d*", i)
      out[#out + 1] = { kind = "number", value = num }
      i = i + #num
    else
      local op = src:match("^%.%.%.", i) or src:match("^[=~<>]=", i) or src:match("^%.%.", i) or src:match("^::", i)
      op = op or src:match("^//", i) or src:match("^<<", i) or src:match("^>>", i) or c
      out[#out + 1] = { kind = "op", value = op }
      i = i + #op
    end
  end
  return out
end

---Token `k` of `toks` is `kind` (and `value`, when given)?
function H.is(toks, k, kind, value)
  local t = toks[k]
  return t ~= nil and t.kind == kind and (value == nil or t.value == value)
end

---What a source requires and how it touches `vim`.
---@param src string
---@return string[] required module names, in order of appearance
---@return string[] uses of `vim`: "line N: <how>"
function H.scan(src)
  local toks = H.tokens(src)
  local required, vim_uses = {}, {}
  for k, t in ipairs(toks) do
    if t.kind == "name" and t.value == "require" then
      if H.is(toks, k + 1, "string") then
        required[#required + 1] = toks[k + 1].value
      elseif H.is(toks, k + 1, "op", "(") and H.is(toks, k + 2, "string") then
        required[#required + 1] = toks[k + 2].value
      elseif H.is(toks, k + 1, "op", ",") and H.is(toks, k + 2, "string") then
        -- pcall(require, "name")
        required[#required + 1] = toks[k + 2].value
      end
    end
    local prev = toks[k - 1]
    local member = prev ~= nil and prev.kind == "op" and (prev.value == "." or prev.value == ":")
    if t.kind == "name" and t.value == "vim" and not member then
      vim_uses[#vim_uses + 1] = "the global vim"
    elseif
      t.kind == "string"
      and t.value == "vim"
      and H.is(toks, k - 1, "op", ",")
      and H.is(toks, k - 2, "name", "_G")
    then
      vim_uses[#vim_uses + 1] = 'rawget(_G, "vim")'
    elseif
      t.kind == "name"
      and t.value == "_G"
      and H.is(toks, k + 1, "op", ".")
      and H.is(toks, k + 2, "name", "vim")
    then
      vim_uses[#vim_uses + 1] = "_G.vim"
    elseif
      t.kind == "string"
      and t.value == "vim"
      and H.is(toks, k - 1, "op", "[")
      and H.is(toks, k - 2, "name", "_G")
    then
      vim_uses[#vim_uses + 1] = '_G["vim"]'
    end
  end
  return required, vim_uses
end

-- ---------------------------------------------------------------------------
-- The plugin's modules
-- ---------------------------------------------------------------------------

H.root = T.root()

---Every Lua file under lua/rpiv_todo (paths relative to the repository), sorted.
---@return string[]
function H.files()
  local out = {}
  local p = io.popen("cd '" .. H.root .. "' && find lua/rpiv_todo -name '*.lua' -type f | sort")
  for line in p:lines() do
    out[#out + 1] = line
  end
  p:close()
  return out
end

---lua/rpiv_todo/a/b.lua -> rpiv_todo.a.b; lua/rpiv_todo/a/init.lua -> rpiv_todo.a.
---@param path string
---@return string
function H.module_of(path)
  local name = path:gsub("^lua/", ""):gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", ".")
  return name
end

---The paths .luacheckrc gives the `vim` global (`files["<path>"] = nvim`), under lua/.
---@return string[]
function H.glue_paths()
  local out = {}
  for path in T.read(H.root .. "/.luacheckrc"):gmatch('files%["(lua/[^"]+)"%]%s*=%s*nvim') do
    out[#out + 1] = path
  end
  return out
end

---Is `path` Neovim glue (may touch `vim`)?
---@param path string
---@param glue string[]
---@return boolean
function H.is_glue(path, glue)
  if path:find("^lua/rpiv_todo/nvim/") or path == "lua/rpiv_todo/health.lua" then
    return true
  end
  for _, g in ipairs(glue) do
    if path == g or (g:sub(-1) == "/" and path:sub(1, #g) == g) then
      return true
    end
  end
  return false
end

---The graph: module -> { path, requires = { module... } } (modules of the plugin only;
---the declaration files of meta/ never run and are left out).
---@return table<string, table>
function H.graph()
  local graph = {}
  for _, path in ipairs(H.files()) do
    if not path:find("^lua/rpiv_todo/meta/") then
      local required, uses = H.scan(T.read(H.root .. "/" .. path))
      graph[H.module_of(path)] = { path = path, raw = required, vim = uses }
    end
  end
  for _, node in pairs(graph) do
    local seen, edges = {}, {}
    for _, name in ipairs(node.raw) do
      if graph[name] ~= nil and not seen[name] then
        seen[name] = true
        edges[#edges + 1] = name
      end
    end
    table.sort(edges)
    node.requires = edges
  end
  return graph
end

---The cycles of the graph: each strongly connected component of more than one module
---(or a module requiring itself), as its sorted names.
---@param graph table<string, table>
---@return string[][]
function H.cycles(graph)
  local index, low, on, stack, out, counter = {}, {}, {}, {}, {}, 0
  local names = {}
  for name in pairs(graph) do
    names[#names + 1] = name
  end
  table.sort(names)
  local function connect(v)
    counter = counter + 1
    index[v], low[v] = counter, counter
    stack[#stack + 1] = v
    on[v] = true
    for _, w in ipairs(graph[v].requires) do
      if index[w] == nil then
        connect(w)
        low[v] = math.min(low[v], low[w])
      elseif on[w] then
        low[v] = math.min(low[v], index[w])
      end
    end
    if low[v] == index[v] then
      local comp = {}
      repeat
        local w = table.remove(stack)
        on[w] = nil
        comp[#comp + 1] = w
      until w == v
      local self_loop = false
      for _, w in ipairs(graph[v].requires) do
        self_loop = self_loop or w == v
      end
      if #comp > 1 or self_loop then
        table.sort(comp)
        out[#out + 1] = comp
      end
    end
  end
  for _, name in ipairs(names) do
    if index[name] == nil then
      connect(name)
    end
  end
  return out
end

-- ---------------------------------------------------------------------------
-- The lexer and the checks on made-up sources (so the rules below can fail)
-- ---------------------------------------------------------------------------

T.test("the scanner finds every form of require, and none in comments or other strings", function()
  local src = table.concat({
    'local a = require("rpiv_todo.a")',
    "local b = require 'rpiv_todo.b'",
    "local function f() return require([[rpiv_todo.c]]) end",
    'local ok, d = pcall(require, "rpiv_todo.d")',
    '-- require("rpiv_todo.comment")',
    "--[==[ require('rpiv_todo.long_comment') ]==]",
    'local s = "require(\\"rpiv_todo.in_string\\")"',
    "local t = x.require",
  }, "\n")
  local required = H.scan(src)
  T.same(required, { "rpiv_todo.a", "rpiv_todo.b", "rpiv_todo.c", "rpiv_todo.d" }, "required")
end)

T.test("the scanner sees vim as a global and through _G, not as a field name", function()
  local _, uses = H.scan('local a = vim.api\nlocal b = rawget(_G, "vim")\nlocal c = _G.vim\nlocal d = x.vim\n-- vim')
  T.same(uses, { "the global vim", 'rawget(_G, "vim")', "_G.vim" }, "uses")
end)

T.test("a cycle is found, also through a module's lazy require", function()
  local graph = {
    a = { requires = { "b" } },
    b = { requires = { "c" } },
    c = { requires = { "a" } },
    d = { requires = { "a" } },
    e = { requires = { "e" } },
  }
  T.same(H.cycles(graph), { { "a", "b", "c" }, { "e" } }, "cycles")
  T.same(H.cycles({ a = { requires = { "b" } }, b = { requires = {} } }), {}, "no cycle")
end)

-- ---------------------------------------------------------------------------
-- The rules, on lua/rpiv_todo
-- ---------------------------------------------------------------------------

local graph = H.graph()

T.test("the scan reads the plugin's modules", function()
  T.ok(graph["rpiv_todo"] ~= nil, "rpiv_todo (init.lua) is a module")
  T.ok(graph["rpiv_todo.nvim"] ~= nil, "rpiv_todo.nvim (nvim/init.lua) is a module")
  T.ok(graph["rpiv_todo.adapters.codecompanion"] ~= nil, "an adapter is a module")
  local edges = 0
  for _, node in pairs(graph) do
    edges = edges + #node.requires
  end
  T.ok(edges > 50, "the modules require each other (" .. edges .. " edges)")
end)

T.test("no require cycle among the plugin's modules", function()
  local shown = {}
  for _, comp in ipairs(H.cycles(graph)) do
    local lines = {}
    for _, name in ipairs(comp) do
      local inside = {}
      for _, w in ipairs(graph[name].requires) do
        for _, other in ipairs(comp) do
          if other == w then
            inside[#inside + 1] = w
          end
        end
      end
      lines[#lines + 1] = "  " .. name .. " -> " .. table.concat(inside, ", ")
    end
    shown[#shown + 1] = table.concat(lines, "\n")
  end
  T.eq(table.concat(shown, "\n\n"), "", "the cycles (each module -> what it requires inside its cycle)")
end)

T.test("the plain modules never touch vim", function()
  local glue = H.glue_paths()
  local bad = {}
  local names = {}
  for name in pairs(graph) do
    names[#names + 1] = name
  end
  table.sort(names)
  local plain = 0
  for _, name in ipairs(names) do
    local node = graph[name]
    if not H.is_glue(node.path, glue) then
      plain = plain + 1
      for _, how in ipairs(node.vim) do
        bad[#bad + 1] = node.path .. ": " .. how
      end
    end
  end
  T.ok(plain > 20, "most modules are plain (" .. plain .. ")")
  -- The installer is in the editor's layer (lua/rpiv_todo/nvim/install/), and so is its
  -- deprecated alias.
  T.eq(H.is_glue("lua/rpiv_todo/nvim/install/init.lua", glue), true, "nvim/install/init.lua is glue")
  T.eq(H.is_glue("lua/rpiv_todo/nvim/install/release.lua", glue), true, "nvim/install/release.lua is glue")
  T.eq(H.is_glue("lua/rpiv_todo/install/init.lua", glue), true, "the alias install/init.lua is glue")
  T.eq(table.concat(bad, "\n"), "", "uses of vim in plain modules")
end)

T.test("no adapter requires the Neovim front end", function()
  local bad = {}
  for name, node in pairs(graph) do
    if name:find("^rpiv_todo%.adapters%.") then
      for _, w in ipairs(node.raw) do
        if w == "rpiv_todo.nvim" or w:find("^rpiv_todo%.nvim%.") then
          bad[#bad + 1] = name .. " -> " .. w
        end
      end
    end
  end
  table.sort(bad)
  T.eq(table.concat(bad, "\n"), "", "adapters requiring the front end")
end)

T.test("no plain module reaches the editor's modules, not even through others", function()
  -- The editor's side: nvim/ (the installer among it), the adapters (front ends in their
  -- own right), health.lua and the installer's deprecated alias. Everything else is plain,
  -- and so is all it requires, transitively.
  local function editor_side(name)
    return name:find("^rpiv_todo%.nvim") ~= nil
      or name:find("^rpiv_todo%.adapters%.") ~= nil
      or name == "rpiv_todo.health"
      or name == "rpiv_todo.install"
  end
  local bad = {}
  for name in pairs(graph) do
    if not editor_side(name) then
      local seen, stack = {}, { name }
      while #stack > 0 do
        local n = table.remove(stack)
        for _, w in ipairs(graph[n].requires) do
          if not seen[w] then
            seen[w] = n
            stack[#stack + 1] = w
          end
        end
      end
      for w, via in pairs(seen) do
        if w:find("^rpiv_todo%.nvim") then
          bad[#bad + 1] = name .. " -> ... -> " .. via .. " -> " .. w
        end
      end
    end
  end
  table.sort(bad)
  T.eq(#bad == 0 and "" or bad[1] .. " (and " .. (#bad - 1) .. " more)", "", "plain modules reaching rpiv_todo.nvim*")
  -- An adapter reaches the plain layer only: requiring rpiv_todo brings no editor module.
  local seen, stack = {}, { "rpiv_todo.adapters.codecompanion" }
  local count = 0
  while #stack > 0 do
    local n = table.remove(stack)
    for _, w in ipairs(graph[n].requires) do
      if not seen[w] then
        seen[w], count = true, count + 1
        stack[#stack + 1] = w
      end
    end
  end
  T.ok(count < 40, "codecompanion's adapter reaches " .. count .. " modules")
end)

-- The status machine has one owner, the core (`Status::can_move_to`, exported as
-- `core.newer` for compaction): a Lua table of transitions, a status keyed to a table of
-- statuses (`completed = { completed = true, deleted = true }`), is a second copy.
H.STATUSES = { pending = true, in_progress = true, completed = true, deleted = true }

---Where `src` holds a status keyed to a table whose first key is a status set to true.
---@param src string
---@return integer count
function H.transition_tables(src)
  local toks, found = H.tokens(src), 0
  for i = 1, #toks - 5 do
    local a, eq, open, b, eq2, v = toks[i], toks[i + 1], toks[i + 2], toks[i + 3], toks[i + 4], toks[i + 5]
    if
      a.kind == "name"
      and H.STATUSES[a.value]
      and eq.value == "="
      and open.value == "{"
      and b.kind == "name"
      and H.STATUSES[b.value]
      and eq2.value == "="
      and v.value == "true"
    then
      found = found + 1
    end
  end
  return found
end

T.test("the status machine is the core's alone: no Lua table of transitions", function()
  T.eq(
    H.transition_tables("local R = { pending = { pending = true, in_progress = true }, deleted = { deleted = true } }"),
    2,
    "the scan finds one"
  )
  T.eq(H.transition_tables('local S = { pending = "○", completed = "✓" }'), 0, "glyphs by status are not one")
  local bad = {}
  for _, path in ipairs(H.files()) do
    if H.transition_tables(T.read(H.root .. "/" .. path)) > 0 then
      bad[#bad + 1] = path
    end
  end
  T.eq(table.concat(bad, "\n"), "", "files with a transition table")
end)

T.finish()
