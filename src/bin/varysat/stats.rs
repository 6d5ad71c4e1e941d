//! `varysat stats FILES... [--json]`: per pair, varying components and vec4 slots as
//! declared, after dead-output removal, and after full optimization, with totals.
//! A `.pair` file is one pair; a shader source (GLSL or SPIR-V) pairs with the file
//! after it (producer, then consumer).

use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;
use varysat::{Error, Options};

/// Arguments of `stats`.
#[derive(clap::Args)]
pub struct Args {
    /// `.pair` files and producer/consumer shader sources.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Skip the `spirv-opt -O` pass on GLSL inputs.
    #[arg(long)]
    no_spirv_opt: bool,
    /// List per stage the uniform words and UBO ranges that decide conditions
    /// (what `opt --uniform/--ubo` would fold) instead of the varying counts.
    #[arg(long)]
    inlinable: bool,
    /// Whole-run budgets of each optimization.
    #[command(flatten)]
    budget: crate::budget::BudgetArgs,
}

#[derive(Default, Serialize)]
struct Row {
    pair: String,
    declared_components: usize,
    declared_slots: usize,
    live_components: usize,
    live_slots: usize,
    optimized_components: usize,
    optimized_slots: usize,
}

impl Row {
    fn add(&mut self, r: &Row) {
        self.declared_components += r.declared_components;
        self.declared_slots += r.declared_slots;
        self.live_components += r.live_components;
        self.live_slots += r.live_slots;
        self.optimized_components += r.optimized_components;
        self.optimized_slots += r.optimized_slots;
    }
}

/// Groups the arguments into pairs: a `.pair` file alone, a shader with the next file.
fn group(files: &[PathBuf]) -> Result<Vec<Vec<PathBuf>>, Error> {
    let mut out = vec![];
    let mut rest = files;
    while let Some((first, tail)) = rest.split_first() {
        if first.extension().is_some_and(|e| e == "pair") {
            out.push(vec![first.clone()]);
            rest = tail;
        } else if let Some((second, tail)) = tail.split_first() {
            out.push(vec![first.clone(), second.clone()]);
            rest = tail;
        } else {
            let message = "a producer shader needs its consumer shader after it";
            let file = first.display().to_string();
            return Err(Error::Import(varysat::Diagnostic::new(
                Some(&file),
                None,
                message,
            )));
        }
    }
    Ok(out)
}

fn row(
    files: &[PathBuf],
    spirv_opt: bool,
    budget: &crate::budget::BudgetArgs,
) -> Result<Row, Error> {
    let pipeline = crate::load_input(files, spirv_opt)?;
    let declared = varysat::import::stats(&pipeline);
    let opts = Options::new();
    let budgets = budget.apply(opts.budgets);
    let optimized = varysat::optimize(&pipeline, &opts.budgets(budgets))?;
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    Ok(Row {
        pair: names.join(" + "),
        declared_components: declared.declared_components,
        declared_slots: declared.declared_slots,
        live_components: declared.live_components,
        live_slots: declared.live_slots,
        optimized_components: optimized.report.after.components,
        optimized_slots: optimized.report.after.slots,
    })
}

/// `--inlinable`: the detection listing of every pair.
fn inlinable(args: &Args) -> Result<ExitCode, Error> {
    let mut pairs = vec![];
    for files in group(&args.files)? {
        let pipeline = crate::load_input(&files, !args.no_spirv_opt)?;
        varysat::validate::validate(&pipeline)?;
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        pairs.push((
            names.join(" + "),
            varysat::specialize::find_inlinable(&pipeline),
        ));
    }
    if args.json {
        let rows: Vec<_> = pairs
            .iter()
            .map(|(pair, found)| serde_json::json!({ "pair": pair, "inlinable": found.to_json() }))
            .collect();
        crate::out::stdout(&format!("{}\n", serde_json::json!({ "pairs": rows })))?;
        return Ok(ExitCode::SUCCESS);
    }
    let text: String = pairs
        .iter()
        .map(|(pair, found)| format!("{pair}\n{found}"))
        .collect();
    crate::out::stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn run(args: Args) -> Result<ExitCode, Error> {
    if args.inlinable {
        return inlinable(&args);
    }
    let rows = group(&args.files)?
        .iter()
        .map(|files| row(files, !args.no_spirv_opt, &args.budget))
        .collect::<Result<Vec<Row>, Error>>()?;
    let mut total = Row {
        pair: "total".into(),
        ..Row::default()
    };
    rows.iter().for_each(|r| total.add(r));
    if args.json {
        let json = serde_json::json!({ "pairs": rows, "total": total });
        crate::out::stdout(&format!("{json}\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = format!(
        "{:<48} {:>13} {:>13} {:>13}\n",
        "pair", "declared", "live", "optimized"
    );
    for r in rows.iter().chain(std::iter::once(&total)) {
        let cell = |c: usize, s: usize| format!("{c} in {s}");
        text += &format!(
            "{:<48} {:>13} {:>13} {:>13}\n",
            r.pair,
            cell(r.declared_components, r.declared_slots),
            cell(r.live_components, r.live_slots),
            cell(r.optimized_components, r.optimized_slots)
        );
    }
    crate::out::stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}
