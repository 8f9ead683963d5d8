-- rpiv_todo.nvim.highlights: the RpivTodo* highlight groups of the panel and the list window.
--
-- Every group is a `default` definition, so a colorscheme or the user's config wins. The
-- panel must stay readable in GUI colours and in a 256-colour terminal
-- (`notermguicolors`), in dark and light schemes, so two things are checked each time
-- the groups are (re)defined (attach, ColorScheme, `background`/`termguicolors` changes):
--   * RpivTodoNormal (the float's own colours) links to NormalFloat only when NormalFloat
--     has a background of its own in both GUI and cterm colours, different from Normal's;
--     otherwise it gets explicit colours (NormalFloat's where it has them, else a grey
--     matching 'background'), so the float never runs into the buffer;
--   * a colour group whose link target carries a background (NonText in `morning`, say)
--     would paint patches of that background over the float: such a group gets the
--     target's foreground alone.
-- A definition made here is redefined later only while it is still ours (the user may
-- have replaced it meanwhile); `:highlight clear` (what a colorscheme starts with) makes
-- every group ours again.

---@helptext rpiv_todo-highlights verbatim
--- Every group is a `default` definition, so a colorscheme or your config may
--- define it (`vim.api.nvim_set_hl(0, "RpivTodoDim", { fg = "#888888" })`; to
--- keep an override across `:colorscheme`, set it in a |ColorScheme| autocmd,
--- as for any group).
---
---     RpivTodoNormal        the panel's background and text    -> NormalFloat
---     RpivTodoAccent        heading and the task in progress   -> Special
---     RpivTodoDim           tree lines, ids, pending glyphs    -> NonText
---     RpivTodoMuted         completed subjects, dependencies   -> Comment
---     RpivTodoText          pending subjects                   -> RpivTodoNormal
---     RpivTodoWarning       the in-progress glyph              -> DiagnosticWarn
---     RpivTodoSuccess       the completed glyph                -> String
---     RpivTodoError         (layout overrides)                 -> DiagnosticError
---     RpivTodoToolTitle     section lines of |:Todos|           -> Title
---     RpivTodoBorder        the border, with `border` set      -> FloatBorder
---     RpivTodoBold          layered over the heading           bold
---     RpivTodoStrikethrough layered over completed subjects    strikethrough
---
--- Two checks keep the panel readable in GUI colours and in 256-colour
--- terminals ('notermguicolors'), in dark and light schemes:
--- - RpivTodoNormal links to NormalFloat only when NormalFloat has a background
---   of its own, in GUI and cterm colours, different from Normal's. Otherwise
---   it gets explicit colours: NormalFloat's where it has them, else a grey a
---   step away from the usual dark or light background ('background').
--- - A group whose link target has a background (NonText in `morning`, say)
---   would paint that background in patches over the panel; such a group gets
---   the target's foreground alone.
--- They run again on |ColorScheme| and when 'background' or 'termguicolors'
--- changes, and never replace a definition of yours.

local M = {}
local H = {}

-- Colour groups of the overlay's theme and what each links to by default, in the order
-- they are defined (a list: loops here avoid pairs(), which the LuaJIT of Neovim 0.7.2
-- was seen to get wrong once compiled; see overlay/layout.lua).
M.link_list = {
  { "RpivTodoAccent", "Special" },
  { "RpivTodoDim", "NonText" },
  { "RpivTodoMuted", "Comment" },
  { "RpivTodoText", "RpivTodoNormal" },
  { "RpivTodoWarning", "DiagnosticWarn" },
  { "RpivTodoSuccess", "String" },
  { "RpivTodoError", "DiagnosticError" },
  { "RpivTodoToolTitle", "Title" },
  { "RpivTodoBorder", "FloatBorder" },
}
-- Attribute-only groups layered over the colour groups.
M.attribute_list = {
  { "RpivTodoBold", "gui=bold cterm=bold" },
  { "RpivTodoStrikethrough", "gui=strikethrough cterm=strikethrough" },
}
-- The same as maps: group -> link target, group -> attributes.
M.links, M.attributes = {}, {}
for _, l in ipairs(M.link_list) do
  M.links[l[1]] = l[2]
end
for _, a in ipairs(M.attribute_list) do
  M.attributes[a[1]] = a[2]
end
-- The float's background when NormalFloat gives none: a grey a step away from the
-- usual dark or light editor background, in GUI and 256-colour terms.
M.fallback = {
  dark = { guifg = "#d0d0d0", guibg = "#303036", ctermfg = 252, ctermbg = 236 },
  light = { guifg = "#303030", guibg = "#e2e2ea", ctermfg = 236, ctermbg = 254 },
}

-- Foregrounds for the groups whose link target may have none in one colour kind: Neovim
-- 0.12's default scheme gives NonText and Comment GUI colours only, so with
-- `notermguicolors` tree lines, ids and dependencies printed like plain text. Greys that
-- read on dark and on light backgrounds (the panel's own above included), Dim a step
-- fainter than Muted.
M.fallback_fg = {
  RpivTodoDim = { dark = { gui = "#767676", cterm = 243 }, light = { gui = "#8a8a8a", cterm = 245 } },
  RpivTodoMuted = { dark = { gui = "#9e9e9e", cterm = 247 }, light = { gui = "#626262", cterm = 241 } },
}

H.ours = {} -- group -> the `:highlight <group>` text right after we defined it

---The `:highlight` listing of a group, whitespace collapsed ("" when undefined).
---@param group string
---@return string
function H.listing(group)
  if vim.fn.hlexists(group) == 0 then
    return ""
  end
  local ok, out = pcall(vim.fn.execute, "highlight " .. group)
  if not ok then
    return ""
  end
  return (out:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", ""))
end

-- The link each group starts with: `:highlight clear` (what a colorscheme begins with)
-- puts a `default link` back, even after the group was given colours since.
H.DEFAULT_LINK = { RpivTodoNormal = "NormalFloat" }
for _, l in ipairs(M.link_list) do
  H.DEFAULT_LINK[l[1]] = l[2]
end

---May this module (re)define `group`: undefined, cleared, back to its default link, or
---still what we set?
---@param group string
---@return boolean
function H.is_ours(group)
  local now = H.listing(group)
  if now == "" or now:find(" cleared$") then
    return true
  end
  local target = H.DEFAULT_LINK[group]
  if target ~= nil and now:find(" links to " .. target .. "$") and not now:find("=") then
    return true
  end
  return H.ours[group] ~= nil and H.ours[group] == now
end

---@param group string
---@param definition string what follows `highlight default <group> ` (or `link <target>`)
function H.define(group, definition)
  if not H.is_ours(group) then
    return
  end
  vim.cmd("highlight clear " .. group)
  if definition:sub(1, 5) == "link " then
    vim.cmd("highlight default link " .. group .. " " .. definition:sub(6))
  else
    vim.cmd("highlight default " .. group .. " " .. definition)
  end
  H.ours[group] = H.listing(group)
end

---An attribute of a group after links are followed ("" when unset).
---@param group string
---@param what string "fg" | "bg"
---@param mode string "gui" | "cterm"
---@return string
function M.attr(group, what, mode)
  local id = vim.fn.synIDtrans(vim.fn.hlID(group))
  local value = vim.fn.synIDattr(id, what .. (mode == "gui" and "#" or ""), mode)
  if type(value) ~= "string" then
    return ""
  end
  return value
end

---The definition RpivTodoNormal gets: a link, or explicit colours.
---@return string
function M.normal_definition()
  local distinct = true
  local parts = {}
  local fallback = M.fallback[vim.o.background == "light" and "light" or "dark"]
  for _, mode in ipairs({ "gui", "cterm" }) do
    local bg = M.attr("NormalFloat", "bg", mode)
    if bg == "" or bg == M.attr("Normal", "bg", mode) then
      distinct = false
      bg = tostring(fallback[mode .. "bg"])
      -- The foreground must read on the fallback background, whatever Normal's is.
      parts[#parts + 1] = mode .. "fg=" .. tostring(fallback[mode .. "fg"])
    else
      local fg = M.attr("NormalFloat", "fg", mode)
      if fg ~= "" then
        parts[#parts + 1] = mode .. "fg=" .. fg
      end
    end
    parts[#parts + 1] = mode .. "bg=" .. bg
  end
  if distinct then
    return "link NormalFloat"
  end
  return table.concat(parts, " ")
end

---The definition of a colour group: its link, or the target's foreground alone when
---the target carries a background of its own; a group with a fallback foreground
---(M.fallback_fg) takes it in a colour kind where the target has none, or has the panel's
---background as its foreground.
---@param target string
---@param group? string the group being defined
---@return string
function M.color_definition(target, group)
  if target == "RpivTodoNormal" then
    return "link " .. target
  end
  local fallback = M.fallback_fg[group or ""]
  fallback = fallback and fallback[vim.o.background == "light" and "light" or "dark"]
  -- A foreground that is missing, or the panel's own background (NonText in darkblue),
  -- shows nothing: such a group takes its fallback.
  local function unseen(mode)
    local fg = M.attr(target, "fg", mode)
    return fg == "" or fg:lower() == M.attr("RpivTodoNormal", "bg", mode):lower() -- "Magenta", "magenta"
  end
  local has_bg = M.attr(target, "bg", "gui") ~= "" or M.attr(target, "bg", "cterm") ~= ""
  local missing = fallback ~= nil and (unseen("gui") or unseen("cterm"))
  if not has_bg and not missing then
    return "link " .. target
  end
  local parts = {}
  for _, mode in ipairs({ "gui", "cterm" }) do
    local fg = M.attr(target, "fg", mode)
    if fallback ~= nil and unseen(mode) then
      fg = tostring(fallback[mode])
    end
    if fg ~= "" then
      parts[#parts + 1] = mode .. "fg=" .. fg
    end
  end
  if #parts == 0 then
    return "link RpivTodoNormal"
  end
  return table.concat(parts, " ")
end

---Define (or bring back) every group. Safe to call any time: groups the user or the
---colorscheme defined are left alone.
function M.define()
  H.define("RpivTodoNormal", M.normal_definition())
  for _, l in ipairs(M.link_list) do
    H.define(l[1], M.color_definition(l[2], l[1]))
  end
  for _, a in ipairs(M.attribute_list) do
    H.define(a[1], a[2])
  end
end

---Every group this module defines (for :checkhealth and tests).
---@return string[]
function M.groups()
  local out = { "RpivTodoNormal" }
  for _, l in ipairs(M.link_list) do
    out[#out + 1] = l[1]
  end
  for _, a in ipairs(M.attribute_list) do
    out[#out + 1] = a[1]
  end
  table.sort(out)
  return out
end

return M
