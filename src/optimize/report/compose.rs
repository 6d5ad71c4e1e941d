//! Composing the reports of two optimization rounds (the second run on the first's
//! output) into one report about the original pair: fates follow each original
//! varying through both rounds, and the second round's moves name original slots.

use std::collections::BTreeMap;

use super::{Fate, Report};
use crate::ir::IoSlot;

/// The original slots whose varying the first round put in each of its new slots.
fn origins(first: &Report) -> BTreeMap<IoSlot, Vec<IoSlot>> {
    let mut out: BTreeMap<IoSlot, Vec<IoSlot>> = BTreeMap::new();
    for v in &first.varyings {
        if let Fate::Kept(s) | Fate::MergedInto { slot: s, .. } = v.fate {
            out.entry(s).or_default().push(v.slot);
        }
    }
    out
}

/// The fate of an original varying the first round kept in `mid`.
fn through(second: &BTreeMap<IoSlot, Fate>, first_fate: &Fate, mid: IoSlot) -> Fate {
    let owner = match first_fate {
        Fate::MergedInto { with, .. } => Some(*with),
        _ => None,
    };
    match second.get(&mid) {
        Some(Fate::Kept(s)) => match owner {
            Some(with) => Fate::MergedInto { slot: *s, with },
            None => Fate::Kept(*s),
        },
        Some(Fate::MergedInto { slot, .. }) => Fate::MergedInto {
            slot: *slot,
            with: owner.unwrap_or(mid),
        },
        Some(other) => other.clone(),
        None => first_fate.clone(),
    }
}

/// `first` followed by `second`, as one report about the first round's input.
pub(crate) fn compose(first: Report, second: Report) -> Report {
    let later: BTreeMap<IoSlot, Fate> = second
        .varyings
        .iter()
        .map(|v| (v.slot, v.fate.clone()))
        .collect();
    let back = origins(&first);
    let mut out = first.clone();
    for v in &mut out.varyings {
        if let Fate::Kept(mid) | Fate::MergedInto { slot: mid, .. } = v.fate {
            v.fate = through(&later, &v.fate, mid);
        }
    }
    for mut m in second.moves {
        let replaced: Vec<IoSlot> = m
            .replaced
            .iter()
            .flat_map(|s| back.get(s).cloned().unwrap_or_else(|| vec![*s]))
            .collect();
        m.replaced = replaced;
        m.replaced.sort();
        m.replaced.dedup();
        out.moves.push(m);
    }
    out.after = second.after;
    out.cost_after = second.cost_after;
    out.cost_priced &= second.cost_priced;
    out.time = first.time + second.time;
    out.budget_stops.extend(second.budget_stops);
    out
}
