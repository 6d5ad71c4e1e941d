//! The report of an optimization run: what happened to every original varying
//! ([`Fate`]), the counts and costs before and after, the e-graph statistics, phase
//! timings and the cross-stage code motions ([`Move`]). The stages fill it in; this
//! module only holds the types, their rendering as text and JSON ([`render`]) and the
//! composition of two rounds' reports ([`compose`]). It depends on no stage.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::extract::Cost;
use crate::ir::{IoSlot, Pipeline};

pub(crate) mod compose;
pub mod motion;
mod render;
pub(crate) mod term;

pub use motion::{Direction, Move};

/// What happened to one original varying component.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Still a varying, now in this slot.
    Kept(IoSlot),
    /// Shares the varying of `with` (an original slot), now in `slot`.
    MergedInto {
        /// The new slot.
        slot: IoSlot,
        /// The original varying it was merged with.
        with: IoSlot,
    },
    /// The consumer now computes it itself.
    Propagated(String),
    /// Gone.
    Removed(String),
    /// Left exactly as written (pinned).
    Pinned(String),
    /// Store kept for fixed function / xfb only, with `no_varying`.
    NoVarying(String),
    /// Replaced by a cross-stage code motion (see [`Report::moves`]).
    Moved(Direction),
}

/// One original varying component and its fate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VaryingReport {
    /// The original slot.
    pub slot: IoSlot,
    /// What happened.
    pub fate: Fate,
}

impl VaryingReport {
    /// The fates of merges found before lowering: each dropped component (a key)
    /// shares the component it is merged into (its value), which keeps its slot.
    pub(crate) fn merges(
        merged: &std::collections::BTreeMap<IoSlot, IoSlot>,
    ) -> Vec<VaryingReport> {
        merged
            .iter()
            .map(|(drop, keep)| VaryingReport {
                slot: *drop,
                fate: Fate::MergedInto {
                    slot: *keep,
                    with: *keep,
                },
            })
            .collect()
    }
}

/// Varying components and vec4 slots crossing between the stages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Scalar components (two 16-bit halves of one component count once).
    pub components: usize,
    /// vec4 slots.
    pub slots: usize,
}

/// Wall time of each phase of a run (summed over both runs when the xfb retry ran).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timings {
    /// Lowering the pair into the e-graph (and costing the input as written).
    pub lower: Duration,
    /// Equality saturation.
    pub saturate: Duration,
    /// DAG extraction.
    pub extract: Duration,
    /// Slot choice, emission, dead-code removal and validation of the result.
    pub emit: Duration,
    /// The final vec4 packing.
    pub pack: Duration,
}

impl std::ops::Add for Timings {
    type Output = Timings;
    fn add(self, o: Timings) -> Timings {
        Timings {
            lower: self.lower + o.lower,
            saturate: self.saturate + o.saturate,
            extract: self.extract + o.extract,
            emit: self.emit + o.emit,
            pack: self.pack + o.pack,
        }
    }
}

/// What an optimization run did.
#[derive(Clone, Debug)]
pub struct Report {
    /// Per original varying component, sorted by slot.
    pub varyings: Vec<VaryingReport>,
    /// Before.
    pub before: Counts,
    /// After.
    pub after: Counts,
    /// Model cost of the input, without computations nothing uses (the pre-pass
    /// drops them, as a driver's compile would, and the input is priced alike).
    pub cost_before: Cost,
    /// Model cost of the output.
    pub cost_after: Cost,
    /// Whether the costs were computed: false when the time budget ended before the
    /// input was even priced (both costs are then 0 and mean nothing).
    pub cost_priced: bool,
    /// Cost profile used.
    pub profile: String,
    /// E-nodes after saturation.
    pub egraph_nodes: usize,
    /// E-classes after saturation.
    pub egraph_classes: usize,
    /// Saturation iterations.
    pub iterations: usize,
    /// Why saturation stopped.
    pub stop_reason: String,
    /// Wall time of the whole run.
    pub time: Duration,
    /// Wall time per phase.
    pub timings: Timings,
    /// Successful applications per rewrite during saturation (see
    /// [`crate::egraph::saturate::SaturationStats::applied`]).
    pub rule_firings: BTreeMap<String, usize>,
    /// Extraction mode used (`fast` or `exact`).
    pub extraction: &'static str,
    /// Exact mode only: whether the extraction was proved optimal within its limit.
    pub proved_optimal: Option<bool>,
    /// Set when emission failed and the input was returned unchanged.
    pub fallback: Option<String>,
    /// Cross-stage code motions the result makes.
    pub moves: Vec<Move>,
    /// What inlining known uniform words did, when `Options::known` named any.
    pub specialization: Option<crate::specialize::SpecializeReport>,
    /// Each budget that cut a stage short, as `stage: budget (limit)`; empty when the
    /// run finished within all of them.
    pub budget_stops: Vec<String>,
}

/// The optimized pair and its report.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The optimized pipeline.
    pub pipeline: Pipeline,
    /// What happened.
    pub report: Report,
}
