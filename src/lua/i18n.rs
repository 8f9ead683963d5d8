//! Lua exports of the i18n core: `core.tr`, `core.resolve_locale`, `core.locales`.
//! The Lua layer (`lua/rpiv_todo/i18n.lua`) caches the resolved locale and calls these.

use std::collections::HashMap;

use mlua::{Lua, Table, Value as LuaValue};

use crate::i18n::{self, Arg};

/// Add the i18n functions to the `rpiv_todo.core` table.
pub fn register(lua: &Lua, core: &Table) -> mlua::Result<()> {
    core.set(
        "tr",
        lua.create_function(
            |lua, (locale, id, args): (Option<mlua::LuaString>, mlua::LuaString, Option<Table>)| {
                super::guarded(lua, "tr", || {
                    let locale = locale
                        .map(|l| lossy(&l))
                        .unwrap_or_else(|| i18n::DEFAULT_LOCALE.to_owned());
                    let args = match args {
                        Some(t) => tr_args(&t)?,
                        None => Vec::new(),
                    };
                    let borrowed: Vec<(&str, Arg)> =
                        args.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
                    lua.create_string(i18n::tr(&locale, &lossy(&id), &borrowed))
                })
            },
        )?,
    )?;
    core.set(
        "resolve_locale",
        lua.create_function(
            |lua, (explicit, env): (Option<mlua::LuaString>, Option<Table>)| {
                super::guarded(lua, "resolve_locale", || {
                    let overrides = match env {
                        Some(t) => env_overrides(&t)?,
                        None => HashMap::new(),
                    };
                    // A name the table holds is decided by it (false: unset); others come from
                    // the process environment.
                    let env = |name: &str| match overrides.get(name) {
                        Some(value) => value.clone(),
                        None => std::env::var(name).ok(),
                    };
                    let explicit = explicit.map(|e| lossy(&e));
                    lua.create_string(i18n::resolve(explicit.as_deref(), &env))
                })
            },
        )?,
    )?;
    core.set(
        "locales",
        lua.create_function(|lua, ()| {
            super::guarded(lua, "locales", || {
                lua.create_sequence_from(i18n::LOCALES_SUPPORTED)
            })
        })?,
    )?;
    Ok(())
}

fn lossy(s: &mlua::LuaString) -> String {
    String::from_utf8_lossy(&s.as_bytes()).into_owned()
}

fn misuse(func: &str, what: String) -> mlua::Error {
    mlua::Error::runtime(format!("rpiv_todo.core.{func}: {what}"))
}

/// `{ name = number | string }` → Fluent arguments; numbers stay numbers for plurals.
fn tr_args(t: &Table) -> mlua::Result<Vec<(String, Arg)>> {
    let mut out = Vec::new();
    for pair in t.pairs::<LuaValue, LuaValue>() {
        let (k, v) = pair?;
        let LuaValue::String(name) = &k else {
            return Err(misuse(
                "tr",
                format!("argument names must be strings, got {}", k.type_name()),
            ));
        };
        let name = lossy(name);
        let arg = match v {
            LuaValue::Integer(n) => Arg::from(n),
            LuaValue::Number(n) => Arg::Number(n),
            LuaValue::String(s) => Arg::Text(lossy(&s)),
            other => {
                return Err(misuse(
                    "tr",
                    format!(
                        "argument {name}: expected a number or a string, got {}",
                        other.type_name()
                    ),
                ))
            }
        };
        out.push((name, arg));
    }
    Ok(out)
}

/// `{ NAME = "value" | false }` → per-name overrides of the environment.
pub(super) fn env_overrides(t: &Table) -> mlua::Result<HashMap<String, Option<String>>> {
    let mut out = HashMap::new();
    for pair in t.pairs::<LuaValue, LuaValue>() {
        let (k, v) = pair?;
        let LuaValue::String(name) = &k else {
            return Err(misuse(
                "resolve_locale",
                format!("env names must be strings, got {}", k.type_name()),
            ));
        };
        let name = lossy(name);
        let value = match v {
            LuaValue::String(s) => Some(lossy(&s)),
            LuaValue::Boolean(false) => None,
            other => {
                return Err(misuse(
                    "resolve_locale",
                    format!(
                        "env {name}: expected a string or false, got {}",
                        other.type_name()
                    ),
                ))
            }
        };
        out.insert(name, value);
    }
    Ok(out)
}
