//! Standard output and error for the subcommands. Every write to standard output is
//! checked and flushed, so a closed pipe (`| head`) or a full disk (`> /dev/full`) is
//! an error with exit status 1 rather than a panic in `print!`. Writes to standard
//! error are best effort: when that fails there is nowhere left to say so.

use std::io::Write;

use varysat::Error;

/// Writes `text` to standard output and flushes it.
pub(crate) fn stdout(text: &str) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|source| Error::Io {
            path: "<stdout>".into(),
            source,
        })
}

/// Writes `text` to standard error, ignoring failure.
pub(crate) fn stderr(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}
