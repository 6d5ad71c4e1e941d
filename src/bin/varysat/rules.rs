//! `varysat rules check FILE...`: the semantic rule checker (`varysat::rulecheck`) on
//! rule files; one `file:line:col: error: rule NAME is not sound: ...` line per
//! unsound rule, exit 1 when there is any.

use std::process::ExitCode;

use clap::Subcommand;
use varysat::rulecheck;
use varysat::Error;

/// Arguments of `varysat rules`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: RulesCommand,
}

#[derive(Subcommand, Debug)]
enum RulesCommand {
    /// Try every rule on random and edge-value bindings of its variables and report
    /// each rule whose two sides disagree, with a counterexample.
    Check {
        /// Rule files (`default` for the compiled-in rules; `a,b` for a set made of
        /// several files).
        #[arg(required = true)]
        files: Vec<String>,
        /// Cases tried per rule direction and bit-size assignment.
        #[arg(long, default_value_t = rulecheck::DEFAULT_CASES,
              value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
        cases: u32,
    },
}

/// Runs the subcommand.
pub(crate) fn run(args: Args) -> Result<ExitCode, Error> {
    let RulesCommand::Check { files, cases } = args.command;
    let (mut checked, mut unsound) = (0usize, vec![]);
    for spec in &files {
        let (_, set) = varysat::experiment::load_rules(spec)?;
        checked += set.rules().len();
        unsound.extend(rulecheck::check_set(&set, cases));
    }
    if !unsound.is_empty() {
        return Err(Error::Unsound(unsound));
    }
    crate::out::stdout(&format!(
        "{checked} rules in {} file(s): all sound on {cases} cases each\n",
        files.len()
    ))?;
    Ok(ExitCode::SUCCESS)
}
