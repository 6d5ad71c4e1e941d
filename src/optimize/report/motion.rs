//! The per-move part of the report: which way code crossed the stage boundary, what
//! it replaced and what it cost (found by [`crate::optimize::moves`]).

use std::fmt;

use crate::ir::IoSlot;

/// Which way code crossed the stage boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Direction {
    /// Consumer code now runs in the producer.
    Backward,
    /// Producer code now runs in the consumer.
    Forward,
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Backward => "backward",
            Direction::Forward => "forward",
        })
    }
}

/// One code motion in the optimized pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Move {
    /// Which way the code went.
    pub direction: Direction,
    /// The moved expression, in the stage that now computes it.
    pub expr: String,
    /// The original varyings (slots as written) the move made unnecessary.
    pub replaced: Vec<IoSlot>,
    /// The varyings (new slots) the move's result travels through or reads.
    pub via: Vec<IoSlot>,
    /// Estimated change of the model cost (negative: cheaper).
    pub cost_delta: i64,
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |s: &[IoSlot]| {
            s.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        };
        write!(
            f,
            "{} move {} replaces [{}] via [{}], cost {:+}",
            self.direction,
            self.expr,
            list(&self.replaced),
            list(&self.via),
            self.cost_delta
        )
    }
}

impl Move {
    /// The move as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        let names = |s: &[IoSlot]| s.iter().map(ToString::to_string).collect::<Vec<_>>();
        serde_json::json!({
            "direction": self.direction.to_string(),
            "expr": self.expr,
            "replaced": names(&self.replaced),
            "via": names(&self.via),
            "cost_delta": self.cost_delta,
        })
    }
}
