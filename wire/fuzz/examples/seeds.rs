// SPDX-License-Identifier: GPL-2.0

//! Writes the seed messages into `corpus/<target>/seed-<name>`:
//! `cargo run --example seeds` in `wire/fuzz`.

use std::fs;
use std::path::Path;

fn main() -> std::io::Result<()> {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    for (target, seeds) in smc_wire_fuzz::seeds::all() {
        let dir = corpus.join(target);
        fs::create_dir_all(&dir)?;
        for (name, bytes) in &seeds {
            fs::write(dir.join(format!("seed-{name}")), bytes)?;
        }
        println!("{target}: {} seeds", seeds.len());
    }
    Ok(())
}
