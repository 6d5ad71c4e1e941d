//! Load-time type checking of rules: for every assignment of bit sizes to a rule's
//! value variables under which its left side is well formed (the only matches it can
//! ever have), the right side must be well formed too, with the same kind and bit
//! size; a mode is never used as a value nor a value as a mode; a 1-bit value never
//! crosses a varying (`xfer`); and every input leaf the right side reads (a uniform
//! word, an input slot, a system value, a UBO block, an opaque value) is one the left
//! side matched, so a rewrite never reads something the pair may not have.
//!
//! Patterns are `egg::RecExpr`s, whose nodes come children first: each side is typed
//! in one pass over that array, never by recursion.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use egg::{ENodeOrVar, Pattern, Var};

use super::lang::VNode;
use crate::ir::{BitSize, Half};

/// The type of a pattern node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    /// A value of this bit size.
    Value(BitSize),
    /// An xfer mode (`flat`, `(persp center)`, ...).
    Mode,
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Value(b) => write!(f, "a {}-bit value", b.bits()),
            Ty::Mode => f.write_str("an xfer mode"),
        }
    }
}

/// Bit sizes a value variable may take.
const SIZES: [BitSize; 3] = [BitSize::B1, BitSize::B16, BitSize::B32];

/// More value variables than this are not enumerated (3^8 assignments); no rule
/// needs that many.
const MAX_VALUE_VARS: usize = 8;

/// Checks one direction-independent rule; the error says what is wrong.
pub(crate) fn check(
    lhs: &Pattern<VNode>,
    rhs: &Pattern<VNode>,
    same_bits: &[(Var, Var)],
    bidirectional: bool,
) -> Result<(), String> {
    let modes = mode_vars(lhs, rhs)?;
    let values: Vec<Var> = all_vars(lhs, rhs)
        .into_iter()
        .filter(|v| !modes.contains(v))
        .collect();
    if values.len() > MAX_VALUE_VARS {
        return Err(format!(
            "more than {MAX_VALUE_VARS} value variables: too many to check"
        ));
    }
    let mut matched = None;
    for assignment in assignments(&values, &modes) {
        let consistent = same_bits
            .iter()
            .all(|(a, b)| assignment.get(a) == assignment.get(b));
        if !consistent {
            continue;
        }
        let Ok(left) = type_of(lhs, &assignment) else {
            continue;
        };
        matched.get_or_insert(left);
        let right = type_of(rhs, &assignment).map_err(|e| {
            format!(
                "the right-hand side is ill-typed where the left-hand side matches {}: {e}",
                describe(&assignment)
            )
        })?;
        if right != left {
            return Err(format!(
                "the left-hand side is {left} but the right-hand side is {right}{}",
                with(&assignment)
            ));
        }
    }
    if matched.is_none() {
        let why = type_of(lhs, &assignments(&values, &modes)[0])
            .err()
            .unwrap_or_default();
        return Err(format!("the left-hand side can never match: {why}"));
    }
    check_leaves(lhs, rhs, "right")?;
    if bidirectional {
        check_leaves(rhs, lhs, "left")?;
    }
    Ok(())
}

/// Every bit-size assignment of the value variables under which `lhs` is well typed
/// and the `same-bits` conditions hold: the sizes a rule can ever be instantiated at.
/// Mode variables are left out. Empty when the rule is ill-typed.
pub(crate) fn admitted_sizes(
    lhs: &Pattern<VNode>,
    rhs: &Pattern<VNode>,
    same_bits: &[(Var, Var)],
) -> Vec<BTreeMap<Var, BitSize>> {
    let Ok(modes) = mode_vars(lhs, rhs) else {
        return vec![];
    };
    let values: Vec<Var> = all_vars(lhs, rhs)
        .into_iter()
        .filter(|v| !modes.contains(v))
        .collect();
    if values.len() > MAX_VALUE_VARS {
        return vec![];
    }
    assignments(&values, &modes)
        .into_iter()
        .filter(|a| same_bits.iter().all(|(x, y)| a.get(x) == a.get(y)))
        .filter(|a| type_of(lhs, a).is_ok())
        .map(|a| {
            a.into_iter()
                .filter_map(|(v, t)| match t {
                    Ty::Value(b) => Some((v, b)),
                    Ty::Mode => None,
                })
                .collect()
        })
        .collect()
}

/// The bit size of a leaf node (constant, undef, uniform, input, system value,
/// opaque value); `None` for nodes with operands.
pub(crate) fn leaf_bits(n: &VNode) -> Option<BitSize> {
    if !egg::Language::children(n).is_empty() {
        return None;
    }
    match node_type(n, &[]) {
        Ok(Ty::Value(b)) => Some(b),
        _ => None,
    }
}

/// Every variable of either side.
fn all_vars(lhs: &Pattern<VNode>, rhs: &Pattern<VNode>) -> BTreeSet<Var> {
    lhs.vars().into_iter().chain(rhs.vars()).collect()
}

/// The variables used as xfer modes; an error when one is also used as a value.
fn mode_vars(lhs: &Pattern<VNode>, rhs: &Pattern<VNode>) -> Result<BTreeSet<Var>, String> {
    let mut mode = BTreeSet::new();
    let mut value = BTreeSet::new();
    for p in [lhs, rhs] {
        let nodes = p.ast.as_ref();
        for node in nodes {
            let ENodeOrVar::ENode(n) = node else { continue };
            let (mode_child, value_children): (Option<usize>, Vec<usize>) = match n {
                VNode::Xfer([m, v]) => (Some(usize::from(*m)), vec![usize::from(*v)]),
                other => (
                    None,
                    egg::Language::children(other)
                        .iter()
                        .map(|c| usize::from(*c))
                        .collect(),
                ),
            };
            let var_at = |i: usize| match nodes.get(i) {
                Some(ENodeOrVar::Var(v)) => Some(*v),
                _ => None,
            };
            mode.extend(mode_child.and_then(var_at));
            value.extend(value_children.into_iter().filter_map(var_at));
        }
    }
    // A whole side that is a variable is a value unless used as a mode elsewhere.
    match mode.intersection(&value).next() {
        Some(v) => Err(format!("{v} is used both as an xfer mode and as a value")),
        None => Ok(mode),
    }
}

/// Every assignment of bit sizes to `values` (modes fixed to `Mode`).
fn assignments(values: &[Var], modes: &BTreeSet<Var>) -> Vec<BTreeMap<Var, Ty>> {
    let mut out = vec![modes
        .iter()
        .map(|m| (*m, Ty::Mode))
        .collect::<BTreeMap<_, _>>()];
    for v in values {
        out = out
            .into_iter()
            .flat_map(|a| {
                SIZES.iter().map(move |b| {
                    let mut a = a.clone();
                    a.insert(*v, Ty::Value(*b));
                    a
                })
            })
            .collect();
    }
    out
}

fn describe(assignment: &BTreeMap<Var, Ty>) -> String {
    let parts: Vec<String> = assignment
        .iter()
        .filter_map(|(v, t)| match t {
            Ty::Value(b) => Some(format!("{v}: {}-bit", b.bits())),
            Ty::Mode => None,
        })
        .collect();
    if parts.is_empty() {
        "(no value variables)".into()
    } else {
        format!("({})", parts.join(", "))
    }
}

fn with(assignment: &BTreeMap<Var, Ty>) -> String {
    if assignment.values().any(|t| matches!(t, Ty::Value(_))) {
        format!(" {}", describe(assignment))
    } else {
        String::new()
    }
}

/// The type of a whole side under `assignment`, in one pass over its nodes.
fn type_of(p: &Pattern<VNode>, assignment: &BTreeMap<Var, Ty>) -> Result<Ty, String> {
    let mut types: Vec<Ty> = Vec::with_capacity(p.ast.as_ref().len());
    for node in p.ast.as_ref() {
        let ty = match node {
            ENodeOrVar::Var(v) => *assignment
                .get(v)
                .ok_or_else(|| format!("{v} has no type"))?,
            ENodeOrVar::ENode(n) => node_type(n, &types)?,
        };
        types.push(ty);
    }
    types
        .last()
        .copied()
        .ok_or_else(|| "an empty pattern".into())
}

fn io_bits(half: Half) -> BitSize {
    if half == Half::Full {
        BitSize::B32
    } else {
        BitSize::B16
    }
}

/// The type of `n` given its children's (already computed) types.
fn node_type(n: &VNode, types: &[Ty]) -> Result<Ty, String> {
    let value = |id: egg::Id| -> Result<BitSize, String> {
        match types[usize::from(id)] {
            Ty::Value(b) => Ok(b),
            Ty::Mode => Err(format!("an xfer mode is used as a value in `{n}`")),
        }
    };
    Ok(match n {
        VNode::Const { bits, .. } | VNode::Undef(bits) | VNode::Opaque { bits, .. } => {
            Ty::Value(*bits)
        }
        VNode::Alu { op, children, .. } => {
            let bits = children
                .iter()
                .map(|c| value(*c))
                .collect::<Result<Vec<_>, _>>()?;
            Ty::Value(op.result_bits(&bits)?)
        }
        VNode::Op { op, children } => {
            let bits = children
                .iter()
                .map(|c| value(*c))
                .collect::<Result<Vec<_>, _>>()?;
            if bits != op.operand_bits() {
                return Err(format!("`{}` operands of the wrong bit sizes", op.name));
            }
            let result = op.result_bits();
            Ty::Value(result.ok_or_else(|| format!("`{}` has no result", op.name))?)
        }
        VNode::Uniform(_, half) => Ty::Value(crate::ir::half_bits(*half)),
        VNode::Ubo { offset, half, .. } => match value(offset[0])? {
            BitSize::B32 => Ty::Value(crate::ir::half_bits(*half)),
            b => {
                return Err(format!(
                    "a UBO offset must be 32-bit, found {}-bit",
                    b.bits()
                ))
            }
        },
        VNode::Input(io) | VNode::VertexInput { slot: io, .. } => Ty::Value(io_bits(io.half)),
        VNode::SysVal(_, sv) => Ty::Value(sv.bits()),
        VNode::PerEmit([index, head, tail]) => {
            if value(*index)? != BitSize::B32 {
                return Err("a per-emit index must be 32-bit".into());
            }
            let (h, t) = (value(*head)?, value(*tail)?);
            if h != t {
                let msg = format!("per-emit values of {} and {} bits", h.bits(), t.bits());
                return Err(msg);
            }
            Ty::Value(h)
        }
        VNode::Mode(_, operands) => {
            for o in operands {
                value(*o)?;
            }
            Ty::Mode
        }
        VNode::Xfer([mode, v]) => {
            if types[usize::from(*mode)] != Ty::Mode {
                return Err(format!("the first operand of `{n}` must be an xfer mode"));
            }
            match value(*v)? {
                BitSize::B1 => return Err("a 1-bit value cannot cross a varying".into()),
                b => Ty::Value(b),
            }
        }
    })
}

/// The input leaves a side reads (constants and undefs are not inputs).
fn leaves(p: &Pattern<VNode>) -> BTreeSet<String> {
    p.ast
        .as_ref()
        .iter()
        .filter_map(|node| match node {
            ENodeOrVar::ENode(
                n @ (VNode::Uniform(..)
                | VNode::Input(_)
                | VNode::VertexInput { .. }
                | VNode::SysVal(..)
                | VNode::Opaque { .. }),
            ) => Some(n.to_string()),
            ENodeOrVar::ENode(VNode::Ubo { block, .. }) => Some(format!("ubo block {block}")),
            _ => None,
        })
        .collect()
}

/// Each leaf `to` reads must be one `from` matched.
fn check_leaves(from: &Pattern<VNode>, to: &Pattern<VNode>, side: &str) -> Result<(), String> {
    let have = leaves(from);
    match leaves(to).into_iter().find(|l| !have.contains(l)) {
        Some(l) => Err(format!(
            "the {side}-hand side reads `{l}`, which the other side does not match: \
             a pair need not have it"
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(l: &str, r: &str) -> Result<(), String> {
        let (l, r): (Pattern<VNode>, Pattern<VNode>) = (l.parse().unwrap(), r.parse().unwrap());
        check(&l, &r, &[], false)
    }

    #[test]
    fn well_typed_rules_pass() {
        rule("(fadd ?a ?b)", "(fadd ?b ?a)").unwrap();
        rule("(fmul ?a 1f32)", "?a").unwrap();
        rule("(xfer ?m (fmul ?a ?b))", "(fmul (xfer ?m ?a) ?b)").unwrap();
    }

    #[test]
    fn ill_typed_rules_are_refused() {
        let e = rule("(fadd ?a 0f32)", "0f16").unwrap_err();
        assert!(
            e.contains("32-bit value but the right-hand side is a 16-bit"),
            "{e}"
        );
        let e = rule("(xfer ?m ?a)", "(fadd ?m ?a)").unwrap_err();
        assert!(e.contains("both as an xfer mode and as a value"), "{e}");
        let e = rule("(iand ?c ?d)", "(xfer flat (iand ?c ?d))").unwrap_err();
        assert!(e.contains("1-bit value cannot cross a varying"), "{e}");
        let e = rule("(fadd ?a uniform:0)", "(fadd ?a uniform:7)").unwrap_err();
        assert!(e.contains("uniform:7"), "{e}");
    }
}
