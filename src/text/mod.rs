//! The `.pair` text format (grammar in `docs/format.md`): a scanner with positions, a
//! parser into [`Pipeline`], and a canonical printer that round-trips exactly.
//!
//! ```
//! let src = "(pair (producer vs (%a = load_input ATTR0.x) (store_output POS.x %a))
//!                  (consumer fs))";
//! let pipeline = varysat::text::parse(src, Some("tri.pair")).unwrap();
//! let text = varysat::text::print(&pipeline);
//! assert_eq!(varysat::text::print(&varysat::text::parse(&text, None).unwrap()), text);
//! ```

mod cursor;
mod inst;
pub(crate) mod literal;
mod opaque;
mod parser;
mod printer;
mod scanner;
mod stmt;
mod tree;

use std::fmt;
use std::path::Path;

use crate::error::{Diagnostic, Error};
use crate::ir::{for_each_stmt_mut, Pipeline, Shader, SrcLoc, Stmt};

/// A problem in `.pair` text, located at the offending token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// Line and column (in characters) of the offending token.
    pub location: SrcLoc,
    /// What was found and what was expected.
    pub message: String,
}

impl ParseError {
    pub(crate) fn new(location: SrcLoc, message: impl Into<String>) -> ParseError {
        ParseError {
            location,
            message: message.into(),
        }
    }

    fn into_error(self, file: Option<&str>) -> Error {
        Error::Syntax(Diagnostic::new(file, Some(self.location), self.message))
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Parses one `(pair ...)`; `file` names the text in diagnostics and becomes the
/// pipeline's `source`. Errors are [`Error::Syntax`] with the position of the
/// offending token.
pub fn parse(src: &str, file: Option<&str>) -> Result<Pipeline, Error> {
    let tree = tree::read(src).map_err(|e| e.into_error(file))?;
    let mut pipeline = parser::pipeline(&tree).map_err(|e| e.into_error(file))?;
    pipeline.source = file.map(str::to_owned);
    Ok(pipeline)
}

/// Reads and parses a `.pair` file ([`Error::Io`] when it cannot be read).
pub fn parse_file(path: &Path) -> Result<Pipeline, Error> {
    let name = path.display().to_string();
    let src = crate::input::read_text(path)?;
    parse(&src, Some(&name))
}

/// The canonical text of a pipeline (see `docs/format.md`). Reading it back gives the
/// same pipeline, except for positions, provided every value is defined exactly once,
/// in arena order, under a name made of letters, digits, `_` and `.`.
pub fn print(p: &Pipeline) -> String {
    printer::pipeline(p)
}

/// Clears every source position and the source file name, so that a parsed pipeline
/// can be compared with one built in code.
pub fn strip_locs(p: &mut Pipeline) {
    p.source = None;
    for ubo in &mut p.ubos {
        ubo.loc = None;
    }
    for shader in [&mut p.producer, &mut p.consumer] {
        strip_shader(shader);
    }
}

fn strip_shader(shader: &mut Shader) {
    shader.loc = None;
    for v in &mut shader.values {
        v.loc = None;
    }
    for_each_stmt_mut(&mut shader.body, |stmt| match stmt {
        Stmt::Inst(inst) => inst.loc = None,
        Stmt::If { loc, .. }
        | Stmt::Loop { loc, .. }
        | Stmt::Break { loc }
        | Stmt::Continue { loc, .. } => *loc = None,
    });
}
