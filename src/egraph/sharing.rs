//! Where forward motion can pay: the producer values that the computations of two
//! transferred values share, found once when saturation starts, and the gate that lets
//! a forward motion law (one whose left-hand side is a transfer of an expression,
//! `(xfer ?m (op ...))`, read as "the consumer recomputes it") fire only above them.
//!
//! Why nothing better is lost (docs/design.md, "The sharing gate"). Forward motion
//! replaces the transfer of a producer value `r` by transfers of operands below it
//! and consumer work on them. Take any final choice that crosses below `r`: a cut of
//! `r`'s cone, each member transferred or propagated (a free value within the
//! propagation limit, no varying; one above the limit stays transferred and counts
//! as a producer value like any other). Varyings: if no transferred member is shared
//! with the computation of another transferred value of the same kind, each is a
//! varying only `r`'s replacement pays for, of `r`'s kind or a dearer one (the
//! convergent-operand law adds a flat transfer next to the interpolated one); a cut
//! of propagated members only means `r` propagates itself. So the cut costs at least
//! one varying of `r`'s width, unless a member is a 16-bit value widened on the way.
//! ALU: each op moved runs at least once in the consumer instead of once in the
//! producer, and a propagated member costs the consumer what it saved the producer,
//! unless the consumer computes it (or part of it, or uses the same constant) anyway;
//! with a consumer weight at least the producer's ([`super::VAnalysis::forward_gate`])
//! the rest is no cheaper. A GS producer is left out: its work runs once per emit, and
//! moving it into the FS can be cheaper. So without a shared, narrowing or
//! consumer-computed operand somewhere below, forward motion can only tie; the gate
//! keeps it where one exists ([`VData::sharing_below`]). (A constant costs nothing,
//! but the transfer of it that forward motion creates, merged into the constant by
//! propagation, is what some backward laws need to read the consumer's own use of the
//! constant as a transferred operand; hence constants the consumer uses count.)
//!
//! The argument is about costs; the rules are not closed under it everywhere, and
//! the extraction is a search, so the gate is also checked by measurement: outputs
//! identical on every real and shipped pair, and on generated pairs a few better and
//! fewer worse (docs/performance.md, "Eighteenth 2026-11-29 session").
//!
//! What is shared is decided on the graph saturation starts from: a transferred class
//! is shared when it is a meeting point ([`super::meet`]) of the values transferred as
//! one kind of varying; a propagated class when the consumer computes it as written
//! (an operand of consumer work, a propagated output, an extraction root, or below
//! one). Classes the rules add later start unshared and inherit `sharing_below` from
//! their operands in `make`; merges take the union. Transfers the rules add are not
//! counted: forward motion adds one for every operand it crosses, which would make
//! every operand shared, and one that backward motion adds is a consumer expression
//! already in the graph, which forward motion would only find again.

use egg::{ENodeOrVar, Id, Language, PatternAst, Subst, Var};

use super::analysis::{VData, VGraph};
use super::lang::{VNode, XferMode};
use super::meet::{Adjacency, Meet};
use crate::ir::BitSize;

/// Whether the consumer gets the class without a varying: it is free and its
/// cheapest free expression is within the propagation limit. A free value above the
/// limit stays transferred, so for sharing it is a producer value like any other.
fn propagated(d: &VData, limit: Option<u32>) -> bool {
    d.is_free() && d.free_cost.is_some_and(|c| c <= limit.unwrap_or(u32::MAX))
}

/// Whether an operand with these facts can make forward motion through a node of
/// `parent` bits pay. A transferred operand: it is shared, something below it is, or
/// it is a 16-bit value feeding a wider one (a narrower varying). A propagated one:
/// the consumer computes it, or part of it, anyway (`shared` on a propagated class),
/// so moving the op can save the producer's copy of that work; or, for a constant,
/// the transfer of it that forward motion creates (and propagation merges into the
/// constant) is what lets a backward law read the consumer's own use of the
/// constant as a transferred operand (`flat-bcsel-flt`'s threshold).
fn pays(kid: Operand, parent: Option<BitSize>) -> bool {
    if kid.propagated {
        return kid.shared || kid.below;
    }
    kid.bits.is_some() && (kid.shared || kid.below || narrower(kid.bits, parent))
}

/// What [`pays`] reads of an operand.
#[derive(Clone, Copy)]
struct Operand {
    propagated: bool,
    bits: Option<BitSize>,
    shared: bool,
    below: bool,
}

/// [`pays`] on a class's own analysis data, under the propagation `limit`.
pub fn pays_below(kid: &VData, parent: Option<BitSize>, limit: Option<u32>) -> bool {
    pays(Operand::of(kid, limit, kid.sharing_below), parent)
}

/// [`pays_below`] without what lies below the operand: whether the operand itself is
/// shared, widened or computed by the consumer anyway (what the ALU bound counts as
/// costing nothing, [`super::recompute`]).
pub fn pays_itself(kid: &VData, parent: Option<BitSize>, limit: Option<u32>) -> bool {
    pays(Operand::of(kid, limit, false), parent)
}

impl Operand {
    /// What [`pays`] reads of a class's analysis data, with `below` for what lies
    /// under it.
    fn of(kid: &VData, limit: Option<u32>, below: bool) -> Operand {
        Operand {
            propagated: propagated(kid, limit),
            bits: kid.bits,
            shared: kid.shared,
            below,
        }
    }
}

/// Sets `shared` and `sharing_below` on every class of a lowered graph: on a
/// transferred class, whether two transferred values can share it; on a propagated
/// one, whether the consumer computes it as written.
pub fn seed(g: &mut VGraph) {
    let dense = Dense::of(g);
    let meeting = dense.meeting_points();
    let computed = dense.computed_by_consumer();
    let shared: Vec<bool> = (0..dense.ids.len())
        .map(|i| match dense.propagated[i] {
            true => computed[i],
            false => meeting[i],
        })
        .collect();
    let below = dense.sharing_below(&shared);
    for (i, id) in dense.ids.iter().enumerate() {
        if shared[i] || below[i] {
            let data = &mut g[*id].data;
            data.shared = shared[i];
            data.sharing_below = below[i];
        }
    }
}

/// The graph as the passes below read it, in dense arrays indexed by class in id
/// order, read once: every class lookup in egg is a hash-map lookup.
struct Dense {
    /// The canonical classes, ascending (lowering adds operands before their users,
    /// so this order is nearly bottom-up).
    ids: Vec<Id>,
    /// Whether the consumer gets the class without a varying ([`propagated`]).
    propagated: Vec<bool>,
    /// Only the consumer computes it.
    consumer_only: Vec<bool>,
    /// Producer-convergent.
    convergent: Vec<bool>,
    /// Bit size (`None`: a mode).
    bits: Vec<Option<BitSize>>,
    /// The operands of each class's nodes other than transfers and modes, sorted and
    /// without repeats.
    operands: Adjacency,
    /// The same without propagated operands: the cones sharing is decided in
    /// (a propagated value is a leaf there, costing no varying).
    transferred_operands: Adjacency,
    /// Each transfer: what kind of varying it is (its mode without the mode's
    /// operands: a per-vertex input read at two control points is one varying) and
    /// the transferred class.
    transfers: Vec<(XferMode, u32)>,
    /// The consumer's extraction roots.
    roots: Vec<u32>,
}

impl Dense {
    fn of(g: &VGraph) -> Dense {
        let limit = g.analysis.propagation_limit;
        let mut ids: Vec<Id> = g.classes().map(|c| c.id).collect();
        ids.sort_unstable();
        let n = ids.last().map_or(0, |id| usize::from(*id) + 1);
        let mut index = vec![u32::MAX; n];
        for (i, id) in ids.iter().enumerate() {
            index[usize::from(*id)] = i as u32;
        }
        let dense = |id: Id| index[usize::from(g.find(id))];
        let len = ids.len();
        let mut d = Dense {
            propagated: Vec::with_capacity(len),
            consumer_only: Vec::with_capacity(len),
            convergent: Vec::with_capacity(len),
            bits: Vec::with_capacity(len),
            operands: Adjacency::default(),
            transferred_operands: Adjacency::default(),
            transfers: vec![],
            roots: g
                .analysis
                .consumer_roots
                .iter()
                .map(|r| dense(*r))
                .collect(),
            ids: vec![],
        };
        // One buffer for every class's operands, drained into the adjacency.
        let mut ops = vec![];
        for &id in &ids {
            let class = &g[id];
            let data = &class.data;
            d.propagated.push(propagated(data, limit));
            d.consumer_only.push(data.in_consumer && !data.in_producer);
            d.convergent.push(data.convergent_p);
            d.bits.push(data.bits);
            for node in &class.nodes {
                match node {
                    VNode::Xfer([m, v]) => {
                        if let Some(kind) = varying_kind(g, *m) {
                            d.transfers.push((kind, dense(*v)));
                        }
                    }
                    VNode::Mode(..) => {}
                    _ => ops.extend(node.children().iter().map(|k| dense(*k))),
                }
            }
            d.operands.push_node(ops.drain(..));
        }
        d.transferred_operands = d.operands.without(|k| d.propagated[k as usize]);
        d.ids = ids;
        d
    }

    /// Per class, whether the consumer computes it as written: a propagated value a
    /// consumer-only class uses, a propagated value the consumer receives (it will
    /// compute it once propagation fires), a propagated extraction root, and every
    /// operand of one of those.
    fn computed_by_consumer(&self) -> Vec<bool> {
        let n = self.ids.len();
        let mut computed = vec![false; n];
        let mut work: Vec<u32> = self.transfers.iter().map(|t| t.1).collect();
        work.extend(self.roots.iter().copied());
        for i in 0..n as u32 {
            if self.consumer_only[i as usize] {
                work.extend(self.operands.of(i).iter().copied());
            }
        }
        while let Some(i) = work.pop() {
            let i_ = i as usize;
            if computed[i_] || !self.propagated[i_] {
                continue;
            }
            computed[i_] = true;
            work.extend(self.operands.of(i).iter().copied());
        }
        computed
    }

    /// Per class, whether two transferred values can share it: a meeting point
    /// ([`super::meet`]) of the values transferred in one mode. Values transferred in
    /// different modes never become one varying (an interpolated and a flat copy, one
    /// control point and another), so each mode is searched on its own, except that
    /// promotion can turn an interpolated transfer of a convergent value into a flat
    /// one: so convergent meeting points of the flat and interpolated transfers
    /// together count too. Below a class that dominates it within its mode, a class is
    /// never worth sharing: every use passes through the dominator, which is at most
    /// as many varyings (one per mode it is needed in; a cut below it needs at least
    /// one member per mode, as an all-convergent cut would make it convergent, hence
    /// promotable).
    fn meeting_points(&self) -> Vec<bool> {
        let mut roots: Vec<(XferMode, u32)> = self
            .transfers
            .iter()
            .filter(|t| !self.propagated[t.1 as usize])
            .copied()
            .collect();
        roots.sort_unstable();
        roots.dedup();
        let mut shared = vec![false; self.ids.len()];
        let mut meet = Meet::new(self.ids.len());
        let ops = |i: u32| self.transferred_operands.of(i);
        for same_kind in roots.chunk_by(|a, b| a.0 == b.0) {
            let nodes: Vec<u32> = same_kind.iter().map(|r| r.1).collect();
            meet.meeting_points(&nodes, ops, |i| shared[i as usize] = true);
        }
        let fs_like = |m: XferMode| m.is_interpolated() || m == XferMode::Flat;
        let fs_kinds: Vec<&(XferMode, u32)> = roots.iter().filter(|r| fs_like(r.0)).collect();
        if fs_kinds.windows(2).any(|w| w[0].0 != w[1].0) {
            let mut nodes: Vec<u32> = fs_kinds.iter().map(|r| r.1).collect();
            nodes.sort_unstable();
            nodes.dedup();
            meet.meeting_points(&nodes, ops, |i| {
                shared[i as usize] |= self.convergent[i as usize];
            });
        }
        shared
    }

    /// Per class, `sharing_below` given `shared`: the least fixed point, by passes in
    /// id order until none changes (one or two on a lowered graph).
    fn sharing_below(&self, shared: &[bool]) -> Vec<bool> {
        let n = self.ids.len();
        let mut below = vec![false; n];
        loop {
            let mut changed = false;
            for i in 0..n {
                if below[i] {
                    continue;
                }
                let pays_here = self.operands.of(i as u32).iter().any(|&k| {
                    let k = k as usize;
                    let kid = Operand {
                        propagated: self.propagated[k],
                        bits: self.bits[k],
                        shared: shared[k],
                        below: below[k],
                    };
                    pays(kid, self.bits[i])
                });
                if pays_here {
                    below[i] = true;
                    changed = true;
                }
            }
            if !changed {
                return below;
            }
        }
    }
}

/// A 16-bit (or wider) operand feeding a wider value.
fn narrower(kid: Option<BitSize>, parent: Option<BitSize>) -> bool {
    match (kid, parent) {
        (Some(k), Some(p)) => k != BitSize::B1 && k < p,
        _ => false,
    }
}

/// The kind of varying a transfer in mode class `mode` is: its mode without operands.
fn varying_kind(g: &VGraph, mode: Id) -> Option<XferMode> {
    g[mode].nodes.iter().find_map(|n| match n {
        VNode::Mode(m, _) => Some(*m),
        _ => None,
    })
}

/// The variables a forward motion law's condition reads: those under the transfer
/// its left-hand side is (`(xfer ?m (op ...))`), except the mode. `None` when the
/// left-hand side is not a transfer of an expression.
pub fn forward_vars(lhs: &PatternAst<VNode>) -> Option<Vec<Var>> {
    let nodes = lhs.as_ref();
    let ENodeOrVar::ENode(VNode::Xfer([mode, value])) = nodes.last()? else {
        return None;
    };
    if !matches!(nodes[usize::from(*value)], ENodeOrVar::ENode(_)) {
        return None;
    }
    let mode_var = match &nodes[usize::from(*mode)] {
        ENodeOrVar::Var(v) => Some(*v),
        ENodeOrVar::ENode(_) => None,
    };
    let mut vars: Vec<Var> = nodes
        .iter()
        .filter_map(|n| match n {
            ENodeOrVar::Var(v) if Some(*v) != mode_var => Some(*v),
            _ => None,
        })
        .collect();
    vars.dedup();
    Some(vars)
}

/// The gate on a forward motion law's match at `eclass` (the transfer): open unless
/// the run gates forward motion, else open when some operand `vars` bind can pay.
pub fn forward_may_pay(g: &VGraph, eclass: Id, vars: &[Var], subst: &Subst) -> bool {
    if !g.analysis.forward_gate {
        return true;
    }
    let (bits, limit) = (g[eclass].data.bits, g.analysis.propagation_limit);
    vars.iter().any(|v| {
        subst
            .get(*v)
            .is_some_and(|id| pays_below(&g[*id].data, bits, limit))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egraph::analysis::VAnalysis;
    use egg::RecExpr;

    fn gated() -> VGraph {
        VGraph::new(VAnalysis {
            forward_gate: true,
            ..Default::default()
        })
    }

    fn add(g: &mut VGraph, text: &str) -> Id {
        let e: RecExpr<VNode> = text.parse().unwrap();
        g.add_expr(&e)
    }

    #[test]
    fn a_value_under_two_transferred_values_is_shared_and_what_only_it_uses_is_not() {
        let mut g = gated();
        let x = add(&mut g, "(fmul in:ATTR0.x in:ATTR0.y)");
        let a = add(&mut g, "(fadd (fmul in:ATTR0.x in:ATTR0.y) uniform:0)");
        let b = add(&mut g, "(fadd (fmul in:ATTR0.x in:ATTR0.y) uniform:1)");
        let lone = add(&mut g, "(fsqrt in:ATTR1.x)");
        add(
            &mut g,
            "(xfer flat (fadd (fmul in:ATTR0.x in:ATTR0.y) uniform:0))",
        );
        add(
            &mut g,
            "(xfer flat (fadd (fmul in:ATTR0.x in:ATTR0.y) uniform:1))",
        );
        add(&mut g, "(xfer flat (fsqrt in:ATTR1.x))");
        g.rebuild();
        seed(&mut g);
        let attr = add(&mut g, "in:ATTR0.x");
        let u = add(&mut g, "uniform:0");
        assert!(g[x].data.shared);
        // Every use of ATTR0.x passes through the shared product: sending the product
        // once is never worse than sending its operands.
        assert!(!g[attr].data.shared);
        assert!(!g[a].data.shared && !g[b].data.shared && !g[lone].data.shared);
        assert!(!g[u].data.shared, "the consumer computes no uniform here");
        assert!(g[a].data.sharing_below && g[b].data.sharing_below);
        assert!(!g[x].data.sharing_below && !g[lone].data.sharing_below);
    }

    #[test]
    fn a_value_one_root_also_uses_directly_is_shared_below_the_meeting_point() {
        let mut g = gated();
        let x = add(&mut g, "in:ATTR0.x");
        let s = add(&mut g, "(fsqrt in:ATTR0.x)");
        add(&mut g, "(xfer flat (fmul in:ATTR0.x (fsqrt in:ATTR0.x)))");
        add(&mut g, "(xfer flat (fneg (fsqrt in:ATTR0.x)))");
        g.rebuild();
        seed(&mut g);
        assert!(g[s].data.shared && g[x].data.shared);
        assert!(g[s].data.sharing_below);
    }

    #[test]
    fn flat_and_interpolated_copies_share_only_convergent_values() {
        let mut g = gated();
        let varying = add(&mut g, "(fmul in:ATTR0.x in:ATTR0.y)");
        add(&mut g, "(xfer flat (fsqrt (fmul in:ATTR0.x in:ATTR0.y)))");
        add(
            &mut g,
            "(xfer persp.center (fneg (fmul in:ATTR0.x in:ATTR0.y)))",
        );
        let convergent = add(&mut g, "(i2f32 psv:instance_id)");
        add(&mut g, "(xfer flat (fsqrt (i2f32 psv:instance_id)))");
        add(
            &mut g,
            "(xfer persp.center (fmul in:ATTR1.x (i2f32 psv:instance_id)))",
        );
        g.rebuild();
        seed(&mut g);
        assert!(
            !g[varying].data.shared,
            "a flat and an interpolated copy differ"
        );
        assert!(g[convergent].data.shared, "promotion makes both flat");
    }

    #[test]
    fn a_transferred_value_inside_another_ones_computation_is_shared() {
        let mut g = gated();
        let x = add(&mut g, "(fmul in:ATTR0.x in:ATTR0.y)");
        let outer = add(&mut g, "(fsqrt (fmul in:ATTR0.x in:ATTR0.y))");
        add(&mut g, "(xfer flat (fmul in:ATTR0.x in:ATTR0.y))");
        add(&mut g, "(xfer flat (fsqrt (fmul in:ATTR0.x in:ATTR0.y)))");
        g.rebuild();
        seed(&mut g);
        assert!(g[x].data.shared);
        assert!(g[outer].data.sharing_below && !g[outer].data.shared);
    }

    #[test]
    fn the_same_value_read_at_three_vertices_is_not_shared() {
        let mut g = gated();
        let r = add(&mut g, "(fsqrt (fmul in:ATTR0.x in:ATTR0.y))");
        for k in 0..3 {
            add(
                &mut g,
                &format!("(xfer (vertex {k}i32) (fsqrt (fmul in:ATTR0.x in:ATTR0.y)))"),
            );
        }
        g.rebuild();
        seed(&mut g);
        assert!(!g[r].data.shared && !g[r].data.sharing_below);
    }

    #[test]
    fn two_control_points_of_one_per_vertex_input_are_one_varying() {
        let mut g = gated();
        let x = add(&mut g, "in:ATTR0.x");
        add(&mut g, "(xfer (vertex 0i32) (fsqrt in:ATTR0.x))");
        add(&mut g, "(xfer (vertex 2i32) in:ATTR0.x)");
        g.rebuild();
        seed(&mut g);
        assert!(
            g[x].data.shared,
            "the TCS reads ATTR0.x's varying at every control point"
        );
    }

    #[test]
    fn a_free_operand_pays_only_when_the_consumer_computes_it_anyway() {
        let mut g = VGraph::new(VAnalysis {
            forward_gate: true,
            propagation_limit: Some(12),
            ..Default::default()
        });
        let with_read = add(&mut g, "(fadd in:ATTR0.x (ubo:0 8i32))");
        let without = add(&mut g, "(fadd in:ATTR0.y (ubo:0 12i32))");
        let constant = add(&mut g, "(fadd in:ATTR0.z 2f32)");
        let other = add(&mut g, "(fadd in:ATTR0.w 3f32)");
        add(&mut g, "(xfer flat (fadd in:ATTR0.x (ubo:0 8i32)))");
        add(&mut g, "(xfer flat (fadd in:ATTR0.y (ubo:0 12i32)))");
        add(&mut g, "(xfer flat (fadd in:ATTR0.z 2f32))");
        add(&mut g, "(xfer flat (fadd in:ATTR0.w 3f32))");
        // The consumer receives ubo 8 (to be propagated) and adds 2 to something.
        add(&mut g, "(xfer patch (ubo:0 8i32))");
        add(&mut g, "(fmul (xfer flat in:ATTR1.x) 2f32)");
        g.rebuild();
        seed(&mut g);
        assert!(g[with_read].data.sharing_below);
        assert!(!g[without].data.sharing_below);
        assert!(g[constant].data.sharing_below, "the consumer uses 2.0 too");
        assert!(!g[other].data.sharing_below);
    }

    #[test]
    fn a_widened_half_pays_and_so_does_everything_above_it() {
        let mut g = gated();
        let wide = add(&mut g, "(fmul (f2f32 in:ATTR0.x.lo) uniform:0)");
        add(&mut g, "(xfer flat (fmul (f2f32 in:ATTR0.x.lo) uniform:0))");
        g.rebuild();
        seed(&mut g);
        assert!(g[wide].data.sharing_below);
        // A class the rules add later inherits it from its operands.
        let later = add(&mut g, "(fneg (fmul (f2f32 in:ATTR0.x.lo) uniform:0))");
        assert!(g[later].data.sharing_below);
    }

    /// The forward laws that fired saturating `terms` (each added as written) with
    /// the default rules, the gate on or off.
    fn forward_firings(terms: &[&str], gate: bool) -> usize {
        let mut g = VGraph::new(VAnalysis {
            forward_gate: gate,
            propagation_limit: Some(12),
            ..Default::default()
        });
        for t in terms {
            add(&mut g, t);
        }
        g.rebuild();
        let rules = crate::egraph::RuleSet::default_set();
        let compiled = rules.compiled().unwrap();
        let budgets = crate::egraph::Budgets::default();
        let (_, stats) = crate::egraph::saturate::saturate_compiled(
            g,
            &compiled.rewrites,
            &compiled.reach,
            &budgets,
        );
        let forward = |name: &String| name.ends_with(".rev") && name.starts_with("flat-");
        stats
            .applied
            .iter()
            .filter(|(n, _)| forward(n))
            .map(|(_, k)| k)
            .sum()
    }

    #[test]
    fn the_gate_stops_forward_motion_that_cannot_pay_and_keeps_the_rest() {
        // One flat output, a chain over one input: forward motion can only tie.
        let lone = ["(xfer flat (ffloor (fmul (fsqrt in:ATTR0.x) in:ATTR0.y)))"];
        assert!(forward_firings(&lone, false) > 0);
        assert_eq!(forward_firings(&lone, true), 0);
        // Two flat outputs over one product: sending the product once can pay.
        let shared = [
            "(xfer flat (ffloor (fmul in:ATTR0.x in:ATTR0.y)))",
            "(xfer flat (fsqrt (fmul in:ATTR0.x in:ATTR0.y)))",
        ];
        // Down to the product (`ffloor`, `fsqrt`), and not through it: the product
        // dominates its operands, so sending them instead can only cost more.
        assert_eq!(forward_firings(&shared, true), 2);
        assert_eq!(forward_firings(&shared, false), 3);
    }

    #[test]
    fn forward_vars_are_the_operands_under_a_transfer_of_an_expression() {
        let lhs: PatternAst<VNode> = "(xfer ?m (fmul ?a ?u))".parse().unwrap();
        let vars = forward_vars(&lhs).unwrap();
        let names: Vec<String> = vars.iter().map(|v| v.to_string()).collect();
        assert_eq!(names, ["?a", "?u"]);
        let plain: PatternAst<VNode> = "(xfer ?m ?u)".parse().unwrap();
        assert!(forward_vars(&plain).is_none(), "propagation is not motion");
        let backward: PatternAst<VNode> = "(fmul (xfer ?m ?a) ?u)".parse().unwrap();
        assert!(forward_vars(&backward).is_none());
    }
}
