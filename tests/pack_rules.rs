//! One test per packing rule of reference/000 §7 and design §5, each asserting the
//! exact layout. Expected addresses are worked out by hand from the rule in the
//! comment above each assertion.

mod pack_support;

use std::collections::BTreeSet;

use pack_support::{data_out, fs_pair, loads_of, pack_checked, Read, V};
use varysat::internals::pack::{pack, Group, LoadRewrite, PackOptions, Packer};
use varysat::ir::{
    AluOp, Half, Indirect, InstKind, InterpLoc, InterpMode, IoSlot, Pipeline, ShaderBuilder, Slot,
    Stage, SystemValue, Xfb,
};
use varysat::Error;

const PC: InterpMode = InterpMode::PERSP_CENTER;
const LC: InterpMode = InterpMode {
    interp: varysat::ir::Interp::Linear,
    loc: InterpLoc::Center,
};

fn var(n: u8, c: u8) -> IoSlot {
    IoSlot::var(n, c)
}

fn var16(n: u8, c: u8, h: Half) -> IoSlot {
    IoSlot::half(Slot::Var(n), c, h)
}

fn strict() -> PackOptions {
    PackOptions {
        flexible_interp: false,
        ..PackOptions::default()
    }
}

#[test]
fn interpolated_varyings_pack_from_var0_x_in_address_order() {
    let p = fs_pair(&[V::interp(var(7, 3), PC), V::interp(var(3, 1), PC)]);
    let (out, l) = pack_checked(&p, &PackOptions::default());
    assert_eq!(l.map[&var(3, 1)], var(0, 0));
    assert_eq!(l.map[&var(7, 3)], var(0, 1));
    assert_eq!(loads_of(&out, var(0, 0)), vec![Read::Interp(PC)]);
    assert_eq!(l.group_slots()[&Group::Interp32], 1);
}

#[test]
fn flexible_interpolation_lets_modes_share_a_vec4() {
    let vs = [V::interp(var(0, 0), PC), V::interp(var(1, 0), LC)];
    let (_, flex) = pack_checked(&fs_pair(&vs), &PackOptions::default());
    assert_eq!(flex.map[&var(1, 0)], var(0, 1));
    // Without flexible interpolation each mode opens its own vec4.
    let (_, per_mode) = pack_checked(&fs_pair(&vs), &strict());
    assert_eq!(per_mode.map[&var(0, 0)], var(0, 0));
    assert_eq!(per_mode.map[&var(1, 0)], var(1, 0));
}

#[test]
fn flat_and_interpolated_never_share_a_vec4() {
    let p = fs_pair(&[V::flat(var(0, 0)), V::interp(var(0, 1), PC)]);
    let (out, l) = pack_checked(&p, &PackOptions::default());
    // Interpolated (fp32) comes first in group order, flat opens the next vec4.
    assert_eq!(l.map[&var(0, 1)], var(0, 0));
    assert_eq!(l.map[&var(0, 0)], var(1, 0));
    assert_eq!(loads_of(&out, var(1, 0)), vec![Read::Flat]);
}

#[test]
fn fp16_and_fp32_interpolation_never_share_and_fp16_pairs_in_one_component() {
    let p = fs_pair(&[
        V::interp(var(4, 0), PC),
        V::interp(var16(2, 1, Half::Lo), PC),
        V::interp(var16(9, 3, Half::Hi), PC),
    ]);
    let (_, l) = pack_checked(&p, &PackOptions::default());
    assert_eq!(l.map[&var(4, 0)], var(0, 0));
    assert_eq!(l.map[&var16(2, 1, Half::Lo)], var16(1, 0, Half::Lo));
    assert_eq!(l.map[&var16(9, 3, Half::Hi)], var16(1, 0, Half::Hi));
    assert_eq!(l.group_slots()[&Group::Interp16], 1);
    // Without 16-bit packing each fp16 value takes a component of its own.
    let (_, l) = pack_checked(&p, &Packer::new().pack_16bit(false).options().clone());
    assert_eq!(l.map[&var16(2, 1, Half::Lo)], var16(1, 0, Half::Lo));
    assert_eq!(l.map[&var16(9, 3, Half::Hi)], var16(1, 1, Half::Lo));
}

#[test]
fn flat_32_and_16_bit_share_a_vec4() {
    let p = fs_pair(&[
        V::flat(var16(5, 0, Half::Lo)),
        V::flat(var(6, 2)),
        V::flat(var16(1, 1, Half::Hi)),
    ]);
    let (_, l) = pack_checked(&p, &PackOptions::default());
    // Flat32 group first (x), then both 16-bit values pair up in y.
    assert_eq!(l.map[&var(6, 2)], var(0, 0));
    assert_eq!(l.map[&var16(1, 1, Half::Hi)], var16(0, 1, Half::Lo));
    assert_eq!(l.map[&var16(5, 0, Half::Lo)], var16(0, 1, Half::Hi));
    assert_eq!(l.vec4s.len(), 1);
}

#[test]
fn convergent_values_fill_interpolated_holes() {
    let p = fs_pair(&[
        V::interp(var(0, 0), PC),
        V::interp(var(0, 1), PC),
        V::interp(var(0, 2), PC),
        V::conv(var(5, 0), LC),
    ]);
    // Flexible: the convergent value takes the free w and keeps its own loads.
    let (out, l) = pack_checked(&p, &PackOptions::default());
    assert_eq!(l.map[&var(5, 0)], var(0, 3));
    assert_eq!(l.loads[&var(5, 0)], LoadRewrite::KeepInterp);
    assert_eq!(loads_of(&out, var(0, 3)), vec![Read::Interp(LC)]);
    // Strict modes: it takes the vec4's mode instead.
    let (out, l) = pack_checked(&p, &strict());
    assert_eq!(l.map[&var(5, 0)], var(0, 3));
    assert_eq!(l.loads[&var(5, 0)], LoadRewrite::Interp(PC));
    assert_eq!(loads_of(&out, var(0, 3)), vec![Read::Interp(PC)]);
    // Without convergent filling it is packed as flat, in a vec4 of its own.
    let (out, l) = pack_checked(&p, &Packer::new().convergent_fill(false).options().clone());
    assert_eq!(l.map[&var(5, 0)], var(1, 0));
    assert_eq!(loads_of(&out, var(1, 0)), vec![Read::Flat]);
}

#[test]
fn convergent_values_fill_flat_holes_and_leftovers_become_flat() {
    let mut vs: Vec<V> = (0..4).map(|c| V::interp(var(0, c), PC)).collect();
    vs.push(V::flat(var(1, 0)));
    vs.push(V::conv(var(2, 0), PC));
    vs.push(V::conv16(var16(3, 0, Half::Lo), PC));
    let (out, l) = pack_checked(&fs_pair(&vs), &PackOptions::default());
    // The interpolated vec4 is full; flat VAR1.x, convergent32 joins it in y, and the
    // fp16 convergent value (no fp16 interpolated vec4 exists) takes z's low half.
    assert_eq!(l.map[&var(1, 0)], var(1, 0));
    assert_eq!(l.map[&var(2, 0)], var(1, 1));
    assert_eq!(l.map[&var16(3, 0, Half::Lo)], var16(1, 2, Half::Lo));
    assert_eq!(l.loads[&var(2, 0)], LoadRewrite::Flat);
    assert_eq!(loads_of(&out, var(1, 1)), vec![Read::Flat]);
    assert_eq!(loads_of(&out, var16(1, 2, Half::Lo)), vec![Read::Flat]);
    assert_eq!(l.vec4s.len(), 2);
}

#[test]
fn fs_groups_follow_the_reference_order() {
    let vs = [
        V::flat16(var16(9, 0, Half::Lo)),
        V::interp16(var16(8, 0, Half::Lo), PC),
        V::conv(var(7, 0), PC),
        V::flat(var(6, 0)),
        V::interp(var(5, 0), PC),
    ];
    let (_, l) = pack_checked(
        &fs_pair(&vs),
        &Packer::new().convergent_fill(false).options().clone(),
    );
    // interp32 | flat32, convergent32 (as flat), flat16 | interp16 — the flat vec4 is
    // opened before the fp16 one and the 16-bit flat value fills it.
    assert_eq!(l.map[&var(5, 0)], var(0, 0));
    assert_eq!(l.map[&var(6, 0)], var(1, 0));
    assert_eq!(l.map[&var(7, 0)], var(1, 1));
    assert_eq!(l.map[&var16(8, 0, Half::Lo)], var16(2, 0, Half::Lo));
    assert_eq!(l.map[&var16(9, 0, Half::Lo)], var16(1, 2, Half::Lo));
    let groups: Vec<Group> = l.vec4s.iter().map(|v| v.group).collect();
    assert_eq!(
        groups,
        vec![Group::Interp32, Group::Flat32, Group::Interp16]
    );
}

#[test]
fn a_varying_read_both_flat_and_interpolated_gets_its_own_vec4() {
    let p = fs_pair(&[
        V::interp(var(0, 0), PC),
        V {
            slot: var(3, 0),
            reads: vec![Read::Flat, Read::Interp(PC)],
            conv: false,
        },
        V::flat(var(4, 0)),
    ]);
    let (_, l) = pack_checked(&p, &PackOptions::default());
    assert_eq!(l.map[&var(0, 0)], var(0, 0));
    assert_eq!(l.map[&var(3, 0)], var(1, 0));
    assert_eq!(l.map[&var(4, 0)], var(2, 0));
}

#[test]
fn patch_and_per_vertex_varyings_pack_apart() {
    let mut tcs = ShaderBuilder::new(Stage::TessCtrl);
    let id = tcs.system_value(SystemValue::InvocationId);
    let x = tcs.load_per_vertex(var(0, 0), id);
    tcs.store_per_vertex(var(5, 2), x, id);
    tcs.store(IoSlot::new(Slot::Patch(9), 1), x);
    tcs.store(IoSlot::new(Slot::Patch(3), 3), x);
    tcs.store(IoSlot::new(Slot::TessLevelOuter, 0), x);
    let mut tes = ShaderBuilder::new(Stage::TessEval);
    let k = tes.constant(varysat::ir::BitSize::B32, 2);
    let a = tes.load_per_vertex(var(5, 2), k);
    let b = tes.load_input(IoSlot::new(Slot::Patch(9), 1));
    let c = tes.load_input(IoSlot::new(Slot::Patch(3), 3));
    let s = tes.alu(AluOp::FAdd, &[a, b]);
    let s = tes.alu(AluOp::FAdd, &[s, c]);
    tes.store(IoSlot::new(Slot::Pos, 0), s);
    let p = Pipeline::new(tcs.finish(), tes.finish());
    let (_, l) = pack_checked(&p, &PackOptions::default());
    assert_eq!(l.map[&var(5, 2)], var(0, 0));
    assert_eq!(
        l.map[&IoSlot::new(Slot::Patch(3), 3)],
        IoSlot::new(Slot::Patch(0), 0)
    );
    assert_eq!(
        l.map[&IoSlot::new(Slot::Patch(9), 1)],
        IoSlot::new(Slot::Patch(0), 1)
    );
    // Tessellation levels keep their place (and TES does not read them: not a varying
    // of this pair, so they are not in the map).
    assert_eq!(l.count(|s| matches!(s, Slot::Patch(_))), 1);
    assert_eq!(l.count(|s| matches!(s, Slot::Var(_))), 1);
}

#[test]
fn colours_pack_among_themselves_with_channel_rotation() {
    let col = |n, c| IoSlot::new(Slot::Col(n), c);
    let bfc = |n, c| IoSlot::new(Slot::Bfc(n), c);
    let vs = [
        V::interp(var(3, 0), PC),
        V::interp(var(4, 0), PC),
        V::interp(col(1, 1), PC),
        V::interp(bfc(1, 1), PC),
        V::interp(col(0, 3), PC),
    ];
    let (_, l) = pack_checked(&fs_pair(&vs), &PackOptions::default());
    // VARs take VAR0.xy, so the first unused VAR channel is z: colours start at COL0.z.
    assert_eq!(l.map[&var(3, 0)], var(0, 0));
    assert_eq!(l.map[&col(0, 3)], col(0, 2));
    assert_eq!(l.map[&col(1, 1)], col(0, 3));
    // The back colour moves with its front colour.
    assert_eq!(l.map[&bfc(1, 1)], bfc(0, 3));
    let (_, l) = pack_checked(
        &fs_pair(&vs),
        &Packer::new().rotate_colors(false).options().clone(),
    );
    assert_eq!(l.map[&col(0, 3)], col(0, 0));
    assert_eq!(l.map[&col(1, 1)], col(0, 1));
    // Rotation wraps inside a colour vec4: 3 VAR channels used → w, x, y, z.
    let mut vs3 = vs.to_vec();
    vs3.push(V::interp(var(5, 0), PC));
    vs3.push(V::interp(col(1, 2), PC));
    let (_, l) = pack_checked(&fs_pair(&vs3), &PackOptions::default());
    assert_eq!(l.map[&col(0, 3)], col(0, 3));
    assert_eq!(l.map[&col(1, 1)], col(0, 0));
    assert_eq!(l.map[&col(1, 2)], col(0, 1));
}

/// A VS → FS pair whose VAR2..VAR3 `.x` form an indirectly indexed interpolated array.
fn array_pair(extra: &[V]) -> Pipeline {
    let base = fs_pair(extra);
    let (mut vs, mut fs) = (base.producer, base.consumer);
    let idx_vs = push_uniform(&mut vs);
    let val = push_uniform(&mut vs);
    push(
        &mut vs,
        InstKind::StoreOutput {
            slot: var(2, 0),
            value: val,
            indirect: Some(Indirect {
                index: idx_vs,
                len: 2,
            }),
            xfb: None,
            no_varying: false,
        },
        None,
    );
    let idx_fs = push_uniform(&mut fs);
    let r = fs.add_value("arr", varysat::ir::BitSize::B32);
    push(
        &mut fs,
        InstKind::LoadInterpolatedInput {
            slot: var(2, 0),
            mode: PC,
            operands: vec![],
            indirect: Some(Indirect {
                index: idx_fs,
                len: 2,
            }),
        },
        Some(r),
    );
    push(
        &mut fs,
        InstKind::StoreOutput {
            slot: IoSlot::new(Slot::Data(7), 3),
            value: r,
            indirect: None,
            xfb: None,
            no_varying: false,
        },
        None,
    );
    Pipeline::new(vs, fs).with_uniforms(4)
}

fn push(s: &mut varysat::ir::Shader, kind: InstKind, result: Option<varysat::ir::Value>) {
    s.body.push(varysat::ir::Stmt::Inst(varysat::ir::Inst {
        result,
        kind,
        loc: None,
    }));
}

fn push_uniform(s: &mut varysat::ir::Shader) -> varysat::ir::Value {
    let n = s.values.len();
    let v = s.add_value(format!("u{n}"), varysat::ir::BitSize::B32);
    push(
        s,
        InstKind::LoadUniform {
            index: 0,
            half: varysat::ir::Half::Full,
        },
        Some(v),
    );
    v
}

#[test]
fn indirect_arrays_keep_their_layout_and_their_holes_are_filled() {
    let vs = [
        V::interp(var(9, 0), PC),
        V::interp(var(9, 1), PC),
        V::interp(var(9, 2), PC),
        V::interp(var(9, 3), PC),
        V::flat(var(10, 0)),
    ];
    let (out, l) = pack_checked(&array_pair(&vs), &PackOptions::default());
    // The array's holes (VAR2.yzw, VAR3.yzw) are interpolated vec4s: the interpolated
    // values fill them first; the flat one cannot join and opens the lowest free VAR0.
    let mut array_reads = 0;
    out.consumer.for_each_inst(|i| {
        if let InstKind::LoadInterpolatedInput {
            slot,
            indirect: Some(_),
            ..
        } = i.kind
        {
            array_reads += 1;
            assert_eq!(slot, var(2, 0));
        }
    });
    assert_eq!(array_reads, 1);
    assert_eq!(l.map[&var(9, 0)], var(2, 1));
    assert_eq!(l.map[&var(9, 2)], var(2, 3));
    assert_eq!(l.map[&var(9, 3)], var(3, 1));
    assert_eq!(l.map[&var(10, 0)], var(0, 0));
    assert_eq!(
        l.vec4s
            .iter()
            .map(|v| (v.slot, v.group))
            .collect::<Vec<_>>(),
        vec![
            (Slot::Var(0), Group::Flat32),
            (Slot::Var(2), Group::Fixed),
            (Slot::Var(3), Group::Fixed)
        ]
    );
    // Nine interpolated values: six fill the holes, three open VAR0.
    let more: Vec<V> = (0..9)
        .map(|i| V::interp(var(12 + i / 4, i % 4), PC))
        .collect();
    let (_, l) = pack_checked(&array_pair(&more), &PackOptions::default());
    assert_eq!(l.map[&var(13, 1)], var(3, 3));
    assert_eq!(l.map[&var(13, 2)], var(0, 0));
    assert_eq!(l.map[&var(14, 0)], var(0, 2));
    assert_eq!(l.vec4s.len(), 3);
}

#[test]
fn tex_slots_are_not_compacted() {
    let tex = IoSlot::new(Slot::Tex(3), 1);
    let p = fs_pair(&[V::interp(tex, PC), V::interp(var(6, 2), PC)]);
    let (out, l) = pack_checked(&p, &PackOptions::default());
    assert_eq!(l.map[&tex], tex);
    assert_eq!(l.map[&var(6, 2)], var(0, 0));
    assert_eq!(loads_of(&out, tex), vec![Read::Interp(PC)]);
    assert_eq!(l.consumer_slots, 2);
}

#[test]
fn xfb_only_outputs_go_last_and_keep_their_capture() {
    let mut p = fs_pair(&[V::interp(var(4, 1), PC)]);
    let xfb = Xfb {
        buffer: 1,
        offset: 8,
    };
    let xfb16 = Xfb {
        buffer: 0,
        offset: 4,
    };
    let v = push_uniform(&mut p.producer);
    let h = p.producer.add_value("h", varysat::ir::BitSize::B16);
    push(
        &mut p.producer,
        InstKind::Alu {
            op: AluOp::F2F16,
            exact: false,
            srcs: vec![v],
        },
        Some(h),
    );
    for (slot, val, x) in [(var(0, 0), v, xfb), (var16(7, 2, Half::Hi), h, xfb16)] {
        push(
            &mut p.producer,
            InstKind::StoreOutput {
                slot,
                value: val,
                indirect: None,
                xfb: Some(x),
                no_varying: true,
            },
            None,
        );
    }
    let p = p.with_uniforms(1);
    let (out, l) = pack_checked(&p, &PackOptions::default());
    assert_eq!(l.map[&var(4, 1)], var(0, 0));
    // xfb-only after every FS-visible vec4; 32-bit then 16-bit in the same vec4. The
    // captured 16-bit value keeps its high half: xfb records a high half 2 bytes on.
    assert_eq!(l.map[&var(0, 0)], var(1, 0));
    assert_eq!(l.map[&var16(7, 2, Half::Hi)], var16(1, 1, Half::Hi));
    let mut stores = vec![];
    out.producer.for_each_inst(|i| {
        if let InstKind::StoreOutput {
            slot,
            xfb: Some(x),
            no_varying,
            ..
        } = &i.kind
        {
            stores.push((*slot, *x, *no_varying));
        }
    });
    assert_eq!(
        stores,
        vec![(var(1, 0), xfb, true), (var16(1, 1, Half::Hi), xfb16, true)]
    );
    assert_eq!(l.group_slots()[&Group::XfbOnly32], 1);
    // The FS reads one vec4: the xfb-only one is not an FS input.
    assert_eq!(l.consumer_slots, 1);
}

#[test]
fn more_than_32_fs_slots_is_a_limit_error() {
    // 124 interpolated values fill VAR0..VAR30, 4 flat ones VAR31, TEX0 makes 33.
    let mut vs: Vec<V> = (0..124).map(|i| V::interp(var(i / 4, i % 4), PC)).collect();
    vs.extend((0..4).map(|c| V::flat(var(31, c))));
    let ok = fs_pair(&vs);
    let (_, l) = pack_checked(&ok, &PackOptions::default());
    assert_eq!(l.consumer_slots, 32);
    vs.push(V::interp(IoSlot::new(Slot::Tex(0), 0), PC));
    let err = pack(&fs_pair(&vs), &PackOptions::default()).unwrap_err();
    assert!(
        matches!(&err, Error::Limit(m) if m.contains("33 vec4 slots")),
        "{err}"
    );
}

#[test]
fn running_out_of_var_slots_is_a_limit_error() {
    // 125 interpolated values need 32 vec4s; the flat one would need VAR32.
    let mut vs: Vec<V> = (0..125)
        .map(|i| V::interp(var((i / 4) as u8, (i % 4) as u8), PC))
        .collect();
    vs[124] = V::interp(IoSlot::new(Slot::Fogc, 0), PC);
    // (Not PNTC: into an FS the rasterizer supplies it, so it never packs.)
    vs.push(V::flat(var(31, 0)));
    let err = pack(&fs_pair(&vs), &PackOptions::default()).unwrap_err();
    assert!(
        matches!(&err, Error::Limit(m) if m.contains("VARn")),
        "{err}"
    );
}

#[test]
fn a_read_back_only_patch_output_fills_a_hole_of_the_last_vec4() {
    // 125 live patch components fill PATCH0..PATCH30 and PATCH31.x; an output only
    // read back by the TCS packs flat like them (into a TES there is no tail group),
    // so it takes PATCH31.y instead of a 33rd vec4, which does not exist.
    let mut tcs = ShaderBuilder::new(Stage::TessCtrl);
    let mut tes = ShaderBuilder::new(Stage::TessEval);
    let u = tcs.uniform(0);
    let mut acc = tes.f32(0.0);
    for i in 0..125u8 {
        let s = IoSlot::new(Slot::Patch(i / 4), i % 4);
        tcs.store(s, u);
        let x = tes.load_input(s);
        acc = tes.alu(AluOp::FAdd, &[acc, x]);
    }
    tes.store(IoSlot::new(Slot::Pos, 0), acc);
    let tail = IoSlot::new(Slot::Patch(31), 3);
    tcs.store(tail, u);
    let _ = tcs.load_output(tail, None);
    let p = Pipeline::new(tcs.finish(), tes.finish()).with_uniforms(1);
    let (_, l) = pack_checked(&p, &PackOptions::default());
    assert_eq!(l.map[&tail], IoSlot::new(Slot::Patch(31), 1));
}

#[test]
fn non_fs_varyings_never_go_to_pos() {
    let mut vs = ShaderBuilder::new(Stage::Vertex);
    let a = vs.load_input(IoSlot::new(Slot::Attr(0), 0));
    vs.store(IoSlot::new(Slot::Pos, 1), a);
    vs.store(var(3, 3), a);
    let mut tcs = ShaderBuilder::new(Stage::TessCtrl);
    let id = tcs.system_value(SystemValue::InvocationId);
    let p0 = tcs.load_per_vertex(IoSlot::new(Slot::Pos, 1), id);
    let v0 = tcs.load_per_vertex(var(3, 3), id);
    let s = tcs.alu(AluOp::FAdd, &[p0, v0]);
    tcs.store_per_vertex(var(0, 0), s, id);
    let (out, l) = pack_checked(
        &Pipeline::new(vs.finish(), tcs.finish()),
        &PackOptions::default(),
    );
    // Before a TCS, POS is plain data: it packs into VARn like VAR3.w, and no
    // varying lands in POS.
    assert_eq!(l.map[&IoSlot::new(Slot::Pos, 1)], var(0, 0));
    assert_eq!(l.map[&var(3, 3)], var(0, 1));
    assert_eq!(loads_of(&out, var(0, 0)), vec![Read::Flat]);
    assert_eq!(loads_of(&out, var(0, 1)), vec![Read::Flat]);
}

#[test]
fn primitive_id_is_a_varn_between_gs_and_fs_only() {
    let pid = IoSlot::new(Slot::PrimitiveId, 0);
    let build = |producer: Stage| {
        let mut g = ShaderBuilder::new(producer);
        let id = g.system_value(SystemValue::PrimitiveId);
        g.store(pid, id);
        if producer == Stage::Geometry {
            g.effect(InstKind::EmitVertex);
        }
        let mut fs = ShaderBuilder::new(Stage::Fragment);
        let x = fs.load_input(pid);
        fs.store(data_out(0), x);
        Pipeline::new(g.finish(), fs.finish())
    };
    let (_, l) = pack_checked(&build(Stage::Geometry), &PackOptions::default());
    assert_eq!(l.map[&pid], var(0, 0));
    let (_, l) = pack_checked(&build(Stage::TessEval), &PackOptions::default());
    assert_eq!(l.map[&pid], pid);
}

#[test]
fn tcs_read_backs_follow_their_outputs() {
    let mut tcs = ShaderBuilder::new(Stage::TessCtrl);
    let id = tcs.system_value(SystemValue::InvocationId);
    let x = tcs.load_per_vertex(var(0, 0), id);
    tcs.store_per_vertex(var(6, 1), x, id);
    tcs.store_per_vertex(var(8, 2), x, id);
    let back = tcs.load_output(var(6, 1), Some(id));
    let only_back = tcs.load_output(var(8, 2), Some(id));
    let never = tcs.load_output(var(9, 0), Some(id));
    let s = tcs.alu(AluOp::FAdd, &[back, only_back]);
    let s = tcs.alu(AluOp::FAdd, &[s, never]);
    tcs.store(IoSlot::new(Slot::Patch(0), 0), s);
    let mut tes = ShaderBuilder::new(Stage::TessEval);
    let k = tes.constant(varysat::ir::BitSize::B32, 0);
    let a = tes.load_per_vertex(var(6, 1), k);
    let b = tes.load_input(IoSlot::new(Slot::Patch(0), 0));
    let s = tes.alu(AluOp::FAdd, &[a, b]);
    tes.store(IoSlot::new(Slot::Pos, 0), s);
    let (out, l) = pack_checked(
        &Pipeline::new(tcs.finish(), tes.finish()),
        &PackOptions::default(),
    );
    // VAR6.y is read by the TES: VAR0.x. VAR8.z is only read back: into a TES every
    // value packs flat (reference/000 §7 has no tail group there), so VAR0.y.
    assert_eq!(l.map[&var(6, 1)], var(0, 0));
    assert_eq!(l.map[&var(8, 2)], var(0, 1));
    assert_eq!(l.undefined, BTreeSet::from([var(9, 0)]));
    let mut backs = vec![];
    out.producer.for_each_inst(|i| match &i.kind {
        InstKind::LoadOutput { slot, .. } => backs.push(Some(*slot)),
        InstKind::Undef => backs.push(None),
        _ => {}
    });
    assert_eq!(backs, vec![Some(var(0, 0)), Some(var(0, 1)), None]);
}

#[test]
fn dead_outputs_are_removed_and_unstored_inputs_become_undef() {
    let mut p = fs_pair(&[V::interp(var(2, 0), PC)]);
    let v = push_uniform(&mut p.producer);
    push(
        &mut p.producer,
        InstKind::StoreOutput {
            slot: var(0, 0),
            value: v,
            indirect: None,
            xfb: None,
            no_varying: false,
        },
        None,
    );
    let r = p.consumer.add_value("ghost", varysat::ir::BitSize::B32);
    push(
        &mut p.consumer,
        InstKind::LoadInput {
            slot: var(0, 1),
            indirect: None,
        },
        Some(r),
    );
    let (out, l) = pack_checked(&p.with_uniforms(1), &PackOptions::default());
    assert_eq!(l.removed, BTreeSet::from([var(0, 0)]));
    assert_eq!(l.undefined, BTreeSet::from([var(0, 1)]));
    assert_eq!(l.map[&var(2, 0)], var(0, 0));
    // Only the live store remains at VAR0.x, and the ghost load is undef now.
    let mut stores = 0;
    out.producer.for_each_inst(|i| {
        stores +=
            matches!(i.kind, InstKind::StoreOutput { slot, .. } if slot.slot == Slot::Var(0)) as i32
    });
    assert_eq!(stores, 1);
    assert_eq!(loads_of(&out, var(0, 1)), vec![]);
}

#[test]
fn gs_outputs_are_never_promoted_even_when_claimed_convergent() {
    let mut gs = ShaderBuilder::new(Stage::Geometry);
    let u = gs.uniform(0);
    gs.store(var(0, 0), u);
    gs.effect(InstKind::EmitVertex);
    let mut fs = ShaderBuilder::new(Stage::Fragment);
    let x = fs.load_interpolated(var(0, 0), PC);
    fs.store(data_out(0), x);
    let p = Pipeline::new(gs.finish(), fs.finish()).with_uniforms(1);
    let opts = Packer::new()
        .convergent(BTreeSet::from([var(0, 0)]))
        .options()
        .clone();
    let (out, l) = pack_checked(&p, &opts);
    assert!(l.loads.is_empty());
    assert_eq!(loads_of(&out, var(0, 0)), vec![Read::Interp(PC)]);
}

#[test]
fn malformed_pairs_do_not_panic() {
    // Component 9, a dangling value, an indirect array running off VAR31 and a
    // pixel-shader-only load in a TES: the packer reports them instead of panicking.
    let mut vs = ShaderBuilder::new(Stage::Vertex);
    let a = vs.load_input(IoSlot::new(Slot::Attr(0), 0));
    vs.store(IoSlot::var(0, 9), varysat::ir::Value(999));
    vs.store_ex(
        var(30, 1),
        a,
        Some(Indirect {
            index: varysat::ir::Value(12345),
            len: 200,
        }),
        None,
    );
    let mut fs = ShaderBuilder::new(Stage::Fragment);
    let x = fs.load_interpolated(IoSlot::var(0, 9), PC);
    let y = fs.load_input(var(31, 1));
    let s = fs.alu(AluOp::FAdd, &[x, y]);
    fs.store(data_out(0), s);
    let p = Pipeline::new(vs.finish(), fs.finish());
    for o in [PackOptions::default(), strict()] {
        assert!(matches!(pack(&p, &o), Err(Error::Invalid(_))));
    }
    let mut tes = ShaderBuilder::new(Stage::TessEval);
    let z = tes.load_interpolated(var(2, 2), PC);
    tes.store(IoSlot::new(Slot::Pos, 0), z);
    let mut vs = ShaderBuilder::new(Stage::Vertex);
    let a = vs.load_input(IoSlot::new(Slot::Attr(0), 0));
    vs.store(var(2, 2), a);
    let r = pack(
        &Pipeline::new(vs.finish(), tes.finish()),
        &PackOptions::default(),
    );
    assert!(matches!(r, Err(Error::Invalid(_))));
}
