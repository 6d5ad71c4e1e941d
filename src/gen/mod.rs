//! Random well-formed shader pairs for property tests, fuzzing and benchmarks: a
//! shrinkable [`Recipe`] that proptest generates, a deterministic builder from recipe to
//! [`Pipeline`], the proptest strategies, and a seeded generator of large pairs.

mod build;
mod consumer;
mod layout;
mod pool;
mod producer;
mod read;
mod readable;
mod recipe;
mod render;
mod strategy;
mod synth;
mod wrap;

pub use build::build;
pub use readable::Readable;
pub use recipe::{
    ArraySpec, AtRead, Family, OpSpec, OutputSpec, Qual, Recipe, ResultSpec, ShapeKind, ShapeSpec,
    Ty, VaryingKind, Wrap,
};
pub use render::{build_for_rendering, guard_domains, render_safe, POSITION_ATTR};
pub use strategy::{
    all_pairs, arb_pipeline, arb_pipeline_for, arb_readable, arb_recipe, GenConfig,
};
pub use synth::synth_pair;

use crate::ir::Pipeline;

/// A pair in the `.pair` text format, for readable counterexamples.
pub fn describe(p: &Pipeline) -> String {
    crate::text::print(p)
}
