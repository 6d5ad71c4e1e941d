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
mod scan;
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
pub use scan::Scan;
pub use strategy::{
    all_pairs, arb_pipeline, arb_pipeline_for, arb_readable, arb_recipe, GenConfig,
};
pub use synth::synth_pair;

use crate::ir::Pipeline;

/// A pair in the `.pair` text format, for readable counterexamples.
pub fn describe(p: &Pipeline) -> String {
    crate::text::print(p)
}

/// The shipped example pairs, the file-test pairs and synthetic pairs of three
/// stage kinds and three sizes: the graphs the extraction and saturation tests share.
#[cfg(test)]
pub(crate) fn sample_pairs() -> Vec<Pipeline> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pairs = vec![];
    for dir in ["examples/pairs", "tests/opt"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|f| f.extension().is_some_and(|x| x == "pair"))
            .collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            pairs.push(crate::text::parse(&text, None).unwrap());
        }
    }
    let kinds = [
        (crate::ir::Stage::Vertex, crate::ir::Stage::Fragment),
        (crate::ir::Stage::Vertex, crate::ir::Stage::TessCtrl),
        (crate::ir::Stage::TessEval, crate::ir::Stage::Fragment),
    ];
    for (i, kind) in kinds.into_iter().enumerate() {
        for (n, seed) in [(60, 1 + i as u64), (300, 7 + i as u64)] {
            pairs.push(synth_pair(kind, n, seed));
        }
    }
    pairs.push(synth_pair(kinds[0], 1000, 3));
    pairs
}
