//! Arbitrary text through parse, validate and `optimize` with the default rules and
//! small budgets: nothing may panic or hang, the optimized pair must validate, and,
//! where the original runs in the interpreter, the optimized pair must behave the
//! same (the optimizer's soundness contract).
#![no_main]

use libfuzzer_sys::fuzz_target;
use varysat::interpreter::{check_equivalent, run, EquivConfig};
use varysat::text::{parse, print};
use varysat::validate::validate;
use varysat::{optimize, Options};

fuzz_target!(|data: &[u8]| {
    let Some(src) = varysat_fuzz::text(data) else {
        return;
    };
    let Ok(pipeline) = parse(&src, Some("fuzz.pair")) else {
        return;
    };
    if validate(&pipeline).is_err() {
        return;
    }
    let opts = Options::new().budgets(varysat_fuzz::small_budgets());
    let Ok(out) = optimize(&pipeline, &opts) else {
        return;
    };
    let optimized = &out.pipeline;
    if let Err(e) = validate(optimized) {
        panic!("optimized pair is invalid:\n{e}\n{}", print(optimized));
    }
    let cfg = varysat_fuzz::small_run();
    if run(&pipeline, &cfg).is_err() {
        return;
    }
    let equiv = EquivConfig {
        runs: 2,
        run: cfg,
        ..EquivConfig::default()
    };
    if let Err(e) = check_equivalent(&pipeline, optimized, &equiv) {
        panic!("optimization changed behaviour: {e}\n{}", print(optimized));
    }
});
