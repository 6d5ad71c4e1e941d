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

/// `text` with control and invisible characters written as `\u{..}` escapes (a tab,
/// a vertical tab or a zero-width space from the input would otherwise print as
/// nothing, or as a line break that fakes another diagnostic); a backslash is doubled
/// so that an escape in the output is never ambiguous.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\\' {
            out.push_str("\\\\");
        } else if invisible(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Characters that print as nothing or move the cursor: controls (C0, DEL, C1),
/// format characters such as zero-width spaces and joiners, bidirectional controls,
/// line and paragraph separators, the byte-order mark and the soft hyphen.
fn invisible(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{ad}' | '\u{34f}' | '\u{61c}' | '\u{115f}' | '\u{1160}' | '\u{17b4}' | '\u{17b5}'
            | '\u{180b}'..='\u{180f}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}' | '\u{3164}' | '\u{fe00}'..='\u{fe0f}' | '\u{feff}'
            | '\u{ffa0}' | '\u{fff0}'..='\u{fffb}' | '\u{e0000}'..='\u{e0fff}')
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = escape(self.file.as_deref().unwrap_or("<input>"));
        let message = escape(&self.message);
        match self.loc {
            Some(loc) => write!(f, "{file}:{}:{}: error: {message}", loc.line, loc.col),
            None => write!(f, "{file}: error: {message}"),
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
    /// Rules that fail the semantic check (`rulecheck`): each diagnostic names one
    /// rule and a counterexample.
    #[error("{}", join(.0))]
    Unsound(Vec<Diagnostic>),
    /// A bad cost profile.
    #[error("{0}")]
    Profile(Diagnostic),
    /// A file could not be read or written.
    #[error("{}: error: {}", escape(path), escape(&source.to_string()))]
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
            Error::Invalid(list) | Error::Unsound(list) => list.iter().collect(),
            _ => vec![],
        }
    }
}
