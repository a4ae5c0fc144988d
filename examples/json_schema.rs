//! Writes the JSON Schema of every ksim JSON output to `docs/schema/NAME.schema.json`
//! (generated from the result models by `sim::schema`). Run after changing a model:
//! `cargo run --example json_schema`; `tests/json_schema.rs` fails while they are stale.

use std::path::Path;

fn main() -> std::io::Result<()> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema");
    std::fs::create_dir_all(&dir)?;
    for (name, schema) in sim::schema::schemas() {
        let path = dir.join(format!("{name}.schema.json"));
        files::write_atomic(&path, sim::schema::text(&schema).as_bytes())?;
        println!("{}", path.display());
    }
    Ok(())
}
