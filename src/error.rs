//! Errors and diagnostics. Every error that comes from input text names the file and a
//! line:column, and prints as `file:line:col: error: message`.

use std::fmt;

use crate::ir::SrcLoc;

/// One located problem in some input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// File name (`<input>` when the text did not come from a file).
    pub file: Option<String>,
    /// Position, when known.
    pub loc: Option<SrcLoc>,
    /// What is wrong and what was expected.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic at a position.
    pub fn new(file: Option<&str>, loc: Option<SrcLoc>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            file: file.map(str::to_owned),
            loc,
            message: message.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.as_deref().unwrap_or("<input>");
        match self.loc {
            Some(loc) => write!(
                f,
                "{file}:{}:{}: error: {}",
                loc.line, loc.col, self.message
            ),
            None => write!(f, "{file}: error: {}", self.message),
        }
    }
}

/// Everything that can go wrong in varysat's public API.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Malformed `.pair` text.
    #[error("{0}")]
    Syntax(Diagnostic),
    /// A well-formed pair that breaks the IR's invariants (all problems found).
    #[error("{}", join(.0))]
    Invalid(Vec<Diagnostic>),
    /// A bad rule file.
    #[error("{0}")]
    Rules(Diagnostic),
    /// A bad cost profile.
    #[error("{0}")]
    Profile(Diagnostic),
    /// A file could not be read or written.
    #[error("{path}: error: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The interpreter could not run a pair (e.g. a loop exceeded its iteration limit).
    #[error("interpreter: {0}")]
    Interpret(String),
    /// A hardware limit was exceeded (e.g. more than 32 vec4 slots into FS).
    #[error("limit exceeded: {0}")]
    Limit(String),
    /// Import of an external shader format failed.
    #[error("{0}")]
    Import(Diagnostic),
}

fn join(list: &[Diagnostic]) -> String {
    let lines: Vec<String> = list.iter().map(|d| d.to_string()).collect();
    lines.join("\n")
}

impl Error {
    /// The diagnostics this error carries (empty for I/O and runtime errors).
    pub fn diagnostics(&self) -> Vec<&Diagnostic> {
        match self {
            Error::Syntax(d) | Error::Rules(d) | Error::Profile(d) | Error::Import(d) => vec![d],
            Error::Invalid(list) => list.iter().collect(),
            _ => vec![],
        }
    }
}
