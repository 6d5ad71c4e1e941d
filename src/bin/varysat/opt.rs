//! `varysat opt`: optimize the varyings of one `.pair` file, or of a producer and a
//! consumer shader given as GLSL or SPIR-V (imported first).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::ValueEnum;
use varysat::egraph::RuleSet;
use varysat::extract::{CostModel, Extraction};
use varysat::{Error, Options};

/// Report formats.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ReportFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object.
    Json,
}

/// Extraction modes.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ExtractMode {
    /// Global set search plus local search (near-optimal).
    Fast,
    /// Branch-and-bound; proves optimality unless `--exact-time-limit` is hit.
    Exact,
}

/// Arguments of `varysat opt`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A `.pair` file, or a producer and a consumer shader (GLSL `.vert/.tesc/.tese/
    /// .geom/.frag` or SPIR-V).
    #[arg(required = true, num_args = 1..=2)]
    pub files: Vec<PathBuf>,
    /// Write the optimized pair here instead of standard output.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// A rule file; the first replaces the default rules, later ones extend them.
    /// Prefix with `+` (e.g. `--rules +mine.rules`) to extend the defaults instead.
    #[arg(long = "rules")]
    pub rules: Vec<String>,
    /// Cost profile: a built-in name (amd-gfx10, amd-gfx11) or a profile file.
    #[arg(long = "cost", default_value = "amd-gfx10")]
    pub cost: String,
    /// Extraction mode.
    #[arg(long = "extract", value_enum, default_value = "fast")]
    pub extract: ExtractMode,
    /// Time limit of the exact extraction, in seconds.
    #[arg(long = "exact-time-limit", default_value = "10", value_parser = seconds)]
    pub exact_time_limit: Duration,
    /// Skip the `spirv-opt -O` pass on GLSL inputs.
    #[arg(long)]
    pub no_spirv_opt: bool,
    /// Inline a word of the default uniform block before optimizing: IDX=VALUE, the
    /// value a 32-bit `.pair` constant (`2`, `-1`, `1.5`, `0x3fc00000`, `1.5f32`).
    #[arg(long = "uniform", value_name = "IDX=VALUE")]
    pub uniforms: Vec<String>,
    /// Inline a word of a uniform buffer: BLOCK:OFFSET=VALUE, OFFSET in bytes.
    #[arg(long = "ubo", value_name = "BLOCK:OFFSET=VALUE")]
    pub ubos: Vec<String>,
    /// Report format, written to standard error.
    #[arg(long = "report", value_enum, default_value = "text")]
    pub report: ReportFormat,
}

/// A non-negative number of seconds.
fn seconds(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("expected a non-negative number of seconds, found `{text}`"))
}

fn read(path: &str) -> Result<String, Error> {
    varysat::input::read_text(std::path::Path::new(path))
}

fn options(args: &Args) -> Result<Options, Error> {
    let mut opts = Options::new();
    let mut replaced = false;
    for spec in &args.rules {
        match spec.strip_prefix('+') {
            Some(path) => opts = opts.extra_rules(path, &read(path)?)?,
            None if !replaced => {
                opts = opts.rules(RuleSet::parse(spec, &read(spec)?)?);
                replaced = true;
            }
            None => opts = opts.extra_rules(spec, &read(spec)?)?,
        }
    }
    let cost = match CostModel::named(&args.cost) {
        Some(m) => m,
        None => CostModel::parse(&args.cost, &read(&args.cost)?)?,
    };
    let extraction = match args.extract {
        ExtractMode::Fast => Extraction::Fast,
        ExtractMode::Exact => Extraction::Exact {
            time_limit: args.exact_time_limit,
        },
    };
    Ok(opts.cost(cost).extraction(extraction))
}

/// Runs the subcommand.
pub(crate) fn run(args: Args) -> Result<ExitCode, Error> {
    let pipeline = crate::load_input(&args.files, !args.no_spirv_opt)?;
    let known = varysat::specialize::known_from_flags(&pipeline, &args.uniforms, &args.ubos)?;
    let outcome = varysat::optimize(&pipeline, &options(&args)?.known(known))?;
    let text = varysat::text::print(&outcome.pipeline);
    match &args.output {
        Some(path) => std::fs::write(path, &text).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?,
        None => crate::out::stdout(&text)?,
    }
    match args.report {
        ReportFormat::Text => crate::out::stderr(&outcome.report.to_string()),
        ReportFormat::Json => crate::out::stderr(&format!("{}\n", outcome.report.to_json())),
    }
    Ok(ExitCode::SUCCESS)
}
