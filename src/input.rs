//! Reading input files under a size limit. Every file varysat reads on a user's behalf
//! (pairs, shaders, rule and cost files, experiment configurations) goes through
//! here, so `/dev/zero` or a runaway generator is an error after at most the limit's
//! worth of bytes instead of growing memory without bound.
//!
//! The limit is one setting for the whole process (the CLI's `--max-input-size`),
//! not a parameter of every reader: the readers sit deep in import and experiment
//! code that has no other reason to know about it.

use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::Error;

/// The default limit: 64 MiB, far above any real shader pair or rule file.
pub const DEFAULT_MAX_INPUT_SIZE: u64 = 64 << 20;

static MAX_INPUT_SIZE: AtomicU64 = AtomicU64::new(DEFAULT_MAX_INPUT_SIZE);

/// Sets the largest file, in bytes, that the readers below accept.
pub fn set_max_input_size(bytes: u64) {
    MAX_INPUT_SIZE.store(bytes, Ordering::Relaxed);
}

/// The current limit, in bytes.
pub fn max_input_size() -> u64 {
    MAX_INPUT_SIZE.load(Ordering::Relaxed)
}

fn io_error(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        source,
    }
}

/// The bytes of `path`, or an error when it holds more than the limit.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, Error> {
    let limit = max_input_size();
    let file = std::fs::File::open(path).map_err(|e| io_error(path, e))?;
    let mut bytes = vec![];
    // One byte past the limit tells "exactly at the limit" from "over it".
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(path, e))?;
    if bytes.len() as u64 > limit {
        let msg = format!(
            "larger than the input size limit of {limit} bytes (raise it with --max-input-size)"
        );
        return Err(io_error(
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidData, msg),
        ));
    }
    Ok(bytes)
}

/// The text of `path` (UTF-8), or an error when it holds more than the limit.
pub fn read_text(path: &Path) -> Result<String, Error> {
    let bytes = read_bytes(path)?;
    String::from_utf8(bytes).map_err(|_| {
        let msg = "not UTF-8 text";
        io_error(
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidData, msg),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_stops_at_the_limit() {
        if !Path::new("/dev/zero").exists() {
            return;
        }
        let err = read_bytes(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(err.starts_with("/dev/zero: error: larger than"), "{err}");
    }
}
