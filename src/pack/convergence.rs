//! A conservative convergence analysis of producer outputs: an output is convergent
//! (equal for every vertex of a primitive) when each of its stores writes a value built
//! only from constants, uniforms, UBO loads, convergent system values and (in a TES)
//! per-patch data through pure ALU ops, under control flow whose conditions are
//! themselves convergent. A GS never has convergent outputs: one invocation emits all
//! vertices of a primitive at different times.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use crate::ir::{Block, InstKind, IoSlot, Shader, Stage, Stmt, Value};

/// The outputs of `producer` whose every store is provably convergent.
pub fn convergent_outputs(producer: &Shader) -> BTreeSet<IoSlot> {
    if producer.stage() == Stage::Geometry {
        return BTreeSet::new();
    }
    let mut a = Analysis {
        conv: vec![false; producer.values.len()],
        tes: producer.stage() == Stage::TessEval,
        stores: BTreeMap::new(),
    };
    a.block(&producer.body, true, true);
    a.stores
        .into_iter()
        .filter_map(|(slot, ok)| ok.then_some(slot))
        .collect()
}

struct Analysis {
    conv: Vec<bool>,
    tes: bool,
    /// Per output: whether every store seen so far is convergent.
    stores: BTreeMap<IoSlot, bool>,
}

/// What a block tells its enclosing loop.
struct Summary {
    /// Every branch condition inside (at any depth) is convergent.
    conds_convergent: bool,
    /// Argument lists of the `continue`s that target the enclosing loop.
    continues: Vec<Vec<Value>>,
}

impl Analysis {
    fn is(&self, v: Value) -> bool {
        self.conv.get(v.index()).copied().unwrap_or(false)
    }

    fn set(&mut self, v: Value, c: bool) {
        if let Some(slot) = self.conv.get_mut(v.index()) {
            *slot = c;
        }
    }

    fn opt(&self, v: Option<Value>) -> bool {
        v.is_none_or(|v| self.is(v))
    }

    /// Walks a block; `ctrl` says whether reaching it is convergent, `record` whether
    /// stores are recorded (off while a loop's phis are still being settled).
    fn block(&mut self, block: &Block, ctrl: bool, record: bool) -> Summary {
        let mut sum = Summary {
            conds_convergent: true,
            continues: vec![],
        };
        for stmt in block {
            match stmt {
                Stmt::Inst(inst) => {
                    if let Some(r) = inst.result {
                        let c = self.inst(&inst.kind);
                        self.set(r, c);
                    }
                    if record {
                        self.store(&inst.kind, ctrl);
                    }
                }
                Stmt::If {
                    cond,
                    then_body,
                    else_body,
                    phis,
                    ..
                } => {
                    let c = self.is(*cond);
                    let t = self.block(then_body, ctrl && c, record);
                    let e = self.block(else_body, ctrl && c, record);
                    sum.conds_convergent &= c && t.conds_convergent && e.conds_convergent;
                    sum.continues.extend(t.continues);
                    sum.continues.extend(e.continues);
                    for phi in phis {
                        let pc = c && self.is(phi.then_val) && self.is(phi.else_val);
                        self.set(phi.dst, pc);
                    }
                }
                Stmt::Loop { phis, body, .. } => {
                    let inner = self.looped(phis, body, ctrl, record);
                    sum.conds_convergent &= inner;
                }
                Stmt::Continue { args, .. } => sum.continues.push(args.clone()),
                Stmt::Break { .. } => {}
            }
        }
        sum
    }

    /// Settles a loop's phis (greatest fixpoint: start from the init values and only
    /// ever demote), then walks the body once more to record its stores.
    fn looped(
        &mut self,
        phis: &[crate::ir::LoopPhi],
        body: &Block,
        ctrl: bool,
        record: bool,
    ) -> bool {
        let mut state: Vec<bool> = phis.iter().map(|p| self.is(p.init)).collect();
        let conds = loop {
            for (p, c) in phis.iter().zip(&state) {
                self.set(p.dst, *c);
            }
            let sum = self.block(body, false, false);
            let conds = sum.conds_convergent;
            let next: Vec<bool> = state
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    *c && conds
                        && sum
                            .continues
                            .iter()
                            .all(|args| args.get(i).is_some_and(|v| self.is(*v)))
                })
                .collect();
            if next == state {
                break conds;
            }
            state = next;
        };
        if record {
            self.block(body, ctrl && conds, true);
        }
        conds
    }

    fn inst(&self, kind: &InstKind) -> bool {
        let ind = |i: &Option<crate::ir::Indirect>| self.opt(i.map(|i| i.index));
        match kind {
            InstKind::Const(_) | InstKind::LoadUniform { .. } => true,
            InstKind::Alu { srcs, .. } => srcs.iter().all(|s| self.is(*s)),
            InstKind::LoadUbo { offset, .. } => self.is(*offset),
            InstKind::LoadSystemValue(sv) => sv.is_convergent(),
            // A TES primitive's vertices all come from one patch: per-patch inputs and
            // a fixed control point are the same for all of them.
            InstKind::LoadInput { slot, indirect } => {
                self.tes && slot.slot.is_patch() && ind(indirect)
            }
            InstKind::LoadPerVertexInput {
                vertex, indirect, ..
            } => self.tes && self.is(*vertex) && ind(indirect),
            _ => false,
        }
    }

    fn store(&mut self, kind: &InstKind, ctrl: bool) {
        match kind {
            InstKind::StoreOutput {
                slot,
                value,
                indirect,
                ..
            } => {
                let ok = ctrl && indirect.is_none() && self.is(*value);
                match indirect {
                    None => self.note(*slot, ok),
                    Some(ind) => {
                        for i in 0..u32::from(ind.len) {
                            if let Some(s) = slot.slot.offset(i) {
                                self.note(IoSlot { slot: s, ..*slot }, false);
                            }
                        }
                    }
                }
            }
            InstKind::StorePerVertexOutput { slot, .. } => self.note(*slot, false),
            _ => {}
        }
    }

    fn note(&mut self, slot: IoSlot, ok: bool) {
        let e = self.stores.entry(slot).or_insert(true);
        *e &= ok;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{AluOp, BitSize, ShaderBuilder, SystemValue};

    fn v(n: u8) -> IoSlot {
        IoSlot::var(n, 0)
    }

    #[test]
    fn uniform_expressions_and_convergent_sysvals_are_convergent() {
        let mut b = ShaderBuilder::new(Stage::Vertex);
        let u = b.uniform(0);
        let k = b.ubo(0, 4);
        let inst = b.system_value(SystemValue::InstanceId);
        let s = b.alu(AluOp::FAdd, &[u, k]);
        let vid = b.system_value(SystemValue::VertexId);
        let a = b.load_input(IoSlot::new(crate::ir::Slot::Attr(0), 0));
        b.store(v(0), s);
        b.store(v(1), inst);
        b.store(v(2), vid);
        b.store(v(3), a);
        let got = convergent_outputs(&b.finish());
        assert_eq!(got, [v(0), v(1)].into_iter().collect());
    }

    #[test]
    fn stores_under_divergent_branch_are_not_convergent() {
        let mut b = ShaderBuilder::new(Stage::Vertex);
        let u = b.uniform(0);
        let a = b.load_input(IoSlot::new(crate::ir::Slot::Attr(0), 0));
        let zero = b.f32(0.0);
        let div = b.alu(AluOp::FLt, &[a, zero]);
        let conv = b.alu(AluOp::FLt, &[u, zero]);
        b.if_else(
            div,
            |b| {
                b.store(v(0), u);
                vec![]
            },
            |_| vec![],
        );
        b.if_else(
            conv,
            |b| {
                b.store(v(1), u);
                vec![]
            },
            |_| vec![],
        );
        // A phi over convergent values selected by a divergent condition diverges.
        let one = b.f32(1.0);
        let p = b.if_else(div, |_| vec![u], |_| vec![one]);
        b.store(v(2), p[0]);
        let got = convergent_outputs(&b.finish());
        assert_eq!(got, [v(1)].into_iter().collect());
    }

    #[test]
    fn one_divergent_store_spoils_the_output() {
        let mut b = ShaderBuilder::new(Stage::Vertex);
        let u = b.uniform(0);
        let a = b.load_input(IoSlot::new(crate::ir::Slot::Attr(0), 0));
        b.store(v(0), u);
        b.store(v(0), a);
        assert!(convergent_outputs(&b.finish()).is_empty());
    }

    #[test]
    fn geometry_shaders_have_no_convergent_outputs() {
        let mut b = ShaderBuilder::new(Stage::Geometry);
        let u = b.uniform(0);
        b.store(v(0), u);
        b.effect(InstKind::EmitVertex);
        assert!(convergent_outputs(&b.finish()).is_empty());
    }

    #[test]
    fn loop_counters_with_uniform_bounds_are_convergent() {
        let mut b = ShaderBuilder::new(Stage::Vertex);
        let zero = b.constant(BitSize::B32, 0);
        let n = b.uniform(0);
        let a = b.load_input(IoSlot::new(crate::ir::Slot::Attr(0), 0));
        let i = b.loop_(&[zero], |b, phis| {
            let done = b.alu(AluOp::IGe, &[phis[0], n]);
            b.if_else(
                done,
                |b| {
                    b.break_();
                    vec![]
                },
                |_| vec![],
            );
            let one = b.constant(BitSize::B32, 1);
            let next = b.alu(AluOp::IAdd, &[phis[0], one]);
            b.continue_(&[next]);
        });
        // Same loop shape, but the trip count depends on a vertex attribute.
        let j = b.loop_(&[zero], |b, phis| {
            let done = b.alu(AluOp::FGe, &[phis[0], a]);
            b.if_else(
                done,
                |b| {
                    b.break_();
                    vec![]
                },
                |_| vec![],
            );
            let one = b.constant(BitSize::B32, 1);
            let next = b.alu(AluOp::IAdd, &[phis[0], one]);
            b.continue_(&[next]);
        });
        b.store(v(0), i[0]);
        b.store(v(1), j[0]);
        assert_eq!(
            convergent_outputs(&b.finish()),
            [v(0)].into_iter().collect()
        );
    }

    #[test]
    fn tes_patch_inputs_are_convergent() {
        let mut b = ShaderBuilder::new(Stage::TessEval);
        let p = b.load_input(IoSlot::new(crate::ir::Slot::Patch(0), 0));
        let k = b.constant(BitSize::B32, 1);
        let cp = b.load_per_vertex(v(0), k);
        let tc = b.system_value(SystemValue::TessCoordX);
        let cp2 = b.load_per_vertex(v(0), tc);
        b.store(v(0), p);
        b.store(v(1), cp);
        b.store(v(2), cp2);
        assert_eq!(
            convergent_outputs(&b.finish()),
            [v(0), v(1)].into_iter().collect()
        );
    }
}
