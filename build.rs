//! Embeds every `lua/rpiv_todo/*.lua` script for `rpiv_todo::preload`, so Rust hosts need
//! no files at run time and adding a script needs no Rust change.

use std::{env, fs, path::Path};

fn main() {
    let dir = Path::new("lua/rpiv_todo");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut scripts: Vec<(String, String)> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "lua"))
                .filter_map(|p| {
                    let stem = p.file_stem()?.to_str()?.to_owned();
                    let module = if stem == "init" {
                        "rpiv_todo".to_owned()
                    } else {
                        format!("rpiv_todo.{stem}")
                    };
                    let abs = fs::canonicalize(&p).ok()?;
                    println!("cargo:rerun-if-changed={}", p.display());
                    Some((module, abs.to_str()?.to_owned()))
                })
                .collect()
        })
        .unwrap_or_default();
    scripts.sort();
    let body: String = scripts
        .iter()
        .map(|(m, p)| format!("    ({m:?}, include_str!({p:?})),\n"))
        .collect();
    let out = Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("scripts.rs");
    fs::write(out, format!("&[\n{body}]\n")).expect("OUT_DIR is writable");
}
