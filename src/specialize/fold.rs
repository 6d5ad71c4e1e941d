//! The inlining pass over one shader: loads of known uniform words become constants,
//! then, in one forward walk (SSA definitions precede their uses), ALU instructions
//! whose sources are all constant are evaluated, `bcsel`s on a constant condition are
//! replaced by the operand they select and `if`s on a constant condition by the branch
//! they take. Evaluation is `ir::eval_alu`, the interpreter's own, so folding cannot
//! disagree with execution.

use crate::ir::{
    eval_alu, unsign_zero_operands, AluOp, BitSize, Block, Half, Inst, InstKind, KnownUniforms,
    Phi, Shader, Stmt, UniformWord, Value,
};
use crate::renumber::map_kind;

use super::report::{ConditionKind, FoldedCondition, StageFolds};

/// Inlines `known` into `shader` and folds what becomes constant.
pub(crate) fn fold_shader(shader: &mut Shader, known: &KnownUniforms) -> StageFolds {
    let n = shader.values.len();
    let mut folder = Folder {
        known,
        bits: shader.values.iter().map(|v| v.bits).collect(),
        konst: vec![None; n],
        subst: vec![None; n],
        folds: StageFolds::new(shader.stage()),
    };
    let body = std::mem::take(&mut shader.body);
    shader.body = folder.block(body);
    // Collapsed selects and folded phis leave values with no definition; the later
    // stages expect an arena of defined values only (as parsing gives).
    crate::renumber::renumber(shader);
    folder.folds
}

struct Folder<'k> {
    known: &'k KnownUniforms,
    /// Bit size of every value.
    bits: Vec<BitSize>,
    /// The constant pattern of every value known to be constant.
    konst: Vec<Option<u32>>,
    /// Values replaced by another (a collapsed select, a folded branch's phi); the
    /// replacement is already resolved, so one lookup suffices.
    subst: Vec<Option<Value>>,
    folds: StageFolds,
}

impl Folder<'_> {
    fn resolve(&self, v: Value) -> Value {
        self.subst.get(v.index()).copied().flatten().unwrap_or(v)
    }

    fn konst(&self, v: Value) -> Option<u32> {
        self.konst.get(self.resolve(v).index()).copied().flatten()
    }

    fn block(&mut self, block: Block) -> Block {
        let mut out = Vec::with_capacity(block.len());
        for stmt in block {
            self.stmt(stmt, &mut out);
        }
        out
    }

    fn stmt(&mut self, stmt: Stmt, out: &mut Block) {
        match stmt {
            Stmt::Inst(inst) => self.inst(inst, out),
            Stmt::If {
                cond,
                then_body,
                else_body,
                phis,
                loc,
            } => {
                let cond = self.resolve(cond);
                match self.konst(cond) {
                    Some(c) => {
                        let taken = c & 1 != 0;
                        self.folds.conditions.push(FoldedCondition {
                            kind: ConditionKind::Branch,
                            loc,
                            taken,
                        });
                        self.take_branch(taken, then_body, else_body, phis, out);
                    }
                    None => {
                        let then_body = self.block(then_body);
                        let else_body = self.block(else_body);
                        let phis = phis.iter().map(|p| self.phi(p)).collect();
                        out.push(Stmt::If {
                            cond,
                            then_body,
                            else_body,
                            phis,
                            loc,
                        });
                    }
                }
            }
            Stmt::Loop { phis, body, loc } => {
                let phis = phis
                    .into_iter()
                    .map(|mut p| {
                        p.init = self.resolve(p.init);
                        p
                    })
                    .collect();
                let body = self.block(body);
                out.push(Stmt::Loop { phis, body, loc });
            }
            Stmt::Continue { args, loc } => {
                let args = args.iter().map(|a| self.resolve(*a)).collect();
                out.push(Stmt::Continue { args, loc });
            }
            Stmt::Break { loc } => out.push(Stmt::Break { loc }),
        }
    }

    /// Splices the taken branch in place of the `if`; each merge phi becomes the value
    /// it merges from that branch. The branch's values become visible after it, which
    /// only widens their scope.
    fn take_branch(
        &mut self,
        taken: bool,
        then_body: Block,
        else_body: Block,
        phis: Vec<Phi>,
        out: &mut Block,
    ) {
        let (body, dead) = if taken {
            (then_body, else_body)
        } else {
            (else_body, then_body)
        };
        self.folds.branches += 1;
        self.folds.removed += count_insts(&dead);
        let body = self.block(body);
        out.extend(body);
        for p in phis {
            let v = self.resolve(if taken { p.then_val } else { p.else_val });
            self.subst[p.dst.index()] = Some(v);
        }
    }

    fn phi(&self, p: &Phi) -> Phi {
        Phi {
            dst: p.dst,
            then_val: self.resolve(p.then_val),
            else_val: self.resolve(p.else_val),
        }
    }

    fn inst(&mut self, mut inst: Inst, out: &mut Block) {
        let subst = &self.subst;
        map_kind(&mut inst.kind, &|v| {
            if let Some(r) = subst.get(v.index()).copied().flatten() {
                *v = r;
            }
        });
        let Some(result) = inst.result else {
            out.push(Stmt::Inst(inst));
            return;
        };
        if let Some((chosen, taken)) = self.collapsed_select(&inst.kind) {
            self.subst[result.index()] = Some(chosen);
            self.folds.selects += 1;
            self.folds.conditions.push(FoldedCondition {
                kind: ConditionKind::Select,
                loc: inst.loc,
                taken,
            });
            return;
        }
        if let Some(c) = self.constant(&inst.kind, result) {
            inst.kind = InstKind::Const(c);
            self.konst[result.index()] = Some(c);
        }
        out.push(Stmt::Inst(inst));
    }

    /// The operand a `bcsel` with a constant condition selects, and which one it is.
    fn collapsed_select(&self, kind: &InstKind) -> Option<(Value, bool)> {
        match kind {
            InstKind::Alu {
                op: AluOp::BCsel,
                srcs,
                ..
            } if srcs.len() == 3 => {
                let taken = self.konst(srcs[0])? & 1 != 0;
                Some((if taken { srcs[1] } else { srcs[2] }, taken))
            }
            _ => None,
        }
    }

    /// The constant an instruction now computes, counting what was inlined or folded.
    fn constant(&mut self, kind: &InstKind, result: Value) -> Option<u32> {
        let mask = self.bits[result.index()].mask();
        match kind {
            InstKind::Const(c) => Some(c & mask),
            InstKind::LoadUniform { index, half } => {
                self.inline(UniformWord::Uniform(*index), *half, mask)
            }
            InstKind::LoadUbo {
                block,
                offset,
                half,
            } => {
                let offset = self.konst(*offset)?;
                let word = UniformWord::Ubo {
                    block: *block,
                    offset,
                };
                self.inline(word, *half, mask)
            }
            InstKind::Alu { op, srcs, .. } => {
                let c = self.fold_alu(*op, srcs)?;
                self.folds.constants += 1;
                Some(c)
            }
            _ => None,
        }
    }

    /// The known word, or the 16-bit half of it a half load reads.
    fn inline(&mut self, word: UniformWord, half: Half, mask: u32) -> Option<u32> {
        let v = self.known.get(word)?;
        *self.folds.inlined.entry(word).or_default() += 1;
        let v = if half == Half::Hi { v >> 16 } else { v };
        Some(v & mask)
    }

    fn fold_alu(&self, op: AluOp, srcs: &[Value]) -> Option<u32> {
        let mut vals: Vec<u32> = srcs.iter().map(|s| self.konst(*s)).collect::<Option<_>>()?;
        let sizes: Vec<BitSize> = srcs.iter().map(|s| self.bits[s.index()]).collect();
        op.result_bits(&sizes).ok()?;
        // An inlined -0 must fold to the infinity execution gives (see the helper).
        unsign_zero_operands(op, &mut vals, &sizes);
        Some(eval_alu(op, &vals, &sizes))
    }
}

/// Instructions in a block, control flow included.
pub(crate) fn count_insts(block: &Block) -> usize {
    crate::ir::insts(block).count()
}
