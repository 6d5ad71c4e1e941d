//! Rule-set experiments: every (rule set × cost profile) configuration run over a
//! corpus of pairs in parallel, aggregated per configuration, and written as a table,
//! JSON, CSV or an SVG chart. `varysat experiment` is a thin layer over this module.

pub mod chart;
pub mod config;
pub mod corpus;
pub mod csv;
pub mod json;
pub mod run;
pub mod summary;
pub mod table;

pub use config::{load_cost, load_rules, matrix, Config};
pub use corpus::{load_corpus, CorpusPair};
pub use run::{run_matrix, AluCounts, ExactGap, PairRun, RunOptions};
pub use summary::{summarize, ConfigSummary, Experiment, PairSpread, StageTotals};
