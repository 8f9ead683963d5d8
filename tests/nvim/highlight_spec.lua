-- tests/nvim/highlight_spec.lua: the panel stays visible in GUI colours and in a
-- 256-colour terminal (`notermguicolors`), under dark and light colorschemes, in headless
-- Neovim 0.7.2 and current (through scripts/nvim-runner.lua). Attributes are read back
-- with nvim_get_hl (0.9+) or nvim_get_hl_by_name (before), after links are followed:
--   * the float's own group (RpivTodoNormal) has a background in both colour kinds, and
--     it differs from Normal's, so the panel never runs into the buffer;
--   * no colour group painted on it carries a background of its own (the grey patches
--     `morning`'s NonText left on ├─, ○ and #id);
--   * every RpivTodo* group can be overridden, and a colorscheme change keeps the
--     override while bringing the defaults back.

local N = dofile(os.getenv("RPIV_ROOT") .. "/tests/nvim/helpers.lua")
local T = N.T
local H = {}

N.plugin()

local todo = require("rpiv_todo")
local nv = require("rpiv_todo.nvim")

-- The colour groups the panel paints with (overlay themes.segments and the list window).
H.PAINTED = {
  "RpivTodoAccent",
  "RpivTodoDim",
  "RpivTodoMuted",
  "RpivTodoText",
  "RpivTodoWarning",
  "RpivTodoSuccess",
  "RpivTodoError",
  "RpivTodoToolTitle",
}

---A group's resolved attributes: { fg, bg } for GUI (rgb = true) or cterm colours.
---@param group string
---@param rgb boolean
---@return table
function H.hl(group, rgb)
  if vim.fn.has("nvim-0.9") == 1 then
    local h = vim.api.nvim_get_hl(0, { name = group, link = false })
    if rgb then
      return { fg = h.fg, bg = h.bg, reverse = h.reverse }
    end
    return { fg = h.ctermfg, bg = h.ctermbg, reverse = h.cterm and h.cterm.reverse }
  end
  local h = vim.api.nvim_get_hl_by_name(group, rgb)
  return { fg = h.foreground, bg = h.background, reverse = h.reverse }
end

---The panel with a few tasks over a scheme, with GUI colours on or off.
function H.paint(scheme, gui)
  vim.o.termguicolors = gui
  vim.cmd("colorscheme " .. scheme)
  nv.execute({ action = "list" })
end

---Check the float's background and the painted groups in the active colour kind.
function H.visible(what)
  local rgb = vim.o.termguicolors
  local normal = H.hl("Normal", rgb)
  local float = H.hl("RpivTodoNormal", rgb)
  T.ok(float.bg ~= nil, what .. ": the float has a background")
  T.ok(float.bg ~= normal.bg, what .. ": and it is not the buffer's (" .. tostring(normal.bg) .. ")")
  for _, group in ipairs(H.PAINTED) do
    local h = H.hl(group, rgb)
    T.ok(h.bg == nil or h.bg == float.bg, what .. ": " .. group .. " adds no background of its own")
    T.ok(not h.reverse, what .. ": " .. group .. " is not reversed")
  end
  -- Tree lines, ids and dependencies: a colour of their own in this colour kind.
  for _, group in ipairs({ "RpivTodoDim", "RpivTodoMuted" }) do
    local fg = H.hl(group, rgb).fg
    T.ok(fg ~= nil and fg ~= float.bg, what .. ": " .. group .. " has a foreground (" .. tostring(fg) .. ")")
  end
end

T.test("Dim and Muted get grey foregrounds where their links have none, for dark and light", function()
  vim.o.termguicolors = false
  for _, bg in ipairs({ "dark", "light" }) do
    vim.cmd("highlight clear")
    vim.o.background = bg
    -- What Neovim 0.12's default scheme does: GUI colours only.
    vim.cmd("highlight clear NonText")
    vim.cmd("highlight NonText guifg=#4f5258")
    vim.cmd("highlight clear Comment")
    vim.cmd("highlight Comment guifg=#9b9ea4")
    require("rpiv_todo.nvim.frontend").define_highlights()
    local want = bg == "dark" and { dim = 243, muted = 247 } or { dim = 245, muted = 241 }
    T.eq(H.hl("RpivTodoDim", false).fg, want.dim, bg .. ": Dim's cterm grey")
    T.eq(H.hl("RpivTodoMuted", false).fg, want.muted, bg .. ": Muted's cterm grey")
    T.eq(H.hl("RpivTodoDim", true).fg, 0x4f5258, bg .. ": Dim keeps NonText's GUI colour")
    T.eq(H.hl("RpivTodoMuted", true).fg, 0x9b9ea4, bg .. ": Muted keeps Comment's GUI colour")
  end
  -- A target with colours of both kinds is linked as before.
  vim.cmd("highlight clear")
  vim.cmd("highlight NonText guifg=#445566 ctermfg=60")
  require("rpiv_todo.nvim.frontend").define_highlights()
  T.eq(H.hl("RpivTodoDim", false).fg, 60, "linked: NonText's cterm colour")
  T.eq(vim.fn.execute("highlight RpivTodoDim"):match("links to (%w+)"), "NonText", "a link")
end)

T.test("the panel is painted with its own window background group", function()
  todo.setup({ locale = "en" })
  nv.setup({})
  nv.execute({ action = "create", subject = "Write the parser" })
  nv.execute({ action = "create", subject = "Test it", blockedBy = { 1 } })
  nv.execute({ action = "update", id = 1, status = "in_progress", activeForm = "Writing" })
  local win = nv.window()
  local whl = vim.fn.has("nvim-0.8") == 1 and vim.api.nvim_get_option_value("winhighlight", { win = win })
    or vim.api.nvim_win_get_option(win, "winhighlight")
  T.contains(whl, "Normal:RpivTodoNormal", "winhighlight")
  T.contains(whl, "NormalFloat:RpivTodoNormal", "winhighlight for floats")
end)

T.test("dark default scheme, GUI and 256 colours: a real background, no patches", function()
  H.paint("default", true)
  H.visible("default, termguicolors")
  H.paint("default", false)
  H.visible("default, notermguicolors")
  T.eq(type(H.hl("RpivTodoNormal", false).bg), "number", "a cterm background number")
end)

T.test("light scheme (morning), GUI and 256 colours: a real background, no grey patches", function()
  H.paint("morning", true)
  T.eq(vim.o.background, "light", "morning is light")
  -- The reason for the check: morning gives NonText (what RpivTodoDim follows) a background.
  local nontext = H.hl("NonText", true)
  T.ok(nontext.bg ~= nil, "morning's NonText has a GUI background")
  H.visible("morning, termguicolors")
  T.eq(H.hl("RpivTodoDim", true).fg, nontext.fg, "RpivTodoDim keeps NonText's colour, without its background")
  H.paint("morning", false)
  H.visible("morning, notermguicolors")
  T.eq(H.hl("RpivTodoDim", false).fg, H.hl("NonText", false).fg, "and in cterm colours")
end)

T.test("every colorscheme shipped with Neovim leaves the panel visible", function()
  local schemes = vim.fn.getcompletion("", "color")
  T.ok(#schemes >= 10, "schemes found: " .. #schemes)
  for _, scheme in ipairs(schemes) do
    for _, gui in ipairs({ true, false }) do
      H.paint(scheme, gui)
      H.visible(scheme .. (gui and ", termguicolors" or ", notermguicolors"))
    end
  end
  H.paint("default", true)
end)

---Something that makes the front end look at its groups again without reloading the
---colorscheme (setting 'background' reloads it, which clears everything): a change of
---'termguicolors'. Neovim fires no OptionSet while it is starting, and the runner runs
---specs from the command line of a starting Neovim, so the event is fired here.
function H.recheck()
  local gui = vim.o.termguicolors
  vim.o.termguicolors = not gui
  vim.o.termguicolors = gui
  vim.cmd("doautocmd <nomodeline> OptionSet termguicolors")
end

T.test("the groups are default definitions: the user's win, at run time and in a ColorScheme autocmd", function()
  H.paint("default", true)
  -- As a config does it (nvim_set_hl replaces the whole definition, links included).
  vim.api.nvim_set_hl(0, "RpivTodoDim", { fg = "#123456", ctermfg = 33 })
  vim.api.nvim_set_hl(0, "RpivTodoNormal", { bg = "#010203", ctermbg = 17 })
  H.recheck()
  nv.execute({ action = "list" })
  T.eq(H.hl("RpivTodoDim", true).fg, 0x123456, "user's Dim kept")
  T.eq(H.hl("RpivTodoNormal", true).bg, 0x010203, "user's Normal kept")
  T.eq(H.hl("RpivTodoNormal", false).bg, 17, "in cterm colours too")
  -- :colorscheme clears every group: the defaults come back, and a user's ColorScheme
  -- autocmd (how configs keep overrides) wins over them.
  local id = vim.api.nvim_create_autocmd("ColorScheme", {
    callback = function()
      vim.api.nvim_set_hl(0, "RpivTodoAccent", { fg = "#abcdef" })
    end,
  })
  vim.cmd("colorscheme default")
  vim.api.nvim_del_autocmd(id)
  T.eq(H.hl("RpivTodoAccent", true).fg, 0xabcdef, "the autocmd's colour")
  T.ok(H.hl("RpivTodoNormal", true).bg ~= 0x010203, "the run-time override is gone with the scheme")
  H.visible("defaults back after :colorscheme")
end)

T.test("a colorscheme that defines NormalFloat with a background of its own is followed", function()
  vim.cmd("colorscheme default")
  vim.api.nvim_set_hl(0, "Normal", { bg = "#000000", ctermbg = 16 })
  vim.api.nvim_set_hl(0, "NormalFloat", { bg = "#224466", ctermbg = 24, fg = "#eeeeee", ctermfg = 255 })
  H.recheck()
  T.eq(vim.fn.synIDattr(vim.fn.synIDtrans(vim.fn.hlID("RpivTodoNormal")), "name"), "NormalFloat", "links to it")
  T.eq(H.hl("RpivTodoNormal", true).bg, 0x224466, "its GUI background")
  T.eq(H.hl("RpivTodoNormal", false).bg, 24, "its cterm background")
  vim.cmd("colorscheme default")
end)

T.finish()
