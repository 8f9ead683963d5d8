-- scripts/gen-help.lua: writes doc/rpiv_todo.txt, the whole of `:help rpiv_todo`, from the
-- LuaCATS annotations in lua/, so the help and the code say the same thing from one source.
-- Nothing in the help file is edited by hand.
--
--   luajit scripts/gen-help.lua           rewrite doc/rpiv_todo.txt
--   luajit scripts/gen-help.lua --check   exit 1 (and say where) when the help is stale
--
-- Plain Lua (lua5.1, lua5.4 and `nvim -l` run it too), from the repository root. The
-- layout (header, sections in order, their entries) is scripts/help_layout.lua; the text
-- is the `---` doc blocks in lua/**/*.lua: a function's prose above `function M.name`, a
-- class's `---@field` lines, and free-standing `---@helptext <id> [verbatim]` blocks.
-- CONTRIBUTING.md ("The help is generated") says how to write them. It fails, writing
-- nothing, when the layout names what no file has, a block is used by no entry, or a
-- class field is missing from its setup entry.

local HELP = "doc/rpiv_todo.txt"
local WIDTH = 78

local LAYOUT = dofile("scripts/help_layout.lua")

local H = {}

---Fail with a message naming what is wrong; the generator never writes half a help file.
---@param msg string
function H.die(msg)
  io.stderr:write("gen-help: " .. msg .. "\n")
  os.exit(2)
end

---@param path string
---@return string
function H.read(path)
  local f = io.open(path, "rb")
  if f == nil then
    H.die("cannot read " .. path .. " (run from the repository root)")
  end
  local text = f:read("*a")
  f:close()
  return text
end

---Every lua/**/*.lua file, sorted, without needing a Lua file-system library.
---@return string[]
function H.lua_files()
  local pipe = io.popen("find lua -name '*.lua' | LC_ALL=C sort")
  if pipe == nil then
    H.die("cannot list lua/")
  end
  local files = {}
  for line in pipe:lines() do
    files[#files + 1] = line
  end
  pipe:close()
  if #files == 0 then
    H.die("no Lua files under lua/ (run from the repository root)")
  end
  return files
end

---`lua/rpiv_todo/nvim/init.lua` -> `rpiv_todo.nvim`.
---@param path string
---@return string
function H.module_of(path)
  local name = path:gsub("^lua/", ""):gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", ".")
  return name
end

---@param text string
---@return string[]
function H.lines(text)
  local out = {}
  for line in (text:gsub("\r\n", "\n") .. "\n"):gmatch("([^\n]*)\n") do
    out[#out + 1] = line
  end
  if out[#out] == "" then
    out[#out] = nil
  end
  return out
end

---The type at the start of `s` (a LuaCATS type may hold spaces inside brackets or
---around `|`), and the rest.
---@param s string
---@return string type, string rest
function H.split_type(s)
  local depth, i, n = 0, 1, #s
  while i <= n do
    local c = s:sub(i, i)
    if c == "(" or c == "{" or c == "[" or c == "<" then
      depth = depth + 1
    elseif (c == ")" or c == "}" or c == "]" or c == ">") and s:sub(i - 1, i) ~= "->" then
      depth = depth - 1
    elseif c == " " and depth <= 0 then
      local before = s:sub(1, i - 1):match("[|,:]%s*$")
      local after = s:sub(i):match("^%s*[|,]")
      if not before and not after then
        break
      end
    end
    i = i + 1
  end
  return s:sub(1, i - 1), (s:sub(i):gsub("^%s+", ""))
end

---Read every doc block of the sources: functions, class fields and free-standing texts.
---@return table db
function H.collect()
  local db = { fns = {}, texts = {}, classes = {} }
  for _, path in ipairs(H.lua_files()) do
    local module = H.module_of(path)
    local lines = H.lines(H.read(path))
    lines[#lines + 1] = "" -- ends a block that ends the file
    local block = {}
    for lnum, line in ipairs(lines) do
      local doc = line:match("^%-%-%-(.*)$")
      if doc ~= nil and not line:match("^%-%-%-%-") then
        block[#block + 1] = { text = doc, where = path .. ":" .. lnum }
      else
        if #block > 0 then
          H.take_block(db, module, block, line, path .. ":" .. lnum)
        end
        block = {}
      end
    end
  end
  return db
end

---One `---` block, followed by `line` (the first line after it).
function H.take_block(db, module, block, line, where)
  local prose, signatures, helptext, class, verbatim = {}, {}, nil, nil, false
  local field_prose = {}
  local in_tags = false
  for _, item in ipairs(block) do
    local doc = item.text
    local tag, rest = doc:match("^@(%S+)%s*(.*)$")
    if tag == "helptext" then
      local mode
      helptext, mode = rest:match("^(%S+)%s*(.-)%s*$")
      if helptext == nil or (mode ~= "" and mode ~= "verbatim") then
        H.die(item.where .. ": expected `---@helptext <id>` or `---@helptext <id> verbatim`")
      end
      verbatim = mode == "verbatim"
    elseif tag == "signature" then
      signatures[#signatures + 1] = rest
    elseif tag == "class" then
      local name = rest:match("^%(.-%)%s*(%S+)") or rest:match("^(%S+)")
      class = (name or ""):gsub(":.*$", "")
      db.classes[class] = db.classes[class] or {}
      field_prose = {}
      in_tags = true
    elseif tag == "field" and class ~= nil then
      local name, opt, after = rest:match("^([%w_]+)(%??)%s+(.*)$")
      if name ~= nil then
        local ty, desc = H.split_type(after)
        local text = #field_prose > 0 and field_prose or { desc }
        db.classes[class][name] = { type = ty, optional = opt == "?", prose = text, where = item.where }
      end
      field_prose = {}
    elseif tag ~= nil then
      in_tags = true
    elseif class ~= nil then
      field_prose[#field_prose + 1] = doc
    elseif not in_tags then
      prose[#prose + 1] = doc
    end
  end
  if helptext ~= nil then
    if db.texts[helptext] ~= nil then
      H.die("two @helptext blocks named " .. helptext .. ": " .. db.texts[helptext].where .. " and " .. where)
    end
    db.texts[helptext] = { prose = prose, where = where, verbatim = verbatim }
    return
  end
  local tbl, name, params = line:match("^function%s+([%w_]+)[%.:]([%w_]+)%s*%((.-)%)")
  if name == nil then
    tbl, name, params = line:match("^(M)%.([%w_]+)%s*=%s*function%s*%((.-)%)")
  end
  if name ~= nil then
    -- `function M.f` is `<module>.f`; `function Session:f` is `<module>.Session.f`.
    local full = module .. "." .. (tbl == "M" and "" or tbl .. ".") .. name
    db.fns[full] = db.fns[full]
      or { prose = prose, params = params, signatures = signatures, where = where, exported = tbl == "M" }
  end
end

---A doc line without the one space that usually follows `---`.
---@param doc string
---@return string
function H.strip(doc)
  return (doc:gsub("^ ", ""))
end

---The function `name` (module.fn): first in the module's own file, else in a file of
---the module's folder.
function H.find_fn(db, name, from)
  if from ~= nil then
    local fn = name:match("([%w_]+)$")
    return db.fns[from .. "." .. fn] or H.die("no doc block for " .. fn .. " in module " .. from)
  end
  if db.fns[name] ~= nil then
    return db.fns[name]
  end
  local module, fn = name:match("^(.*)%.([%w_]+)$")
  local found = nil
  for full, entry in pairs(db.fns) do
    local m, f = full:match("^(.*)%.([%w_]+)$")
    if entry.exported and f == fn and m:sub(1, #module + 1) == module .. "." then
      if found ~= nil then
        local msg = '%s is documented in two files: %s and %s (give its entry `from = "<module>"`)'
        H.die(msg:format(name, found.where, entry.where))
      end
      found = entry
    end
  end
  if found == nil then
    H.die("no doc block for function " .. name .. " (expected `function M." .. fn .. "` under lua/)")
  end
  return found
end

---Display width of a help line (UTF-8 aware enough for this file: one column a character).
---@param s string
---@return integer
function H.width(s)
  local _, count = s:gsub("[^\128-\191]", "")
  return count
end

---Append the words of `text` to `words`, a `code span` counting as one word (a span
---may continue from the previous source line: it is then joined to the last word).
---@param words string[]
---@param text string
function H.add_words(words, text)
  for word in text:gmatch("%S+") do
    local last = words[#words]
    local _, ticks = (last or ""):gsub("`", "")
    if last ~= nil and ticks % 2 == 1 then
      words[#words] = last .. " " .. word
    else
      words[#words + 1] = word
    end
  end
end

---Re-wrap prose to WIDTH columns, each line starting with `indent` spaces (`first` for
---the very first line when given). Code blocks and indented lines pass through.
---@param prose string[]
---@param indent integer
---@return string[]
function H.wrap(prose, indent)
  local pad = string.rep(" ", indent)
  local out, words, in_code = {}, {}, false
  local function flush()
    if #words == 0 then
      return
    end
    local line = pad
    for _, word in ipairs(words) do
      if line ~= pad and H.width(line) + 1 + H.width(word) > WIDTH then
        out[#out + 1] = line
        line = pad .. word
      elseif line == pad then
        line = pad .. word
      else
        line = line .. " " .. word
      end
    end
    out[#out + 1] = line
    words = {}
  end
  for _, raw in ipairs(prose) do
    local text = H.strip(raw)
    if in_code then
      if text:match("^<") then
        in_code = false
        out[#out + 1] = text
      elseif text == "" then
        out[#out + 1] = ""
      else
        out[#out + 1] = pad .. raw
      end
    elseif text == "" then
      flush()
      out[#out + 1] = ""
    elseif text == ">" or text:match("%s>$") then
      H.add_words(words, text:sub(1, -2))
      flush()
      if text == ">" then
        out[#out + 1] = ">"
      else
        out[#out] = out[#out] .. " >"
      end
      in_code = true
    elseif text:match("^%s") then
      flush()
      out[#out + 1] = pad .. text
    else
      H.add_words(words, text)
    end
  end
  flush()
  while out[#out] == "" do
    out[#out] = nil
  end
  return out
end

---A tag right-aligned on its own line.
---@param tag string
---@return string
function H.tag_line(tag)
  local text = "*" .. tag .. "*"
  return string.rep(" ", math.max(1, WIDTH - H.width(text))) .. text
end

---`execute(params, ctx)` -> `execute({params}, {ctx})`.
---@param short string
---@param params string
---@return string
function H.signature(short, params)
  local shown = {}
  for p in params:gmatch("[^,%s]+") do
    shown[#shown + 1] = "{" .. p .. "}"
  end
  return short .. "(" .. table.concat(shown, ", ") .. ")"
end

---The help text of one layout entry.
function H.render_entry(db, entry)
  local out = {}
  local function add(lines)
    for _, l in ipairs(lines) do
      out[#out + 1] = l
    end
  end
  if entry.fn then
    local fn
    if entry.source ~= nil then
      fn = db.fns[entry.source] or H.die("no doc block for " .. entry.source)
    else
      fn = H.find_fn(db, entry.fn, entry.from)
    end
    if #fn.prose == 0 then
      H.die("the doc block of " .. entry.fn .. " (" .. fn.where .. ") has no prose")
    end
    local short = entry.show or entry.fn:match("([%w_]+)$")
    out[#out + 1] = H.tag_line(entry.fn .. "()")
    if #fn.signatures > 0 then
      add(fn.signatures)
    else
      out[#out + 1] = H.signature(short, fn.params)
    end
    add(H.wrap(fn.prose, 4))
  elseif entry.text then
    local block = db.texts[entry.text]
    if block == nil then
      H.die("no `---@helptext " .. entry.text .. "` block under lua/")
    end
    if entry.tag then
      out[#out + 1] = H.tag_line(entry.tag)
    end
    if entry.title then
      out[#out + 1] = entry.title
    end
    block.used = true
    if block.verbatim then
      for _, l in ipairs(block.prose) do
        out[#out + 1] = H.strip(l)
      end
    else
      add(H.wrap(block.prose, entry.indent or 0))
    end
  elseif entry.setup then
    local fn = H.find_fn(db, entry.setup)
    local classes = {}
    for i, name in ipairs(entry.classes) do
      classes[i] = db.classes[name] or H.die("no `---@class " .. name .. "` under lua/")
    end
    out[#out + 1] = H.tag_line(entry.setup .. "()")
    out[#out + 1] = entry.call
    add(H.wrap(fn.prose, 4))
    out[#out + 1] = ""
    local seen = {}
    for _, name in ipairs(entry.fields) do
      local field = nil
      for _, class in ipairs(classes) do
        field = field or class[name]
      end
      if field == nil then
        H.die("none of " .. table.concat(entry.classes, ", ") .. " has a field " .. name)
      end
      seen[name] = true
      local body = H.wrap(field.prose, 22)
      local first = "    " .. name
      if H.width(first) < 22 and body[1] ~= nil then
        body[1] = first .. string.rep(" ", 22 - H.width(first)) .. body[1]:sub(23)
      else
        table.insert(body, 1, first)
      end
      add(body)
    end
    for i, class in ipairs(classes) do
      for name, field in pairs(class) do
        if not seen[name] then
          H.die(entry.classes[i] .. "." .. name .. " (" .. field.where .. ") is missing from the help's field list")
        end
      end
    end
  else
    H.die("a layout entry of unknown kind")
  end
  return out
end

---A heading: `text`, then `*tag*` ending in column WIDTH.
---@param text string
---@param tag string
---@return string
function H.heading(text, tag)
  local mark = "*" .. tag .. "*"
  return text .. string.rep(" ", math.max(1, WIDTH - H.width(text) - H.width(mark))) .. mark
end

---The CONTENTS table: one row a section: its number, its title, dots to column 50, its link.
---@return string[]
function H.contents()
  local out = {}
  for i, section in ipairs(LAYOUT.sections) do
    local row = ("%3d. %s "):format(i, section.title)
    out[#out + 1] = row .. string.rep(".", math.max(3, 50 - H.width(row))) .. " |" .. section.tag .. "|"
  end
  return out
end

---The whole help, from the layout and the annotations.
---@return string
function H.generate()
  local db = H.collect()
  local rule = string.rep("=", WIDTH)
  local out = { "*rpiv_todo.txt*    " .. LAYOUT.title, "", rule, H.heading("CONTENTS", "rpiv_todo-contents"), "" }
  local function add(lines)
    for _, l in ipairs(lines) do
      out[#out + 1] = (l:gsub("%s+$", ""))
    end
  end
  add(H.contents())
  for i, section in ipairs(LAYOUT.sections) do
    add({ "", rule, H.heading(i .. ". " .. section.title, section.tag) })
    for j, entry in ipairs(section.entries) do
      if j > 1 or not section.tight then
        out[#out + 1] = ""
      end
      add(H.render_entry(db, entry))
    end
  end
  add({ "", " vim:tw=78:ts=8:ft=help:norl:" })
  for id, block in pairs(db.texts) do
    if not block.used then
      H.die("`---@helptext " .. id .. "` (" .. block.where .. ") is in no section of the layout")
    end
  end
  return table.concat(out, "\n") .. "\n"
end

local check = arg and arg[1] == "--check"
local generated = H.generate()
if check then
  local help = H.read(HELP)
  if generated ~= help then
    local old, new = H.lines(help), H.lines(generated)
    for i = 1, math.max(#old, #new) do
      if old[i] ~= new[i] then
        local msg = "%s is stale from line %d:\n  has:    %s\n  source: %s\n"
        io.stderr:write(msg:format(HELP, i, old[i] or "<end>", new[i] or "<end>"))
        break
      end
    end
    io.stderr:write("Regenerate it with:  luajit scripts/gen-help.lua (never edit it by hand)\n")
    os.exit(1)
  end
  print(HELP .. " is up to date with the annotations")
else
  local f = assert(io.open(HELP, "wb"))
  f:write(generated)
  f:close()
  print("wrote " .. HELP)
end
