//! `varysat run FILE [--seed N]`: interpret a pair and print its observable outputs.

use std::path::PathBuf;
use std::process::ExitCode;

use varysat::interpreter::{run as interpret, RunConfig};

/// Arguments of `run`.
#[derive(clap::Args)]
pub struct Args {
    /// Pair file to run.
    file: PathBuf,
    /// Seed for inputs, barycentrics and clip w.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Fragments per primitive for FS consumers (1 to 4096).
    #[arg(long, default_value_t = RunConfig::default().fragments_per_primitive as u64,
          value_parser = clap::value_parser!(u64).range(1..=4096))]
    fragments: u64,
}

pub(crate) fn run(args: Args) -> Result<ExitCode, varysat::Error> {
    let pipeline = crate::load(&args.file)?;
    let cfg = RunConfig {
        seed: args.seed,
        // At most 4096 (checked by the parser), so the conversion is exact.
        fragments_per_primitive: args.fragments as usize,
        ..RunConfig::default()
    };
    crate::out::stdout(&interpret(&pipeline, &cfg)?.to_string())?;
    Ok(ExitCode::SUCCESS)
}
