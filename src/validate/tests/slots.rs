//! Which slots each stage may read and write, component ranges and indirect arrays.

use super::*;
use crate::ir::{Indirect, Xfb};

#[test]
fn vs_inputs_are_attributes_only() {
    let mut b = vs();
    b.load_input(IoSlot::var(0, 0));
    assert_one(
        &pair(b, fs()),
        "vs inputs must be vertex attributes `ATTRn`, found `VAR0.x`",
    );
}

#[test]
fn attributes_appear_nowhere_else() {
    let mut b = fs();
    b.load_input(IoSlot::new(Slot::Attr(1), 0));
    assert_one(
        &pair(vs(), b),
        "`ATTR1.x` is a vertex attribute, only readable with `load_input` in vs",
    );
    let mut b = vs();
    b.store(IoSlot::new(Slot::Attr(0), 0), Value(0));
    assert_one(
        &pair(b, fs()),
        "`ATTR0.x` is a vertex attribute, only readable with `load_input` in vs",
    );
}

#[test]
fn fragment_results_only_leave_the_fs() {
    let mut b = fs();
    b.store(IoSlot::var(1, 0), Value(0));
    assert_one(
        &pair(vs(), b),
        "fs outputs must be `DATAn`, `DEPTH` or `SAMPLE_MASK`, found `VAR1.x`",
    );
    let mut b = vs();
    b.store(IoSlot::new(Slot::Depth, 0), Value(0));
    assert_one(
        &pair(b, fs()),
        "`DEPTH.x` is a fragment shader output, only writable with `store_output` in fs",
    );
    let mut b = fs();
    b.load_input(IoSlot::new(Slot::Data(0), 0));
    assert_one(
        &pair(vs(), b),
        "`DATA0.x` is a fragment shader output, only writable with `store_output` in fs",
    );
    let mut b = fs();
    b.store(IoSlot::new(Slot::SampleMask, 0), Value(0));
    assert_valid(&pair(vs(), b));
}

#[test]
fn tcs_patch_and_per_vertex_outputs() {
    let mut b = tcs();
    let f = b.f32(1.0);
    b.store(IoSlot::var(1, 0), f);
    assert_one(
        &pair(vs(), b),
        "tcs `store_output` writes patch outputs (`PATCHn`, `TESS_LEVEL_*`), found `VAR1.x`; use `store_per_vertex_output`",
    );

    let mut b = tcs();
    let f = b.f32(1.0);
    b.store_per_vertex(IoSlot::new(Slot::Patch(0), 0), f, Value(0));
    assert_one(
        &pair(vs(), b),
        "`PATCH0.x` is a per-patch output; store it with `store_output`",
    );

    let mut b = tcs();
    b.load_output(IoSlot::new(Slot::TessLevelOuter, 0), Some(Value(0)));
    assert_one(
        &pair(vs(), b),
        "`TESS_LEVEL_OUTER.x` is a per-patch output; read it back without a vertex index",
    );

    let mut b = tcs();
    b.load_output(IoSlot::var(0, 0), None);
    assert_one(
        &pair(vs(), b),
        "`VAR0.x` is a per-vertex output; read it back with a vertex index",
    );

    let mut b = tcs();
    let f = b.f32(1.0);
    b.store(IoSlot::new(Slot::Patch(5), 3), f);
    b.load_output(IoSlot::new(Slot::Patch(5), 3), None);
    assert_valid(&pair(vs(), b));
}

#[test]
fn tes_reads_patch_slots_with_load_input_only() {
    let mut b = tes();
    b.load_input(IoSlot::var(0, 0));
    assert_one(
        &pair(tcs(), b),
        "tes `load_input` reads patch inputs (`PATCHn`, `TESS_LEVEL_*`), found `VAR0.x`; use `load_per_vertex_input`",
    );
    let mut b = tes();
    b.load_per_vertex(IoSlot::new(Slot::Patch(2), 0), Value(0));
    assert_one(
        &pair(tcs(), b),
        "`PATCH2.x` is a per-patch input; read it with `load_input`",
    );
}

#[test]
fn patch_slots_stay_between_tcs_and_tes() {
    let mut b = vs();
    b.store(IoSlot::new(Slot::Patch(0), 0), Value(0));
    assert_one(
        &pair(b, fs()),
        "`PATCH0.x` is a per-patch output, only writable in tcs",
    );
    let mut b = fs();
    b.load_interpolated(IoSlot::new(Slot::Patch(0), 0), InterpMode::PERSP_CENTER);
    assert_one(
        &pair(vs(), b),
        "`PATCH0.x` is a per-patch input, only readable in tes",
    );
    let mut b = gs();
    b.load_per_vertex(IoSlot::new(Slot::TessLevelInner, 0), Value(0));
    assert_one(
        &pair(tes(), b),
        "`TESS_LEVEL_INNER.x` is a per-patch input, only readable in tes",
    );
}

#[test]
fn components_exist_in_their_slot() {
    let mut b = tcs();
    let f = b.f32(1.0);
    b.store(IoSlot::new(Slot::TessLevelInner, 2), f);
    assert_one(
        &pair(vs(), b),
        "slot `TESS_LEVEL_INNER.z` has only 2 components",
    );
    let mut b = vs();
    b.store(IoSlot::new(Slot::Psiz, 1), Value(0));
    assert_one(&pair(b, fs()), "slot `PSIZ.y` has only 1 component");
    let mut b = vs();
    b.store(IoSlot::new(Slot::Var(3), 7), Value(0));
    assert_one(
        &pair(b, fs()),
        "component 7 of slot `VAR3` has only 4 components",
    );
}

#[test]
fn indirect_arrays_stay_in_their_family() {
    let store = |slot: Slot, len: u8| {
        let mut b = vs();
        let i = b.uniform(0);
        let ind = Some(Indirect { index: i, len });
        b.store_ex(IoSlot::new(slot, 0), Value(0), ind, None::<Xfb>);
        pair(b, fs()).with_uniforms(1)
    };
    assert_one(
        &store(Slot::Var(2), 0),
        "indirect array at `VAR2` has length 0",
    );
    assert_one(
        &store(Slot::Pos, 1),
        "indirect indexing is only allowed on VARn, PATCHn, TEXn, CLIP_DIST and CULL_DIST slots, not `POS`",
    );
    assert_one(
        &store(Slot::Var(30), 3),
        "indirect array of 3 slots starting at `VAR30` runs past the end of its slot family",
    );
    assert_one(
        &store(Slot::ClipDist(true), 2),
        "indirect array of 2 slots starting at `CLIP_DIST1` runs past the end of its slot family",
    );
    assert_valid(&store(Slot::Var(30), 2));
    assert_valid(&store(Slot::ClipDist(false), 2));
    assert_valid(&store(Slot::Tex(0), 8));
}
