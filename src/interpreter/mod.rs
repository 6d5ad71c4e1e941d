//! The reference interpreter: runs a pipeline pair on seeded inputs and compares pipelines.
