//! `varysat check FILE...`: parse and validate; report every file's problems.

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `check`.
#[derive(clap::Args)]
pub struct Args {
    /// Pair files to check.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

pub(crate) fn run(args: Args) -> Result<ExitCode, varysat::Error> {
    let mut failed = false;
    for file in &args.files {
        match crate::load(file) {
            Ok(_) => crate::out::stdout(&format!("{}: ok\n", file.display()))?,
            Err(e) => {
                crate::out::stderr(&format!("{e}\n"));
                failed = true;
            }
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
