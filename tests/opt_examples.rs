//! The optimizer's invariants on every shipped example pair, under both built-in cost
//! profiles: no fallback, observably equivalent output, never more varying slots, and
//! a second run finds nothing more to do.

use varysat::internals::extract::CostModel;
use varysat::interpreter::{check_equivalent, EquivConfig};
use varysat::{optimize, Options};

#[test]
fn every_example_optimizes_soundly_and_idempotently() {
    let mut files: Vec<_> =
        std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/pairs"))
            .expect("examples exist")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "pair"))
            .collect();
    files.sort();
    assert!(files.len() >= 16);
    let cfg = EquivConfig {
        runs: 8,
        ..EquivConfig::default()
    };
    for profile in ["amd-gfx10", "amd-gfx11"] {
        let opts = Options::new().cost(CostModel::named(profile).expect("built-in profile"));
        for f in &files {
            let p = varysat::text::parse_file(f).expect("example parses");
            let out = optimize(&p, &opts).expect("optimizes");
            let r = &out.report;
            let name = f.display();
            assert_eq!(r.fallback, None, "{name}");
            assert!(r.after.slots <= r.before.slots, "{name}: {r}");
            assert!(r.after.components <= r.before.components, "{name}: {r}");
            if let Err(e) = check_equivalent(&p, &out.pipeline, &cfg) {
                panic!("{name} ({profile}): {e}\n{r}");
            }
            let again = optimize(&out.pipeline, &opts).expect("second run");
            assert_eq!(
                again.report.after, r.after,
                "{name}: second run changed counts"
            );
            assert_eq!(
                again.report.cost_after, r.cost_after,
                "{name}: second run changed cost"
            );
        }
    }
}

/// The profile's `wide-op` (the cost of an opaque op on 64-bit values) decides whether
/// a uniform expression of 64-bit work fits the FS propagation limit: priced at the
/// built-in profiles' calibrated 8, the `dvec2` comparison of UBO doubles stays a
/// varying; priced like a 32-bit opaque op (4, the cost before the calibration), it
/// propagates along with the 32-bit comparison.
#[test]
fn wide_op_cost_decides_the_propagation_of_64_bit_uniform_work() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/opt/propagate_wide_uniform_compare.pair"
    );
    let p = varysat::text::parse_file(std::path::Path::new(path)).expect("test pair parses");
    let after = |model: CostModel| {
        let out = optimize(&p, &Options::new().cost(model)).expect("optimizes");
        check_equivalent(&p, &out.pipeline, &EquivConfig::default()).expect("equivalent");
        out.report.after.components
    };
    for profile in ["amd-gfx10", "amd-gfx11"] {
        assert_eq!(after(CostModel::named(profile).unwrap()), 1, "{profile}");
    }
    let narrow = CostModel::parse("narrow.cost", "(profile narrow (wide-op 4))").unwrap();
    assert_eq!(after(narrow), 0);
}
