//! Extraction: the cost model, the DAG extractor that picks one term per root, the
//! global set search over transferred values (re-extracting and re-pricing each
//! candidate incrementally), the exact branch-and-bound and the mode
//! that selects between them.

pub mod cost;
pub mod dag;
pub mod exact;
pub mod global;
mod incremental;
pub mod mode;
mod priced;
mod reprice;
mod tally;

pub use cost::{Cost, CostModel};
pub use dag::{Ctx, DagCost, DagExtractor, Extractor, Problem, Selection, VaryingKey, VaryingKind};
pub use exact::{ExactExtractor, ExactOutcome};
pub use global::GlobalExtractor;
pub use mode::{Extracted, Extraction};
