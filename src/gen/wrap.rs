//! Control flow around a store: if/else, a phi merge, and counted loops that store
//! inside the body or after it. Everything a wrapper needs is computed beforehand at
//! top level, so the values it defines inside branches never escape their scope.

use super::pool::{Gen, PTy, Pv};
use super::recipe::Wrap;
use crate::ir::{AluOp, BitSize, Indirect, InstKind, IoSlot, ShaderBuilder, Value, Xfb};

/// Where a store goes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Target {
    /// `store_output`, maybe captured by xfb or indexed dynamically.
    Plain {
        io: IoSlot,
        xfb: Option<Xfb>,
        indirect: Option<Indirect>,
    },
    /// TCS `store_per_vertex_output` of output vertex `vertex`.
    PerVertex { io: IoSlot, vertex: Value },
}

/// Emits the store of `v` to `t`.
pub(crate) fn store(b: &mut ShaderBuilder, t: Target, v: Value) {
    match t {
        Target::Plain { io, xfb, indirect } => b.store_ex(io, v, indirect, xfb),
        Target::PerVertex { io, vertex } => b.effect(InstKind::StorePerVertexOutput {
            slot: io,
            value: v,
            vertex,
            indirect: None,
        }),
    }
}

/// A store with its control flow: `alt` is the other branch's value or the loop
/// increment, `cond` the branch condition.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wrapped {
    pub ty: PTy,
    pub v: Pv,
    pub alt: Pv,
    pub cond: Pv,
    pub wrap: Wrap,
}

/// Emits `w` storing to `t`.
pub(crate) fn emit(g: &mut Gen, t: Target, w: Wrapped) {
    let add = match w.ty {
        PTy::I32 => AluOp::IAdd,
        _ => AluOp::FAdd,
    };
    let (v, alt) = (w.v.v, w.alt.v);
    match w.wrap {
        Wrap::None => store(&mut g.b, t, v),
        Wrap::IfElse => {
            g.b.if_else(
                w.cond.v,
                |b| {
                    store(b, t, v);
                    vec![]
                },
                |b| {
                    store(b, t, alt);
                    vec![]
                },
            );
        }
        Wrap::IfPhi => {
            let merged =
                g.b.if_else(w.cond.v, |b| vec![b.alu(add, &[v, alt])], |_| vec![alt]);
            if let Some(r) = merged.first() {
                store(&mut g.b, t, *r);
            }
        }
        Wrap::LoopInside(n) => counted_loop(g, t, add, v, alt, n, true),
        Wrap::LoopAccumulate(n) => counted_loop(g, t, add, v, alt, n, false),
    }
}

/// `for i in 0..n { acc += alt; [store acc] }; [store acc]` with 1 to 3 iterations,
/// so a store inside the body always executes.
fn counted_loop(g: &mut Gen, t: Target, add: AluOp, v: Value, alt: Value, n: u8, inside: bool) {
    let zero = g.konst(BitSize::B32, 0);
    let one = g.konst(BitSize::B32, 1);
    let limit = g.konst(BitSize::B32, 1 + u32::from(n % 3));
    let phis = g.b.loop_(&[zero, v], |b, ph| {
        let (Some(i), Some(acc)) = (ph.first().copied(), ph.get(1).copied()) else {
            return;
        };
        let done = b.alu(AluOp::UGe, &[i, limit]);
        b.if_else(
            done,
            |b| {
                b.break_();
                vec![]
            },
            |_| vec![],
        );
        let next = b.alu(add, &[acc, alt]);
        if inside {
            store(b, t, next);
        }
        let i2 = b.alu(AluOp::IAdd, &[i, one]);
        b.continue_(&[i2, next]);
    });
    if let (false, Some(acc)) = (inside, phis.get(1)) {
        store(&mut g.b, t, *acc);
    }
}
