//! Property test of uniform inlining (issue 17): on random pairs with a random subset
//! of their uniform and UBO words known, the specialized pair, and the pair optimized
//! with those words inlined, behave like the original run with the same words bound
//! (`RunConfig::known`) in the reference interpreter.
//!
//! CI runs 1000 cases (the target); `VARYSAT_PROPTEST_CASES` changes the
//! count and `VARYSAT_PROPTEST_SEED` the seed (docs/testing.md).

use std::cell::Cell;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestCaseError, TestError, TestRunner};
use varysat::gen::{arb_readable, describe, GenConfig, Readable};
use varysat::interpreter::{check_equivalent, EquivConfig, RunConfig};
use varysat::ir::{KnownUniforms, Pipeline, UniformWord};
use varysat::specialize::specialize;
use varysat::{optimize, Options};

const DEFAULT_CASES: u32 = 1000;
const DEFAULT_SEED: u64 = 0x696e_6c69_6e65_0017;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Values worth binding: small integers (array indices, counts), both zeros and one,
/// floats in the interpreter's input range, and arbitrary patterns.
fn value() -> impl Strategy<Value = u32> {
    prop_oneof![
        0u32..5,
        Just(0x8000_0000u32),
        Just(1.0f32.to_bits()),
        (-4.0f32..4.0).prop_map(f32::to_bits),
        any::<u32>(),
    ]
}

/// Every word of `p`'s declared uniform storage.
fn words(p: &Pipeline) -> Vec<UniformWord> {
    let uniforms = (0..p.uniforms).map(UniformWord::Uniform);
    let ubos = p.ubos.iter().flat_map(|u| {
        (0..u.size / 4).map(move |w| UniformWord::Ubo {
            block: u.block,
            offset: w * 4,
        })
    });
    uniforms.chain(ubos).collect()
}

/// The words picked by `mask`, with values drawn from `values`.
fn known(p: &Pipeline, mask: u64, values: &[u32]) -> KnownUniforms {
    let mut k = KnownUniforms::new();
    for (i, w) in words(p).into_iter().enumerate() {
        if mask >> (i % 64) & 1 == 1 {
            k.insert(w, values[i % values.len()]);
        }
    }
    k
}

fn equivalent(a: &Pipeline, b: &Pipeline, known: &KnownUniforms) -> Result<(), String> {
    let cfg = EquivConfig {
        runs: 2,
        run: RunConfig {
            known: known.clone(),
            ..EquivConfig::default().run
        },
        ..EquivConfig::default()
    };
    check_equivalent(a, b, &cfg).map_err(|e| format!("{e}\nresult:\n{}", describe(b)))
}

/// Checks one case; returns how many conditions specialization folded.
fn property(p: &Pipeline, known: &KnownUniforms) -> Result<usize, String> {
    let s = specialize(p, known).map_err(|e| format!("specialize failed: {e}"))?;
    varysat::validate::validate(&s.pipeline).map_err(|e| {
        format!(
            "specialized pair is invalid: {e}\n{}",
            describe(&s.pipeline)
        )
    })?;
    equivalent(p, &s.pipeline, known).map_err(|e| format!("specialized: {e}"))?;
    let out = optimize(p, &Options::new().known(known.clone()))
        .map_err(|e| format!("optimize failed: {e}"))?;
    equivalent(p, &out.pipeline, known).map_err(|e| format!("optimized: {e}"))?;
    let r = &out.report;
    if r.after.slots > r.before.slots {
        return Err(format!("slots grew: {r}"));
    }
    Ok(s.report.stages.iter().map(|f| f.conditions.len()).sum())
}

#[test]
fn inlined_and_folded_pairs_match_the_original_with_the_words_bound() {
    let cases = env_or("VARYSAT_PROPTEST_CASES", DEFAULT_CASES);
    let config = Config {
        cases,
        failure_persistence: None,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(env_or("VARYSAT_PROPTEST_SEED", DEFAULT_SEED)),
        ..Config::default()
    };
    let folded_cases = Cell::new(0u32);
    let strategy = (
        arb_readable(GenConfig::default()),
        any::<u64>(),
        vec(value(), 1..8),
    );
    let result = TestRunner::new(config).run(&strategy, |(Readable(p), mask, values)| {
        let k = known(&p, mask, &values);
        let folded =
            property(&p, &k).map_err(|e| TestCaseError::fail(format!("known {k:?}: {e}")))?;
        if folded > 0 {
            folded_cases.set(folded_cases.get() + 1);
        }
        Ok(())
    });
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, (Readable(p), ..))) => {
            panic!("{why}\nshrunk counterexample:\n{}", describe(&p))
        }
        Err(TestError::Abort(why)) => panic!("aborted: {why}"),
    }
    // The property is only as strong as the folding it exercises: a fair share of the
    // random pairs must have had a condition decided by the known words.
    let share = f64::from(folded_cases.get()) / f64::from(cases.max(1));
    assert!(
        share >= 0.05,
        "only {} of {cases} cases folded a condition",
        folded_cases.get()
    );
}
