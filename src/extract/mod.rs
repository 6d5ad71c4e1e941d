//! Extraction: the cost model and the DAG extractor that picks one term per root.

pub mod cost;
pub mod dag;

pub use cost::{Cost, CostModel};
pub use dag::{Ctx, DagCost, DagExtractor, Extractor, Problem, Selection, VaryingKey, VaryingKind};
