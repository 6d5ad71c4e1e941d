//! The ALU bound on forward motion: what recomputing a producer value in the consumer
//! costs at least, against what dropping one varying can save at most. The sharing
//! gate ([`super::sharing`]) asks whether a forward move can pay at all; this bound
//! asks whether it can pay for its own ALU work. A move whose recomputation costs at
//! least what one varying is worth is refused.
//!
//! Why nothing better is lost, on costs (docs/design.md, "The ALU bound on forward
//! motion"). Forward motion at
//! `(xfer m (op a b))` replaces one varying, the transfer of `r = (op a b)`, by consumer
//! work on `a` and `b`. Dropping that varying saves at most [`ForwardBound::budget`]:
//! in an FS, one component at the dearer of the interpolated and flat prices, one vec4
//! slot and one barycentric set; elsewhere, one slot at every input vertex (or one
//! patch component). What the move costs at least, in consumer ALU net of the producer
//! work it may save (the consumer weight less the producer weight, per op): the op
//! itself, plus, for each operand, nothing when the operand is one the sharing gate
//! counts as paying (shared with another transferred value, a 16-bit value widened,
//! or one the consumer computes anyway), else the cheaper of recomputing it in the
//! consumer in turn ([`VData::recompute`]) and transferring it as a varying of its
//! own (a flat FS component if it is producer-convergent, else an interpolated one).
//! Work shared by two transferred values lies at or below a meeting point, which
//! counts as nothing, so the costs of different moves never overlap, and a move is
//! needed for every varying dropped: a set of moves that each cost at least their
//! varying's worth cannot lower the total. Not covered: a forward move as a step
//! towards a larger backward move, whose consumer work goes back to the producer (one
//! generated pair in 12,000 is dearer for it; outputs of every real pair unchanged).
//!
//! `recompute` is an e-class analysis fact: the cheapest node of the class, as above,
//! `u32::MAX` for what the consumer cannot compute (producer inputs, transfers). It
//! only falls as classes merge or operands become paying, like `free_cost`. Seeded
//! once the sharing flags are known ([`seed`]), kept by `make` and `merge` after.

use egg::{ENodeOrVar, Id, Language, PatternAst, Subst, Var};

use super::analysis::{VAnalysis, VData, VGraph};
use super::lang::VNode;
use super::sharing::pays_itself;
use crate::ir::BitSize;
use smallvec::SmallVec;

/// The prices the bound reads, from the cost profile (`optimize::lowering` sets them
/// when the sharing gate is on).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ForwardBound {
    /// Per unit of op cost, the consumer weight less the producer weight.
    pub op_weight: u32,
    /// The most dropping one varying can save.
    pub budget: u32,
    /// What a new varying of a producer-convergent value costs at least (0 when the
    /// consumer is no FS: other stages pay per slot, not per component).
    pub convergent_price: u32,
    /// What a new varying of any other value costs at least.
    pub varying_price: u32,
}

impl ForwardBound {
    /// Whether the bound can refuse any move: not when consumer work costs nothing
    /// net and new varyings are free (a TCS or TES consumer under the shipped
    /// profiles), where every move's bound is 0; the run then keeps no costs at all.
    pub fn can_refuse(&self) -> bool {
        self.budget == 0
            || self.op_weight > 0
            || self.convergent_price > 0
            || self.varying_price > 0
    }
}

/// What forward motion cannot recompute in the consumer.
pub const UNREACHABLE: u32 = u32::MAX;

/// A node's own op cost, in the model's units at weight 1 (`extract::alu_cost`).
fn op_cost(a: &VAnalysis, node: &VNode) -> Option<u32> {
    match node {
        VNode::Const { .. } | VNode::Undef(_) | VNode::Uniform(..) => Some(0),
        VNode::SysVal(side, _) => (*side == super::lang::Side::Consumer).then_some(0),
        VNode::Ubo { .. } => Some(1),
        VNode::Alu { op, .. } => Some(op.default_cost()),
        VNode::Op { op, .. } => Some(a.opaque_cost(op)),
        _ => None,
    }
}

/// What an operand with analysis data `kid` adds to the recomputation of a node of
/// `parent` bits.
fn contribution(a: &VAnalysis, b: &ForwardBound, kid: &VData, parent: Option<BitSize>) -> u32 {
    if pays_itself(kid, parent, a.propagation_limit) {
        return 0;
    }
    let price = match kid.convergent_p {
        true => b.convergent_price,
        false => b.varying_price,
    };
    kid.recompute.min(price)
}

/// The recomputation cost of `node` over operands with data `kids` (`0` when the run
/// has no bound: nothing reads it then).
pub fn of_node(a: &VAnalysis, node: &VNode, kids: &[&VData], bits: Option<BitSize>) -> u32 {
    let Some(b) = &a.forward_bound else {
        return 0;
    };
    let Some(own) = op_cost(a, node) else {
        return UNREACHABLE;
    };
    cost(a, b, own, kids.iter().map(|k| Some(*k)), bits)
}

/// An op of cost `own` over operands with data `kids` (`None`: a nested pattern,
/// counted as nothing), feeding a value of `bits`.
fn cost<'d>(
    a: &VAnalysis,
    b: &ForwardBound,
    own: u32,
    kids: impl Iterator<Item = Option<&'d VData>>,
    bits: Option<BitSize>,
) -> u32 {
    kids.fold(own.saturating_mul(b.op_weight), |acc, k| {
        acc.saturating_add(k.map_or(0, |k| contribution(a, b, k, bits)))
    })
}

/// Recomputes `recompute` on every class once the sharing flags are set: the flags
/// lower operands' contributions, and `make` ran before they existed. Costs only fall,
/// so repeated passes in id order (nearly bottom-up) reach the fixed point.
pub fn seed(g: &mut VGraph) {
    if g.analysis.forward_bound.is_none() {
        return;
    }
    let ids: Vec<Id> = g.classes().map(|c| c.id).collect();
    loop {
        let mut changed = false;
        for id in &ids {
            let best = g[*id]
                .nodes
                .iter()
                .map(|n| {
                    let kids: SmallVec<[&VData; 3]> =
                        n.children().iter().map(|c| &g[*c].data).collect();
                    of_node(&g.analysis, n, &kids, g[*id].data.bits)
                })
                .min()
                .unwrap_or(UNREACHABLE);
            if best < g[*id].data.recompute {
                g[*id].data.recompute = best;
                changed = true;
            }
        }
        if !changed {
            return;
        }
    }
}

/// The transferred expression of a forward motion law's left-hand side: its operator
/// node and, per operand, the variable bound there (`None` for a nested pattern,
/// which the bound then counts as nothing).
#[derive(Clone, Debug)]
pub struct Moved {
    node: VNode,
    operands: Vec<Option<Var>>,
}

impl Moved {
    /// The expression under the transfer `lhs` is (`(xfer ?m (op ...))`), if it is one.
    pub fn of(lhs: &PatternAst<VNode>) -> Option<Moved> {
        let nodes = lhs.as_ref();
        let ENodeOrVar::ENode(VNode::Xfer([_, value])) = nodes.last()? else {
            return None;
        };
        let ENodeOrVar::ENode(node) = &nodes[usize::from(*value)] else {
            return None;
        };
        let operands = node
            .children()
            .iter()
            .map(|c| match &nodes[usize::from(*c)] {
                ENodeOrVar::Var(v) => Some(*v),
                ENodeOrVar::ENode(_) => None,
            })
            .collect();
        Some(Moved {
            node: node.clone(),
            operands,
        })
    }

    /// Whether the move matched at the transfer `eclass` under `subst` costs less than
    /// one varying is worth (always, when the run has no bound).
    pub fn may_pay(&self, g: &VGraph, eclass: Id, subst: &Subst) -> bool {
        let Some(b) = &g.analysis.forward_bound else {
            return true;
        };
        let bits = g[eclass].data.bits;
        let Some(own) = op_cost(&g.analysis, &self.node) else {
            return true;
        };
        let kids = self
            .operands
            .iter()
            .map(|v| v.and_then(|v| subst.get(v)).map(|id| &g[*id].data));
        cost(&g.analysis, b, own, kids, bits) < b.budget
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::AluOp;
    use egg::{Pattern, RecExpr};

    /// FS-like prices: consumer weight 4 against producer weight 1, a varying worth at
    /// most 14, a new one costing 4 (convergent) or 8.
    const FS: ForwardBound = ForwardBound {
        op_weight: 3,
        budget: 14,
        convergent_price: 4,
        varying_price: 8,
    };

    fn bounded() -> VGraph {
        VGraph::new(VAnalysis {
            forward_gate: true,
            forward_bound: Some(FS),
            propagation_limit: Some(12),
            ..Default::default()
        })
    }

    fn add(g: &mut VGraph, text: &str) -> Id {
        let e: RecExpr<VNode> = text.parse().unwrap();
        g.add_expr(&e)
    }

    /// Seeds the sharing flags and the costs, as saturation does when it starts.
    fn seeded(g: &mut VGraph) {
        g.rebuild();
        super::super::sharing::seed(g);
        seed(g);
    }

    /// Whether the forward law `(xfer ?m (OP ?a ?b))` may fire at `at` with `a`, `b`.
    fn may_pay(g: &VGraph, op: &str, at: Id, a: Id, b: Id) -> bool {
        let lhs: Pattern<VNode> = format!("(xfer ?m ({op} ?a ?b))").parse().unwrap();
        let moved = Moved::of(&lhs.ast).unwrap();
        let mut s = Subst::default();
        s.insert("?a".parse().unwrap(), a);
        s.insert("?b".parse().unwrap(), b);
        moved.may_pay(g, at, &s)
    }

    #[test]
    fn one_op_over_a_shared_value_is_worth_moving() {
        assert_eq!(AluOp::FAdd.default_cost(), 1);
        let mut g = bounded();
        let x = add(&mut g, "(fmul in:ATTR0.x in:ATTR0.y)");
        let u = add(&mut g, "uniform:0");
        let t = add(
            &mut g,
            "(xfer persp.center (fadd (fmul in:ATTR0.x in:ATTR0.y) uniform:0))",
        );
        add(
            &mut g,
            "(xfer persp.center (fsqrt (fmul in:ATTR0.x in:ATTR0.y)))",
        );
        seeded(&mut g);
        let sum = add(&mut g, "(fadd (fmul in:ATTR0.x in:ATTR0.y) uniform:0)");
        assert!(g[x].data.shared);
        // The add at weight 3; the shared product and the uniform cost nothing.
        assert_eq!(g[sum].data.recompute, 3);
        assert!(may_pay(&g, "fadd", t, x, u));
    }

    #[test]
    fn a_dot_product_over_a_shared_position_costs_more_than_its_varying() {
        assert_eq!(AluOp::FMul.default_cost(), 1);
        let mut g = bounded();
        let dot = |u: [u32; 3]| {
            format!(
                "(fadd (fadd (fmul in:ATTR0.x (ubo:0 {}i32)) (fmul in:ATTR0.y (ubo:0 {}i32))) \
                 (fmul in:ATTR0.z (ubo:0 {}i32)))",
                u[0], u[1], u[2]
            )
        };
        let t = add(&mut g, &format!("(xfer persp.center {})", dot([0, 4, 8])));
        add(
            &mut g,
            &format!("(xfer persp.center {})", dot([12, 16, 20])),
        );
        seeded(&mut g);
        let attr = add(&mut g, "in:ATTR0.x");
        let first = add(
            &mut g,
            "(fadd (fmul in:ATTR0.x (ubo:0 0i32)) (fmul in:ATTR0.y (ubo:0 4i32)))",
        );
        let last = add(&mut g, "(fmul in:ATTR0.z (ubo:0 8i32))");
        assert!(g[attr].data.shared, "both dot products read the position");
        // A product: the multiply (3) and the UBO load the consumer would redo (3).
        assert_eq!(g[last].data.recompute, 6);
        // The partial sum: its add and two products, 15, more than a varying of its
        // own (8), so it counts 8; with the last product (6) and the add (3), 17.
        assert_eq!(g[first].data.recompute, 15);
        assert!(
            super::super::sharing::forward_may_pay(&g, t, &["?a".parse().unwrap()], &{
                let mut s = Subst::default();
                s.insert("?a".parse().unwrap(), first);
                s
            }),
            "the sharing gate lets it through: the position is shared below"
        );
        assert!(!may_pay(&g, "fadd", t, first, last), "17 is not below 14");
    }

    #[test]
    fn a_convergent_operand_counts_a_flat_varying() {
        let mut g = bounded();
        let x = add(&mut g, "(fmul in:ATTR0.x in:ATTR0.y)");
        let c = add(&mut g, "(fsqrt (i2f32 psv:instance_id))");
        let t = add(
            &mut g,
            "(xfer persp.center (fmul (fmul in:ATTR0.x in:ATTR0.y) (fsqrt (i2f32 psv:instance_id))))",
        );
        add(
            &mut g,
            "(xfer persp.center (fneg (fmul in:ATTR0.x in:ATTR0.y)))",
        );
        seeded(&mut g);
        assert!(g[c].data.convergent_p && !g[c].data.shared);
        let id = add(&mut g, "psv:instance_id");
        assert_eq!(
            g[id].data.recompute, UNREACHABLE,
            "an instance id is the producer's"
        );
        // The conversion (3) over a flat varying of the id (4); the square root (12)
        // over the cheaper of that (7) and a flat varying of the conversion (4).
        assert_eq!(g[c].data.recompute, 12 + 4);
        // The multiply (3) and a flat varying for the convergent operand (4): 7 < 14.
        assert!(may_pay(&g, "fmul", t, x, c));
    }

    #[test]
    fn merging_keeps_the_cheaper_recomputation_and_no_bound_means_no_cost() {
        let mut g = bounded();
        let slow = add(&mut g, "(fsqrt (fsqrt uniform:0))");
        let fast = add(&mut g, "(fneg uniform:0)");
        g.rebuild();
        // The outer root (12) over the cheaper of the inner one (12, the uniform
        // costing nothing) and a flat varying of it (4).
        assert_eq!(g[slow].data.recompute, 12 + 4);
        assert_eq!(g[fast].data.recompute, 0);
        g.union(slow, fast);
        g.rebuild();
        assert_eq!(g[slow].data.recompute, 0);
        let mut plain = VGraph::default();
        let s = add(&mut plain, "(fsqrt in:ATTR0.x)");
        assert_eq!(plain[s].data.recompute, 0);
        let at = add(&mut plain, "(xfer flat (fsqrt in:ATTR0.x))");
        let attr = add(&mut plain, "in:ATTR0.x");
        let lhs: Pattern<VNode> = "(xfer ?m (fsqrt ?a))".parse().unwrap();
        let mut subst = Subst::default();
        subst.insert("?a".parse().unwrap(), attr);
        assert!(Moved::of(&lhs.ast).unwrap().may_pay(&plain, at, &subst));
    }
}
