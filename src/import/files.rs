//! File names and import errors: the stage a file name's extension names, and the
//! error of an import, for the file it came from.

use std::path::Path;

use crate::ir::Stage;
use crate::{Diagnostic, Error};

/// An import error for `file`.
pub(crate) fn fail(file: &str, msg: impl Into<String>) -> Error {
    Error::Import(Diagnostic::new(Some(file), None, msg))
}

/// The stage a file name's extension names: `.vert .tesc .tese .geom .frag`, also
/// before a trailing `.spv` (`a.vert.spv`).
pub fn stage_from_extension(path: &Path) -> Option<Stage> {
    let name = path.file_name()?.to_str()?;
    let name = name.strip_suffix(".spv").unwrap_or(name);
    let ext = Path::new(name).extension()?.to_str()?;
    Some(match ext {
        "vert" | "vs" => Stage::Vertex,
        "tesc" | "tcs" => Stage::TessCtrl,
        "tese" | "tes" => Stage::TessEval,
        "geom" | "gs" => Stage::Geometry,
        "frag" | "fs" => Stage::Fragment,
        _ => return None,
    })
}
