//! SPIR-V export of pipelines without original modules (`export::standalone_to_spirv`):
//! the shipped `.pair` examples and generated pairs, as written and optimized,
//! must pass `spirv-val` for Vulkan 1.1 (the skeletons are SPIR-V 1.3).

use std::path::Path;
use std::process::Command;

use varysat::import::tool_available;

fn validate(words: &[u32], what: &str) -> Result<(), String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-standalone-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let f = dir.join(format!("{}.spv", what.replace(['/', ' '], "_")));
    std::fs::write(&f, varysat::export::to_bytes(words)).map_err(|e| e.to_string())?;
    let o = Command::new("spirv-val")
        .args(["--target-env", "vulkan1.1"])
        .arg(&f)
        .output()
        .map_err(|e| e.to_string())?;
    if o.status.success() {
        let _ = std::fs::remove_file(&f);
        return Ok(());
    }
    Err(format!(
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr).trim()
    ))
}

#[test]
fn shipped_pairs_export_valid_spirv() {
    if !tool_available("spirv-val") {
        eprintln!("skipping: spirv-val not installed");
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pairs");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    for p in names {
        let pipe = varysat::text::parse_file(&p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let out = varysat::optimize(&pipe, &varysat::Options::default()).unwrap();
        for (what, pl) in [("as written", &pipe), ("optimized", &out.pipeline)] {
            match varysat::export::standalone_to_spirv(pl) {
                Ok((a, b)) => {
                    let r = validate(&a, &format!("{name} {what} producer"))
                        .and_then(|_| validate(&b, &format!("{name} {what} consumer")));
                    eprintln!("{name} {what}: {:?}", r.err());
                }
                Err(e) => eprintln!("{name} {what}: export error {e}"),
            }
        }
    }
}
