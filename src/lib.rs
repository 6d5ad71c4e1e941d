//! varysat optimizes the values passed between two linked GPU shader stages (the
//! *varyings*) by equality saturation: dead-output removal, constant and uniform
//! propagation, deduplication and cross-stage code motion are rewrite rules over one
//! e-graph holding both stages; extraction minimizes an AMD-weighted varying cost and a
//! packer assigns the survivors to vec4 slots.
#![warn(missing_docs)]

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub mod error;
pub mod gen;
pub mod ir;

pub use error::{Diagnostic, Error};
pub use ir::{Pipeline, Shader, Stage};
pub mod egraph;
pub mod extract;
pub mod import;
pub mod input;
pub mod interpreter;
pub mod optimize;
pub mod pack;
pub mod rulecheck;
// The optimizer's stages live in `optimize/`; these re-exports keep the old root
// paths working until the public API is curated.
pub use optimize::{assign, emit, moves, renumber};
pub mod specialize;
pub mod text;
pub mod validate;
pub use optimize::{optimize, Options, Outcome, Report};
pub mod experiment;
pub mod export;
