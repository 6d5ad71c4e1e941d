//! Integer re-association before lowering: every chain of one wrapping associative op
//! (`iadd`, `imul`, `iand`, `ior`, `ixor`) is flattened to its operands and rebuilt as
//! one left-deep chain in a canonical operand order, its constant operands folded into
//! one.
//!
//! Why here and not as a saturated law: associativity with commutative matching gives a
//! chain of n operands one e-class per subset of them (2^n); a real vertex shader that
//! `and`s sixteen comparisons filled the node budget with them. Two chains over the same
//! operands in different bracketings and orders are rebuilt into the same instructions
//! here, so they hash-cons into one class at lowering, which is what deduplication
//! needed the law for. The law stays in the rule set only where it regroups operands for
//! motion (`(if (regroups ?a ?b ?c))`, rules/algebra.rules).

use std::collections::{BTreeMap, BTreeSet};

use fxhash::FxHashSet;

use crate::ir::{
    eval_alu, for_each_block_mut, walk, AluOp, Inst, InstKind, Shader, Stmt, Value, Visit,
};

/// The ops re-associated: integer add and multiply wrap and the bitwise ops act per
/// bit, so each is associative and commutative bit for bit.
fn is_chain_op(op: AluOp) -> bool {
    matches!(
        op,
        AluOp::IAdd | AluOp::IMul | AluOp::IAnd | AluOp::IOr | AluOp::IXor
    )
}

/// One two-operand instruction of a chain op.
#[derive(Clone, Copy)]
struct Link {
    op: AluOp,
    srcs: [Value; 2],
}

/// What the pass needs to know about the shader before editing it, indexed by value.
struct Chains {
    links: Vec<Option<Link>>,
    /// Links whose one use is an operand of a link of the same op: they are part of
    /// their user's chain rather than a chain of their own.
    interior: Vec<bool>,
    constants: Vec<Option<u32>>,
    /// Some computation (`emit::is_computation`) that nothing uses.
    unused: bool,
}

/// How a value is used: never, once (by this instruction result, if any), or more.
#[derive(Clone, Copy, PartialEq)]
enum Uses {
    None,
    Once(Option<Value>),
    More,
}

fn survey(s: &Shader) -> Chains {
    let n = s.values.len();
    let mut links: Vec<Option<Link>> = vec![None; n];
    let mut constants = vec![None; n];
    let mut uses = vec![Uses::None; n];
    let mut work = vec![false; n];
    for visit in walk(&s.body) {
        let Visit::Enter(stmt) = visit else {
            continue;
        };
        let user = match stmt {
            Stmt::Inst(inst) => inst.result,
            _ => None,
        };
        for v in stmt.own_uses() {
            if let Some(u) = uses.get_mut(v.index()) {
                *u = match *u {
                    Uses::None => Uses::Once(user),
                    _ => Uses::More,
                };
            }
        }
        let Some((r, kind)) = stmt.as_def() else {
            continue;
        };
        work[r.index()] = super::emit::is_computation(kind);
        match kind {
            InstKind::Const(bits) => constants[r.index()] = Some(*bits),
            InstKind::Alu { op, srcs, .. } if is_chain_op(*op) && srcs.len() == 2 => {
                links[r.index()] = Some(Link {
                    op: *op,
                    srcs: [srcs[0], srcs[1]],
                });
            }
            _ => {}
        }
    }
    let interior = (0..n)
        .map(|i| match (links[i], uses[i]) {
            (Some(link), Uses::Once(Some(user))) => {
                links[user.index()].is_some_and(|u| u.op == link.op)
            }
            _ => false,
        })
        .collect();
    let unused = (0..n).any(|i| work[i] && uses[i] == Uses::None);
    Chains {
        links,
        interior,
        constants,
        unused,
    }
}

impl Chains {
    fn constant(&self, v: Value) -> Option<u32> {
        self.constants[v.index()]
    }

    /// The operands of the chain rooted at `root`, left to right, and its interior links.
    fn flatten(&self, root: Value) -> (Vec<Value>, Vec<Value>) {
        let (mut leaves, mut inner) = (vec![], vec![]);
        let mut stack = vec![root];
        while let Some(v) = stack.pop() {
            match self.links[v.index()] {
                Some(link) if v == root || self.interior[v.index()] => {
                    if v != root {
                        inner.push(v);
                    }
                    stack.push(link.srcs[1]);
                    stack.push(link.srcs[0]);
                }
                _ => leaves.push(v),
            }
        }
        (leaves, inner)
    }
}

/// The rebuilt form of one chain: instructions to insert before its root and the root's
/// new operands.
struct Rebuild {
    before: Vec<Inst>,
    root_srcs: [Value; 2],
    dead: Vec<Value>,
}

/// A chain's operands split into the non-constant ones, in canonical (value) order,
/// and the constant ones, in chain order.
fn canonical(chains: &Chains, leaves: &[Value]) -> (Vec<Value>, Vec<Value>) {
    let (consts, mut vars): (Vec<Value>, Vec<Value>) =
        leaves.iter().partition(|v| chains.constant(**v).is_some());
    vars.sort();
    (vars, consts)
}

/// The constants of a chain folded into one with the interpreter's `eval_alu`.
fn fold(s: &Shader, chains: &Chains, op: AluOp, consts: &[Value]) -> u32 {
    let bits = s.bits(consts[0]);
    consts
        .iter()
        .filter_map(|v| chains.constant(*v))
        .reduce(|acc, k| eval_alu(op, &[acc, k], &[bits, bits]))
        .unwrap_or(0)
}

/// A name no value of `s` has. A chain's instructions are named `ROOT.assocN`, so only
/// names of that form (an earlier run's result read back, or made here) can collide:
/// the set of those is built on first use (most shaders need none).
fn fresh_name(s: &Shader, taken: &mut Option<FxHashSet<String>>, root: Value, k: usize) -> String {
    let taken = taken.get_or_insert_with(|| {
        let made = s.values.iter().filter(|v| v.name.contains(".assoc"));
        made.map(|v| v.name.clone()).collect()
    });
    let base = &s.value(root).name;
    let mut n = k;
    loop {
        let name = format!("{base}.assoc{n}");
        if taken.insert(name.clone()) {
            return name;
        }
        n += 1;
    }
}

/// The rebuilt chain, or `None` when it is already in canonical form (or holds only
/// constants, which constant folding elsewhere handles).
fn rebuild(
    s: &mut Shader,
    chains: &Chains,
    taken: &mut Option<FxHashSet<String>>,
    root: Value,
) -> Option<Rebuild> {
    let link = chains.links[root.index()]?;
    // A single link (two operands) is left as it is whatever they are (see below);
    // most chains are one, so they are not flattened.
    if !link.srcs.iter().any(|s| chains.interior[s.index()]) {
        return None;
    }
    let (leaves, inner) = chains.flatten(root);
    let (vars, consts) = canonical(chains, &leaves);
    if vars.is_empty() {
        return None;
    }
    let mut operands = vars;
    // A chain with one constant keeps that constant's instruction.
    if let [c] = consts.as_slice() {
        operands.push(*c);
    }
    // Two operands and no constants to fold: the e-graph orders them itself.
    let unchanged = leaves == operands && is_left_deep(chains, root, inner.len());
    if consts.len() <= 1 && (unchanged || leaves.len() == 2) {
        return None;
    }
    let bits = s.bits(root);
    let mut before = vec![];
    if consts.len() > 1 {
        let k = fold(s, chains, link.op, &consts);
        let v = s.add_value(fresh_name(s, taken, root, 0), bits);
        before.push(Inst {
            result: Some(v),
            kind: InstKind::Const(k & bits.mask()),
            loc: None,
        });
        operands.push(v);
    }
    let mut acc = operands[0];
    for (k, next) in operands[1..operands.len() - 1].iter().enumerate() {
        let v = s.add_value(fresh_name(s, taken, root, k + 1), bits);
        before.push(Inst {
            result: Some(v),
            kind: InstKind::Alu {
                op: link.op,
                exact: false,
                srcs: vec![acc, *next],
            },
            loc: None,
        });
        acc = v;
    }
    Some(Rebuild {
        before,
        root_srcs: [acc, operands[operands.len() - 1]],
        dead: inner,
    })
}

/// Whether the chain at `root` is `op(op(op(l1, l2), l3), l4)` with `depth` links below.
fn is_left_deep(chains: &Chains, root: Value, depth: usize) -> bool {
    let mut v = root;
    for _ in 0..depth {
        let Some(link) = chains.links[v.index()] else {
            return false;
        };
        let left = link.srcs[0];
        if !chains.interior[left.index()] {
            return false;
        }
        v = left;
    }
    true
}

/// Re-associates every integer chain of `s` (see the module comment). Instructions of
/// the old chains that only the chain used are removed; the new ones sit right before
/// the chain's last instruction, where every operand is defined. Returns whether any
/// chain was rebuilt and whether the survey saw an unused computation.
pub(crate) fn reassociate(s: &mut Shader) -> Reassociated {
    let chains = survey(s);
    let unused = chains.unused;
    let mut taken = None;
    let roots: Vec<Value> = (0..chains.links.len())
        .filter(|&i| chains.links[i].is_some() && !chains.interior[i])
        .map(|i| Value(i as u32))
        .collect();
    let mut plans = BTreeMap::new();
    for root in roots {
        if let Some(plan) = rebuild(s, &chains, &mut taken, root) {
            plans.insert(root, plan);
        }
    }
    if plans.is_empty() {
        return Reassociated {
            reordered: false,
            unused,
        };
    }
    let dead: BTreeSet<Value> = plans
        .values()
        .flat_map(|p| p.dead.iter().copied())
        .collect();
    for_each_block_mut(&mut s.body, |block| {
        let old = std::mem::take(block);
        block.reserve(old.len());
        for mut stmt in old {
            if let Stmt::Inst(inst) = &mut stmt {
                if inst.result.is_some_and(|r| dead.contains(&r)) {
                    continue;
                }
                if let Some(plan) = inst.result.and_then(|r| plans.remove(&r)) {
                    block.extend(plan.before.into_iter().map(Stmt::Inst));
                    if let InstKind::Alu { srcs, .. } = &mut inst.kind {
                        *srcs = plan.root_srcs.to_vec();
                    }
                }
            }
            block.push(stmt);
        }
    });
    Reassociated {
        reordered: true,
        unused,
    }
}

/// What [`reassociate`] did, and what its survey of the shader saw on the way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reassociated {
    /// Some chain was rebuilt.
    pub reordered: bool,
    /// Some computation that nothing used was there before (constants, undefs and
    /// input loads aside, `emit::is_computation`): the pre-pass then removes dead
    /// computations, a pass it skips on the many inputs that have none.
    pub unused: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Pipeline;

    fn parse(body: &str) -> Pipeline {
        let src = format!(
            "(pair (producer vs
               (%fa = load_input ATTR0.x) (%a = f2i32 %fa)
               (%fb = load_input ATTR0.y) (%b = f2i32 %fb)
               (%fc = load_input ATTR0.z) (%c = f2i32 %fc)
               (%k3 = const 32 3) (%k5 = const 32 5)
               {body})
             (consumer fs (%x = load_input VAR0.x) (store_output DATA0.x %x)))"
        );
        crate::text::parse(&src, None).expect("test pair parses")
    }

    /// The ALU instructions of the producer as `op(name, name)` strings, in order.
    fn alu(p: &Pipeline) -> Vec<String> {
        let s = &p.producer;
        let mut out = vec![];
        s.for_each_inst(|i| match &i.kind {
            InstKind::Alu { op, srcs, .. } if is_chain_op(*op) => {
                let names: Vec<&str> = srcs.iter().map(|v| s.value(*v).name.as_str()).collect();
                out.push(format!("{op:?}({})", names.join(", ")));
            }
            InstKind::Const(k) if i.result.is_some_and(|r| s.value(r).name.contains("assoc")) => {
                out.push(format!("const {k}"))
            }
            _ => {}
        });
        out
    }

    #[test]
    fn a_chain_is_rebuilt_left_deep_in_value_order_with_its_constants_folded() {
        let mut p = parse(
            "(%x = iadd %c %k3) (%y = iadd %b %k5) (%z = iadd %x %y) (%w = iadd %z %a)
             (store_output VAR0.x %w)",
        );
        reassociate(&mut p.producer);
        assert_eq!(
            alu(&p),
            [
                "const 8",
                "IAdd(a, b)",
                "IAdd(w.assoc1, c)",
                "IAdd(w.assoc2, w.assoc0)"
            ]
        );
    }

    #[test]
    fn new_instructions_get_names_no_value_has() {
        // `%w.assoc1` is the name the chain's second instruction would get (an earlier
        // run's result read back): that instruction takes the next free name.
        let mut p = parse(
            "(%w.assoc1 = iadd %a %a) (store_output VAR1.x %w.assoc1)
             (%x = iadd %c %k3) (%y = iadd %b %k5) (%z = iadd %x %y) (%w = iadd %z %a)
             (store_output VAR0.x %w)",
        );
        reassociate(&mut p.producer);
        let s = &p.producer;
        let names: Vec<&str> = s.values.iter().map(|v| v.name.as_str()).collect();
        let unique: BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        assert!(
            unique.contains("w.assoc2") && unique.contains("w.assoc3"),
            "{names:?}"
        );
    }

    #[test]
    fn a_canonical_chain_is_left_alone() {
        let body = "(%x = iand %a %b) (%y = iand %x %c) (store_output VAR0.x %y)";
        let mut p = parse(body);
        let before = p.clone();
        reassociate(&mut p.producer);
        assert_eq!(p, before);
    }

    #[test]
    fn a_value_used_twice_is_an_operand_not_part_of_the_chain() {
        // %x is also stored: it stays, and the chain over it keeps it as one operand.
        let mut p = parse(
            "(%x = ixor %c %b) (%y = ixor %x %a) (store_output VAR0.x %y)
             (store_output VAR0.y %x)",
        );
        reassociate(&mut p.producer);
        assert_eq!(alu(&p), ["IXor(c, b)", "IXor(x, a)"]);
    }

    #[test]
    fn different_ops_are_different_chains() {
        let mut p = parse("(%x = iadd %c %b) (%y = imul %x %a) (store_output VAR0.x %y)");
        let before = p.clone();
        reassociate(&mut p.producer);
        assert_eq!(p, before);
    }

    #[test]
    fn the_survey_notes_unused_computations_but_not_unused_constants_or_inputs() {
        // `parse`'s own prelude leaves the constants %k3 and %k5 unused.
        let uses_all = "(%x = iadd %c %b) (%y = iadd %x %a) (store_output VAR0.x %y)";
        let mut p = parse(uses_all);
        assert!(!reassociate(&mut p.producer).unused);
        let mut p = parse(&format!("(%d = fneg %fa) {uses_all}"));
        let re = reassociate(&mut p.producer);
        assert!(re.unused && re.reordered);
        // An unused input load is no computation: the pre-pass keeps it.
        let mut p = parse(&format!("(%u = load_input ATTR1.x) {uses_all}"));
        assert!(!reassociate(&mut p.producer).unused);
        let mut p = parse(&format!("(%u = load_uniform 0) {uses_all}"));
        assert!(reassociate(&mut p.producer).unused);
    }
}
