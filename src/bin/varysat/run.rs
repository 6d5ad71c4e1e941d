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
    /// Fragments per primitive for FS consumers.
    #[arg(long, default_value_t = RunConfig::default().fragments_per_primitive)]
    fragments: usize,
}

pub(crate) fn run(args: Args) -> Result<ExitCode, varysat::Error> {
    let pipeline = crate::load(&args.file)?;
    let cfg = RunConfig {
        seed: args.seed,
        fragments_per_primitive: args.fragments,
        ..RunConfig::default()
    };
    print!("{}", interpret(&pipeline, &cfg)?);
    Ok(ExitCode::SUCCESS)
}
