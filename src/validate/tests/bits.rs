//! Bit sizes of ALU ops, recorded results, conditions, phis, stores and index operands.

use super::*;
use crate::ir::{Half, Indirect, InstKind, Interp, InterpLoc};

fn fs_pipeline(b: ShaderBuilder) -> Pipeline {
    pair(vs(), b).with_uniforms(1).with_ubo(0, 16)
}

fn half16(b: &mut ShaderBuilder, name: &str) -> Value {
    let x = b.load_interpolated(
        IoSlot::half(Slot::Var(1), 0, Half::Lo),
        InterpMode::PERSP_CENTER,
    );
    named(b, x, name)
}

#[test]
fn alu_sources_share_one_size() {
    let mut b = fs();
    let h = half16(&mut b, "h");
    let f = b.f32(1.0);
    b.alu(AluOp::FAdd, &[f, h]);
    assert_one(
        &fs_pipeline(b),
        "`fadd` sources must have one bit size, found 32 and 16",
    );
}

#[test]
fn bcsel_condition_is_one_bit() {
    let mut b = fs();
    let f = b.f32(1.0);
    b.alu(AluOp::BCsel, &[f, f, f]);
    assert_one(
        &fs_pipeline(b),
        "`bcsel` condition must be 1-bit, found 32-bit",
    );
}

#[test]
fn recorded_size_must_match_the_produced_size() {
    let mut b = fs();
    let f = b.f32(1.0);
    let s = b.alu(AluOp::FAdd, &[f, f]);
    named(&mut b, s, "s");
    let mut sh = b.finish();
    sh.values[s.index()].bits = BitSize::B16;
    assert_one(
        &Pipeline::new(vs().finish(), sh),
        "value `%s` is recorded as 16-bit but `fadd` produces 32-bit",
    );

    let mut b = fs();
    let ff = b.system_value(SystemValue::FrontFace);
    named(&mut b, ff, "ff");
    let mut sh = b.finish();
    sh.values[ff.index()].bits = BitSize::B32;
    assert_one(
        &Pipeline::new(vs().finish(), sh),
        "value `%ff` is recorded as 32-bit but `load_system_value` produces 1-bit",
    );
}

#[test]
fn constants_fit_their_size() {
    let mut b = fs();
    let k = b.inst(InstKind::Const(0x1_0000), BitSize::B16);
    named(&mut b, k, "k");
    assert_one(
        &fs_pipeline(b),
        "constant `%k` = 0x10000 does not fit in 16 bits",
    );
    let mut b = fs();
    b.inst(InstKind::Const(0xffff), BitSize::B16);
    b.inst(InstKind::Const(1), BitSize::B1);
    assert_valid(&fs_pipeline(b));
}

#[test]
fn if_condition_is_one_bit() {
    let mut b = fs();
    let u = b.uniform(0);
    named(&mut b, u, "u");
    b.if_else(u, |_| vec![], |_| vec![]);
    assert_one(
        &fs_pipeline(b),
        "`if` condition `%u` must be 1-bit, found 32-bit",
    );
}

#[test]
fn phi_operands_have_the_phi_size() {
    let mut b = fs();
    let c = b.system_value(SystemValue::FrontFace);
    let mut h = None;
    let r = b.if_else(
        c,
        |b| vec![b.f32(1.0)],
        |b| {
            h = Some(half16(b, "h"));
            vec![h.unwrap_or(Value(0))]
        },
    );
    named(&mut b, r[0], "r");
    assert_one(
        &fs_pipeline(b),
        "phi `%r` is 32-bit but its else-value `%h` is 16-bit",
    );
}

#[test]
fn loop_phi_sizes() {
    // The init is 32-bit, the continue argument 16-bit.
    let mut b = fs();
    let zero = b.f32(0.0);
    let phis = b.loop_(&[zero], |b, _| {
        let h = half16(b, "h");
        b.continue_(&[h]);
    });
    named(&mut b, phis[0], "i");
    assert_one(
        &fs_pipeline(b),
        "`continue` value `%h` is 16-bit but loop phi `%i` is 32-bit",
    );

    // The header phi recorded as 16-bit while its init is 32-bit.
    let mut b = fs();
    let zero = b.f32(0.0);
    named(&mut b, zero, "zero");
    let phis = b.loop_(&[zero], |b, _| b.break_());
    named(&mut b, phis[0], "i");
    let mut s = b.finish();
    s.values[phis[0].index()].bits = BitSize::B16;
    assert_one(
        &Pipeline::new(vs().finish(), s),
        "phi `%i` is 16-bit but its initial value `%zero` is 32-bit",
    );
}

#[test]
fn stores_fill_the_addressed_component_or_half() {
    let mut b = vs();
    let h = b.inst(InstKind::Undef, BitSize::B16);
    named(&mut b, h, "h");
    b.store(IoSlot::var(0, 1), h);
    assert_one(
        &pair(b, fs()),
        "16-bit value `%h` stored to full component `VAR0.y`; use `VAR0.y.lo` or `.hi`",
    );

    let mut b = vs();
    let a = Value(0); // `%a`, the 32-bit attribute
    b.store(IoSlot::half(Slot::Var(0), 1, Half::Hi), a);
    assert_one(
        &pair(b, fs()),
        "32-bit value `%a` stored to 16-bit half `VAR0.y.hi`",
    );

    let mut b = vs();
    let t = b.inst(InstKind::Const(1), BitSize::B1);
    named(&mut b, t, "t");
    b.store(IoSlot::var(0, 1), t);
    assert_one(
        &pair(b, fs()),
        "1-bit value `%t` cannot be stored; convert it first (e.g. with `b2i32`)",
    );

    let mut b = vs();
    let h = b.inst(InstKind::Undef, BitSize::B16);
    b.store(IoSlot::half(Slot::Var(0), 1, Half::Lo), h);
    assert_valid(&pair(b, fs()));
}

#[test]
fn vertex_indices_are_32_bit() {
    let mut b = gs();
    let k = b.inst(InstKind::Const(0), BitSize::B16);
    named(&mut b, k, "k");
    b.load_per_vertex(IoSlot::var(0, 1), k);
    assert_one(
        &pair(vs(), b),
        "vertex index `%k` must be 32-bit, found 16-bit",
    );
}

#[test]
fn indirect_index_ubo_offset_and_ssbo_address_are_32_bit() {
    let mut b = vs();
    let k = b.inst(InstKind::Const(0), BitSize::B16);
    named(&mut b, k, "k");
    let a = Value(0);
    let ind = Some(Indirect { index: k, len: 2 });
    b.store_ex(IoSlot::var(4, 0), a, ind, None);
    assert_one(
        &pair(b, fs()),
        "indirect index `%k` must be 32-bit, found 16-bit",
    );

    let mut b = fs();
    let k = b.inst(InstKind::Const(0), BitSize::B16);
    named(&mut b, k, "k");
    b.inst(
        InstKind::LoadUbo {
            block: 0,
            offset: k,
            half: crate::ir::Half::Full,
        },
        BitSize::B32,
    );
    assert_one(
        &fs_pipeline(b),
        "UBO offset `%k` must be 32-bit, found 16-bit",
    );

    let mut b = fs();
    let k = b.inst(InstKind::Const(0), BitSize::B1);
    named(&mut b, k, "k");
    b.inst(InstKind::SsboLoad { buffer: 0, addr: k }, BitSize::B32);
    assert_one(
        &fs_pipeline(b),
        "SSBO address `%k` must be 32-bit, found 1-bit",
    );
}

#[test]
fn interpolation_operands() {
    let at = |loc| InterpMode {
        interp: Interp::Persp,
        loc,
    };
    let mut b = fs();
    let h = b.inst(InstKind::Undef, BitSize::B16);
    named(&mut b, h, "h");
    let f = b.f32(0.25);
    b.load_interpolated_at(IoSlot::var(0, 1), at(InterpLoc::AtOffset), &[f, h]);
    assert_one(
        &fs_pipeline(b),
        "offset operand `%h` must be a 32-bit float, found 16-bit",
    );

    let mut b = fs();
    let h = b.inst(InstKind::Undef, BitSize::B16);
    named(&mut b, h, "h");
    b.load_interpolated_at(IoSlot::var(0, 1), at(InterpLoc::AtSample), &[h]);
    assert_one(
        &fs_pipeline(b),
        "sample index `%h` must be 32-bit, found 16-bit",
    );

    let mut b = fs();
    let s = b.system_value(SystemValue::SampleId);
    b.load_interpolated_at(IoSlot::var(0, 1), at(InterpLoc::AtSample), &[s]);
    assert_valid(&fs_pipeline(b));
}

#[test]
fn texture_coordinates_are_not_booleans() {
    let mut b = fs();
    let c = b.system_value(SystemValue::FrontFace);
    named(&mut b, c, "c");
    b.inst(
        InstKind::Texture {
            sampler: 0,
            comp: 0,
            coords: vec![c],
        },
        BitSize::B32,
    );
    assert_one(
        &fs_pipeline(b),
        "texture coordinate `%c` must be 16- or 32-bit, found 1-bit",
    );
}
