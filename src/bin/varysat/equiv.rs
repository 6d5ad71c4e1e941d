//! `varysat equiv A B [--runs N] [--loop-limit N] [--uniform WORD=VALUE]`: are two
//! pairs observably the same?

use std::path::PathBuf;
use std::process::ExitCode;

use varysat::interpreter::{check_equivalent, EquivConfig, RunConfig};
use varysat::ir::{KnownUniforms, UniformWord};

/// Arguments of `equiv`.
#[derive(clap::Args)]
pub struct Args {
    /// First pair file.
    a: PathBuf,
    /// Second pair file.
    b: PathBuf,
    /// Number of seeded runs (1 to 10000: none would prove nothing, and each run
    /// interprets both pairs).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    runs: u32,
    /// Seed of the first run.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Loop iterations one invocation may run, summed over its loops, before the
    /// run stops with an error (programs that loop hundreds of times per vertex,
    /// such as piglit's loop tests, need more than the default).
    #[arg(long, default_value_t = RunConfig::default().loop_limit,
          value_parser = clap::value_parser!(u32).range(1..=100_000_000))]
    loop_limit: u32,
    /// Bind default-block uniform word WORD to VALUE in every run of both pairs
    /// instead of a seeded value: `--uniform WORD=VALUE` (repeatable; VALUE is an
    /// integer, a float with a `.`, or true/false; `varysat import --uniform-words`
    /// lists the words by name). For programs that loop over a uniform.
    #[arg(long, value_parser = crate::import::parse_spec, value_name = "WORD=VALUE")]
    uniform: Vec<(u32, u32)>,
}

pub(crate) fn run(args: Args) -> Result<ExitCode, varysat::Error> {
    let a = crate::load(&args.a)?;
    let b = crate::load(&args.b)?;
    let mut known = KnownUniforms::new();
    for (word, bits) in &args.uniform {
        let w = UniformWord::Uniform(*word);
        if let Some(why) = KnownUniforms::out_of_range(&a, w) {
            let file = args.a.display().to_string();
            let msg = format!("--uniform {word}: {why}");
            return Err(varysat::Error::Invalid(vec![varysat::Diagnostic::new(
                Some(&file),
                None,
                msg,
            )]));
        }
        known.insert(w, *bits);
    }
    let base = EquivConfig::default();
    let cfg = EquivConfig {
        runs: args.runs,
        first_seed: args.seed,
        run: RunConfig {
            loop_limit: args.loop_limit,
            known,
            ..base.run.clone()
        },
        ..base
    };
    match check_equivalent(&a, &b, &cfg) {
        Ok(()) => {
            crate::out::stdout(&format!("equivalent over {} runs\n", args.runs))?;
            Ok(ExitCode::SUCCESS)
        }
        Err(why) => {
            crate::out::stdout(&format!("not equivalent: {why}\n"))?;
            Ok(ExitCode::from(1))
        }
    }
}
