//! The translation context of one module: the module, its linked layout, the stage
//! parameters, the IR being emitted and the state of the walk (value map, variable
//! contents, open functions and loops). Every translation module adds methods to
//! [`Translator`]; the driver (`spirv.rs`) creates it, so no module imports the driver.

use std::collections::BTreeMap;

use fxhash::{FxHashMap, FxHashSet};

use super::emit::Emitter;
use super::function::{FnCtx, LoopCtx};
use super::link::StageLayout;
use super::module::Module;
use super::val::Val;
use crate::ir::{Primitive, Stage};

/// Options that SPIR-V itself does not carry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StageParams {
    /// Vertices per patch entering the TCS / TES when the module does not say.
    pub patch_vertices: u8,
    /// VS output topology when the next stage does not imply one.
    pub topology: Primitive,
    /// The other stage of the pair (decides e.g. where FS `gl_PrimitiveID` comes from).
    pub peer: Stage,
}

/// Translation state for one module.
pub(crate) struct Translator<'a> {
    pub m: &'a Module,
    pub e: Emitter,
    pub layout: &'a StageLayout,
    pub params: StageParams,
    pub ids: FxHashMap<u32, Val>,
    pub(crate) consts: FxHashMap<u32, Val>,
    pub(crate) undo: Vec<(u32, Option<Val>)>,
    /// Contents of function-local and private variables and output shadows.
    pub env: BTreeMap<u32, Val>,
    pub loops: Vec<LoopCtx>,
    pub fns: Vec<FnCtx<'a>>,
    pub visited: Vec<FxHashSet<u32>>,
    /// IR nesting depth (ifs and loops) of the statement being emitted.
    pub depth: usize,
    /// The current instruction carries `NoContraction`.
    pub exact: bool,
    /// One more than the largest constant vertex index into per-vertex inputs.
    pub max_vertex: u32,
    /// Blocks translated so far, against [`MAX_BLOCK_VISITS`].
    pub block_visits: u32,
    /// Merge blocks of the switches being translated as `if` chains, innermost last.
    pub switch_merges: Vec<u32>,
    /// Set when a branch broke out of such a switch from nested control flow.
    pub switch_break: Option<u32>,
}

/// Blocks one translation may walk. Inlining and structurizing duplicate blocks (a
/// conditional branch without a merge translates what follows once per side), so a
/// small hostile module can otherwise expand exponentially; real shaders stay far
/// below this. Cycles outside loop headers, which first made the `import_spirv` fuzz
/// target run out of memory here, are rejected by the walk itself (`run`).
pub(crate) const MAX_BLOCK_VISITS: u32 = 1 << 14;

/// Values one stage's translation may create. Inlining, structurizing and whole-array
/// loads multiply a module's instructions (loading a per-vertex array of 32 `mat4`s is
/// 512 scalar loads; a function called from both sides of many branches is translated
/// once per call), so a few kilobytes of hostile SPIR-V can otherwise ask for millions
/// of values and hundreds of megabytes (the `import_spirv` fuzz target timed out on
/// one). The largest stage of the real corpora is far below this (docs/testing.md).
pub(crate) const MAX_IMPORTED_VALUES: usize = 1 << 18;
