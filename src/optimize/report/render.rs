//! Rendering a [`Report`] as human-readable lines and as one JSON object.

use std::fmt;

use super::{Fate, Report};

impl fmt::Display for Fate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fate::Kept(s) => write!(f, "kept as {s}"),
            Fate::MergedInto { slot, with } => write!(f, "merged into {slot} (with {with})"),
            Fate::Propagated(e) => write!(f, "propagated as {e}"),
            Fate::Removed(r) => write!(f, "removed ({r})"),
            Fate::Pinned(r) => write!(f, "kept unchanged ({r})"),
            Fate::NoVarying(r) => write!(f, "kept with no_varying ({r})"),
            Fate::Moved(super::Direction::Backward) => {
                write!(f, "moved: the producer computes its use")
            }
            Fate::Moved(super::Direction::Forward) => {
                write!(f, "moved: the consumer recomputes it")
            }
        }
    }
}

impl Fate {
    fn tag(&self) -> &'static str {
        match self {
            Fate::Kept(_) => "kept",
            Fate::MergedInto { .. } => "merged",
            Fate::Propagated(_) => "propagated",
            Fate::Removed(_) => "removed",
            Fate::Pinned(_) => "pinned",
            Fate::NoVarying(_) => "no_varying",
            Fate::Moved(_) => "moved",
        }
    }
}

impl Report {
    /// The report as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        let varyings: Vec<serde_json::Value> = self
            .varyings
            .iter()
            .map(|v| {
                let mut o = serde_json::json!({
                    "slot": v.slot.to_string(),
                    "fate": v.fate.tag(),
                    "detail": v.fate.to_string(),
                });
                match &v.fate {
                    Fate::Kept(s) => o["new_slot"] = s.to_string().into(),
                    Fate::MergedInto { slot, with } => {
                        o["new_slot"] = slot.to_string().into();
                        o["merged_with"] = with.to_string().into();
                    }
                    Fate::Propagated(e) => o["expr"] = e.clone().into(),
                    _ => {}
                }
                o
            })
            .collect();
        serde_json::json!({
            "before": { "components": self.before.components, "slots": self.before.slots },
            "after": { "components": self.after.components, "slots": self.after.slots },
            "cost": {
                "before": self.cost_priced.then_some(self.cost_before.0),
                "after": self.cost_priced.then_some(self.cost_after.0),
                "profile": self.profile,
            },
            "egraph": { "nodes": self.egraph_nodes, "classes": self.egraph_classes, "iterations": self.iterations },
            "stop_reason": self.stop_reason,
            "rules_applied": self.rule_firings,
            "extraction": { "mode": self.extraction, "proved_optimal": self.proved_optimal },
            "time_ms": self.time.as_secs_f64() * 1000.0,
            "timings_ms": {
                "lower": ms(self.timings.lower),
                "saturate": ms(self.timings.saturate),
                "extract": ms(self.timings.extract),
                "emit": ms(self.timings.emit),
                "pack": ms(self.timings.pack),
            },
            "fallback": self.fallback,
            "budget_stops": self.budget_stops,
            "varyings": varyings,
            "moves": self.moves.iter().map(super::Move::to_json).collect::<Vec<_>>(),
            "specialization": self.specialization.as_ref().map(|s| s.to_json()),
        })
    }
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "varyings: {} components in {} slots -> {} components in {} slots",
            self.before.components, self.before.slots, self.after.components, self.after.slots
        )?;
        match self.cost_priced {
            true => writeln!(
                f,
                "cost ({}): {} -> {}",
                self.profile, self.cost_before, self.cost_after
            )?,
            false => writeln!(
                f,
                "cost ({}): not priced (the time limit ended first)",
                self.profile
            )?,
        }
        writeln!(
            f,
            "e-graph: {} nodes, {} classes, {} iterations, stopped: {}; {:.1} ms",
            self.egraph_nodes,
            self.egraph_classes,
            self.iterations,
            self.stop_reason,
            self.time.as_secs_f64() * 1000.0
        )?;
        if let Some(proved) = self.proved_optimal {
            let how = if proved {
                "proved optimal"
            } else {
                "time limit hit"
            };
            writeln!(f, "extraction: {}, {how}", self.extraction)?;
        }
        if let Some(why) = &self.fallback {
            writeln!(f, "input returned unchanged: {why}")?;
        }
        for stop in &self.budget_stops {
            writeln!(f, "budget: {stop}")?;
        }
        for v in &self.varyings {
            writeln!(f, "  {}: {}", v.slot, v.fate)?;
        }
        for m in &self.moves {
            writeln!(f, "  {m}")?;
        }
        if let Some(s) = &self.specialization {
            write!(f, "{s}")?;
        }
        Ok(())
    }
}
