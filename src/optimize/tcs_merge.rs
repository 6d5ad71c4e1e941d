//! Deduplication of TCS per-vertex outputs that the e-graph keeps pinned: components
//! stored at a vertex other than `invocation_id` with a value that may differ between
//! invocations (`out[0].x = in[gl_InvocationID].x`). Each such vertex holds whatever
//! the invocation that stored there last wrote, and which one that is is not fixed,
//! so lowering cannot give the component one value. Two components whose stores are
//! *paired* still hold the same value at every vertex whatever the order, and one of
//! them goes: its TES loads (and TCS read-backs) read the other (Mesa deduplicates
//! outputs whose every store stores one SSA value; see `docs/design.md`, Known
//! limits, for the condition and where it is stricter than Mesa's).
//!
//! Paired means: the two components' stores, listed in program order, are the same
//! list of (segment, stored value, vertex), where a *segment* is a run of plain
//! instructions of one block with no barrier in it (an `if`, a loop, a jump or a
//! barrier starts a new one). Stores in one segment run together in every invocation
//! that reaches it, in the same phase, with nothing between them that could see one
//! component written and the other not; so every invocation writes both components
//! alike, and the last writer of a vertex is the same for both. Neither component may
//! be touched by an indirectly indexed access or by a TCS `store_output`, and a
//! read-back of either may not sit in a segment that stores them (it could see one
//! written and the other not yet).

use std::collections::{BTreeMap, BTreeSet};

use super::report::VaryingReport;
use crate::ir::{
    walk, BitSize, Indirect, InstKind, IoSlot, Pipeline, Shader, Stage, Stmt, SystemValue, Value,
    Visit,
};

/// What a store's value or vertex operand is, up to what makes two operands equal in
/// every invocation: the same SSA value, any load of `invocation_id`, or a constant
/// of the same bits and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Operand {
    Value(Value),
    InvocationId,
    Const(u32, BitSize),
}

/// One store of a component: its segment, value and vertex.
type Store = (usize, Operand, Operand);

/// What the walk learned about one per-vertex component.
#[derive(Default)]
struct Component {
    /// Its direct `store_per_vertex_output`s, in program order.
    stores: Vec<Store>,
    /// The segments of its direct read-backs.
    read_backs: BTreeSet<usize>,
    /// Touched by an indirect access or a `store_output`: never merged.
    excluded: bool,
}

impl Component {
    /// Whether the component is one lowering pins for its off-vertex stores and this
    /// pass may merge.
    fn candidate(&self) -> bool {
        let off_vertex = self.stores.iter().any(|s| s.2 != Operand::InvocationId);
        let racing_read = self.stores.iter().any(|s| self.read_backs.contains(&s.0));
        off_vertex && !self.excluded && !racing_read
    }
}

/// Merges paired TCS per-vertex outputs (see the module comment); returns the fates of
/// the removed components.
pub(crate) fn merge_paired_outputs(p: &mut Pipeline) -> Vec<VaryingReport> {
    if p.producer.stage() != Stage::TessCtrl || p.consumer.stage() != Stage::TessEval {
        return vec![];
    }
    let mut components = producer_components(&p.producer);
    exclude_indirect_reads(&p.consumer, &mut components);
    let merged = pairs(&components);
    if merged.is_empty() {
        return vec![];
    }
    apply(p, &merged);
    VaryingReport::merges(&merged)
}

/// Every component of a slot an indirect access with this base and index may reach.
fn reached(base: IoSlot, ind: &Indirect) -> impl Iterator<Item = crate::ir::Slot> {
    (0..ind.len as u32).filter_map(move |i| base.slot.offset(i))
}

/// Marks the components of every slot an indirect access reaches (any component:
/// conservative) as excluded.
fn exclude_reached(components: &mut BTreeMap<IoSlot, Component>, base: IoSlot, ind: &Indirect) {
    let slots: BTreeSet<_> = reached(base, ind).collect();
    for (io, c) in components.iter_mut() {
        if slots.contains(&io.slot) {
            c.excluded = true;
        }
    }
    // A component reached only indirectly has no entry yet; it has no direct store
    // either, so it is no candidate anyway.
}

/// The TCS walk: stores, read-backs and exclusions per component, with segments.
fn producer_components(tcs: &Shader) -> BTreeMap<IoSlot, Component> {
    let operand = operand_keys(tcs);
    let key = |v: Value| operand.get(&v).copied().unwrap_or(Operand::Value(v));
    let mut components: BTreeMap<IoSlot, Component> = BTreeMap::new();
    let mut indirect: Vec<(IoSlot, Indirect)> = vec![];
    let mut segment = 0;
    for visit in walk(&tcs.body) {
        let inst = match visit {
            Visit::Enter(Stmt::Inst(inst)) if inst.kind != InstKind::Barrier => inst,
            _ => {
                // Control flow, a jump or a barrier: what follows is another segment.
                segment += 1;
                continue;
            }
        };
        match &inst.kind {
            InstKind::StorePerVertexOutput {
                slot,
                value,
                vertex,
                indirect: None,
            } => {
                let c = components.entry(*slot).or_default();
                c.stores.push((segment, key(*value), key(*vertex)));
            }
            InstKind::LoadOutput {
                slot,
                indirect: None,
                ..
            } => {
                components
                    .entry(*slot)
                    .or_default()
                    .read_backs
                    .insert(segment);
            }
            InstKind::StoreOutput {
                slot,
                indirect: None,
                ..
            } => components.entry(*slot).or_default().excluded = true,
            InstKind::StorePerVertexOutput {
                slot,
                indirect: Some(ind),
                ..
            }
            | InstKind::StoreOutput {
                slot,
                indirect: Some(ind),
                ..
            }
            | InstKind::LoadOutput {
                slot,
                indirect: Some(ind),
                ..
            } => indirect.push((*slot, *ind)),
            _ => {}
        }
    }
    for (base, ind) in indirect {
        exclude_reached(&mut components, base, &ind);
    }
    components
}

/// Operand keys of the values that are not plain SSA identities: `invocation_id`
/// loads and constants.
fn operand_keys(s: &Shader) -> BTreeMap<Value, Operand> {
    let mut out = BTreeMap::new();
    s.for_each_inst(|inst| {
        let Some(r) = inst.result else { return };
        let key = match &inst.kind {
            InstKind::LoadSystemValue(SystemValue::InvocationId) => Operand::InvocationId,
            InstKind::Const(bits) => Operand::Const(*bits, s.bits(r)),
            _ => return,
        };
        out.insert(r, key);
    });
    out
}

/// Excludes the components a TES load reaches indirectly: it cannot be redirected.
fn exclude_indirect_reads(tes: &Shader, components: &mut BTreeMap<IoSlot, Component>) {
    let mut indirect = vec![];
    tes.for_each_inst(|inst| {
        if let InstKind::LoadPerVertexInput {
            slot,
            indirect: Some(ind),
            ..
        }
        | InstKind::LoadInput {
            slot,
            indirect: Some(ind),
        } = &inst.kind
        {
            indirect.push((*slot, *ind));
        }
    });
    for (base, ind) in indirect {
        exclude_reached(components, base, &ind);
    }
}

/// Removed component → the component that stays: candidates with the same list of
/// stores, each merged into the first (lowest address) of its group.
fn pairs(components: &BTreeMap<IoSlot, Component>) -> BTreeMap<IoSlot, IoSlot> {
    let mut first: BTreeMap<&[Store], IoSlot> = BTreeMap::new();
    let mut merged = BTreeMap::new();
    for (io, c) in components {
        if io.slot.is_patch() || !c.candidate() {
            continue;
        }
        match first.get(c.stores.as_slice()) {
            Some(keep) => {
                merged.insert(*io, *keep);
            }
            None => {
                first.insert(&c.stores, *io);
            }
        }
    }
    merged
}

/// Deletes the removed components' stores and points their loads (TES inputs, TCS
/// read-backs) at the components that stay.
fn apply(p: &mut Pipeline, merged: &BTreeMap<IoSlot, IoSlot>) {
    crate::ir::for_each_block_mut(&mut p.producer.body, |block| {
        block.retain(|s| {
            !matches!(s, Stmt::Inst(i)
                if matches!(&i.kind, InstKind::StorePerVertexOutput { slot, .. }
                    if merged.contains_key(slot)))
        })
    });
    p.producer.for_each_inst_mut(|inst| {
        if let InstKind::LoadOutput { slot, .. } = &mut inst.kind {
            if let Some(keep) = merged.get(slot) {
                *slot = *keep;
            }
        }
    });
    p.consumer.for_each_inst_mut(|inst| {
        if let InstKind::LoadPerVertexInput { slot, .. } | InstKind::LoadInput { slot, .. } =
            &mut inst.kind
        {
            if let Some(keep) = merged.get(slot) {
                *slot = *keep;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interpreter::{check_equivalent, EquivConfig};
    use crate::optimize::report::Fate;

    fn parse(src: &str) -> Pipeline {
        crate::text::parse(src, None).expect("test pair parses")
    }

    fn io(text: &str) -> IoSlot {
        let (slot, comp) = text.split_once('.').expect("SLOT.c");
        let n: u8 = slot.trim_start_matches("VAR").parse().expect("VARn");
        IoSlot::var(n, "xyzw".find(comp).expect("a component") as u8)
    }

    /// Every case of `tcs_paired_stores_kept.pair` is left alone, and forcing its merge
    /// anyway is a mismatch the interpreter reports: the file's negatives are real.
    #[test]
    fn unpaired_stores_stay_and_merging_them_is_caught() {
        let p = parse(include_str!("../../tests/opt/tcs_paired_stores_kept.pair"));
        let mut kept = p.clone();
        assert!(merge_paired_outputs(&mut kept).is_empty());
        assert_eq!(kept, p);
        let cfg = EquivConfig {
            runs: 8,
            ..EquivConfig::default()
        };
        let wrong = [
            ("VAR1.x", "VAR0.x"),
            ("VAR2.x", "VAR0.x"),
            ("VAR3.x", "VAR0.x"),
            ("VAR4.x", "VAR0.x"),
            ("VAR6.x", "VAR5.x"),
            ("VAR7.x", "VAR0.x"),
        ];
        for (drop, keep) in wrong {
            let mut merged = p.clone();
            apply(&mut merged, &BTreeMap::from([(io(drop), io(keep))]));
            crate::validate::validate(&merged).expect("still valid IR");
            let found = check_equivalent(&p, &merged, &cfg);
            assert!(found.is_err(), "merging {drop} into {keep} went unnoticed");
        }
    }

    /// The paired cases of `tcs_paired_stores.pair` merge, and the result is
    /// equivalent to the input.
    #[test]
    fn paired_stores_merge_and_stay_equivalent() {
        let p = parse(include_str!("../../tests/opt/tcs_paired_stores.pair"));
        let mut merged = p.clone();
        let fates = merge_paired_outputs(&mut merged);
        let pairs: Vec<(IoSlot, IoSlot)> = fates
            .iter()
            .map(|f| match f.fate {
                Fate::MergedInto { slot, .. } => (f.slot, slot),
                _ => panic!("only merges"),
            })
            .collect();
        let want = [("VAR1.x", "VAR0.x"), ("VAR3.x", "VAR2.x")];
        let want = want
            .iter()
            .chain(&[("VAR5.x", "VAR4.x"), ("VAR7.x", "VAR6.x")]);
        assert_eq!(pairs, want.map(|(d, k)| (io(d), io(k))).collect::<Vec<_>>());
        crate::validate::validate(&merged).expect("valid IR");
        let cfg = EquivConfig {
            runs: 8,
            ..EquivConfig::default()
        };
        check_equivalent(&p, &merged, &cfg).expect("paired stores merge soundly");
    }

    /// A TES read of the array holding a component through a dynamic slot index
    /// cannot be redirected, so neither component of the pair merges.
    #[test]
    fn an_indirect_read_keeps_the_pair() {
        let pair = |tes_read: &str| {
            parse(&format!(
                "(pair
                  (uniforms 1)
                  (producer tcs
                    (%id = load_system_value invocation_id)
                    (%k0 = const 32 0)
                    (%a = load_per_vertex_input VAR0.x %id)
                    (store_per_vertex_output VAR0.x %a %k0)
                    (store_per_vertex_output VAR1.x %a %k0))
                  (consumer tes
                    (%k0 = const 32 0)
                    (%i = load_uniform 0)
                    (%x = load_per_vertex_input VAR0.x %k0)
                    (%y = {tes_read})
                    (%s = fadd %x %y)
                    (store_output POS.x %s)))"
            ))
        };
        let direct = pair("load_per_vertex_input VAR1.x %k0");
        assert_eq!(merge_paired_outputs(&mut direct.clone()).len(), 1);
        let indirect = pair("load_per_vertex_input VAR0.x %k0 (indirect %i 2)");
        assert!(merge_paired_outputs(&mut indirect.clone()).is_empty());
    }

    /// On random TCS → TES pairs (the generator stores invocation-dependent values at
    /// constant vertices, paired or nearly so): the pass merges some components, and
    /// every result is interpreter-equivalent to its input.
    #[test]
    fn random_pairs_merge_soundly() {
        use proptest::strategy::{Strategy, ValueTree};
        use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
        let strategy = crate::gen::arb_pipeline_for(Stage::TessCtrl, Stage::TessEval);
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]);
        let mut runner = TestRunner::new_with_rng(Config::default(), rng);
        let (mut pairs, mut merged) = (0, 0);
        for _ in 0..300 {
            let p = strategy.new_tree(&mut runner).expect("a pair").current();
            let mut out = p.clone();
            let fates = merge_paired_outputs(&mut out);
            if fates.is_empty() {
                continue;
            }
            pairs += 1;
            merged += fates.len();
            crate::validate::validate(&out).expect("valid IR");
            if let Err(e) = check_equivalent(&p, &out, &EquivConfig::default()) {
                panic!("{e}\n{}", crate::text::print(&p));
            }
        }
        assert!(pairs >= 10, "only {pairs} of 300 random pairs had a merge");
        assert!(merged >= pairs);
    }
}
