//! `varysat experiment`: run every (rule set × cost profile) over a corpus of pairs and
//! report what each configuration buys and costs.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use varysat::experiment::{self, RunOptions};
use varysat::Error;

/// Arguments of `varysat experiment`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// `.pair` files or directories of them (searched recursively).
    #[arg(required = true)]
    pub corpus: Vec<PathBuf>,
    /// A rule set: `default`, a rule file, or several joined by commas. Repeat for more
    /// configurations (default: `default`).
    #[arg(long = "rules")]
    pub rules: Vec<String>,
    /// Use the `--rules` files without the semantic check that otherwise runs on
    /// every rule not shipped with varysat (see `varysat rules check`).
    #[arg(long)]
    pub trust_rules: bool,
    /// A cost profile: a built-in name or a profile file. Repeat for more
    /// configurations (default: amd-gfx10).
    #[arg(long = "cost")]
    pub cost: Vec<String>,
    /// Print JSON instead of the table.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print one CSV row per run instead of the table.
    #[arg(long)]
    pub csv: bool,
    /// Include times in the JSON / CSV output (they vary from run to run).
    #[arg(long)]
    pub timing: bool,
    /// Also write an SVG chart comparing the configurations to this file.
    #[arg(long = "svg")]
    pub svg: Option<PathBuf>,
    /// Find the rules that changed each result by re-running without each fired rule.
    #[arg(long)]
    pub ablate: bool,
    /// Also extract every pair in exact mode with this time limit in seconds, and
    /// report the fast mode's cost gap to it.
    #[arg(long = "exact-gap", value_name = "SECONDS")]
    pub exact_gap: Option<f64>,
    /// Whole-run budgets of each optimization.
    #[command(flatten)]
    pub budget: crate::budget::BudgetArgs,
    /// Worker threads (default: one per core).
    #[arg(long = "jobs", short = 'j')]
    pub jobs: Option<usize>,
}

fn write(path: &std::path::Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text).map_err(|source| Error::Io {
        path: path.display().to_string(),
        source,
    })
}

fn progress_bar(total: usize) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total as u64);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} runs  {elapsed_precise}")
    {
        bar.set_style(style);
    }
    bar
}

/// Runs the subcommand.
pub(crate) fn run(args: Args) -> Result<ExitCode, Error> {
    let rule_specs = if args.rules.is_empty() {
        vec!["default".to_string()]
    } else {
        args.rules.clone()
    };
    let cost_specs = if args.cost.is_empty() {
        vec!["amd-gfx10".to_string()]
    } else {
        args.cost.clone()
    };
    let rule_sets = rule_specs
        .iter()
        .map(|s| experiment::load_rules(s))
        .collect::<Result<Vec<_>, _>>()?;
    if !args.trust_rules {
        // As `opt` does: an unsound user rule would make the table measure wrong code.
        // Verdicts are cached per rule text (VARYSAT_CACHE_DIR, else the XDG cache).
        let cache = varysat::rulecheck::cache::Cache::from_env();
        for (_, set) in &rule_sets {
            varysat::rulecheck::check_untrusted(set, cache.as_ref())?;
        }
    }
    let costs = cost_specs
        .iter()
        .map(|s| experiment::load_cost(s))
        .collect::<Result<Vec<_>, _>>()?;
    let configs = experiment::matrix(rule_sets, &costs);
    let corpus = experiment::load_corpus(&args.corpus)?;
    let bar = progress_bar(configs.len() * corpus.len());
    let exact_gap = match args.exact_gap {
        Some(s) if s.is_finite() && s > 0.0 => Some(std::time::Duration::from_secs_f64(s)),
        Some(s) => {
            return Err(Error::Limit(format!(
                "--exact-gap {s}: expected a positive number of seconds"
            )))
        }
        None => None,
    };
    let opts = RunOptions {
        ablate: args.ablate,
        exact_gap,
        budgets: args
            .budget
            .apply(varysat::internals::egraph::Budgets::default()),
    };
    let go = || experiment::run_matrix(&configs, &corpus, opts, &|| bar.inc(1));
    let runs = match args.jobs {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .map_err(|e| Error::Limit(format!("cannot start {n} worker threads: {e}")))?
            .install(go),
        None => go(),
    };
    bar.finish_and_clear();
    let e = experiment::summarize(&configs, &corpus, runs);
    if let Some(path) = &args.svg {
        write(path, &experiment::chart::svg_chart(&e)?)?;
    }
    let text = if args.json {
        format!("{:#}\n", experiment::json::to_json(&e, args.timing))
    } else if args.csv {
        experiment::csv::to_csv(&e, args.timing)
    } else {
        experiment::table::table(&e)
    };
    crate::out::stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}
