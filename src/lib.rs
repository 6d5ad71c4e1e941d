//! varysat optimizes the values passed between two linked GPU shader stages (the
//! *varyings*) by equality saturation: dead-output removal, constant and uniform
//! propagation, deduplication and cross-stage code motion are rewrite rules over one
//! e-graph holding both stages; extraction minimizes an AMD-weighted varying cost and a
//! packer assigns the survivors to vec4 slots.
//!
//! # The surface
//!
//! A compiler embedding varysat needs these modules, which follow semantic versioning:
//!
//! - [`ir`]: the pipeline of two stages ([`Pipeline`], [`Shader`], [`ir::ShaderBuilder`])
//!   and the [`ir::walk`] over nested statements;
//! - [`text`]: the `.pair` format ([`text::parse`], [`text::print`]); [`validate`];
//! - [`import`] (GLSL and SPIR-V in) and [`export`] (SPIR-V out);
//! - [`optimize()`] with its [`Options`] (rule set, cost profile, budgets, packing) and
//!   its [`Outcome`] / [`Report`];
//! - [`specialize`] (uniform inlining) and [`interpreter`] (running a pair, checking two
//!   pairs for equivalence);
//! - [`rulecheck`] (soundness of user rule files) and [`experiment`] (rule-set
//!   experiments over a corpus); [`error`].
//!
//! Everything else is the optimizer's machinery, reachable only through [`internals`]
//! for the benches, fuzz targets and tests: it changes without notice.
//!
//! # Example
//!
//! ```
//! use varysat::{optimize, Options};
//!
//! // The VS writes the same value to two varyings and a constant to a third.
//! let pair = varysat::text::parse(
//!     "(pair
//!        (producer vs
//!          (%a = load_input ATTR0.x)
//!          (%one = const 32 1.0)
//!          (store_output VAR0.x %a)
//!          (store_output VAR1.x %a)
//!          (store_output VAR2.x %one))
//!        (consumer fs
//!          (%x = load_interpolated_input VAR0.x persp center)
//!          (%y = load_interpolated_input VAR1.x persp center)
//!          (%z = load_interpolated_input VAR2.x persp center)
//!          (%s = fadd %x %y)
//!          (%t = fmul %s %z)
//!          (store_output DATA0.x %t)))",
//!     None,
//! )?;
//! let outcome = optimize(&pair, &Options::default())?;
//! // One interpolated component is left: the duplicate and the constant are gone.
//! assert_eq!(outcome.report.after.components, 1);
//! println!("{}", varysat::text::print(&outcome.pipeline));
//! # Ok::<(), varysat::Error>(())
//! ```
#![warn(missing_docs)]
// Bad input must end in an error, never a panic: library code has no `unwrap`,
// `expect` or `panic!` (tests and doc examples may use them; an invariant that
// cannot fail says so with `unreachable!` and its reason).
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub mod error;
pub mod experiment;
pub mod export;
pub mod import;
pub mod interpreter;
pub mod ir;
pub mod optimize;
pub mod rulecheck;
pub mod specialize;
pub mod text;
pub mod validate;

mod egraph;
mod extract;
mod gen;
mod input;
mod pack;

// Crate-internal short paths to the optimizer's emission-side stages.
pub(crate) use optimize::{emit, renumber};

pub use error::{Diagnostic, Error};
pub use ir::{Pipeline, Shader, Stage};
pub use optimize::{optimize, Options, Outcome, Report};

pub mod internals {
    //! The optimizer's machinery, for benches, fuzz targets, tests and the command-line
    //! tool. **Unstable**: anything here may change or disappear in any release.

    /// The e-graph: language, analysis, lowering, rule files, saturation.
    pub mod egraph {
        pub use crate::egraph::*;
    }
    /// Extraction: cost model, DAG pricing, exact and global extractors.
    pub mod extract {
        pub use crate::extract::*;
    }
    /// The vec4 slot packer.
    pub mod pack {
        pub use crate::pack::*;
    }
    /// Random pair generators for property tests and synthetic benches.
    pub mod gen {
        pub use crate::gen::*;
    }
    /// Reading input files and standard input with a size limit.
    pub mod input {
        pub use crate::input::*;
    }
    /// Slot assignment of the optimized varyings.
    pub mod assign {
        pub use crate::optimize::assign::*;
    }
    /// Emission of the selected e-graph terms back into shaders.
    pub mod emit {
        pub use crate::optimize::emit::*;
    }
    /// Cross-stage motion accounting.
    pub mod moves {
        pub use crate::optimize::moves::*;
    }
    /// Value-arena compaction.
    pub mod renumber {
        pub use crate::optimize::renumber::*;
    }
    pub use crate::optimize::instance::Instance;
}
