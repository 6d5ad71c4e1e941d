//! The `varysat` command line: one subcommand per file, each a thin layer over the
//! library. Errors print as `file:line:col: error: message`; bad input exits 1.

#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod budget;
mod check;
mod equiv;
mod experiment;
mod fmt;
mod import;
mod opt;
mod out;
mod rules;
mod run;
mod stats;

use std::process::ExitCode;

/// mimalloc rather than the system allocator: see Cargo.toml.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};

/// Optimizes the varyings between two linked shader stages.
#[derive(Parser)]
#[command(name = "varysat", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Largest input file accepted, in bytes (pairs, shaders, rule, cost and
    /// configuration files); larger ones are an error.
    #[arg(long = "max-input-size", global = true, value_name = "BYTES",
          default_value_t = varysat::internals::input::DEFAULT_MAX_INPUT_SIZE)]
    max_input_size: u64,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and validate pair files.
    Check(check::Args),
    /// Print a pair file in canonical form.
    Fmt(fmt::Args),
    /// Optimize the varyings of a pair file.
    Opt(opt::Args),
    /// Import a producer/consumer pair from GLSL or SPIR-V into `.pair` text.
    Import(import::Args),
    /// Run a pair in the reference interpreter and print its observable outputs.
    Run(run::Args),
    /// Varying components and vec4 slots as declared, live, and optimized.
    Stats(stats::Args),
    /// Check that two pairs have the same observable behaviour.
    Equiv(equiv::Args),
    /// Compare rule sets and cost profiles over a corpus of pairs.
    Experiment(experiment::Args),
    /// Check rule files (`rules check FILE...`: is every rule sound?).
    Rules(rules::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    varysat::internals::input::set_max_input_size(cli.max_input_size);
    let result = match cli.command {
        Command::Check(a) => check::run(a),
        Command::Fmt(a) => fmt::run(a),
        Command::Opt(a) => opt::run(a),
        Command::Import(a) => import::run(a),
        Command::Run(a) => run::run(a),
        Command::Equiv(a) => equiv::run(a),
        Command::Experiment(a) => experiment::run(a),
        Command::Stats(a) => stats::run(a),
        Command::Rules(a) => rules::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            out::stderr(&format!("{e}\n"));
            ExitCode::from(1)
        }
    }
}

/// A pair from one `.pair` file or from a producer and a consumer shader source
/// (compiled GLSL goes through `spirv-opt -O` when `spirv_opt`).
fn load_input(
    files: &[std::path::PathBuf],
    spirv_opt: bool,
) -> Result<varysat::Pipeline, varysat::Error> {
    match files {
        [pair] => varysat::text::parse_file(pair),
        [producer, consumer] => {
            let opts = varysat::import::ImportOptions {
                spirv_opt,
                ..varysat::import::ImportOptions::default()
            };
            varysat::import::import_files(producer, consumer, &opts)
        }
        _ => Err(varysat::Error::Import(varysat::Diagnostic::new(
            None,
            None,
            "expected one .pair file or a producer and a consumer shader",
        ))),
    }
}

/// Reads, parses and validates one pair file.
fn load(path: &std::path::Path) -> Result<varysat::Pipeline, varysat::Error> {
    let pipeline = varysat::text::parse_file(path)?;
    varysat::validate::validate(&pipeline)?;
    Ok(pipeline)
}
