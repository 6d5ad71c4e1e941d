//! Detection of inlinable uniforms. A condition qualifies when it is built only from
//! constants, default-block uniform words and UBO loads at constant offsets — Mesa's
//! `nir_inline_uniforms` criterion for `if` conditions and loop bounds, extended to
//! `bcsel` selectors. (The IR has no `fcsel`: a float select is a comparison feeding a
//! `bcsel`, and is found as one.) For each condition it counts the instructions that
//! knowing its words would fold.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::{
    eval_alu, walk, AluOp, BitSize, Block, InstKind, OpClass, Pipeline, Shader, Stmt, UniformWord,
    Value, Visit,
};

use super::fold::count_insts;
use super::report::{ConditionKind, Inlinable, InlinableCondition, InlinableWord, StageInlinable};

/// Lists, per stage, the conditions that known uniform words would decide.
pub fn find_inlinable(p: &Pipeline) -> Inlinable {
    Inlinable {
        stages: vec![stage_inlinable(&p.producer), stage_inlinable(&p.consumer)],
    }
}

/// What a value is built from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Constants only, with this pattern (`None`: not evaluated, e.g. a float op on
    /// a signed zero, or undef).
    Const(Option<u32>),
    /// Constants and at least one uniform word.
    Uniform,
    /// Anything else (inputs, phis, system values, memory).
    Other,
}

struct Detector<'s> {
    shader: &'s Shader,
    class: Vec<Class>,
    /// The defining instruction of each value defined by one.
    defs: Vec<Option<&'s InstKind>>,
    /// Header phis of the enclosing loops, innermost last.
    loop_phis: Vec<BTreeSet<Value>>,
    conditions: Vec<InlinableCondition>,
}

fn stage_inlinable(shader: &Shader) -> StageInlinable {
    let n = shader.values.len();
    let mut d = Detector {
        shader,
        class: vec![Class::Other; n],
        defs: vec![None; n],
        loop_phis: vec![],
        conditions: vec![],
    };
    d.block(&shader.body);
    let mut words: BTreeMap<UniformWord, InlinableWord> = BTreeMap::new();
    for c in &d.conditions {
        for w in &c.words {
            let e = words.entry(*w).or_insert(InlinableWord {
                word: *w,
                conditions: 0,
                folds: 0,
            });
            e.conditions += 1;
            e.folds += c.folds;
        }
    }
    StageInlinable {
        stage: shader.stage(),
        words: words.into_values().collect(),
        conditions: d.conditions,
    }
}

impl<'s> Detector<'s> {
    fn class(&self, v: Value) -> Class {
        self.class.get(v.index()).copied().unwrap_or(Class::Other)
    }

    fn block(&mut self, block: &'s Block) {
        for visit in walk(block) {
            match visit {
                Visit::Enter(Stmt::Inst(inst)) => {
                    let Some(v) = inst.result else { continue };
                    if let Some(slot) = self.defs.get_mut(v.index()) {
                        *slot = Some(&inst.kind);
                    }
                    let class = self.classify(&inst.kind);
                    self.class[v.index()] = class;
                    if let InstKind::Alu {
                        op: AluOp::BCsel,
                        srcs,
                        ..
                    } = &inst.kind
                    {
                        self.condition(ConditionKind::Select, srcs[0], inst.loc, 1);
                    }
                }
                Visit::Enter(Stmt::If {
                    cond,
                    then_body,
                    else_body,
                    loc,
                    ..
                }) => {
                    let smaller = count_insts(then_body).min(count_insts(else_body));
                    if self.class(*cond) == Class::Uniform {
                        self.condition(ConditionKind::Branch, *cond, *loc, smaller);
                    } else if let Some(bound) = self.loop_bound(*cond) {
                        self.condition(ConditionKind::LoopBound, bound, *loc, 0);
                    }
                }
                Visit::Enter(Stmt::Loop { phis, .. }) => {
                    self.loop_phis.push(phis.iter().map(|p| p.dst).collect());
                }
                Visit::Leave(Stmt::Loop { .. }) => {
                    self.loop_phis.pop();
                }
                _ => {}
            }
        }
    }

    fn classify(&self, kind: &InstKind) -> Class {
        match kind {
            InstKind::Const(c) => Class::Const(Some(*c)),
            InstKind::LoadUniform { .. } => Class::Uniform,
            InstKind::LoadUbo { offset, .. } => match self.class(*offset) {
                Class::Const(Some(_)) => Class::Uniform,
                _ => Class::Other,
            },
            InstKind::Alu { op, srcs, .. } => {
                let classes: Vec<Class> = srcs.iter().map(|s| self.class(*s)).collect();
                if classes.contains(&Class::Other) {
                    Class::Other
                } else if classes.contains(&Class::Uniform) {
                    Class::Uniform
                } else {
                    Class::Const(self.evaluate(*op, srcs))
                }
            }
            _ => Class::Other,
        }
    }

    /// The pattern of an ALU op on constant sources (only needed for UBO offsets, so
    /// integer arithmetic is what matters; float ops on zeros are left unevaluated).
    fn evaluate(&self, op: AluOp, srcs: &[Value]) -> Option<u32> {
        let vals: Vec<u32> = srcs
            .iter()
            .map(|s| match self.class(*s) {
                Class::Const(c) => c,
                _ => None,
            })
            .collect::<Option<_>>()?;
        let sizes: Vec<BitSize> = srcs.iter().map(|s| self.shader.bits(*s)).collect();
        if op.class() == OpClass::Float {
            return None;
        }
        op.result_bits(&sizes).ok()?;
        Some(eval_alu(op, &vals, &sizes))
    }

    /// The uniform side of a loop exit test `cmp(i, bound)` (or its negation) where
    /// `i` is a header phi of an enclosing loop.
    fn loop_bound(&self, cond: Value) -> Option<Value> {
        if self.loop_phis.is_empty() {
            return None;
        }
        let mut kind = self.defs.get(cond.index()).copied().flatten()?;
        if let InstKind::Alu {
            op: AluOp::INot,
            srcs,
            ..
        } = kind
        {
            kind = self.defs.get(srcs[0].index()).copied().flatten()?;
        }
        let InstKind::Alu { op, srcs, .. } = kind else {
            return None;
        };
        if !matches!(op.class(), OpClass::IntCmp | OpClass::FloatCmp) {
            return None;
        }
        let is_phi = |v: &Value| self.loop_phis.iter().any(|l| l.contains(v));
        match (srcs[0], srcs[1]) {
            (i, b) | (b, i) if is_phi(&i) && self.class(b) == Class::Uniform => Some(b),
            _ => None,
        }
    }

    /// Records a condition on `value` when it is uniform: its words and the
    /// instructions of its expression (loads and ALU, each counted once), plus
    /// `extra` instructions that go with it.
    fn condition(
        &mut self,
        kind: ConditionKind,
        value: Value,
        loc: Option<crate::ir::SrcLoc>,
        extra: usize,
    ) {
        if self.class(value) != Class::Uniform {
            return;
        }
        let mut words = BTreeSet::new();
        let mut seen = BTreeSet::new();
        let mut stack = vec![value];
        while let Some(v) = stack.pop() {
            if self.class(v) != Class::Uniform || !seen.insert(v) {
                continue;
            }
            match self.defs.get(v.index()).copied().flatten() {
                Some(InstKind::LoadUniform { index, .. }) => {
                    words.insert(UniformWord::Uniform(*index));
                }
                Some(InstKind::LoadUbo { block, offset, .. }) => {
                    if let Class::Const(Some(o)) = self.class(*offset) {
                        words.insert(UniformWord::Ubo {
                            block: *block,
                            offset: o,
                        });
                    }
                }
                Some(InstKind::Alu { srcs, .. }) => stack.extend(srcs.iter().copied()),
                _ => {}
            }
        }
        self.conditions.push(InlinableCondition {
            kind,
            loc,
            words: words.into_iter().collect(),
            folds: seen.len() + extra,
        });
    }
}
