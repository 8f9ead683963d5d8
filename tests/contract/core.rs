//! What only a Rust host sees of `rpiv_todo.core`: `rpiv_todo::preload` puts every script
//! in `package.preload`. The core's Lua contract (bad input, nulls, nesting, the recorded
//! traces) is checked from real interpreters: tests/lua/core_spec.lua and
//! tests/lua/conformance_spec.lua.

use crate::support::{eval, lua};

#[test]
fn preload_embeds_every_script_including_the_adapters() {
    let lua = lua();
    let kinds: String = eval(
        &lua,
        r#"
        local names = {}
        for _, m in ipairs({ "rpiv_todo", "rpiv_todo.tool", "rpiv_todo.overlay", "rpiv_todo.adapters.acp",
                             "rpiv_todo.adapters.avante", "rpiv_todo.adapters.codecompanion" }) do
          names[#names + 1] = type(package.preload[m])
        end
        return table.concat(names, ",")
        "#,
    );
    assert_eq!(
        kinds,
        "function,function,function,function,function,function"
    );
}
