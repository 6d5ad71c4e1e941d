//! Properties of `optimize` on random well-formed pairs from `varysat::gen`: the
//! optimized pair validates (no fallback), the reference interpreter sees the same
//! observable behaviour, varying slots never increase, and a second run changes
//! nothing more. `VARYSAT_PROPTEST_CASES` sets the number of cases.
//!
//! The equivalence property leaves out pairs in which an *interpolated* input was
//! replaced by the propagated value: the interpreter interpolates a value stored alike
//! at every vertex with rounding (`Σ λk·v` is not exactly `v`), and a comparison or a
//! texture fetch downstream turns that last-bit difference into an arbitrary one.
//! (AMD hardware interpolates as `p0 + i·(p1-p0) + j·(p2-p0)`, which is exact for
//! equal values.) Flat, per-vertex and patch propagation, removal and deduplication
//! are always checked.

use proptest::prelude::*;
use std::collections::BTreeSet;
use varysat::gen::{arb_readable, GenConfig};
use varysat::interpreter::{check_equivalent, EquivConfig};

use varysat::ir::InstKind;
use varysat::optimize::Fate;
use varysat::{optimize, Options};

fn cases(default: u32) -> u32 {
    std::env::var("VARYSAT_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(64)))]

    #[test]
    fn optimize_is_sound_and_idempotent(p in arb_readable(GenConfig::default())) {
        let p = p.0;
        let out = optimize(&p, &Options::new()).expect("a valid pair optimizes");
        let r = &out.report;
        prop_assert_eq!(&r.fallback, &None, "{}", r);
        prop_assert!(r.after.slots <= r.before.slots, "{}", r);
        let mut interpolated = BTreeSet::new();
        p.consumer.for_each_inst(|i| {
            if let InstKind::LoadInterpolatedInput { slot, .. } = &i.kind {
                interpolated.insert(*slot);
            }
        });
        let rounding = r.varyings.iter().any(|v| {
            matches!(v.fate, Fate::Propagated(_)) && interpolated.contains(&v.slot)
        });
        let cfg = EquivConfig { runs: 2, ..EquivConfig::default() };
        if rounding {
            // Validity, slots and idempotence are still checked below.
        } else if let Err(e) = check_equivalent(&p, &out.pipeline, &cfg) {
            prop_assert!(false, "not equivalent: {}\n{}\n{}", e, r, varysat::text::print(&out.pipeline));
        }
        let again = optimize(&out.pipeline, &Options::new()).expect("second run");
        prop_assert_eq!(again.report.after, r.after, "second run: {}", again.report);
    }
}
