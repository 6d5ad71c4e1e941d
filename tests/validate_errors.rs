//! File-based validator cases: each invalid pair is written out line by line (so a
//! position is simply its line number and the column in that line) together with the
//! exact `file:line:col: error: message` text the validator must print. Also checks
//! that every example pair validates.

use std::path::Path;

use varysat::validate::validate;
use varysat::Error;

/// Parses `lines` as `bad.pair`, validates it and compares the printed diagnostics.
fn check(lines: &[&str], expected: &[&str]) {
    let src = lines.join("\n");
    let pipeline = match varysat::text::parse(&src, Some("bad.pair")) {
        Ok(p) => p,
        Err(e) => panic!("the case must parse, got: {e}"),
    };
    match validate(&pipeline) {
        Err(e @ Error::Invalid(_)) => assert_eq!(e.to_string(), expected.join("\n")),
        Err(other) => panic!("expected a validation error, got: {other}"),
        Ok(()) => panic!("expected {expected:?}, but the pair validated"),
    }
}

/// Lines 1-6: a VS that passes attribute 0 to POS.x and VAR0.x, one uniform word.
const VS: [&str; 6] = [
    "(pair",
    "  (uniforms 1)",
    "  (producer vs",
    "    (%a = load_input ATTR0.x)",
    "    (store_output POS.x %a)",
    "    (store_output VAR0.x %a))",
];

/// Lines 7-9: the matching FS.
const FS: [&str; 3] = [
    "  (consumer fs",
    "    (%x = load_interpolated_input VAR0.x persp center)",
    "    (store_output DATA0.x %x)))",
];

fn vs_with(consumer: &[&'static str]) -> Vec<&'static str> {
    VS.iter().chain(consumer).copied().collect()
}

#[test]
fn base_pair_is_valid() {
    let src = vs_with(&FS).join("\n");
    let p = varysat::text::parse(&src, Some("ok.pair"));
    assert!(matches!(p.as_ref().map(validate), Ok(Ok(()))), "{p:?}");
}

#[test]
fn use_before_definition() {
    check(
        &vs_with(&[
            "  (consumer fs",
            "    (%x = load_interpolated_input VAR0.x persp center)",
            "    (%y = fmul %x %t)",
            "    (%t = const 32 2.0)",
            "    (store_output DATA0.x %y)))",
        ]),
        &["bad.pair:9:5: error: value `%t` is used before it is defined (defined at 10:6)"],
    );
}

#[test]
fn branch_value_used_after_the_if() {
    check(
        &vs_with(&[
            "  (consumer fs",
            "    (%x = load_interpolated_input VAR0.x persp center)",
            "    (%k = load_uniform 0)",
            "    (%c = flt %x %k)",
            "    (if %c",
            "      (then",
            "        (%t = fneg %x))",
            "      (else))",
            "    (store_output DATA0.x %t)))",
        ]),
        &["bad.pair:15:5: error: value `%t` is defined inside an `if` branch at 13:10 and is not visible here; merge it out with a phi"],
    );
}

#[test]
fn loop_body_value_used_after_the_loop() {
    check(
        &vs_with(&[
            "  (consumer fs",
            "    (%x = load_interpolated_input VAR0.x persp center)",
            "    (loop",
            "      (%n = fneg %x)",
            "      (break))",
            "    (store_output DATA0.x %n)))",
        ]),
        &["bad.pair:12:5: error: value `%n` is defined inside a loop body at 10:8 and is not visible after the loop; carry it out with a header phi"],
    );
}

#[test]
fn loop_with_phis_falls_off_its_body() {
    check(
        &vs_with(&[
            "  (consumer fs",
            "    (%x = load_interpolated_input VAR0.x persp center)",
            "    (loop",
            "      (%i = phi %x)",
            "      (%n = fadd %i %x))",
            "    (store_output DATA0.x %x)))",
        ]),
        &["bad.pair:9:5: error: loop with header phis can reach the end of its body; end every path with `break` or `continue`"],
    );
}

#[test]
fn alu_sources_of_two_sizes() {
    check(
        &vs_with(&[
            "  (consumer fs",
            "    (%x = load_interpolated_input VAR0.x persp center)",
            "    (%h = load_interpolated_input VAR1.x.lo persp center)",
            "    (%s = fadd %x %h)",
            "    (store_output DATA0.x %s)))",
        ]),
        &["bad.pair:10:5: error: `fadd` sources must have one bit size, found 32 and 16"],
    );
}

#[test]
fn phi_operands_of_another_size() {
    // The phi has no position of its own: the diagnostic points at `%r`.
    check(
        &vs_with(&[
            "  (consumer fs",
            "    (%x = load_interpolated_input VAR0.x persp center)",
            "    (%h = load_interpolated_input VAR1.x.hi persp center)",
            "    (%k = load_uniform 0)",
            "    (%c = flt %x %k)",
            "    (if %c",
            "      (then)",
            "      (else)",
            "      (%r = phi %x %h))",
            "    (store_output DATA0.x %r)))",
        ]),
        &["bad.pair:15:8: error: phi `%r` is 32-bit but its else-value `%h` is 16-bit"],
    );
}

#[test]
fn if_condition_must_be_a_boolean() {
    check(
        &vs_with(&[
            "  (consumer fs",
            "    (%x = load_interpolated_input VAR0.x persp center)",
            "    (if %x",
            "      (then",
            "        (discard))",
            "      (else))",
            "    (store_output DATA0.x %x)))",
        ]),
        &["bad.pair:9:5: error: `if` condition `%x` must be 1-bit, found 32-bit"],
    );
}

#[test]
fn interpolated_load_in_a_vertex_shader() {
    let mut lines = vec![
        "(pair",
        "  (uniforms 1)",
        "  (producer vs",
        "    (%a = load_input ATTR0.x)",
        "    (%b = load_interpolated_input VAR0.x persp center)",
        "    (store_output POS.x %a)",
        "    (store_output VAR0.x %b))",
    ];
    lines.extend(FS);
    check(
        &lines,
        &["bad.pair:5:5: error: `load_interpolated_input` is only legal in a fragment shader, not in vs"],
    );
}

#[test]
fn system_value_of_another_stage() {
    let mut lines = vec![
        "(pair",
        "  (producer vs",
        "    (%a = load_input ATTR0.x)",
        "    (%f = load_system_value front_face)",
        "    (store_output POS.x %a)",
        "    (store_output VAR0.x %a))",
    ];
    lines.extend(FS);
    check(
        &lines,
        &["bad.pair:4:5: error: system value `front_face` is not available in vs"],
    );
}

#[test]
fn tess_level_inner_has_two_components() {
    check(
        &[
            "(pair",
            "  (producer vs",
            "    (%a = load_input ATTR0.x)",
            "    (store_output VAR0.x %a))",
            "  (consumer tcs",
            "    (%id = load_system_value invocation_id)",
            "    (%v = load_per_vertex_input VAR0.x %id)",
            "    (store_per_vertex_output VAR0.x %v %id)",
            "    (store_output TESS_LEVEL_INNER.z %v)))",
        ],
        &["bad.pair:9:5: error: slot `TESS_LEVEL_INNER.z` has only 2 components"],
    );
}

#[test]
fn half_value_stored_to_a_full_component() {
    let mut lines = vec![
        "(pair",
        "  (producer vs",
        "    (%a = load_input ATTR0.x)",
        "    (%h = f2f16 %a)",
        "    (store_output POS.x %a)",
        "    (store_output VAR0.x %h))",
    ];
    lines.extend(FS);
    check(
        &lines,
        &["bad.pair:6:5: error: 16-bit value `%h` stored to full component `VAR0.x`; use `VAR0.x.lo` or `.hi`"],
    );
}

#[test]
fn fragment_shader_stores_a_varying() {
    check(
        &vs_with(&[
            "  (consumer fs",
            "    (%x = load_interpolated_input VAR0.x persp center)",
            "    (store_output VAR1.x %x)))",
        ]),
        &["bad.pair:9:5: error: fs outputs must be `DATAn`, `DEPTH` or `SAMPLE_MASK`, found `VAR1.x`"],
    );
}

#[test]
fn attribute_read_outside_the_vertex_shader() {
    check(
        &vs_with(&[
            "  (consumer fs",
            "    (%x = load_input ATTR1.x)",
            "    (store_output DATA0.x %x)))",
        ]),
        &["bad.pair:8:5: error: `ATTR1.x` is a vertex attribute, only readable with `load_input` in vs"],
    );
}

#[test]
fn fragment_shader_reads_the_clip_vertex() {
    check(
        &vs_with(&[
            "  (consumer fs",
            "    (%x = load_interpolated_input CLIP_VERTEX.x persp center)",
            "    (store_output DATA0.x %x)))",
        ]),
        &["bad.pair:8:5: error: `CLIP_VERTEX.x` feeds clipping before rasterization; a fragment shader cannot read it"],
    );
}

#[test]
fn fragment_shader_reads_the_viewport_mask() {
    check(
        &vs_with(&[
            "  (consumer fs",
            "    (%x = load_input VIEWPORT_MASK.x)",
            "    (store_output DATA0.x %x)))",
        ]),
        &["bad.pair:8:5: error: `VIEWPORT_MASK.x` is the viewport mask of the primitive, only writable with `store_output` in vs, tes or gs"],
    );
}

#[test]
fn viewport_mask_has_one_component() {
    check(
        &[
            "(pair",
            "  (producer vs",
            "    (%a = load_input ATTR0.x)",
            "    (%m = const 32 3)",
            "    (store_output VIEWPORT_MASK.y %m)",
            "    (store_output POS.x %a))",
            "  (consumer fs",
            "    (%x = load_input VIEWPORT.x)",
            "    (store_output DATA0.x %x)))",
        ],
        &["bad.pair:5:5: error: slot `VIEWPORT_MASK.y` has only 1 component"],
    );
}

#[test]
fn uniform_word_out_of_range() {
    check(
        &vs_with(&[
            "  (consumer fs",
            "    (%u = load_uniform 1)",
            "    (store_output DATA0.x %u)))",
        ]),
        &["bad.pair:8:5: error: uniform word 1 is out of range; the pair declares 1 uniform word"],
    );
}

#[test]
fn ubo_offsets_and_blocks() {
    check(
        &[
            "(pair",
            "  (ubo 0 16)",
            "  (producer vs",
            "    (%a = load_input ATTR0.x)",
            "    (store_output POS.x %a))",
            "  (consumer fs",
            "    (%o = const 32 16)",
            "    (%u = load_ubo 0 %o)",
            "    (%o2 = const 32 2)",
            "    (%w = load_ubo 1 %o2)",
            "    (%s = fadd %u %w)",
            "    (store_output DATA0.x %s)))",
        ],
        &[
            "bad.pair:8:5: error: UBO offset 16 is out of range; block 0 has 16 bytes",
            "bad.pair:10:5: error: UBO block 1 is not declared; add `(ubo 1 SIZE)`",
        ],
    );
}

#[test]
fn xfb_offset_alignment() {
    let mut lines = vec![
        "(pair",
        "  (producer vs",
        "    (%a = load_input ATTR0.x)",
        "    (store_output POS.x %a (xfb 0 6))",
        "    (store_output VAR0.x %a))",
    ];
    lines.extend(FS);
    check(
        &lines,
        &["bad.pair:4:5: error: xfb offset 6 is not a multiple of 4"],
    );
}

/// A 16-bit capture is 2-byte aligned: offset 6 is fine, 3 is not.
#[test]
fn xfb_offset_alignment_of_sixteen_bit_stores() {
    let mut lines = vec![
        "(pair",
        "  (producer vs",
        "    (%a = load_input ATTR0.x)",
        "    (%h = f2f16 %a)",
        "    (store_output VAR0.x %a)",
        "    (store_output VAR1.x.lo %h (xfb 0 6))",
        "    (store_output VAR2.x.lo %h (xfb 0 3)))",
    ];
    lines.extend(FS);
    check(
        &lines,
        &["bad.pair:7:5: error: xfb offset 3 is not a multiple of 2"],
    );
}

#[test]
fn indirect_array_leaves_its_family() {
    let mut lines = vec![
        "(pair",
        "  (producer vs",
        "    (%a = load_input ATTR0.x)",
        "    (%i = const 32 0)",
        "    (store_output POS.x %a)",
        "    (store_output VAR30.x %a (indirect %i 3)))",
    ];
    lines.extend(FS);
    check(
        &lines,
        &["bad.pair:6:5: error: indirect array of 3 slots starting at `VAR30` runs past the end of its slot family"],
    );
}

#[test]
fn constant_vertex_index_out_of_range() {
    check(
        &[
            "(pair",
            "  (producer vs",
            "    (%a = load_input ATTR0.x)",
            "    (store_output VAR0.x %a))",
            "  (consumer tcs",
            "    (input_vertices 3)",
            "    (output_vertices 3)",
            "    (%id = load_system_value invocation_id)",
            "    (%k3 = const 32 3)",
            "    (%v = load_per_vertex_input VAR0.x %k3)",
            "    (store_per_vertex_output VAR0.x %v %id)))",
        ],
        &["bad.pair:10:5: error: vertex index 3 is out of range; the tcs input patch has 3 vertices"],
    );
}

#[test]
fn geometry_shader_emits_too_many_vertices() {
    check(
        &[
            "(pair",
            "  (producer vs",
            "    (%a = load_input ATTR0.x)",
            "    (store_output POS.x %a))",
            "  (consumer gs",
            "    (max_vertices 2)",
            "    (%k0 = const 32 0)",
            "    (%p = load_per_vertex_input POS.x %k0)",
            "    (store_output POS.x %p)",
            "    (emit_vertex)",
            "    (emit_vertex)",
            "    (emit_vertex)",
            "    (end_primitive)))",
        ],
        &["bad.pair:12:5: error: `emit_vertex` number 3 on this path exceeds `max_vertices` 2"],
    );
}

#[test]
fn tes_patch_size_differs_from_tcs_output() {
    check(
        &[
            "(pair",
            "  (producer tcs",
            "    (output_vertices 4)",
            "    (%id = load_system_value invocation_id)",
            "    (%v = load_per_vertex_input VAR0.x %id)",
            "    (store_per_vertex_output VAR0.x %v %id))",
            "  (consumer tes",
            "    (input_vertices 3)",
            "    (%k0 = const 32 0)",
            "    (%p = load_per_vertex_input VAR0.x %k0)",
            "    (store_output POS.x %p)))",
        ],
        &["bad.pair:7:3: error: tes `input_vertices` 3 must equal the tcs `output_vertices` 4"],
    );
}

#[test]
fn illegal_stage_pair() {
    check(
        &[
            "(pair",
            "  (producer gs",
            "    (%k0 = const 32 0)",
            "    (%p = load_per_vertex_input POS.x %k0)",
            "    (store_output POS.x %p)",
            "    (emit_vertex))",
            "  (consumer tcs",
            "    (%id = load_system_value invocation_id)",
            "    (%v = load_per_vertex_input POS.x %id)",
            "    (store_per_vertex_output POS.x %v %id)))",
        ],
        &["bad.pair:7:3: error: a gs producer cannot feed a tcs consumer"],
    );
}

#[test]
fn every_problem_in_both_shaders_in_source_order() {
    check(
        &[
            "(pair",
            "  (producer vs",
            "    (%a = load_input ATTR0.x)",
            "    (store_output POS.x %a)",
            "    (store_output VAR0.x %a)",
            "    (store_output DATA0.x %a))",
            "  (consumer fs",
            "    (%x = load_interpolated_input VAR0.x persp center)",
            "    (barrier)",
            "    (%y = fmul %x %z)",
            "    (%z = const 32 1.0)",
            "    (store_output DATA0.x %y)))",
        ],
        &[
            "bad.pair:6:5: error: `DATA0.x` is a fragment shader output, only writable with `store_output` in fs",
            "bad.pair:9:5: error: `barrier` is only legal in a tessellation control shader, not in fs",
            "bad.pair:10:5: error: value `%z` is used before it is defined (defined at 11:6)",
        ],
    );
}

#[test]
fn every_example_pair_validates() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pairs");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        // The examples directory is optional; without it there is nothing to check.
        return;
    };
    let mut paths: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "pair"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "{} holds no .pair files", dir.display());
    let mut failures = vec![];
    for path in &paths {
        let result = varysat::text::parse_file(path).and_then(|p| validate(&p));
        if let Err(e) = result {
            failures.push(e.to_string());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
