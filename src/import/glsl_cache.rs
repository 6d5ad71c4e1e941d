//! The on-disk cache of compiled GLSL stages (`ImportOptions::glsl_cache`,
//! `varysat import --glsl-cache DIR`): what glslang and spirv-opt made of one
//! stage's source, kept by the hash of that source, so a shader shared by many
//! pairs (most of piglit's vertex shaders) is compiled once in a corpus run.
//!
//! The key is everything the compile depends on besides the tools: the stage's
//! file extension, whether spirv-opt runs, and the source as glslang receives it
//! (after the desktop rewrite). An entry stores its key and is used only when the
//! stored key is the same, so a hash collision is a miss, never a wrong module.
//! Failures are kept too (glslang's report, with the compiled file's name left
//! out), since a pair whose stage glslang rejects costs the most attempts.
//!
//! An entry is one file, written to a temporary name and renamed, so concurrent
//! imports sharing the directory never read half an entry. A directory that
//! cannot be read or written is no error: the stage is then compiled as without
//! a cache.

use std::path::Path;

/// What compiling one stage gave: the SPIR-V and the lines of glslang's AST dump
/// that `explicit.rs` reads, or glslang's report of the failure.
pub(crate) type Compiled = Result<(Vec<u8>, String), String>;

/// The header of an entry (its format; a change of format is a miss).
const MAGIC: &[u8] = b"varysat-glsl-cache 1\n";

/// FNV-1a, 64 bits: the entry's file name (collisions are caught by the key).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The key of a stage compile.
pub(crate) fn key(ext: &str, spirv_opt: bool, source: &str) -> Vec<u8> {
    format!("{ext}\n{spirv_opt}\n{source}").into_bytes()
}

fn entry_path(dir: &Path, key: &[u8]) -> std::path::PathBuf {
    dir.join(format!("{:016x}.stage", fnv1a(key)))
}

/// The cached result for `key`, if any.
pub(crate) fn lookup(dir: &Path, key: &[u8]) -> Option<Compiled> {
    let bytes = std::fs::read(entry_path(dir, key)).ok()?;
    let mut rest = bytes.strip_prefix(MAGIC)?;
    let mut field = || {
        let nl = rest.iter().position(|b| *b == b'\n')?;
        let len: usize = std::str::from_utf8(&rest[..nl]).ok()?.parse().ok()?;
        let body = rest.get(nl + 1..nl + 1 + len)?;
        rest = &rest[nl + 1 + len..];
        Some(body)
    };
    if field()? != key {
        return None;
    }
    let kind = field()?;
    let text = |b: &[u8]| String::from_utf8(b.to_vec()).ok();
    match kind {
        b"ok" => {
            let spirv = field()?.to_vec();
            Some(Ok((spirv, text(field()?)?)))
        }
        b"err" => Some(Err(text(field()?)?)),
        _ => None,
    }
}

/// Stores the result for `key`; failing to write is not an error (see the module
/// documentation).
pub(crate) fn store(dir: &Path, key: &[u8], compiled: &Compiled) {
    let mut out = MAGIC.to_vec();
    let mut field = |b: &[u8]| {
        out.extend_from_slice(format!("{}\n", b.len()).as_bytes());
        out.extend_from_slice(b);
    };
    field(key);
    match compiled {
        Ok((spirv, ast)) => {
            field(b"ok");
            field(spirv);
            field(ast.as_bytes());
        }
        Err(report) => {
            field(b"err");
            field(report.as_bytes());
        }
    }
    let path = entry_path(dir, key);
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    if std::fs::create_dir_all(dir).is_ok()
        && std::fs::write(&tmp, &out).is_ok()
        && std::fs::rename(&tmp, &path).is_err()
    {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_other_keys_miss() {
        let dir = std::env::temp_dir().join(format!("varysat-cache-test-{}", std::process::id()));
        let k = key("vert", true, "#version 450\nvoid main() {}\n");
        assert_eq!(lookup(&dir, &k), None);
        let ok: Compiled = Ok((vec![3, 2, 0x23, 7, 10], "0:?   Linker Objects\n".into()));
        store(&dir, &k, &ok);
        assert_eq!(lookup(&dir, &k), Some(ok));
        // The same file name with another key (a forced collision) is a miss.
        let other = key("frag", true, "#version 450\nvoid main() {}\n");
        std::fs::copy(entry_path(&dir, &k), entry_path(&dir, &other)).unwrap();
        assert_eq!(lookup(&dir, &other), None);
        let failed: Compiled = Err("ERROR: @:3: 'x' : undeclared identifier\n".into());
        store(&dir, &other, &failed);
        assert_eq!(lookup(&dir, &other), Some(failed));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
