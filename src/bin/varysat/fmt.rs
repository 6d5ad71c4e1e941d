//! `varysat fmt FILE [--in-place]`: canonical printing.

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `fmt`.
#[derive(clap::Args)]
pub struct Args {
    /// Pair file to format.
    file: PathBuf,
    /// Rewrite the file instead of printing to stdout.
    #[arg(long)]
    in_place: bool,
}

pub(crate) fn run(args: Args) -> Result<ExitCode, varysat::Error> {
    // Formatting only needs well-formed text, so an invalid pair can still be tidied.
    let pipeline = varysat::text::parse_file(&args.file)?;
    let text = varysat::text::print(&pipeline);
    if args.in_place {
        std::fs::write(&args.file, text).map_err(|source| varysat::Error::Io {
            path: args.file.display().to_string(),
            source,
        })?;
    } else {
        crate::out::stdout(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}
