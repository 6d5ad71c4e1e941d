//! SSA clean-ups run before lowering, facts Mesa's pipeline establishes before its
//! varying pass and that the e-graph cannot see by itself: products by a constant zero
//! fold to zero (NIR's default float mode, not for `exact` ops), counted loops that
//! write outputs are unrolled (`unroll`), integer chains are
//! re-associated into one canonical form (`reassociate`), `if`s on a known constant
//! condition (specialization constants after import) are replaced by their taken
//! branch, output stores that a later store of the same block overwrites unobserved
//! are dropped (only the last store's inputs stay alive), computations nothing uses
//! are dropped before lowering (`simplify`), and consumer loads of an
//! output whose every store stores one constant (wherever the stores are: in loops,
//! before each GS emit; a select between two equal constants counts as that constant)
//! read that constant.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use super::emit::remove_dead_computations;
use super::report::{Fate, VaryingReport};
use crate::egraph::VNode;
use crate::ir::{
    eval_alu, for_each_block_mut, AluOp, BitSize, Block, Inst, InstKind, IoSlot, Pipeline, Shader,
    SlotClass, Stmt, Value, Xfb,
};

/// Folds zero products and constant `if`s, drops overwritten stores and then dead
/// computations in both stages, then propagates constant outputs.
pub(crate) fn simplify(p: &mut Pipeline) -> Simplified {
    let mut rewritten = false;
    for s in [&mut p.producer, &mut p.consumer] {
        let cleaned = clean_shader(s);
        rewritten |= cleaned.any();
        // Dead work, the input's own or what the folds left, would enter the graph:
        // a dead consumer use of a varying made the sharing gate see that varying as
        // computed anyway, and the first run missed a move that a second run (on the
        // first one's dead-code-free output) found. Input loads stay, so the input's
        // varyings are as written. The removal is a pass of its own, so it runs only
        // where there may be dead work.
        if cleaned.maybe_dead {
            remove_dead_computations(s);
        }
    }
    Simplified {
        fates: propagate_constant_outputs(p),
        rewritten,
    }
}

/// What [`simplify`] did.
pub(crate) struct Simplified {
    /// The propagated constant outputs' fates.
    pub fates: Vec<VaryingReport>,
    /// Whether a clean-up changed more than dropping dead computations and
    /// propagating those outputs (`Cleaned::any`).
    pub rewritten: bool,
}

/// `p` with the counted loops that store outputs or emit unrolled (`unroll`), or `p`
/// itself when it has none. Lowering pins a loop's stores and sees none of its work,
/// so the model prices the input in this form: unrolling changes no work a loop does,
/// only whether the model can see it (a GS emitting from `for (i = 0; i < 3; i++)`
/// priced as written would cost nothing).
pub(crate) fn with_loops_unrolled(p: &Pipeline) -> Cow<'_, Pipeline> {
    use super::unroll::has_loop;
    if !has_loop(&p.producer) && !has_loop(&p.consumer) {
        return Cow::Borrowed(p);
    }
    let mut q = p.clone();
    let mut any = false;
    for s in [&mut q.producer, &mut q.consumer] {
        any |= super::unroll::unroll(s, known_constants);
    }
    match any {
        true => Cow::Owned(q),
        false => Cow::Borrowed(p),
    }
}

/// What the clean-ups of one shader changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Cleaned {
    /// A fold that can leave a value, a load or a store dead, constant or no longer
    /// in a loop: a zero product, an unrolled loop, a constant `if`, an overwritten
    /// store. On an emitted result it means the e-graph chose without seeing it.
    pub folded: bool,
    /// An integer chain put in canonical order: the same operands, regrouped.
    pub reordered: bool,
    /// The shader may hold a computation nothing uses: `reassociate`'s survey saw
    /// one (after the zero products and the unrolling), or a later fold (a constant
    /// `if`, an overwritten store) may have left one. Not a change.
    pub maybe_dead: bool,
}

impl Cleaned {
    /// Whether anything changed.
    pub(crate) fn any(self) -> bool {
        self.folded || self.reordered
    }
}

/// The clean-ups of one shader, those that leave the interface's varyings as they
/// are: zero products, counted loops, integer chains, constant `if`s, overwritten
/// stores. Emission runs them on its output too, so that a result is already clean;
/// when one of them folds something there, the result gets the fixed-point round
/// (`rounds::worth_another_round`).
pub(crate) fn clean_shader(s: &mut Shader) -> Cleaned {
    let mut folded = fold_zero_products(s);
    folded |= super::unroll::unroll(s, known_constants);
    let re = super::reassociate::reassociate(s);
    let late = fold_constant_ifs(s) | drop_overwritten_stores(s);
    folded |= late;
    Cleaned {
        folded,
        reordered: re.reordered,
        maybe_dead: re.unused || late,
    }
}

/// Known constant values: `const` instructions, ALU ops over known constants, folded
/// with the interpreter's own `eval_alu` (defs precede uses in statement order), and
/// selects between two equal constants whatever their condition (scalarizing a vector
/// select such as `c ? vec4(1, 0, 0, 1) : vec4(0, 1, 0, 1)` leaves those in the lanes
/// where both vectors agree).
fn known_constants(s: &Shader) -> BTreeMap<Value, u32> {
    let mut known = BTreeMap::new();
    s.for_each_inst(|inst| {
        let Some(r) = inst.result else { return };
        match &inst.kind {
            InstKind::Const(bits) => {
                known.insert(r, *bits);
            }
            InstKind::Alu {
                op: AluOp::BCsel,
                srcs,
                ..
            } if srcs.len() == 3
                && known.contains_key(&srcs[1])
                && known.get(&srcs[1]) == known.get(&srcs[2]) =>
            {
                known.insert(r, known[&srcs[1]]);
            }
            InstKind::Alu { op, srcs, .. } => {
                let vals: Option<Vec<u32>> = srcs.iter().map(|v| known.get(v).copied()).collect();
                if let Some(vals) = vals {
                    let sizes: Vec<BitSize> = srcs.iter().map(|v| s.bits(*v)).collect();
                    known.insert(r, eval_alu(*op, &vals, &sizes));
                }
            }
            _ => {}
        }
    });
    known
}

/// Whether a constant pattern of size `bits` is a float zero of either sign.
fn is_zero(value: u32, bits: BitSize) -> bool {
    match bits {
        BitSize::B16 => value & 0x7fff == 0,
        BitSize::B32 => value & 0x7fff_ffff == 0,
        BitSize::B1 => false,
    }
}

/// `x * 0 -> 0` and `ffma(x, 0, c) -> c` (either factor) for ops not marked `exact`,
/// with zeros known after constant folding (so `(1 - 1) * x` folds too). NIR's default
/// float mode preserves neither Inf/NaN (`Inf * 0` is NaN) nor the sign of zero
/// (`-x * 0` is -0), so Mesa folds these too; every finite `x` gives a zero. Done here
/// rather than as a rewrite law: a consumer product merged with the free constant's
/// class would hand consumer terms to the reverse motion laws (rules/algebra.rules).
fn fold_zero_products(s: &mut Shader) -> bool {
    let mut changed = false;
    let sizes: Vec<BitSize> = s.values.iter().map(|v| v.bits).collect();
    let mut known: BTreeMap<Value, u32> = BTreeMap::new();
    s.for_each_inst_mut(|inst| {
        let Some(r) = inst.result else { return };
        let zero = |v: &Value| known.get(v).is_some_and(|&k| is_zero(k, sizes[v.index()]));
        let folded = match &inst.kind {
            InstKind::Alu {
                op: AluOp::FMul,
                exact: false,
                srcs,
            } if srcs.iter().any(zero) => Some(InstKind::Const(0)),
            InstKind::Alu {
                op: AluOp::FFma,
                exact: false,
                srcs,
            } if srcs.iter().take(2).any(zero) && srcs.len() == 3 => Some(InstKind::Alu {
                op: AluOp::Mov,
                exact: false,
                srcs: vec![srcs[2]],
            }),
            _ => None,
        };
        if let Some(kind) = folded {
            inst.kind = kind;
            changed = true;
        }
        match &inst.kind {
            InstKind::Const(bits) => {
                known.insert(r, *bits);
            }
            InstKind::Alu { op, srcs, .. } => {
                let vals: Option<Vec<u32>> = srcs.iter().map(|v| known.get(v).copied()).collect();
                if let Some(vals) = vals {
                    let sizes: Vec<BitSize> = srcs.iter().map(|v| sizes[v.index()]).collect();
                    known.insert(r, eval_alu(*op, &vals, &sizes));
                }
            }
            _ => {}
        }
    });
    changed
}

/// Whether a block ends its enclosing control flow itself (`break` / `continue` at its
/// top level): inlining it would leave statements after the jump.
fn jumps(block: &Block) -> bool {
    block
        .iter()
        .any(|s| matches!(s, Stmt::Break { .. } | Stmt::Continue { .. }))
}

/// Replaces every `if` whose condition is a known constant (a specialization constant
/// after import, or an expression over constants) by its taken branch, its merge phis
/// by moves of the taken side's values, before lowering: the branch not taken then
/// neither keeps inputs alive nor gates stores with a select.
fn fold_constant_ifs(s: &mut Shader) -> bool {
    let known = known_constants(s);
    let mut changed = false;
    for_each_block_mut(&mut s.body, |block| {
        let mut i = 0;
        while i < block.len() {
            let taken = match &block[i] {
                Stmt::If {
                    cond,
                    then_body,
                    else_body,
                    ..
                } => known
                    .get(cond)
                    .map(|&c| c & 1 != 0)
                    .filter(|&t| !jumps(if t { then_body } else { else_body })),
                _ => None,
            };
            match taken {
                Some(t) => {
                    changed = true;
                    if let Stmt::If {
                        then_body,
                        else_body,
                        phis,
                        loc,
                        ..
                    } = block.remove(i)
                    {
                        let mut inline = if t { then_body } else { else_body };
                        inline.extend(phis.into_iter().map(|phi| {
                            Stmt::Inst(Inst {
                                result: Some(phi.dst),
                                kind: InstKind::Alu {
                                    op: AluOp::Mov,
                                    exact: false,
                                    srcs: vec![if t { phi.then_val } else { phi.else_val }],
                                },
                                loc,
                            })
                        }));
                        // The inlined statements are scanned next (they may hold more
                        // constant `if`s).
                        block.splice(i..i, inline);
                    }
                }
                None => i += 1,
            }
        }
    });
    changed
}

/// Where a direct output store writes: the component, and the output vertex of a TCS
/// per-vertex store.
type StoreKey = (IoSlot, Option<Value>);

/// A direct (not indirectly indexed) output store's address and its metadata (xfb
/// capture, `no_varying`), which a store must share with a later one to be replaced by
/// it.
fn direct_store(stmt: &Stmt) -> Option<(StoreKey, (Option<Xfb>, bool))> {
    let Stmt::Inst(inst) = stmt else { return None };
    match &inst.kind {
        InstKind::StoreOutput {
            slot,
            indirect: None,
            xfb,
            no_varying,
            ..
        } => Some(((*slot, None), (*xfb, *no_varying))),
        InstKind::StorePerVertexOutput {
            slot,
            vertex,
            indirect: None,
            ..
        } => Some(((*slot, Some(*vertex)), (None, false))),
        _ => None,
    }
}

/// Whether running `stmt` may observe the current output values or leave the block
/// (a GS emit, a TCS barrier or read-back, `break` / `continue`, anywhere inside it).
/// Walked with an explicit stack: nesting depth is input-sized.
fn may_observe_outputs(stmt: &Stmt) -> bool {
    let mut stack = vec![stmt];
    while let Some(s) = stack.pop() {
        match s {
            Stmt::Inst(inst) => {
                if matches!(
                    inst.kind,
                    InstKind::EmitVertex | InstKind::Barrier | InstKind::LoadOutput { .. }
                ) {
                    return true;
                }
            }
            Stmt::Break { .. } | Stmt::Continue { .. } => return true,
            Stmt::If {
                then_body,
                else_body,
                ..
            } => stack.extend(then_body.iter().chain(else_body.iter())),
            Stmt::Loop { body, .. } => stack.extend(body.iter()),
        }
    }
    false
}

/// Indices of the stores of `block` that a later store of the same block overwrites
/// before anything may observe them. Scanned backwards: `later` holds, per address,
/// the metadata of the next store to it with no observer in between.
fn overwritten_stores(block: &Block) -> BTreeSet<usize> {
    let mut later: BTreeMap<StoreKey, (Option<Xfb>, bool)> = BTreeMap::new();
    let mut dead = BTreeSet::new();
    for (i, stmt) in block.iter().enumerate().rev() {
        if let Some((key, meta)) = direct_store(stmt) {
            match later.get(&key) {
                Some(m) if *m == meta => {
                    dead.insert(i);
                }
                Some(_) => {}
                None => {
                    later.insert(key, meta);
                }
            }
        } else if may_observe_outputs(stmt) {
            later.clear();
        }
    }
    dead
}

/// Removes, in every block of the shader, output stores that a later store of the same
/// block overwrites before an emit, barrier, read-back or exit of the block can see
/// them: after `c = f(x); c = c.wwww;` only the last store's inputs stay alive (an FS
/// that overwrote its result no longer reads the varyings of the first one).
fn drop_overwritten_stores(s: &mut Shader) -> bool {
    let mut changed = false;
    for_each_block_mut(&mut s.body, |block| {
        let dead = overwritten_stores(block);
        if !dead.is_empty() {
            changed = true;
            let mut i = 0;
            block.retain(|_| {
                i += 1;
                !dead.contains(&(i - 1))
            });
        }
    });
    changed
}

/// The single value every store of each output slot stores (`None`: stores differ or
/// are indirect). Keys are the stored addresses.
pub(super) fn stored_values(s: &Shader) -> BTreeMap<IoSlot, Option<Value>> {
    let mut out: BTreeMap<IoSlot, Option<Value>> = BTreeMap::new();
    s.for_each_inst(|inst| {
        let Some((slot, value, indirect)) = inst.kind.output_store() else {
            return;
        };
        let entry = out.entry(slot).or_insert(Some(value));
        if indirect.is_some() || *entry != Some(value) {
            *entry = None;
        }
    });
    out
}

/// Whether any producer store is indirectly indexed (it may write any slot of its
/// array, so no slot's set of stores is known).
fn has_indirect_store(s: &Shader) -> bool {
    let mut any = false;
    s.for_each_inst(|inst| {
        any |= matches!(
            &inst.kind,
            InstKind::StoreOutput {
                indirect: Some(_),
                ..
            } | InstKind::StorePerVertexOutput {
                indirect: Some(_),
                ..
            }
        );
    });
    any
}

/// Outputs stored exactly once, at the top level: the e-graph sees those stores and
/// propagates (or moves) their constants itself, reporting them as it does any other.
fn single_top_level_stores(s: &Shader) -> BTreeSet<IoSlot> {
    let mut count: BTreeMap<IoSlot, usize> = BTreeMap::new();
    s.for_each_inst(|inst| {
        if let InstKind::StoreOutput { slot, .. } | InstKind::StorePerVertexOutput { slot, .. } =
            &inst.kind
        {
            *count.entry(*slot).or_default() += 1;
        }
    });
    s.body
        .iter()
        .filter_map(|stmt| direct_store(stmt).map(|((io, _), _)| io))
        .filter(|io| count.get(io) == Some(&1))
        .collect()
}

/// Generic outputs (other than those stored once at the top level) whose every store, wherever it is (in loops, before any GS emit),
/// stores one constant: address → its bits. An emit before the first store sends an
/// undefined value, which the constant may stand for.
fn constant_outputs(s: &Shader) -> BTreeMap<IoSlot, (u32, BitSize)> {
    if has_indirect_store(s) {
        return BTreeMap::new();
    }
    let known = known_constants(s);
    let single = single_top_level_stores(s);
    stored_values(s)
        .into_iter()
        .filter(|(io, _)| matches!(io.slot.class(), SlotClass::Generic | SlotClass::Patch))
        .filter(|(io, _)| !single.contains(io))
        .filter_map(|(io, v)| {
            let v = v?;
            Some((io, (*known.get(&v)?, s.bits(v))))
        })
        .collect()
}

/// The consumer reads a constant output as that constant (what Mesa's constant
/// propagation across stages does): a GS that stores the same constant before every
/// emit, even inside a loop, or a VS storing it under a branch, no longer needs a
/// varying for it. Returns the propagated addresses.
fn propagate_constant_outputs(p: &mut Pipeline) -> Vec<VaryingReport> {
    let constants = constant_outputs(&p.producer);
    if constants.is_empty() {
        return vec![];
    }
    let consumer = &mut p.consumer;
    let bits: BTreeMap<Value, BitSize> = {
        let mut b = BTreeMap::new();
        consumer.for_each_inst(|inst| {
            if let Some(r) = inst.result {
                b.insert(r, consumer.bits(r));
            }
        });
        b
    };
    let mut used = BTreeSet::new();
    consumer.for_each_inst_mut(|inst| {
        let slot = match inst.kind.direct_input_slot() {
            Some(slot) => slot,
            None => return,
        };
        let Some(&(value, size)) = constants.get(&slot) else {
            return;
        };
        if inst.result.and_then(|r| bits.get(&r)) == Some(&size) {
            inst.kind = InstKind::Const(value);
            used.insert(slot);
        }
    });
    used.into_iter()
        .map(|slot| VaryingReport {
            slot,
            fate: Fate::Propagated(constant_text(constants[&slot])),
        })
        .collect()
}

/// How a propagated constant reads in the report (the e-graph's constant syntax).
fn constant_text((value, bits): (u32, BitSize)) -> String {
    VNode::Const { bits, value }.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(src: &str) -> Pipeline {
        crate::text::parse(src, None).expect("test pair parses")
    }

    fn store_count(s: &Shader) -> usize {
        let mut n = 0;
        s.for_each_inst(|i| {
            n += matches!(
                i.kind,
                InstKind::StoreOutput { .. } | InstKind::StorePerVertexOutput { .. }
            ) as usize
        });
        n
    }

    const TES: &str = "(consumer tes (%p = load_input PATCH0.x) (store_output POS.x %p))";

    #[test]
    fn an_overwritten_store_goes_unless_something_may_observe_it() {
        let tcs = |between: &str| {
            parse(&format!(
                "(pair (producer tcs
                   (%id = load_system_value invocation_id)
                   (%a = const 32 1.0) (%b = const 32 2.0)
                   (store_per_vertex_output VAR0.x %a %id)
                   {between}
                   (store_per_vertex_output VAR0.x %b %id)
                   (store_output PATCH0.x %a)) {TES})"
            ))
        };
        let mut p = tcs("");
        drop_overwritten_stores(&mut p.producer);
        assert_eq!(store_count(&p.producer), 2);
        let mut p = tcs("(barrier)");
        drop_overwritten_stores(&mut p.producer);
        assert_eq!(
            store_count(&p.producer),
            3,
            "other invocations read after a barrier"
        );
        // A store inside an `if` does not overwrite for certain.
        let mut p = tcs("(%c = const 1 1) (if %c (then (barrier)) (else))");
        drop_overwritten_stores(&mut p.producer);
        assert_eq!(store_count(&p.producer), 3, "a nested barrier observes too");
    }

    #[test]
    fn a_gs_emit_between_two_stores_keeps_both() {
        let mut p = parse(
            "(pair (producer gs (input points) (output points) (max_vertices 2)
               (%a = const 32 1.0) (%b = const 32 2.0)
               (store_output VAR0.x %a) (emit_vertex)
               (store_output VAR0.x %b) (store_output VAR0.x %a) (emit_vertex))
             (consumer fs (%x = load_input VAR0.x) (store_output DATA0.x %x)))",
        );
        drop_overwritten_stores(&mut p.producer);
        // Only the store overwritten before the second emit goes.
        assert_eq!(store_count(&p.producer), 2);
    }

    #[test]
    fn products_by_a_known_zero_fold_unless_exact() {
        let mut p = parse(
            "(pair (producer vs (%a = load_input ATTR0.x) (store_output VAR0.x %a))
             (consumer fs
               (%x = load_input VAR0.x) (%one = const 32 1.0) (%nz = const 32 0x80000000)
               (%d = fsub %one %one) (%p = fmul %x %d) (%q = fmul %nz %x)
               (%f = ffma %x %d %one) (%e = fmul exact %x %d)
               (store_output DATA0.x %p) (store_output DATA0.y %q)
               (store_output DATA0.z %f) (store_output DATA0.w %e)))",
        );
        fold_zero_products(&mut p.consumer);
        let text = crate::text::print(&p);
        assert!(text.contains("(%p = const 32 0)"), "{text}");
        assert!(text.contains("(%q = const 32 0)"), "{text}");
        assert!(text.contains("(%f = mov %one)"), "{text}");
        assert!(text.contains("(%e = fmul exact %x %d)"), "{text}");
    }

    /// `clean_shader` says whether it changed the shader (emission re-runs dead-code
    /// removal and renumbering only then), and each clean-up counts: a zero product,
    /// an integer chain out of canonical order, a constant `if`, an overwritten store.
    /// Only the chain is a reordering rather than a fold.
    #[test]
    fn clean_shader_reports_exactly_when_it_changed_something() {
        let shaders = [
            "(%x = load_input VAR0.x) (%z = const 32 0) (%p = fmul %x %z) \
             (store_output DATA0.x %p)",
            "(%x = load_input VAR0.x) (%y = load_input VAR0.y) (%w = load_input VAR0.z) \
             (%a = iand %w %y) (%b = iand %x %a) (%f = i2f32 %b) (store_output DATA0.x %f)",
            "(%x = load_input VAR0.x) (%k = const 1 1) \
             (if %k (then (%t = fneg %x)) (else) (%r = phi %t %x)) (store_output DATA0.x %r)",
            "(%x = load_input VAR0.x) (store_output DATA0.x %x) (store_output DATA0.x %x)",
        ];
        for (i, body) in shaders.into_iter().enumerate() {
            let mut p = parse(&format!(
                "(pair (producer vs (%a = load_input ATTR0.x) (store_output VAR0.x %a) \
                 (store_output VAR0.y %a) (store_output VAR0.z %a)) (consumer fs {body}))"
            ));
            let before = p.consumer.clone();
            let first = clean_shader(&mut p.consumer);
            let chain = i == 1;
            assert_eq!((first.folded, first.reordered), (!chain, chain), "{body}");
            assert_ne!(p.consumer, before, "{body}");
            let cleaned = p.consumer.clone();
            assert!(
                !clean_shader(&mut p.consumer).any(),
                "{body}: a second clean-up"
            );
            assert_eq!(p.consumer, cleaned, "{body}");
        }
    }

    #[test]
    fn a_constant_if_becomes_its_taken_branch_and_its_phis_moves() {
        let mut p = parse(
            "(pair (producer vs
               (%p = load_input ATTR0.x) (%k = const 1 1)
               (if %k (then (%t = fneg %p)) (else (%e = fabs %p)) (%r = phi %t %e))
               (store_output VAR0.x %r))
             (consumer fs (%x = load_input VAR0.x) (store_output DATA0.x %x)))",
        );
        fold_constant_ifs(&mut p.producer);
        let text = crate::text::print(&p);
        assert!(!text.contains("(if") && !text.contains("fabs"), "{text}");
        assert!(text.contains("(%r = mov %t)"), "{text}");
        crate::validate::validate(&p).expect("the folded pair validates");
    }

    #[test]
    fn an_if_whose_taken_branch_breaks_stays() {
        let mut p = parse(
            "(pair (producer vs
               (%p = load_input ATTR0.x) (%k = const 1 1)
               (loop (if %k (then (break)) (else)))
               (store_output VAR0.x %p))
             (consumer fs (%x = load_input VAR0.x) (store_output DATA0.x %x)))",
        );
        fold_constant_ifs(&mut p.producer);
        assert!(crate::text::print(&p).contains("(if"));
    }

    #[test]
    fn a_select_between_equal_constants_is_that_constant() {
        let p = parse(
            "(pair (producer vs
               (%a = const 32 1.0) (%b = const 32 1.0) (%z = const 32 0)
               (%c = load_input ATTR0.x) (%d = flt %c %a)
               (%same = bcsel %d %a %b) (%differ = bcsel %d %a %z)
               (store_output VAR0.x %same) (store_output VAR0.y %differ))
             (consumer fs (%x = load_interpolated_input VAR0.x persp center)
               (store_output DATA0.x %x)))",
        );
        let known = known_constants(&p.producer);
        let mut selects = vec![];
        p.producer.for_each_inst(|inst| {
            if let InstKind::Alu {
                op: AluOp::BCsel, ..
            } = inst.kind
            {
                selects.extend(inst.result);
            }
        });
        let [same, differ] = selects[..] else {
            panic!("two selects: {selects:?}")
        };
        assert_eq!(known.get(&same), Some(&0x3f80_0000));
        assert_eq!(known.get(&differ), None);
    }

    #[test]
    fn constant_outputs_need_every_store_alike_and_no_indirect_store() {
        let vs = |second: &str| {
            parse(&format!(
                "(pair (producer vs
                   (%a = const 32 1.0) (%b = const 32 2.0) (%i = load_input ATTR0.x)
                   (%c = load_input ATTR1.x) (%d = flt %c %b)
                   (if %d (then (store_output VAR0.x %a)) (else {second})))
                 (consumer fs (%x = load_interpolated_input VAR0.x persp center)
                   (store_output DATA0.x %x)))"
            ))
        };
        let mut p = vs("(store_output VAR0.x %a)");
        let fates = propagate_constant_outputs(&mut p);
        assert_eq!(fates.len(), 1);
        assert_eq!(fates[0].fate, Fate::Propagated("1f32".into()));
        assert!(crate::text::print(&p).contains("(%x = const 32 1.0)"));
        let mut p = vs("(store_output VAR0.x %b)");
        assert!(propagate_constant_outputs(&mut p).is_empty());
        let mut p = vs("(store_output VAR0.x %a) (store_output VAR1.x %b (indirect %i 2))");
        assert!(propagate_constant_outputs(&mut p).is_empty());
        // One top-level store: left to the e-graph, which reports it like any other.
        let mut p = parse(
            "(pair (producer vs (%a = const 32 1.0) (store_output VAR0.x %a))
             (consumer fs (%x = load_input VAR0.x) (store_output DATA0.x %x)))",
        );
        assert!(propagate_constant_outputs(&mut p).is_empty());
    }

    #[test]
    fn dead_computations_go_before_lowering_and_loads_and_effects_stay() {
        let mut p = parse(
            "(pair (producer vs (%a = load_input ATTR0.x) (%b = fneg %a)
               (store_output VAR0.x %a) (store_output VAR0.y %a))
             (consumer fs (%x = load_input VAR0.x) (%y = load_input VAR0.y)
               (%q = fdiv %y %x) (%r = flt %q %x) (%w = fsqrt %x)
               (%k = const 32 4) (%e = opaque atomic_iadd effect op:234 u32 (args u32 u32) (buffer 0) %k %x)
               (store_output DATA0.x %w)))",
        );
        simplify(&mut p);
        let text = crate::text::print(&p);
        // The producer's dead negation and the consumer's dead division and compare
        // are gone; the effect, the live work and every input load stay (the input's
        // varyings are as written).
        for gone in ["fneg", "fdiv", "flt"] {
            assert!(!text.contains(gone), "{gone} is left:\n{text}");
        }
        for kept in [
            "atomic_iadd",
            "fsqrt",
            "load_input VAR0.x",
            "load_input VAR0.y",
        ] {
            assert!(text.contains(kept), "{kept} is missing:\n{text}");
        }
    }

    #[test]
    fn work_a_late_fold_leaves_dead_goes_too_and_a_live_shader_is_left_alone() {
        // The division is live when `reassociate` surveys the shader; dropping the
        // overwritten store (after the survey) leaves it dead.
        let mut p = parse(
            "(pair (producer vs (%a = load_input ATTR0.x) (store_output VAR0.x %a))
             (consumer fs (%x = load_input VAR0.x) (%q = fdiv %x %x)
               (store_output DATA0.x %q) (%w = fsqrt %x) (store_output DATA0.x %w)))",
        );
        let mut consumer = p.consumer.clone();
        let cleaned = clean_shader(&mut consumer);
        assert!(cleaned.folded && cleaned.maybe_dead);
        simplify(&mut p);
        let text = crate::text::print(&p);
        assert!(!text.contains("fdiv") && text.contains("fsqrt"), "{text}");
        let mut live = parse(
            "(pair (producer vs (%a = load_input ATTR0.x) (store_output VAR0.x %a))
             (consumer fs (%x = load_input VAR0.x) (%w = fsqrt %x)
               (store_output DATA0.x %w)))",
        );
        assert_eq!(clean_shader(&mut live.consumer), Cleaned::default());
    }
}
