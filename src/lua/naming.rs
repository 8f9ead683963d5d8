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

    /// The plain-Lua naming of persist.lua (with rpiv_todo.sha256) and the core's agree,
    /// with each other and with `crate::naming`, on many keys, ids and names.
    #[test]
    fn the_lua_and_the_core_name_the_same_files() {
        let lua = Lua::new();
        crate::preload(&lua).unwrap();
        let core: Table = lua.load("return require('rpiv_todo.core')").eval().unwrap();
        // persist.lua without the core: its plain-Lua copy of the naming.
        let plain: Table = lua
            .load(
                "package.preload['rpiv_todo.native'] = function() error('no core here') end
                 return require('rpiv_todo.persist')",
            )
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
            let lua_name: mlua::LuaString = f(&plain, "file_name").call((&k, &i)).unwrap();
            let core_name: mlua::LuaString = f(&core, "file_name").call((&k, &i)).unwrap();
            assert_eq!(lua_name.as_bytes().as_ref(), want.as_bytes(), "case {case}");
            assert_eq!(
                core_name.as_bytes().as_ref(),
                want.as_bytes(),
                "case {case}"
            );
            hashed.0 += usize::from(want.starts_with('~'));
            hashed.1 += usize::from(want.contains("@~"));
            let lua_prefix: mlua::LuaString = f(&plain, "key_prefix").call(&k).unwrap();
            let core_prefix: mlua::LuaString = f(&core, "key_prefix").call(&k).unwrap();
            assert_eq!(lua_prefix.as_bytes(), core_prefix.as_bytes(), "case {case}");
            // Read back: the names written, and random text.
            let other = rng.text();
            for name in [want.as_bytes(), &other[..]] {
                let n = lua.create_string(name).unwrap();
                let a: (
                    Option<mlua::LuaString>,
                    Option<mlua::LuaString>,
                    Option<mlua::LuaString>,
                ) = f(&plain, "parse_name").call(&n).unwrap();
                let b: (
                    Option<mlua::LuaString>,
                    Option<mlua::LuaString>,
                    Option<mlua::LuaString>,
                ) = f(&core, "parse_name").call(&n).unwrap();
                let bytes = |v: &Option<mlua::LuaString>| v.as_ref().map(|s| s.as_bytes().to_vec());
                assert_eq!(
                    (bytes(&a.0), bytes(&a.1), bytes(&a.2)),
                    (bytes(&b.0), bytes(&b.1), bytes(&b.2)),
                    "case {case}: {:?}",
                    String::from_utf8_lossy(name)
                );
            }
            let read: (mlua::Value, mlua::Value, Option<mlua::LuaString>) = f(&core, "parse_name")
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
        // Both limits were crossed many times, and the plain copy hashed with Lua.
        assert!(hashed.0 > 100 && hashed.1 > 100, "{hashed:?}");
        let lua_sha: bool = lua
            .load("return package.loaded['rpiv_todo.sha256'] ~= nil")
            .eval()
            .unwrap();
        assert!(lua_sha);
        for len in [0, 1, 55, 56, 63, 64, 65, 119, 120, 121, 1000] {
            let data = lua.create_string(vec![b'\xa5'; len]).unwrap();
            let a: String = f(&plain, "sha256").call(&data).unwrap();
            let b: String = f(&core, "sha256").call(&data).unwrap();
            assert_eq!(a, b, "sha256 of {len} bytes");
        }
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
