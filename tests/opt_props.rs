//! Properties of `optimize` on random well-formed pairs from `varysat::gen`: the
//! optimized pair validates (no fallback), the reference interpreter sees the same
//! observable behaviour, varying slots never increase, and a second run changes
//! nothing more. `VARYSAT_PROPTEST_CASES` sets the number of cases.
//!
//! Pairs whose consumer samples textures are left out of the equivalence property:
//! propagating a value that was interpolated changes it in the last bits (interpolating
//! a constant is not bit-exact), and the interpreter's texture results are a function
//! of the exact coordinate bits, so such a difference shows up as an arbitrary one.

use proptest::prelude::*;
use varysat::gen::{arb_readable, GenConfig};
use varysat::interpreter::{check_equivalent, EquivConfig};
use varysat::ir::InstKind;
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
        let mut samples = false;
        p.consumer.for_each_inst(|i| samples |= matches!(i.kind, InstKind::Texture { .. }));
        let cfg = EquivConfig { runs: 2, ..EquivConfig::default() };
        if samples {
            // Validity, slots and idempotence are still checked below.
        } else if let Err(e) = check_equivalent(&p, &out.pipeline, &cfg) {
            prop_assert!(false, "not equivalent: {}\n{}\n{}", e, r, varysat::text::print(&out.pipeline));
        }
        let again = optimize(&out.pipeline, &Options::new()).expect("second run");
        prop_assert_eq!(again.report.after, r.after, "second run: {}", again.report);
    }
}
