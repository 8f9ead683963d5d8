//! The list as a Markdown checklist, both ways: what `:Todos edit` and `:Todos export`
//! show, and the tool calls that turn an edited checklist back into the list.
//!
//! One task a line, tombstones left out:
//!
//! ```text
//! - [ ] #3 Write the parser ⛓ #1, #2
//!   > Writing the parser
//!   The grammar of the config file; errors name the line.
//! ```
//!
//! `[ ]` is pending, `[/]` in progress, `[x]` completed; `⛓` lists what the task waits
//! for. Indented lines under an item are its activeForm (after `> `) and its description
//! (the rest). Every other line (headings, prose, blank lines) is left alone, so a
//! checklist kept among notes reads too.
//!
//! [`plan`] compares an edited checklist with the list it was made from (`base`) and gives
//! the calls that make the differences: a new line is a `create`, a changed box, subject,
//! activeForm, description or `⛓` an `update`, a line removed a `delete`. Only what the
//! user changed is sent: a subject whose line break the checklist shows as a space is not
//! changed by saving it unedited. When the list has moved since (`current`, another
//! writer's change), a line about a task the other writer changed is refused with its line
//! number, never written over; every other line still applies.

use serde_json::{json, Map, Value};

use crate::task::{Id, State, Status, Task};

/// The mark between a subject and the ids it waits for.
const WAITS: &str = " ⛓ ";

/// A checklist line's box for a status (none for a tombstone).
fn box_of(status: Status) -> Option<&'static str> {
    match status {
        Status::Pending => Some("[ ]"),
        Status::InProgress => Some("[/]"),
        Status::Completed => Some("[x]"),
        Status::Deleted => None,
    }
}

/// Text on one line: line breaks and tabs as spaces.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The checklist of `state`: one item per task that is not deleted, in list order.
pub fn render(state: &State) -> String {
    let mut out = String::new();
    for t in &state.tasks {
        render_task(&mut out, t);
    }
    out
}

fn render_task(out: &mut String, t: &Task) {
    let Some(b) = box_of(t.status) else {
        return;
    };
    out.push_str(&format!("- {b} #{} {}", t.id, one_line(&t.subject)));
    if !t.blocked_by().is_empty() {
        let ids: Vec<String> = t.blocked_by().iter().map(|i| format!("#{i}")).collect();
        out.push_str(WAITS);
        out.push_str(&ids.join(", "));
    }
    out.push('\n');
    if let Some(a) = t.active_form.as_deref().filter(|a| !a.is_empty()) {
        out.push_str(&format!("  > {}\n", one_line(a)));
    }
    if let Some(d) = t.description.as_deref().filter(|d| !d.is_empty()) {
        for line in d.lines() {
            // A description line that would read as an activeForm keeps its `>` escaped.
            let line = one_line(line);
            let line = if line.starts_with('>') {
                format!("\\{line}")
            } else {
                line
            };
            out.push_str(&format!("  {line}\n"));
        }
    }
}

/// One checklist item as read.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// The item's line, from 1.
    pub line: usize,
    /// Its box's status.
    pub status: Status,
    /// `#n` before the subject, if any.
    pub id: Option<Id>,
    /// The subject.
    pub subject: String,
    /// The ids after `⛓`.
    pub waits: Vec<Id>,
    /// The activeForm line, if any.
    pub active: Option<String>,
    /// The description lines, joined with line breaks.
    pub description: Option<String>,
}

/// A line that is not what it should be, with its number.
#[derive(Clone, Debug, PartialEq)]
pub struct LineError {
    /// The line, from 1.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Every checklist item of `text`; items whose line cannot be read are errors.
pub fn parse(text: &str) -> (Vec<Item>, Vec<LineError>) {
    let mut items: Vec<Item> = Vec::new();
    let mut errors = Vec::new();
    let mut in_item = false;
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let trimmed = raw.trim_start();
        let indent = raw.len() - trimmed.len();
        if let Some(rest) = trimmed
            .strip_prefix("- [")
            .or_else(|| trimmed.strip_prefix("* ["))
        {
            in_item = false;
            match parse_item(line, rest) {
                Ok(item) => {
                    items.push(item);
                    in_item = true;
                }
                Err(message) => errors.push(LineError { line, message }),
            }
            continue;
        }
        if in_item && indent >= 2 && !trimmed.is_empty() {
            if let Some(item) = items.last_mut() {
                if let Some(a) = trimmed.strip_prefix("> ") {
                    item.active = Some(a.trim_end().to_owned());
                } else {
                    let text = trimmed.strip_prefix('\\').unwrap_or(trimmed).trim_end();
                    match &mut item.description {
                        Some(d) => {
                            d.push('\n');
                            d.push_str(text);
                        }
                        None => item.description = Some(text.to_owned()),
                    }
                }
            }
            continue;
        }
        if !trimmed.is_empty() {
            in_item = false;
        }
    }
    (items, errors)
}

/// An item's line after `- [`.
fn parse_item(line: usize, rest: &str) -> Result<Item, String> {
    let mut chars = rest.chars();
    let mark = chars.next().unwrap_or(']');
    let status = match mark {
        ' ' => Status::Pending,
        '/' => Status::InProgress,
        'x' | 'X' => Status::Completed,
        other => {
            return Err(format!(
                "[{other}] is not a box; use [ ] pending, [/] in progress or [x] completed"
            ))
        }
    };
    let rest = chars.as_str();
    let Some(rest) = rest.strip_prefix("] ").or_else(|| rest.strip_prefix(']')) else {
        return Err("a box is [ ], [/] or [x], then the subject".into());
    };
    let mut rest = rest.trim();
    let mut id = None;
    if let Some(after) = rest.strip_prefix('#') {
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && (digits == after.len() || after[digits..].starts_with(" ")) {
            let n: Id = after[..digits]
                .parse()
                .map_err(|_| format!("#{} is not an id", &after[..digits]))?;
            id = Some(n);
            rest = after[digits..].trim_start();
        }
    }
    let mut waits = Vec::new();
    let mut subject = rest;
    if let Some(at) = rest.rfind(WAITS.trim_start()) {
        let list = rest[at + WAITS.trim_start().len()..].trim();
        let parsed: Option<Vec<Id>> = list
            .split(',')
            .map(|p| p.trim().strip_prefix('#').and_then(|d| d.parse().ok()))
            .collect();
        match parsed {
            Some(ids) if !ids.is_empty() => {
                waits = ids;
                subject = rest[..at].trim_end();
            }
            _ => {
                return Err(format!(
                    "after ⛓ come the ids it waits for (#1, #2), not {list:?}"
                ))
            }
        }
    }
    if subject.is_empty() {
        return Err("the subject is empty".into());
    }
    Ok(Item {
        line,
        status,
        id,
        subject: subject.to_owned(),
        waits,
        active: None,
        description: None,
    })
}

/// One call of a plan, with the line it comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The line, from 1 (0 for a deletion: the line is gone).
    pub line: usize,
    /// The tool call's arguments.
    pub params: Value,
    /// For a `create` whose box is not `[ ]`: the status to set once it has its id.
    pub then_status: Option<Status>,
    /// For an import: the id the item had in its file, which other items' `blockedBy`
    /// (the file's ids, in `params`) refer to.
    pub reference: Option<Id>,
}

/// The calls that turn `base` into what `text` shows, each checked against `current`
/// (the list now); and the lines refused, with why.
pub fn plan(text: &str, base: &State, current: &State) -> (Vec<Step>, Vec<LineError>) {
    let (items, mut errors) = parse(text);
    let base_index = base.index();
    let current_index = current.index();
    // What the checklist of `base` reads as, item by item: what "unchanged" means.
    let (shown, _) = parse(&render(base));
    let shown: std::collections::HashMap<Id, Item> = shown
        .into_iter()
        .filter_map(|i| i.id.map(|id| (id, i)))
        .collect();
    let mut steps = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let changed_since = |id: Id| match (base_index.get(id), current_index.get(id)) {
        (Some(b), Some(c)) => b != c,
        (Some(_), None) => true,
        _ => false,
    };
    for item in &items {
        let Some(id) = item.id else {
            let mut params = json!({"action": "create", "subject": item.subject});
            set_text(&mut params, "activeForm", item.active.as_deref());
            set_text(&mut params, "description", item.description.as_deref());
            if !item.waits.is_empty() {
                params["blockedBy"] = json!(item.waits);
            }
            steps.push(Step {
                line: item.line,
                params,
                then_status: (item.status != Status::Pending).then_some(item.status),
                reference: None,
            });
            continue;
        };
        if !seen.insert(id) {
            errors.push(LineError {
                line: item.line,
                message: format!("#{id} is on an earlier line too; each task once"),
            });
            continue;
        }
        let Some(was) = shown.get(&id) else {
            let message = match base_index.get(id) {
                Some(t) if t.status == Status::Deleted => format!("#{id} is deleted"),
                _ => format!("#{id} is not in the list; remove the id to add a new task"),
            };
            errors.push(LineError {
                line: item.line,
                message,
            });
            continue;
        };
        let mut params = Map::new();
        if item.status != was.status {
            params.insert("status".into(), json!(item.status.as_str()));
        }
        if item.subject != was.subject {
            params.insert("subject".into(), json!(item.subject));
        }
        if item.active != was.active {
            params.insert(
                "activeForm".into(),
                json!(item.active.clone().unwrap_or_default()),
            );
        }
        if item.description != was.description {
            params.insert(
                "description".into(),
                json!(item.description.clone().unwrap_or_default()),
            );
        }
        let add: Vec<Id> = item
            .waits
            .iter()
            .filter(|i| !was.waits.contains(i))
            .copied()
            .collect();
        let remove: Vec<Id> = was
            .waits
            .iter()
            .filter(|i| !item.waits.contains(i))
            .copied()
            .collect();
        if !add.is_empty() {
            params.insert("addBlockedBy".into(), json!(add));
        }
        if !remove.is_empty() {
            params.insert("removeBlockedBy".into(), json!(remove));
        }
        if params.is_empty() {
            continue;
        }
        if changed_since(id) {
            errors.push(LineError {
                line: item.line,
                message: format!(
                    "#{id} was changed by another writer since this checklist was made; not applied (the checklist now shows it as it is)"
                ),
            });
            continue;
        }
        params.insert("action".into(), json!("update"));
        params.insert("id".into(), json!(id));
        steps.push(Step {
            line: item.line,
            params: Value::Object(params),
            then_status: None,
            reference: None,
        });
    }
    // Lines removed: deletes, last, so that an edit above can still name the task.
    for id in shown
        .keys()
        .copied()
        .collect::<std::collections::BTreeSet<_>>()
    {
        if seen.contains(&id) {
            continue;
        }
        if changed_since(id) {
            errors.push(LineError {
                line: 0,
                message: format!(
                    "#{id} was removed here but changed by another writer since; not deleted"
                ),
            });
            continue;
        }
        steps.push(Step {
            line: 0,
            params: json!({"action": "delete", "id": id}),
            then_status: None,
            reference: None,
        });
    }
    errors.sort_by_key(|e| e.line);
    (steps, errors)
}

/// The calls that add every checklist item of `text` as a new task (`:Todos import`): one
/// `create` each, in order. An item's `#n` becomes its `reference`, and `blockedBy` keeps
/// the file's ids: the caller maps them to the ids the creates were given.
pub fn plan_import(text: &str) -> (Vec<Step>, Vec<LineError>) {
    let (items, errors) = parse(text);
    let steps = items
        .into_iter()
        .map(|item| {
            let mut params = json!({"action": "create", "subject": item.subject});
            set_text(&mut params, "activeForm", item.active.as_deref());
            set_text(&mut params, "description", item.description.as_deref());
            if !item.waits.is_empty() {
                params["blockedBy"] = json!(item.waits);
            }
            Step {
                line: item.line,
                params,
                then_status: (item.status != Status::Pending).then_some(item.status),
                reference: item.id,
            }
        })
        .collect();
    (steps, errors)
}

fn set_text(params: &mut Value, key: &str, text: Option<&str>) {
    if let Some(t) = text.filter(|t| !t.is_empty()) {
        params[key] = json!(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(calls: &[Value]) -> State {
        let mut s = State::default();
        for c in calls {
            let r = crate::call::run(&mut s, Ok(c));
            assert!(r.error.is_none(), "{}", r.text);
        }
        s
    }

    fn sample() -> State {
        list(&[
            json!({"action": "create", "subject": "Parse", "activeForm": "Parsing", "description": "line one\n> quoted"}),
            json!({"action": "create", "subject": "Check\nthe tree"}),
            json!({"action": "create", "subject": "Emit", "blockedBy": [1, 2]}),
            json!({"action": "create", "subject": "Gone"}),
            json!({"action": "update", "id": 1, "status": "in_progress"}),
            json!({"action": "update", "id": 2, "status": "completed"}),
            json!({"action": "delete", "id": 4}),
        ])
    }

    #[test]
    fn renders_one_task_a_line_with_its_box_deps_and_indented_text() {
        assert_eq!(
            render(&sample()),
            "- [/] #1 Parse\n  > Parsing\n  line one\n  \\> quoted\n- [x] #2 Check the tree\n- [ ] #3 Emit ⛓ #1, #2\n"
        );
    }

    #[test]
    fn an_unedited_checklist_plans_nothing() {
        let s = sample();
        let (steps, errors) = plan(&render(&s), &s, &s);
        assert_eq!((steps, errors), (vec![], vec![]));
    }

    #[test]
    fn each_kind_of_edit_is_one_call() {
        let s = sample();
        let text = "# My list\n\n\
            - [x] #1 Parse the config\n  > Parsing\n  line one\n  \\> quoted\n\
            - [ ] #3 Emit ⛓ #1\n\
            - [/] Write the changelog\n  > Writing it\n\
            Some prose.\n\
            * [ ] Tidy\n";
        let (steps, errors) = plan(text, &s, &s);
        assert_eq!(errors, vec![]);
        let got: Vec<(usize, Value, Option<Status>)> = steps
            .into_iter()
            .map(|s| (s.line, s.params, s.then_status))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    3,
                    json!({"status": "completed", "subject": "Parse the config", "action": "update", "id": 1}),
                    None
                ),
                (
                    7,
                    json!({"removeBlockedBy": [2], "action": "update", "id": 3}),
                    None
                ),
                (
                    8,
                    json!({"action": "create", "subject": "Write the changelog", "activeForm": "Writing it"}),
                    Some(Status::InProgress)
                ),
                (11, json!({"action": "create", "subject": "Tidy"}), None),
                (0, json!({"action": "delete", "id": 2}), None),
            ]
        );
    }

    #[test]
    fn bad_lines_are_refused_with_their_number() {
        let s = sample();
        let text = "- [?] #1 Parse\n- [ ] #9 Nine\n- [ ] #4 Gone\n- [x] #2 Check the tree\n- [x] #2 again\n- [ ] #3 Emit ⛓ soon\n- [ ] \n";
        let (steps, errors) = plan(text, &s, &s);
        let lines: Vec<(usize, &str)> = errors
            .iter()
            .map(|e| (e.line, e.message.as_str()))
            .collect();
        assert_eq!(
            lines,
            vec![
                (
                    1,
                    "[?] is not a box; use [ ] pending, [/] in progress or [x] completed"
                ),
                (2, "#9 is not in the list; remove the id to add a new task"),
                (3, "#4 is deleted"),
                (5, "#2 is on an earlier line too; each task once"),
                (
                    6,
                    "after ⛓ come the ids it waits for (#1, #2), not \"soon\""
                ),
                (7, "the subject is empty"),
            ]
        );
        // #1 and #3 are not on a line that reads: both deletes are planned.
        let deletes: Vec<&Value> = steps.iter().map(|s| &s.params).collect();
        assert_eq!(
            deletes,
            vec![
                &json!({"action": "delete", "id": 1}),
                &json!({"action": "delete", "id": 3})
            ]
        );
    }

    #[test]
    fn an_import_creates_every_item_and_keeps_the_files_ids_as_references() {
        let (steps, errors) =
            plan_import("# Plan\n- [x] #7 Read ⛓ #3\n- [ ] Write\n  > Writing\n- [!] bad\n");
        assert_eq!(
            errors,
            vec![LineError {
                line: 5,
                message: "[!] is not a box; use [ ] pending, [/] in progress or [x] completed"
                    .into()
            }]
        );
        let got: Vec<_> = steps
            .iter()
            .map(|s| (s.line, s.params.clone(), s.then_status, s.reference))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    2,
                    json!({"action": "create", "subject": "Read", "blockedBy": [3]}),
                    Some(Status::Completed),
                    Some(7)
                ),
                (
                    3,
                    json!({"action": "create", "subject": "Write", "activeForm": "Writing"}),
                    None,
                    None
                ),
            ]
        );
    }

    #[test]
    fn a_line_about_a_task_another_writer_changed_is_refused_and_the_rest_applies() {
        let base = sample();
        let mut current = base.clone();
        let r = crate::call::run(
            &mut current,
            Ok(&json!({"action": "update", "id": 3, "subject": "Emit code"})),
        );
        assert!(r.error.is_none());
        let text = render(&base)
            .replace("#3 Emit", "#3 Emit all")
            .replace("[/] #1 Parse", "[x] #1 Parse");
        let (steps, errors) = plan(&text, &base, &current);
        assert_eq!(steps.len(), 1);
        assert_eq!(
            steps[0].params,
            json!({"status": "completed", "action": "update", "id": 1})
        );
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0]
                .message
                .starts_with("#3 was changed by another writer"),
            "{errors:?}"
        );
    }
}
