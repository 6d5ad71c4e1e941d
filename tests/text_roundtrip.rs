//! Round trips of the `.pair` text format: hand-written pairs covering every statement
//! kind and stage parameter, the example files, and pipelines built in code.

use varysat::ir::Pipeline;
use varysat::text::{parse, print, strip_locs};

fn parsed(src: &str) -> Pipeline {
    match parse(src, None) {
        Ok(p) => p,
        Err(e) => panic!("{e}\n---\n{src}"),
    }
}

/// Checks both round-trip laws for `p`, returning its canonical text.
fn assert_round_trips(p: &Pipeline) -> String {
    let text = print(p);
    let mut again = parsed(&text);
    assert_eq!(print(&again), text, "printing is not a fixed point");
    strip_locs(&mut again);
    let mut expected = p.clone();
    strip_locs(&mut expected);
    assert_eq!(again, expected, "parse(print(p)) != p\n{text}");
    text
}

#[test]
fn examples_round_trip() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pairs");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut n = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("pair") {
            continue;
        }
        let p = varysat::text::parse_file(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            p.source.as_deref(),
            Some(path.display().to_string().as_str())
        );
        assert_round_trips(&p);
        n += 1;
    }
    assert!(n > 0, "examples/pairs exists but holds no .pair file");
}

/// VS → FS using every FS-side intrinsic, interpolation form, constant spelling, UBOs,
/// xfb, indirect indexing, `exact`, texture and SSBO access.
const VS_FS_EVERYTHING: &str = r#"
; comment before the pair
(pair
  (uniforms 4)
  (ubo 0 64)
  (ubo 3 16)
  (producer vs
    (topology points)
    (%p = load_input ATTR0.x)
    (%vid = load_system_value vertex_id)
    (%iid = load_system_value instance_id)
    (%k = const 32 0x3f800000)   ; 1.0
    (%kf = const 32 -2.5e-3)
    (%ki = const 32 -7)
    (%kinf = const 32 inf)
    (%knan = const 32 nan)
    (%h = const 16 1.0)
    (%b = const 1 1)
    (%u = undef 32)
    (%off = const 32 8)
    (%ub = load_ubo 3 %off)
    (%s = fadd exact %p %k)
    (%sel = bcsel %b %s %ub)
    (%i = iand %vid %iid)
    (%t = tex 2 w %p %k)
    (%m = ssbo_load 1 %i)
    (ssbo_store 1 %i %m)
    (store_output POS.x %p (xfb 0 0))
    (store_output PSIZ.x %k no_varying)
    (store_output VAR0.x %sel (indirect %i 4) (xfb 1 4) no_varying)
    (store_output VAR5.y.lo %h)
    (store_output VAR5.y.hi %h)
    (store_output VAR6.z %t)
    (store_output VAR7.w %u)
    (store_output TEX3.x %kf)
    (store_output COL1.y %ki)
    (store_output VAR8.x %kinf)
    (store_output VAR8.y %knan))
  (consumer fs
    (provoking last)
    (%dx = const 32 0.25)
    (%dy = const 32 -0.125)
    (%si = const 32 1)
    (%j = load_input VAR5.x)
    (%a = load_interpolated_input VAR0.x persp center (indirect %j 4))
    (%c = load_interpolated_input VAR6.z linear centroid)
    (%d = load_interpolated_input VAR6.z persp sample)
    (%e = load_interpolated_input VAR6.z linear at_offset %dx %dy)
    (%f = load_interpolated_input VAR6.z persp at_sample %si)
    (%g = load_interpolated_input VAR5.y.lo persp center)
    (%gh = load_input VAR5.y.hi)
    (%gg = fmul %g %gh)
    (%g32 = f2f32 %gg)
    (%ff = load_system_value front_face)
    (%fx = load_system_value frag_coord_x)
    (%sid = load_system_value sample_id)
    (%w = load_uniform 3)
    (%lt = flt %a %w)
    (discard)
    (%r = ffma %a %c %d)
    (%r2 = flrp %r %e %f)
    (store_output DATA0.x %r2)
    (store_output DATA0.y %g32)
    (store_output DEPTH.x %fx)
    (store_output SAMPLE_MASK.x %sid)))
"#;

/// VS → TCS: per-vertex inputs, output read-back, per-vertex and patch stores,
/// barrier, tessellation levels.
const VS_TCS: &str = r#"
(pair
  (producer vs
    (topology triangles)
    (%p = load_input ATTR0.x)
    (store_output POS.x %p)
    (store_output VAR0.x %p))
  (consumer tcs
    (input_vertices 4)
    (output_vertices 2)
    (%id = load_system_value invocation_id)
    (%n = load_system_value patch_vertices_in)
    (%pid = load_system_value primitive_id)
    (%x = load_per_vertex_input VAR0.x %id)
    (%y = load_per_vertex_input VAR0.x %n (indirect %id 2))
    (store_per_vertex_output VAR1.x %x %id)
    (store_per_vertex_output VAR2.y %y %id (indirect %n 3))
    (barrier)
    (%back = load_output VAR1.x %id)
    (%patch = load_output PATCH0.x)
    (%patch2 = load_output PATCH1.x (indirect %id 2))
    (%vb = load_output VAR1.x %id (indirect %n 2))
    (store_output PATCH3.z %back)
    (store_output TESS_LEVEL_OUTER.w %patch)
    (store_output TESS_LEVEL_INNER.y %patch2)
    (store_output PATCH0.x %vb)))
"#;

/// TCS → TES with every TES parameter, including `point_mode`.
const TCS_TES: &str = r#"
(pair
  (producer tcs
    (input_vertices 3)
    (output_vertices 4)
    (%id = load_system_value invocation_id)
    (%x = load_per_vertex_input VAR0.x %id)
    (store_per_vertex_output VAR0.x %x %id)
    (store_output PATCH0.x %x))
  (consumer tes
    (domain quads)
    (input_vertices 4)
    (point_mode)
    (%u = load_system_value tess_coord_x)
    (%v = load_system_value tess_coord_y)
    (%w = load_system_value tess_coord_z)
    (%k0 = const 32 0)
    (%a = load_per_vertex_input VAR0.x %k0)
    (%pa = load_input PATCH0.x)
    (%s = ffma %a %u %pa)
    (%t = ffma %s %v %w)
    (store_output POS.x %t)))
"#;

/// TES → GS with every GS parameter, emits and strip ends.
const TES_GS: &str = r#"
(pair
  (producer tes
    (domain isolines)
    (input_vertices 2)
    (%u = load_system_value tess_coord_x)
    (store_output POS.x %u)
    (store_output VAR0.x %u))
  (consumer gs
    (input lines_adjacency)
    (output line_strip)
    (max_vertices 300)
    (invocations 5)
    (%iv = load_system_value invocation_id)
    (%k0 = const 32 0)
    (%a = load_per_vertex_input VAR0.x %k0)
    (store_output POS.x %a)
    (store_output LAYER.x %iv)
    (emit_vertex)
    (end_primitive)))
"#;

/// GS → FS with the default GS parameters written out and a view index.
const GS_FS: &str = r#"
(pair
  (producer gs
    (%k0 = const 32 0)
    (%a = load_per_vertex_input VAR0.x %k0)
    (%vi = load_system_value view_index)
    (store_output POS.x %a)
    (store_output VIEWPORT.x %vi)
    (store_output PRIMITIVE_ID.x %vi)
    (store_output CLIP_DIST1.w %a)
    (store_output CULL_DIST0.x %a)
    (store_output BFC0.x %a)
    (store_output FOGC.x %a)
    (store_output PNTC.y %a)
    (emit_vertex))
  (consumer fs
    (%x = load_input PRIMITIVE_ID.x)
    (%pr = load_system_value primitive_id)
    (%c = load_interpolated_input FOGC.x persp center)
    (store_output DATA7.w %c)))
"#;

/// Nested control flow: loops in branches in loops, phis everywhere, `continue` with
/// and without values, a loop with no phis left by `break`, an `if` without `else`.
const CONTROL_FLOW: &str = r#"
(pair
  (producer vs
    (topology lines)
    (%a = load_input ATTR1.x)
    (%zero = const 32 0)
    (%one = const 32 1)
    (%t = const 1 1)
    (loop
      (%i = phi %zero)
      (%acc = phi %a)
      (%done = ige %i %one)
      (if %done
        (then
          (break))
        (else
          (loop
            (if %t (then (break)))
            (continue))
          (%x = fadd %acc %a))
        (%y = phi %acc %x))
      (%i2 = iadd %i %one)
      (continue %i2 %y))
    (if %t
      (then)
      (else)
      (%m = phi %acc %i))
    (loop
      (break))
    (store_output POS.x %m))
  (consumer fs
    (%x = load_interpolated_input VAR0.x persp center)
    (store_output DATA0.x %x)))
"#;

const OPAQUE: &str = r#"
(pair
  (producer vs
    (%p = load_input ATTR0.x)
    (%m0 = load_input ATTR1.x)
    (%m1 = load_input ATTR1.y)
    (%m2 = load_input ATTR1.z)
    (%m3 = load_input ATTR1.w)
    (%inv = opaque inverse pure ext:GLSL.std.450:34 f32x2x2.3 (args f32x2x2) %m0 %m1 %m2 %m3)
    (%a = const 32 4)
    (%old = opaque atomic_iadd effect op:234 u32 (args u32 u32) (buffer 1) %a %a)
    (store_output POS.x %p)
    (store_output VAR0.x %inv)
    (store_output VAR0.y %old))
  (consumer fs
    (%x = load_interpolated_input VAR0.x persp center)
    (%d = opaque dpdx_fine stage op:210 f32 (args f32) %x)
    (%h = f2f16 %d)
    (%e = opaque exp_half pure ext:GLSL.std.450:27 f16 (args f16) %h)
    (opaque image_write effect op:99 (args f32x2) (image 0) %x %d)
    (store_output DATA0.x %d)))
"#;

#[test]
fn hand_written_pairs_round_trip() {
    for src in [
        VS_FS_EVERYTHING,
        VS_TCS,
        TCS_TES,
        TES_GS,
        GS_FS,
        CONTROL_FLOW,
        OPAQUE,
    ] {
        let p = parsed(src);
        assert_round_trips(&p);
    }
}

#[test]
fn canonical_text_is_exactly_as_documented() {
    // Written by hand from docs/format.md: defaults spelled out, (else) printed,
    // comments dropped, parentheses gathered on the last line, constants canonical.
    let src = "(pair ; x\n (producer gs)\n\t(consumer fs (%a = const 32 1.0) (%b = const 16 0x3c00)\n (%c = const 32 0x10000)\n (%t = const 1 1) (if %t (then (%d = fneg %a))(%e = phi %d %a)) (loop (break))))";
    let expected = "\
(pair
  (producer gs
    (input triangles)
    (output triangle_strip)
    (max_vertices 3)
    (invocations 1))
  (consumer fs
    (provoking first)
    (%a = const 32 1.0)
    (%b = const 16 1.0)
    (%c = const 32 65536)
    (%t = const 1 1)
    (if %t
      (then
        (%d = fneg %a))
      (else)
      (%e = phi %d %a))
    (loop
      (break))))
";
    assert_eq!(print(&parsed(src)), expected);
}

mod built {
    use super::*;
    use varysat::ir::{
        AluOp, BitSize, Half, Indirect, InterpLoc, InterpMode, IoSlot, ShaderBuilder, Slot, Stage,
        StageInfo, SystemValue, Xfb,
    };

    /// A VS → FS pipeline built in code, touching control flow, xfb, indirect
    /// stores, UBOs, 16-bit and 1-bit values. Builder names values "0", "1", ….
    fn pipeline() -> Pipeline {
        let mut vs = ShaderBuilder::new(Stage::Vertex);
        vs.info(StageInfo::Vertex {
            topology: varysat::ir::Primitive::Lines,
        });
        let p0 = vs.load_input(IoSlot::new(Slot::Attr(0), 0)); // %0
        let k = vs.f32(2.0); // %1
        let m = vs.alu(AluOp::FMul, &[p0, k]); // %2
        let c = vs.alu(AluOp::FLt, &[p0, k]); // %3
        let merged = vs.if_else(
            c,
            |b| vec![b.alu(AluOp::FNeg, &[m])], // %4
            |_| vec![m],
        ); // phi %5
        let looped = vs.loop_(&[merged[0]], |b, phis| {
            // header phi %6
            let d = b.alu_ex(AluOp::FAdd, true, &[phis[0], k]); // %7
            b.if_else(
                c,
                |b| {
                    b.break_();
                    vec![]
                },
                |_| vec![],
            );
            b.continue_(&[d]);
        });
        let idx = vs.system_value(SystemValue::VertexId); // %8
        vs.store(IoSlot::new(Slot::Pos, 0), p0);
        let ind = Indirect { index: idx, len: 2 };
        let xfb = Xfb {
            buffer: 1,
            offset: 8,
        };
        vs.store_ex(IoSlot::var(0, 0), looped[0], Some(ind), Some(xfb));
        let h = vs.constant(BitSize::B16, 0x3c00); // %9
        vs.store(IoSlot::half(Slot::Var(1), 0, Half::Lo), h);
        let u = vs.ubo(1, 16); // %10 (offset), %11
        vs.store(IoSlot::var(2, 3), u);
        let mut fs = ShaderBuilder::new(Stage::Fragment);
        let x = fs.load_interpolated(IoSlot::var(0, 0), InterpMode::PERSP_CENTER); // %0
        let off = fs.f32(0.5); // %1
        let mode = InterpMode {
            interp: varysat::ir::Interp::Linear,
            loc: InterpLoc::AtOffset,
        };
        let y = fs.load_interpolated_at(IoSlot::var(2, 3), mode, &[off, off]); // %2
        let lo = fs.load_input(IoSlot::half(Slot::Var(1), 0, Half::Lo)); // %3
        let lo32 = fs.alu(AluOp::F2F32, &[lo]); // %4
        let s = fs.alu(AluOp::FFma, &[x, y, lo32]); // %5
        fs.store(IoSlot::new(Slot::Data(0), 0), s);
        Pipeline::new(vs.finish(), fs.finish())
            .with_uniforms(2)
            .with_ubo(1, 32)
    }

    /// The same pipeline, written by hand.
    const TEXT: &str = "
(pair (uniforms 2) (ubo 1 32)
  (producer vs (topology lines)
    (%0 = load_input ATTR0.x)
    (%1 = const 32 2.0)
    (%2 = fmul %0 %1)
    (%3 = flt %0 %1)
    (if %3 (then (%4 = fneg %2)) (else) (%5 = phi %4 %2))
    (loop (%6 = phi %5)
      (%7 = fadd exact %6 %1)
      (if %3 (then (break)) (else))
      (continue %7))
    (%8 = load_system_value vertex_id)
    (store_output POS.x %0)
    (store_output VAR0.x %6 (indirect %8 2) (xfb 1 8))
    (%9 = const 16 15360)
    (store_output VAR1.x.lo %9)
    (%10 = const 32 16)
    (%11 = load_ubo 1 %10)
    (store_output VAR2.w %11))
  (consumer fs
    (%0 = load_interpolated_input VAR0.x persp center)
    (%1 = const 32 0.5)
    (%2 = load_interpolated_input VAR2.w linear at_offset %1 %1)
    (%3 = load_input VAR1.x.lo)
    (%4 = f2f32 %3)
    (%5 = ffma %0 %2 %4)
    (store_output DATA0.x %5)))";

    #[test]
    fn builder_pipeline_round_trips() {
        assert_round_trips(&pipeline());
    }

    #[test]
    fn hand_written_text_parses_to_the_built_pipeline() {
        let mut p = parsed(TEXT);
        strip_locs(&mut p);
        assert_eq!(p, pipeline());
    }

    #[test]
    fn bit_sizes_are_inferred() {
        let p = parsed(TEXT);
        let vs_bits: Vec<u32> = p.producer.values.iter().map(|v| v.bits.bits()).collect();
        // %3 is a float compare (1-bit), %9 a 16-bit constant, the rest 32-bit.
        assert_eq!(vs_bits, vec![32, 32, 32, 1, 32, 32, 32, 32, 32, 16, 32, 32]);
        let fs_bits: Vec<u32> = p.consumer.values.iter().map(|v| v.bits.bits()).collect();
        // %3 loads a low half; f2f32 widens it back.
        assert_eq!(fs_bits, vec![32, 32, 32, 16, 32, 32]);
    }
}

mod positions {
    use super::*;
    use varysat::ir::{SrcLoc, Stmt};

    fn at(line: u32, col: u32) -> Option<SrcLoc> {
        Some(SrcLoc { line, col })
    }

    #[test]
    fn every_position_field_is_filled() {
        let src = "(pair\n  (ubo 2 16)\n  (producer vs\n    (%a = load_input ATTR0.x)\n    (store_output POS.x %a))\n  (consumer fs\n\t(%t = const 1 1) (if %t (then) (else) (%p = phi %t %t))\n    (loop (%i = phi %t) (break) (continue %i))))";
        let p = parsed(src);
        assert_eq!(p.ubos[0].loc, at(2, 3));
        assert_eq!(p.producer.loc, at(3, 3));
        assert_eq!(p.consumer.loc, at(6, 3));
        assert_eq!(p.producer.values[0].loc, at(4, 6));
        let Stmt::Inst(load) = &p.producer.body[0] else {
            panic!()
        };
        assert_eq!(load.loc, at(4, 5));
        let Stmt::Inst(store) = &p.producer.body[1] else {
            panic!()
        };
        assert_eq!(store.loc, at(5, 5));
        // Line 7 starts with a tab, which is one column.
        let fs = &p.consumer;
        let names: Vec<(&str, Option<SrcLoc>)> =
            fs.values.iter().map(|v| (v.name.as_str(), v.loc)).collect();
        assert_eq!(
            names,
            vec![("t", at(7, 3)), ("p", at(7, 41)), ("i", at(8, 12))]
        );
        let Stmt::If { loc, .. } = &fs.body[1] else {
            panic!()
        };
        assert_eq!(*loc, at(7, 19));
        let Stmt::Loop { loc, body, .. } = &fs.body[2] else {
            panic!()
        };
        assert_eq!(*loc, at(8, 5));
        assert_eq!(body[0], Stmt::Break { loc: at(8, 25) });
        let Stmt::Continue { loc, .. } = &body[1] else {
            panic!()
        };
        assert_eq!(*loc, at(8, 33));
    }
}

#[test]
fn deep_nesting_within_the_limit_round_trips() {
    // 60 nested ifs put 2 * 60 + 3 lists around the innermost statement, just under
    // the reader's nesting limit.
    let depth = 60;
    let mut body = "(discard)".to_owned();
    for _ in 0..depth {
        body = format!("(if %t (then {body}) (else))");
    }
    let src = format!("(pair (producer vs) (consumer fs (%t = const 1 1) {body}))");
    let p = parsed(&src);
    let text = assert_round_trips(&p);
    assert_eq!(text.matches("(if %t").count(), depth);
}

#[test]
fn nesting_beyond_the_limit_is_an_error_not_a_crash() {
    let src = format!("(pair {}", "(".repeat(100_000));
    let e = parse(&src, None).err().map(|e| e.to_string());
    assert_eq!(
        e.as_deref(),
        Some("<input>:1:134: error: lists are nested more than 128 deep")
    );
}

mod random {
    use super::*;
    use proptest::prelude::*;
    use varysat::ir::{AluOp, BitSize, IoSlot, ShaderBuilder, Slot, Stage, Value};

    /// One step of a random shader: a constant, an ALU op over earlier values, or a
    /// branch / loop wrapping a constant and an op.
    #[derive(Clone, Debug)]
    enum Step {
        Const(u8, u32),
        Alu(usize, prop::sample::Index, prop::sample::Index),
        If(prop::sample::Index, u32),
        Loop(u32),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0u8..3, any::<u32>()).prop_map(|(b, p)| Step::Const(b, p)),
            (
                0..AluOp::ALL.len(),
                any::<prop::sample::Index>(),
                any::<prop::sample::Index>()
            )
                .prop_map(|(o, a, b)| Step::Alu(o, a, b)),
            (any::<prop::sample::Index>(), any::<u32>()).prop_map(|(c, p)| Step::If(c, p)),
            any::<u32>().prop_map(Step::Loop),
        ]
    }

    fn build(steps: &[Step]) -> Pipeline {
        let mut b = ShaderBuilder::new(Stage::Vertex);
        let mut vals: Vec<Value> = vec![b.load_input(IoSlot::new(Slot::Attr(0), 0))];
        for s in steps {
            let pick = |i: &prop::sample::Index| vals[i.index(vals.len())];
            let v = match s {
                Step::Const(bits, p) => {
                    let bits = [BitSize::B1, BitSize::B16, BitSize::B32][*bits as usize];
                    b.constant(bits, *p)
                }
                Step::Alu(op, x, y) => {
                    let op = AluOp::ALL[*op];
                    let srcs: Vec<Value> = [pick(x), pick(y), pick(x)][..op.arity()].to_vec();
                    b.alu(op, &srcs)
                }
                Step::If(c, p) => {
                    let c = pick(c);
                    let phis = b.if_else(
                        c,
                        |t| vec![t.constant(BitSize::B32, *p)],
                        |e| vec![e.f32(1.5)],
                    );
                    phis[0]
                }
                Step::Loop(p) => {
                    let init = b.constant(BitSize::B32, *p);
                    let out = b.loop_(&[init], |l, phis| {
                        let n = l.alu(AluOp::IAdd, &[phis[0], phis[0]]);
                        let done = l.alu(AluOp::IEq, &[n, phis[0]]);
                        l.if_else(
                            done,
                            |t| {
                                t.break_();
                                vec![]
                            },
                            |_| vec![],
                        );
                        l.continue_(&[n]);
                    });
                    out[0]
                }
            };
            vals.push(v);
        }
        let last = vals[vals.len() - 1];
        b.store(IoSlot::var(0, 0), last);
        Pipeline::new(b.finish(), ShaderBuilder::new(Stage::Fragment).finish())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn random_built_pipelines_round_trip(steps in prop::collection::vec(step(), 0..25)) {
            assert_round_trips(&build(&steps));
        }
    }
}
