//! SSA-level rewrites applied before lowering, for facts reference/000 states in
//! terms of SSA defs rather than e-classes and that the e-graph model keeps pinned:
//! a TCS output read-back of an output that every store fills with the same uniform
//! expression reads that expression (§3), colour outputs storing the same SSA value
//! with the same back colours are one varying (§1, "deduplicated among themselves"),
//! and so are TCS per-vertex outputs whose off-vertex stores are paired (§4,
//! `tcs_merge`). The clean-ups of `simplify` run first.

use std::collections::{BTreeMap, BTreeSet};

use super::report::VaryingReport;
use super::simplify::stored_values;
use crate::ir::{AluOp, InstKind, InterpMode, IoSlot, Pipeline, Shader, Slot, Stage, Stmt, Value};

/// A pair after the pre-pass, with the fates of the varyings it merged.
pub(crate) struct Prepared {
    pub pipeline: Pipeline,
    pub fates: Vec<VaryingReport>,
    /// The pre-pass changed nothing but dropping dead computations: the input is then
    /// priced as the pre-passed pair is, its dead work left out of the report's cost
    /// before (`Report::cost_before`) rather than priced by a second lowering.
    pub dead_computations_only: bool,
}

/// Applies the clean-ups of `simplify` and the rewrites; returns the input unchanged
/// when none applies.
pub(crate) fn prepare(p: &Pipeline) -> Prepared {
    let mut pipeline = p.clone();
    let simplified = super::simplify::simplify(&mut pipeline);
    let mut fates = simplified.fates;
    let tcs = pipeline.producer.stage() == Stage::TessCtrl;
    if tcs {
        propagate_read_backs(&mut pipeline.producer);
        fates.extend(super::tcs_merge::merge_paired_outputs(&mut pipeline));
    }
    if pipeline.consumer.stage() == Stage::Fragment {
        fates.extend(merge_colours(&mut pipeline));
    }
    // This copy lives until emission ends, through the heap's peak.
    pipeline.producer.shrink_to_fit();
    pipeline.consumer.shrink_to_fit();
    let dead_computations_only = !simplified.rewritten && !tcs && fates.is_empty();
    Prepared {
        pipeline,
        fates,
        dead_computations_only,
    }
}

/// Top-level definitions: value → (statement index, instruction kind).
fn top_level_defs(s: &Shader) -> BTreeMap<Value, (usize, &InstKind)> {
    let mut defs = BTreeMap::new();
    for (i, stmt) in s.body.iter().enumerate() {
        if let Stmt::Inst(inst) = stmt {
            if let Some(v) = inst.result {
                defs.insert(v, (i, &inst.kind));
            }
        }
    }
    defs
}

/// The uniform expressions (constants, uniforms, UBO loads at uniform offsets, pure
/// ALU over those) defined entirely at the top level. One pass in statement order: an
/// operand defined at the top level comes before its use, so its answer is known (no
/// recursion down a chain, no re-walk of shared operands).
pub(super) fn uniform_values(s: &Shader) -> BTreeSet<Value> {
    let mut out = BTreeSet::new();
    for stmt in &s.body {
        let Some((v, kind)) = stmt.as_def() else {
            continue;
        };
        let uniform = match kind {
            InstKind::Const(_) | InstKind::LoadUniform { .. } => true,
            InstKind::LoadUbo { offset, .. } => out.contains(offset),
            InstKind::Alu { srcs, .. } => srcs.iter().all(|s| out.contains(s)),
            _ => false,
        };
        if uniform {
            out.insert(v);
        }
    }
    out
}

/// TCS: a direct `load_output` of a slot whose every store stores one uniform
/// expression defined before the load becomes a `mov` of that expression. Reading
/// before any store returns undefined, which the expression may stand for.
fn propagate_read_backs(tcs: &mut Shader) {
    let stores = stored_values(tcs);
    let defs = top_level_defs(tcs);
    let uniform = uniform_values(tcs);
    let mut replace: BTreeMap<Value, Value> = BTreeMap::new();
    for (i, stmt) in tcs.body.iter().enumerate() {
        let Stmt::Inst(inst) = stmt else { continue };
        let (
            InstKind::LoadOutput {
                slot,
                indirect: None,
                ..
            },
            Some(result),
        ) = (&inst.kind, inst.result)
        else {
            continue;
        };
        let Some(Some(v)) = stores.get(slot) else {
            continue;
        };
        let dominates = defs.get(v).is_some_and(|(at, _)| *at < i);
        if dominates && uniform.contains(v) && tcs.bits(*v) == tcs.bits(result) {
            replace.insert(result, *v);
        }
    }
    tcs.for_each_inst_mut(|inst| {
        if let Some(v) = inst.result.and_then(|r| replace.get(&r)) {
            inst.kind = InstKind::Alu {
                op: AluOp::Mov,
                exact: false,
                srcs: vec![*v],
            };
        }
    });
}

/// The back colour that two-sided lighting pairs with a front colour address.
fn back_of(io: IoSlot) -> Option<IoSlot> {
    match io.slot {
        Slot::Col(n) => Some(IoSlot {
            slot: Slot::Bfc(n),
            ..io
        }),
        _ => None,
    }
}

/// Colour outputs stored once, at the top level, without xfb: address → value.
fn plain_colour_stores(vs: &Shader) -> BTreeMap<IoSlot, Value> {
    let mut count: BTreeMap<IoSlot, usize> = BTreeMap::new();
    vs.for_each_inst(|inst| {
        if let InstKind::StoreOutput { slot, .. } = &inst.kind {
            *count.entry(*slot).or_default() += 1;
        }
    });
    let mut out = BTreeMap::new();
    for stmt in &vs.body {
        let Stmt::Inst(inst) = stmt else { continue };
        if let InstKind::StoreOutput {
            slot,
            value,
            indirect: None,
            xfb: None,
            no_varying: false,
        } = &inst.kind
        {
            let colour = matches!(slot.slot, Slot::Col(_) | Slot::Bfc(_));
            if colour && count.get(slot) == Some(&1) {
                out.insert(*slot, *value);
            }
        }
    }
    out
}

/// How one load reads a colour: flat (`None`) or with a mode and its operands.
type LoadForm = Option<(InterpMode, Vec<Value>)>;

/// How the FS reads each colour address (the set of load forms); `None` marks an
/// address read indirectly, which stays as it is.
fn colour_reads(fs: &Shader) -> BTreeMap<IoSlot, Option<BTreeSet<LoadForm>>> {
    let mut out: BTreeMap<IoSlot, Option<BTreeSet<LoadForm>>> = BTreeMap::new();
    fs.for_each_inst(|inst| {
        let (slot, form, indirect) = match &inst.kind {
            InstKind::LoadInput { slot, indirect } => (*slot, None, indirect),
            InstKind::LoadInterpolatedInput {
                slot,
                mode,
                operands,
                indirect,
            } => (*slot, Some((*mode, operands.clone())), indirect),
            _ => return,
        };
        if !matches!(slot.slot, Slot::Col(_) | Slot::Bfc(_)) {
            return;
        }
        let entry = out.entry(slot).or_insert_with(|| Some(BTreeSet::new()));
        match (entry.as_mut(), indirect) {
            (Some(forms), None) => {
                forms.insert(form);
            }
            _ => *entry = None,
        }
    });
    out
}

/// Merges front colours that store the same SSA value, whose back colours agree (both
/// unwritten or the same value) and that the FS reads in the same forms.
fn merge_colours(p: &mut Pipeline) -> Vec<VaryingReport> {
    let stores = plain_colour_stores(&p.producer);
    let reads = colour_reads(&p.consumer);
    let written: BTreeSet<IoSlot> = stored_values(&p.producer).into_keys().collect();
    let back_value = |io: IoSlot| -> Option<Option<Value>> {
        let back = back_of(io)?;
        if !written.contains(&back) {
            return Some(None);
        }
        stores.get(&back).map(|v| Some(*v))
    };
    let mut merged: BTreeMap<IoSlot, IoSlot> = BTreeMap::new();
    let fronts: Vec<IoSlot> = stores
        .keys()
        .copied()
        .filter(|io| matches!(io.slot, Slot::Col(_)))
        .collect();
    for (i, keep) in fronts.iter().enumerate() {
        if merged.contains_key(keep) {
            continue;
        }
        for drop in &fronts[i + 1..] {
            let same_value = stores.get(keep) == stores.get(drop);
            let same_back = back_value(*keep).is_some() && back_value(*keep) == back_value(*drop);
            let same_reads = matches!(
                (reads.get(keep), reads.get(drop)),
                (Some(Some(a)), Some(Some(b))) if a == b
            );
            if same_value && same_back && same_reads && !merged.contains_key(drop) {
                merged.insert(*drop, *keep);
            }
        }
    }
    apply_colour_merges(p, &merged)
}

fn apply_colour_merges(p: &mut Pipeline, merged: &BTreeMap<IoSlot, IoSlot>) -> Vec<VaryingReport> {
    let gone: BTreeSet<IoSlot> = merged
        .keys()
        .flat_map(|io| [Some(*io), back_of(*io)])
        .flatten()
        .collect();
    let drop_stores = |block: &mut Vec<Stmt>| {
        block.retain(|s| {
            !matches!(s, Stmt::Inst(i)
                if matches!(&i.kind, InstKind::StoreOutput { slot, .. } if gone.contains(slot)))
        })
    };
    drop_stores(&mut p.producer.body);
    p.consumer.for_each_inst_mut(|inst| match &mut inst.kind {
        InstKind::LoadInput { slot, .. } | InstKind::LoadInterpolatedInput { slot, .. } => {
            if let Some(keep) = merged.get(slot) {
                *slot = *keep;
            }
        }
        _ => {}
    });
    VaryingReport::merges(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(src: &str) -> Pipeline {
        crate::text::parse(src, None).expect("test pair parses")
    }

    /// The parsed input and the pre-passed copy live through emission, the heap's
    /// peak at 100k instructions (docs/performance.md): neither keeps the slack of
    /// a table that grew by doubling. Re-association adds values and statements
    /// here, so its output would hold up to twice what it uses without the shrink.
    #[test]
    fn parsed_and_prepared_shaders_hold_no_growth_slack() {
        let mut text = String::from("(pair (producer vs");
        for i in 0..32 {
            // `(b + 3) + (c + 5)`: rebuilt as `b + c + 8`, a new constant and value.
            text.push_str(&format!(
                " (%f{i} = load_input ATTR0.x) (%b{i} = f2i32 %f{i}) (%c{i} = f2u32 %f{i})
                  (%k{i} = const 32 3) (%l{i} = const 32 5) (%x{i} = iadd %b{i} %k{i})
                  (%y{i} = iadd %c{i} %l{i}) (%z{i} = iadd %x{i} %y{i})
                  (%e{i} = i2f32 %z{i}) (store_output VAR{}.{} %e{i})",
                i / 4,
                ["x", "y", "z", "w"][i % 4],
            ));
        }
        text.push(')');
        text.push_str(" (consumer fs (%x = load_input VAR0.x) (store_output DATA0.x %x)))");
        let p = parse(&text);
        let exact =
            |s: &Shader| (s.values.capacity(), s.body.capacity()) == (s.values.len(), s.body.len());
        assert!(exact(&p.producer) && exact(&p.consumer), "parsed");
        let prepared = prepare(&p).pipeline;
        assert!(
            exact(&prepared.producer) && exact(&prepared.consumer),
            "prepared"
        );
    }

    #[test]
    fn read_back_of_a_uniform_store_becomes_the_uniform() {
        let p = parse(
            "(pair (uniforms 1)
              (producer tcs
                (%id = load_system_value invocation_id)
                (%u = load_uniform 0)
                (store_per_vertex_output VAR0.x %u %id)
                (barrier)
                (%k = const 32 0)
                (%r = load_output VAR0.x %k)
                (store_output PATCH0.x %r))
              (consumer tes
                (%p = load_input PATCH0.x)
                (store_output POS.x %p)))",
        );
        let out = prepare(&p).pipeline;
        let mut movs = 0;
        out.producer.for_each_inst(|i| {
            assert!(
                !matches!(i.kind, InstKind::LoadOutput { .. }),
                "{:?}",
                i.kind
            );
            movs += matches!(i.kind, InstKind::Alu { op: AluOp::Mov, .. }) as usize;
        });
        assert_eq!(movs, 1);
        crate::validate::validate(&out).unwrap();
    }

    #[test]
    fn read_back_of_a_per_vertex_value_stays() {
        let p = parse(
            "(pair
              (producer tcs
                (%id = load_system_value invocation_id)
                (%a = load_per_vertex_input VAR0.x %id)
                (store_per_vertex_output VAR0.x %a %id)
                (barrier)
                (%k = const 32 0)
                (%r = load_output VAR0.x %k)
                (store_output PATCH0.x %r))
              (consumer tes
                (%p = load_input PATCH0.x)
                (store_output POS.x %p)))",
        );
        assert_eq!(prepare(&p).pipeline, p);
    }

    fn colour_pair(back: &str, second_read: &str) -> Pipeline {
        parse(&format!(
            "(pair
              (producer vs
                (%a = load_input ATTR0.x)
                (%b = load_input ATTR0.y)
                (store_output COL0.x %a)
                (store_output COL1.x %a)
                {back})
              (consumer fs
                (%x = load_interpolated_input COL0.x persp center)
                (%y = {second_read})
                (%s = fadd %x %y)
                (store_output DATA0.x %s)))"
        ))
    }

    #[test]
    fn equal_colours_merge_only_with_equal_back_colours_and_reads() {
        let same_read = "load_interpolated_input COL1.x persp center";
        let merged = prepare(&colour_pair("", same_read));
        assert_eq!(merged.fates.len(), 1, "COL1.x merges into COL0.x");
        crate::validate::validate(&merged.pipeline).unwrap();

        // Two-sided lighting could pick BFC1.x, which differs from BFC0.x (unwritten).
        let other_back = colour_pair("(store_output BFC1.x %b)", same_read);
        assert!(prepare(&other_back).fates.is_empty());
        assert_eq!(prepare(&other_back).pipeline, other_back);

        // Read with another interpolation: one varying cannot serve both.
        let other_read = colour_pair("", "load_interpolated_input COL1.x linear center");
        assert!(prepare(&other_read).fates.is_empty());
    }
}
