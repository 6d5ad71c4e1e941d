//! `varysat opt`: optimize the varyings of one `.pair` file, or of a producer and a
//! consumer shader given as GLSL or SPIR-V (imported first).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::ValueEnum;
use varysat::internals::egraph::RuleSet;
use varysat::internals::extract::{CostModel, Extraction};
use varysat::{Error, Options};

/// Report formats.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ReportFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object.
    Json,
}

/// Output formats of `varysat opt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EmitFormat {
    /// The optimized pair as `.pair` text.
    Pair,
    /// The two optimized stages as SPIR-V modules, written into the `-o` directory.
    Spirv,
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
    /// Write the optimized pair here instead of standard output (with `--emit spirv`:
    /// the directory that receives `<input file name>.spv` for both stages, or
    /// `<pair name>.<stage>.spv`, e.g. `x.vert.spv`, for a `.pair` file).
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// Output format.
    #[arg(long = "emit", value_enum, default_value = "pair")]
    pub emit: EmitFormat,
    /// A rule file (or `default`, the shipped rules); the first replaces the default
    /// rules, later ones extend them. Prefix with `+` (e.g. `--rules +mine.rules`) to
    /// extend the defaults instead.
    #[arg(long = "rules")]
    pub rules: Vec<String>,
    /// Leave this rule out of the set (repeatable), e.g. `--without propagate-free`.
    #[arg(long = "without", value_name = "RULE")]
    pub without: Vec<String>,
    /// Use the `--rules` files without the semantic check that otherwise runs on
    /// every rule not shipped with varysat (see `varysat rules check`).
    #[arg(long)]
    pub trust_rules: bool,
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
    /// Whole-run budgets.
    #[command(flatten)]
    pub budget: crate::budget::BudgetArgs,
    /// Report format, written to standard error.
    #[arg(long = "report", value_enum, default_value = "text")]
    pub report: ReportFormat,
    /// Treat every uniform and UBO as visible to both stages, overriding the pair's
    /// `(visible ...)` declarations (the output declares them visible).
    #[arg(long = "assume-visible")]
    pub assume_visible: bool,
}

/// A non-negative number of seconds.
pub(crate) fn seconds(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("expected a non-negative number of seconds, found `{text}`"))
}

fn read(path: &str) -> Result<String, Error> {
    varysat::internals::input::read_text(std::path::Path::new(path))
}

fn options(args: &Args) -> Result<Options, Error> {
    let mut opts = Options::new();
    let mut replaced = false;
    for spec in &args.rules {
        match spec.strip_prefix('+') {
            Some(path) => opts = opts.extra_rules(path, &read(path)?)?,
            None if !replaced => {
                let set = match spec.as_str() {
                    "default" => RuleSet::default_set(),
                    _ => RuleSet::parse(spec, &read(spec)?)?,
                };
                opts = opts.rules(set);
                replaced = true;
            }
            None => opts = opts.extra_rules(spec, &read(spec)?)?,
        }
    }
    for name in &args.without {
        opts.rules.drop_rule(name)?;
    }
    if !args.rules.is_empty() && !args.trust_rules {
        // Verdicts are cached per rule text (VARYSAT_CACHE_DIR, else the XDG cache).
        let cache = varysat::rulecheck::cache::Cache::from_env();
        varysat::rulecheck::check_untrusted(&opts.rules, cache.as_ref())?;
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
    let budgets = args.budget.apply(opts.budgets);
    Ok(opts
        .cost(cost)
        .extraction(extraction)
        .budgets(budgets)
        .assume_visible(args.assume_visible))
}

/// Runs the subcommand.
pub(crate) fn run(args: Args) -> Result<ExitCode, Error> {
    if args.emit == EmitFormat::Spirv {
        return run_spirv(&args);
    }
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

/// `--emit spirv`: imports two shaders, optimizes, writes both stages as SPIR-V.
fn run_spirv(args: &Args) -> Result<ExitCode, Error> {
    let usage = |msg: &str| Error::Import(varysat::Diagnostic::new(None, None, msg));
    let dir = args
        .output
        .as_ref()
        .ok_or_else(|| usage("--emit spirv needs an output directory: -o DIR"))?;
    if let [pair] = args.files.as_slice() {
        return run_spirv_pair(args, pair, dir);
    }
    let [producer, consumer] = args.files.as_slice() else {
        return Err(usage(
            "--emit spirv needs a .pair file or a producer and a consumer shader",
        ));
    };
    let opts = varysat::import::ImportOptions {
        spirv_opt: !args.no_spirv_opt,
        ..Default::default()
    };
    let ((pipeline, warnings), (pm, cm)) =
        varysat::import::import_files_with_modules(producer, consumer, &opts)?;
    for w in warnings {
        eprintln!("warning: {w}");
    }
    let outcome = varysat::optimize(&pipeline, &options(args)?)?;
    let (pw, cw) = varysat::export::to_spirv(&outcome, &pm, &cm)?;
    let files = [
        (varysat::export::output_name(producer), pw),
        (varysat::export::output_name(consumer), cw),
    ];
    write_modules(args, dir, &files, &outcome.report)
}

/// Writes SPIR-V modules under `dir` and the report on stderr.
fn write_modules(
    args: &Args,
    dir: &std::path::Path,
    files: &[(String, Vec<u32>)],
    report: &varysat::Report,
) -> Result<ExitCode, Error> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        path: dir.display().to_string(),
        source,
    })?;
    for (name, words) in files {
        let path = dir.join(name);
        std::fs::write(&path, varysat::export::to_bytes(words)).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?;
    }
    match args.report {
        ReportFormat::Text => eprint!("{report}"),
        ReportFormat::Json => eprintln!("{}", report.to_json()),
    }
    Ok(ExitCode::SUCCESS)
}

/// The file extension of a stage's shader (`vert`, `tesc`, `tese`, `geom`, `frag`).
fn stage_extension(stage: varysat::Stage) -> &'static str {
    match stage {
        varysat::Stage::Vertex => "vert",
        varysat::Stage::TessCtrl => "tesc",
        varysat::Stage::TessEval => "tese",
        varysat::Stage::Geometry => "geom",
        varysat::Stage::Fragment => "frag",
    }
}

/// `--emit spirv` of a `.pair` file: optimizes it and writes both stages as SPIR-V
/// modules synthesized from the IR (`export::standalone_to_spirv`), named after
/// the pair file and the stage: `x.pair` -> `x.vert.spv`, `x.frag.spv`.
fn run_spirv_pair(
    args: &Args,
    pair: &std::path::Path,
    dir: &std::path::Path,
) -> Result<ExitCode, Error> {
    let pipeline = crate::load(pair)?;
    let known = varysat::specialize::known_from_flags(&pipeline, &args.uniforms, &args.ubos)?;
    let outcome = varysat::optimize(&pipeline, &options(args)?.known(known))?;
    let (pw, cw) = varysat::export::standalone_to_spirv(&outcome.pipeline)?;
    let stem = pair
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "pair".to_owned());
    let name = |stage| format!("{stem}.{}.spv", stage_extension(stage));
    let files = [
        (name(outcome.pipeline.producer.stage()), pw),
        (name(outcome.pipeline.consumer.stage()), cw),
    ];
    write_modules(args, dir, &files, &outcome.report)
}
