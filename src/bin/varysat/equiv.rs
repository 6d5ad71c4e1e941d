//! `varysat equiv A B [--runs N]`: are two pairs observably the same?

use std::path::PathBuf;
use std::process::ExitCode;

use varysat::interpreter::{check_equivalent, EquivConfig};

/// Arguments of `equiv`.
#[derive(clap::Args)]
pub struct Args {
    /// First pair file.
    a: PathBuf,
    /// Second pair file.
    b: PathBuf,
    /// Number of seeded runs (1 to 10000: none would prove nothing, and each run
    /// interprets both pairs).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    runs: u32,
    /// Seed of the first run.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

pub(crate) fn run(args: Args) -> Result<ExitCode, varysat::Error> {
    let a = crate::load(&args.a)?;
    let b = crate::load(&args.b)?;
    let cfg = EquivConfig {
        runs: args.runs,
        first_seed: args.seed,
        ..EquivConfig::default()
    };
    match check_equivalent(&a, &b, &cfg) {
        Ok(()) => {
            crate::out::stdout(&format!("equivalent over {} runs\n", args.runs))?;
            Ok(ExitCode::SUCCESS)
        }
        Err(why) => {
            crate::out::stdout(&format!("not equivalent: {why}\n"))?;
            Ok(ExitCode::from(1))
        }
    }
}
