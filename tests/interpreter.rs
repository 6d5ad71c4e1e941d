//! Reference interpreter: every interpolation mode, every stage pair, control flow,
//! undefined tracking and the equivalence check, with expected values derived in the
//! tests from the seeded inputs and the documented formulas.

use varysat::interpreter::{
    check_equivalent, EquivConfig, FragmentInfo, Inequivalence, Inputs, Item, Observation,
    RunConfig, Scalar, Unit, OFFSET_SCALE, SAMPLE_OFFSETS,
};
use varysat::ir::{
    AluOp, BitSize, Half, InstKind, Interp, InterpLoc, InterpMode, IoSlot, Pipeline, Primitive,
    ProvokingVertex, Shader, ShaderBuilder, Slot, Stage, StageInfo, SystemValue, Value, Xfb,
};
use varysat::Error;

/// Runs a pair after checking that it is legal IR.
fn run(p: &Pipeline, c: &RunConfig) -> Result<Observation, Error> {
    if let Err(e) = varysat::validate::validate(p) {
        panic!("invalid test pair:\n{e}\n{}", varysat::text::print(p));
    }
    varysat::interpreter::run(p, c)
}

fn attr(c: u8) -> IoSlot {
    IoSlot::new(Slot::Attr(0), c)
}

fn var(n: u8) -> IoSlot {
    IoSlot::var(n, 0)
}

fn data(n: u8, c: u8) -> IoSlot {
    IoSlot::new(Slot::Data(n), c)
}

fn frag(p: u32, f: u32) -> [Unit; 2] {
    [Unit::Primitive(p), Unit::Fragment(f)]
}

fn cfg(seed: u64) -> RunConfig {
    RunConfig {
        seed,
        ..RunConfig::default()
    }
}

fn approx(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-5 * 1f32.max(a.abs()).max(b.abs())
}

fn fs_out(o: &Observation, p: u32, f: u32, slot: IoSlot) -> Scalar {
    o.output(Stage::Fragment, &frag(p, f), slot)
        .unwrap_or_else(|| panic!("no {slot} for primitive {p} fragment {f}\n{o}"))
}

/// VS: stores ATTR0.x to VAR0.x and ATTR0.y to POS.x.
fn passthrough_vs(topology: Primitive) -> Shader {
    let mut vs = ShaderBuilder::new(Stage::Vertex);
    vs.info(StageInfo::Vertex { topology });
    let a = vs.load_input(attr(0));
    let b = vs.load_input(attr(1));
    vs.store(var(0), a);
    vs.store(IoSlot::new(Slot::Pos, 0), b);
    vs.finish()
}

fn mode(interp: Interp, loc: InterpLoc) -> InterpMode {
    InterpMode { interp, loc }
}

/// The perspective formula, written out in f64 from its definition.
fn persp(vals: &[f32], l: &[f32], w: &[f32]) -> f32 {
    let num: f64 = (0..vals.len())
        .map(|k| l[k] as f64 * vals[k] as f64 / w[k] as f64)
        .sum();
    let den: f64 = (0..vals.len()).map(|k| l[k] as f64 / w[k] as f64).sum();
    (num / den) as f32
}

fn linear(vals: &[f32], l: &[f32]) -> f32 {
    (0..vals.len())
        .map(|k| l[k] as f64 * vals[k] as f64)
        .sum::<f64>() as f32
}

/// The barycentrics a location evaluates at, from the fragment record and the
/// documented offset map (`OFFSET_SCALE · (dx, dy, -dx-dy)`).
fn weights_at(info: &FragmentInfo, loc: InterpLoc, offset: [f32; 2]) -> Vec<f32> {
    let c = &info.center;
    let [dx, dy] = offset;
    match loc {
        InterpLoc::Center => c.clone(),
        InterpLoc::Centroid => info.centroid.clone(),
        InterpLoc::Sample => info.sample.clone(),
        InterpLoc::AtOffset | InterpLoc::AtSample => match c.len() {
            3 => vec![
                c[0] + OFFSET_SCALE * dx,
                c[1] + OFFSET_SCALE * dy,
                c[2] - OFFSET_SCALE * dx - OFFSET_SCALE * dy,
            ],
            2 => vec![c[0] + OFFSET_SCALE * dx, c[1] - OFFSET_SCALE * dx],
            _ => c.clone(),
        },
    }
}

#[test]
fn vs_fs_every_interpolation_mode() {
    let locs = [
        InterpLoc::Center,
        InterpLoc::Centroid,
        InterpLoc::Sample,
        InterpLoc::AtOffset,
        InterpLoc::AtSample,
    ];
    let (off, sample) = ([0.5, -0.25], 2u32);
    for topology in [Primitive::Triangles, Primitive::Lines, Primitive::Points] {
        let n = topology.vertex_count() as u32;
        let vs = passthrough_vs(topology);
        let mut fs = ShaderBuilder::new(Stage::Fragment);
        let (dx, dy) = (fs.f32(off[0]), fs.f32(off[1]));
        let si = fs.constant(BitSize::B32, sample);
        let mut outs = vec![];
        for (i, interp) in [Interp::Persp, Interp::Linear].into_iter().enumerate() {
            for (j, loc) in locs.into_iter().enumerate() {
                let ops = match loc {
                    InterpLoc::AtOffset => vec![dx, dy],
                    InterpLoc::AtSample => vec![si],
                    _ => vec![],
                };
                let v = fs.load_interpolated_at(var(0), mode(interp, loc), &ops);
                let out = data(i as u8 * 2 + j as u8 / 4, j as u8 % 4);
                fs.store(out, v);
                outs.push((out, interp, loc));
            }
        }
        let flat = fs.load_input(var(0));
        fs.store(data(7, 0), flat);
        let p = Pipeline::new(vs, fs.finish());

        for seed in [1, 2] {
            let o = run(&p, &cfg(seed)).expect("runs");
            let inputs = Inputs::new(seed);
            for prim in 0..2u32 {
                let vals: Vec<f32> = (0..n)
                    .map(|k| {
                        let v = prim * n + k;
                        inputs.attribute(attr(0), v, BitSize::B32).as_f32()
                    })
                    .collect();
                for f in 0..4 {
                    let info = &o.fragments[&(prim, f)];
                    let w = &info.clip_w;
                    assert_eq!((w.len(), info.center.len()), (n as usize, n as usize));
                    let got = |slot| fs_out(&o, prim, f, slot).as_f32();
                    for (out, interp, loc) in &outs {
                        let offset = match loc {
                            InterpLoc::AtSample => SAMPLE_OFFSETS[sample as usize],
                            _ => off,
                        };
                        let l = weights_at(info, *loc, offset);
                        let want = match interp {
                            Interp::Persp => persp(&vals, &l, w),
                            Interp::Linear => linear(&vals, &l),
                            // Colours only (tests/fixed_function.rs).
                            Interp::Color => unreachable!("no colour read here"),
                        };
                        assert!(
                            approx(got(*out), want),
                            "{topology} {interp:?} {loc:?}: {} vs {want}",
                            got(*out)
                        );
                    }
                    assert_eq!(got(data(7, 0)), vals[0], "flat reads the first vertex");
                    if n > 1 {
                        // The three locations really are different positions.
                        assert_ne!(info.center, info.centroid);
                        assert_ne!(info.center, info.sample);
                    }
                }
            }
        }
    }
}

#[test]
fn at_sample_outside_the_table_is_undefined() {
    let mut fs = ShaderBuilder::new(Stage::Fragment);
    let si = fs.constant(BitSize::B32, SAMPLE_OFFSETS.len() as u32);
    let v = fs.load_interpolated_at(var(0), mode(Interp::Persp, InterpLoc::AtSample), &[si]);
    fs.store(data(0, 0), v);
    let p = Pipeline::new(passthrough_vs(Primitive::Triangles), fs.finish());
    let o = run(&p, &cfg(0)).expect("runs");
    assert!(!fs_out(&o, 0, 0, data(0, 0)).defined);
}

#[test]
fn flat_uses_the_provoking_vertex() {
    for (provoking, k) in [(ProvokingVertex::First, 0), (ProvokingVertex::Last, 2)] {
        let mut fs = ShaderBuilder::new(Stage::Fragment);
        fs.info(StageInfo::Fragment { provoking });
        let v = fs.load_input(var(0));
        fs.store(data(0, 0), v);
        let p = Pipeline::new(passthrough_vs(Primitive::Triangles), fs.finish());
        let o = run(&p, &cfg(5)).expect("runs");
        let inputs = Inputs::new(5);
        for prim in 0..2 {
            let want = inputs.attribute(attr(0), prim * 3 + k, BitSize::B32);
            assert_eq!(fs_out(&o, prim, 1, data(0, 0)), want);
        }
    }
}

#[test]
fn sixteen_bit_values_interpolate_in_f32_and_round() {
    let mut vs = ShaderBuilder::new(Stage::Vertex);
    let a = vs.load_input(attr(0));
    let h = vs.alu(AluOp::F2F16, &[a]);
    let lo = IoSlot::half(Slot::Var(0), 0, Half::Lo);
    vs.store(lo, h);
    let mut fs = ShaderBuilder::new(Stage::Fragment);
    let v = fs.load_interpolated(lo, InterpMode::PERSP_CENTER);
    let w = fs.alu(AluOp::F2F32, &[v]);
    fs.store(data(0, 0), w);
    let p = Pipeline::new(vs.finish(), fs.finish());
    let o = run(&p, &cfg(9)).expect("runs");
    let inputs = Inputs::new(9);
    let vals: Vec<f32> = (0..3)
        .map(|k| {
            let a = inputs.attribute(attr(0), k, BitSize::B32).as_f32();
            half::f16::from_f32(a).to_f32()
        })
        .collect();
    let info = &o.fragments[&(0, 0)];
    let exact = persp(&vals, &info.center, &info.clip_w);
    let got = fs_out(&o, 0, 0, data(0, 0)).as_f32();
    assert_eq!(
        half::f16::from_f32(got).to_f32(),
        got,
        "result is an f16 value"
    );
    assert!(
        (got - exact).abs() <= exact.abs().max(1e-4) * 2f32.powi(-10),
        "{got} vs {exact}"
    );
}

#[test]
fn unwritten_inputs_and_fixed_function_defaults() {
    let vs = passthrough_vs(Primitive::Triangles);
    let mut fs = ShaderBuilder::new(Stage::Fragment);
    let slots = [
        IoSlot::new(Slot::Tex(1), 2),
        IoSlot::new(Slot::Tex(1), 3),
        IoSlot::new(Slot::Layer, 0),
        IoSlot::var(5, 0),
    ];
    for (i, s) in slots.iter().enumerate() {
        let v = fs.load_input(*s);
        fs.store(data(0, i as u8), v);
    }
    let o = run(&Pipeline::new(vs, fs.finish()), &cfg(0)).expect("runs");
    assert_eq!(
        fs_out(&o, 0, 0, data(0, 0)),
        Scalar::float(0.0, BitSize::B32)
    );
    assert_eq!(
        fs_out(&o, 0, 0, data(0, 1)),
        Scalar::float(1.0, BitSize::B32)
    );
    assert_eq!(fs_out(&o, 0, 0, data(0, 2)), Scalar::new(0, BitSize::B32));
    assert!(!fs_out(&o, 0, 0, data(0, 3)).defined);
}

/// GS → FS with `emits` vertices storing VAR0.x = input vertex k's VAR0.x and an
/// `end_primitive` after `cut` of them.
fn gs_fs(output: Primitive, emits: u32, cut: Option<u32>) -> Pipeline {
    let mut gs = ShaderBuilder::new(Stage::Geometry);
    gs.info(StageInfo::Geometry {
        input: Primitive::Triangles,
        output,
        max_vertices: 8,
        invocations: 1,
    });
    for k in 0..emits {
        let idx = gs.constant(BitSize::B32, k % 3);
        let v = gs.load_per_vertex(var(0), idx);
        gs.store(var(0), v);
        gs.effect(InstKind::EmitVertex);
        if cut == Some(k) {
            gs.effect(InstKind::EndPrimitive);
        }
    }
    let mut fs = ShaderBuilder::new(Stage::Fragment);
    let v = fs.load_interpolated(var(0), mode(Interp::Linear, InterpLoc::Center));
    fs.store(data(0, 0), v);
    Pipeline::new(gs.finish(), fs.finish())
}

#[test]
fn gs_emits_assemble_into_primitives() {
    let seed = 4;
    let inputs = Inputs::new(seed);
    let vin = |prim: u32, k: u32| {
        inputs
            .per_vertex_input(var(0), prim * 3 + k, BitSize::B32)
            .as_f32()
    };

    // Two emits of a line strip: one line from input vertices 0 and 1.
    let o = run(&gs_fs(Primitive::LineStrip, 2, None), &cfg(seed)).expect("runs");
    for f in 0..4 {
        let l = &o.fragments[&(0, f)].center;
        assert_eq!(l.len(), 2);
        let want = linear(&[vin(0, 0), vin(0, 1)], l);
        assert!(approx(fs_out(&o, 0, f, data(0, 0)).as_f32(), want));
    }
    // The second input primitive's line is assembled as primitive 1.
    let l = &o.fragments[&(1, 0)].center;
    assert!(approx(
        fs_out(&o, 1, 0, data(0, 0)).as_f32(),
        linear(&[vin(1, 0), vin(1, 1)], l)
    ));

    // A cut between the two emits leaves two one-vertex strips: no line at all.
    let o = run(&gs_fs(Primitive::LineStrip, 2, Some(0)), &cfg(seed)).expect("runs");
    assert!(o.fragments.is_empty(), "{o}");

    // Four emits of a triangle strip give triangles (0,1,2) and (1,2,0).
    let o = run(&gs_fs(Primitive::TriangleStrip, 4, None), &cfg(seed)).expect("runs");
    let l = &o.fragments[&(1, 0)].center;
    let want = linear(&[vin(0, 1), vin(0, 2), vin(0, 0)], l);
    assert!(approx(fs_out(&o, 1, 0, data(0, 0)).as_f32(), want));
}

#[test]
fn gs_outputs_are_undefined_after_emit() {
    let mut vs = ShaderBuilder::new(Stage::Vertex);
    let a = vs.load_input(attr(0));
    vs.store(var(0), a);
    let mut gs = ShaderBuilder::new(Stage::Geometry);
    gs.info(StageInfo::Geometry {
        input: Primitive::Points,
        output: Primitive::Points,
        max_vertices: 2,
        invocations: 2,
    });
    let zero = gs.constant(BitSize::B32, 0);
    let v = gs.load_per_vertex(var(0), zero);
    gs.store(var(1), v);
    gs.effect(InstKind::EmitVertex);
    gs.effect(InstKind::EmitVertex);
    gs.effect(InstKind::EmitVertex);
    let p = Pipeline::new(vs.finish(), gs.finish());
    // Three emits break `max_vertices` (the validator says so); the interpreter
    // must still cope, dropping the excess.
    let o = varysat::interpreter::run(&p, &cfg(3)).expect("runs");
    let inputs = Inputs::new(3);
    for prim in 0..2u32 {
        for inv in 0..2 {
            let at = [Unit::Primitive(prim), Unit::Invocation(inv)];
            let count = o
                .values
                .iter()
                .find(|(k, _)| k.path == at && k.item == Item::EmitCount);
            assert_eq!(
                count.map(|(_, v)| v.bits),
                Some(2),
                "max_vertices caps the emits"
            );
            let first = [at[0], at[1], Unit::Emit(0)];
            let want = inputs.attribute(attr(0), prim, BitSize::B32);
            assert_eq!(o.output(Stage::Geometry, &first, var(1)), Some(want));
            let second = [at[0], at[1], Unit::Emit(1)];
            assert_eq!(o.output(Stage::Geometry, &second, var(1)), None);
        }
    }
}

/// VS → TCS where invocation i stores i to VAR0.x of its vertex, then (after a
/// barrier when `barrier`) reads vertex 2's VAR0.x into VAR1.x.
fn tcs_pair(barrier: bool) -> Pipeline {
    let vs = passthrough_vs(Primitive::Triangles);
    let mut tcs = ShaderBuilder::new(Stage::TessCtrl);
    let id = tcs.system_value(SystemValue::InvocationId);
    let f = tcs.alu(AluOp::U2F32, &[id]);
    tcs.store_per_vertex(var(0), f, id);
    if barrier {
        tcs.effect(InstKind::Barrier);
    }
    let two = tcs.constant(BitSize::B32, 2);
    let r = tcs.load_output(var(0), Some(two));
    tcs.store_per_vertex(var(1), r, id);
    Pipeline::new(vs, tcs.finish())
}

#[test]
fn tcs_barrier_orders_phases() {
    let read = |o: &Observation, k: u32| {
        o.output(Stage::TessCtrl, &[Unit::Patch(0), Unit::Vertex(k)], var(1))
    };
    let o = run(&tcs_pair(true), &cfg(0)).expect("runs");
    for k in 0..3 {
        assert_eq!(
            read(&o, k),
            Some(Scalar::float(2.0, BitSize::B32)),
            "invocation {k}"
        );
    }
    // Without the barrier, an invocation that runs before invocation 2 (in the
    // seeded order of the phase) reads vertex 2 unwritten.
    let mut saw = [false; 2];
    for seed in 0..8 {
        let order = Inputs::new(seed).tcs_order(0, 0, 3);
        let o = run(&tcs_pair(false), &cfg(seed)).expect("runs");
        let after_two = order.iter().position(|&i| i == 2).expect("a permutation");
        for (at, k) in order.iter().enumerate() {
            let got = read(&o, *k as u32).expect("stored");
            assert_eq!(got.defined, at >= after_two, "seed {seed}, invocation {k}");
            saw[(at >= after_two) as usize] = true;
        }
    }
    assert_eq!(saw, [true, true], "both cases occur in eight seeds");
}

#[test]
fn tcs_invocations_run_in_a_seeded_order_per_phase() {
    let orders: std::collections::BTreeSet<Vec<usize>> = (0..16)
        .flat_map(|seed| [0, 1].map(|phase| Inputs::new(seed).tcs_order(0, phase, 3)))
        .collect();
    for o in &orders {
        let mut sorted = o.clone();
        sorted.sort();
        assert_eq!(sorted, vec![0, 1, 2], "{o:?} is a permutation");
    }
    assert_eq!(orders.len(), 6, "every order of three invocations occurs");
}

/// TCS → TES where every invocation stores its own control point's VAR0.x at output
/// vertex 0 (the last invocation to run wins) and `second` stores the same value to
/// VAR1.x, also at vertex 0; the TES writes both vertex-0 values out.
fn last_writer_pair(second: &str, tes_second: &str) -> Pipeline {
    let src = format!(
        "(pair
          (producer tcs
            (input_vertices 3)
            (output_vertices 3)
            (%id = load_system_value invocation_id)
            (%k0 = const 32 0)
            (%k2 = const 32 2)
            (%a = load_per_vertex_input VAR0.x %id)
            (store_per_vertex_output VAR0.x %a %k0)
            {second}
            (%lvl = const 32 4.0)
            (store_output TESS_LEVEL_OUTER.x %lvl)
            (store_output TESS_LEVEL_OUTER.y %lvl)
            (store_output TESS_LEVEL_OUTER.z %lvl)
            (store_output TESS_LEVEL_INNER.x %lvl))
          (consumer tes
            (domain triangles)
            (input_vertices 3)
            (%k0 = const 32 0)
            (%x = load_per_vertex_input VAR0.x %k0)
            (%y = load_per_vertex_input {tes_second} %k0)
            (store_output POS.x %x)
            (store_output VAR0.x %y)))"
    );
    varysat::text::parse(&src, None).expect("test pair parses")
}

/// Deduplicating VAR1.x into VAR0.x (the TES reading VAR0.x for both) is wrong when
/// VAR1.x's store does not run in the same invocations at the same point: which
/// invocation writes last is not fixed, so the two need not end up equal. A model
/// running invocations in one fixed order (0, 1, 2 in every phase) made both wrong
/// merges below look right (invocation 2 always wrote last); the seeded order per
/// phase exposes them. The same stores paired (stored together by every invocation)
/// stay equivalent under every order.
#[test]
fn tcs_last_writer_order_exposes_a_wrong_merge() {
    let cfg = EquivConfig {
        runs: 8,
        ..EquivConfig::default()
    };
    let only_last = "(%last = ieq %id %k2)
            (if %last (then (store_per_vertex_output VAR1.x %a %k0)) (else))";
    let after_barrier = "(barrier) (store_per_vertex_output VAR1.x %a %k0)";
    for second in [only_last, after_barrier] {
        let original = last_writer_pair(second, "VAR1.x");
        let merged = last_writer_pair("", "VAR0.x");
        let err = check_equivalent(&original, &merged, &cfg)
            .expect_err("a merge of stores made by other invocations is wrong");
        assert!(err.to_string().contains("VAR0.x"), "{err}");
    }
    let paired = last_writer_pair("(store_per_vertex_output VAR1.x %a %k0)", "VAR1.x");
    check_equivalent(&paired, &last_writer_pair("", "VAR0.x"), &cfg)
        .expect("paired stores hold the same value at every vertex");
}

#[test]
fn tcs_barrier_in_control_flow_is_an_error() {
    let vs = passthrough_vs(Primitive::Triangles);
    let mut tcs = ShaderBuilder::new(Stage::TessCtrl);
    let t = tcs.constant(BitSize::B1, 1);
    tcs.if_else(
        t,
        |b| {
            b.effect(InstKind::Barrier);
            vec![]
        },
        |_| vec![],
    );
    let err = run(&Pipeline::new(vs, tcs.finish()), &cfg(0)).unwrap_err();
    assert!(
        matches!(&err, Error::Interpret(m) if m.contains("barrier")),
        "{err}"
    );
}

#[test]
fn tcs_reads_vs_outputs_of_its_patch() {
    let vs = passthrough_vs(Primitive::Triangles);
    let mut tcs = ShaderBuilder::new(Stage::TessCtrl);
    tcs.info(StageInfo::TessCtrl {
        input_vertices: 3,
        output_vertices: 4,
    });
    let id = tcs.system_value(SystemValue::InvocationId);
    let v = tcs.load_per_vertex(var(0), id);
    tcs.store_per_vertex(var(0), v, id);
    let n = tcs.system_value(SystemValue::PatchVerticesIn);
    tcs.store(IoSlot::new(Slot::Patch(0), 0), n);
    let o = run(&Pipeline::new(vs, tcs.finish()), &cfg(6)).expect("runs");
    let inputs = Inputs::new(6);
    for patch in 0..2 {
        for k in 0..3 {
            let want = inputs.attribute(attr(0), patch * 3 + k, BitSize::B32);
            let got = o.output(
                Stage::TessCtrl,
                &[Unit::Patch(patch), Unit::Vertex(k)],
                var(0),
            );
            assert_eq!(got, Some(want));
        }
        // The fourth output vertex reads input vertex 3, which does not exist.
        let got = o.output(
            Stage::TessCtrl,
            &[Unit::Patch(patch), Unit::Vertex(3)],
            var(0),
        );
        assert_eq!(got.map(|s| s.defined), Some(false));
        let pv = o.output(
            Stage::TessCtrl,
            &[Unit::Patch(patch)],
            IoSlot::new(Slot::Patch(0), 0),
        );
        assert_eq!(pv, Some(Scalar::new(3, BitSize::B32)));
    }
}

/// A TES that evaluates `u·v0 + v·v1 + w·v2` over VAR0.x and stores it to VAR0.x,
/// and stores PATCH0.x + its result to VAR1.x.
fn barycentric_tes() -> Shader {
    let mut tes = ShaderBuilder::new(Stage::TessEval);
    let coords = [
        SystemValue::TessCoordX,
        SystemValue::TessCoordY,
        SystemValue::TessCoordZ,
    ];
    let mut acc: Option<Value> = None;
    for (k, sv) in coords.iter().enumerate() {
        let c = tes.system_value(*sv);
        let idx = tes.constant(BitSize::B32, k as u32);
        let v = tes.load_per_vertex(var(0), idx);
        let t = tes.alu(AluOp::FMul, &[c, v]);
        acc = Some(match acc {
            Some(a) => tes.alu(AluOp::FAdd, &[a, t]),
            None => t,
        });
    }
    let acc = acc.unwrap_or_else(|| tes.f32(0.0));
    tes.store(var(0), acc);
    let pin = tes.load_input(IoSlot::new(Slot::Patch(0), 0));
    let s = tes.alu(AluOp::FAdd, &[pin, acc]);
    tes.store(var(1), s);
    tes.finish()
}

#[test]
fn vs_tes_uses_seeded_tess_coords() {
    let p = Pipeline::new(passthrough_vs(Primitive::Triangles), barycentric_tes());
    let o = run(&p, &cfg(8)).expect("runs");
    let inputs = Inputs::new(8);
    for patch in 0..2u32 {
        for c in 0..4u32 {
            let [u, v, w] = inputs.tess_coord(true, patch, c);
            assert!(approx(u + v + w, 1.0) && u > 0.0 && v > 0.0 && w > 0.0);
            let a = |k: u32| {
                inputs
                    .attribute(attr(0), patch * 3 + k, BitSize::B32)
                    .as_f32()
            };
            let want = u * a(0) + v * a(1) + w * a(2);
            let at = [Unit::Patch(patch), Unit::Coord(c)];
            let got = o
                .output(Stage::TessEval, &at, var(0))
                .expect("stored")
                .as_f32();
            assert!(approx(got, want), "{got} vs {want}");
            // A VS cannot write patch inputs.
            assert_eq!(
                o.output(Stage::TessEval, &at, var(1)).map(|s| s.defined),
                Some(false)
            );
        }
    }
}

#[test]
fn tcs_tes_passes_per_vertex_and_patch_outputs() {
    let mut tcs = ShaderBuilder::new(Stage::TessCtrl);
    let id = tcs.system_value(SystemValue::InvocationId);
    let v = tcs.load_per_vertex(var(3), id);
    tcs.store_per_vertex(var(0), v, id);
    let u = tcs.uniform(0);
    tcs.store(IoSlot::new(Slot::Patch(0), 0), u);
    tcs.store(IoSlot::new(Slot::TessLevelOuter, 0), u);
    let p = Pipeline::new(tcs.finish(), barycentric_tes()).with_uniforms(1);
    let o = run(&p, &cfg(2)).expect("runs");
    let inputs = Inputs::new(2);
    let k = inputs.uniform(0).as_f32();
    for patch in 0..2u32 {
        let level = o.output(
            Stage::TessCtrl,
            &[Unit::Patch(patch)],
            IoSlot::new(Slot::TessLevelOuter, 0),
        );
        assert_eq!(level, Some(inputs.uniform(0)), "tess levels are observable");
        for c in 0..4u32 {
            let [u, v, w] = inputs.tess_coord(true, patch, c);
            let a = |k: u32| {
                inputs
                    .per_vertex_input(var(3), patch * 3 + k, BitSize::B32)
                    .as_f32()
            };
            let want = u * a(0) + v * a(1) + w * a(2);
            let at = [Unit::Patch(patch), Unit::Coord(c)];
            let got = o
                .output(Stage::TessEval, &at, var(1))
                .expect("stored")
                .as_f32();
            assert!(approx(got, k + want), "{got} vs {}", k + want);
        }
    }
    // The TCS's VAR0 only passes between the stages: not observable.
    assert!(o
        .output(Stage::TessCtrl, &[Unit::Patch(0), Unit::Vertex(0)], var(0))
        .is_none());
}

#[test]
fn every_stage_pair_runs() {
    let tes_producer = || {
        let mut tes = ShaderBuilder::new(Stage::TessEval);
        let x = tes.system_value(SystemValue::TessCoordX);
        let zero = tes.constant(BitSize::B32, 0);
        let v = tes.load_per_vertex(var(0), zero);
        let p = tes.load_input(IoSlot::new(Slot::Patch(1), 0));
        let s = tes.alu(AluOp::FFma, &[x, v, p]);
        tes.store(var(0), s);
        tes.store(IoSlot::new(Slot::Pos, 0), s);
        tes.finish()
    };
    let inputs = Inputs::new(1);
    // TES → FS: the FS sees x·v0 + patch of the TES's own coordinates.
    let mut fs = ShaderBuilder::new(Stage::Fragment);
    let v = fs.load_input(var(0));
    fs.store(data(0, 0), v);
    let o = run(&Pipeline::new(tes_producer(), fs.finish()), &cfg(1)).expect("tes-fs");
    let [u, _, _] = inputs.tess_coord(true, 1, 0);
    let v0 = inputs.per_vertex_input(var(0), 3, BitSize::B32).as_f32();
    let pin = inputs
        .patch_input(IoSlot::new(Slot::Patch(1), 0), 1, BitSize::B32)
        .as_f32();
    assert!(approx(
        fs_out(&o, 1, 0, data(0, 0)).as_f32(),
        u.mul_add(v0, pin)
    ));
    let pos = o.output(
        Stage::TessEval,
        &[Unit::Patch(1), Unit::Vertex(0)],
        IoSlot::new(Slot::Pos, 0),
    );
    assert_eq!(pos, Some(fs_out(&o, 1, 0, data(0, 0))));

    // TES → GS (triangles) and VS → GS: the GS copies vertex 1's VAR0.x.
    let gs = || {
        let mut gs = ShaderBuilder::new(Stage::Geometry);
        let one = gs.constant(BitSize::B32, 1);
        let v = gs.load_per_vertex(var(0), one);
        gs.store(var(2), v);
        gs.effect(InstKind::EmitVertex);
        gs.finish()
    };
    let o = run(&Pipeline::new(tes_producer(), gs()), &cfg(1)).expect("tes-gs");
    let [u, _, _] = inputs.tess_coord(true, 0, 1);
    let v0 = inputs.per_vertex_input(var(0), 0, BitSize::B32).as_f32();
    let pin = inputs
        .patch_input(IoSlot::new(Slot::Patch(1), 0), 0, BitSize::B32)
        .as_f32();
    let at = [Unit::Primitive(0), Unit::Invocation(0), Unit::Emit(0)];
    let got = o
        .output(Stage::Geometry, &at, var(2))
        .expect("emitted")
        .as_f32();
    assert!(approx(got, u.mul_add(v0, pin)));

    let o = run(
        &Pipeline::new(passthrough_vs(Primitive::Triangles), gs()),
        &cfg(1),
    )
    .expect("vs-gs");
    let at = [Unit::Primitive(1), Unit::Invocation(0), Unit::Emit(0)];
    let want = inputs.attribute(attr(0), 4, BitSize::B32);
    assert_eq!(o.output(Stage::Geometry, &at, var(2)), Some(want));
}

#[test]
fn producer_system_values_and_xfb_are_observable_varyings_are_not() {
    let mut vs = ShaderBuilder::new(Stage::Vertex);
    let a = vs.load_input(attr(0));
    vs.store(var(0), a);
    vs.store_ex(
        var(1),
        a,
        None,
        Some(Xfb {
            buffer: 1,
            offset: 8,
        }),
    );
    vs.effect(InstKind::StoreOutput {
        slot: IoSlot::new(Slot::Psiz, 0),
        value: a,
        indirect: None,
        xfb: None,
        no_varying: true,
    });
    let fs = ShaderBuilder::new(Stage::Fragment).finish();
    let o = run(&Pipeline::new(vs.finish(), fs), &cfg(0)).expect("runs");
    let want = Inputs::new(0).attribute(attr(0), 4, BitSize::B32);
    let v4 = [Unit::Vertex(4)];
    assert_eq!(
        o.output(Stage::Vertex, &v4, IoSlot::new(Slot::Psiz, 0)),
        Some(want)
    );
    assert_eq!(o.output(Stage::Vertex, &v4, var(0)), None);
    assert_eq!(o.output(Stage::Vertex, &v4, var(1)), None);
    let xfb = o.values.iter().find(|(k, _)| {
        k.path == v4
            && k.item
                == Item::Xfb {
                    buffer: 1,
                    offset: 8,
                }
    });
    assert_eq!(xfb.map(|(_, v)| *v), Some(want));
}

/// A 16-bit capture's offset is the value's own, whichever half of its slot the
/// value is stored to: the same value captured at byte 2 from `VAR0.x.lo` and
/// from `VAR3.y.hi` (where the packer may move an xfb-only 16-bit output) is the
/// same observation, and another offset is not. Before, the interpreter added 2
/// for a high half, so the packer's move changed what was captured.
#[test]
fn sixteen_bit_captures_are_observed_at_their_offset_in_either_half() {
    let pair = |slot: IoSlot, offset: u16| {
        let text = format!(
            "(pair (producer vs (%a = load_input ATTR0.x) (%h = f2f16 %a)
               (store_output POS.x %a)
               (store_output {slot} %h (xfb 0 {offset}) no_varying))
             (consumer fs (%c = const 32 1.0) (store_output DATA0.x %c)))"
        );
        varysat::text::parse(&text, None).expect("parses")
    };
    let lo = pair(IoSlot::half(Slot::Var(0), 0, varysat::ir::Half::Lo), 2);
    let hi = pair(IoSlot::half(Slot::Var(3), 1, varysat::ir::Half::Hi), 2);
    check_equivalent(&lo, &hi, &EquivConfig::default()).expect("the same capture");
    let moved = pair(IoSlot::half(Slot::Var(0), 0, varysat::ir::Half::Lo), 4);
    assert!(check_equivalent(&lo, &moved, &EquivConfig::default()).is_err());
}

/// A VS that computes Σ i for i in 0..limit, skipping i == 2, with a loop that
/// continues and breaks, and stores the sum (as float) to PSIZ.
fn loop_vs(limit: u32) -> Shader {
    let mut vs = ShaderBuilder::new(Stage::Vertex);
    let zero = vs.constant(BitSize::B32, 0);
    let one = vs.constant(BitSize::B32, 1);
    let two = vs.constant(BitSize::B32, 2);
    let n = vs.constant(BitSize::B32, limit);
    let out = vs.loop_(&[zero, zero], |b, phis| {
        let (i, sum) = (phis[0], phis[1]);
        let done = b.alu(AluOp::IGe, &[i, n]);
        b.if_else(
            done,
            |b| {
                b.break_();
                vec![]
            },
            |_| vec![],
        );
        let next = b.alu(AluOp::IAdd, &[i, one]);
        let skip = b.alu(AluOp::IEq, &[i, two]);
        b.if_else(
            skip,
            |b| {
                b.continue_(&[next, sum]);
                vec![]
            },
            |_| vec![],
        );
        let s = b.alu(AluOp::IAdd, &[sum, i]);
        b.continue_(&[next, s]);
    });
    let f = vs.alu(AluOp::U2F32, &[out[1]]);
    vs.store(IoSlot::new(Slot::Psiz, 0), f);
    vs.finish()
}

#[test]
fn loops_with_break_continue_and_phis() {
    let fs = ShaderBuilder::new(Stage::Fragment).finish();
    let o = run(&Pipeline::new(loop_vs(6), fs), &cfg(0)).expect("runs");
    let want = (0..6).filter(|i| *i != 2).sum::<u32>() as f32;
    let got = o.output(
        Stage::Vertex,
        &[Unit::Vertex(0)],
        IoSlot::new(Slot::Psiz, 0),
    );
    assert_eq!(got, Some(Scalar::float(want, BitSize::B32)));
}

#[test]
fn loop_limit_is_an_error() {
    let fs = ShaderBuilder::new(Stage::Fragment).finish();
    let p = Pipeline::new(loop_vs(100), fs);
    let c = RunConfig {
        loop_limit: 50,
        ..cfg(0)
    };
    let err = run(&p, &c).unwrap_err();
    assert!(
        matches!(&err, Error::Interpret(m) if m.contains("more than 50")),
        "{err}"
    );
    assert!(
        run(&p, &cfg(0)).is_ok(),
        "100 iterations fit the default limit"
    );
}

#[test]
fn undefined_values_are_tracked() {
    let mut vs = ShaderBuilder::new(Stage::Vertex);
    let u = vs.undef(BitSize::B32);
    let a = vs.load_input(attr(0));
    let t = vs.constant(BitSize::B1, 1);
    let ub = vs.undef(BitSize::B1);
    let sum = vs.alu(AluOp::FAdd, &[u, a]); // undefined
    let sel = vs.alu(AluOp::BCsel, &[t, a, u]); // defined: selects a
    let sel_u = vs.alu(AluOp::BCsel, &[ub, a, a]); // undefined condition
    let phi = vs.if_else(ub, |_| vec![a], |_| vec![a]); // taken else, tainted
    let psiz = IoSlot::new(Slot::Psiz, 0);
    let clip = |c| IoSlot::new(Slot::ClipDist(false), c);
    vs.store(psiz, sum);
    vs.store(clip(0), sel);
    vs.store(clip(1), sel_u);
    vs.store(clip(2), phi[0]);
    let fs = ShaderBuilder::new(Stage::Fragment).finish();
    let o = run(&Pipeline::new(vs.finish(), fs), &cfg(0)).expect("runs");
    let get = |s| {
        o.output(Stage::Vertex, &[Unit::Vertex(0)], s)
            .expect("stored")
    };
    let want = Inputs::new(0).attribute(attr(0), 0, BitSize::B32);
    assert!(!get(psiz).defined);
    assert_eq!(get(clip(0)), want);
    assert!(!get(clip(1)).defined);
    assert!(!get(clip(2)).defined);
}

#[test]
fn discard_and_ssbo_are_observed() {
    let vs = passthrough_vs(Primitive::Triangles);
    let mut fs = ShaderBuilder::new(Stage::Fragment);
    let id = fs.system_value(SystemValue::PrimitiveId);
    let zero = fs.constant(BitSize::B32, 0);
    let first = fs.alu(AluOp::IEq, &[id, zero]);
    let addr = fs.constant(BitSize::B32, 7);
    let one = fs.f32(1.0);
    fs.effect(InstKind::SsboStore {
        buffer: 2,
        addr,
        value: one,
    });
    fs.if_else(
        first,
        |b| {
            b.effect(InstKind::Discard);
            vec![]
        },
        |_| vec![],
    );
    fs.store(data(0, 0), one);
    let o = run(&Pipeline::new(vs, fs.finish()), &cfg(0)).expect("runs");
    let discard = |p| {
        o.values
            .iter()
            .find(|(k, _)| k.path == frag(p, 0) && k.item == Item::Discard)
    };
    assert_eq!(discard(0).map(|(_, v)| *v), Some(Scalar::bool(true)));
    assert_eq!(discard(1).map(|(_, v)| *v), Some(Scalar::bool(false)));
    assert!(o.output(Stage::Fragment, &frag(0, 0), data(0, 0)).is_none());
    assert_eq!(
        o.output(Stage::Fragment, &frag(1, 0), data(0, 0)),
        Some(Scalar::float(1.0, BitSize::B32))
    );
    let word = o
        .values
        .iter()
        .find(|(k, _)| k.item == Item::Ssbo { buffer: 2, addr: 7 });
    assert_eq!(
        word.map(|(_, v)| *v),
        Some(Scalar::float(1.0, BitSize::B32))
    );
}

#[test]
fn same_seed_same_observation() {
    let p = Pipeline::new(passthrough_vs(Primitive::Triangles), barycentric_tes());
    let a = run(&p, &cfg(11)).expect("runs");
    let b = run(&p, &cfg(11)).expect("runs");
    assert_eq!(a, b);
    assert_eq!(a.to_string(), b.to_string());
    let c = run(&p, &cfg(12)).expect("runs");
    assert_ne!(a.values, c.values, "another seed gives other inputs");
}

/// VS → FS where the FS computes `interp(VAR slot) · k` for a constant `k`, with the
/// VS routing ATTR0.x through VAR`slot`.
fn scaled(slot: u8, k: f32) -> Pipeline {
    let mut vs = ShaderBuilder::new(Stage::Vertex);
    let a = vs.load_input(attr(0));
    vs.store(var(slot), a);
    vs.store(IoSlot::new(Slot::Pos, 3), a);
    let mut fs = ShaderBuilder::new(Stage::Fragment);
    let x = fs.load_interpolated(var(slot), InterpMode::PERSP_CENTER);
    let c = fs.f32(k);
    let y = fs.alu(AluOp::FMul, &[x, c]);
    fs.store(data(0, 0), y);
    Pipeline::new(vs.finish(), fs.finish())
}

#[test]
fn equivalence_accepts_rerouted_varyings() {
    check_equivalent(&scaled(0, 3.0), &scaled(17, 3.0), &EquivConfig::default())
        .expect("equivalent");
}

#[test]
fn equivalence_reports_a_changed_constant() {
    let err =
        check_equivalent(&scaled(0, 3.0), &scaled(0, 3.5), &EquivConfig::default()).unwrap_err();
    let Inequivalence::Mismatch(m) = &err else {
        panic!("expected a mismatch, got {err}");
    };
    assert_eq!(m.seed, 0);
    let text = err.to_string();
    assert!(
        text.contains("fs primitive 0 fragment 0: DATA0.x"),
        "{text}"
    );
    assert!(text.contains("barycentrics"), "{text}");
    let (l, r) = (
        m.left.expect("left").as_f32(),
        m.right.expect("right").as_f32(),
    );
    assert!(
        approx(l / 3.0, r / 3.5),
        "both scale the same input: {text}"
    );
    assert!(text.contains(&format!("0x{:08x}", l.to_bits())), "{text}");
}

#[test]
fn equivalence_ignores_undefined_differences() {
    // One FS writes DATA0.y from an unwritten varying, the other a constant.
    let with = |defined: bool| {
        let mut p = scaled(0, 2.0);
        let mut fs = ShaderBuilder::new(Stage::Fragment);
        let x = fs.load_interpolated(var(0), InterpMode::PERSP_CENTER);
        let c = fs.f32(2.0);
        let y = fs.alu(AluOp::FMul, &[x, c]);
        fs.store(data(0, 0), y);
        let z = if defined {
            fs.f32(9.0)
        } else {
            fs.load_input(var(30))
        };
        fs.store(data(0, 1), z);
        p.consumer = fs.finish();
        p
    };
    check_equivalent(&with(false), &with(true), &EquivConfig::default())
        .expect("undef equals anything");
    // A definite value that one side does not write at all is a mismatch.
    let err = check_equivalent(&with(true), &scaled(0, 2.0), &EquivConfig::default()).unwrap_err();
    assert!(err.to_string().contains("not written"), "{err}");
}

#[test]
fn equivalence_reports_run_failures() {
    let fs = || ShaderBuilder::new(Stage::Fragment).finish();
    let p = Pipeline::new(loop_vs(2000), fs());
    let q = Pipeline::new(loop_vs(3), fs());
    let err = check_equivalent(&q, &p, &EquivConfig::default()).unwrap_err();
    assert!(
        matches!(err, Inequivalence::Failed { pipeline: 1, .. }),
        "{err}"
    );
}

#[test]
fn fragment_system_values() {
    let mut fs = ShaderBuilder::new(Stage::Fragment);
    let w = fs.system_value(SystemValue::FragCoordW);
    fs.store(data(0, 0), w);
    let ff = fs.system_value(SystemValue::FrontFace);
    let ffi = fs.alu(AluOp::B2I32, &[ff]);
    fs.store(data(0, 1), ffi);
    let pid = fs.system_value(SystemValue::PrimitiveId);
    fs.store(data(0, 2), pid);
    let p = Pipeline::new(passthrough_vs(Primitive::Triangles), fs.finish());
    let o = run(&p, &cfg(21)).expect("runs");
    let inputs = Inputs::new(21);
    for prim in 0..2 {
        let info = &o.fragments[&(prim, 3)];
        let inv_w: f32 = (0..3).map(|k| info.center[k] / info.clip_w[k]).sum();
        assert!(approx(fs_out(&o, prim, 3, data(0, 0)).as_f32(), inv_w));
        let face = inputs.front_face(prim) as u32;
        assert_eq!(fs_out(&o, prim, 3, data(0, 1)).bits, face);
        assert_eq!(fs_out(&o, prim, 3, data(0, 2)).bits, prim);
    }
}

#[test]
fn uniforms_and_ubos_are_bounded_by_their_declarations() {
    let mut vs = ShaderBuilder::new(Stage::Vertex);
    let u1 = vs.uniform(1);
    let u2 = vs.uniform(2);
    let b8 = vs.ubo(3, 8);
    let b16 = vs.ubo(3, 16);
    let b6 = vs.ubo(3, 6);
    let clip = |c| IoSlot::new(Slot::ClipDist(false), c);
    vs.store(clip(0), u1);
    vs.store(clip(1), u2);
    vs.store(clip(2), b8);
    vs.store(clip(3), b16);
    vs.store(IoSlot::new(Slot::Psiz, 0), b6);
    let fs = ShaderBuilder::new(Stage::Fragment).finish();
    let p = Pipeline::new(vs.finish(), fs)
        .with_uniforms(2)
        .with_ubo(3, 16);
    // Out-of-range accesses are invalid IR; the interpreter must still cope.
    let o = varysat::interpreter::run(&p, &cfg(4)).expect("runs");
    let inputs = Inputs::new(4);
    let get = |s| {
        o.output(Stage::Vertex, &[Unit::Vertex(2)], s)
            .expect("stored")
    };
    assert_eq!(get(clip(0)), inputs.uniform(1));
    assert!(!get(clip(1)).defined, "uniform word 2 of 2 is out of range");
    assert_eq!(get(clip(2)), inputs.ubo(3, 8));
    assert!(!get(clip(3)).defined, "byte 16 of a 16-byte block");
    assert!(!get(IoSlot::new(Slot::Psiz, 0)).defined, "unaligned offset");
}

#[test]
fn indirect_slots_reach_the_indexed_array() {
    let mut vs = ShaderBuilder::new(Stage::Vertex);
    let a = vs.load_input(attr(0));
    let two = vs.constant(BitSize::B32, 2);
    let five = vs.constant(BitSize::B32, 5);
    let ind = |index| Some(varysat::ir::Indirect { index, len: 4 });
    vs.store_ex(var(1), a, ind(two), None); // VAR3.x
    let b = vs.load_input(attr(1));
    vs.store_ex(var(1), b, ind(five), None); // outside VAR1..VAR4: dropped
    let mut fs = ShaderBuilder::new(Stage::Fragment);
    let direct = fs.load_input(var(3));
    fs.store(data(0, 0), direct);
    let six = fs.constant(BitSize::B32, 5);
    let v = fs.inst(
        InstKind::LoadInput {
            slot: var(1),
            indirect: Some(varysat::ir::Indirect { index: six, len: 4 }),
        },
        BitSize::B32,
    );
    fs.store(data(0, 1), v);
    let varying6 = fs.load_input(var(6));
    fs.store(data(0, 2), varying6);
    let o = run(&Pipeline::new(vs.finish(), fs.finish()), &cfg(0)).expect("runs");
    let want = Inputs::new(0).attribute(attr(0), 0, BitSize::B32);
    assert_eq!(fs_out(&o, 0, 0, data(0, 0)), want);
    assert!(!fs_out(&o, 0, 0, data(0, 1)).defined);
    assert!(!fs_out(&o, 0, 0, data(0, 2)).defined);
}

#[test]
fn undefined_conditions_taint_stores_and_loop_exits() {
    let mut vs = ShaderBuilder::new(Stage::Vertex);
    let a = vs.load_input(attr(0));
    let ub = vs.undef(BitSize::B1);
    let psiz = IoSlot::new(Slot::Psiz, 0);
    let pos = |c| IoSlot::new(Slot::Pos, c);
    vs.if_else(
        ub,
        |_| vec![],
        |b| {
            b.store(psiz, a);
            vec![]
        },
    );
    let zero = vs.constant(BitSize::B32, 0);
    let one = vs.constant(BitSize::B32, 1);
    // Leaves on an undefined condition in the first iteration: i is undefined after.
    let out = vs.loop_(&[zero], |b, phis| {
        b.if_else(
            ub,
            |b| {
                let n = b.alu(AluOp::IAdd, &[phis[0], one]);
                b.continue_(&[n]);
                vec![]
            },
            |b| {
                b.break_();
                vec![]
            },
        );
        b.break_();
    });
    vs.store(pos(0), out[0]);
    vs.store(pos(1), a);
    let fs = ShaderBuilder::new(Stage::Fragment).finish();
    let o = run(&Pipeline::new(vs.finish(), fs), &cfg(0)).expect("runs");
    let get = |s| {
        o.output(Stage::Vertex, &[Unit::Vertex(1)], s)
            .expect("stored")
    };
    assert!(!get(psiz).defined, "a store under an undefined condition");
    assert!(
        !get(pos(0)).defined,
        "a loop left under an undefined condition"
    );
    let want = Inputs::new(0).attribute(attr(0), 1, BitSize::B32);
    assert_eq!(get(pos(1)), want, "code after the branch is defined again");
}

/// VS → FS computing `interp(a) + interp(b)` (split) or `interp(a + b)` (merged).
fn sum_pair(merged: bool) -> Pipeline {
    let mut vs = ShaderBuilder::new(Stage::Vertex);
    let a = vs.load_input(attr(0));
    let b = vs.load_input(attr(1));
    let mut fs = ShaderBuilder::new(Stage::Fragment);
    let r = if merged {
        let s = vs.alu(AluOp::FAdd, &[a, b]);
        vs.store(var(4), s);
        fs.load_interpolated(var(4), InterpMode::PERSP_CENTER)
    } else {
        vs.store(var(0), a);
        vs.store(var(1), b);
        let x = fs.load_interpolated(var(0), InterpMode::PERSP_CENTER);
        let y = fs.load_interpolated(var(1), InterpMode::PERSP_CENTER);
        fs.alu(AluOp::FAdd, &[x, y])
    };
    fs.store(data(0, 0), r);
    Pipeline::new(vs.finish(), fs.finish())
}

#[test]
fn equivalence_tolerates_reassociated_interpolation() {
    let cfg = EquivConfig {
        runs: 16,
        ..EquivConfig::default()
    };
    check_equivalent(&sum_pair(false), &sum_pair(true), &cfg).expect("within tolerance");
    let strict = EquivConfig {
        rel_tol: 0.0,
        ..cfg
    };
    let err = check_equivalent(&sum_pair(false), &sum_pair(true), &strict).unwrap_err();
    assert!(matches!(err, Inequivalence::Mismatch(_)), "{err}");
}

fn parse(src: &str) -> Pipeline {
    varysat::text::parse(src, Some("inline.pair")).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_example_pair_runs_deterministically() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/pairs");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .expect("examples/pairs")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "pair"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty());
    for path in paths {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(&path).expect("readable");
        let p = varysat::text::parse(&text, Some(&name)).unwrap_or_else(|e| panic!("{e}"));
        let a = run(&p, &cfg(3)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(a, run(&p, &cfg(3)).expect("runs again"), "{name}");
        assert!(
            a.values.values().any(|v| v.defined),
            "{name} observes nothing defined:\n{a}"
        );
        check_equivalent(&p, &p.clone(), &EquivConfig::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn errors_name_the_file_and_position() {
    let looped = parse(
        "(pair
  (producer vs
    (%z = const 32 0)
    (loop (%i = phi %z)
      (continue %i))
    (store_output POS.x %i))
  (consumer fs))",
    );
    let err = run(&looped, &cfg(0)).unwrap_err().to_string();
    assert!(err.contains("inline.pair:4:5:"), "{err}");
    assert!(err.contains("more than 1024 iterations"), "{err}");

    let barrier = parse(
        "(pair
  (producer vs (%a = load_input ATTR0.x) (store_output VAR0.x %a))
  (consumer tcs
    (%t = const 1 1)
    (if %t (then (barrier)) (else))))",
    );
    let err = run(&barrier, &cfg(0)).unwrap_err().to_string();
    assert!(err.contains("inline.pair:5:18:"), "{err}");
}

#[test]
fn text_pair_flat_and_perspective() {
    let p = parse(
        "(pair
  (producer vs
    (topology lines)
    (%a = load_input ATTR2.y)
    (%h = load_input ATTR3.x.hi)
    (store_output VAR7.w %a)
    (store_output VAR8.x.hi %h))
  (consumer fs
    (provoking last)
    (%f = load_input VAR7.w)
    (%s = load_interpolated_input VAR7.w persp center)
    (%h = load_interpolated_input VAR8.x.hi linear centroid)
    (%h32 = f2f32 %h)
    (store_output DATA0.x %f)
    (store_output DATA0.y %s)
    (store_output DATA0.z %h32)))",
    );
    let o = run(&p, &cfg(13)).expect("runs");
    let inputs = Inputs::new(13);
    let slot = IoSlot::new(Slot::Attr(2), 1);
    let hslot = IoSlot::half(Slot::Attr(3), 0, Half::Hi);
    for prim in 0..2 {
        let a: Vec<f32> = (0..2)
            .map(|k| inputs.attribute(slot, prim * 2 + k, BitSize::B32).as_f32())
            .collect();
        let h: Vec<f32> = (0..2)
            .map(|k| inputs.attribute(hslot, prim * 2 + k, BitSize::B16).as_f32())
            .collect();
        let info = &o.fragments[&(prim, 1)];
        // VAR7 is also read interpolated, so it is not flat-shaded: the flat read
        // gets the first vertex, not the provoking (last) one.
        assert_eq!(
            fs_out(&o, prim, 1, data(0, 0)).as_f32(),
            a[0],
            "first vertex"
        );
        let want = persp(&a, &info.center, &info.clip_w);
        assert!(approx(fs_out(&o, prim, 1, data(0, 1)).as_f32(), want));
        let want_h = half::f16::from_f32(linear(&h, &info.centroid)).to_f32();
        let got_h = fs_out(&o, prim, 1, data(0, 2)).as_f32();
        assert!(
            (got_h - want_h).abs() <= want_h.abs().max(1e-3) * 2f32.powi(-10),
            "{got_h} vs {want_h}"
        );
        assert!((info.center[0] + info.center[1] - 1.0).abs() < 1e-6);
    }
}

/// A pair whose FS writes `1 / z` for a constant zero `z` written as `zero`.
fn reciprocal_of(zero: &str) -> Pipeline {
    let text = format!(
        "(pair
  (producer vs
    (%p = load_input ATTR0.x)
    (store_output POS.x %p))
  (consumer fs
    (%z = const 32 {zero})
    (%r = frcp %z)
    (store_output DATA0.x %r)))"
    );
    varysat::text::parse(&text, Some("zero.pair")).expect("parses")
}

#[test]
fn equivalence_reads_a_negative_zero_as_positive_where_its_sign_would_show() {
    let (neg, pos) = (reciprocal_of("-0.0"), reciprocal_of("0.0"));
    // Zero signs are not preserved (NIR's default float mode): 1/-0 counts as 1/+0.
    assert!(check_equivalent(&neg, &pos, &EquivConfig::default()).is_ok());
    // Exact runs keep them: +inf against -inf.
    let exact = EquivConfig {
        run: RunConfig {
            signed_zeros: true,
            ..RunConfig::default()
        },
        ..EquivConfig::default()
    };
    assert!(check_equivalent(&neg, &pos, &exact).is_err());
}

/// A 16-bit uniform or UBO load (`load_uniform N.lo|.hi`, `load_ubo B %o lo|hi`)
/// reads one half of the 32-bit word (low half at the lower address), so the two
/// halves put together are the word; both halves of a seeded word are finite
/// half-floats, and a known word's halves are its own.
#[test]
fn sixteen_bit_uniform_and_ubo_loads_are_halves_of_the_word() {
    let vs = passthrough_vs(Primitive::Triangles);
    let mut fs = ShaderBuilder::new(Stage::Fragment);
    let reads = [
        fs.uniform(0),
        fs.uniform_half(0, Half::Lo),
        fs.uniform_half(0, Half::Hi),
        fs.ubo(0, 4),
        fs.ubo_half(0, 4, Half::Lo),
        fs.ubo_half(0, 4, Half::Hi),
    ];
    for (i, v) in reads.iter().enumerate() {
        let slot = match i % 3 {
            0 => data(i as u8, 0),
            1 => IoSlot::half(Slot::Data(i as u8 - 1), 1, Half::Lo),
            _ => IoSlot::half(Slot::Data(i as u8 - 2), 1, Half::Hi),
        };
        fs.store(slot, *v);
    }
    let p = Pipeline::new(vs, fs.finish())
        .with_uniforms(1)
        .with_ubo(0, 16);
    for seed in 0..8 {
        let o = run(&p, &cfg(seed)).expect("runs");
        for n in [0, 3] {
            let word = fs_out(&o, 0, 0, data(n, 0));
            let lo = fs_out(&o, 0, 0, IoSlot::half(Slot::Data(n), 1, Half::Lo));
            let hi = fs_out(&o, 0, 0, IoSlot::half(Slot::Data(n), 1, Half::Hi));
            assert_eq!((lo.size, hi.size), (BitSize::B16, BitSize::B16));
            assert_eq!(word.bits, lo.bits | (hi.bits << 16), "seed {seed} DATA{n}");
            for h in [lo, hi] {
                assert!(half::f16::from_bits(h.bits as u16).is_finite(), "{h:?}");
            }
        }
    }
}

/// An output the branch an undefined condition skips would have stored is
/// undefined after the `if` as well: that branch might have run instead. Found on
/// piglit's `glsl-es-3.00/execution/built-in-functions/const-unpackHalf2x16`, whose
/// `x != -inf` comparisons are undefined in the equivalence runs (an inexact op
/// meeting an Inf) and whose chain of `if`s storing `red` the optimizer turns into
/// `bcsel`s: the select was undefined, the reference kept the earlier store.
#[test]
fn a_store_in_the_branch_an_undefined_condition_skips_is_undefined() {
    let psiz = IoSlot::new(Slot::Psiz, 0);
    let build = |select: bool| {
        let mut vs = ShaderBuilder::new(Stage::Vertex);
        let a = vs.load_input(attr(0));
        let ub = vs.undef(BitSize::B1);
        let zero = vs.constant(BitSize::B32, 0);
        let one = vs.constant(BitSize::B32, 0x3f80_0000);
        vs.store(IoSlot::new(Slot::Pos, 0), a);
        if select {
            let v = vs.alu(AluOp::BCsel, &[ub, one, zero]);
            vs.store(psiz, v);
        } else {
            vs.store(psiz, zero);
            vs.if_else(
                ub,
                |b| {
                    b.store(psiz, one);
                    vec![]
                },
                |_| vec![],
            );
        }
        let fs = ShaderBuilder::new(Stage::Fragment).finish();
        Pipeline::new(vs.finish(), fs)
    };
    let (branch, select) = (build(false), build(true));
    let o = run(&branch, &cfg(0)).expect("runs");
    let stored = o
        .output(Stage::Vertex, &[Unit::Vertex(0)], psiz)
        .expect("stored");
    assert!(!stored.defined, "the skipped branch's store may have run");
    check_equivalent(&branch, &select, &EquivConfig::default())
        .expect("the select refines the branch");
}
