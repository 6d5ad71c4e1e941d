//! Structured inputs for the optimizer: the fuzzer's bytes choose a stage pair, a
//! size and a seed for `gen::synth_pair`, so every input is a valid pair (the text
//! targets mostly reach error paths). The optimized pair must validate and behave
//! like the original in the interpreter.
#![no_main]

use libfuzzer_sys::fuzz_target;
use varysat::internals::gen::synth_pair;
use varysat::interpreter::{check_equivalent, run, EquivConfig};
use varysat::text::print;
use varysat::validate::validate;
use varysat::Stage::{Fragment, Geometry, TessCtrl, TessEval, Vertex};
use varysat::{optimize, Options, Stage};

/// Every legal producer → consumer pair.
const PAIRS: [(Stage, Stage); 8] = [
    (Vertex, Fragment),
    (TessEval, Fragment),
    (Geometry, Fragment),
    (Vertex, TessCtrl),
    (TessCtrl, TessEval),
    (Vertex, TessEval),
    (Vertex, Geometry),
    (TessEval, Geometry),
];

fuzz_target!(|data: &[u8]| {
    let Some((&[pick, size], rest)) = data.split_first_chunk::<2>() else {
        return;
    };
    let mut seed = [0u8; 8];
    for (s, d) in seed.iter_mut().zip(rest) {
        *s = *d;
    }
    let pair = PAIRS[pick as usize % PAIRS.len()];
    let instructions = 10 + size as usize % 71;
    let p = synth_pair(pair, instructions, u64::from_le_bytes(seed));
    let opts = Options::new().budgets(varysat_fuzz::small_budgets());
    let out = match optimize(&p, &opts) {
        Ok(out) => out,
        Err(e) => panic!("optimize failed on a generated pair: {e}\n{}", print(&p)),
    };
    if let Err(e) = validate(&out.pipeline) {
        panic!("optimized pair is invalid:\n{e}\n{}", print(&out.pipeline));
    }
    let cfg = varysat_fuzz::small_run();
    if run(&p, &cfg).is_err() {
        return;
    }
    let equiv = EquivConfig {
        runs: 2,
        run: cfg,
        ..EquivConfig::default()
    };
    if let Err(e) = check_equivalent(&p, &out.pipeline, &equiv) {
        panic!(
            "optimization changed behaviour: {e}\n--- original ---\n{}\n--- optimized ---\n{}",
            print(&p),
            print(&out.pipeline)
        );
    }
});
