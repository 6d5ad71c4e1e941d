//! Builds the consumer: loads every live varying (plus at_offset/at_sample reads),
//! runs the recipe's ALU DAG and movable shapes over them, and stores results that
//! depend on every input — FS `DATAn`, or the consumer stage's own outputs.

use super::pool::{Gen, PTy, Pv};
use super::read::Read;
use super::recipe::{Recipe, ShapeKind, ShapeSpec};
use super::wrap::{self, Target, Wrapped};
use crate::ir::{AluOp, InstKind, IoSlot, Shader, ShaderBuilder, Slot, Stage, StageInfo};

/// Most results one consumer stores.
const MAX_RESULTS: usize = 32;

/// Builds the consumer of `r` with parameters `info`, reading `reads`.
pub(crate) fn build(r: &Recipe, info: StageInfo, reads: &[Read]) -> Shader {
    let vertices = super::producer::input_vertices(&info);
    let mut b = ShaderBuilder::new(info.stage());
    b.info(info);
    let mut g = Gen::new(b, u32::from(r.uniforms), u32::from(r.ubo_words), vertices);
    g.consumer = true;
    let loaded = load_inputs(&mut g, reads);
    g.reads = reads.to_vec();
    for op in &r.consumer_ops {
        g.apply(op);
    }
    let floats: Vec<Pv> = loaded
        .iter()
        .filter(|(t, _)| *t == PTy::F32)
        .map(|(_, p)| *p)
        .collect();
    let mut results = vec![plain(fold(&mut g, &loaded))];
    for s in &r.shapes {
        results.extend(shape(&mut g, s, &floats).into_iter().map(plain));
    }
    for s in &r.results {
        let v = g.pick(PTy::F32, s.value, false);
        if s.wrap == super::recipe::Wrap::None {
            results.push(plain(v));
            continue;
        }
        let alt = g.pick(PTy::F32, s.other, false);
        let cond = g.pick(PTy::B1, s.cond, false);
        results.push(Wrapped {
            ty: PTy::F32,
            v,
            alt,
            cond,
            wrap: s.wrap,
        });
    }
    results.truncate(MAX_RESULTS);
    store_results(&mut g, r, &results);
    g.b.finish()
}

fn plain(v: Pv) -> Wrapped {
    Wrapped {
        ty: PTy::F32,
        v,
        alt: v,
        cond: v,
        wrap: super::recipe::Wrap::None,
    }
}

/// Loads every varying once, and again at its offset/sample position when asked.
fn load_inputs(g: &mut Gen, reads: &[Read]) -> Vec<(PTy, Pv)> {
    let mut loaded = vec![];
    for (i, r) in reads.iter().enumerate() {
        let ty = r.ty.pty();
        let v = r.load(g, 0);
        g.push(ty, v);
        loaded.push((ty, v));
        if let Some(at) = r.load_at(g, i as u16) {
            g.push(ty, at);
            loaded.push((ty, at));
        }
    }
    loaded
}

/// The sum of every loaded input as a 32-bit float: a result that makes each live
/// varying observable.
fn fold(g: &mut Gen, loaded: &[(PTy, Pv)]) -> Pv {
    let mut acc: Option<Pv> = None;
    for (ty, v) in loaded {
        let f = g.float_of(*ty, *v);
        acc = Some(match acc {
            None => f,
            Some(a) => g.alu(AluOp::FAdd, false, &[a, f]),
        });
    }
    acc.unwrap_or_else(|| g.pick(PTy::F32, 0, false))
}

/// A movable expression over 32-bit float inputs and uniforms.
fn shape(g: &mut Gen, s: &ShapeSpec, inputs: &[Pv]) -> Vec<Pv> {
    if inputs.is_empty() {
        return vec![];
    }
    let input = |i: u8| inputs[usize::from(i) % inputs.len()];
    let (a, b, c) = (input(s.a), input(s.b), input(s.c));
    let k1 = Pv {
        v: g.uniform(u16::from(s.k1)),
        inv: false,
    };
    match s.kind {
        ShapeKind::Mad => vec![g.alu(AluOp::FFma, false, &[a, k1, b])],
        ShapeKind::Scale => vec![g.alu(AluOp::FMul, false, &[a, k1])],
        ShapeKind::Product => vec![g.alu(AluOp::FMul, false, &[a, b])],
        ShapeKind::SelectConst => {
            let fixed = |v| Pv { v, inv: false };
            let zero = fixed(g.f32c(0.0));
            let half = fixed(g.f32c(0.5));
            let k2 = fixed(g.uniform(u16::from(s.k2)));
            let below = g.alu(AluOp::FLt, false, &[a, k1]);
            let s0 = g.alu(AluOp::BCsel, false, &[below, b, zero]);
            let on = g.alu(AluOp::FLt, false, &[k2, k1]);
            let s1 = g.alu(AluOp::BCsel, false, &[on, a, half]);
            vec![s0, s1]
        }
        ShapeKind::Shared3 => {
            let ab = g.alu(AluOp::FAdd, false, &[a, b]);
            let t0 = g.alu(AluOp::FAdd, false, &[ab, c]);
            let k2 = Pv {
                v: g.uniform(u16::from(s.k2)),
                inv: false,
            };
            let bk = g.alu(AluOp::FMul, false, &[b, k1]);
            let ck = g.alu(AluOp::FMul, false, &[c, k2]);
            let abk = g.alu(AluOp::FAdd, false, &[a, bk]);
            let t1 = g.alu(AluOp::FAdd, false, &[abk, ck]);
            vec![t0, t1]
        }
    }
}

/// Stores the results where the consumer stage puts its outputs.
fn store_results(g: &mut Gen, r: &Recipe, results: &[Wrapped]) {
    match g.stage {
        Stage::Fragment => {
            for (i, w) in results.iter().enumerate() {
                let io = IoSlot::new(Slot::Data((i / 4) as u8), (i % 4) as u8);
                wrap::emit(g, plain_target(io), *w);
            }
        }
        Stage::TessCtrl => {
            let vertex = g.invocation_id().v;
            for (i, w) in results.iter().enumerate() {
                let io = IoSlot::var((i / 4) as u8, (i % 4) as u8);
                wrap::emit(g, Target::PerVertex { io, vertex }, *w);
            }
            for c in 0..4u8 {
                let v = g.f32c(1.0);
                g.b.store(IoSlot::new(Slot::TessLevelOuter, c), v);
            }
        }
        Stage::TessEval | Stage::Vertex => vertex_outputs(g, results),
        Stage::Geometry => {
            let emits = r.emits.clamp(1, 4);
            for _ in 0..emits {
                vertex_outputs(g, results);
                g.b.effect(InstKind::EmitVertex);
            }
            g.b.effect(InstKind::EndPrimitive);
        }
    }
}

/// A vertex of the consumer's own output: the first result is also the position.
fn vertex_outputs(g: &mut Gen, results: &[Wrapped]) {
    if let Some(first) = results.first() {
        let one = g.f32c(1.0);
        for c in 0..3u8 {
            g.b.store(IoSlot::new(Slot::Pos, c), first.v.v);
        }
        g.b.store(IoSlot::new(Slot::Pos, 3), one);
    }
    for (i, w) in results.iter().enumerate() {
        let io = IoSlot::var((i / 4) as u8, (i % 4) as u8);
        wrap::emit(g, plain_target(io), *w);
    }
}

fn plain_target(io: IoSlot) -> Target {
    Target::Plain {
        io,
        xfb: None,
        indirect: None,
    }
}
