//! What a rule's variables stand for, and the random cases it is tried on.
//!
//! A case is one consumer invocation (an FS fragment, or a TCS/TES/GS invocation)
//! fed by one primitive of the producer: three vertices and, for a TES consumer, the
//! patch. Every value variable gets a value per *entry* — producer vertex 0, 1, 2, the
//! patch, and the consumer — and the conditions say which entries agree:
//! `free`/`const`/`propagatable` values are one value everywhere (both stages compute
//! them alike), producer-convergent ones (`convergent-p`, `promotable`,
//! `convergent-c`) are equal at every vertex, the rest differ. A variable the left
//! side reads in both stages can only match such a shared value, so it is shared too.
//! Mode variables take every mode their conditions admit, with random operands.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use egg::{ENodeOrVar, Id, Language, Pattern, Var};

use super::values::{value, Draw, Rng};
use crate::egraph::{Cond, VNode, XferMode};
use crate::interpreter::Scalar;
use crate::ir::{BitSize, Interp, InterpLoc, InterpMode};

/// Producer vertices of the primitive feeding a case.
pub(super) const VERTICES: usize = 3;
/// The entry of the producer's patch (per-patch outputs).
pub(super) const PATCH: usize = 3;
/// The entry of the consumer invocation.
pub(super) const CONSUMER: usize = 4;
/// Entries per variable: the vertices, the patch, the consumer.
pub(super) const ENTRIES: usize = 5;

/// Which consumer a case runs in; it decides the modes that exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ConsumerKind {
    /// An FS: flat and interpolated inputs.
    Fragment,
    /// A TCS, TES or GS: per-vertex inputs and (TES) per-patch inputs.
    PerVertex,
}

impl ConsumerKind {
    /// Whether a mode exists in this consumer.
    pub(super) fn has(self, mode: XferMode) -> bool {
        match self {
            ConsumerKind::Fragment => matches!(mode, XferMode::Flat | XferMode::Interp(_)),
            ConsumerKind::PerVertex => matches!(mode, XferMode::Vertex | XferMode::Patch),
        }
    }
}

/// One concrete transfer mode with its operand values.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct ModeInst {
    pub mode: XferMode,
    pub ops: Vec<Scalar>,
}

impl fmt::Display for ModeInst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = VNode::Mode(self.mode, Default::default()).op_name();
        if self.ops.is_empty() {
            return f.write_str(&name);
        }
        write!(f, "({name}")?;
        for o in &self.ops {
            write!(f, " {}", show(*o))?;
        }
        f.write_str(")")
    }
}

/// A value as a rule constant (`1.5f32`, `3i32`, `#32:0x7fc00000`, `true`), or `undef`.
pub(super) fn show(s: Scalar) -> String {
    if !s.defined {
        return "undef".into();
    }
    VNode::Const {
        bits: s.size,
        value: s.bits,
    }
    .op_name()
}

/// What a mode variable may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ModeFilter {
    Any,
    Interpolated,
    Uninterpolated,
}

/// Where a variable is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ctx {
    /// Outside every `xfer` (the consumer, or either stage in a rule without `xfer`).
    Outer,
    /// Inside the value operand of an `xfer`: the producer.
    Producer,
}

/// The state of the world in one case besides the variables.
#[derive(Clone, Debug)]
pub(super) struct World {
    pub kind: ConsumerKind,
    /// Barycentrics at the centre, centroid and sample location.
    pub weights: [[f32; VERTICES]; 3],
    /// Clip w of each vertex (perspective correction).
    pub clip_w: [f32; VERTICES],
    /// The vertex a flat input reads.
    pub provoking: usize,
    /// The GS emit each producer entry came from (`per-emit`).
    pub emit: [u32; ENTRIES],
    /// Seed of the leaves' values (uniforms, inputs, system values).
    pub leaf_seed: u64,
    /// Whether values are zeros and normal floats only (inexact rules).
    pub plain_only: bool,
}

/// One case: every variable's values and the world.
#[derive(Clone, Debug)]
pub(super) struct Case {
    pub vars: BTreeMap<Var, [Scalar; ENTRIES]>,
    pub modes: BTreeMap<Var, ModeInst>,
    pub world: World,
}

/// A rule direction prepared for checking at one bit-size assignment.
#[derive(Clone, Debug)]
pub(super) struct Model {
    /// Whether either side has an `xfer` (then the outside is the consumer).
    pub has_xfer: bool,
    sizes: BTreeMap<Var, BitSize>,
    shared: BTreeSet<Var>,
    producer_only: BTreeSet<Var>,
    modes: BTreeMap<Var, ModeFilter>,
    kinds: Vec<ConsumerKind>,
    plain_only: bool,
}

/// Where each variable occurs in a pattern, walking from the root with an explicit
/// stack (patterns are bounded by the reader's nesting limit, but no recursion is
/// needed). Also returns the mode variables and the concrete modes.
fn contexts(p: &Pattern<VNode>) -> (BTreeMap<Var, BTreeSet<Ctx>>, BTreeSet<Var>, Vec<XferMode>) {
    let nodes = p.ast.as_ref();
    let mut out: BTreeMap<Var, BTreeSet<Ctx>> = BTreeMap::new();
    let (mut mode_vars, mut modes) = (BTreeSet::new(), vec![]);
    let mut stack = vec![(nodes.len() - 1, Ctx::Outer, false)];
    while let Some((i, ctx, is_mode)) = stack.pop() {
        match &nodes[i] {
            ENodeOrVar::Var(v) if is_mode => {
                mode_vars.insert(*v);
            }
            ENodeOrVar::Var(v) => {
                out.entry(*v).or_default().insert(ctx);
            }
            ENodeOrVar::ENode(VNode::Xfer([m, v])) => {
                stack.push((usize::from(*m), ctx, true));
                stack.push((usize::from(*v), Ctx::Producer, false));
            }
            ENodeOrVar::ENode(n) => {
                if let VNode::Mode(m, _) = n {
                    modes.push(*m);
                }
                for c in n.children() {
                    stack.push((usize::from(*c), ctx, false));
                }
            }
        }
    }
    (out, mode_vars, modes)
}

/// Whether a pattern has an `xfer`.
fn has_xfer(p: &Pattern<VNode>) -> bool {
    p.ast
        .as_ref()
        .iter()
        .any(|n| matches!(n, ENodeOrVar::ENode(VNode::Xfer(_))))
}

impl Model {
    /// The model of `left => right` under `conds` at `sizes`; an error (a sentence)
    /// when the right side reads a producer-only value in the consumer or back.
    pub(super) fn new(
        left: &Pattern<VNode>,
        right: &Pattern<VNode>,
        conds: &[Cond],
        sizes: BTreeMap<Var, BitSize>,
        inexact: bool,
    ) -> Result<Model, String> {
        let (lctx, lmodes, lconcrete) = contexts(left);
        let (rctx, rmodes, _) = contexts(right);
        let both_stages = conds.iter().filter_map(|c| match c {
            Cond::Free(v) | Cond::Const(v) | Cond::Propagatable(v) => Some(*v),
            _ => None,
        });
        let convergent = conds.iter().filter_map(|c| match c {
            Cond::ConvergentP(v) | Cond::ConvergentC(v) | Cond::Promotable(v) => Some(*v),
            _ => None,
        });
        let free: BTreeSet<Var> = both_stages.collect();
        let mut shared: BTreeSet<Var> = free.iter().copied().chain(convergent).collect();
        let mut producer_only = BTreeSet::new();
        let xfer = has_xfer(left) || has_xfer(right);
        for (v, l) in &lctx {
            let r = rctx.get(v).cloned().unwrap_or_default();
            let all: BTreeSet<Ctx> = l.union(&r).copied().collect();
            if xfer && l.len() == 2 {
                // The left side matches it in both stages: only a value both
                // stages compute can be there.
                shared.insert(*v);
            } else if xfer && all.len() == 2 && !free.contains(v) {
                let (here, there) = if l.contains(&Ctx::Producer) {
                    ("the producer", "the consumer")
                } else {
                    ("the consumer", "the producer")
                };
                return Err(format!(
                    "{v} is a value of {here} on the left, but the right-hand side reads \
                     it in {there}; only values both stages compute (`(free {v})`) exist in both"
                ));
            }
            if all == BTreeSet::from([Ctx::Producer]) {
                producer_only.insert(*v);
            }
        }
        let modes = lmodes
            .union(&rmodes)
            .map(|m| (*m, mode_filter(conds, *m)))
            .collect();
        Ok(Model {
            has_xfer: xfer,
            sizes,
            shared,
            producer_only,
            modes,
            kinds: kinds_for(&lconcrete),
            plain_only: inexact,
        })
    }

    /// The consumer kinds the left side can match in.
    pub(super) fn kinds(&self) -> &[ConsumerKind] {
        &self.kinds
    }

    /// Case number `n` in consumer `kind`; `None` when a mode variable has no mode
    /// in that consumer.
    pub(super) fn case(&self, rng: &mut Rng, n: u32, kind: ConsumerKind) -> Option<Case> {
        let draw = if n < 16 { Draw::Simple } else { Draw::Any };
        let mut modes = BTreeMap::new();
        for (v, filter) in &self.modes {
            modes.insert(*v, random_mode(rng, kind, *filter)?);
        }
        let mut vars = BTreeMap::new();
        for (v, size) in &self.sizes {
            let mut one = || value(rng, *size, draw, self.plain_only);
            let vals = if self.shared.contains(v) {
                [one(); ENTRIES]
            } else {
                std::array::from_fn(|_| one())
            };
            vars.insert(*v, vals);
        }
        Some(Case {
            vars,
            modes,
            world: random_world(rng, kind, self.plain_only),
        })
    }

    /// `?a=1f32, ?m=flat, ?p=(v0 1f32, v1 2f32, v2 3f32)`: the variables of a case as
    /// the rule sees them.
    pub(super) fn describe(&self, case: &Case) -> String {
        let mut parts = vec![];
        for (v, m) in &case.modes {
            parts.push(format!("{v}={m}"));
        }
        for (v, vals) in &case.vars {
            let text = if self.shared.contains(v) || !self.has_xfer {
                show(vals[CONSUMER])
            } else if self.producer_only.contains(v) {
                let mut at: Vec<String> = (0..VERTICES)
                    .map(|k| format!("v{k} {}", show(vals[k])))
                    .collect();
                if case.world.kind == ConsumerKind::PerVertex {
                    at.push(format!("patch {}", show(vals[PATCH])));
                }
                format!("({})", at.join(", "))
            } else {
                show(vals[CONSUMER])
            };
            parts.push(format!("{v}={text}"));
        }
        if case.modes.values().any(|m| m.mode.is_interpolated()) {
            let w = &case.world.weights[0];
            parts.push(format!(
                "centre barycentrics ({}, {}, {})",
                w[0], w[1], w[2]
            ));
        }
        parts.join(", ")
    }
}

fn mode_filter(conds: &[Cond], m: Var) -> ModeFilter {
    for c in conds {
        match c {
            Cond::Interpolated(v) if *v == m => return ModeFilter::Interpolated,
            Cond::Uninterpolated(v) if *v == m => return ModeFilter::Uninterpolated,
            _ => {}
        }
    }
    ModeFilter::Any
}

/// The consumers whose modes include every concrete mode of the left side.
fn kinds_for(concrete: &[XferMode]) -> Vec<ConsumerKind> {
    [ConsumerKind::Fragment, ConsumerKind::PerVertex]
        .into_iter()
        .filter(|k| concrete.iter().all(|m| k.has(*m)))
        .collect()
}

const LOCS: [InterpLoc; 5] = [
    InterpLoc::Center,
    InterpLoc::Centroid,
    InterpLoc::Sample,
    InterpLoc::AtOffset,
    InterpLoc::AtSample,
];

fn random_mode(rng: &mut Rng, kind: ConsumerKind, filter: ModeFilter) -> Option<ModeInst> {
    let mut candidates: Vec<XferMode> = match kind {
        ConsumerKind::Fragment => {
            let mut all = vec![XferMode::Flat];
            for interp in [Interp::Persp, Interp::Linear] {
                all.extend(LOCS.map(|loc| XferMode::Interp(InterpMode { interp, loc })));
            }
            all
        }
        ConsumerKind::PerVertex => vec![XferMode::Vertex, XferMode::Patch],
    };
    candidates.retain(|m| match filter {
        ModeFilter::Any => true,
        ModeFilter::Interpolated => m.is_interpolated(),
        ModeFilter::Uninterpolated => !m.is_interpolated(),
    });
    if candidates.is_empty() {
        return None;
    }
    let mode = candidates[rng.below(candidates.len())];
    let ops = match mode {
        XferMode::Vertex => vec![Scalar::new(rng.below(VERTICES) as u32, BitSize::B32)],
        XferMode::Interp(InterpMode {
            loc: InterpLoc::AtOffset,
            ..
        }) => (0..2)
            .map(|_| Scalar::float(rng.float(-0.5, 0.5), BitSize::B32))
            .collect(),
        XferMode::Interp(InterpMode {
            loc: InterpLoc::AtSample,
            ..
        }) => vec![Scalar::new(rng.below(4) as u32, BitSize::B32)],
        _ => vec![],
    };
    Some(ModeInst { mode, ops })
}

/// Barycentrics strictly inside the triangle.
fn barycentrics(rng: &mut Rng) -> [f32; VERTICES] {
    let a = rng.float(0.05, 0.9);
    let b = rng.float(0.05, 0.95 - a);
    [a, b, 1.0 - a - b]
}

fn random_world(rng: &mut Rng, kind: ConsumerKind, plain_only: bool) -> World {
    World {
        kind,
        weights: [barycentrics(rng), barycentrics(rng), barycentrics(rng)],
        clip_w: std::array::from_fn(|_| rng.float(0.5, 2.0)),
        provoking: if rng.next() & 1 == 0 { 0 } else { VERTICES - 1 },
        emit: std::array::from_fn(|_| rng.below(3) as u32),
        leaf_seed: rng.next(),
        plain_only,
    }
}

/// The child ids of a node, as indices.
pub(super) fn child_indices(n: &VNode) -> Vec<usize> {
    n.children().iter().map(|c: &Id| usize::from(*c)).collect()
}
