//! The e-graph of a pair: language, analysis, lowering (with GS per-emit factoring),
//! the rule-file loader and bounded saturation with incremental e-matching.

pub mod analysis;
pub mod clock;
pub mod comm_match;
pub mod fresh;
pub mod incremental;
pub mod lang;
pub mod lower;
pub mod meet;
pub mod per_emit;
pub mod reach;
pub mod recompute;
pub mod region;
pub mod rules;
pub mod saturate;
pub(crate) mod sexp;
pub mod share;
pub mod sharing;
mod template;
pub(crate) mod typecheck;

pub use analysis::{VAnalysis, VData, VGraph, OPAQUE_COST};
pub use lang::{Side, VNode, XferMode};
pub use rules::{Compiled, Cond, RuleDef, RuleSet};
pub use saturate::{
    Budgets, Matching, Scheduler, Stop, DEFAULT_ITER_LIMIT, DEFAULT_NODES_PER_LOWERED,
    DEFAULT_NODE_LIMIT, DEFAULT_TIME_LIMIT,
};
