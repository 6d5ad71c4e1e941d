//! `varysat import A B [-o OUT]`: two shader stages (GLSL or SPIR-V) to a `.pair`.

use std::path::PathBuf;
use std::process::ExitCode;

use varysat::import::{default_uniforms, import_files_with_warnings, ImportOptions};
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
    /// Set a specialization constant: `--spec ID=VALUE` (repeatable; VALUE is an
    /// integer, or a float with a `.`). Others keep their default values.
    #[arg(long, value_parser = parse_spec)]
    pub spec: Vec<(u32, u32)>,
    /// Keep compiled GLSL stages in this directory, by source, and take them from
    /// there when the same source comes again (for corpus runs).
    #[arg(long, value_name = "DIR")]
    pub glsl_cache: Option<PathBuf>,
    /// Also write the pair's default-block uniforms here, one `NAME WORD WORDS` line
    /// each in word order (the `.pair` numbers them without names; `varysat equiv
    /// --uniform WORD=VALUE` binds them).
    #[arg(long, value_name = "FILE")]
    pub uniform_words: Option<PathBuf>,
}

/// `ID=VALUE` of `--spec` (and `WORD=VALUE` of `equiv --uniform`).
pub(crate) fn parse_spec(s: &str) -> Result<(u32, u32), String> {
    let (id, v) = s
        .split_once('=')
        .ok_or_else(|| format!("expected ID=VALUE, found `{s}`"))?;
    let id = id
        .parse()
        .map_err(|_| format!("bad specialization id `{id}`"))?;
    let bits = if v.contains('.') {
        v.parse::<f32>().map(f32::to_bits).ok()
    } else if v == "true" || v == "false" {
        Some((v == "true") as u32)
    } else {
        v.parse::<i64>()
            .ok()
            .filter(|x| (i32::MIN as i64..=u32::MAX as i64).contains(x))
            .map(|x| x as u32)
    };
    Ok((
        id,
        bits.ok_or_else(|| format!("bad specialization value `{v}`"))?,
    ))
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
        spec: args.spec.iter().copied().collect(),
        glsl_cache: args.glsl_cache.clone(),
        ..ImportOptions::default()
    };
    let (pipe, warnings) = import_files_with_warnings(&args.producer, &args.consumer, &opts)?;
    for w in warnings {
        eprintln!("warning: {w}");
    }
    if let Some(path) = &args.uniform_words {
        let mut list = String::new();
        for u in default_uniforms(&args.producer, &args.consumer, &opts)? {
            list.push_str(&format!("{} {} {}\n", u.name, u.word, u.words));
        }
        std::fs::write(path, list).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?;
    }
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
