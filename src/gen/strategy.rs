//! Proptest strategies: recipes whose every part shrinks toward the simplest choice
//! (first table op, smooth 32-bit `VARn`, no control flow), and pipelines built from them.

use proptest::prelude::*;

use super::recipe::*;
use crate::ir::{Interp, InterpLoc, InterpMode, Pipeline, Stage};

/// Size limits and the stage pairs to draw from.
#[derive(Clone, Debug)]
pub struct GenConfig {
    /// Stage pairs to generate (each must be a legal link).
    pub pairs: Vec<(Stage, Stage)>,
    /// Most producer DAG ops (the consumer gets half as many).
    pub max_ops: usize,
    /// Most producer outputs (each makes one or two varyings).
    pub max_outputs: usize,
    /// Most extra consumer results and movable shapes (each).
    pub max_results: usize,
}

impl Default for GenConfig {
    fn default() -> GenConfig {
        GenConfig {
            pairs: all_pairs(),
            max_ops: 12,
            max_outputs: 8,
            max_results: 3,
        }
    }
}

impl GenConfig {
    /// The default limits for one stage pair.
    pub fn for_pair(pair: (Stage, Stage)) -> GenConfig {
        GenConfig {
            pairs: vec![pair],
            ..GenConfig::default()
        }
    }
}

/// Every legal stage pair, VS → FS first so that shrinking ends there.
pub fn all_pairs() -> Vec<(Stage, Stage)> {
    let first = (Stage::Vertex, Stage::Fragment);
    let mut out = vec![first];
    out.extend(Stage::pairs().into_iter().filter(|p| *p != first));
    out
}

/// Random pipelines built from [`arb_recipe`].
pub fn arb_pipeline(cfg: GenConfig) -> impl Strategy<Value = Pipeline> {
    arb_recipe(cfg).prop_map(|r| super::build(&r))
}

/// Random pipelines that debug-print as `.pair` text: use these in properties so
/// proptest reports shrunk counterexamples readably.
pub fn arb_readable(cfg: GenConfig) -> impl Strategy<Value = super::Readable> {
    arb_pipeline(cfg).prop_map(super::Readable)
}

/// Random pipelines of one stage pair.
pub fn arb_pipeline_for(producer: Stage, consumer: Stage) -> impl Strategy<Value = Pipeline> {
    arb_pipeline(GenConfig::for_pair((producer, consumer)))
}

/// Random recipes within `cfg`'s limits.
pub fn arb_recipe(cfg: GenConfig) -> impl Strategy<Value = Recipe> {
    let pairs = if cfg.pairs.is_empty() {
        all_pairs()
    } else {
        cfg.pairs.clone()
    };
    let head = (
        prop::sample::select(pairs),
        any::<u8>(),
        any::<u8>(),
        1u8..=8,
        prop_oneof![Just(0u8), 1u8..=16],
        1u8..=4,
        any::<bool>(),
    );
    let lists = (
        prop::collection::vec(arb_op(), 0..=cfg.max_ops),
        prop::collection::vec(arb_output(), 1..=cfg.max_outputs.max(1)),
        prop_oneof![
            3 => Just(vec![]),
            1 => prop::collection::vec(arb_array(), 1..=2)
        ],
        prop::collection::vec(arb_op(), 0..=cfg.max_ops / 2),
        prop::collection::vec(arb_shape(), 0..=cfg.max_results),
        prop::collection::vec(arb_result(), 0..=cfg.max_results),
    );
    (head, lists).prop_map(|(h, l)| Recipe {
        pair: h.0,
        producer_info: h.1,
        consumer_info: h.2,
        uniforms: h.3,
        ubo_words: h.4,
        emits: h.5,
        tcs_readback: h.6,
        // The TCS read-back choice, unused by other producers, also branches a GS
        // emit: no new draw, so the cases drawn for every other feature stay as
        // they were (the injected-law property's shrinking depends on them).
        gs_emit_branch: h.6,
        // Likewise no new draw: a TCS uses the producer choice's low four bits for
        // its patch sizes, the high four pick the off-vertex stores.
        tcs_off_vertex: h.1 >> 4,
        producer_ops: l.0,
        outputs: l.1,
        arrays: l.2,
        consumer_ops: l.3,
        shapes: l.4,
        results: l.5,
    })
}

fn arb_op() -> impl Strategy<Value = OpSpec> {
    (
        any::<u8>(),
        prop::bool::weighted(0.15),
        any::<u16>(),
        any::<u16>(),
        any::<u16>(),
    )
        .prop_map(|(op, exact, a, b, c)| OpSpec { op, exact, a, b, c })
}

fn arb_kind() -> impl Strategy<Value = VaryingKind> {
    prop_oneof![
        4 => Just(VaryingKind::General),
        1 => Just(VaryingKind::Dead),
        1 => Just(VaryingKind::Constant),
        1 => Just(VaryingKind::Uniform),
        1 => Just(VaryingKind::UniformExpr),
        1 => any::<bool>().prop_map(|commuted| VaryingKind::Duplicate { commuted }),
        1 => any::<bool>().prop_map(|times_two| VaryingKind::Derived { times_two }),
        1 => Just(VaryingKind::Convergent),
    ]
}

fn arb_ty() -> impl Strategy<Value = Ty> {
    prop_oneof![4 => Just(Ty::F32), 1 => Just(Ty::F16), 1 => Just(Ty::I32)]
}

fn arb_qual() -> impl Strategy<Value = Qual> {
    let interp = prop_oneof![Just(Interp::Persp), Just(Interp::Linear)];
    let loc = prop_oneof![
        Just(InterpLoc::Center),
        Just(InterpLoc::Centroid),
        Just(InterpLoc::Sample)
    ];
    prop_oneof![
        3 => Just(Qual::SMOOTH),
        1 => Just(Qual::Flat),
        2 => (interp, loc).prop_map(|(interp, loc)| Qual::Interp(InterpMode { interp, loc })),
    ]
}

fn arb_wrap() -> impl Strategy<Value = Wrap> {
    prop_oneof![
        5 => Just(Wrap::None),
        1 => Just(Wrap::IfElse),
        1 => Just(Wrap::IfPhi),
        1 => (0u8..3).prop_map(Wrap::LoopInside),
        1 => (0u8..3).prop_map(Wrap::LoopAccumulate),
    ]
}

fn arb_output() -> impl Strategy<Value = OutputSpec> {
    let at = prop_oneof![
        4 => Just(AtRead::None),
        1 => Just(AtRead::Offset),
        1 => Just(AtRead::Sample)
    ];
    let family = prop_oneof![
        8 => Just(Family::Var),
        1 => Just(Family::Tex),
        1 => Just(Family::Col),
        1 => Just(Family::Bfc),
        1 => Just(Family::Fogc),
        1 => Just(Family::SysVal)
    ];
    let what = (
        arb_kind(),
        arb_ty(),
        any::<u16>(),
        any::<u16>(),
        any::<u16>(),
    );
    let how = (
        arb_qual(),
        at,
        arb_wrap(),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.3),
        0u8..5,
        0u8..4,
        family,
    );
    (what, how).prop_map(|(w, h)| OutputSpec {
        kind: w.0,
        ty: w.1,
        value: w.2,
        other: w.3,
        cond: w.4,
        qual: h.0,
        at: h.1,
        wrap: h.2,
        xfb: h.3,
        patch: h.4,
        vertex: h.5,
        skip: h.6,
        family: h.7,
    })
}

fn arb_array() -> impl Strategy<Value = ArraySpec> {
    (any::<bool>(), arb_qual(), any::<bool>(), any::<u16>()).prop_map(
        |(len4, qual, store_indirect, value)| ArraySpec {
            len4,
            qual,
            store_indirect,
            value,
        },
    )
}

fn arb_shape() -> impl Strategy<Value = ShapeSpec> {
    let kind = prop_oneof![
        Just(ShapeKind::Mad),
        Just(ShapeKind::Shared3),
        Just(ShapeKind::Scale),
        Just(ShapeKind::Product),
        Just(ShapeKind::SelectConst)
    ];
    (
        kind,
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
    )
        .prop_map(|(kind, a, b, c, k1, k2)| ShapeSpec {
            kind,
            a,
            b,
            c,
            k1,
            k2,
        })
}

fn arb_result() -> impl Strategy<Value = ResultSpec> {
    (any::<u16>(), any::<u16>(), any::<u16>(), arb_wrap()).prop_map(|(value, other, cond, wrap)| {
        ResultSpec {
            value,
            other,
            cond,
            wrap,
        }
    })
}
