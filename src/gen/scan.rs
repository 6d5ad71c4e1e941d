//! Scans over generated pairs from the command line (the scanning examples' shared
//! front): the arguments `[CASES] [SEED] [vs-fs|tcs-tes|all] [DIR]` and the pairs a
//! seed draws, the same on every machine (ChaCha).

use std::path::PathBuf;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestRunner};

use super::strategy::{arb_pipeline, GenConfig};
use crate::ir::{Pipeline, Stage};

/// What a scan draws and where it writes.
#[derive(Clone, Debug)]
pub struct Scan {
    /// How many pairs to draw.
    pub cases: u32,
    /// The generator's seed.
    pub seed: u64,
    /// Which stage pairs.
    pub config: GenConfig,
    /// The output directory (created by [`Scan::from_args`]).
    pub dir: PathBuf,
}

impl Scan {
    /// Reads `[CASES] [SEED] [vs-fs|tcs-tes|all] [DIR]` (a missing or unreadable number
    /// takes its default; a kind other than `vs-fs` or `tcs-tes` means every stage
    /// pair) and creates the directory.
    pub fn from_args(args: &[String], cases: u32, dir: &str) -> Result<Scan, String> {
        let arg = |i: usize| args.get(i).map(String::as_str);
        let config = match arg(2) {
            Some("vs-fs") => GenConfig::for_pair((Stage::Vertex, Stage::Fragment)),
            Some("tcs-tes") => GenConfig::for_pair((Stage::TessCtrl, Stage::TessEval)),
            _ => GenConfig::default(),
        };
        let scan = Scan {
            cases: arg(0).and_then(|s| s.parse().ok()).unwrap_or(cases),
            seed: arg(1).and_then(|s| s.parse().ok()).unwrap_or(1),
            config,
            dir: PathBuf::from(arg(3).unwrap_or(dir)),
        };
        std::fs::create_dir_all(&scan.dir)
            .map_err(|e| format!("cannot create {}: {e}", scan.dir.display()))?;
        Ok(scan)
    }

    /// The drawn pairs with their case numbers (a case the generator gave up on is
    /// skipped, keeping the numbers of the others).
    pub fn pairs(&self) -> impl Iterator<Item = (u32, Pipeline)> + '_ {
        let mut runner = TestRunner::new(Config {
            rng_algorithm: RngAlgorithm::ChaCha,
            rng_seed: RngSeed::Fixed(self.seed),
            ..Config::default()
        });
        let strategy = arb_pipeline(self.config.clone());
        (0..self.cases).filter_map(move |case| {
            let tree = strategy.new_tree(&mut runner).ok()?;
            Some((case, tree.current()))
        })
    }
}
