//! Rule-set variants as deltas: a rule file may start from the shipped rules and state
//! only what it changes. Its top-level forms apply in order to the set built so far:
//!
//! - `(include default)` adds the seven shipped files; `(include NAME)` one of them by
//!   its stem (`propagate`, `algebra`, `dedup`, `emits`, `flat`, `interp`, `tess`).
//! - `(drop NAME...)` removes the named rules.
//! - `(drop-tag TAG...)` removes every rule carrying one of the tags.
//! - `(direction NAME... backward|forward)` keeps one reading of bidirectional laws:
//!   `backward` the law as written (left to right: consumer work computed in the
//!   producer), `forward` its right-to-left reading alone, sides swapped and renamed
//!   `NAME-fwd` (the producer expression recomputed in the consumer).
//! - `(direction-tag TAG... backward|forward)` does that to every *bidirectional* rule
//!   carrying one of the tags (one-way rules with the tag stay as they are).
//! - `(replace NAME RULE...)` puts the given rules (`rule` or `for-ops` forms) where
//!   `NAME` was.
//!
//! A rule's tags are the stem of the file that defined it (`algebra` for the shipped
//! `rules/algebra.rules`), `bidirectional` when it is, and `inexact` when it is.
//! Naming a rule or tag the set does not have, or redirecting a one-way rule, is an
//! error at the name's position: a variant never silently stops matching the set it
//! edits.

use std::path::Path;
use std::sync::Arc;

use super::{err, parse_rule, RuleDef, RuleSet, DEFAULT_RULE_FILES};
use crate::egraph::sexp::Sexp;
use crate::egraph::template;
use crate::error::{Diagnostic, Error};

/// Which reading of a bidirectional law a variant keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    /// Left to right (consumer work moves into the producer).
    Backward,
    /// Right to left (producer work is recomputed in the consumer).
    Forward,
}

impl RuleSet {
    /// Leaves the named rule out (the CLI's `--without NAME`); an unknown name is an
    /// error.
    pub fn drop_rule(&mut self, name: &str) -> Result<(), Error> {
        let Some(i) = self.rules.iter().position(|r| r.name == name) else {
            let msg = format!("no rule named `{name}` to leave out");
            return Err(Error::Rules(Diagnostic::new(None, None, msg)));
        };
        self.rules_mut().remove(i);
        self.compiled = Arc::default();
        Ok(())
    }
}

/// Whether `rule` carries `tag`.
pub(crate) fn has_tag(rule: &RuleDef, tag: &str) -> bool {
    let stem = Path::new(&rule.file).file_stem().and_then(|s| s.to_str());
    stem == Some(tag)
        || (tag == "bidirectional" && rule.bidirectional)
        || (tag == "inexact" && rule.inexact)
}

/// Applies `item` to `set` when it is a delta form; `Ok(false)` when it is not (a rule
/// or template, for the caller to add).
pub(super) fn apply(set: &mut RuleSet, file: &str, item: &Sexp) -> Result<bool, Error> {
    let Some(items) = item.list() else {
        return Ok(false);
    };
    let args = items.get(1..).unwrap_or_default();
    match items.first().and_then(Sexp::atom) {
        Some("include") => include(set, file, item, args)?,
        Some("drop") => drop_names(set, file, item, args)?,
        Some("drop-tag") => drop_tags(set, file, item, args)?,
        Some("direction") => direction(set, file, item, args, false)?,
        Some("direction-tag") => direction(set, file, item, args, true)?,
        Some("replace") => replace(set, file, item, args)?,
        _ => return Ok(false),
    }
    // The set changed: later `rewrites` calls compile it anew.
    set.compiled = Arc::default();
    Ok(true)
}

/// A name in a delta form, with the form it came from (for its position).
type Word<'a> = (&'a str, &'a Sexp);

/// The plain words of a directive's arguments (at least one).
fn words<'a>(file: &str, item: &Sexp, args: &'a [Sexp]) -> Result<Vec<Word<'a>>, Error> {
    if args.is_empty() {
        return Err(err(file, item.loc(), format!("`{item}` names nothing")));
    }
    args.iter()
        .map(|a| match a.atom() {
            Some(w) => Ok((w, a)),
            None => Err(err(file, a.loc(), format!("expected a name, found `{a}`"))),
        })
        .collect()
}

fn include(set: &mut RuleSet, file: &str, item: &Sexp, args: &[Sexp]) -> Result<(), Error> {
    for (name, at) in words(file, item, args)? {
        let stem_of = |f: &str| {
            Path::new(f)
                .file_stem()
                .and_then(|s| s.to_str())
                .map(str::to_string)
        };
        let files: Vec<_> = DEFAULT_RULE_FILES
            .iter()
            .filter(|(f, _)| name == "default" || stem_of(f).as_deref() == Some(name))
            .collect();
        if files.is_empty() {
            let msg = format!(
                "unknown rule file `{name}` to include (expected `default` or a shipped file: {})",
                DEFAULT_RULE_FILES
                    .iter()
                    .filter_map(|(f, _)| stem_of(f))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            return Err(err(file, at.loc(), msg));
        }
        for (f, text) in files {
            set.extend_from_text(f, text)?;
        }
    }
    Ok(())
}

fn position(set: &RuleSet, file: &str, name: &str, at: &Sexp) -> Result<usize, Error> {
    set.rules
        .iter()
        .position(|r| r.name == name)
        .ok_or_else(|| {
            err(
                file,
                at.loc(),
                format!("no rule named `{name}` in the set so far"),
            )
        })
}

fn drop_names(set: &mut RuleSet, file: &str, item: &Sexp, args: &[Sexp]) -> Result<(), Error> {
    for (name, at) in words(file, item, args)? {
        let i = position(set, file, name, at)?;
        set.rules_mut().remove(i);
    }
    Ok(())
}

fn drop_tags(set: &mut RuleSet, file: &str, item: &Sexp, args: &[Sexp]) -> Result<(), Error> {
    for (tag, at) in words(file, item, args)? {
        let before = set.rules.len();
        set.rules_mut().retain(|r| !has_tag(r, tag));
        if set.rules.len() == before {
            return Err(err(
                file,
                at.loc(),
                format!("no rule tagged `{tag}` in the set so far"),
            ));
        }
    }
    Ok(())
}

/// Splits `(direction X... backward|forward)` into its names and direction.
fn direction_args<'a>(
    file: &str,
    item: &Sexp,
    args: &'a [Sexp],
) -> Result<(Vec<Word<'a>>, Direction), Error> {
    let usage = || {
        let msg = format!("expected `(direction NAME... backward|forward)`, found `{item}`");
        err(file, item.loc(), msg)
    };
    let (last, names) = args.split_last().ok_or_else(usage)?;
    let dir = match last.atom() {
        Some("backward") => Direction::Backward,
        Some("forward") => Direction::Forward,
        _ => return Err(usage()),
    };
    Ok((words(file, item, names)?, dir))
}

fn direction(
    set: &mut RuleSet,
    file: &str,
    item: &Sexp,
    args: &[Sexp],
    by_tag: bool,
) -> Result<(), Error> {
    let (names, dir) = direction_args(file, item, args)?;
    for (name, at) in names {
        let chosen: Vec<usize> = if by_tag {
            let tagged: Vec<usize> = (0..set.rules.len())
                .filter(|&i| has_tag(&set.rules[i], name))
                .collect();
            if tagged.is_empty() {
                let msg = format!("no rule tagged `{name}` in the set so far");
                return Err(err(file, at.loc(), msg));
            }
            tagged
                .into_iter()
                .filter(|&i| set.rules[i].bidirectional)
                .collect()
        } else {
            let i = position(set, file, name, at)?;
            if !set.rules[i].bidirectional {
                let msg = format!("`{name}` is one-way already (not bidirectional)");
                return Err(err(file, at.loc(), msg));
            }
            vec![i]
        };
        for i in chosen {
            one_way(&mut set.rules_mut()[i], dir);
        }
    }
    check_unique(set, file, item)
}

/// Keeps one reading of a bidirectional rule.
fn one_way(rule: &mut RuleDef, dir: Direction) {
    rule.bidirectional = false;
    if dir == Direction::Forward {
        // The `.rev` rewrite on its own: conditions of a bidirectional rule mention
        // only variables of both sides, so they hold unchanged.
        std::mem::swap(&mut rule.lhs, &mut rule.rhs);
        rule.exact_variant = rule.exact_variant.take().map(|(l, r)| (r, l));
        rule.name = format!("{}-fwd", rule.name);
    }
}

fn check_unique(set: &RuleSet, file: &str, item: &Sexp) -> Result<(), Error> {
    for (i, r) in set.rules.iter().enumerate() {
        if set.rules[..i].iter().any(|p| p.name == r.name) {
            let msg = format!("this makes two rules named `{}`", r.name);
            return Err(err(file, item.loc(), msg));
        }
    }
    Ok(())
}

fn replace(set: &mut RuleSet, file: &str, item: &Sexp, args: &[Sexp]) -> Result<(), Error> {
    let usage = || {
        let msg = format!("expected `(replace NAME RULE...)`, found `{item}`");
        err(file, item.loc(), msg)
    };
    let (first, forms) = args.split_first().ok_or_else(usage)?;
    let name = first.atom().ok_or_else(usage)?;
    if forms.is_empty() {
        return Err(usage());
    }
    let i = position(set, file, name, first)?;
    let mut rest = set.rules_mut().split_off(i);
    rest.remove(0);
    for form in forms {
        let expanded = template::expand(form).map_err(|(loc, m)| err(file, loc, m))?;
        for rule in &expanded {
            set.push(parse_rule(file, rule, true)?)?;
        }
    }
    for rule in rest {
        set.push(rule)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str) -> Result<RuleSet, Error> {
        RuleSet::parse("v.rules", text)
    }

    const BASE: &str = "(rule a (fadd ?x 0f32) ?x inexact)
(rule b (fmul ?x 1f32) ?x)
(rule m (fneg (xfer ?m ?a)) (xfer ?m (fneg ?a)) bidirectional)";

    fn names(s: &RuleSet) -> Vec<&str> {
        s.names()
    }

    #[test]
    fn include_default_is_the_default_set() {
        let v = set("(include default)").unwrap();
        assert_eq!(names(&v), names(&RuleSet::default_set()));
        let one = set("(include algebra)").unwrap();
        assert!(one.rules().iter().all(|r| r.file == "rules/algebra.rules"));
        assert!(!one.rules().is_empty());
    }

    #[test]
    fn drop_and_drop_tag_remove_rules() {
        let v = set(&format!("{BASE}\n(drop b)")).unwrap();
        assert_eq!(names(&v), ["a", "m"]);
        let v = set(&format!("{BASE}\n(drop-tag inexact bidirectional)")).unwrap();
        assert_eq!(names(&v), ["b"]);
        let v = set(&format!("{BASE}\n(drop-tag v)")).unwrap();
        assert!(v.rules().is_empty(), "the file's own stem tags its rules");
    }

    #[test]
    fn directions_keep_one_reading() {
        let fwd = set(&format!("{BASE}\n(direction m forward)")).unwrap();
        let m = &fwd.rules()[2];
        assert_eq!(m.name, "m-fwd");
        assert!(!m.bidirectional);
        assert_eq!(m.lhs.to_string(), "(xfer ?m (fneg ?a))");
        assert_eq!(m.rhs.to_string(), "(fneg (xfer ?m ?a))");
        // The exact instantiation is swapped along.
        let (el, er) = m.exact_variant.as_ref().unwrap();
        assert_eq!(el.to_string(), "(xfer ?m (fneg.exact ?a))");
        assert_eq!(er.to_string(), "(fneg.exact (xfer ?m ?a))");
        let rewrites: Vec<String> = fwd
            .rewrites()
            .unwrap()
            .iter()
            .map(|r| r.name.to_string())
            .collect();
        assert!(rewrites.contains(&"m-fwd".to_string()));
        assert!(!rewrites.iter().any(|n| n.ends_with(".rev")));

        let back = set(&format!("{BASE}\n(direction-tag v backward)")).unwrap();
        assert_eq!(names(&back), ["a", "b", "m"]);
        assert!(back.rules().iter().all(|r| !r.bidirectional));
        assert_eq!(back.rules()[2].lhs.to_string(), "(fneg (xfer ?m ?a))");
    }

    #[test]
    fn replace_keeps_the_position() {
        let v = set(&format!(
            "{BASE}\n(replace a (rule a1 (iadd ?x 0i32) ?x) (for-ops (ior ixor) (rule $op-0 ($op ?x 0i32) ?x)))"
        ))
        .unwrap();
        assert_eq!(names(&v), ["a1", "ior-0", "ixor-0", "b", "m"]);
    }

    fn error(text: &str) -> String {
        set(text).unwrap_err().to_string()
    }

    #[test]
    fn bad_deltas_are_located_errors() {
        assert_eq!(
            error(&format!("{BASE}\n(drop b  zz)")),
            "v.rules:4:10: error: no rule named `zz` in the set so far"
        );
        assert_eq!(
            error("(include nope)"),
            "v.rules:1:10: error: unknown rule file `nope` to include (expected `default` or a \
             shipped file: propagate, algebra, dedup, emits, flat, interp, tess)"
        );
        assert_eq!(
            error(&format!("{BASE}\n(direction b forward)")),
            "v.rules:4:12: error: `b` is one-way already (not bidirectional)"
        );
        assert_eq!(
            error(&format!("{BASE}\n(direction m sideways)")),
            "v.rules:4:1: error: expected `(direction NAME... backward|forward)`, found \
             `(direction m sideways)`"
        );
        assert_eq!(
            error(&format!("{BASE}\n(drop-tag nothing)")),
            "v.rules:4:11: error: no rule tagged `nothing` in the set so far"
        );
        assert_eq!(
            error(&format!("{BASE}\n(replace b (rule a ?x ?x))")),
            "v.rules:4:20: error: the left-hand side must not be a bare variable"
        );
        assert_eq!(
            error(&format!("{BASE}\n(replace b)")),
            "v.rules:4:1: error: expected `(replace NAME RULE...)`, found `(replace b)`"
        );
        assert_eq!(
            error("(drop)"),
            "v.rules:1:1: error: `(drop)` names nothing"
        );
        assert!(error(&format!(
            "{BASE}\n(rule m-fwd (fabs ?x) ?x)\n(direction m forward)"
        ))
        .contains("this makes two rules named `m-fwd`"));
    }
}
