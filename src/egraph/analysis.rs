//! The e-class analysis: constant value (folded with the interpreter's own `eval_alu`),
//! bit size, the contexts a class can be computed in, convergence per context and the
//! cheapest free-expression cost, and the ALU bound's recomputation cost
//! ([`super::recompute`]). Every fact is positive and only grows on merge (the two
//! costs only fall), so a condition that saw it true stays right as classes merge.

use egg::{Analysis, DidMerge, EGraph, Id, Language};
use smallvec::SmallVec;

use super::lang::{Side, VNode, XferMode};
use crate::ir::Reader;
use crate::ir::{eval_alu, AluOp, BitSize, OpaqueOp};

/// The e-graph type varysat saturates.
pub type VGraph = EGraph<VNode, VAnalysis>;

/// Pair-wide facts the analysis and the rule conditions need.
#[derive(Clone, Debug, Default)]
pub struct VAnalysis {
    /// Maximum free-expression cost that may move into the consumer (`None`: unlimited).
    pub propagation_limit: Option<u32>,
    /// The producer is a GS: interpolating its convergent values is not convergent.
    pub producer_is_gs: bool,
    /// Which stage may load each uniform and UBO: a load is computable only where its
    /// resource is visible, so it never propagates or moves into a stage that cannot
    /// read it.
    pub visibility: crate::ir::Visibility,
    /// The node budget of the saturation running on the graph (`saturate` sets it):
    /// once the graph holds this many nodes, every rule's condition refuses further
    /// matches, so one iteration cannot overshoot the budget many times over (egg
    /// checks its own limit only between iterations).
    pub node_cap: Option<usize>,
    /// Whether `node_cap` refused a match (saturation then stopped at the budget).
    pub capped: bool,
    /// The Mesa-cost of an opaque op on 64-bit values (`None`: [`OPAQUE_COST`], as
    /// any opaque op): the cost profile's `wide-op`, so that a uniform expression of
    /// 64-bit work reaches the propagation limit sooner.
    pub wide_opaque_cost: Option<u32>,
    /// Per op name, the Mesa-cost of an opaque op on 64-bit values that costs more
    /// than `wide_opaque_cost` (the cost profile's `(wide-op NAME N)`).
    pub wide_op_costs: std::collections::BTreeMap<String, u32>,
    /// Forward motion only where it can pay ([`super::sharing`]): set when the cost
    /// profile prices consumer work at least as high as producer work and the producer
    /// is not a GS, the two premises of that module's argument.
    pub forward_gate: bool,
    /// The consumer's extraction roots (lowering sets them): what the sharing gate
    /// counts as computed by the consumer whatever is transferred.
    pub consumer_roots: Vec<Id>,
    /// The ALU bound on forward motion ([`super::recompute`]): set with
    /// `forward_gate`, from the cost profile.
    pub forward_bound: Option<super::recompute::ForwardBound>,
}

impl VAnalysis {
    /// The Mesa-cost of one opaque op node.
    pub fn opaque_cost(&self, op: &OpaqueOp) -> u32 {
        match self.wide_opaque_cost {
            Some(c) if op.is_wide() => self.wide_op_costs.get(&op.name).copied().unwrap_or(c),
            _ => OPAQUE_COST,
        }
    }
}

/// What the analysis knows about one e-class.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VData {
    /// Constant bit pattern, when the class is a constant.
    pub konst: Option<u32>,
    /// Bit size (`None` for mode nodes).
    pub bits: Option<BitSize>,
    /// Computable in the producer.
    pub in_producer: bool,
    /// Computable in the consumer.
    pub in_consumer: bool,
    /// Same value for all vertices of a primitive in the producer.
    pub convergent_p: bool,
    /// Same value for all fragments/vertices of a primitive in the consumer.
    pub convergent_c: bool,
    /// Cheapest Mesa-cost of a free (both-stage) expression in the class.
    pub free_cost: Option<u32>,
    /// Some expression of the class has no GS `per-emit` node: it is one value, the
    /// same at every emit.
    pub single: bool,
    /// Set when saturation starts ([`super::sharing::seed`]; never by `make`): on a
    /// transferred class, two transferred values can share it; on a propagated one,
    /// the consumer computes it as written.
    pub shared: bool,
    /// Some operand below the class, at any depth, is `shared` or a 16-bit value
    /// feeding a wider one: the only places forward motion can pay
    /// ([`super::sharing`]).
    pub sharing_below: bool,
    /// The least consumer ALU work, net of the producer's, that recomputing the class
    /// in the consumer takes ([`super::recompute`]; `u32::MAX`: it cannot; 0 when the
    /// run has no ALU bound).
    pub recompute: u32,
}

impl VData {
    /// Whether both stages can compute the class (constants, uniforms, UBO loads and
    /// expressions over only those).
    pub fn is_free(&self) -> bool {
        self.in_producer && self.in_consumer
    }
}

/// The constant an ALU op over `kids` folds to, when its operands are constants of
/// known sizes (`sizes`) that `op` accepts; a select only needs its condition.
fn fold(op: AluOp, kids: &[&VData], sizes: Option<&[BitSize]>) -> Option<u32> {
    if op == AluOp::BCsel {
        let cond = kids.first()?.konst?;
        let pick = if cond & 1 == 1 {
            kids.get(1)
        } else {
            kids.get(2)
        };
        return pick?.konst;
    }
    let sizes = sizes?;
    op.result_bits(sizes).ok()?;
    let mut vals: SmallVec<[u32; 3]> = kids.iter().map(|k| k.konst).collect::<Option<_>>()?;
    crate::ir::unsign_zero_operands(op, &mut vals, sizes);
    Some(eval_alu(op, &vals, sizes))
}

fn leaf(bits: Option<BitSize>, p: bool, c: bool, konst: Option<u32>) -> VData {
    VData {
        konst,
        bits,
        in_producer: p,
        in_consumer: c,
        convergent_p: p && c,
        convergent_c: p && c,
        free_cost: (p && c).then_some(0),
        single: true,
        shared: false,
        sharing_below: false,
        recompute: 0,
    }
}

/// Whether forward motion through a node of `bits` over operands with analysis data
/// `kids` can pay ([`super::sharing::pays_below`]); `false` when the run does not gate
/// forward motion, as nothing reads it then.
fn sharing_below(a: &VAnalysis, bits: Option<BitSize>, kids: &[&VData]) -> bool {
    a.forward_gate
        && kids
            .iter()
            .any(|k| super::sharing::pays_below(k, bits, a.propagation_limit))
}

/// The analysis data of `children`, looked up once (each lookup finds the class).
fn kids_of<'g>(egraph: &'g VGraph, children: &[Id]) -> SmallVec<[&'g VData; 3]> {
    children.iter().map(|c| &egraph[*c].data).collect()
}

fn make_alu(a: &VAnalysis, op: AluOp, kids: &[&VData]) -> VData {
    let sizes: Option<SmallVec<[BitSize; 3]>> = kids.iter().map(|k| k.bits).collect();
    let bits = sizes.as_ref().and_then(|s| op.result_bits(s).ok());
    let free_cost = kids.iter().try_fold(op.default_cost(), |acc, k| {
        Some(acc.saturating_add(k.free_cost?))
    });
    VData {
        konst: fold(op, kids, sizes.as_deref()),
        bits,
        in_producer: kids.iter().all(|k| k.in_producer),
        in_consumer: kids.iter().all(|k| k.in_consumer),
        convergent_p: kids.iter().all(|k| k.convergent_p),
        convergent_c: kids.iter().all(|k| k.convergent_c),
        free_cost,
        single: kids.iter().all(|k| k.single),
        shared: false,
        sharing_below: sharing_below(a, bits, kids),
        recompute: 0,
    }
}

/// A pure opaque op: computable, convergent and free where all its operands are; no
/// constant folding (its meaning is not modelled).
fn make_opaque(a: &VAnalysis, op: &OpaqueOp, kids: &[&VData]) -> VData {
    let bits = op.result_bits();
    let free_cost = kids.iter().try_fold(a.opaque_cost(op), |acc, k| {
        k.free_cost.map(|c| acc.saturating_add(c))
    });
    VData {
        konst: None,
        bits,
        in_producer: kids.iter().all(|k| k.in_producer),
        in_consumer: kids.iter().all(|k| k.in_consumer),
        convergent_p: kids.iter().all(|k| k.convergent_p),
        convergent_c: kids.iter().all(|k| k.convergent_c),
        free_cost,
        single: kids.iter().all(|k| k.single),
        shared: false,
        sharing_below: sharing_below(a, bits, kids),
        recompute: 0,
    }
}

/// The instruction cost of an opaque operation (like a transcendental ALU op); one on
/// 64-bit values costs the profile's `wide-op` instead (`VAnalysis::opaque_cost`).
pub const OPAQUE_COST: u32 = 4;

fn make_xfer(egraph: &VGraph, mode: Id, value: Id) -> VData {
    let v = &egraph[value].data;
    let flat_like = egraph[mode]
        .nodes
        .iter()
        .any(|n| matches!(n, VNode::Mode(XferMode::Flat | XferMode::Patch, _)));
    // A GS value is producer-convergent only when it is the same at every emit (a
    // `per-emit` spine never is) and built from convergent values: one invocation
    // emits a whole primitive, so its vertices all carry that value. Promotion still
    // never applies to a GS (`promotable`), as in Mesa.
    let producer_convergent = v.convergent_p;
    VData {
        konst: None,
        bits: v.bits,
        in_producer: false,
        in_consumer: true,
        convergent_p: false,
        convergent_c: flat_like || producer_convergent,
        free_cost: None,
        single: true,
        shared: false,
        sharing_below: false,
        recompute: 0,
    }
}

/// Every fact but `recompute`, from the node and its operands' data.
fn make_facts(egraph: &VGraph, enode: &VNode, kids: &[&VData]) -> VData {
    match enode {
        VNode::Const { bits, value } => leaf(Some(*bits), true, true, Some(*value)),
        VNode::Undef(b) => leaf(Some(*b), true, true, None),
        VNode::Uniform(_, half) => {
            let vis = &egraph.analysis.visibility;
            let p = vis.uniforms_visible_to(Reader::Producer);
            let c = vis.uniforms_visible_to(Reader::Consumer);
            let mut d = leaf(Some(crate::ir::half_bits(*half)), p, c, None);
            // The same value everywhere, wherever it can be loaded.
            (d.convergent_p, d.convergent_c) = (p, c);
            d
        }
        VNode::Ubo {
            offset: _,
            block,
            half,
        } => {
            let vis = &egraph.analysis.visibility;
            let p = vis.ubo_visible_to(*block, Reader::Producer);
            let c = vis.ubo_visible_to(*block, Reader::Consumer);
            let o = kids[0];
            let (p, c) = (p && o.in_producer, c && o.in_consumer);
            let mut d = leaf(Some(crate::ir::half_bits(*half)), p, c, None);
            d.convergent_p = p && o.convergent_p;
            d.convergent_c = c && o.convergent_c;
            d.free_cost = o.free_cost.map(|c| c.saturating_add(1));
            d
        }
        VNode::Input(_) | VNode::VertexInput { .. } | VNode::Opaque { .. } => {
            let bits = match enode {
                VNode::Opaque { bits, .. } => *bits,
                VNode::Input(s) | VNode::VertexInput { slot: s, .. }
                    if s.half != crate::ir::Half::Full =>
                {
                    BitSize::B16
                }
                _ => BitSize::B32,
            };
            let mut d = leaf(Some(bits), true, false, None);
            // A TES reads a patch input once per patch: every vertex of the
            // primitives it produces sees the same value.
            // A TCS reading a fixed control point sees the same value in every
            // invocation of the patch.
            d.convergent_p = matches!(enode, VNode::Input(s) if s.slot.is_patch())
                || matches!(enode, VNode::VertexInput { .. });
            d
        }
        VNode::SysVal(side, sv) => {
            let p = *side == Side::Producer;
            let mut d = leaf(Some(sv.bits()), p, !p, None);
            d.convergent_p = p && sv.is_convergent();
            d.convergent_c = !p && sv.is_convergent();
            d
        }
        VNode::PerEmit(_) => {
            let bits = kids[1].bits.or(kids[2].bits);
            VData {
                single: false,
                sharing_below: sharing_below(&egraph.analysis, bits, &kids[1..]),
                ..leaf(bits, true, false, None)
            }
        }
        VNode::Mode(..) => leaf(None, false, true, None),
        VNode::Xfer([m, v]) => make_xfer(egraph, *m, *v),
        VNode::Alu { op, .. } => make_alu(&egraph.analysis, *op, kids),
        VNode::Op { op, .. } => make_opaque(&egraph.analysis, op, kids),
    }
}

impl Analysis<VNode> for VAnalysis {
    type Data = VData;

    fn make(egraph: &mut VGraph, enode: &VNode, _id: Id) -> VData {
        let kids = kids_of(egraph, enode.children());
        let mut data = make_facts(egraph, enode, &kids);
        data.recompute = super::recompute::of_node(&egraph.analysis, enode, &kids, data.bits);
        data
    }

    fn merge(&mut self, a: &mut VData, b: VData) -> DidMerge {
        let old_a = a.clone();
        let konst = a.konst.or(b.konst);
        let bits = a.bits.or(b.bits);
        let free_cost = match (a.free_cost, b.free_cost) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        let merged = VData {
            konst,
            bits,
            in_producer: a.in_producer || b.in_producer,
            in_consumer: a.in_consumer || b.in_consumer,
            convergent_p: a.convergent_p || b.convergent_p,
            convergent_c: a.convergent_c || b.convergent_c,
            free_cost,
            single: a.single || b.single,
            shared: a.shared || b.shared,
            sharing_below: a.sharing_below || b.sharing_below,
            recompute: a.recompute.min(b.recompute),
        };
        let changed_b = merged != b;
        *a = merged;
        DidMerge(*a != old_a, changed_b)
    }

    fn modify(egraph: &mut VGraph, id: Id) {
        let data = &egraph[id].data;
        let (Some(value), Some(bits)) = (data.konst, data.bits) else {
            return;
        };
        let c = egraph.add(VNode::Const { bits, value });
        egraph.union(id, c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use egg::RecExpr;

    fn class_of(g: &mut VGraph, text: &str) -> Id {
        let e: RecExpr<VNode> = text.parse().unwrap();
        let id = g.add_expr(&e);
        g.rebuild();
        id
    }

    #[test]
    fn folds_bit_exactly_like_the_interpreter() {
        let mut g = VGraph::default();
        let id = class_of(&mut g, "(fadd 1.5f32 (fmul 2f32 0.25f32))");
        assert_eq!(g[id].data.konst, Some(2.0f32.to_bits()));
        let half = class_of(&mut g, "(fadd 1f16 1f16)");
        assert_eq!(g[half].data.konst, Some(0x4000));
        let sel = class_of(&mut g, "(bcsel false in:ATTR0.x 3f32)");
        assert_eq!(g[sel].data.konst, Some(3.0f32.to_bits()));
        let idiv = class_of(&mut g, "(idiv 7i32 0i32)");
        assert_eq!(g[idiv].data.konst, Some(0));
    }

    #[test]
    fn contexts_and_convergence() {
        let mut g = VGraph::default();
        let free = class_of(&mut g, "(fmul uniform:0 (ubo:1 4i32))");
        assert!(g[free].data.is_free());
        assert_eq!(g[free].data.free_cost, Some(2));
        let p = class_of(&mut g, "(fadd in:ATTR0.x uniform:0)");
        assert!(g[p].data.in_producer && !g[p].data.in_consumer);
        let x = class_of(&mut g, "(xfer flat in:ATTR0.x)");
        assert!(g[x].data.in_consumer && !g[x].data.in_producer);
        assert!(g[x].data.convergent_c);
        let i = class_of(&mut g, "(xfer persp.center in:ATTR0.x)");
        assert!(!g[i].data.convergent_c);
        let ic = class_of(&mut g, "(xfer persp.center psv:instance_id)");
        assert!(g[ic].data.convergent_c);
    }

    #[test]
    fn patch_inputs_are_producer_convergent_and_per_emit_values_are_not_single() {
        let mut g = VGraph::default();
        let patch = class_of(&mut g, "(fmul in:PATCH0.x uniform:0)");
        assert!(g[patch].data.convergent_p);
        let attr = class_of(&mut g, "(fmul in:ATTR0.x uniform:0)");
        assert!(!g[attr].data.convergent_p);
        let per_emit = class_of(&mut g, "(fadd (per-emit 0i32 in:ATTR0.x in:ATTR0.y) 1f32)");
        assert!(!g[per_emit].data.single);
        assert!(g[attr].data.single);
        // A per-emit class shown equal to a single value becomes single.
        g.union(per_emit, attr);
        g.rebuild();
        assert!(g[per_emit].data.single);
    }

    #[test]
    fn a_gs_output_is_convergent_only_when_every_emit_stores_the_same_convergent_value() {
        let mut g = VGraph::new(VAnalysis {
            propagation_limit: Some(12),
            producer_is_gs: true,
            visibility: Default::default(),
            ..Default::default()
        });
        let same = class_of(&mut g, "(xfer persp.center (i2f32 psv:primitive_id))");
        assert!(g[same].data.convergent_c);
        let per_emit = class_of(
            &mut g,
            "(xfer persp.center (per-emit 0i32 (i2f32 psv:primitive_id) uniform:0))",
        );
        assert!(!g[per_emit].data.convergent_c);
        let attr = class_of(&mut g, "(xfer persp.center opaque:3:32)");
        assert!(!g[attr].data.convergent_c);
    }

    #[test]
    fn merge_reports_truthfully() {
        let mut an = VAnalysis::default();
        let mut a = leaf(Some(BitSize::B32), true, false, None);
        let b = leaf(Some(BitSize::B32), true, false, None);
        let pair = |d: DidMerge| (d.0, d.1);
        assert_eq!(pair(an.merge(&mut a, b.clone())), (false, false));
        let free = leaf(Some(BitSize::B32), true, true, None);
        let mut a2 = b.clone();
        let r = an.merge(&mut a2, free.clone());
        assert_eq!(pair(r), (true, false));
        let mut a3 = free;
        assert_eq!(pair(an.merge(&mut a3, b)), (false, true));
    }
}
