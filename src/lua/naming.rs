//! `core.file_name`, `core.key_prefix`, `core.parse_name` and `core.sha256`: the names of
//! the shared list files ([`crate::naming`]), for `rpiv_todo.persist`, so the editor and
//! the MCP server name a list's file by one code.

use mlua::{Lua, MultiValue, Table, Value as LuaValue};

use super::{api_error, guarded};
use crate::error::Error;
use crate::naming;

/// A string argument's bytes, or the misuse named after the function and the argument.
fn bytes(v: &LuaValue, func: &str, field: &str) -> mlua::Result<Vec<u8>> {
    match v {
        LuaValue::String(s) => Ok(s.as_bytes().to_vec()),
        other => Err(api_error(
            func,
            Error::input(field, "a string", other.type_name()),
        )),
    }
}

pub(super) fn register(lua: &Lua, core: &Table) -> mlua::Result<()> {
    core.set(
        "sha256",
        lua.create_function(|lua, data: LuaValue| {
            guarded(lua, "sha256", || {
                lua.create_string(naming::sha256(&bytes(&data, "sha256", "data")?))
            })
        })?,
    )?;
    core.set(
        "key_prefix",
        lua.create_function(|lua, key: LuaValue| {
            guarded(lua, "key_prefix", || {
                lua.create_string(naming::key_prefix(&bytes(&key, "key_prefix", "key")?))
            })
        })?,
    )?;
    core.set(
        "file_name",
        lua.create_function(|lua, (key, id): (LuaValue, LuaValue)| {
            guarded(lua, "file_name", || {
                let key = bytes(&key, "file_name", "key")?;
                let id = bytes(&id, "file_name", "id")?;
                lua.create_string(naming::file_name(&key, &id))
            })
        })?,
    )?;
    core.set(
        "parse_name",
        lua.create_function(|lua, name: LuaValue| {
            guarded(lua, "parse_name", || {
                let name = bytes(&name, "parse_name", "name")?;
                let Some(parsed) = naming::parse_name(&name) else {
                    return Ok(MultiValue::from_vec(vec![LuaValue::Nil]));
                };
                let string = |b: &[u8]| -> mlua::Result<LuaValue> {
                    Ok(LuaValue::String(lua.create_string(b)?))
                };
                let id = match &parsed.id {
                    Some(id) => string(id)?,
                    None => LuaValue::Nil,
                };
                Ok(MultiValue::from_vec(vec![
                    string(parsed.key_part)?,
                    string(parsed.id_part)?,
                    id,
                ]))
            })
        })?,
    )?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)] // test bookkeeping on small numbers
mod tests {
    use mlua::{Function, Lua, Table};

    /// A small deterministic generator (xorshift), so a failure names its case.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: u64) -> usize {
            usize::try_from(self.next() % n).unwrap_or(0)
        }

        /// Bytes that hit every path: plain name bytes, bytes that are escaped (`%`, `@`,
        /// `/`, `~`, NUL, high bytes), lengths on both sides of the limits.
        fn text(&mut self) -> Vec<u8> {
            let len = match self.below(4) {
                0 => self.below(8),
                1 => 20 + self.below(30),
                2 => 38 + self.below(90),
                _ => self.below(400),
            };
            (0..len)
                .map(|_| match self.below(3) {
                    0 => b"abcXYZ019._-"[self.below(12)],
                    1 => b"%@/~ \x00\n\\:"[self.below(9)],
                    _ => u8::try_from(self.next() & 0xff).unwrap_or(0),
                })
                .collect()
        }
    }

    /// The core's naming, as Lua calls it, is `crate::naming` (the MCP server's) on many
    /// keys, ids and names, and persist.lua has no copy of its own: its names are the core's.
    #[test]
    fn lua_names_files_with_the_core() {
        let lua = Lua::new();
        crate::preload(&lua).unwrap();
        let core: Table = lua.load("return require('rpiv_todo.core')").eval().unwrap();
        let persist: Table = lua
            .load("return require('rpiv_todo.persist')")
            .eval()
            .unwrap();
        let f = |t: &Table, name: &str| t.get::<Function>(name).unwrap();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut hashed = (0, 0);
        for case in 0..1200 {
            let (key, id) = (rng.text(), rng.text());
            let (k, i) = (
                lua.create_string(&key).unwrap(),
                lua.create_string(&id).unwrap(),
            );
            let want = crate::naming::file_name(&key, &id);
            for (who, t) in [("core", &core), ("persist", &persist)] {
                let name: mlua::LuaString = f(t, "file_name").call((&k, &i)).unwrap();
                assert_eq!(
                    name.as_bytes().as_ref(),
                    want.as_bytes(),
                    "{who}, case {case}"
                );
            }
            hashed.0 += usize::from(want.starts_with('~'));
            hashed.1 += usize::from(want.contains("@~"));
            let prefix: mlua::LuaString = f(&persist, "key_prefix").call(&k).unwrap();
            assert!(
                want.as_bytes().starts_with(&prefix.as_bytes()),
                "case {case}"
            );
            let read: (mlua::Value, mlua::Value, Option<mlua::LuaString>) =
                f(&persist, "parse_name")
                    .call(lua.create_string(want.as_bytes()).unwrap())
                    .unwrap();
            if !want.contains("@~") && !key.is_empty() && !id.is_empty() && key[0] != b'.' {
                assert_eq!(
                    read.2.map(|s| s.as_bytes().to_vec()),
                    Some(id.clone()),
                    "case {case}"
                );
            }
        }
        // Both limits were crossed many times.
        assert!(hashed.0 > 100 && hashed.1 > 100, "{hashed:?}");
        // FIPS 180-2's examples, through persist.lua.
        for (data, hex) in [
            (
                "",
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            ),
            (
                "abc",
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            ),
        ] {
            let got: String = f(&persist, "sha256").call(data).unwrap();
            assert_eq!(got, hex, "sha256 of {data:?}");
        }
        let gone: bool = lua
            .load("return (pcall(require, 'rpiv_todo.sha256')) == false")
            .eval()
            .unwrap();
        assert!(gone, "rpiv_todo.sha256 is gone");
    }

    #[test]
    fn arguments_are_checked() {
        let lua = Lua::new();
        crate::preload(&lua).unwrap();
        let err = lua
            .load("return require('rpiv_todo.core').file_name('/k', 3)")
            .exec()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("rpiv_todo.core.file_name: id: expected a string, got integer"),
            "{err}"
        );
        let err = lua
            .load("return require('rpiv_todo.core').sha256(nil)")
            .exec()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("rpiv_todo.core.sha256: data: expected a string, got nil"),
            "{err}"
        );
        let none: mlua::Value = lua
            .load("return require('rpiv_todo.core').parse_name('.x@y.json')")
            .eval()
            .unwrap();
        assert!(none.is_nil());
    }
}
