//! The configuration matrix: rule sets named by their files, cost profiles by name or
//! file, and their cross product.

use std::path::Path;

use crate::egraph::RuleSet;
use crate::error::Error;
use crate::extract::CostModel;

/// One (rule set × cost profile) configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// The rule set's display name (file stems joined by `+`, or `default`).
    pub rules_name: String,
    /// The rules.
    pub rules: RuleSet,
    /// The cost model (its `name` is the profile's display name).
    pub cost: CostModel,
}

impl Config {
    /// `RULES/PROFILE`, the configuration's label in every output.
    pub fn label(&self) -> String {
        format!("{}/{}", self.rules_name, self.cost.name)
    }
}

fn read(path: &str) -> Result<String, Error> {
    crate::input::read_text(std::path::Path::new(path))
}

fn stem(path: &str) -> String {
    Path::new(path)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string())
}

/// Loads a rule-set spec: `default` (the compiled-in rules), a rule file, or several of
/// those joined by commas (combined into one set; a name defined twice is an error);
/// a part `-NAME` leaves the rule NAME out of what precedes it (`default,-propagate-free`).
/// Returns the display name and the rules; rewrites are built once here so that a bad
/// pattern is reported before any pair runs.
pub fn load_rules(spec: &str) -> Result<(String, RuleSet), Error> {
    let mut set = RuleSet::default();
    let mut names = vec![];
    for part in spec.split(',').filter(|p| !p.is_empty()) {
        if let Some(rule) = part.strip_prefix('-') {
            set.drop_rule(rule)?;
            names.push(format!("without-{rule}"));
        } else if part == "default" {
            set.extend(RuleSet::default_set())?;
            names.push("default".to_string());
        } else {
            set.extend_from_text(part, &read(part)?)?;
            names.push(stem(part));
        }
    }
    set.rewrites()?;
    let name = if names.is_empty() {
        "empty".to_string()
    } else {
        names.join("+")
    };
    Ok((name, set))
}

/// Loads a cost profile: a built-in name or a profile file.
pub fn load_cost(spec: &str) -> Result<CostModel, Error> {
    match CostModel::named(spec) {
        Some(m) => Ok(m),
        None => CostModel::parse(spec, &read(spec)?),
    }
}

/// Every rule set with every cost profile, rule sets outermost. Rule sets whose names
/// collide get their position appended (`name#2`), so labels stay unique.
pub fn matrix(rule_sets: Vec<(String, RuleSet)>, costs: &[CostModel]) -> Vec<Config> {
    let mut seen: Vec<String> = vec![];
    let mut out = vec![];
    for (i, (name, rules)) in rule_sets.into_iter().enumerate() {
        let name = if seen.contains(&name) {
            format!("{name}#{}", i + 1)
        } else {
            name
        };
        seen.push(name.clone());
        for cost in costs {
            out.push(Config {
                rules_name: name.clone(),
                rules: rules.clone(),
                cost: cost.clone(),
            });
        }
    }
    out
}
