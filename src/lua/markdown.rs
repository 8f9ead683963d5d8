//! Lua exports of the Markdown checklist (`crate::markdown`): `core.markdown(list)` and
//! `core.markdown_plan(text, base, current)`.

use mlua::{Lua, Table, Value as LuaValue};

use super::raw::write;
use super::{guarded, state_arg, Ctx};

/// Add the checklist functions to the `rpiv_todo.core` table.
pub fn register(lua: &Lua, core: &Table) -> mlua::Result<()> {
    core.set(
        "markdown",
        lua.create_function(|lua, state: LuaValue| {
            guarded(lua, "markdown", || {
                let ctx = Ctx::get(lua)?;
                let state = state_arg(lua, &ctx, &state, "markdown")?;
                lua.create_string(crate::markdown::render(&state))
            })
        })?,
    )?;
    core.set(
        "markdown_plan",
        lua.create_function(
            |lua, (text, base, current): (mlua::LuaString, LuaValue, LuaValue)| {
                guarded(lua, "markdown_plan", || {
                    let ctx = Ctx::get(lua)?;
                    let text = String::from_utf8_lossy(&text.as_bytes()).into_owned();
                    // No base: an import, every item a new task.
                    let (steps, errors) = if base.is_nil() {
                        crate::markdown::plan_import(&text)
                    } else {
                        let base = state_arg(lua, &ctx, &base, "markdown_plan")?;
                        let current = match current {
                            LuaValue::Nil => base.clone(),
                            other => state_arg(lua, &ctx, &other, "markdown_plan")?,
                        };
                        crate::markdown::plan(&text, &base, &current)
                    };
                    let out = lua.create_table()?;
                    let list = lua.create_table()?;
                    for step in &steps {
                        let t = lua.create_table()?;
                        t.set("line", step.line)?;
                        t.set("params", write::json(lua, &ctx.array_mt, &step.params)?)?;
                        if let Some(status) = step.then_status {
                            t.set("then_status", status.as_str())?;
                        }
                        if let Some(id) = step.reference {
                            t.set("reference", id)?;
                        }
                        list.push(t)?;
                    }
                    out.set("steps", list)?;
                    let list = lua.create_table()?;
                    for e in &errors {
                        let t = lua.create_table()?;
                        t.set("line", e.line)?;
                        t.set("message", e.message.as_str())?;
                        list.push(t)?;
                    }
                    out.set("errors", list)?;
                    Ok(out)
                })
            },
        )?,
    )?;
    Ok(())
}
