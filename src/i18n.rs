//! UI chrome in the user's language: Fluent messages compiled in from `locales/`, and the
//! chain that picks a locale (explicit → `RPIV_TODO_LOCALE` → rpiv-i18n's `locale.json` →
//! `LC_ALL`/`LC_MESSAGES`/`LANG` → English).
//!
//! Only text a person reads goes through here; everything the model reads stays English.
//! Counts are passed to Fluent as numbers so translations select CLDR plural forms.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use fluent_templates::fluent_bundle::FluentValue;
use fluent_templates::LanguageIdentifier;
use serde_json::{Map, Value};

fluent_templates::static_loader! {
    static LOCALES = {
        locales: "./locales",
        fallback_language: "en",
        // Fluent wraps placeables in U+2068/U+2069 by default; in a terminal they are
        // either invisible noise or garbage, and they break width counting.
        customise: |bundle| bundle.set_use_isolating(false),
    };
}

/// Every supported locale code, sorted; what `normalize` and `resolve` return.
pub const LOCALES_SUPPORTED: [&str; 9] = ["de", "en", "es", "fr", "pt", "pt-BR", "ru", "uk", "zh"];

/// The locale used when nothing else decides, and the last link of every fallback chain.
pub const DEFAULT_LOCALE: &str = "en";

/// Environment variable that overrides the locale for rpiv_todo alone.
pub const ENV_LOCALE: &str = "RPIV_TODO_LOCALE";

/// A Fluent variable's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// A number; plural selectors match on it (`one`, `few`, `many`, `other`, or an exact `[0]`).
    Number(f64),
    /// Text, inserted as is.
    Text(String),
}

impl From<f64> for Arg {
    fn from(n: f64) -> Self {
        Arg::Number(n)
    }
}

impl From<i64> for Arg {
    fn from(n: i64) -> Self {
        // Counts are far below 2^53; past it a count is approximate anyway.
        Arg::Number(n as f64)
    }
}

impl From<usize> for Arg {
    fn from(n: usize) -> Self {
        Arg::Number(n as f64)
    }
}

impl From<&str> for Arg {
    fn from(s: &str) -> Self {
        Arg::Text(s.to_owned())
    }
}

impl From<String> for Arg {
    fn from(s: String) -> Self {
        Arg::Text(s)
    }
}

/// Translate message `id` into `locale` (a supported code; anything else is normalized,
/// then English). A message missing from the locale, or one that fails to format, is
/// looked up along the fallback chain (`pt-BR` → `pt` → `en`); missing everywhere, the
/// id itself is returned so the gap is visible rather than blank.
pub fn tr(locale: &str, id: &str, args: &[(&str, Arg)]) -> String {
    let values: HashMap<&str, FluentValue<'_>> = args
        .iter()
        .map(|(name, arg)| (*name, fluent_value(arg)))
        .collect();
    walk_fallbacks(locale, id, |lang| {
        LOCALES.lookup_single_language(lang, id, Some(&values)).ok()
    })
}

/// The fallback walk of `tr` over any lookup: the first link of the chain that answers
/// wins, else the id. Separate so tests can give it a catalogue with gaps (ours has none).
fn walk_fallbacks(
    locale: &str,
    id: &str,
    lookup: impl Fn(&LanguageIdentifier) -> Option<String>,
) -> String {
    let code = normalize(locale).unwrap_or(DEFAULT_LOCALE);
    for link in fallback_chain(code) {
        let Ok(lang) = link.parse::<LanguageIdentifier>() else {
            continue;
        };
        if let Some(text) = lookup(&lang) {
            return text;
        }
    }
    id.to_owned()
}

/// The locales tried, in order, for a supported code: itself, its language without the
/// region, then English.
pub fn fallback_chain(code: &'static str) -> Vec<&'static str> {
    let mut chain = vec![code];
    if let Some((language, _region)) = code.split_once('-') {
        if let Some(base) = LOCALES_SUPPORTED.iter().find(|c| **c == language) {
            chain.push(base);
        }
    }
    if code != DEFAULT_LOCALE {
        chain.push(DEFAULT_LOCALE);
    }
    chain
}

/// Map a locale tag to a supported code, region-aware: `pt_BR.UTF-8` → `pt-BR`,
/// `de_AT` → `de`, `pt_PT` → `pt`, `zh_CN` → `zh`. `C`, `POSIX`, empty and unknown
/// languages give `None`.
pub fn normalize(tag: &str) -> Option<&'static str> {
    // POSIX form is language[_territory][.codeset][@modifier]; BCP 47 uses '-'.
    let tag = tag.trim();
    let tag = tag.split(['.', '@']).next().unwrap_or_default();
    let mut subtags = tag.split(['_', '-']).filter(|s| !s.is_empty());
    let language = subtags.next()?.to_ascii_lowercase();
    // A script subtag (4 letters, zh-Hans) may sit between language and region.
    let region = subtags
        .find(|s| s.len() == 2 || (s.len() == 3 && s.bytes().all(|b| b.is_ascii_digit())))
        .map(str::to_ascii_uppercase);
    if language == "pt" && region.as_deref() == Some("BR") {
        return Some("pt-BR");
    }
    LOCALES_SUPPORTED
        .iter()
        .copied()
        .find(|c| !c.contains('-') && *c == language)
}

/// Pick the locale: `explicit` (from `setup{ locale = … }`), then `RPIV_TODO_LOCALE`,
/// then `$XDG_CONFIG_HOME/rpiv-i18n/locale.json` (`~/.config` when XDG is unset or
/// relative), then the POSIX message locale, then English. Each step is taken only when
/// it names a supported locale. `env` reads environment variables (an empty value counts
/// as unset), so hosts and tests can supply their own.
pub fn resolve(explicit: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> &'static str {
    let var = |name: &str| env(name).filter(|v| !v.is_empty());
    explicit
        .and_then(normalize)
        .or_else(|| var(ENV_LOCALE).as_deref().and_then(normalize))
        .or_else(|| locale_file(&var).and_then(|p| read_locale_file(&p)))
        .or_else(|| posix_locale(&var))
        .unwrap_or(DEFAULT_LOCALE)
}

/// Where rpiv-i18n keeps the chosen locale, the file `resolve` reads and
/// `save_locale` writes: `$XDG_CONFIG_HOME/rpiv-i18n/locale.json`, or under
/// `$HOME/.config` when XDG_CONFIG_HOME is unset, empty or relative; `None` without either.
pub fn locale_file_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty());
    locale_file(&var)
}

/// The rpiv-i18n locale file shared by the original tool family.
fn locale_file(var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    // XDG Base Directory spec: a relative XDG_CONFIG_HOME is invalid and must be ignored.
    let config = var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(config.join("rpiv-i18n").join("locale.json"))
}

/// The locale named by `{"locale": "<tag>"}`; a missing, unreadable, oversized or
/// malformed file is no answer, silently. Read like every file (`store::read_file`):
/// a pipe or a terminal put there is never opened for reading, and the size limit is
/// the one `save_locale` merges under, so a choice it saved is always read back.
fn read_locale_file(path: &std::path::Path) -> Option<&'static str> {
    let bytes = crate::store::read_file(path, LOCALE_FILE_MAX_BYTES).ok()?;
    // Read as a JSON value, not a derived struct: serde would also accept `["de"]`.
    let parsed: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    normalize(parsed.as_object()?.get("locale")?.as_str()?)
}

/// POSIX precedence for LC_MESSAGES: the first non-empty of LC_ALL, LC_MESSAGES, LANG
/// decides, so `LC_ALL=C` means English even when LANG names another language.
fn posix_locale(var: &dyn Fn(&str) -> Option<String>) -> Option<&'static str> {
    ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .find_map(|name| var(name))
        .and_then(|tag| normalize(&tag))
}

/// Numbers go to Fluent as numbers, except those its plural-operand conversion cannot
/// take (it panics on more fraction digits than fit a u64): those are shown as text.
fn fluent_value(arg: &Arg) -> FluentValue<'_> {
    match arg {
        Arg::Number(n) if plural_safe(*n) => FluentValue::from(*n),
        Arg::Number(n) => FluentValue::from(n.to_string()),
        Arg::Text(s) => FluentValue::from(s.as_str()),
    }
}

fn plural_safe(n: f64) -> bool {
    let text = n.to_string();
    match text.split_once('.') {
        Some((_, fraction)) => fraction.len() <= 18,
        None => true,
    }
}

/// The loader, for the tests' completeness checks.
#[cfg(test)]
fn loader() -> &'static fluent_templates::StaticLoader {
    &LOCALES
}

/// The most rpiv-i18n's `locale.json` may hold, for reading it (the locale chain) and
/// for merging a choice into it (`save_locale`) alike: a larger file is neither read
/// nor replaced.
pub const LOCALE_FILE_MAX_BYTES: u64 = 1024 * 1024;

/// Set `"locale": code` in the JSON object at `path` (rpiv-i18n's `locale.json`), keeping
/// every other key and their order; create the file, and its directory, when missing.
/// The write is atomic. A file that is not a JSON object is left alone: overwriting it
/// would lose whatever the user kept there.
pub fn save_locale(path: &Path, code: &str) -> Result<(), crate::store::StoreError> {
    let invalid = |what: String| crate::store::StoreError::Invalid {
        path: path.display().to_string(),
        what,
    };
    if !LOCALES_SUPPORTED.contains(&code) {
        return Err(invalid(format!(
            "unknown locale {code:?} (expected one of {}); nothing written",
            LOCALES_SUPPORTED.join(", ")
        )));
    }
    let mut map = match crate::store::read_file(path, LOCALE_FILE_MAX_BYTES) {
        Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => Map::new(),
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => map,
            Ok(other) => {
                return Err(invalid(format!(
                    "expected a JSON object, got {}; left as it is",
                    crate::params::kind(&other)
                )))
            }
            Err(e) => return Err(invalid(format!("invalid JSON ({e}); left as it is"))),
        },
        Err(crate::store::StoreError::Missing { .. }) => Map::new(),
        Err(e) => return Err(e),
    };
    map.insert("locale".into(), Value::String(code.into()));
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| crate::store::StoreError::Write {
            path: path.display().to_string(),
            reason: format!(
                "cannot create the directory {}: {}",
                dir.display(),
                crate::store::reason(&e)
            ),
        })?;
    }
    let mut text = serde_json::to_vec_pretty(&Value::Object(map)).unwrap_or_default();
    text.push(b'\n');
    crate::store::write_atomic(path, &text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Every locale's `todo.ftl`, read from the source tree the loader compiled in.
    fn ftl(code: &str) -> String {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("locales")
            .join(code)
            .join("todo.ftl");
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// Message ids and the text of each message (its first line plus indented lines),
    /// by a line scan: a message starts at column 0 with `id =`; comments and blank
    /// lines end it. Good enough for our files, whose syntax the loader already checks.
    fn messages(source: &str) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut open = false;
        for line in source.lines() {
            let first = line.chars().next();
            if first.is_some_and(|c| c.is_ascii_alphabetic()) {
                let (id, rest) = line.split_once('=').unwrap_or((line, ""));
                out.push((id.trim().to_owned(), rest.to_owned()));
                open = true;
            } else if open && first.is_some_and(char::is_whitespace) && !line.trim().is_empty() {
                if let Some(last) = out.last_mut() {
                    last.1.push('\n');
                    last.1.push_str(line);
                }
            } else {
                open = false;
            }
        }
        out
    }

    /// `$name` variables used by `id`, following `{ other-message }` references, which
    /// Fluent resolves with the same variables.
    fn variables(all: &[(String, String)], id: &str, depth: usize) -> BTreeSet<String> {
        let mut vars = BTreeSet::new();
        let Some((_, body)) = all.iter().find(|(m, _)| m == id) else {
            return vars;
        };
        let mut rest = body.as_str();
        while let Some(at) = rest.find('$') {
            let name: String = rest[at + 1..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            vars.insert(name);
            rest = &rest[at + 1..];
        }
        if depth < 4 {
            for (other, _) in all {
                if body.contains(&format!("{{ {other} }}")) {
                    vars.extend(variables(all, other, depth + 1));
                }
            }
        }
        vars
    }

    /// Fluent arguments and environment variables as written in the case tables.
    type Args<'a> = &'a [(&'a str, Arg)];
    type Vars<'a> = &'a [(&'a str, &'a str)];

    fn n(v: i64) -> Arg {
        Arg::from(v)
    }

    #[test]
    fn every_english_message_exists_in_every_locale_with_the_same_variables() {
        let en = messages(&ftl("en"));
        // The ids the Lua layer (overlay, /todos) asks for.
        let used = [
            "overlay-heading",
            "overlay-more",
            "overlay-expand-hint",
            "overlay-collapsed",
            "status-pending",
            "status-in_progress",
            "status-completed",
            "status-deleted",
            "todos-completed",
            "todos-in-progress",
            "todos-pending",
            "todos-section-pending",
            "todos-section-in-progress",
            "todos-section-completed",
            "todos-empty",
            "todos-noninteractive",
        ];
        for id in used {
            assert!(en.iter().any(|(m, _)| m == id), "English lacks {id}");
        }
        for code in LOCALES_SUPPORTED {
            let theirs = messages(&ftl(code));
            let ids: BTreeSet<&str> = theirs.iter().map(|(id, _)| id.as_str()).collect();
            for (id, _) in &en {
                assert!(ids.contains(id.as_str()), "{code} lacks {id}");
                assert_eq!(
                    variables(&theirs, id, 0),
                    variables(&en, id, 0),
                    "{code}: {id} must use exactly the English variables"
                );
            }
            let en_ids: BTreeSet<&str> = en.iter().map(|(id, _)| id.as_str()).collect();
            assert_eq!(ids, en_ids, "{code} has messages English lacks");
        }
    }

    #[test]
    fn every_locale_file_parses_and_is_compiled_in() {
        for code in LOCALES_SUPPORTED {
            let parsed = fluent_templates::fluent_bundle::FluentResource::try_new(ftl(code));
            assert!(
                parsed.is_ok(),
                "{code}/todo.ftl has syntax errors: {:?}",
                parsed.err().map(|e| e.1)
            );
            let lang: LanguageIdentifier = code.parse().unwrap_or_default();
            let heading = loader().lookup_single_language::<&str>(&lang, "overlay-heading", None);
            assert!(heading.is_ok(), "{code} is not compiled in: {heading:?}");
        }
    }

    #[test]
    fn messages_render_every_id_without_falling_back_to_the_id() {
        let args = [
            ("count", n(3)),
            ("completed", n(1)),
            ("pending", n(2)),
            ("done", n(1)),
            ("total", n(4)),
            ("key", Arg::from("ctrl+shift+t")),
        ];
        for code in LOCALES_SUPPORTED {
            for (id, _) in messages(&ftl("en")) {
                let text = tr(code, &id, &args);
                assert_ne!(text, id, "{code}: {id} did not format");
                assert!(
                    !text.contains(['\u{2068}', '\u{2069}']),
                    "{code}: {id} has bidi isolation marks: {text:?}"
                );
                assert!(
                    !text.contains('{') && !text.contains('$'),
                    "{code}: {id} left a placeable: {text:?}"
                );
                assert_eq!(text, text.trim(), "{code}: {id} has stray whitespace");
            }
        }
    }

    #[test]
    fn english_strings_match_the_reference_ui() {
        let cases: &[(&str, Args, &str)] = &[
            ("overlay-heading", &[], "Todos"),
            (
                "overlay-more",
                &[("count", n(3)), ("completed", n(0)), ("pending", n(3))],
                "+3 more (3 pending)",
            ),
            (
                "overlay-more",
                &[("count", n(2)), ("completed", n(2)), ("pending", n(0))],
                "+2 more (2 completed)",
            ),
            (
                "overlay-more",
                &[("count", n(5)), ("completed", n(2)), ("pending", n(3))],
                "+5 more (2 completed, 3 pending)",
            ),
            (
                "overlay-expand-hint",
                &[("key", Arg::from("ctrl+shift+t"))],
                "ctrl+shift+t to expand",
            ),
            ("overlay-collapsed", &[], "collapsed"),
            ("status-pending", &[], "pending"),
            ("status-in_progress", &[], "in progress"),
            ("status-completed", &[], "completed"),
            ("status-deleted", &[], "deleted"),
            (
                "todos-completed",
                &[("done", n(2)), ("total", n(5))],
                "2/5 completed",
            ),
            ("todos-in-progress", &[("count", n(1))], "1 in progress"),
            ("todos-pending", &[("count", n(4))], "4 pending"),
            ("todos-section-pending", &[], "Pending"),
            ("todos-section-in-progress", &[], "In Progress"),
            ("todos-section-completed", &[], "Completed"),
        ];
        for (id, args, want) in cases {
            assert_eq!(tr("en", id, args), *want, "{id}");
        }
    }

    /// `overlay-more` with only `count` and `pending` set (the others 0): the shape that
    /// exercises the count's plural form and the pending part's.
    fn more_pending(code: &str, count: i64) -> String {
        tr(
            code,
            "overlay-more",
            &[
                ("count", n(count)),
                ("completed", n(0)),
                ("pending", n(count)),
            ],
        )
    }

    fn more_completed(code: &str, count: i64) -> String {
        tr(
            code,
            "overlay-more",
            &[
                ("count", n(count)),
                ("completed", n(count)),
                ("pending", n(0)),
            ],
        )
    }

    #[test]
    fn russian_and_ukrainian_agree_in_number_with_three_forms() {
        let cases: &[(&str, i64, &str, &str, &str)] = &[
            // (locale, n, more with n pending, more with n completed, /todos pending)
            (
                "ru",
                1,
                "ещё 1 задача (1 ожидает)",
                "ещё 1 задача (1 выполнена)",
                "1 ожидает",
            ),
            (
                "ru",
                2,
                "ещё 2 задачи (2 ожидают)",
                "ещё 2 задачи (2 выполнены)",
                "2 ожидают",
            ),
            (
                "ru",
                5,
                "ещё 5 задач (5 ожидают)",
                "ещё 5 задач (5 выполнено)",
                "5 ожидают",
            ),
            (
                "ru",
                11,
                "ещё 11 задач (11 ожидают)",
                "ещё 11 задач (11 выполнено)",
                "11 ожидают",
            ),
            (
                "ru",
                21,
                "ещё 21 задача (21 ожидает)",
                "ещё 21 задача (21 выполнена)",
                "21 ожидает",
            ),
            (
                "ru",
                22,
                "ещё 22 задачи (22 ожидают)",
                "ещё 22 задачи (22 выполнены)",
                "22 ожидают",
            ),
            (
                "uk",
                1,
                "ще 1 завдання (1 очікує)",
                "ще 1 завдання (1 виконане)",
                "1 очікує",
            ),
            (
                "uk",
                2,
                "ще 2 завдання (2 очікують)",
                "ще 2 завдання (2 виконані)",
                "2 очікують",
            ),
            (
                "uk",
                5,
                "ще 5 завдань (5 очікують)",
                "ще 5 завдань (5 виконано)",
                "5 очікують",
            ),
            (
                "uk",
                11,
                "ще 11 завдань (11 очікують)",
                "ще 11 завдань (11 виконано)",
                "11 очікують",
            ),
            (
                "uk",
                21,
                "ще 21 завдання (21 очікує)",
                "ще 21 завдання (21 виконане)",
                "21 очікує",
            ),
            (
                "uk",
                22,
                "ще 22 завдання (22 очікують)",
                "ще 22 завдання (22 виконані)",
                "22 очікують",
            ),
        ];
        for (code, count, pending, completed, todos) in cases {
            assert_eq!(
                more_pending(code, *count),
                *pending,
                "{code} {count} pending"
            );
            assert_eq!(
                more_completed(code, *count),
                *completed,
                "{code} {count} completed"
            );
            assert_eq!(
                tr(code, "todos-pending", &[("count", n(*count))]),
                *todos,
                "{code} {count} /todos"
            );
        }
    }

    #[test]
    fn other_locales_agree_in_number_at_one_and_many() {
        let cases: &[(&str, i64, &str, &str)] = &[
            ("en", 1, "+1 more (1 pending)", "+1 more (1 completed)"),
            ("en", 5, "+5 more (5 pending)", "+5 more (5 completed)"),
            (
                "de",
                1,
                "+1 weitere Aufgabe (1 offen)",
                "+1 weitere Aufgabe (1 erledigt)",
            ),
            (
                "de",
                5,
                "+5 weitere Aufgaben (5 offen)",
                "+5 weitere Aufgaben (5 erledigt)",
            ),
            (
                "es",
                1,
                "+1 tarea más (1 pendiente)",
                "+1 tarea más (1 completada)",
            ),
            (
                "es",
                5,
                "+5 tareas más (5 pendientes)",
                "+5 tareas más (5 completadas)",
            ),
            (
                "fr",
                1,
                "+1 autre tâche (1 en attente)",
                "+1 autre tâche (1 terminée)",
            ),
            (
                "fr",
                5,
                "+5 autres tâches (5 en attente)",
                "+5 autres tâches (5 terminées)",
            ),
            (
                "pt",
                1,
                "+1 outra tarefa (1 pendente)",
                "+1 outra tarefa (1 concluída)",
            ),
            (
                "pt",
                5,
                "+5 outras tarefas (5 pendentes)",
                "+5 outras tarefas (5 concluídas)",
            ),
            (
                "pt-BR",
                1,
                "+1 outra tarefa (1 pendente)",
                "+1 outra tarefa (1 concluída)",
            ),
            (
                "pt-BR",
                5,
                "+5 outras tarefas (5 pendentes)",
                "+5 outras tarefas (5 concluídas)",
            ),
            (
                "zh",
                1,
                "还有 1 项（1 项待处理）",
                "还有 1 项（1 项已完成）",
            ),
            (
                "zh",
                5,
                "还有 5 项（5 项待处理）",
                "还有 5 项（5 项已完成）",
            ),
        ];
        for (code, count, pending, completed) in cases {
            assert_eq!(
                more_pending(code, *count),
                *pending,
                "{code} {count} pending"
            );
            assert_eq!(
                more_completed(code, *count),
                *completed,
                "{code} {count} completed"
            );
        }
    }

    #[test]
    fn summary_omits_zero_parts_and_keeps_both_when_non_zero() {
        let cases: &[(&str, [i64; 3], &str)] = &[
            ("de", [5, 2, 3], "+5 weitere Aufgaben (2 erledigt, 3 offen)"),
            ("ru", [5, 1, 4], "ещё 5 задач (1 выполнена, 4 ожидают)"),
            ("zh", [5, 2, 3], "还有 5 项（2 项已完成，3 项待处理）"),
            ("en", [4, 0, 0], "+4 more"),
        ];
        for (code, [count, completed, pending], want) in cases {
            let args = [
                ("count", n(*count)),
                ("completed", n(*completed)),
                ("pending", n(*pending)),
            ];
            assert_eq!(tr(code, "overlay-more", &args), *want, "{code}");
        }
    }

    #[test]
    fn todos_header_parts_agree_with_their_count() {
        let cases: &[(&str, &str, Args, &str)] = &[
            (
                "es",
                "todos-completed",
                &[("done", n(1)), ("total", n(3))],
                "1/3 completada",
            ),
            (
                "es",
                "todos-completed",
                &[("done", n(2)), ("total", n(3))],
                "2/3 completadas",
            ),
            (
                "fr",
                "todos-completed",
                &[("done", n(0)), ("total", n(3))],
                "0/3 terminée",
            ),
            (
                "fr",
                "todos-completed",
                &[("done", n(2)), ("total", n(3))],
                "2/3 terminées",
            ),
            (
                "pt",
                "todos-completed",
                &[("done", n(0)), ("total", n(3))],
                "0/3 concluídas",
            ),
            (
                "pt-BR",
                "todos-completed",
                &[("done", n(1)), ("total", n(3))],
                "1/3 concluída",
            ),
            (
                "ru",
                "todos-completed",
                &[("done", n(2)), ("total", n(5))],
                "выполнено 2 из 5",
            ),
            ("uk", "todos-in-progress", &[("count", n(1))], "1 у роботі"),
            ("es", "todos-pending", &[("count", n(1))], "1 pendiente"),
            ("es", "todos-pending", &[("count", n(2))], "2 pendientes"),
            (
                "zh",
                "todos-completed",
                &[("done", n(2)), ("total", n(5))],
                "已完成 2/5",
            ),
        ];
        for (code, id, args, want) in cases {
            assert_eq!(tr(code, id, args), *want, "{code} {id}");
        }
    }

    #[test]
    fn key_placeable_is_inserted_without_isolation_marks() {
        let key = [("key", Arg::from("ctrl+shift+t"))];
        let cases = [
            ("de", "ctrl+shift+t zum Aufklappen"),
            ("ru", "ctrl+shift+t — развернуть"),
            ("zh", "按 ctrl+shift+t 展开"),
        ];
        for (code, want) in cases {
            assert_eq!(tr(code, "overlay-expand-hint", &key), want);
        }
    }

    #[test]
    fn fallback_chain_goes_region_then_language_then_english() {
        let cases: &[(&str, &[&str])] = &[
            ("pt-BR", &["pt-BR", "pt", "en"]),
            ("pt", &["pt", "en"]),
            ("de", &["de", "en"]),
            ("en", &["en"]),
        ];
        for (code, want) in cases {
            let code = normalize(code).unwrap_or(DEFAULT_LOCALE);
            assert_eq!(fallback_chain(code), *want);
        }
    }

    #[test]
    fn a_message_missing_in_a_locale_comes_from_the_next_link() {
        // A catalogue with gaps: pt-BR lacks "b" and "c", pt lacks "c".
        let catalogue: &[(&str, &str, &str)] = &[
            ("pt-BR", "a", "a do Brasil"),
            ("pt", "a", "a de Portugal"),
            ("pt", "b", "b de Portugal"),
            ("en", "a", "a in English"),
            ("en", "b", "b in English"),
            ("en", "c", "c in English"),
        ];
        let lookup = |id: &'static str| {
            move |lang: &LanguageIdentifier| {
                let lang = lang.to_string();
                catalogue
                    .iter()
                    .find(|(l, i, _)| *l == lang && *i == id)
                    .map(|(_, _, text)| (*text).to_owned())
            }
        };
        let cases: &[(&str, &'static str, &str)] = &[
            ("pt-BR", "a", "a do Brasil"),
            ("pt_BR.UTF-8", "b", "b de Portugal"),
            ("pt-BR", "c", "c in English"),
            ("pt-BR", "d", "d"),
            ("pt_PT", "a", "a de Portugal"),
            ("de", "b", "b in English"),
        ];
        for (locale, id, want) in cases {
            assert_eq!(
                walk_fallbacks(locale, id, lookup(id)),
                *want,
                "{locale} {id}"
            );
        }
        // The real catalogue: pt-BR and pt differ where Brazilian and European usage do.
        let pairs: &[(&str, &str, &str)] = &[
            ("status-in_progress", "em andamento", "em curso"),
            ("status-deleted", "excluída", "eliminada"),
            ("todos-section-in-progress", "Em andamento", "Em curso"),
        ];
        for (id, brazil, portugal) in pairs {
            assert_eq!(tr("pt-BR", id, &[]), *brazil, "pt-BR {id}");
            assert_eq!(tr("pt", id, &[]), *portugal, "pt {id}");
        }
    }

    #[test]
    fn unknown_ids_and_locales_degrade_instead_of_failing() {
        assert_eq!(tr("en", "no-such-message", &[]), "no-such-message");
        assert_eq!(
            tr("xx", "overlay-heading", &[]),
            "Todos",
            "unknown locale is English"
        );
        assert_eq!(
            tr("de_AT.UTF-8", "overlay-heading", &[]),
            "Aufgaben",
            "tags are normalized"
        );
        // A missing variable makes Fluent report an error; the chain ends at the id.
        assert_eq!(tr("de", "todos-pending", &[]), "todos-pending");
    }

    #[test]
    fn numbers_the_plural_rules_cannot_take_are_shown_as_text() {
        for v in [f64::NAN, f64::INFINITY, 5e-324, 1e300, -0.0, 0.5] {
            let text = tr("ru", "todos-in-progress", &[("count", Arg::Number(v))]);
            assert!(text.ends_with(" в работе"), "{v}: {text}");
        }
    }

    #[test]
    fn normalize_is_region_aware() {
        let cases: &[(&str, Option<&str>)] = &[
            ("pt_BR.UTF-8", Some("pt-BR")),
            ("pt-br", Some("pt-BR")),
            ("pt_PT", Some("pt")),
            ("pt", Some("pt")),
            ("de_AT", Some("de")),
            ("de_DE.UTF-8@euro", Some("de")),
            ("zh_CN", Some("zh")),
            ("zh-Hans-CN", Some("zh")),
            ("en_US.UTF-8", Some("en")),
            ("FR", Some("fr")),
            ("uk_UA.UTF-8", Some("uk")),
            ("ru", Some("ru")),
            ("es_419", Some("es")),
            ("C", None),
            ("C.UTF-8", None),
            ("POSIX", None),
            ("", None),
            ("ja_JP", None),
            ("_", None),
        ];
        for (tag, want) in cases {
            assert_eq!(normalize(tag), *want, "{tag:?}");
        }
    }

    /// An environment from a fixed list; everything else unset.
    fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    fn write_locale_file(config_home: &std::path::Path, contents: &str) {
        let dir = config_home.join("rpiv-i18n");
        std::fs::create_dir_all(&dir).expect("create config dir");
        std::fs::write(dir.join("locale.json"), contents).expect("write locale.json");
    }

    #[test]
    fn resolution_takes_the_first_step_that_names_a_supported_locale() {
        let xdg = tempfile::tempdir().expect("tempdir");
        write_locale_file(xdg.path(), r#"{"locale": "fr"}"#);
        let xdg_path = xdg.path().to_string_lossy().into_owned();
        let full = [
            ("RPIV_TODO_LOCALE", "es"),
            ("XDG_CONFIG_HOME", xdg_path.as_str()),
            ("LC_ALL", "ru_RU.UTF-8"),
            ("LANG", "uk_UA.UTF-8"),
        ];
        let cases: &[(Option<&str>, Vars, &str)] = &[
            (Some("de"), &full, "de"),
            (Some("pt_BR"), &full, "pt-BR"),
            (Some("xx"), &full, "es"),
            (None, &full, "es"),
            (None, &full[1..], "fr"),
            (None, &full[2..], "ru"),
            (None, &full[3..], "uk"),
            (None, &[], "en"),
            (
                None,
                &[("RPIV_TODO_LOCALE", ""), ("LANG", "zh_CN.UTF-8")],
                "zh",
            ),
            (
                None,
                &[("RPIV_TODO_LOCALE", "klingon"), ("LANG", "zh_CN.UTF-8")],
                "zh",
            ),
        ];
        for (explicit, vars, want) in cases {
            assert_eq!(
                resolve(*explicit, &env_of(vars)),
                *want,
                "{explicit:?} {vars:?}"
            );
        }
    }

    #[test]
    fn posix_variables_follow_lc_all_then_lc_messages_then_lang() {
        let cases: &[(Vars, &str)] = &[
            (
                &[
                    ("LC_ALL", "de_DE.UTF-8"),
                    ("LC_MESSAGES", "fr_FR"),
                    ("LANG", "es_ES"),
                ],
                "de",
            ),
            (&[("LC_MESSAGES", "fr_FR"), ("LANG", "es_ES")], "fr"),
            (
                &[("LC_ALL", ""), ("LC_MESSAGES", "fr_FR"), ("LANG", "es_ES")],
                "fr",
            ),
            (&[("LANG", "pt_BR.UTF-8")], "pt-BR"),
            (&[("LANG", "pt_PT.UTF-8")], "pt"),
            // The first set variable decides: LC_ALL=C means the C locale, English.
            (&[("LC_ALL", "C"), ("LANG", "de_DE.UTF-8")], "en"),
            (&[("LC_MESSAGES", "POSIX"), ("LANG", "de_DE.UTF-8")], "en"),
            (&[("LANG", "ja_JP.UTF-8")], "en"),
        ];
        for (vars, want) in cases {
            assert_eq!(resolve(None, &env_of(vars)), *want, "{vars:?}");
        }
    }

    #[test]
    fn locale_file_is_found_under_xdg_or_home_config() {
        let home = tempfile::tempdir().expect("tempdir");
        write_locale_file(&home.path().join(".config"), r#"{"locale":"de"}"#);
        let home_path = home.path().to_string_lossy().into_owned();
        let other = tempfile::tempdir().expect("tempdir");
        write_locale_file(other.path(), r#"{"locale":"pt-BR"}"#);
        let other_path = other.path().to_string_lossy().into_owned();
        let empty = tempfile::tempdir().expect("tempdir");
        let empty_path = empty.path().to_string_lossy().into_owned();
        let cases: &[(Vars, &str)] = &[
            (&[("HOME", &home_path)], "de"),
            (
                &[("HOME", &home_path), ("XDG_CONFIG_HOME", &other_path)],
                "pt-BR",
            ),
            // Relative or empty XDG_CONFIG_HOME is ignored: ~/.config is used.
            (
                &[("HOME", &home_path), ("XDG_CONFIG_HOME", "relative/dir")],
                "de",
            ),
            (&[("HOME", &home_path), ("XDG_CONFIG_HOME", "")], "de"),
            // An XDG dir without the file: no answer from the file step, ~/.config is not consulted.
            (
                &[
                    ("HOME", &home_path),
                    ("XDG_CONFIG_HOME", &empty_path),
                    ("LANG", "ru_RU"),
                ],
                "ru",
            ),
        ];
        for (vars, want) in cases {
            assert_eq!(resolve(None, &env_of(vars)), *want, "{vars:?}");
        }
    }

    #[test]
    fn malformed_locale_file_is_ignored() {
        let bad = [
            "",
            "not json",
            r#"{"locale": 3}"#,
            r#"{"lang": "de"}"#,
            r#"["de"]"#,
            r#"{"locale": "klingon"}"#,
            r#"{"locale": "de""#,
        ];
        for contents in bad {
            let xdg = tempfile::tempdir().expect("tempdir");
            write_locale_file(xdg.path(), contents);
            let xdg_path = xdg.path().to_string_lossy().into_owned();
            let env = env_of(&[("XDG_CONFIG_HOME", &xdg_path), ("LANG", "es_ES.UTF-8")]);
            assert_eq!(resolve(None, &env), "es", "{contents:?}");
        }
        // A directory where the file should be is not a file either.
        let xdg = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(xdg.path().join("rpiv-i18n").join("locale.json")).expect("mkdir");
        let xdg_path = xdg.path().to_string_lossy().into_owned();
        assert_eq!(
            resolve(None, &env_of(&[("XDG_CONFIG_HOME", &xdg_path)])),
            "en"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_at_the_locale_file_is_skipped_without_waiting_for_a_writer() {
        let xdg = tempfile::tempdir().expect("tempdir");
        let dir = xdg.path().join("rpiv-i18n");
        std::fs::create_dir_all(&dir).expect("mkdir");
        let fifo = dir.join("locale.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo makes the pipe");
        let xdg_path = xdg.path().to_string_lossy().into_owned();
        // A plain open waits for a writer forever: resolve on a thread, and if it has not
        // answered after a long while, become the writer so it ends and the test fails.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let env = env_of(&[("XDG_CONFIG_HOME", &xdg_path), ("LANG", "fr_FR.UTF-8")]);
            let _ = tx.send(resolve(None, &env));
        });
        let got = match rx.recv_timeout(std::time::Duration::from_secs(30)) {
            Ok(got) => got,
            Err(_) => {
                let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
                panic!("the locale chain blocked on the pipe at {}", fifo.display());
            }
        };
        assert_eq!(got, "fr");
    }

    #[test]
    fn a_locale_file_save_locale_wrote_is_read_back_however_large_it_may_be() {
        // The old reader stopped at 64 KiB while save_locale merged into files up to
        // 1 MiB: the choice saved into a large file was ignored.
        let xdg = tempfile::tempdir().expect("tempdir");
        let pad = "x".repeat(200 * 1024);
        write_locale_file(xdg.path(), &format!(r#"{{"pad":"{pad}"}}"#));
        let path = xdg.path().join("rpiv-i18n").join("locale.json");
        save_locale(&path, "uk").expect("saved");
        let xdg_path = xdg.path().to_string_lossy().into_owned();
        assert_eq!(
            resolve(None, &env_of(&[("XDG_CONFIG_HOME", &xdg_path)])),
            "uk"
        );
    }
}
