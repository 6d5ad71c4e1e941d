//! Generated pairs a real Vulkan driver can draw and compare pixel for pixel
//! (`tests/render_gen.rs`): this module owns the restrictions of the generator for
//! rendering and the reasons for each. A restriction removes what the exporter
//! cannot write or what is undefined on a driver, so that original and optimized
//! pipelines must agree; everything else the generator draws is kept.

use super::pool::draws_opaque;
use super::producer::MASK_BITS;
use super::recipe::{AtRead, Family, Recipe, Ty};
use crate::ir::{
    AluOp, BitSize, Inst, InstKind, IoSlot, Pipeline, Primitive, Shader, Slot, Stage, StageInfo,
    Stmt, Value, ValueInfo,
};

/// The vertex attribute the restricted VS reads its position from (the generator's
/// own attribute reads use `ATTR0`-`ATTR7`).
pub const POSITION_ATTR: u8 = 8;

/// The recipe with the restrictions applied (each documented at its line):
///
/// - no opaque operations: the generator's pure and stage-bound ones carry
///   made-up opcodes (9000, 9001) with no SPIR-V meaning, and its atomic returns
///   a value that depends on the order invocations run in, which Vulkan leaves
///   open; texture leaves stay texture reads;
/// - no 16-bit varyings (they become 32-bit): lavapipe of Mesa 22.3.6 aborts in
///   LLVM (`Cannot emit physreg copy instruction`) compiling a pair with 16-bit
///   inputs and outputs; 16-bit arithmetic inside a stage stays;
/// - no `noperspective` colours: the generator reads those with GL's shade-model
///   interpolation (`color`), which SPIR-V cannot express; they are read smooth;
/// - no `BFCn` outputs: Vulkan has no two-sided colour selection, so a fragment
///   shader reading `COLn` never sees what the producer wrote to `BFCn` (the
///   interpreter's model selects it for back faces); they become `COLn`;
/// - no system-value family outputs (`CLIP_DIST`, `CULL_DIST`, `PSIZ`, `LAYER`,
///   `VIEWPORT`): a layer or viewport index at or past the framebuffer's one layer
///   or one viewport makes every pixel undefined, and generated values are
///   arbitrary; they become `VARn`;
/// - `interpolateAtSample` reads become `interpolateAtOffset` reads: one of the
///   generated constant sample indices (0 and 2) is past the one sample of the
///   test framebuffer, where the interpolated value is undefined;
/// - the VS topology, a TES producer's output (no point mode) and a GS
///   producer's output are triangles or lines, never points: nothing writes `PointSize`, and the size of a point is then undefined;
/// - a GS producer emits 3 or 4 vertices: with fewer its strip draws nothing, and
///   lavapipe of Mesa 22.3.6 corrupts its heap (`free(): invalid next size`,
///   the process aborts) drawing a line strip of one vertex;
/// - first provoking vertex: the last one is pipeline state that needs
///   `VK_EXT_provoking_vertex`, which the harness does not enable;
/// - no fixed-function FS reads of `PNTC` (point coordinate, undefined off
///   points), and so none of `PRIMITIVE_ID`, which the recipe adds with it;
/// - no `VIEWPORT_MASK` broadcast (nor its viewport-relative layer): lavapipe lacks
///   `VK_NV_viewport_array2`, and the test framebuffer has one viewport and one
///   layer.
pub fn render_safe(r: &Recipe) -> Recipe {
    let mut r = r.clone();
    for op in r.producer_ops.iter_mut().chain(r.consumer_ops.iter_mut()) {
        if draws_opaque(op) {
            // Choices 5-7 (mod 8) pick an opaque op; 1-3 keep a texture read.
            op.b &= !4;
        }
    }
    for o in &mut r.outputs {
        if o.ty == Ty::F16 {
            o.ty = Ty::F32;
        }
        o.family = match o.family {
            Family::Bfc => Family::Col,
            Family::SysVal => Family::Var,
            f => f,
        };
        if o.at == AtRead::Sample {
            o.at = AtRead::Offset;
        }
        // The generator reads a colour drawn noperspective the GL shade-model way
        // (`color`), which Vulkan cannot express (an export error): smooth instead.
        if let (Family::Col, super::recipe::Qual::Interp(mode)) = (o.family, &mut o.qual) {
            if mode.interp == crate::ir::Interp::Linear {
                mode.interp = crate::ir::Interp::Persp;
            }
        }
    }
    if r.pair.0 == Stage::Vertex && r.producer_info % 3 == 2 {
        // RASTER[2] is points.
        r.producer_info -= 2;
    }
    if r.pair.0 == Stage::Geometry && (r.producer_info / 3) % 3 == 2 {
        // A GS producer's output is STRIPS[(choice / 3) % 3]; 2 is points.
        r.producer_info -= 6;
    }
    if r.pair.0 == Stage::TessEval && (r.producer_info / 3) % 2 == 1 {
        // A TES producer is in point mode for odd (choice / 3).
        r.producer_info -= 3;
    }
    if r.pair.0 == Stage::Geometry {
        r.emits = r.emits.clamp(3, 4);
    }
    // Bit 0 picks the provoking vertex; bits 5-6 set together add the
    // fixed-function reads; bits 1-3 set together broadcast by a viewport mask.
    if r.pair.1 == Stage::Fragment {
        r.consumer_info &= !0x21;
        if r.consumer_info & MASK_BITS == MASK_BITS {
            r.consumer_info &= !0x08;
        }
    }
    r
}

/// The pair a restricted recipe builds, with the producer's position replaced by
/// attribute [`POSITION_ATTR`] (the driver's test data puts it on screen): the
/// generated position is a random expression, mostly off screen or degenerate, so
/// few pixels would be compared. The generated expression stays in the shader,
/// unused.
///
/// Both shaders also get domain guards ([`guard_domains`]), so that no value is
/// NaN or infinite.
pub fn build_for_rendering(r: &Recipe) -> Pipeline {
    let mut p = super::build(&render_safe(r));
    guard_domains(&mut p.producer);
    guard_domains(&mut p.consumer);
    if p.producer.stage() == Stage::Geometry && p.consumer.stage() == Stage::Fragment {
        gs_position_from_input(&mut p.producer);
        return p;
    }
    if p.producer.stage() == Stage::TessEval && p.consumer.stage() == Stage::Fragment {
        tes_position_from_input(&mut p.producer);
        return p;
    }
    if p.producer.stage() != Stage::Vertex || p.consumer.stage() != Stage::Fragment {
        return p;
    }
    debug_assert!(matches!(
        p.producer.info,
        StageInfo::Vertex {
            topology: Primitive::Triangles | Primitive::Lines
        }
    ));
    let s = &mut p.producer;
    let mut pos = vec![];
    let mut loads = vec![];
    for c in 0..4u8 {
        let v = s.add_value(format!("render_pos{c}"), crate::ir::BitSize::B32);
        pos.push(v);
        loads.push(Stmt::Inst(Inst {
            result: Some(v),
            kind: InstKind::LoadInput {
                slot: IoSlot::new(Slot::Attr(POSITION_ATTR), c),
                indirect: None,
            },
            loc: None,
        }));
    }
    crate::ir::for_each_inst_mut(&mut s.body, |i| {
        if let InstKind::StoreOutput { slot, value, .. } = &mut i.kind {
            if slot.slot == Slot::Pos {
                *value = pos[usize::from(slot.comp)];
            }
        }
    });
    loads.append(&mut s.body);
    s.body = loads;
    p
}

/// A GS producer's position: the position of input vertex `k mod n` for its
/// `k`-th emitted vertex (`gl_in[k].gl_Position`, which the test's pass-through VS
/// takes from attribute [`POSITION_ATTR`]), moved by 0.25 in x, y or both for
/// emits 1-3, instead of the generated expression.
fn gs_position_from_input(s: &mut Shader) {
    let n = match s.info {
        StageInfo::Geometry { input, .. } => input.vertex_count() as u32,
        _ => return,
    };
    let emits = s
        .body
        .iter()
        .filter(|st| {
            matches!(
                st,
                Stmt::Inst(Inst {
                    kind: InstKind::EmitVertex,
                    ..
                })
            )
        })
        .count() as u32;
    let mut head = vec![];
    let mut pos = vec![];
    for k in 0..emits.max(1) {
        let vk = s.add_value(format!("render_vertex{k}"), BitSize::B32);
        head.push(Stmt::Inst(Inst {
            result: Some(vk),
            kind: InstKind::Const(k % n),
            loc: None,
        }));
        let mut comps = vec![];
        for c in 0..4u8 {
            let v = s.add_value(format!("render_pos{k}_{c}"), BitSize::B32);
            head.push(Stmt::Inst(Inst {
                result: Some(v),
                kind: InstKind::LoadPerVertexInput {
                    slot: IoSlot::new(Slot::Pos, c),
                    vertex: vk,
                    indirect: None,
                },
                loc: None,
            }));
            // Emits 1-3 move right, up, or both by 0.25, so that a strip over a
            // point or a line input is not degenerate.
            let shift = match (k % 4, c) {
                (1, 0) | (2, 1) | (3, 0) | (3, 1) => 0.25f32,
                _ => 0.0,
            };
            if shift == 0.0 {
                comps.push(v);
                continue;
            }
            let d = s.add_value(format!("render_shift{k}_{c}"), BitSize::B32);
            let moved = s.add_value(format!("render_moved{k}_{c}"), BitSize::B32);
            head.push(Stmt::Inst(Inst {
                result: Some(d),
                kind: InstKind::Const(shift.to_bits()),
                loc: None,
            }));
            head.push(Stmt::Inst(Inst {
                result: Some(moved),
                kind: InstKind::Alu {
                    op: AluOp::FAdd,
                    exact: false,
                    srcs: vec![v, d],
                },
                loc: None,
            }));
            comps.push(moved);
        }
        pos.push(comps);
    }
    // Position stores are top-level statements; the k-th emit ends vertex k.
    let mut k = 0usize;
    for st in &mut s.body {
        if let Stmt::Inst(i) = st {
            match &mut i.kind {
                InstKind::EmitVertex => k += 1,
                InstKind::StoreOutput { slot, value, .. } if slot.slot == Slot::Pos => {
                    *value = pos[k.min(pos.len() - 1)][usize::from(slot.comp)];
                }
                _ => {}
            }
        }
    }
    head.append(&mut s.body);
    s.body = head;
}

/// A TES producer's position: input vertex 0's (`gl_in[0].gl_Position`) moved by
/// `(u - 0.5, v - 0.5) / 2` with the tessellation coordinate (u, v), so every
/// patch covers a small quad or triangle around its first control point.
fn tes_position_from_input(s: &mut Shader) {
    let mut head = vec![];
    let mut def = |s: &mut Shader, name: &str, kind: InstKind| {
        let v = s.add_value(name, BitSize::B32);
        head.push(Stmt::Inst(Inst {
            result: Some(v),
            kind,
            loc: None,
        }));
        v
    };
    let zero = def(s, "render_vertex0", InstKind::Const(0));
    let half = def(s, "render_half", InstKind::Const(0.5f32.to_bits()));
    let mut pos = vec![];
    for c in 0..4u8 {
        let p = def(
            s,
            &format!("render_in_pos{c}"),
            InstKind::LoadPerVertexInput {
                slot: IoSlot::new(Slot::Pos, c),
                vertex: zero,
                indirect: None,
            },
        );
        let coord = match c {
            0 => crate::ir::SystemValue::TessCoordX,
            1 => crate::ir::SystemValue::TessCoordY,
            _ => {
                pos.push(p);
                continue;
            }
        };
        let t = def(
            s,
            &format!("render_coord{c}"),
            InstKind::LoadSystemValue(coord),
        );
        let alu = |op, srcs: Vec<Value>| InstKind::Alu {
            op,
            exact: false,
            srcs,
        };
        let centred = def(
            s,
            &format!("render_centred{c}"),
            alu(AluOp::FSub, vec![t, half]),
        );
        let d = def(
            s,
            &format!("render_shift{c}"),
            alu(AluOp::FMul, vec![centred, half]),
        );
        pos.push(def(
            s,
            &format!("render_pos{c}"),
            alu(AluOp::FAdd, vec![p, d]),
        ));
    }
    crate::ir::for_each_inst_mut(&mut s.body, |i| {
        if let InstKind::StoreOutput { slot, value, .. } = &mut i.kind {
            if slot.slot == Slot::Pos {
                *value = pos[usize::from(slot.comp)];
            }
        }
    });
    head.append(&mut s.body);
    s.body = head;
}

/// Keeps every value finite: the operands of ops that are undefined or not finite
/// somewhere are mapped into their domain by ops inserted just before them.
///
/// Vulkan leaves the result of an operation on NaN or Inf open unless a shader asks
/// for `SignedZeroInfNanPreserve`, and drivers use that freedom: lavapipe computes
/// `fract(NaN)` as 0.99999994 (a clamp below 1 that drops the NaN) where the IEEE
/// model of the interpreter, and so the optimizer's constant folding, gives NaN.
/// A generated `fdiv 0 0` then renders differently before and after folding
/// without either being wrong. The guards, each the smallest change that keeps the
/// op in use:
///
/// - `fdiv a b`, `frcp b`: `b` becomes `|b| + 1`;
/// - `fsqrt`, `frsq`, `flog2` of `x`: `|x| + 1`;
/// - `fpow x y`: `|x| + 1` and `y` clamped to [-4, 4];
/// - `fexp2 x`: `min(x, 4)`;
/// - `f2i32 x` (undefined out of range) and `f2f16 x` (overflows past 65504):
///   `x` clamped to [-65536, 65536] and [-128, 128];
/// - `idiv a b` (undefined for 0 and for `i32::MIN / -1`): `b` becomes
///   `(b & 7) | 1`.
pub fn guard_domains(s: &mut Shader) {
    let Shader { values, body, .. } = s;
    crate::ir::for_each_block_mut(body, |block| {
        let old = std::mem::take(block);
        for stmt in old {
            let Stmt::Inst(mut inst) = stmt else {
                block.push(stmt);
                continue;
            };
            if let InstKind::Alu { op, srcs, .. } = &mut inst.kind {
                let bits = srcs.first().map(|v| values[v.index()].bits);
                if let Some(bits) = bits {
                    let mut g = Guard {
                        values,
                        out: block,
                        bits,
                    };
                    g.apply(*op, srcs);
                }
            }
            block.push(Stmt::Inst(inst));
        }
    });
}

/// Inserts guard instructions into a block being rebuilt.
struct Guard<'a> {
    values: &'a mut Vec<ValueInfo>,
    out: &'a mut Vec<Stmt>,
    bits: BitSize,
}

impl Guard<'_> {
    fn def(&mut self, kind: InstKind, bits: BitSize) -> Value {
        let v = Value(self.values.len() as u32);
        self.values.push(ValueInfo {
            name: format!("guard{}", v.0),
            bits,
            loc: None,
        });
        self.out.push(Stmt::Inst(Inst {
            result: Some(v),
            kind,
            loc: None,
        }));
        v
    }

    fn konst(&mut self, bits: BitSize, pattern: u32) -> Value {
        self.def(InstKind::Const(pattern), bits)
    }

    fn fconst(&mut self, f: f32) -> Value {
        let b = self.bits;
        self.konst(b, crate::ir::from_f32(f, b))
    }

    fn alu(&mut self, op: AluOp, srcs: &[Value], bits: BitSize) -> Value {
        self.def(
            InstKind::Alu {
                op,
                exact: false,
                srcs: srcs.to_vec(),
            },
            bits,
        )
    }

    /// `|x| + 1`.
    fn positive(&mut self, x: Value) -> Value {
        let b = self.bits;
        let a = self.alu(AluOp::FAbs, &[x], b);
        let one = self.fconst(1.0);
        self.alu(AluOp::FAdd, &[a, one], b)
    }

    /// `x` clamped to [lo, hi].
    fn clamp(&mut self, x: Value, lo: f32, hi: f32) -> Value {
        let b = self.bits;
        let (l, h) = (self.fconst(lo), self.fconst(hi));
        let m = self.alu(AluOp::FMax, &[x, l], b);
        self.alu(AluOp::FMin, &[m, h], b)
    }

    fn apply(&mut self, op: AluOp, srcs: &mut [Value]) {
        use AluOp::*;
        let float = self.bits != BitSize::B1;
        match op {
            FDiv if float => srcs[1] = self.positive(srcs[1]),
            FRcp | FSqrt | FRsq | FLog2 if float => srcs[0] = self.positive(srcs[0]),
            FPow if float => {
                srcs[0] = self.positive(srcs[0]);
                srcs[1] = self.clamp(srcs[1], -4.0, 4.0);
            }
            FExp2 if float => {
                let k = self.fconst(4.0);
                srcs[0] = self.alu(FMin, &[srcs[0], k], self.bits);
            }
            F2I32 if self.bits == BitSize::B32 => srcs[0] = self.clamp(srcs[0], -65536.0, 65536.0),
            F2F16 if self.bits == BitSize::B32 => srcs[0] = self.clamp(srcs[0], -128.0, 128.0),
            IDiv if self.bits == BitSize::B32 => {
                let b = BitSize::B32;
                let (seven, one) = (self.konst(b, 7), self.konst(b, 1));
                let m = self.alu(IAnd, &[srcs[1], seven], b);
                srcs[1] = self.alu(IOr, &[m, one], b);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{arb_recipe, GenConfig};
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::TestRunner;

    #[test]
    fn restricted_pairs_have_nothing_a_restriction_removes() {
        let mut runner = TestRunner::deterministic();
        // Dynamically indexed arrays and transform feedback export (and the
        // harness compares captures), so rendering keeps them.
        let dynamic = std::cell::Cell::new(0usize);
        let captured = std::cell::Cell::new(0usize);
        for _ in 0..200 {
            let r = arb_recipe(GenConfig::default())
                .new_tree(&mut runner)
                .unwrap()
                .current();
            let p = build_for_rendering(&r);
            crate::validate::validate(&p).expect("valid");
            for s in [&p.producer, &p.consumer] {
                s.for_each_inst(|i| match &i.kind {
                    InstKind::Opaque { .. } => panic!("opaque op"),
                    InstKind::StoreOutput { xfb, indirect, .. } => {
                        captured.set(captured.get() + xfb.is_some() as usize);
                        dynamic.set(dynamic.get() + indirect.is_some() as usize);
                    }
                    InstKind::LoadInterpolatedInput { mode, .. } => {
                        assert_ne!(mode.loc, crate::ir::InterpLoc::AtSample);
                    }
                    _ => {}
                });
                if let Some(prim) = s.info.output_primitive() {
                    if p.consumer.stage() == Stage::Fragment && s.stage() == p.producer.stage() {
                        assert_ne!(prim, Primitive::Points, "{:?}", s.info);
                    }
                }
            }
        }
        assert!(
            dynamic.get() > 0,
            "no restricted pair stores through a dynamic index"
        );
        assert!(captured.get() > 0, "no restricted pair captures");
    }

    /// Whether a pair stores `VIEWPORT_MASK` or flags its layer viewport-relative.
    fn broadcasts(p: &Pipeline) -> bool {
        let mut found = p.producer.layer_viewport_relative;
        p.producer.for_each_inst(|i| {
            if let InstKind::StoreOutput { slot, .. } = &i.kind {
                found |= slot.slot == Slot::ViewportMask;
            }
        });
        found
    }

    #[test]
    fn restricted_pairs_never_broadcast_by_a_viewport_mask() {
        for producer in [Stage::Vertex, Stage::TessEval, Stage::Geometry] {
            let mut masked = 0;
            for choice in 0..=255u8 {
                let mut r = Recipe::minimal((producer, Stage::Fragment));
                r.consumer_info = choice;
                masked += usize::from(broadcasts(&super::super::build(&r)));
                let p = build_for_rendering(&r);
                assert!(!broadcasts(&p), "{producer} {choice}");
                crate::validate::validate(&p).expect("valid");
            }
            // One choice in eight: the restriction is not vacuous.
            assert_eq!(masked, 32, "{producer}");
        }
    }

    #[test]
    fn guards_keep_undefined_operands_in_their_domain() {
        let text = "(pair
          (producer vs
            (%z = const 32 0)
            (%neg = const 32 -4.0)
            (%d = fdiv %z %z)
            (%l = flog2 %neg)
            (%q = fsqrt %neg)
            (%r = frsq %z)
            (%e = fexp2 %d)
            (store_output POS.x %d)
            (store_output VAR0.x %l)
            (store_output VAR0.y %q)
            (store_output VAR0.z %r)
            (store_output VAR0.w %e))
          (consumer fs
            (%a = load_input VAR0.x)
            (%b = load_input VAR0.y)
            (%c = load_input VAR0.z)
            (%d = load_input VAR0.w)
            (store_output DATA0.x %a)
            (store_output DATA0.y %b)
            (store_output DATA0.z %c)
            (store_output DATA0.w %d)))";
        let mut p = crate::text::parse(text, None).unwrap();
        guard_domains(&mut p.producer);
        crate::validate::validate(&p).expect("valid after guarding");
        let run = crate::interpreter::run(&p, &crate::interpreter::RunConfig::default()).unwrap();
        assert!(run.values.len() >= 4);
        for (k, v) in &run.values {
            let f = f32::from_bits(v.bits);
            assert!(f.is_finite(), "{k:?} = {f}");
        }
        // Unguarded, the same pair stores NaN and infinities.
        let p = crate::text::parse(text, None).unwrap();
        let run = crate::interpreter::run(&p, &crate::interpreter::RunConfig::default()).unwrap();
        assert!(run
            .values
            .values()
            .any(|v| !f32::from_bits(v.bits).is_finite()));
    }
}
