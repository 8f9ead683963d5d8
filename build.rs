//! Embeds every `lua/rpiv_todo/**/*.lua` script for `rpiv_todo::preload`, so Rust hosts
//! need no files at run time and adding a script needs no Rust change.
//! `init.lua` is `rpiv_todo`; `adapters/acp.lua` is `rpiv_todo.adapters.acp`; `meta/` (type
//! definitions only) is left out.
//!
//! Cargo is told to watch exactly the scripts embedded here (and the Fluent files the i18n
//! module compiles in), never a folder: a folder is watched for any file in it, and
//! `lua/rpiv_todo/core.so` (what scripts/build-module.sh and the installer write) would
//! then make every Rust build stale, the MCP server's included. A new script is picked up
//! when an existing one changes, which a new module needs anyway: it is reached through a
//! `require` in another script.

use std::{env, fs, path::Path};

fn collect(dir: &Path, module: &str, out: &mut Vec<(String, String)>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()).map(str::to_owned) else {
            continue;
        };
        if path.is_dir() {
            // meta/ holds LuaCATS definitions for the language server, not code.
            if stem == "meta" {
                continue;
            }
            collect(&path, &format!("{module}.{stem}"), out);
        } else if path.extension().is_some_and(|x| x == "lua") {
            println!("cargo:rerun-if-changed={}", path.display());
            let name = if stem == "init" {
                module.to_owned()
            } else {
                format!("{module}.{stem}")
            };
            if let Some(abs) = fs::canonicalize(&path)
                .ok()
                .and_then(|p| p.to_str().map(str::to_owned))
            {
                out.push((name, abs));
            }
        }
    }
}

/// Watch every `.ftl` file under `dir` (the locales `src/i18n.rs` compiles in).
fn watch_ftl(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if path.is_dir() {
            watch_ftl(&path);
        } else if path.extension().is_some_and(|x| x == "ftl") {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    watch_ftl(Path::new("locales"));
    let mut scripts = Vec::new();
    collect(Path::new("lua/rpiv_todo"), "rpiv_todo", &mut scripts);
    scripts.sort();
    let body: String = scripts
        .iter()
        .map(|(m, p)| format!("    ({m:?}, include_str!({p:?})),\n"))
        .collect();
    let out = Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("scripts.rs");
    fs::write(out, format!("&[\n{body}]\n")).expect("OUT_DIR is writable");
}
