//! The `varysat` command line: one subcommand per file, each a thin layer over the
//! library. Errors print as `file:line:col: error: message`; bad input exits 1.

mod check;
mod equiv;
mod fmt;
mod import;
mod opt;
mod run;
mod stats;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Optimizes the varyings between two linked shader stages.
#[derive(Parser)]
#[command(name = "varysat", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(a) => check::run(a),
        Command::Fmt(a) => fmt::run(a),
        Command::Opt(a) => opt::run(a),
        Command::Import(a) => import::run(a),
        Command::Run(a) => run::run(a),
        Command::Equiv(a) => equiv::run(a),
        Command::Stats(a) => stats::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}

/// A pair from one `.pair` file or from a producer and a consumer shader source.
fn load_input(files: &[std::path::PathBuf]) -> Result<varysat::Pipeline, varysat::Error> {
    match files {
        [pair] => varysat::text::parse_file(pair),
        [producer, consumer] => {
            let opts = varysat::import::ImportOptions::default();
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
