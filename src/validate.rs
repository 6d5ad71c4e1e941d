//! The IR's invariants: SSA dominance, bit sizes, stage legality of intrinsics and slots.
