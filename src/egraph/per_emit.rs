//! GS outputs that differ between emits: the value stored at each static `emit_vertex`
//! becomes one term, the most specific one that is each emit's value at that emit
//! (anti-unification), with `per-emit` spines only where the emits really differ.
//!
//! A GS that stores `a_k + u` at emit k gives `(fadd (per-emit 0i32 a0 (per-emit 1i32
//! a1 a2)) u)`, not a spine of three sums: the motion laws then see the sum, an output
//! storing `a_k` at emit k is the same spine class, and forward motion can recompute
//! one output from the other. Stating this factoring as rewrite rules instead
//! (`per-emit k (op a c) (op b d) = op (per-emit k a b) (per-emit k c d)`, one per op)
//! let commutativity pair up every operand of one emit with every operand of another
//! and grew a generated 40-instruction GS pair to 6.7 million e-nodes in one
//! iteration; lowering has each emit's term as written, so it factors once, in time
//! linear in the terms.

use std::collections::BTreeMap;

use egg::{Id, Language};

use super::analysis::VGraph;
use super::lang::VNode;
use crate::ir::BitSize;

/// Where factoring reads terms and adds nodes (lowering also records each node it adds
/// as part of the as-written solution).
pub trait Terms {
    /// The node of class `id` (lowering's classes hold one node each).
    fn node(&self, id: Id) -> VNode;
    /// Adds `node`, returning its class.
    fn add(&mut self, node: VNode) -> Id;
}

impl Terms for VGraph {
    fn node(&self, id: Id) -> VNode {
        self[id].nodes[0].clone()
    }

    fn add(&mut self, node: VNode) -> Id {
        egg::EGraph::add(self, node)
    }
}

/// Factors the per-emit values `terms` (one per static emit, in order) of one output.
/// An `undef` entry (the output was not written before that emit) may be any value,
/// so it takes the value of the first written emit: a refinement, as for stores
/// under `if`.
pub fn factor(g: &mut impl Terms, terms: &[Id], undef: Id) -> Id {
    let written: Vec<Id> = terms.iter().copied().filter(|t| *t != undef).collect();
    let Some(first) = written.first().copied() else {
        return undef;
    };
    let filled: Vec<Id> = terms
        .iter()
        .map(|t| if *t == undef { first } else { *t })
        .collect();
    Factor {
        g,
        undef,
        memo: BTreeMap::new(),
    }
    .term(&filled)
}

struct Factor<'a, G: Terms> {
    g: &'a mut G,
    /// The value of an output no emit stores (a GS without static emits).
    undef: Id,
    /// Per tuple of emit values, its factored term: lowering builds DAGs, and a shared
    /// subterm is factored once.
    memo: BTreeMap<Vec<Id>, Id>,
}

/// One step of [`Factor::term`]'s explicit stack.
enum Job {
    /// Factor one tuple of emit values; its term ends up on the result stack.
    Visit(Vec<Id>),
    /// Rebuild `node` over the top results (its factored children), for this tuple.
    Build(Vec<Id>, VNode),
}

impl<G: Terms> Factor<'_, G> {
    /// Factors one tuple of emit values. Iterative (an explicit stack, children
    /// factored in order before their parent is rebuilt): the emits' terms are as deep
    /// as the producer's dependency chains.
    fn term(&mut self, terms: &[Id]) -> Id {
        let mut jobs = vec![Job::Visit(terms.to_vec())];
        let mut results: Vec<Id> = vec![];
        while let Some(job) = jobs.pop() {
            match job {
                Job::Visit(terms) => match self.known(&terms) {
                    Some(id) => results.push(id),
                    None => self.split(terms, &mut jobs, &mut results),
                },
                Job::Build(terms, mut node) => {
                    let arity = node.children().len();
                    let kids = results.split_off(results.len() - arity);
                    for (child, kid) in node.children_mut().iter_mut().zip(kids) {
                        *child = kid;
                    }
                    let id = self.g.add(node);
                    self.memo.insert(terms, id);
                    results.push(id);
                }
            }
        }
        results.pop().unwrap_or(self.undef)
    }

    /// The term of a tuple that needs no factoring: none, all equal, or done before.
    fn known(&self, terms: &[Id]) -> Option<Id> {
        let Some((&last, rest)) = terms.split_last() else {
            return Some(self.undef);
        };
        if rest.iter().all(|t| *t == last) {
            return Some(last);
        }
        self.memo.get(terms).copied()
    }

    /// Same operator everywhere: factor each child column (queued), then rebuild;
    /// otherwise a spine of the differing values.
    fn split(&mut self, terms: Vec<Id>, jobs: &mut Vec<Job>, results: &mut Vec<Id>) {
        let Some((&last, rest)) = terms.split_last() else {
            return results.push(self.undef);
        };
        let model = self.g.node(last);
        let nodes: Vec<VNode> = terms
            .iter()
            .map(|t| aligned(&*self.g, self.g.node(*t), &model))
            .collect();
        // `matches` compares operator and arity, so every node has `model`'s children.
        if !model.is_leaf() && nodes.iter().all(|n| n.matches(&model)) {
            let columns: Vec<Vec<Id>> = (0..model.children().len())
                .map(|j| nodes.iter().map(|n| n.children()[j]).collect())
                .collect();
            jobs.push(Job::Build(terms, model));
            jobs.extend(columns.into_iter().rev().map(Job::Visit));
        } else {
            let id = spine(self.g, last, rest);
            self.memo.insert(terms, id);
            results.push(id);
        }
    }
}

/// `node` with its operands swapped when it is commutative and the swap lines them up
/// better with `model`'s: the e-graph orders commutative operands by class id, which
/// differs between emits (`a0 + u` may be stored as `(fadd u a1)` at the next emit), so
/// columns are matched by equal operands first, then by operand shape.
fn aligned(g: &impl Terms, mut node: VNode, model: &VNode) -> VNode {
    if !crate::egraph::comm_match::is_commutative(&node) || !node.matches(model) {
        return node;
    }
    let (n, m) = (node.children(), model.children());
    let score = |a: Id, b: Id| {
        if a == b {
            2
        } else {
            u32::from(g.node(a).matches(&g.node(b)))
        }
    };
    let straight = score(n[0], m[0]) + score(n[1], m[1]);
    let crossed = score(n[1], m[0]) + score(n[0], m[1]);
    if crossed > straight {
        node.children_mut().swap(0, 1);
    }
    node
}

/// `(per-emit 0i32 t0 (per-emit 1i32 t1 …))`; a run of equal values at the end stays
/// one value.
fn spine(g: &mut impl Terms, last: Id, rest: &[Id]) -> Id {
    let mut spine = last;
    for (k, head) in rest.iter().enumerate().rev() {
        if *head != spine {
            let index = g.add(VNode::Const {
                bits: BitSize::B32,
                value: k as u32,
            });
            spine = g.add(VNode::PerEmit([index, *head, spine]));
        }
    }
    spine
}

#[cfg(test)]
mod tests {
    use super::*;
    use egg::RecExpr;

    fn find(g: &VGraph, id: Id) -> Id {
        g.find(id)
    }

    fn add(g: &mut VGraph, t: &str) -> Id {
        g.add_expr(&t.parse::<RecExpr<VNode>>().expect("term parses"))
    }

    #[test]
    fn common_structure_is_factored_and_differences_become_spines() {
        let mut g = VGraph::default();
        let undef = add(&mut g, "undef32");
        let terms: Vec<Id> = ["opaque:1:32", "opaque:2:32", "opaque:3:32"]
            .iter()
            .map(|a| add(&mut g, &format!("(fmul (fadd {a} uniform:0) 2f32)")))
            .collect();
        let out = factor(&mut g, &terms, undef);
        let want = add(
            &mut g,
            "(fmul (fadd (per-emit 0i32 opaque:1:32 (per-emit 1i32 opaque:2:32 opaque:3:32)) \
             uniform:0) 2f32)",
        );
        assert_eq!(find(&g, out), find(&g, want));
    }

    #[test]
    fn different_ops_and_trailing_runs() {
        let mut g = VGraph::default();
        let undef = add(&mut g, "undef32");
        let a = add(&mut g, "(fadd opaque:1:32 1f32)");
        let b = add(&mut g, "(fmul opaque:1:32 1f32)");
        // Different ops: a spine; the last two emits store the same value.
        let out = factor(&mut g, &[a, b, b], undef);
        let want = add(
            &mut g,
            "(per-emit 0i32 (fadd opaque:1:32 1f32) (fmul opaque:1:32 1f32))",
        );
        assert_eq!(find(&g, out), find(&g, want));
        // An emit that leaves the output unwritten takes the first written value.
        assert_eq!(factor(&mut g, &[undef, a, a], undef), a);
        assert_eq!(factor(&mut g, &[undef, undef], undef), undef);
    }
}
