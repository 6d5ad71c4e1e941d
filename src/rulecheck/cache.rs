//! The cache of rules that passed the semantic check, so that `varysat opt --rules
//! FILE` re-checks a user rule only when its text (or the checker) changed.
//!
//! One file per passed rule, named by the 64-bit FNV-1a hash of the rule's key
//! ([`super::rule_key`]: name, sides, conditions, markers and the checker version)
//! and holding the key itself, which is compared on lookup, so a hash collision can
//! only cost a re-check. Entries are written to a temporary file and renamed, so
//! concurrent runs never read a half-written entry. The directory is
//! `$VARYSAT_CACHE_DIR`, else `$XDG_CACHE_HOME/varysat/rules-checked`, else
//! `$HOME/.cache/varysat/rules-checked`; without any of them nothing is cached. A
//! cache that cannot be read or written only costs time, never an error.

use std::path::{Path, PathBuf};

use super::eval::fnv;

/// A directory of passed-rule entries.
#[derive(Clone, Debug)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// A cache in `dir` (created on the first write).
    pub fn at(dir: impl Into<PathBuf>) -> Cache {
        Cache { dir: dir.into() }
    }

    /// The cache the environment names (see the module documentation).
    pub fn from_env() -> Option<Cache> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        if let Some(dir) = var("VARYSAT_CACHE_DIR") {
            return Some(Cache::at(dir));
        }
        let base = var("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|h| Path::new(&h).join(".cache")))?;
        Some(Cache::at(base.join("varysat").join("rules-checked")))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn entry(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{:016x}", fnv(key.as_bytes())))
    }

    /// Whether a rule with this key passed before.
    pub fn passed(&self, key: &str) -> bool {
        std::fs::read_to_string(self.entry(key)).is_ok_and(|text| text == key)
    }

    /// Records that a rule with this key passed.
    pub fn record_pass(&self, key: &str) {
        let path = self.entry(key);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let written = std::fs::create_dir_all(&self.dir)
            .and_then(|()| std::fs::write(&tmp, key))
            .and_then(|()| std::fs::rename(&tmp, &path));
        if written.is_err() {
            // Nothing to do: the next run checks the rule again.
            let _ = std::fs::remove_file(&tmp);
        }
    }
}
