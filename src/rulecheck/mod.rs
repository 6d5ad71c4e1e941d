//! The semantic rule checker: every rule is tried on many random and edge-value
//! bindings of its variables, at every bit size the type checker admits, in the
//! setting its conditions describe (transfer modes, stages, convergence), and both
//! sides are evaluated with the reference interpreter's value semantics. A rule whose
//! sides disagree is reported with the counterexample:
//!
//! `file:line:col: error: rule NAME is not sound: with ?a=1f32, ?b=2f32 left gives 3f32, right gives 1f32`
//!
//! The verdict for a rule is a pure function of its text, so `varysat opt` keeps
//! the verdicts of rules that passed in a cache ([`cache`]).
//!
//! What counts as agreeing is the contract of `rules/README.md`: a rule without
//! `inexact` must give the same value up to what the interpreter's equivalence
//! check ignores (a zero's sign, NaN against an infinity); an `inexact` rule may
//! differ by the equivalence tolerance relative to the magnitudes it computed on the
//! way (an inexact law may cancel large terms) and is tried on zeros and normal
//! floats only, skipping cases where either side leaves them (overflows to Inf,
//! makes a NaN or a denormal): NIR's default float mode, the setting of these laws,
//! preserves none of them. A side is undefined exactly where the other is: undefined
//! on the left becoming a value on the right is a refinement, which only lowering
//! may make (rules/README.md).

pub mod cache;
mod eval;
mod model;
mod values;

use egg::Pattern;

use crate::egraph::{RuleDef, RuleSet, VNode};
use crate::error::{Diagnostic, Error};
use crate::interpreter::{scalars_match, EquivConfig, Scalar};
use crate::ir::BitSize;
use eval::{fnv, Eval, V};
use model::{show, Case, Model};
use values::Rng;

/// Cases tried per rule direction and bit-size assignment by default.
pub const DEFAULT_CASES: u32 = 400;

/// Version of the checker's semantics; part of every cache key, so that a stronger
/// checker re-checks rules an older one passed.
pub const CHECKER_VERSION: u32 = 1;

/// Checks one rule with `cases` cases per direction and bit-size assignment. The
/// error is the sentence after "rule NAME is not sound: ".
pub fn check_rule(rule: &RuleDef, cases: u32) -> Result<(), String> {
    let same_bits: Vec<_> = rule
        .conds
        .iter()
        .filter_map(|c| match c {
            crate::egraph::Cond::SameBits(a, b) => Some((*a, *b)),
            _ => None,
        })
        .collect();
    let mut directions = vec![(&rule.lhs, &rule.rhs, false)];
    if rule.bidirectional {
        directions.push((&rule.rhs, &rule.lhs, true));
    }
    let seed = fnv(rule.name.as_bytes());
    for (left, right, reversed) in directions {
        let sizes = crate::egraph::typecheck::admitted_sizes(left, right, &same_bits);
        if sizes.is_empty() {
            return Err("it cannot be typed at any bit size".into());
        }
        // Widest sizes first: the first counterexample is then a 32-bit one.
        for assignment in sizes.into_iter().rev() {
            let model = Model::new(left, right, &rule.conds, assignment, rule.inexact)?;
            let dir = Direction {
                left,
                right,
                reversed,
                inexact: rule.inexact,
            };
            dir.check(&model, cases, seed)?;
        }
    }
    Ok(())
}

/// One reading of a rule: `left` is what the e-graph matched, `right` what it adds.
struct Direction<'a> {
    left: &'a Pattern<VNode>,
    right: &'a Pattern<VNode>,
    reversed: bool,
    inexact: bool,
}

impl Direction<'_> {
    fn check(&self, model: &Model, cases: u32, seed: u64) -> Result<(), String> {
        let kinds = model.kinds();
        if kinds.is_empty() {
            return Err("its left-hand side mixes transfer modes no consumer has".into());
        }
        let mut rng = Rng::new(seed ^ u64::from(self.reversed));
        let (mut evaluated, mut skip_reason) = (0u32, None);
        for n in 0..cases {
            let kind = kinds[n as usize % kinds.len()];
            let Some(case) = model.case(&mut rng, n, kind) else {
                continue;
            };
            match self.try_case(model, &case) {
                Outcome::Agree => evaluated += 1,
                Outcome::Skip(why) => {
                    skip_reason.get_or_insert(why);
                }
                Outcome::Disagree(msg) => return Err(msg),
            }
        }
        let needed = if self.inexact { cases / 8 } else { 1 };
        if evaluated < needed.max(1) {
            let why = skip_reason.unwrap_or_else(|| "no case could be built".into());
            return Err(format!(
                "it could not be checked: its {} side evaluated in {evaluated} of {cases} \
                 cases ({why})",
                if self.reversed {
                    "right-hand"
                } else {
                    "left-hand"
                }
            ));
        }
        Ok(())
    }

    fn try_case(&self, model: &Model, case: &Case) -> Outcome {
        let mut l = Eval::new(self.left, case, model.has_xfer);
        let lv = l.root();
        let lv = match lv {
            V::S(s) => s,
            V::Mode(_) => return Outcome::Skip("it is a mode".into()),
            V::Wrong(w) => return Outcome::Skip(w),
        };
        let mut r = Eval::new(self.right, case, model.has_xfer);
        let rv = match r.root() {
            V::S(s) => s,
            V::Mode(m) => {
                return self.disagree(model, case, &format!("the right-hand side is the mode {m}"))
            }
            V::Wrong(w) => {
                let msg = format!("the {} side cannot be evaluated: {w}", self.added());
                return self.disagree(model, case, &msg);
            }
        };
        if self.inexact && (l.outside_mode || r.outside_mode) {
            return Outcome::Skip("a side leaves the float mode (Inf, NaN, denormal)".into());
        }
        let float = float_root(self.left, case) || float_root(self.right, case);
        if agree(lv, rv, float, self.inexact, l.scale.max(r.scale)) {
            return Outcome::Agree;
        }
        let (left_side, right_side) = if self.reversed { (rv, lv) } else { (lv, rv) };
        let msg = format!(
            "left gives {}, right gives {}",
            show(left_side),
            show(right_side)
        );
        self.disagree(model, case, &msg)
    }

    /// Which side of the rule the e-graph adds in this direction.
    fn added(&self) -> &'static str {
        if self.reversed {
            "left-hand"
        } else {
            "right-hand"
        }
    }

    fn disagree(&self, model: &Model, case: &Case, what: &str) -> Outcome {
        let vars = model.describe(case);
        let with = if vars.is_empty() {
            String::new()
        } else {
            format!("with {vars} ")
        };
        let read = if self.reversed {
            "read right to left, "
        } else {
            ""
        };
        Outcome::Disagree(format!("{read}{with}{what}"))
    }
}

enum Outcome {
    Agree,
    Skip(String),
    Disagree(String),
}

/// Whether the side the e-graph adds (`r`) may stand for the matched one (`l`).
/// `float`: the value is known to be a float (computed by a float op or
/// interpolated), so any two NaNs agree whatever their payloads and denormals are
/// numbers; otherwise the interpreter's own comparison decides.
fn agree(l: Scalar, r: Scalar, float: bool, inexact: bool, scale: f32) -> bool {
    // Undefined only where the other side is: a rule is an equality, and a union
    // that refines undef into a value also makes that value equal to every other
    // value undef is refined to (rules/README.md, "Soundness").
    if !l.defined || !r.defined {
        return l.defined == r.defined;
    }
    let default = EquivConfig::default();
    let tol = match (inexact, l.size) {
        (false, _) => 0.0,
        (true, BitSize::B16) => default.rel_tol_f16,
        (true, _) => default.rel_tol,
    };
    let cfg = EquivConfig {
        rel_tol: tol,
        rel_tol_f16: tol,
        ..default
    };
    if !float || l.size != r.size || l.size == BitSize::B1 {
        return scalars_match(l, r, &cfg);
    }
    let (x, y) = (l.as_f32(), r.as_f32());
    if x.is_nan() || y.is_nan() {
        let other = if x.is_nan() { y } else { x };
        return other.is_nan() || (cfg.nan_matches_inf && other.is_infinite());
    }
    if x.is_infinite() || y.is_infinite() {
        return x == y;
    }
    // An inexact law may round differently wherever it cancels large terms: the
    // error is relative to the largest magnitude either side computed.
    (x - y).abs() <= tol * scale.max(x.abs()).max(y.abs()).max(1.0)
}

/// Whether a side's value is a float: its root is a float op or conversion to
/// float, an interpolated transfer, or a select, move, transfer or per-emit spine
/// of such a value. Constants and variables say nothing.
fn float_root(p: &Pattern<VNode>, case: &Case) -> bool {
    use crate::ir::{AluOp, OpClass};
    let nodes = p.ast.as_ref();
    let mut i = nodes.len() - 1;
    loop {
        let next = match &nodes[i] {
            egg::ENodeOrVar::ENode(VNode::Alu { op, children, .. }) => match op.class() {
                OpClass::Float => return true,
                OpClass::Select => children[1],
                OpClass::Move => children[0],
                OpClass::Convert { .. } => {
                    use AluOp::*;
                    return matches!(op, F2F16 | F2F32 | I2F32 | U2F32 | I2F16 | B2F32 | B2F16);
                }
                _ => return false,
            },
            egg::ENodeOrVar::ENode(VNode::Xfer([m, v])) => {
                let interpolated = match &nodes[usize::from(*m)] {
                    egg::ENodeOrVar::ENode(VNode::Mode(mode, _)) => mode.is_interpolated(),
                    egg::ENodeOrVar::Var(var) => case
                        .modes
                        .get(var)
                        .is_some_and(|mi| mi.mode.is_interpolated()),
                    _ => false,
                };
                if interpolated {
                    return true;
                }
                *v
            }
            egg::ENodeOrVar::ENode(VNode::PerEmit([_, head, _])) => *head,
            _ => return false,
        };
        i = usize::from(next);
    }
}

/// The diagnostic for an unsound rule.
fn diagnostic(rule: &RuleDef, why: &str) -> Diagnostic {
    Diagnostic::new(
        Some(&rule.file),
        Some(rule.loc),
        format!("rule {} is not sound: {why}", rule.name),
    )
}

/// Checks every rule of `set`; one diagnostic per unsound rule, in load order.
pub fn check_set(set: &RuleSet, cases: u32) -> Vec<Diagnostic> {
    set.rules()
        .iter()
        .filter_map(|r| check_rule(r, cases).err().map(|why| diagnostic(r, &why)))
        .collect()
}

/// The text a rule's verdict depends on: its sides, conditions and markers (not its
/// file or position). Two rules with the same key are the same law.
pub fn rule_key(rule: &RuleDef) -> String {
    format!(
        "v{CHECKER_VERSION} {} {} {} {:?} bidirectional={} inexact={}",
        rule.name, rule.lhs, rule.rhs, rule.conds, rule.bidirectional, rule.inexact
    )
}

/// Checks the rules of `set` that are not shipped ones (a rule equal to a rule of the
/// compiled-in default set is checked by the test suite), consulting and filling
/// `cache` when given. Fails with [`Error::Unsound`] listing every unsound rule.
pub fn check_untrusted(set: &RuleSet, cache: Option<&cache::Cache>) -> Result<(), Error> {
    let shipped: std::collections::BTreeSet<String> = RuleSet::default_set()
        .rules()
        .iter()
        .map(rule_key)
        .collect();
    let mut bad = vec![];
    for rule in set.rules() {
        let key = rule_key(rule);
        if shipped.contains(&key) || cache.is_some_and(|c| c.passed(&key)) {
            continue;
        }
        match check_rule(rule, DEFAULT_CASES) {
            Ok(()) => {
                if let Some(c) = cache {
                    c.record_pass(&key);
                }
            }
            Err(why) => bad.push(diagnostic(rule, &why)),
        }
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(Error::Unsound(bad))
    }
}

#[cfg(test)]
mod tests;
