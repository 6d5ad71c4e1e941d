//! What every export stage shares: the two original modules with their resource
//! layouts and the pipeline being written, and the error constructor. The driver
//! (`mod.rs`) builds it; the stages only read it, so none of them imports the driver.

use crate::import::link::StageLayout;
use crate::import::module::Module;
use crate::{Diagnostic, Error, Pipeline};

/// An export error (no source position: the cause is in the IR, not in a file).
pub(crate) fn fail(msg: impl Into<String>) -> Error {
    Error::Import(Diagnostic::new(Some("<export>"), None, msg))
}

/// Both original modules with their shared resource numbering.
pub(crate) struct Sides<'a> {
    pub p: &'a Module,
    pub c: &'a Module,
    pub lp: &'a StageLayout,
    pub lc: &'a StageLayout,
    pub pipe: &'a Pipeline,
    /// The buffer (an index of the shared UBO numbering) that holds the pair's
    /// uniform words, word `i` at byte `4 i` of it: set for pipelines without
    /// original modules (`standalone`), whose skeletons put the words in a push
    /// constant block; `None` for imported pairs (OpenGL default-block uniforms
    /// are not exported).
    pub uniform_block: Option<u32>,
}
