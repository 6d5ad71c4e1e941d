//! Arbitrary text as a rule file: parsing must never panic, and a rule set that
//! parses must either compile to rewrites or fail cleanly, then drive the optimizer
//! on a small fixed pair without panicking. The rules may be unsound, so only
//! the absence of panics and the validity of an optimized pair are checked.
#![no_main]

use libfuzzer_sys::fuzz_target;
use varysat::internals::egraph::RuleSet;
use varysat::text::parse;
use varysat::validate::validate;
use varysat::{optimize, Options};

/// A pair with dead, constant and duplicated varyings, so that most rules find
/// something to match.
const PAIR: &str = include_str!("../../examples/pairs/vs_fs_dead_const_dup.pair");

fuzz_target!(|data: &[u8]| {
    let Some(src) = varysat_fuzz::text(data) else {
        return;
    };
    let Ok(rules) = RuleSet::parse("fuzz.rules", &src) else {
        return;
    };
    if rules.rewrites().is_err() {
        return;
    }
    let pair = parse(PAIR, None).expect("the example pair parses");
    let opts = Options::new()
        .rules(rules)
        .budgets(varysat_fuzz::small_budgets());
    if let Ok(out) = optimize(&pair, &opts) {
        if let Err(e) = validate(&out.pipeline) {
            panic!(
                "optimized pair is invalid:\n{e}\n{}",
                varysat::text::print(&out.pipeline)
            );
        }
    }
});
