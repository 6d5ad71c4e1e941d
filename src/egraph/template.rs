//! The rule language's templating form: `(for-ops (OP...) RULE...)` states one law for
//! every operator of a list. Each `RULE` is instantiated once per `OP`, with every
//! occurrence of `$op` inside its atoms (rule name, patterns) replaced by the operator.

use super::sexp::Sexp;
use crate::ir::SrcLoc;

/// The token a template's rules use where each listed operator goes.
const OP_TOKEN: &str = "$op";

fn substitute(s: &Sexp, op: &str) -> Sexp {
    match s {
        Sexp::Atom(a, loc) => Sexp::Atom(a.replace(OP_TOKEN, op), *loc),
        Sexp::List(items, loc) => {
            Sexp::List(items.iter().map(|i| substitute(i, op)).collect(), *loc)
        }
    }
}

/// Expands a top-level item: a `for-ops` form becomes its instantiated rules, anything
/// else is returned as is. Errors are `(location, message)`.
pub(crate) fn expand(item: &Sexp) -> Result<Vec<Sexp>, (SrcLoc, String)> {
    let Some(items) = item.list() else {
        return Ok(vec![item.clone()]);
    };
    if items.first().and_then(Sexp::atom) != Some("for-ops") {
        return Ok(vec![item.clone()]);
    }
    let ops = items
        .get(1)
        .and_then(Sexp::list)
        .filter(|l| !l.is_empty())
        .ok_or_else(|| {
            let msg = "`for-ops` takes a non-empty list of operators, then rules";
            (item.loc(), msg.to_string())
        })?;
    let mut out = vec![];
    for op in ops {
        let name = op
            .atom()
            .ok_or_else(|| (op.loc(), format!("expected an operator name, found `{op}`")))?;
        for rule in &items[2..] {
            out.push(substitute(rule, name));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egraph::sexp::parse_all;

    #[test]
    fn instantiates_each_rule_per_operator() {
        let items =
            parse_all("(for-ops (fadd fmul) (rule r-$op ($op ?a ?b) ($op ?b ?a)) (rule s-$op ($op ?a ?a) ?a))")
                .unwrap();
        let got: Vec<String> = expand(&items[0])
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            got,
            [
                "(rule r-fadd (fadd ?a ?b) (fadd ?b ?a))",
                "(rule s-fadd (fadd ?a ?a) ?a)",
                "(rule r-fmul (fmul ?a ?b) (fmul ?b ?a))",
                "(rule s-fmul (fmul ?a ?a) ?a)",
            ]
        );
    }

    #[test]
    fn malformed_templates_are_errors() {
        let items =
            parse_all("(for-ops fadd (rule a ?x ?x))\n(for-ops ((x)) (rule a ?x ?x))").unwrap();
        assert_eq!(
            expand(&items[0]).unwrap_err().1,
            "`for-ops` takes a non-empty list of operators, then rules"
        );
        assert!(expand(&items[1])
            .unwrap_err()
            .1
            .starts_with("expected an operator name"));
    }
}
