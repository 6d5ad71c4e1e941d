//! `varysat import A B [-o OUT]`: two shader stages (GLSL or SPIR-V) to a `.pair`.

use std::path::PathBuf;
use std::process::ExitCode;

use varysat::import::{import_files, ImportOptions};
use varysat::Error;

/// Arguments of `varysat import`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Producer stage: GLSL (.vert .tesc .tese .geom) or SPIR-V (.spv).
    pub producer: PathBuf,
    /// Consumer stage: GLSL (.tesc .tese .geom .frag) or SPIR-V (.spv).
    pub consumer: PathBuf,
    /// Write the `.pair` here instead of standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Match varyings by location even for GLSL input.
    #[arg(long)]
    pub by_location: bool,
    /// Match varyings by name even for SPIR-V input.
    #[arg(long, conflicts_with = "by_location")]
    pub by_name: bool,
    /// Skip the `spirv-opt -O` pass on compiled GLSL.
    #[arg(long)]
    pub no_spirv_opt: bool,
    /// Vertices per input patch of a TCS (or of a TES without a TCS).
    #[arg(long, default_value_t = 3)]
    pub patch_vertices: u8,
}

/// Runs the subcommand.
pub(crate) fn run(args: Args) -> Result<ExitCode, Error> {
    let opts = ImportOptions {
        match_by_name: if args.by_name {
            Some(true)
        } else if args.by_location {
            Some(false)
        } else {
            None
        },
        spirv_opt: !args.no_spirv_opt,
        patch_vertices: args.patch_vertices,
        ..ImportOptions::default()
    };
    let pipe = import_files(&args.producer, &args.consumer, &opts)?;
    let text = varysat::text::print(&pipe);
    match &args.output {
        Some(path) => std::fs::write(path, text).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?,
        None => crate::out::stdout(&text)?,
    }
    Ok(ExitCode::SUCCESS)
}
