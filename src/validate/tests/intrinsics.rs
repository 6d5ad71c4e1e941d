//! Stage legality of intrinsics, system values, interpolation operand counts,
//! uniform/UBO ranges, constant vertex indices, xfb and the GS emit bound.

use super::*;
use crate::ir::{InstKind, Interp, InterpLoc, Primitive, StageInfo, Xfb};

fn k32(b: &mut ShaderBuilder, v: i32) -> Value {
    b.constant(BitSize::B32, v as u32)
}

#[test]
fn intrinsics_are_legal_only_in_their_stages() {
    let mut b = vs();
    b.load_interpolated(IoSlot::var(0, 1), InterpMode::PERSP_CENTER);
    assert_one(
        &pair(b, fs()),
        "`load_interpolated_input` is only legal in a fragment shader, not in vs",
    );

    let mut b = fs();
    let k = k32(&mut b, 0);
    b.load_per_vertex(IoSlot::var(0, 1), k);
    assert_one(
        &pair(vs(), b),
        "`load_per_vertex_input` is only legal in a tcs, tes or gs shader, not in fs",
    );

    let mut b = gs();
    b.load_output(IoSlot::var(0, 1), None);
    assert_one(
        &pair(vs(), b),
        "`load_output` is only legal in a tessellation control shader, not in gs",
    );

    let mut b = tes();
    let k = k32(&mut b, 0);
    let f = b.f32(1.0);
    b.store_per_vertex(IoSlot::var(1, 0), f, k);
    assert_one(
        &pair(vs(), b),
        "`store_per_vertex_output` is only legal in a tessellation control shader, not in tes",
    );

    let mut b = gs();
    b.load_input(IoSlot::var(0, 0));
    assert_one(
        &pair(vs(), b),
        "`load_input` is only legal in a vs, tes or fs shader, not in gs",
    );

    let cases = [
        (
            Stage::Fragment,
            InstKind::EmitVertex,
            "`emit_vertex` is only legal in a geometry shader, not in fs",
        ),
        (
            Stage::Fragment,
            InstKind::EndPrimitive,
            "`end_primitive` is only legal in a geometry shader, not in fs",
        ),
        (
            Stage::Fragment,
            InstKind::Barrier,
            "`barrier` is only legal in a tessellation control shader, not in fs",
        ),
        (
            Stage::Vertex,
            InstKind::Discard,
            "`discard` is only legal in a fragment shader, not in vs",
        ),
    ];
    for (stage, kind, msg) in cases {
        let p = if stage == Stage::Vertex {
            let mut b = vs();
            b.effect(kind);
            pair(b, fs())
        } else {
            let mut b = fs();
            b.effect(kind);
            pair(vs(), b)
        };
        assert_one(&p, msg);
    }
    let mut b = tcs();
    b.effect(InstKind::Barrier);
    assert_valid(&pair(vs(), b));
}

#[test]
fn system_values_follow_their_stage() {
    let mut b = vs();
    b.system_value(SystemValue::FragCoordX);
    assert_one(
        &pair(b, fs()),
        "system value `frag_coord_x` is not available in vs",
    );
    let mut b = fs();
    b.system_value(SystemValue::InvocationId);
    assert_one(
        &pair(vs(), b),
        "system value `invocation_id` is not available in fs",
    );
}

#[test]
fn interpolation_operand_counts() {
    let mode = |loc| InterpMode {
        interp: Interp::Linear,
        loc,
    };
    let mut b = fs();
    let f = b.f32(0.5);
    b.load_interpolated_at(IoSlot::var(0, 1), mode(InterpLoc::AtOffset), &[f]);
    assert_one(
        &pair(vs(), b),
        "`at_offset` interpolation takes 2 operands, found 1",
    );
    let mut b = fs();
    let f = b.f32(0.5);
    b.load_interpolated_at(IoSlot::var(0, 1), mode(InterpLoc::Centroid), &[f]);
    assert_one(
        &pair(vs(), b),
        "`centroid` interpolation takes 0 operands, found 1",
    );
}

#[test]
fn uniform_index_in_range() {
    let mut b = fs();
    b.uniform(4);
    assert_one(
        &pair(vs(), b).with_uniforms(4),
        "uniform word 4 is out of range; the pair declares 4 uniform words",
    );
    let mut b = fs();
    b.uniform(3);
    assert_valid(&pair(vs(), b).with_uniforms(4));
}

#[test]
fn ubo_blocks_and_constant_offsets() {
    let with = |offset: u32, block: u32| {
        let mut b = fs();
        b.ubo(block, offset);
        pair(vs(), b).with_ubo(0, 16)
    };
    assert_one(
        &with(0, 1),
        "UBO block 1 is not declared; add `(ubo 1 SIZE)`",
    );
    assert_one(&with(6, 0), "UBO offset 6 is not a multiple of 4");
    assert_one(
        &with(16, 0),
        "UBO offset 16 is out of range; block 0 has 16 bytes",
    );
    assert_valid(&with(12, 0));
    // A dynamic offset is checked at run time, not here.
    let mut b = fs();
    let off = b.uniform(0);
    b.inst(
        InstKind::LoadUbo {
            block: 0,
            offset: off,
            half: crate::ir::Half::Full,
        },
        BitSize::B32,
    );
    assert_valid(&pair(vs(), b).with_ubo(0, 16).with_uniforms(1));
}

#[test]
fn constant_vertex_indices_in_range() {
    let mut b = tcs();
    let k = k32(&mut b, 3);
    b.load_per_vertex(IoSlot::var(0, 1), k);
    assert_one(
        &pair(vs(), b),
        "vertex index 3 is out of range; the tcs input patch has 3 vertices",
    );

    let mut b2 = ShaderBuilder::new(Stage::Geometry);
    b2.info(StageInfo::Geometry {
        input: Primitive::Lines,
        output: Primitive::Points,
        max_vertices: 3,
        invocations: 1,
    });
    let k = k32(&mut b2, 2);
    b2.load_per_vertex(IoSlot::var(0, 0), k);
    assert_one(
        &pair(vs(), b2),
        "vertex index 2 is out of range; the gs input primitive has 2 vertices",
    );

    let mut b = tes();
    let k = k32(&mut b, -1);
    b.load_per_vertex(IoSlot::var(0, 1), k);
    assert_one(
        &pair(vs(), b),
        "vertex index -1 is out of range; the tes input patch has 3 vertices",
    );

    let mut b = tcs();
    let k = k32(&mut b, 3);
    let f = b.f32(1.0);
    b.store_per_vertex(IoSlot::var(1, 0), f, k);
    assert_one(
        &pair(vs(), b),
        "output vertex index 3 is out of range; the tcs output patch has 3 vertices",
    );

    let mut b = tcs();
    let k = k32(&mut b, 2);
    b.load_output(IoSlot::var(0, 0), Some(k));
    assert_valid(&pair(vs(), b));
}

#[test]
fn xfb_buffers_offsets_and_stages() {
    let store = |b: &mut ShaderBuilder, buffer, offset| {
        let v = b.f32(1.0);
        b.store_ex(IoSlot::var(2, 0), v, None, Some(Xfb { buffer, offset }));
    };
    let mut b = vs();
    store(&mut b, 4, 0);
    assert_one(
        &pair(b, fs()),
        "xfb buffer 4 is out of range; buffers are 0-3",
    );
    let mut b = vs();
    store(&mut b, 0, 6);
    assert_one(&pair(b, fs()), "xfb offset 6 is not a multiple of 4");
    let mut b = vs();
    store(&mut b, 3, 12);
    assert_valid(&pair(b, fs()));

    // A GS consumer's stores are not captured here: only the producer's are.
    let mut b = gs();
    store(&mut b, 0, 0);
    assert_one(
        &pair(vs(), b),
        "xfb capture is only legal on stores of a vs, tes or gs producer",
    );
    let mut b = tes();
    store(&mut b, 0, 0);
    assert_valid(&pair(b, gs()));
}

#[test]
fn gs_emits_outside_loops_respect_max_vertices() {
    // The base GS emits 3 vertices; a fourth on the straight path is too many.
    let mut b = gs();
    b.effect(InstKind::EmitVertex);
    assert_one(
        &pair(vs(), b),
        "`emit_vertex` number 4 on this path exceeds `max_vertices` 3",
    );

    // One emit in each branch: 4 statements, but only 3 on any path.
    let mut b = ShaderBuilder::new(Stage::Geometry);
    let c = b.system_value(SystemValue::InvocationId);
    let zero = k32(&mut b, 0);
    let c = b.alu(AluOp::IEq, &[c, zero]);
    b.effect(InstKind::EmitVertex);
    b.effect(InstKind::EmitVertex);
    let emit = |b: &mut ShaderBuilder| {
        b.effect(InstKind::EmitVertex);
        vec![]
    };
    b.if_else(c, emit, emit);
    assert_valid(&pair(vs(), b));

    // Emits inside a loop depend on its trip count and are not counted.
    let mut b = gs();
    b.loop_(&[], |b, _| {
        b.effect(InstKind::EmitVertex);
        b.break_();
    });
    assert_valid(&pair(vs(), b));
}
