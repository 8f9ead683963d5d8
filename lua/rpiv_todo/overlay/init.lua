-- rpiv_todo.overlay: the panel a person watches above the editor while the agent works.
--
-- Three pieces, each replaceable by a host:
--   * the layout: one function per kind of line (heading, task row, "+N more" summary,
--     collapsed hint, trailing spacer) plus the status glyphs; `M.default_layout` keeps
--     the originals so an override can call them;
--   * the theme: how a colored piece of text is written (plain text, ANSI SGR, or
--     `{ text, group }` segments for UIs that paint with highlight groups);
--   * the live object (`M.new`): remembers what a person has already seen, so completed
--     tasks fall away at the next turn, and the collapsed / expanded modes.
-- What the panel shows is decided natively, once (`core.overlay_view`: the tasks hidden
-- after their turn, the budget's selection, the heading counts, whether rows carry `#id`);
-- the files of this folder only write lines: layout.lua (what each line says), themes.lua
-- (how it is colored), render.lua (lines from a selection), live.lua (the live object,
-- whose memory of what was seen is native too), keys.lua (collapse key grammar), text.lua
-- (memos of sanitized text, cuts and UI words).
--
-- What the heading counts. `● Todos (done/total)` counts the tasks the panel works over:
-- live tasks, minus the completed ones the live object hid after their turn. So after
-- four tasks finished in earlier turns and two in this one, the heading says (2/2) while
-- `/todos` says 6/6. Chosen on purpose:
--   * completed tasks "hide from later renders" (the project's overlay rule); the heading is part of
--     the render, so a hidden task leaves it as it leaves the rows;
--   * the TypeScript original's (rpiv-todo) README has the widget render "whenever any overlay-visible tasks exist"
--     and auto-hide otherwise: one set drives both, so the panel never shows a heading
--     such as (6/6) above no rows one turn and disappears the next;
--   * the heading's total always equals the rows plus the `+N more` summary, so every
--     number on the panel adds up;
--   * the original's overlay computes its counts over the same filtered set;
--   * `/todos` is the full account, and the panel stays a view of the work at hand.

---@class rpiv_todo.OverlayModule
---@field config { max_widget_lines: integer, collapse_key: string, theme: any, layout: any } module-wide defaults (set by setup)
---@field themes { plain: rpiv_todo.OverlayTheme, ansi: rpiv_todo.OverlayTheme, segments: rpiv_todo.OverlayTheme }
---@field groups table<string, string> color -> highlight group name (RpivTodo<Color>)
---@field default_layout rpiv_todo.OverlayLayout the shipped layout functions and glyphs
---@field Overlay rpiv_todo.Overlay the live object's metatable
local M = {}

local keys = require("rpiv_todo.overlay.keys")
local layout = require("rpiv_todo.overlay.layout")
local live = require("rpiv_todo.overlay.live")
local render = require("rpiv_todo.overlay.render")
local themes = require("rpiv_todo.overlay.themes")

---@class rpiv_todo.OverlayOptions
---@field width? integer terminal columns; no line exceeds it (nil: no truncation)
---@field max_widget_lines? integer panel height budget, heading included (floor 3; else 12)
---@field collapsed? boolean show only the heading and the expand hint
---@field collapse_key? string key advertised by the hint; "off": a static "collapsed" label
---@field expanded? boolean the host's "show all" mode: every task, no summary
---@field theme? rpiv_todo.OverlayTheme|"plain"|"ansi"|"segments"
---@field layout? rpiv_todo.OverlayLayoutOverride|fun(default: rpiv_todo.OverlayLayout): rpiv_todo.OverlayLayoutOverride

-- Module-wide defaults (the same table the renders read); `setup()` changes them through
-- `M.configure` after validating.
M.config = render.config
M.configure = render.configure

M.themes = themes.themes
M.groups = themes.groups

M.default_layout = layout.default_layout
M.check_layout = layout.check
M.resolve_layout = layout.resolve

M.normalize_collapse_key = keys.normalize

M.render = render.render

M.new = live.new
M.Overlay = live.Overlay

return M
