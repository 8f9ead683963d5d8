//! The overlay (`todo.overlay`) through the embedded Lua 5.4: every recorded case through
//! `todo.overlay.render` (state tables and `core.list` handles) and `core.overlay_layout`,
//! the three themes, the live object's lifecycle (turns, replay, clear, collapse, expanded),
//! what the heading counts, options from `setup{}` and per render, and display-width
//! truncation at every width from 1 to 120. The same ground in real interpreters:
//! tests/lua/overlay_spec.lua.

use mlua::{Function, Lua, Table, Value as LuaValue};
use serde_json::{json, Value};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

use crate::support;

/// A Lua state with the plugin loaded, the English UI, and helpers in globals:
/// `task(id, status, subject, extra)`, `joined(line)` (a segments line as text).
fn overlay_lua() -> Lua {
    let lua = support::lua();
    lua.load(
        r#"todo = require('rpiv_todo')
           todo.setup({ locale = 'en' })
           overlay = todo.overlay
           function task(id, status, subject, extra)
             local t = { id = id, status = status, subject = subject or ('task ' .. id) }
             for k, v in pairs(extra or {}) do t[k] = v end
             return t
           end
           function joined(line)
             local parts = {}
             for i, seg in ipairs(line) do parts[i] = seg[1] end
             return table.concat(parts)
           end"#,
    )
    .exec()
    .expect("overlay test prelude");
    lua
}

fn lines(lua: &Lua, code: &str) -> Vec<String> {
    support::eval(lua, code)
}

/// The options the conformance README gives for a recorded case.
fn case_opts(lua: &Lua, case: &Value, theme: Option<&str>) -> Table {
    let opts = lua.create_table().unwrap();
    opts.set("width", 1000).unwrap();
    opts.set(
        "max_widget_lines",
        support::to_lua(lua, &case["maxWidgetLines"]),
    )
    .unwrap();
    opts.set("collapsed", case["collapsed"].as_bool().unwrap_or(false))
        .unwrap();
    if let Some(key) = case["collapseKey"].as_str() {
        opts.set("collapse_key", key).unwrap();
    }
    if let Some(theme) = theme {
        opts.set("theme", theme).unwrap();
    }
    opts
}

fn case_state(lua: &Lua, case: &Value) -> LuaValue {
    support::to_lua(
        lua,
        &json!({ "tasks": case["tasks"], "nextId": case["nextId"] }),
    )
}

fn expected_lines(case: &Value) -> Vec<String> {
    case["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_owned())
        .collect()
}

/// Drop ANSI CSI sequences (`ESC [ params final`).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            chars.next();
            for f in chars.by_ref() {
                if ('@'..='~').contains(&f) {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The SGR parameter lists of a line (`ESC [ <params> m`).
fn sgr_params(s: &str) -> Vec<String> {
    s.split('\x1b')
        .skip(1)
        .filter_map(|rest| rest.strip_prefix('['))
        .filter_map(|rest| rest.split_once('m').map(|(p, _)| p.to_owned()))
        .collect()
}

/// Terminal columns of escape-free text, by grapheme cluster (what a terminal draws):
/// unicode-width's measure of each cluster, at most 2 (one cell pair).
fn columns(plain: &str) -> usize {
    plain.graphemes(true).map(|g| g.width().min(2)).sum()
}

// ---------------------------------------------------------------------------
// Recorded cases
// ---------------------------------------------------------------------------

#[test]
fn every_recorded_overlay_case_renders_byte_for_byte_from_a_state_and_a_list_handle() {
    let lua = overlay_lua();
    let render: Function = support::eval(&lua, "return overlay.render");
    let new_list: Function = support::eval(&lua, "return require('rpiv_todo.core').list");
    let cases = support::jsonl("overlay-cases.jsonl");
    assert_eq!(cases.len(), 160);
    for (n, case) in cases.iter().enumerate() {
        let want = expected_lines(case);
        let got: Vec<String> = render
            .call((case_state(&lua, case), case_opts(&lua, case, None)))
            .unwrap();
        assert_eq!(got, want, "case {n} from a state table");
        let list: LuaValue = new_list.call(case_state(&lua, case)).unwrap();
        let got: Vec<String> = render.call((list, case_opts(&lua, case, None))).unwrap();
        assert_eq!(got, want, "case {n} from a core.list handle");
    }
}

/// Lua helper for the one-path tests: `flat(lines)` writes lines of any theme as text
/// (segments with their group and styles), so two renders compare as strings.
const FLAT: &str = r#"
    function flat(lines)
      local out = {}
      for i, line in ipairs(lines) do
        if type(line) == 'table' then
          local segs = {}
          for j, seg in ipairs(line) do
            segs[j] = seg[1] .. '<' .. tostring(seg[2]) .. (seg.bold and ',b' or '')
              .. (seg.strikethrough and ',s' or '') .. '>'
          end
          out[i] = table.concat(segs)
        else
          out[i] = line
        end
      end
      return table.concat(out, '\n')
    end"#;

#[test]
fn every_recorded_case_paints_the_same_from_a_list_handle_and_a_state_in_every_theme_and_mode() {
    // One overlay path: a handle's rows are built natively, a state's in Lua from the
    // tasks the native selection picked; collapsed, expanded and cut lines included.
    let lua = overlay_lua();
    lua.load(FLAT).exec().unwrap();
    let compare: Function = support::eval(
        &lua,
        r#"return function(state, opts)
             local list = require('rpiv_todo.core').list(state)
             local n = 0
             for _, theme in ipairs({ 'plain', 'ansi', 'segments' }) do
               for _, mode in ipairs({ {}, { collapsed = true }, { expanded = true }, { width = 20 } }) do
                 local o = { theme = theme }
                 for k, v in pairs(opts) do o[k] = v end
                 for k, v in pairs(mode) do o[k] = v end
                 local a, b = flat(overlay.render(list, o)), flat(overlay.render(state, o))
                 if a ~= b then error(theme .. ': ' .. a .. '\n~=\n' .. b) end
                 n = n + 1
               end
             end
             return n
           end"#,
    );
    let mut combos = 0;
    for (n, case) in support::jsonl("overlay-cases.jsonl").iter().enumerate() {
        let got: Result<i64, _> =
            compare.call((case_state(&lua, case), case_opts(&lua, case, None)));
        combos += got.unwrap_or_else(|e| panic!("case {n}: {e}"));
    }
    assert_eq!(combos, 160 * 12);
}

#[test]
fn a_live_paint_from_a_session_equals_its_list_handle_and_its_snapshot_turn_after_turn() {
    let lua = overlay_lua();
    lua.load(FLAT).exec().unwrap();
    let frames: Vec<String> = support::eval(
        &lua,
        r#"todo.sessions.reset()
           local s = todo.session('lockstep')
           local frames = {}
           for _, theme in ipairs({ 'plain', 'ansi', 'segments' }) do
             s.list:replace(nil)
             local ovs = {}
             for k = 1, 3 do ovs[k] = overlay.new({ theme = theme, max_widget_lines = 5 }) end
             local function paint()
               local a = flat(ovs[1]:render(s, 50))
               local b = flat(ovs[2]:render(s.list, 50))
               local c = flat(ovs[3]:render(s:state(), 50))
               if a ~= b or a ~= c then error(theme .. ' frame ' .. #frames .. ': ' .. a .. ' | ' .. b .. ' | ' .. c) end
               if theme == 'plain' then frames[#frames + 1] = a end
             end
             local function each(f) for k = 1, 3 do f(ovs[k]) end end
             for i = 1, 6 do s:execute({ action = 'create', subject = 'T' .. i }) end
             s:execute({ action = 'update', id = 3, addBlockedBy = { 2 } })
             paint()
             s:execute({ action = 'update', id = 1, status = 'completed' })
             s:execute({ action = 'update', id = 2, status = 'completed' })
             paint()
             each(function(ov) ov:turn_started() end)
             paint()
             each(function(ov) ov:toggle_collapse() end)
             s:execute({ action = 'update', id = 4, status = 'completed' })
             paint()
             each(function(ov) ov:turn_started(); ov:toggle_collapse(); ov:set_expanded(true) end)
             paint()
           end
           return frames"#,
    );
    assert_eq!(
        frames,
        [
            "● Todos (0/6)\n├─ ○ #1 T1\n├─ ○ #2 T2\n├─ ○ #3 T3 ⛓ #2\n└─ +3 more (3 pending)\n",
            // Four rows: three and the summary; both completed tasks make room first.
            "● Todos (2/6)\n├─ ○ #3 T3 ⛓ #2\n├─ ○ #4 T4\n├─ ○ #5 T5\n└─ +3 more (2 completed, 1 pending)\n",
            // #1 and #2 were counted in the first turn: they leave rows and counts, and
            // the four left fit.
            "● Todos (0/4)\n├─ ○ #3 T3 ⛓ #2\n├─ ○ #4 T4\n├─ ○ #5 T5\n└─ ○ #6 T6\n",
            // Collapsed: #4 completes but is not seen, so it stays after the next turn.
            "● Todos (1/4)\n└─ ctrl+shift+t to expand\n",
            "● Todos (1/4)\n├─ ○ #3 T3 ⛓ #2\n├─ ✓ #4 T4\n├─ ○ #5 T5\n└─ ○ #6 T6\n",
        ]
    );
}

#[test]
fn every_recorded_case_selects_the_same_rows_through_core_overlay_layout() {
    let lua = overlay_lua();
    let layout: Function = support::eval(&lua, "return require('rpiv_todo.core').overlay_layout");
    let mut checked = 0;
    for (n, case) in support::jsonl("overlay-cases.jsonl").iter().enumerate() {
        if case["collapsed"] == json!(true) {
            continue;
        }
        let got: Table = layout
            .call((case_state(&lua, case), case["budget"].as_i64().unwrap()))
            .unwrap();
        let visible: Vec<Table> = got.get("visible").unwrap();
        let ids: Vec<i64> = visible.iter().map(|t| t.get("id").unwrap()).collect();
        let want = &case["layout"];
        let want_ids: Vec<i64> = want["visible"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        assert_eq!(ids, want_ids, "case {n} visible");
        assert_eq!(
            got.get::<i64>("hiddenCompleted").unwrap(),
            want["hiddenCompleted"].as_i64().unwrap(),
            "case {n} hiddenCompleted"
        );
        assert_eq!(
            got.get::<i64>("truncatedTail").unwrap(),
            want["truncatedTail"].as_i64().unwrap(),
            "case {n} truncatedTail"
        );
        checked += 1;
    }
    assert_eq!(checked, 150);
}

#[test]
fn the_ansi_theme_uses_basic_sgr_only_and_strips_back_to_the_recorded_lines() {
    let lua = overlay_lua();
    let render: Function = support::eval(&lua, "return overlay.render");
    // Basic attributes and the 16-color foregrounds, each with its own reset.
    let allowed = [
        "0", "1", "2", "9", "22", "29", "31", "32", "33", "35", "36", "39", "90",
    ];
    let mut colored = 0;
    for (n, case) in support::jsonl("overlay-cases.jsonl").iter().enumerate() {
        let got: Vec<String> = render
            .call((case_state(&lua, case), case_opts(&lua, case, Some("ansi"))))
            .unwrap();
        let want = expected_lines(case);
        assert_eq!(got.len(), want.len(), "case {n} line count");
        for (line, plain) in got.iter().zip(&want) {
            for p in sgr_params(line) {
                assert!(
                    allowed.contains(&p.as_str()),
                    "case {n}: SGR {p:?} in {line:?}"
                );
                colored += 1;
            }
            assert_eq!(&strip_ansi(line), plain, "case {n}");
        }
    }
    assert!(colored > 1000, "the ANSI theme colors the lines");
}

#[test]
fn the_segments_theme_joins_to_the_recorded_lines_with_rpivtodo_groups() {
    let lua = overlay_lua();
    let check: Function = support::eval(
        &lua,
        r#"return function(state, opts)
             local out, groups = {}, {}
             for i, line in ipairs(overlay.render(state, opts)) do
               out[i] = joined(line)
               for _, seg in ipairs(line) do
                 if seg[2] ~= nil then groups[#groups + 1] = seg[2] end
               end
             end
             return out, groups
           end"#,
    );
    let mut all_groups = std::collections::BTreeSet::new();
    for (n, case) in support::jsonl("overlay-cases.jsonl").iter().enumerate() {
        let (got, groups): (Vec<String>, Vec<String>) = check
            .call((
                case_state(&lua, case),
                case_opts(&lua, case, Some("segments")),
            ))
            .unwrap();
        assert_eq!(got, expected_lines(case), "case {n}");
        all_groups.extend(groups);
    }
    let want: std::collections::BTreeSet<String> = [
        "RpivTodoAccent",
        "RpivTodoDim",
        "RpivTodoMuted",
        "RpivTodoText",
        "RpivTodoWarning",
        "RpivTodoSuccess",
    ]
    .map(String::from)
    .into();
    assert_eq!(all_groups, want, "the groups the recorded cases use");
}

// ---------------------------------------------------------------------------
// Empty and stateless
// ---------------------------------------------------------------------------

#[test]
fn nothing_to_show_renders_no_lines_so_the_host_hides_the_panel() {
    let lua = overlay_lua();
    let counts: Vec<i64> = support::eval(
        &lua,
        r#"local only_deleted = { tasks = { task(1, 'deleted'), task(2, 'deleted') }, nextId = 3 }
           local ov = overlay.new()
           local done = { tasks = { task(1, 'completed', 'Done') }, nextId = 2 }
           local shown = #ov:render(done, 80)
           ov:turn_started()
           local collapsed = overlay.new(); collapsed:toggle_collapse()
           return {
             #overlay.render(nil), #overlay.render({ tasks = {}, nextId = 1 }),
             #overlay.render(only_deleted, { expanded = true }),
             #overlay.render(only_deleted, { collapsed = true }),
             #overlay.render(require('rpiv_todo.core').list(nil)),
             shown, #ov:render(done, 80), #collapsed:render(only_deleted, 80),
           }"#,
    );
    assert_eq!(counts, [0, 0, 0, 0, 0, 3, 0, 0]);
}

#[test]
fn render_is_stateless_the_same_state_gives_the_same_lines() {
    let lua = overlay_lua();
    let (a, b): (Vec<String>, Vec<String>) = support::eval(
        &lua,
        r#"local s = { tasks = { task(1, 'completed', 'Plan'), task(2, 'pending', 'Code') }, nextId = 3 }
           local a = overlay.render(s, { width = 80 })
           return a, overlay.render(s, { width = 80 })"#,
    );
    assert_eq!(a, ["● Todos (1/2)", "├─ ✓ Plan", "└─ ○ Code", ""]);
    assert_eq!(a, b);
}

// ---------------------------------------------------------------------------
// The live object
// ---------------------------------------------------------------------------

#[test]
fn a_completed_task_stays_for_its_turn_then_hides_from_rows_and_counts() {
    let lua = overlay_lua();
    let frames: Vec<Vec<String>> = support::eval(
        &lua,
        r#"local ov, out = overlay.new(), {}
           local s = { tasks = { task(1, 'pending', 'Plan'), task(2, 'pending', 'Code') }, nextId = 3 }
           out[1] = ov:render(s, 80)
           ov:turn_started()
           s.tasks[1] = task(1, 'completed', 'Plan')
           out[2] = ov:render(s, 80)
           out[3] = ov:render(s, 80)
           ov:turn_started()
           out[4] = ov:render(s, 80)
           return out"#,
    );
    assert_eq!(
        frames,
        [
            vec!["● Todos (0/2)", "├─ ○ Plan", "└─ ○ Code", ""],
            vec!["● Todos (1/2)", "├─ ✓ Plan", "└─ ○ Code", ""],
            vec!["● Todos (1/2)", "├─ ✓ Plan", "└─ ○ Code", ""],
            vec!["● Todos (0/1)", "└─ ○ Code", ""],
        ]
    );
}

#[test]
fn the_heading_counts_the_panels_tasks_while_todos_counts_them_all() {
    // Decision recorded in overlay/init.lua's header: completed tasks hidden after their turn
    // leave the heading as they leave the rows; /todos is the full account.
    let lua = overlay_lua();
    let (frames, todos): (Vec<Vec<String>>, String) = support::eval(
        &lua,
        r#"local s, ov, out = todo.session('work'), overlay.new(), {}
           for i = 1, 6 do s:execute({ action = 'create', subject = 'Step ' .. i }) end
           for i = 1, 4 do s:execute({ action = 'update', id = i, status = 'completed' }) end
           out[1] = ov:render(s, 80)
           ov:turn_started()
           out[2] = ov:render(s, 80)
           s:execute({ action = 'update', id = 5, status = 'completed' })
           s:execute({ action = 'update', id = 6, status = 'completed' })
           out[3] = ov:render(s, 80)
           return out, (todo.command.todos(s))"#,
    );
    assert_eq!(
        frames[0][0], "● Todos (4/6)",
        "first seen: everything counts"
    );
    assert_eq!(
        frames[1],
        ["● Todos (0/2)", "├─ ○ Step 5", "└─ ○ Step 6", ""]
    );
    assert_eq!(
        frames[2],
        ["○ Todos (2/2)", "├─ ✓ Step 5", "└─ ✓ Step 6", ""]
    );
    assert!(todos.starts_with("6/6 completed\n"), "{todos}");
}

#[test]
fn the_heading_total_is_always_the_rows_plus_the_summary() {
    let lua = overlay_lua();
    // (heading total, rows, "+N more") per frame of a long session with hiding.
    let frames: Vec<Vec<i64>> = support::eval(
        &lua,
        r#"local s, ov, out = todo.session('long'), overlay.new({ max_widget_lines = 5 }), {}
           local function frame()
             local lines = ov:render(s, 200)
             if #lines == 0 then out[#out + 1] = { 0, 0, 0 } return end
             local total = tonumber(lines[1]:match('/(%d+)%)'))
             local rows, more = 0, 0
             for i = 2, #lines - 1 do
               local n = lines[i]:match('^└─ %+(%d+) more')
               if n then more = tonumber(n) else rows = rows + 1 end
             end
             out[#out + 1] = { total, rows, more }
           end
           for i = 1, 9 do s:execute({ action = 'create', subject = 'T' .. i }) end
           frame()
           for i = 1, 9 do
             s:execute({ action = 'update', id = i, status = 'completed' })
             frame()
             if i % 3 == 0 then ov:turn_started(); frame() end
           end
           return out"#,
    );
    assert!(frames.len() > 10);
    for f in &frames {
        assert_eq!(f[0], f[1] + f[2], "{frames:?}");
    }
    assert_eq!(
        frames[0],
        [9, 3, 6],
        "budget 4 rows: three rows and the summary"
    );
    assert_eq!(frames[frames.len() - 1], [0, 0, 0], "all hidden: no panel");
}

#[test]
fn replay_through_the_session_layer_resets_what_the_attached_overlay_hid() {
    let lua = overlay_lua();
    let frames: Vec<Vec<String>> = support::eval(
        &lua,
        r#"local s, ov, out = todo.session('default'), overlay.new(), {}
           local detach = todo.attach_overlay(ov)
           local branch = {}
           for _, p in ipairs({ { action = 'create', subject = 'Plan' }, { action = 'create', subject = 'Code' },
                                { action = 'update', id = 1, status = 'completed' } }) do
             local r = s:execute(p)
             branch[#branch + 1] = { type = 'message', message = { role = 'toolResult', toolName = 'todo', details = r.details } }
           end
           out[1] = ov:render(s, 80)
           ov:turn_started()
           out[2] = ov:render(s, 80)
           todo.on_compaction('default', branch)       -- replay: Plan shows again
           out[3] = ov:render(s, 80)
           ov:turn_started()
           out[4] = ov:render(s, 80)
           todo.on_session_start('other', branch)      -- not the foreground: no reset
           out[5] = ov:render(s, 80)
           todo.on_branch_change('default', branch)    -- the foreground again: reset
           out[6] = ov:render(s, 80)
           ov:turn_started()
           detach()
           todo.on_compaction('default', branch)       -- detached: nothing happens
           out[7] = ov:render(s, 80)
           return out"#,
    );
    let full = vec!["● Todos (1/2)", "├─ ✓ Plan", "└─ ○ Code", ""];
    let hidden = vec!["● Todos (0/1)", "└─ ○ Code", ""];
    assert_eq!(
        frames,
        [
            full.clone(),
            hidden.clone(),
            full.clone(),
            hidden.clone(),
            hidden.clone(),
            full,
            hidden
        ]
    );
}

#[test]
fn a_foreground_change_and_a_shutdown_reset_the_attached_overlay() {
    let lua = overlay_lua();
    let heads: Vec<String> = support::eval(
        &lua,
        r#"local ov, out = overlay.new(), {}
           todo.attach_overlay(ov)
           local a = todo.session('a')
           a:execute({ action = 'create', subject = 'A1' })
           a:execute({ action = 'create', subject = 'A2' })
           a:execute({ action = 'update', id = 1, status = 'completed' })
           todo.foreground('a')
           ov:render(todo.foreground(), 80)
           ov:turn_started()
           out[1] = ov:render(todo.foreground(), 80)[1]
           todo.foreground('b')
           todo.foreground('a')
           out[2] = ov:render(todo.foreground(), 80)[1]
           ov:turn_started()
           out[3] = ov:render(todo.foreground(), 80)[1]
           todo.shutdown('a')
           out[4] = tostring(#ov:render(todo.foreground(), 80))
           return out"#,
    );
    assert_eq!(
        heads,
        ["● Todos (0/1)", "● Todos (1/2)", "● Todos (0/1)", "0"]
    );
}

#[test]
fn a_clear_that_shrinks_next_id_resets_what_was_hidden() {
    let lua = overlay_lua();
    let frames: Vec<Vec<String>> = support::eval(
        &lua,
        r#"local s, ov, out = todo.session('c'), overlay.new(), {}
           s:execute({ action = 'create', subject = 'Old' })
           s:execute({ action = 'create', subject = 'Old 2' })
           s:execute({ action = 'update', id = 1, status = 'completed' })
           ov:render(s, 80)
           ov:turn_started()
           out[1] = ov:render(s, 80)
           s:execute({ action = 'clear' })
           out[2] = ov:render(s, 80)
           s:execute({ action = 'create', subject = 'New' })
           s:execute({ action = 'update', id = 1, status = 'completed' })
           out[3] = ov:render(s, 80)
           return out"#,
    );
    assert_eq!(frames[0], ["● Todos (0/1)", "└─ ○ Old 2", ""]);
    assert!(frames[1].is_empty(), "cleared: no panel");
    // The new #1 is a different task: it is shown, not hidden as the old #1 was.
    assert_eq!(frames[2], ["○ Todos (1/1)", "└─ ✓ New", ""]);
}

#[test]
fn collapse_toggles_with_a_custom_key_and_off_shows_a_static_label() {
    let lua = overlay_lua();
    let frames: Vec<Vec<String>> = support::eval(
        &lua,
        r#"local s = { tasks = { task(1, 'pending'), task(2, 'in_progress', 'Two', { activeForm = 'Doing two' }) }, nextId = 3 }
           local ov, out = overlay.new({ collapse_key = ' Alt+O ' }), {}
           out[1] = { tostring(ov:toggle_collapse()) }
           out[2] = ov:render(s, 80)
           out[3] = { tostring(ov:toggle_collapse()) }
           out[4] = ov:render(s, 80)
           local off = overlay.new({ collapse_key = 'off' }); off:toggle_collapse()
           out[5] = off:render(s, 80)
           local bad = overlay.new({ collapse_key = 'hyper+o' }); bad:toggle_collapse()
           out[6] = bad:render(s, 80)
           return out"#,
    );
    assert_eq!(
        frames,
        [
            vec!["true"],
            vec!["● Todos (0/2)", "└─ alt+o to expand", ""],
            vec!["false"],
            vec!["● Todos (0/2)", "├─ ○ task 1", "└─ ◐ Two (Doing two)", ""],
            vec!["● Todos (0/2)", "└─ collapsed", ""],
            vec!["● Todos (0/2)", "└─ ctrl+shift+t to expand", ""],
        ]
    );
}

#[test]
fn a_collapsed_panel_does_not_count_its_completed_tasks_as_seen() {
    let lua = overlay_lua();
    let frame: Vec<String> = lines(
        &lua,
        r#"local s = { tasks = { task(1, 'completed', 'Plan'), task(2, 'pending', 'Code') }, nextId = 3 }
           local ov = overlay.new()
           ov:toggle_collapse()
           ov:render(s, 80)
           ov:turn_started()
           ov:toggle_collapse()
           return ov:render(s, 80)"#,
    );
    assert_eq!(frame, ["● Todos (1/2)", "├─ ✓ Plan", "└─ ○ Code", ""]);
}

#[test]
fn expanded_shows_every_live_task_with_no_summary_and_never_a_tombstone() {
    let lua = overlay_lua();
    let (normal, expanded, back): (Vec<String>, Vec<String>, Vec<String>) = support::eval(
        &lua,
        r#"local s = { tasks = {}, nextId = 21 }
           for i = 1, 20 do s.tasks[i] = task(i, 'pending') end
           s.tasks[5] = task(5, 'completed')
           s.tasks[6] = task(6, 'deleted', 'tombstone')
           local ov = overlay.new({ max_widget_lines = 5 })
           local normal = ov:render(s, 80)
           ov:set_expanded(true)
           local expanded = ov:render(s, 80)
           ov:set_expanded(false)
           return normal, expanded, ov:render(s, 80)"#,
    );
    assert_eq!(
        normal,
        [
            "● Todos (1/19)",
            "├─ ○ task 1",
            "├─ ○ task 2",
            "├─ ○ task 3",
            "└─ +16 more (1 completed, 15 pending)",
            ""
        ]
    );
    assert_eq!(expanded.len(), 1 + 19 + 1);
    assert_eq!(expanded[5], "├─ ✓ task 5");
    assert_eq!(expanded[19], "└─ ○ task 20");
    assert!(!expanded
        .iter()
        .any(|l| l.contains("more") || l.contains("tombstone")));
    assert_eq!(back, normal);
}

// ---------------------------------------------------------------------------
// Options: strict in setup, lenient per render
// ---------------------------------------------------------------------------

#[test]
fn setup_options_reach_every_render_and_per_render_options_win() {
    let lua = overlay_lua();
    let frames: Vec<Vec<String>> = support::eval(
        &lua,
        r#"local s = { tasks = {}, nextId = 9 }
           for i = 1, 8 do s.tasks[i] = task(i, 'pending') end
           todo.setup({ max_widget_lines = 4, collapse_key = 'Ctrl+Y' })
           local out = {}
           out[1] = overlay.render(s)
           out[2] = overlay.render(s, { collapsed = true })
           out[3] = overlay.render(s, { max_widget_lines = 3, collapsed = false })
           local ov = overlay.new(); ov:toggle_collapse()
           out[4] = ov:render(s, 80)
           todo.setup({})
           out[5] = { #overlay.render(s) }
           todo.setup({ overlay = { theme = 'ansi' } })
           out[6] = { overlay.render(s)[1] }
           todo.setup({})
           out[7] = { overlay.render(s)[1] }
           return out"#,
    );
    assert_eq!(
        frames,
        [
            vec![
                "● Todos (0/8)",
                "├─ ○ task 1",
                "├─ ○ task 2",
                "└─ +6 more (6 pending)",
                ""
            ],
            vec!["● Todos (0/8)", "└─ ctrl+y to expand", ""],
            vec!["● Todos (0/8)", "├─ ○ task 1", "└─ +7 more (7 pending)", ""],
            vec!["● Todos (0/8)", "└─ ctrl+y to expand", ""],
            vec!["10"], // back to the default 12: heading + 8 rows + spacer
            vec!["\x1b[36m●\x1b[39m \x1b[1m\x1b[36mTodos (0/8)\x1b[39m\x1b[22m"],
            vec!["● Todos (0/8)"],
        ]
    );
}

#[test]
fn per_render_options_are_lenient() {
    let lua = overlay_lua();
    let (sizes, hints): (Vec<i64>, Vec<String>) = support::eval(
        &lua,
        r#"local s = { tasks = {}, nextId = 21 }
           for i = 1, 20 do s.tasks[i] = task(i, 'pending') end
           local sizes, hints = {}, {}
           for _, bad in ipairs({ '5', 2, 0, -1, true, 0 / 0, {} }) do
             sizes[#sizes + 1] = #overlay.render(s, { max_widget_lines = bad })
           end
           for _, key in ipairs({ '', 'ctrl+', 'hyper+k', 42, 'ctrl+ctrl+t', ' OFF ' }) do
             hints[#hints + 1] = overlay.render(s, { collapsed = true, collapse_key = key })[2]
           end
           return sizes, hints"#,
    );
    // 12 lines (heading, 10 rows, summary) and the spacer, whatever the bad value.
    assert_eq!(sizes, [13; 7]);
    assert_eq!(
        hints,
        [
            "└─ ctrl+shift+t to expand",
            "└─ ctrl+shift+t to expand",
            "└─ ctrl+shift+t to expand",
            "└─ ctrl+shift+t to expand",
            "└─ ctrl+shift+t to expand",
            "└─ collapsed",
        ]
    );
}

// ---------------------------------------------------------------------------
// Layout overrides
// ---------------------------------------------------------------------------

#[test]
fn setup_overlay_as_a_function_receives_the_defaults_and_can_call_them() {
    let lua = overlay_lua();
    let (custom, restored): (Vec<String>, Vec<String>) = support::eval(
        &lua,
        r#"local s = { tasks = { task(1, 'in_progress', 'Build', { activeForm = 'Building' }), task(2, 'pending', 'Ship') }, nextId = 3 }
           todo.setup({ overlay = function(default)
             return {
               heading = function(ctx) return '[' .. default.heading(ctx) .. ']' end,
               row = function(ctx, row) return default.row(ctx, row) .. (row.status == 'pending' and ' (next)' or '') end,
               glyphs = { pending = '·' },
             }
           end })
           local custom = overlay.render(s, { width = 80 })
           todo.setup({})
           return custom, overlay.render(s, { width = 80 })"#,
    );
    assert_eq!(
        custom,
        [
            "[● Todos (0/2)]",
            "├─ ◐ Build (Building)",
            "└─ · Ship (next)",
            ""
        ]
    );
    assert_eq!(
        restored,
        ["● Todos (0/2)", "├─ ◐ Build (Building)", "└─ ○ Ship", ""]
    );
}

#[test]
fn a_table_override_merges_over_the_defaults_with_any_theme() {
    let lua = overlay_lua();
    let (plain, ansi, segments): (Vec<String>, Vec<String>, Vec<String>) = support::eval(
        &lua,
        r#"local s = { tasks = { task(1, 'completed', 'Spec'), task(2, 'pending', 'Ship', { blockedBy = { 1 } }) }, nextId = 3 }
           local layout = {
             summary = function() return 'unused' end,
             row = function(ctx, row) return ctx.theme.fg('accent', '#' .. row.id) .. ' ' .. overlay.default_layout.row(ctx, row) end,
           }
           local function render(theme) return overlay.render(s, { theme = theme, layout = layout }) end
           local segs = {}
           for i, line in ipairs(render('segments')) do segs[i] = joined(line) end
           return render(nil), render('ansi'), segs"#,
    );
    let want = [
        "● Todos (1/2)",
        "├─ #1 ✓ #1 Spec",
        "└─ #2 ○ #2 Ship ⛓ #1",
        "",
    ];
    assert_eq!(plain, want);
    assert_eq!(ansi.iter().map(|l| strip_ansi(l)).collect::<Vec<_>>(), want);
    assert!(
        ansi[1].starts_with("\x1b[2m├─\x1b[22m \x1b[36m#1\x1b[39m"),
        "{:?}",
        ansi[1]
    );
    assert_eq!(segments, want);
}

// ---------------------------------------------------------------------------
// Display width
// ---------------------------------------------------------------------------

const WIDE_STATE: &str = r#"{ tasks = {
    task(1, 'in_progress', '汉字の表示テスト 한국어 完成', { activeForm = '写作中 ✍️' }),
    task(2, 'pending', 'emoji 👨‍👩‍👧 family 🚀🚀 rocket', { blockedBy = { 1 } }),
    task(3, 'completed', 'combining e\204\129e\204\129e\204\129 marks a\204\136o\204\136'),
    task(4, 'pending', 'ansi \27[31mred\27[0m and \27]8;;http://x\27\\link\27]8;;\27\\ text'),
    task(5, 'pending', 'flags 🇺🇸🇯🇵 and zwj 🏳️‍🌈 done'),
    task(6, 'pending', string.rep('long ', 40)),
  }, nextId = 7 }"#;

#[test]
fn no_line_exceeds_the_width_and_cut_lines_end_with_the_ellipsis_at_widths_1_to_120() {
    let lua = overlay_lua();
    let render_at: Function = support::eval(
        &lua,
        &format!(
            r#"local state = {WIDE_STATE}
               return function(width, theme)
                 local lines = overlay.render(state, {{ width = width, max_widget_lines = 20, theme = theme }})
                 if theme == 'segments' then
                   for i, line in ipairs(lines) do lines[i] = joined(line) end
                 end
                 return lines
               end"#
        ),
    );
    let width: Function = support::eval(&lua, "return require('rpiv_todo.core').width");
    let full: Vec<String> = render_at.call((LuaValue::Nil, LuaValue::Nil)).unwrap();
    assert_eq!(
        full[4], "├─ ○ #4 ansi red and link text",
        "model escapes are gone"
    );
    for w in 1..=120usize {
        let plain: Vec<String> = render_at.call((w, LuaValue::Nil)).unwrap();
        let ansi: Vec<String> = render_at.call((w, "ansi")).unwrap();
        let segs: Vec<String> = render_at.call((w, "segments")).unwrap();
        assert_eq!(plain.len(), full.len(), "width {w}");
        for (i, line) in plain.iter().enumerate() {
            let at = format!("width {w}, line {i}: {line:?}");
            let cols = columns(line);
            assert!(cols <= w, "{at} takes {cols} columns");
            assert_eq!(width.call::<usize>(line.as_str()).unwrap(), cols, "{at}");
            if columns(&full[i]) > w {
                let kept = line
                    .strip_suffix('…')
                    .unwrap_or_else(|| panic!("{at} lacks the ellipsis"));
                assert!(full[i].starts_with(kept), "{at} is not a prefix");
                // Whole grapheme clusters only: the kept clusters are the full line's first.
                let kept_g: Vec<&str> = kept.graphemes(true).collect();
                let full_g: Vec<&str> = full[i].graphemes(true).take(kept_g.len()).collect();
                assert_eq!(kept_g, full_g, "{at} splits a grapheme cluster");
            } else {
                assert_eq!(line, &full[i], "{at} fits and is untouched");
            }
            assert!(columns(&strip_ansi(&ansi[i])) <= w, "ansi {at}");
            for (pos, _) in ansi[i].match_indices('\x1b') {
                let seq = &ansi[i][pos + 1..];
                let whole = seq.starts_with('[')
                    && seq[1..]
                        .find(|c: char| !(c.is_ascii_digit() || c == ';'))
                        .is_some_and(|end| seq[1 + end..].starts_with('m'));
                assert!(whole, "ansi {at}: a cut escape sequence");
            }
            assert_eq!(
                &strip_ansi(&ansi[i]),
                line,
                "ansi strips to the plain line, {at}"
            );
            assert_eq!(&segs[i], line, "segments join to the plain line, {at}");
        }
    }
}

#[test]
fn a_cut_ansi_line_never_splits_an_escape_and_closes_its_style() {
    let lua = overlay_lua();
    let cut: Vec<String> = lines(
        &lua,
        r#"local s = { tasks = { task(1, 'in_progress', 'Write the token-bucket limiter module', { activeForm = 'Writing it' }) }, nextId = 2 }
           return overlay.render(s, { width = 20, theme = 'ansi' })"#,
    );
    let row = &cut[1];
    assert_eq!(strip_ansi(row), "└─ ◐ Write the toke…");
    assert!(row.ends_with("…\x1b[0m"), "{row:?}");
    // Every ESC starts a whole CSI sequence.
    for (i, _) in row.match_indices('\x1b') {
        let rest = &row[i + 1..];
        assert!(rest.starts_with('['), "{row:?}");
        assert!(rest[1..].find('m').is_some(), "{row:?}");
    }
}
