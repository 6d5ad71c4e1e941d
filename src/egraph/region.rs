//! The region rule: after lowering, the e-graph keeps only the terms the extraction
//! can reach — the consumer's roots and input loads, through their `xfer` nodes into
//! the producer cones of the outputs the consumer reads. Everything else lowering
//! built (the cone of an output only fixed function reads, such as a VS's POS before
//! an FS; unread and pinned outputs; producer values no read output uses; dead
//! consumer values) is dropped before saturation, so no rule runs on it — when it is a
//! quarter of the graph or more ([`COMPACT_WHEN_DROPPED_ONE_IN`]); a smaller unreached
//! remainder stays, since rebuilding the graph would cost more than the rule searches
//! it saves, and extraction never reads it.
//!
//! Why no better varying choice lies outside (docs/design.md, "The region rule"): the
//! rewrite laws relate terms, not graphs. A rewrite step builds its right-hand side
//! from the classes its left-hand side matched, so every term an e-class of the
//! reachable part can come to hold is reached from that part's own terms by rewrite
//! steps; an unreachable term adds no equality among reachable ones, and the analysis
//! facts rule conditions test (free, convergent, constant, cost) are computed from a
//! class's own nodes. Saturated, the reachable classes hold the same terms with or
//! without the dropped ones; under a budget the smaller graph gets further.

use std::collections::BTreeMap;

use egg::{Id, Language};

use super::analysis::VGraph;
use super::lang::VNode;

/// The classes reachable from `starts` through every node of every class, indexed by
/// canonical class id.
fn reachable(g: &VGraph, starts: impl IntoIterator<Item = Id>) -> Vec<bool> {
    let n = g
        .classes()
        .map(|c| usize::from(c.id) + 1)
        .max()
        .unwrap_or(0);
    let mut seen = vec![false; n];
    let mut stack: Vec<Id> = starts.into_iter().map(|s| g.find(s)).collect();
    while let Some(c) = stack.pop() {
        let i = usize::from(c);
        if seen[i] {
            continue;
        }
        seen[i] = true;
        for node in &g[c].nodes {
            stack.extend(node.children().iter().map(|k| g.find(*k)));
        }
    }
    seen
}

/// The reachable part of a lowered graph, rebuilt from the nodes lowering added.
pub struct Compacted {
    /// The new graph (rebuilt, analysis recomputed from the same nodes).
    pub egraph: VGraph,
    /// The nodes lowering added that survive, with their new classes, in lowering order.
    pub original: Vec<(VNode, Id)>,
    /// Old canonical class id → new class id, for the surviving classes.
    map: BTreeMap<Id, Id>,
}

impl Compacted {
    /// The new class of the old class `old` (canonical or not), when it survived.
    pub fn class(&self, old: &VGraph, id: Id) -> Option<Id> {
        self.map.get(&old.find(id)).copied()
    }
}

/// Compaction pays only when at least one class in this many lies outside the region.
/// Rebuilding re-adds every kept node, as long again as lowering it, while rule
/// searches over a few unreached classes cost less than that: over every fourth real
/// pair (79), compacting at a quarter or more costs 1.1 % fewer `optimize`
/// instructions than compacting whenever a class is unreached (10 % fewer on
/// `tp-31525`, which drops 2 of 80 classes), and never compacting 34 % more
/// (docs/performance.md, "Nineteenth 2026-11-29 session").
pub const COMPACT_WHEN_DROPPED_ONE_IN: usize = 4;

/// Rebuilds `g` keeping only what `starts` reach. `original` lists every node lowering
/// added, children first, so each kept node's children are already in the new graph;
/// nodes the analysis added (folded constants) come back through the same analysis.
/// `None` when fewer than one class in [`COMPACT_WHEN_DROPPED_ONE_IN`] is unreached
/// (rebuilding would nearly copy the graph; on small pairs a full copy was a fifth of
/// lowering) or a kept node's child was never added by lowering: then the caller keeps
/// the whole graph.
pub fn compact(
    g: &VGraph,
    original: &[(VNode, Id)],
    starts: impl IntoIterator<Item = Id>,
) -> Option<Compacted> {
    let keep = reachable(g, starts);
    let kept = g
        .classes()
        .filter(|c| keep.get(usize::from(c.id)) == Some(&true))
        .count();
    let dropped = g.number_of_classes() - kept;
    if dropped * COMPACT_WHEN_DROPPED_ONE_IN <= g.number_of_classes() {
        return None;
    }
    let mut out = VGraph::new(g.analysis.clone());
    let mut map: BTreeMap<Id, Id> = BTreeMap::new();
    let mut kept = Vec::new();
    for (node, id) in original {
        let old = g.find(*id);
        if !keep.get(usize::from(old)).copied().unwrap_or(false) {
            continue;
        }
        let mut children = Vec::with_capacity(node.children().len());
        for c in node.children() {
            children.push(*map.get(&g.find(*c))?);
        }
        let mut next = children.into_iter();
        let mapped = node
            .clone()
            .map_children(|_| next.next().unwrap_or(Id::from(0)));
        let new = out.add(mapped.clone());
        let new = match map.get(&old) {
            Some(&prev) if prev != new => {
                out.union(prev, new);
                prev
            }
            _ => new,
        };
        map.insert(old, new);
        kept.push((mapped, new));
    }
    out.rebuild();
    let map = map.into_iter().map(|(o, n)| (o, out.find(n))).collect();
    Some(Compacted {
        egraph: out,
        original: kept,
        map,
    })
}

#[cfg(test)]
mod tests {
    use crate::egraph::analysis::VAnalysis;
    use crate::egraph::lower::lower;
    use crate::egraph::VNode;
    use crate::interpreter::{check_equivalent, EquivConfig};
    use crate::ir::{InstKind, IoSlot, Slot, Stmt};

    /// A VS whose POS takes eight ops over ATTR0 and whose only varying is ATTR1.x; an
    /// FS that reads it, adds 1 and also computes a dead product.
    const PAIR: &str = "(pair
  (producer vs
    (%p = load_input ATTR0.x)
    (%q1 = fmul %p %p)
    (%q2 = fadd %q1 %p)
    (%q3 = fmul %q2 %q1)
    (%q4 = fsub %q3 %q2)
    (%q5 = fmul %q4 %q4)
    (%q6 = fadd %q5 %q3)
    (%q7 = fmul %q6 %q5)
    (%q8 = fadd %q7 %q6)
    (store_output POS.x %q8)
    (%a = load_input ATTR1.x)
    (store_output VAR0.x %a))
  (consumer fs
    (%x = load_interpolated_input VAR0.x persp center)
    (%dead = fmul %x %x)
    (%one = const 32 1.0)
    (%r = fadd %x %one)
    (store_output DATA0.x %r)))";

    #[test]
    fn only_what_the_roots_reach_is_lowered() {
        let pair = crate::text::parse(PAIR, Some("region.pair")).unwrap();
        let lowered = lower(&pair, VAnalysis::default(), false);
        let g = &lowered.egraph;
        // What the root `%r` reaches: the FS `fadd` and its constant, the `xfer`, its
        // interpolation mode and the producer's ATTR1.x. The POS cone (ATTR0.x and
        // eight ops, which only the rasterizer reads) and the dead FS product are not
        // in the graph.
        assert_eq!(g.total_number_of_nodes(), 5, "{:?}", g.dump());
        let attr0 = VNode::Input(IoSlot::new(Slot::Attr(0), 0));
        assert!(g.classes().all(|c| !c.nodes.contains(&attr0)));
        assert_eq!(lowered.original.len(), 5);
        assert!(lowered.outputs.contains_key(&IoSlot::var(0, 0)));
        assert!(!lowered.outputs.contains_key(&IoSlot::new(Slot::Pos, 0)));
    }

    /// A VS whose only value outside the region is POS's ATTR0.x, next to a three-op
    /// varying the FS reads: one unreached class in nine.
    const SMALL_REMAINDER: &str = "(pair
  (producer vs
    (%p = load_input ATTR0.x)
    (store_output POS.x %p)
    (%a = load_input ATTR1.x)
    (%b = fmul %a %a)
    (%c = fadd %b %a)
    (%d = fmul %c %b)
    (store_output VAR0.x %d))
  (consumer fs
    (%x = load_interpolated_input VAR0.x persp center)
    (%one = const 32 1.0)
    (%r = fadd %x %one)
    (store_output DATA0.x %r)))";

    /// Under a quarter of the classes unreached, the graph is kept whole: rebuilding
    /// it would cost more than the rule searches over the one extra class.
    #[test]
    fn a_small_unreached_remainder_is_not_cut() {
        let pair = crate::text::parse(SMALL_REMAINDER, Some("small.pair")).unwrap();
        let lowered = lower(&pair, VAnalysis::default(), false);
        let g = &lowered.egraph;
        // Reached: ATTR1.x, the three producer ops, the transfer and its mode, the
        // constant and the FS add (8); unreached: ATTR0.x (1). 1 * 4 <= 9.
        assert_eq!(g.number_of_classes(), 9, "{:?}", g.dump());
        // The premise, checked when the test compiles: one class in nine is under
        // the threshold.
        const _: () = assert!(super::COMPACT_WHEN_DROPPED_ONE_IN <= 9);
        let attr0 = VNode::Input(IoSlot::new(Slot::Attr(0), 0));
        assert!(g.classes().any(|c| c.nodes.contains(&attr0)));
        let starts = lowered
            .roots
            .values()
            .chain(lowered.loads.iter().map(|l| &l.class));
        assert!(super::compact(g, &lowered.original, starts.copied()).is_none());
    }

    /// A VS whose dead `i2f32` of an integer 2 folds to the float 2.0 the stored value
    /// uses, and whose dead `if` phi and dead product under an `if` reach nothing
    /// stored; the live `if` phi (VAR1.x) needs its condition and both sides.
    const DEAD_PAIR: &str = "(pair
  (producer vs
    (%a = load_input ATTR1.x)
    (%two = const 32 2.0)
    (%r = fmul %a %two)
    (%i2 = const 32 2)
    (%dead = i2f32 %i2)
    (%b = load_input ATTR2.x)
    (%zero = const 32 0.0)
    (%c = flt %zero %b)
    (if %c
      (then (%t = fadd %a %b) (%u = fmul %b %b))
      (else (%e = fsub %a %b) (%w = fmul %a %a))
      (%s = phi %t %e)
      (%deadphi = phi %u %w))
    (store_output VAR0.x %r)
    (store_output VAR1.x %s))
  (consumer fs
    (%x = load_interpolated_input VAR0.x persp center)
    (%y = load_interpolated_input VAR1.x persp center)
    (%z = fadd %x %y)
    (store_output DATA0.x %z)))";

    /// Dead producer code does not enter the graph, even where it would fold or
    /// hash-cons into a class the region keeps: the `i2f32` equals the live 2.0 and
    /// was kept in its class before `needed_values` (the test fails without it).
    #[test]
    fn dead_producer_values_do_not_shape_region_classes() {
        let pair = crate::text::parse(DEAD_PAIR, Some("dead.pair")).unwrap();
        let lowered = lower(&pair, VAnalysis::default(), false);
        let g = &lowered.egraph;
        let has = |op: crate::ir::AluOp| {
            g.classes().any(|c| {
                c.nodes
                    .iter()
                    .any(|n| matches!(n, VNode::Alu { op: o, .. } if *o == op))
            })
        };
        assert!(!has(crate::ir::AluOp::I2F32), "{:?}", g.dump());
        // The live `if` is a select on its condition; the dead phi's products are not
        // lowered (the only `fmul` is the stored `%a * 2.0`).
        assert!(has(crate::ir::AluOp::BCsel), "{:?}", g.dump());
        let fmuls = g
            .classes()
            .flat_map(|c| c.nodes.iter())
            .filter(|n| {
                matches!(
                    n,
                    VNode::Alu {
                        op: crate::ir::AluOp::FMul,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(fmuls, 1, "{:?}", g.dump());
        let out = crate::optimize(&pair, &crate::Options::new()).unwrap();
        check_equivalent(&pair, &out.pipeline, &EquivConfig::default()).unwrap();
    }

    #[test]
    fn work_outside_the_region_is_still_emitted() {
        let pair = crate::text::parse(PAIR, Some("region.pair")).unwrap();
        let out = crate::optimize(&pair, &crate::Options::new()).unwrap();
        assert!(out.report.fallback.is_none(), "{}", out.report);
        check_equivalent(&pair, &out.pipeline, &EquivConfig::default()).unwrap();
        let stores_pos = out.pipeline.producer.body.iter().any(|s| {
            matches!(s, Stmt::Inst(i) if matches!(&i.kind,
                InstKind::StoreOutput { slot, .. } if slot.slot == Slot::Pos))
        });
        assert!(stores_pos, "POS is still stored");
    }
}
