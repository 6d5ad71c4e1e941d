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
