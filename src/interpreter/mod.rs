//! The reference interpreter: runs a pipeline pair on seeded inputs and records its
//! observable outputs ([`run`]), and decides whether two pairs behave the same
//! ([`check_equivalent`]). It is the oracle every optimization is checked against,
//! so it favours exactness and readability over speed.
//!
//! Values are bit patterns with a defined flag ([`Scalar`]); ALU ops are evaluated by
//! `ir::eval_alu`, the same code the optimizer folds constants with. Inputs come from
//! [`Inputs`], a pure function of the seed and structural keys.

mod equiv;
mod exec;
mod inputs;
mod matrix;
mod observe;
mod opaque;
mod raster;
mod run;
mod stages;
mod value;
mod wide;

pub use equiv::{check_equivalent, compare, scalars_match, EquivConfig, Inequivalence, Mismatch};
pub use inputs::{Inputs, INPUT_RANGE};
pub use observe::{FragmentInfo, Item, ObsKey, Observation, Unit};
pub use opaque::EFFECT_BUFFER_BASE;
pub use raster::{interpolate, offset_barycentrics, MAX_VIEWPORTS, OFFSET_SCALE, SAMPLE_OFFSETS};
pub(crate) use value::alu_defined;
pub use value::Scalar;

use crate::error::Error;
use crate::ir::{KnownUniforms, Pipeline};

/// Settings of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunConfig {
    /// Seed of every input.
    pub seed: u64,
    /// Fragments shaded per rasterized primitive (FS consumer).
    pub fragments_per_primitive: usize,
    /// Primitives or patches the producer is run for (and, for a GS producer, the
    /// most assembled primitives rasterized).
    pub max_primitives: usize,
    /// Loop iterations, summed over all loops of one invocation, after which the
    /// invocation is an error. A per-loop limit would not bound nested loops, whose
    /// trip counts multiply.
    pub loop_limit: u32,
    /// Tess coordinates evaluated per patch by a TES consumer.
    pub tess_coords_per_patch: usize,
    /// Whether the sign of a zero is observable. When false, `frcp`, `frsq`, `fdiv`
    /// and `fpow` read a `-0` operand as `+0` — the only ops whose result then
    /// differs by more than a zero's sign — which is NIR's default float mode: a
    /// zero's sign is not preserved, and inexact laws may change it (interpolating a
    /// `-0` stored at every vertex gives `+0`, as on hardware, so promoting it to flat
    /// or propagating it turns `+0` back into `-0`). Equivalence checks run this way.
    /// It also stands for the rest of that mode: an inexact float op that reads or
    /// gives an Inf or NaN has an undefined result, since NIR (and Vulkan without
    /// `SignedZeroInfNanPreserve`) may assume neither occurs.
    pub signed_zeros: bool,
    /// Uniform words bound to given values instead of seeded ones (a specialized
    /// pair's inlined uniforms, so that its original can be run on the same values).
    pub known: KnownUniforms,
}

impl Default for RunConfig {
    fn default() -> RunConfig {
        RunConfig {
            seed: 0,
            fragments_per_primitive: 4,
            max_primitives: 2,
            loop_limit: 1024,
            tess_coords_per_patch: 4,
            signed_zeros: true,
            known: KnownUniforms::new(),
        }
    }
}

/// Runs pipeline `p` once on the inputs of `cfg.seed`. Fails with
/// [`Error::Interpret`] when an invocation's loops exceed `cfg.loop_limit`, a TCS has a barrier
/// inside control flow, the pair is malformed (an unknown value, an ill-typed op), or
/// its ifs and loops nest deeper than [`crate::ir::MAX_NESTING`].
pub fn run(p: &Pipeline, cfg: &RunConfig) -> Result<Observation, Error> {
    // Execution follows the nesting one stack frame per level: bound it first.
    for shader in [&p.producer, &p.consumer] {
        if crate::ir::too_deep(&shader.body).is_some() {
            return Err(Error::Interpret(format!(
                "ifs and loops nest more than {} deep",
                crate::ir::MAX_NESTING
            )));
        }
    }
    run::run_pair(p, cfg)
}
