//! The rule-file language: `(rule NAME LHS RHS [(if COND...)] [bidirectional] [inexact])`
//! parsed at run time into egg rewrites, with conditions from a fixed vocabulary
//! implemented here. The default set is the shipped `rules/*.rules`, compiled in.
//! See `rules/README.md` for the language and its contract.

use std::hash::Hash;
use std::sync::{Arc, OnceLock};

use fxhash::FxHashMap;

use std::str::FromStr;

use egg::{
    Condition, ConditionalApplier, ENodeOrVar, FromOp, Id, Pattern, PatternAst, Rewrite, Subst, Var,
};

use super::analysis::{VAnalysis, VGraph};
use super::comm_match::{canonical, canonical_hash, CommPattern};
use super::lang::VNode;
use super::reach::Reach;
use super::sexp::{parse_all, Sexp};
use crate::error::{Diagnostic, Error};
use crate::ir::{AluOp, SrcLoc};

mod variant;

/// The shipped rule files, in load order: (file name, text).
pub const DEFAULT_RULE_FILES: &[(&str, &str)] = &[
    (
        "rules/propagate.rules",
        include_str!("../../rules/propagate.rules"),
    ),
    (
        "rules/algebra.rules",
        include_str!("../../rules/algebra.rules"),
    ),
    ("rules/dedup.rules", include_str!("../../rules/dedup.rules")),
    ("rules/emits.rules", include_str!("../../rules/emits.rules")),
    ("rules/flat.rules", include_str!("../../rules/flat.rules")),
    (
        "rules/interp.rules",
        include_str!("../../rules/interp.rules"),
    ),
    ("rules/tess.rules", include_str!("../../rules/tess.rules")),
];

/// One condition a match must satisfy before the rule applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cond {
    /// `(free ?x)`: both stages can compute `?x`.
    Free(Var),
    /// `(const ?x)`: `?x` is a known constant.
    Const(Var),
    /// `(convergent-p ?x)`: `?x` is the same for all vertices of a primitive in the producer.
    ConvergentP(Var),
    /// `(convergent-c ?x)`: `?x` is the same across a primitive in the consumer.
    ConvergentC(Var),
    /// `(same-bits ?a ?b)`: both have the same bit size.
    SameBits(Var, Var),
    /// `(interpolated ?m)`: `?m` is an interpolating xfer mode.
    Interpolated(Var),
    /// `(propagatable ?u)`: `?u` is free and its cheapest free expression costs no more
    /// than the consumer stage's propagation limit.
    Propagatable(Var),
    /// `(uninterpolated ?m)`: `?m` is a `flat`, `(vertex k)` or `patch` xfer mode, which
    /// hands the consumer one producer invocation's value unchanged.
    Uninterpolated(Var),
    /// `(promotable ?p)`: `?p` is producer-convergent (its stores sit in convergent
    /// control flow: lowering gates them with `bcsel` on the branch condition) and the
    /// producer is not a GS, so interpolating it gives the value itself.
    Promotable(Var),
    /// `(single ?x)`: `?x` has an expression without a GS `per-emit` node (one value,
    /// the same at every emit).
    Single(Var),
    /// `(not-free ?x)`: the consumer cannot compute `?x` by itself. The one negative
    /// condition: it may lag a merge, and it guards cost, not soundness (motion must
    /// not turn a free value the propagation limit keeps transferred into consumer
    /// work), so a stale answer only costs optimization quality.
    NotFree(Var),
    /// `(not-const ?x)`: `?x` is not a known constant. Negative like `not-free`, and
    /// likewise a guard on growth, not on soundness: a select on a constant condition
    /// is already its taken branch (`bcsel-true`/`-false`), and moving it across a
    /// transfer again and again built one more select per iteration.
    NotConst(Var),
    /// `(regroups ?a ?b ?c)`: `?b` and `?c` are alike for motion and `?a` is not —
    /// re-bracketing `(op (op a b) c)` as `(op a (op b c))` then puts the operands a
    /// transfer law can take across the interface (free or received values) in one
    /// term of their own. Gates integer associativity: unrestricted, it gives a chain of
    /// n operands a class per subset of them, and chains are canonical from lowering
    /// on (`optimize::reassociate`) so it is not needed for deduplication.
    Regroups(Var, Var, Var),
}

impl Cond {
    fn vars(&self) -> Vec<Var> {
        match self {
            Cond::SameBits(a, b) => vec![*a, *b],
            Cond::Regroups(a, b, c) => vec![*a, *b, *c],
            Cond::Free(v)
            | Cond::Const(v)
            | Cond::ConvergentP(v)
            | Cond::ConvergentC(v)
            | Cond::Interpolated(v)
            | Cond::Propagatable(v)
            | Cond::Uninterpolated(v)
            | Cond::Promotable(v)
            | Cond::Single(v)
            | Cond::NotFree(v)
            | Cond::NotConst(v) => vec![*v],
        }
    }

    fn holds(&self, g: &VGraph, subst: &Subst) -> bool {
        let data = |v: &Var| subst.get(*v).map(|id| &g[*id].data);
        match self {
            Cond::Free(v) => data(v).is_some_and(|d| d.is_free()),
            Cond::Const(v) => data(v).is_some_and(|d| d.konst.is_some()),
            Cond::ConvergentP(v) => data(v).is_some_and(|d| d.convergent_p),
            Cond::ConvergentC(v) => data(v).is_some_and(|d| d.convergent_c),
            Cond::SameBits(a, b) => match (data(a), data(b)) {
                (Some(x), Some(y)) => x.bits.is_some() && x.bits == y.bits,
                _ => false,
            },
            Cond::Interpolated(v) => subst.get(*v).is_some_and(|id| is_interpolated(g, *id)),
            Cond::Propagatable(v) => data(v).is_some_and(|d| {
                let limit = g.analysis.propagation_limit.unwrap_or(u32::MAX);
                d.is_free() && d.free_cost.is_some_and(|c| c <= limit)
            }),
            Cond::Uninterpolated(v) => subst.get(*v).is_some_and(|id| is_uninterpolated(g, *id)),
            Cond::Single(v) => data(v).is_some_and(|d| d.single),
            Cond::NotFree(v) => data(v).is_some_and(|d| !d.is_free()),
            Cond::NotConst(v) => data(v).is_some_and(|d| d.konst.is_none()),
            Cond::Promotable(v) => {
                !g.analysis.producer_is_gs && data(v).is_some_and(|d| d.convergent_p)
            }
            Cond::Regroups(a, b, c) => {
                let movable = |v: &Var| subst.get(*v).map(|id| is_movable(g, *id));
                let (a, b, c) = (movable(a), movable(b), movable(c));
                b.is_some() && b == c && a != b
            }
        }
    }
}

/// What a condition may read of a variable's class, besides nothing global: its
/// analysis data, and whether it holds an interpolating mode, an uninterpolated mode or
/// a transfer. (The sharing gate also reads the bit size of the class the match is
/// rooted at, which a class never changes.) A class whose inputs are unchanged
/// satisfies the same conditions; the incremental search relies on it
/// ([`super::fresh`]), so a condition that reads anything else of a class must add it
/// here.
pub fn condition_inputs(class: &VClass) -> impl Hash + '_ {
    (
        &class.data,
        holds_interpolating_mode(class),
        holds_uninterpolated_mode(class),
        holds_transfer(class),
    )
}

/// An e-class of the pair's graph.
type VClass = egg::EClass<VNode, super::analysis::VData>;

fn holds_interpolating_mode(class: &VClass) -> bool {
    let interpolating = |n: &VNode| matches!(n, VNode::Mode(m, _) if m.is_interpolated());
    class.nodes.iter().any(interpolating)
}

fn holds_uninterpolated_mode(class: &VClass) -> bool {
    let uninterpolated = |n: &VNode| matches!(n, VNode::Mode(m, _) if m.is_uninterpolated());
    class.nodes.iter().any(uninterpolated)
}

fn holds_transfer(class: &VClass) -> bool {
    class.nodes.iter().any(|n| matches!(n, VNode::Xfer(_)))
}

/// Whether a transfer law can take the class across the interface inside a larger
/// term: both stages compute it (free), or it holds a received value (`xfer`).
fn is_movable(g: &VGraph, id: Id) -> bool {
    g[id].data.is_free() || holds_transfer(&g[id])
}

fn is_interpolated(g: &VGraph, id: Id) -> bool {
    holds_interpolating_mode(&g[id])
}

fn is_uninterpolated(g: &VGraph, id: Id) -> bool {
    holds_uninterpolated_mode(&g[id])
}

/// All conditions of one rewrite, as an egg [`Condition`].
#[derive(Clone, Debug)]
pub struct Conds {
    /// The rule's own conditions.
    pub conds: Vec<Cond>,
    /// For a forward motion law (its left-hand side a transfer of an expression), the
    /// operand variables the sharing gate reads ([`super::sharing`]).
    pub forward: Option<Vec<Var>>,
    /// For a forward motion law, the expression it moves, which the ALU bound prices
    /// ([`super::recompute`]).
    pub moved: Option<super::recompute::Moved>,
}

impl Condition<VNode, VAnalysis> for Conds {
    fn check(&self, egraph: &mut VGraph, eclass: Id, subst: &Subst) -> bool {
        if let Some(cap) = egraph.analysis.node_cap {
            if egraph.total_size() >= cap {
                egraph.analysis.capped = true;
                return false;
            }
        }
        self.conds.iter().all(|c| c.holds(egraph, subst))
            && self
                .forward
                .as_ref()
                .is_none_or(|vars| super::sharing::forward_may_pay(egraph, eclass, vars, subst))
            && self
                .moved
                .as_ref()
                .is_none_or(|m| m.may_pay(egraph, eclass, subst))
    }

    fn vars(&self) -> Vec<Var> {
        let own = self.conds.iter().flat_map(Cond::vars);
        own.chain(self.forward.iter().flatten().copied()).collect()
    }
}

/// The conditions of each compiled rewrite, by position.
type Conditions = Vec<Vec<Cond>>;

/// One parsed rule.
#[derive(Clone, Debug)]
pub struct RuleDef {
    /// Unique name.
    pub name: String,
    /// Left-hand side.
    pub lhs: Pattern<VNode>,
    /// Right-hand side.
    pub rhs: Pattern<VNode>,
    /// Conditions checked on the LHS match.
    pub conds: Vec<Cond>,
    /// Also apply right to left.
    pub bidirectional: bool,
    /// Changes float results in the last bits: never instantiated for `exact` ops.
    pub inexact: bool,
    /// The file the rule came from.
    pub file: String,
    /// Where the rule starts.
    pub loc: SrcLoc,
    /// The same rule over `exact` ops (non-inexact rules that mention ALU ops).
    exact_variant: Option<(Pattern<VNode>, Pattern<VNode>)>,
}

/// An ordered set of rules with unique names. The egg rewrites are compiled once
/// (606 rewrites for the default set take longer to build than optimizing a small
/// pair) and shared by clones; adding rules starts a fresh compilation.
#[derive(Clone, Debug, Default)]
pub struct RuleSet {
    /// Shared by clones until one of them changes (every `Options` holds a set).
    rules: Arc<Vec<RuleDef>>,
    compiled: Arc<OnceLock<Compiled>>,
}

/// A rule set's egg rewrites with their reachability index.
#[derive(Debug)]
pub struct Compiled {
    /// Each rule, its right-to-left form when bidirectional, and its `.exact` form.
    pub rewrites: Vec<Rewrite<VNode, VAnalysis>>,
    /// Which of them can match in a given run ([`Reach`]).
    pub reach: Reach,
}

fn err(file: &str, loc: SrcLoc, msg: impl Into<String>) -> Error {
    Error::Rules(Diagnostic::new(Some(file), Some(loc), msg))
}

/// Rewrites every ALU operator in head position to its `.exact` form.
fn exactify(s: &Sexp) -> (Sexp, bool) {
    match s {
        Sexp::Atom(..) => (s.clone(), false),
        Sexp::List(items, loc) => {
            let mut changed = false;
            let mut out = Vec::with_capacity(items.len());
            for (i, it) in items.iter().enumerate() {
                let head_alu = i == 0 && it.atom().is_some_and(|a| AluOp::from_str(a).is_ok());
                if let (true, Some(a)) = (head_alu, it.atom()) {
                    out.push(Sexp::Atom(format!("{a}.exact"), it.loc()));
                    changed = true;
                } else {
                    let (e, c) = exactify(it);
                    changed |= c;
                    out.push(e);
                }
            }
            (Sexp::List(out, *loc), changed)
        }
    }
}

/// The pattern an s-expression writes, built from the tree the rule reader already
/// parsed (nodes in post-order, as egg's own parser adds them) instead of printing it
/// and parsing the text again: the default set's ~1,100 sides are built at every start.
fn pattern(file: &str, s: &Sexp) -> Result<Pattern<VNode>, Error> {
    let mut ast = PatternAst::<VNode>::default();
    add_pattern_node(s, &mut ast)
        .map_err(|e| err(file, s.loc(), format!("bad pattern `{s}`: {e}")))?;
    Ok(Pattern::from(ast))
}

/// Adds `s` and its operands to `ast` (operands first); the error says what is wrong.
fn add_pattern_node(s: &Sexp, ast: &mut PatternAst<VNode>) -> Result<Id, String> {
    let (op, children) = match s {
        Sexp::Atom(a, _) => (a.as_str(), vec![]),
        Sexp::List(items, _) => {
            let (head, operands) = items.split_first().ok_or("an empty list")?;
            let op = head
                .atom()
                .ok_or_else(|| format!("expected an operator, found `{head}`"))?;
            let children = operands
                .iter()
                .map(|c| add_pattern_node(c, ast))
                .collect::<Result<Vec<Id>, String>>()?;
            (op, children)
        }
    };
    let node = ENodeOrVar::<VNode>::from_op(op, children).map_err(|e| e.to_string())?;
    Ok(ast.add(node))
}

fn var(file: &str, s: &Sexp) -> Result<Var, Error> {
    let text = s.atom().filter(|a| a.starts_with('?'));
    text.and_then(|t| Var::from_str(t).ok()).ok_or_else(|| {
        err(
            file,
            s.loc(),
            format!("expected a pattern variable, found `{s}`"),
        )
    })
}

fn cond(file: &str, s: &Sexp) -> Result<Cond, Error> {
    let items = s
        .list()
        .filter(|l| !l.is_empty())
        .ok_or_else(|| err(file, s.loc(), "a condition is a list `(NAME ?var...)`"))?;
    let name = items[0].atom().unwrap_or("");
    let args = &items[1..];
    let want = |n: usize| -> Result<(), Error> {
        if args.len() == n {
            Ok(())
        } else {
            let msg = format!(
                "condition `{name}` takes {n} variable(s), found {}",
                args.len()
            );
            Err(err(file, s.loc(), msg))
        }
    };
    let one = |f: fn(Var) -> Cond| -> Result<Cond, Error> {
        want(1)?;
        Ok(f(var(file, &args[0])?))
    };
    match name {
        "free" => one(Cond::Free),
        "const" => one(Cond::Const),
        "convergent-p" => one(Cond::ConvergentP),
        "convergent-c" => one(Cond::ConvergentC),
        "interpolated" => one(Cond::Interpolated),
        "propagatable" => one(Cond::Propagatable),
        "uninterpolated" => one(Cond::Uninterpolated),
        "promotable" => one(Cond::Promotable),
        "single" => one(Cond::Single),
        "not-free" => one(Cond::NotFree),
        "not-const" => one(Cond::NotConst),
        "same-bits" => {
            want(2)?;
            Ok(Cond::SameBits(var(file, &args[0])?, var(file, &args[1])?))
        }
        "regroups" => {
            want(3)?;
            let v = |i: usize| var(file, &args[i]);
            Ok(Cond::Regroups(v(0)?, v(1)?, v(2)?))
        }
        _ => Err(err(
            file,
            items[0].loc(),
            format!(
                "unknown condition `{name}`, expected one of: free, const, convergent-p, \
                 convergent-c, same-bits, interpolated, propagatable, uninterpolated, \
                 promotable, single, not-free, not-const, regroups"
            ),
        )),
    }
}

fn check_bound(
    file: &str,
    loc: SrcLoc,
    bound: &[Var],
    used: &[Var],
    what: &str,
) -> Result<(), Error> {
    match used.iter().find(|v| !bound.contains(v)) {
        Some(v) => Err(err(
            file,
            loc,
            format!("variable {v} in the {what} is not bound by the left-hand side"),
        )),
        None => Ok(()),
    }
}

fn parse_rule(file: &str, s: &Sexp, type_check: bool) -> Result<RuleDef, Error> {
    let items = s
        .list()
        .ok_or_else(|| err(file, s.loc(), format!("expected `(rule ...)`, found `{s}`")))?;
    if items.first().and_then(Sexp::atom) != Some("rule") {
        return Err(err(file, s.loc(), "expected `(rule NAME LHS RHS ...)`"));
    }
    if items.len() < 4 {
        return Err(err(
            file,
            s.loc(),
            "a rule needs a name, a left-hand side and a right-hand side",
        ));
    }
    let name = items[1]
        .atom()
        .filter(|n| !n.starts_with('?'))
        .ok_or_else(|| err(file, items[1].loc(), "the rule name must be a plain word"))?;
    let (lhs_s, rhs_s) = (&items[2], &items[3]);
    if lhs_s.atom().is_some_and(|a| a.starts_with('?')) {
        return Err(err(
            file,
            lhs_s.loc(),
            "the left-hand side must not be a bare variable",
        ));
    }
    let lhs = pattern(file, lhs_s)?;
    let rhs = pattern(file, rhs_s)?;
    let mut conds = vec![];
    let (mut bidirectional, mut inexact) = (false, false);
    for extra in &items[4..] {
        match (extra.atom(), extra.list()) {
            (Some("bidirectional"), _) => bidirectional = true,
            (Some("inexact"), _) => inexact = true,
            (_, Some(l)) if l.first().and_then(Sexp::atom) == Some("if") => {
                for c in &l[1..] {
                    conds.push(cond(file, c)?);
                }
            }
            _ => {
                let msg = format!(
                    "unexpected `{extra}`, expected `(if ...)`, `bidirectional` or `inexact`"
                );
                return Err(err(file, extra.loc(), msg));
            }
        }
    }
    let cond_vars: Vec<Var> = conds.iter().flat_map(Cond::vars).collect();
    check_bound(
        file,
        rhs_s.loc(),
        &lhs.vars(),
        &rhs.vars(),
        "right-hand side",
    )?;
    check_bound(file, s.loc(), &lhs.vars(), &cond_vars, "conditions")?;
    if bidirectional {
        check_bound(
            file,
            lhs_s.loc(),
            &rhs.vars(),
            &lhs.vars(),
            "left-hand side of a bidirectional rule (read right to left)",
        )?;
        check_bound(
            file,
            s.loc(),
            &rhs.vars(),
            &cond_vars,
            "conditions of a bidirectional rule",
        )?;
    }
    let same_bits: Vec<(Var, Var)> = conds
        .iter()
        .filter_map(|c| match c {
            Cond::SameBits(a, b) => Some((*a, *b)),
            _ => None,
        })
        .collect();
    if type_check {
        super::typecheck::check(&lhs, &rhs, &same_bits, bidirectional)
            .map_err(|m| err(file, s.loc(), format!("rule `{name}`: {m}")))?;
    }
    let exact_variant = if inexact {
        None
    } else {
        let ((l, lc), (r, rc)) = (exactify(lhs_s), exactify(rhs_s));
        if lc || rc {
            Some((pattern(file, &l)?, pattern(file, &r)?))
        } else {
            None
        }
    };
    Ok(RuleDef {
        name: name.to_string(),
        lhs,
        rhs,
        conds,
        bidirectional,
        inexact,
        file: file.to_string(),
        loc: s.loc(),
        exact_variant,
    })
}

impl RuleSet {
    /// A set of already parsed rules (e.g. a subset of another set); duplicate names
    /// are an error.
    pub fn from_rules(rules: Vec<RuleDef>) -> Result<RuleSet, Error> {
        let mut set = RuleSet::default();
        for rule in rules {
            set.push(rule)?;
        }
        Ok(set)
    }

    /// The rules, in load order.
    pub fn rules(&self) -> &[RuleDef] {
        &self.rules
    }

    /// The rules for editing: unshared from other clones, and compiled anew later.
    pub(crate) fn rules_mut(&mut self) -> &mut Vec<RuleDef> {
        self.compiled = Arc::default();
        Arc::make_mut(&mut self.rules)
    }

    fn push(&mut self, rule: RuleDef) -> Result<(), Error> {
        if let Some(prev) = self.rules.iter().find(|r| r.name == rule.name) {
            let msg = format!(
                "duplicate rule name `{}` (first defined at {}:{})",
                rule.name, prev.file, prev.loc
            );
            return Err(err(&rule.file, rule.loc, msg));
        }
        Arc::make_mut(&mut self.rules).push(rule);
        // The set changed: later `rewrites` calls compile it anew.
        self.compiled = Arc::default();
        Ok(())
    }

    /// The compiled-in default rules (`rules/*.rules`). Parsed, type-checked and
    /// compiled once per process: every `Options::new()` asks for them, and parsing
    /// ~600 rules costs more than optimizing a typical pair.
    pub fn default_set() -> RuleSet {
        static DEFAULT: OnceLock<RuleSet> = OnceLock::new();
        DEFAULT
            .get_or_init(|| {
                let mut set = RuleSet::default();
                for (file, text) in DEFAULT_RULE_FILES {
                    // The shipped files are checked by the test suite (type check
                    // included: `default_set_parses` reads them as any file is read);
                    // at every start the check would cost a quarter of a small pair's
                    // process. A failure here would be a build defect, so fall back to
                    // the rules that parsed.
                    if let Err(e) = set.extend_from_text_with(file, text, false) {
                        debug_assert!(false, "{e}");
                    }
                }
                // Compiled here so that every clone shares the compiled rewrites.
                let _ = set.compiled();
                set
            })
            .clone()
    }

    /// Parses a rule file.
    pub fn parse(file: &str, text: &str) -> Result<RuleSet, Error> {
        let mut set = RuleSet::default();
        set.extend_from_text(file, text)?;
        Ok(set)
    }

    /// Adds the rules of a file; a name already in the set is an error.
    pub fn extend_from_text(&mut self, file: &str, text: &str) -> Result<(), Error> {
        self.extend_from_text_with(file, text, true)
    }

    /// [`RuleSet::extend_from_text`], type-checking each rule when `type_check`.
    fn extend_from_text_with(
        &mut self,
        file: &str,
        text: &str,
        type_check: bool,
    ) -> Result<(), Error> {
        let mut items = vec![];
        for item in parse_all(text).map_err(|(loc, m)| err(file, loc, m))? {
            items.extend(super::template::expand(&item).map_err(|(loc, m)| err(file, loc, m))?);
        }
        for item in &items {
            // `(include ...)`, `(drop ...)` and the other delta forms edit the set.
            if !variant::apply(self, file, item)? {
                self.push(parse_rule(file, item, type_check)?)?;
            }
        }
        Ok(())
    }

    /// Adds every rule of `other`; duplicate names are an error.
    pub fn extend(&mut self, other: RuleSet) -> Result<(), Error> {
        let rules = Arc::try_unwrap(other.rules).unwrap_or_else(|shared| (*shared).clone());
        rules.into_iter().try_for_each(|rule| self.push(rule))
    }

    /// Names of all rules, in order.
    pub fn names(&self) -> Vec<&str> {
        self.rules.iter().map(|r| r.name.as_str()).collect()
    }

    /// The egg rewrites: each rule, its right-to-left form when bidirectional, and its
    /// `.exact` instantiation when it is not `inexact`.
    pub fn rewrites(&self) -> Result<Vec<Rewrite<VNode, VAnalysis>>, Error> {
        Ok(self.compiled()?.rewrites.clone())
    }

    /// The rewrites and their reachability index, compiled once and shared by clones.
    pub fn compiled(&self) -> Result<&Compiled, Error> {
        if let Some(done) = self.compiled.get() {
            return Ok(done);
        }
        let (rewrites, conds) = self.compile(false)?;
        let reach = Reach::with_conditions(&rewrites, &conds);
        // A concurrent caller may have filled it first; both results are identical.
        Ok(self.compiled.get_or_init(|| Compiled { rewrites, reach }))
    }

    /// The rewrites and the conditions of each; `keep_twins` (tests only) keeps those
    /// equal to an earlier one.
    fn compile(
        &self,
        keep_twins: bool,
    ) -> Result<(Vec<Rewrite<VNode, VAnalysis>>, Conditions), Error> {
        // Every rule, its right-to-left form when bidirectional, and its `.exact` form.
        let mut variants: Vec<(String, &Pattern<VNode>, &Pattern<VNode>, &RuleDef)> = vec![];
        for r in self.rules.iter() {
            variants.push((r.name.clone(), &r.lhs, &r.rhs, r));
            if r.bidirectional {
                variants.push((format!("{}.rev", r.name), &r.rhs, &r.lhs, r));
            }
            if let Some((l, rhs)) = &r.exact_variant {
                variants.push((format!("{}.exact", r.name), l, rhs, r));
                if r.bidirectional {
                    variants.push((format!("{}.exact.rev", r.name), rhs, l, r));
                }
            }
        }
        // A rewrite equal to an earlier one up to the operand order of commutative ops
        // finds the same matches and adds the same nodes: only the first is kept
        // (`for-ops` writes both operand placements of a law for every op it lists,
        // commutative or not).
        let sides: Vec<_> = variants
            .iter()
            .map(|(_, l, rhs, r)| (&l.ast, &rhs.ast, r.conds.as_slice()))
            .collect();
        let firsts = first_of_twins(&sides);
        let mut out = vec![];
        let mut conditions = vec![];
        for ((name, l, rhs, r), first) in variants.into_iter().zip(firsts) {
            if !first && !keep_twins {
                continue;
            }
            let applier = ConditionalApplier {
                condition: Conds {
                    conds: r.conds.clone(),
                    forward: super::sharing::forward_vars(&l.ast),
                    moved: super::recompute::Moved::of(&l.ast),
                },
                applier: rhs.clone(),
            };
            // A left-hand side naming a commutative op matches it in both operand
            // orders (the e-graph keeps one): `CommPattern` instead of egg's matcher.
            let rw = match CommPattern::new(l) {
                Some(comm) => Rewrite::new(name, comm, applier),
                None => Rewrite::new(name, l.clone(), applier),
            };
            out.push(rw.map_err(|m| err(&r.file, r.loc, m))?);
            conditions.push(r.conds.clone());
        }
        Ok((out, conditions))
    }
}

/// One rewrite's sides and conditions, as twin detection reads them.
type Sides<'a> = (&'a PatternAst<VNode>, &'a PatternAst<VNode>, &'a [Cond]);

/// Per rewrite, whether no earlier one is its twin: the same left-hand side, right-hand
/// side (both up to commutative operand order, [`canonical`]) and conditions. Rewrites
/// are bucketed by a hash of their canonical sides ([`canonical_hash`]), and only
/// rewrites in one bucket are compared in full: most have none to compare with.
fn first_of_twins(rewrites: &[Sides<'_>]) -> Vec<bool> {
    let conds = |c: &[Cond]| {
        let mut text: Vec<String> = c.iter().map(|c| format!("{c:?}")).collect();
        text.sort();
        text
    };
    let same = |a: &Sides<'_>, b: &Sides<'_>| {
        canonical(a.0) == canonical(b.0)
            && canonical(a.1) == canonical(b.1)
            && conds(a.2) == conds(b.2)
    };
    let mut buckets: FxHashMap<(u64, u64), Vec<usize>> = FxHashMap::default();
    let mut first = Vec::with_capacity(rewrites.len());
    for (i, sides) in rewrites.iter().enumerate() {
        let bucket = buckets
            .entry((canonical_hash(sides.0), canonical_hash(sides.1)))
            .or_default();
        let twin = bucket.iter().any(|&j| same(&rewrites[j], sides));
        if !twin {
            bucket.push(i);
        }
        first.push(!twin);
    }
    first
}

#[cfg(test)]
mod tests {
    use crate::egraph::saturate::assert_same_runs;

    const TWINS: &str = "
        (rule m-uf (fmul (xfer ?m ?a) ?k) (xfer ?m (fmul ?a ?k)) (if (free ?k)) bidirectional inexact)
        (rule m-fu (fmul ?k (xfer ?m ?a)) (xfer ?m (fmul ?k ?a)) (if (free ?k)) bidirectional inexact)
        (rule s-uf (fsub (xfer ?m ?a) ?k) (xfer ?m (fsub ?a ?k)) (if (free ?k)) bidirectional inexact)
        (rule s-fu (fsub ?k (xfer ?m ?a)) (xfer ?m (fsub ?k ?a)) (if (free ?k)) bidirectional inexact)
        (rule m-fu-other (fmul ?k (xfer ?m ?a)) (xfer ?m (fmul ?k ?a)) (if (const ?k)) inexact)";

    #[test]
    fn twins_up_to_commutative_operand_order_compile_once() {
        let set = RuleSet::parse("t.rules", TWINS).unwrap();
        let names = rewrite_names(&set);
        // `m-fu` repeats `m-uf` (both directions); `fsub` is not commutative, and
        // `m-fu-other` has another condition.
        let want = [
            "m-uf",
            "m-uf.rev",
            "s-uf",
            "s-uf.rev",
            "s-fu",
            "s-fu.rev",
            "m-fu-other",
        ];
        assert_eq!(names, want);
        assert_eq!(set.compile(true).unwrap().0.len(), want.len() + 2);
    }

    /// Dropping the default set's twins changes no run: on the shipped, file-test and
    /// synthetic pairs, saturating with and without them applies the same rewrites the
    /// same number of times (a twin never changes the graph after its first) and ends
    /// with the same graph size.
    #[test]
    fn dropping_twins_changes_no_run() {
        let set = RuleSet::default_set();
        let kept = set.rewrites().unwrap();
        let (all, _) = set.compile(true).unwrap();
        assert!(all.len() > kept.len(), "the default set has twins");
        for pair in crate::gen::sample_pairs() {
            let g = crate::egraph::lower::lower(&pair, VAnalysis::default(), false).egraph;
            assert_same_runs(&g, all.iter().collect(), kept.iter().collect());
        }
    }

    /// The names of a set's compiled rewrites, in order.
    fn rewrite_names(set: &RuleSet) -> Vec<String> {
        let rewrites = set.rewrites().unwrap();
        rewrites.iter().map(|r| r.name.to_string()).collect()
    }

    use super::*;

    fn rule_err(text: &str) -> String {
        match RuleSet::parse("t.rules", text) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted: {text}"),
        }
    }

    #[test]
    fn default_set_parses() {
        let mut set = RuleSet::default();
        for (f, t) in DEFAULT_RULE_FILES {
            set.extend_from_text(f, t).unwrap();
        }
        assert!(set.names().contains(&"propagate-free"));
        assert!(set.rewrites().is_ok());
        // `default_set` reads the same files without the type check: the same rules.
        assert_eq!(set.names(), RuleSet::default_set().names());
    }

    #[test]
    fn errors_have_positions() {
        assert_eq!(
            rule_err("; x\n(rule a (fadd ?x) ?x)"),
            "t.rules:2:9: error: bad pattern `(fadd ?x)`: `fadd` takes 2 operand(s), found 1"
        );
        assert!(
            rule_err("(rule a (fadd ?x ?y)\n  ?z)").starts_with("t.rules:2:3: error: variable ?z")
        );
        assert!(rule_err("(rule a (fneg ?x) ?x (if (shiny ?x)))")
            .starts_with("t.rules:1:27: error: unknown condition `shiny`"));
        assert!(rule_err("(rule a (fneg ?x) ?x (if (free ?y)))")
            .starts_with("t.rules:1:1: error: variable ?y in the conditions"));
        assert!(rule_err("(rule a (fneg ?x) ?x)\n(rule a (fabs ?x) ?x)")
            .starts_with("t.rules:2:1: error: duplicate rule name `a`"));
        assert!(rule_err("(rule a (fmul ?x 0f32) 0f32 bidirectional)")
            .starts_with("t.rules:1:9: error: variable ?x in the left-hand side"));
        assert!(rule_err("(rule a (fneg ?x)").starts_with("t.rules:1:1: error: unclosed"));
        assert!(rule_err("(rule a (fneg ?x) ?x sideways)")
            .starts_with("t.rules:1:22: error: unexpected"));
    }

    #[test]
    fn motion_conditions_parse() {
        let set = RuleSet::parse(
            "t.rules",
            "(rule m (fneg (xfer ?m ?a)) (xfer ?m (fneg ?a)) \
             (if (uninterpolated ?m) (promotable ?a) (single ?a) (not-free ?a)))",
        )
        .unwrap();
        let conds = &set.rules[0].conds;
        assert_eq!(conds.len(), 4);
        assert!(matches!(conds[0], Cond::Uninterpolated(_)));
        assert!(matches!(conds[3], Cond::NotFree(_)));
    }

    #[test]
    fn templates_expand_and_report_positions() {
        let set = RuleSet::parse(
            "t.rules",
            "(for-ops (fadd fmul) (rule c-$op ($op ?a ?b) ($op ?b ?a)))",
        )
        .unwrap();
        assert_eq!(set.names(), ["c-fadd", "c-fmul"]);
        assert!(rule_err("\n(for-ops (frob) (rule c-$op ($op ?a) ?a))")
            .starts_with("t.rules:2:29: error: bad pattern `(frob ?a)`"));
    }

    #[test]
    fn exact_instantiation_and_inexact_marker() {
        let set = RuleSet::parse(
            "t.rules",
            "(rule comm (fadd ?a ?b) (fadd ?b ?a))\n(rule z (fadd ?a 0f32) ?a inexact)",
        )
        .unwrap();
        let names = rewrite_names(&set);
        assert_eq!(names, ["comm", "comm.exact", "z"]);
    }
}
