//! The interpreter's model of the FS inputs fixed function decides: two-sided colour
//! selection by facing, vertex colour clamping, the point coordinate (PNTC and TEXn.xy
//! under coord replace) and the rasterizer's primitive id. Expected values come from
//! the seeded state (`Inputs`) and the stored constants, not from a run.

use varysat::interpreter::{Inputs, Observation, RunConfig, Unit};
use varysat::ir::{IoSlot, Pipeline, Stage};

fn parse(text: &str) -> Pipeline {
    let p = varysat::text::parse(text, None).expect("test pair parses");
    varysat::validate::validate(&p).expect("test pair validates");
    p
}

fn run(p: &Pipeline, seed: u64) -> Observation {
    let cfg = RunConfig {
        seed,
        ..RunConfig::default()
    };
    varysat::interpreter::run(p, &cfg).expect("runs")
}

fn out(o: &Observation, prim: u32, frag: u32, slot: &str) -> f32 {
    let slot: IoSlot = slot.parse().expect("slot");
    let path = [Unit::Primitive(prim), Unit::Fragment(frag)];
    let s = o.output(Stage::Fragment, &path, slot).expect("observed");
    assert!(s.defined, "{slot} undefined at primitive {prim}");
    s.as_f32()
}

const COLOURS: &str = "(pair
  (producer vs
    (%p = load_input ATTR0.x)
    (%f = const 32 0.25)
    (%b = const 32 0.75)
    (%big = const 32 2.0)
    (store_output POS.x %p)
    (store_output COL0.x %f)
    (store_output BFC0.x %b)
    (store_output COL0.y %big))
  (consumer fs
    (%c = load_interpolated_input COL0.x persp center)
    (%d = load_interpolated_input COL0.y persp center)
    (%e = load_input COL0.x)
    (store_output DATA0.x %c)
    (store_output DATA0.y %d)
    (store_output DATA0.z %e)))";

#[test]
fn back_faces_read_the_back_colour_under_two_sided_selection() {
    let p = parse(COLOURS);
    let mut seen = [false; 2];
    for seed in 0..4 {
        let inputs = Inputs::new(seed);
        let o = run(&p, seed);
        for prim in 0..2 {
            let back = inputs.two_sided_colour() && !inputs.front_face(prim);
            seen[back as usize] = true;
            let want = if back { 0.75 } else { 0.25 };
            assert_eq!(out(&o, prim, 0, "DATA0.x"), want, "seed {seed} prim {prim}");
            assert_eq!(out(&o, prim, 0, "DATA0.z"), want, "flat read, seed {seed}");
        }
    }
    assert_eq!(seen, [true, true], "four seeds shade both selections");
}

#[test]
fn vertex_colours_are_clamped_when_the_state_says_so() {
    let p = parse(COLOURS);
    let mut seen = [false; 2];
    for seed in 0..4 {
        let clamp = Inputs::new(seed).clamp_vertex_colour();
        seen[clamp as usize] = true;
        let o = run(&p, seed);
        // COL0.y has no back colour: on a two-sided back face it is undefined.
        let front = (0..2).find(|&q| {
            let i = Inputs::new(seed);
            !i.two_sided_colour() || i.front_face(q)
        });
        let prim = front.expect("one primitive reads the front colour");
        let want = if clamp { 1.0 } else { 2.0 };
        assert_eq!(out(&o, prim, 1, "DATA0.y"), want, "seed {seed}");
    }
    assert_eq!(seen, [true, true]);
}

#[test]
fn every_run_shades_both_faces() {
    for seed in 0..8 {
        let i = Inputs::new(seed);
        assert_ne!(i.front_face(0), i.front_face(1), "seed {seed}");
    }
}

#[test]
fn the_rasterizer_supplies_point_coordinates_and_primitive_ids() {
    let p = parse(
        "(pair
          (producer vs
            (%p = load_input ATTR0.x)
            (%a = load_input ATTR1.x)
            (store_output POS.x %p)
            (store_output PNTC.x %a))
          (consumer fs
            (%c = load_input PNTC.x)
            (%d = load_interpolated_input PNTC.y persp center)
            (%t = load_interpolated_input TEX3.x linear center)
            (%u = load_input TEX3.y)
            (%i = load_input PRIMITIVE_ID.x)
            (%fi = u2f32 %i)
            (store_output DATA0.x %c)
            (store_output DATA0.y %d)
            (store_output DATA0.z %t)
            (store_output DATA0.w %u)
            (store_output DATA1.x %fi)))",
    );
    for seed in 0..2 {
        let o = run(&p, seed);
        for prim in 0..2 {
            for frag in 0..4 {
                let [x, y] = Inputs::new(seed).point_coord(prim, frag);
                // PNTC ignores the VS store: the FS never sees a producer's PNTC.
                assert_eq!(out(&o, prim, frag, "DATA0.x"), x);
                assert_eq!(out(&o, prim, frag, "DATA0.y"), y);
                assert_eq!(out(&o, prim, frag, "DATA0.z"), x, "coord replace");
                assert_eq!(out(&o, prim, frag, "DATA0.w"), y, "coord replace");
                assert_eq!(out(&o, prim, frag, "DATA1.x"), prim as f32);
            }
        }
    }
}

#[test]
fn a_geometry_shader_writes_the_primitive_id_the_fs_reads() {
    let p = parse(
        "(pair
          (producer gs
            (input triangles)
            (output triangle_strip)
            (max_vertices 3)
            (%k = const 32 0)
            (%seven = const 32 7)
            (%p = load_per_vertex_input POS.x %k)
            (store_output POS.x %p)
            (store_output PRIMITIVE_ID.x %seven)
            (emit_vertex)
            (store_output POS.x %p)
            (store_output PRIMITIVE_ID.x %seven)
            (emit_vertex)
            (store_output POS.x %p)
            (store_output PRIMITIVE_ID.x %seven)
            (emit_vertex))
          (consumer fs
            (%i = load_input PRIMITIVE_ID.x)
            (%fi = u2f32 %i)
            (store_output DATA0.x %fi)))",
    );
    let o = run(&p, 0);
    for prim in 0..2 {
        assert_eq!(out(&o, prim, 0, "DATA0.x"), 7.0);
    }
}

/// The pair of the two-sided wrong-code family: only the back colour is written, the FS
/// reads the front colour.
const BACK_ONLY: &str = "(pair
  (producer vs
    (%p = load_input ATTR0.x)
    (%a = load_input ATTR1.x)
    (store_output POS.x %p)
    (store_output BFC0.x %a))
  (consumer fs
    (%x = load_interpolated_input COL0.x persp center)
    (store_output DATA0.x %x)))";

/// What the optimizer did to `BACK_ONLY` before it knew the FS colour selection: the
/// `BFC0` store "had no reader" and was deleted, the `COL0` read "had no writer" and
/// became undef.
const BACK_ONLY_OLD_OUTPUT: &str = "(pair
  (producer vs
    (%p = load_input ATTR0.x)
    (store_output POS.x %p no_varying))
  (consumer fs
    (%x = undef 32)
    (store_output DATA0.x %x)))";

/// The pair of the fixed-function wrong-code family: the point coordinate and the
/// primitive id with no GS before the FS.
const FIXED_INPUTS: &str = "(pair
  (producer vs
    (%p = load_input ATTR0.x)
    (store_output POS.x %p))
  (consumer fs
    (%c = load_interpolated_input PNTC.x persp center)
    (%i = load_input PRIMITIVE_ID.x)
    (%fi = u2f32 %i)
    (%s = fadd %c %fi)
    (store_output DATA0.x %s)))";

/// ... and what the optimizer made of it: both reads "had no writer", so undef.
const FIXED_INPUTS_OLD_OUTPUT: &str = "(pair
  (producer vs
    (%p = load_input ATTR0.x)
    (store_output POS.x %p no_varying))
  (consumer fs
    (%c = undef 32)
    (%i = undef 32)
    (%fi = u2f32 %i)
    (%s = fadd %c %fi)
    (store_output DATA0.x %s)))";

fn equivalent(a: &Pipeline, b: &Pipeline) -> Result<(), String> {
    let cfg = varysat::interpreter::EquivConfig::default();
    varysat::interpreter::check_equivalent(a, b, &cfg).map_err(|e| e.to_string())
}

#[test]
fn the_former_wrong_code_is_caught_and_no_longer_produced() {
    for (pair, old) in [
        (BACK_ONLY, BACK_ONLY_OLD_OUTPUT),
        (FIXED_INPUTS, FIXED_INPUTS_OLD_OUTPUT),
    ] {
        let (p, old) = (parse(pair), parse(old));
        // The interpreter sees the old output lose defined values (refinement).
        let why = equivalent(&p, &old).expect_err("the old output is caught");
        assert!(why.contains("mismatch"), "{why}");
        // The optimizer keeps the back colour and the fixed-function reads.
        let out = varysat::optimize(&p, &varysat::Options::new()).expect("optimizes");
        equivalent(&p, &out.pipeline).expect("the optimized pair is equivalent");
        let text = varysat::text::print(&out.pipeline);
        assert!(!text.contains("undef"), "no read became undef:\n{text}");
    }
}

#[test]
fn the_sample_mask_covers_the_fragments_own_sample() {
    let p = parse(
        "(pair
          (producer vs
            (%p = load_input ATTR0.x)
            (store_output POS.x %p))
          (consumer fs
            (%m = load_system_value sample_mask_in)
            (%s = load_system_value sample_id)
            (%fm = u2f32 %m)
            (%fs = u2f32 %s)
            (store_output DATA0.x %fm)
            (store_output DATA0.y %fs)))",
    );
    let mut masks = std::collections::BTreeSet::new();
    for seed in 0..2 {
        let o = run(&p, seed);
        for prim in 0..2 {
            for frag in 0..4 {
                let mask = out(&o, prim, frag, "DATA0.x") as u32;
                let sample = out(&o, prim, frag, "DATA0.y") as u32;
                assert_eq!(mask, Inputs::new(seed).sample_mask_in(prim, frag));
                assert!(mask < 16, "four samples per pixel: {mask:#b}");
                assert_ne!(mask & (1 << sample), 0, "{mask:#b} lacks sample {sample}");
                masks.insert(mask);
            }
        }
    }
    assert!(
        masks.len() > 2,
        "the mask varies between fragments: {masks:?}"
    );
}

/// `color` interpolation (Mesa's `INTERP_MODE_NONE`) follows the seeded shade model:
/// flat (the provoking vertex) in some runs, perspective-correct in the others. The
/// default equivalence runs see both, so reading the colour always smooth or always
/// flat instead is caught either way.
#[test]
fn colour_interpolation_follows_the_shade_model() {
    use varysat::interpreter::{check_equivalent, EquivConfig};
    let pair = |qualifier: &str| {
        parse(&format!(
            "(pair
              (producer vs
                (%a = load_input ATTR0.x)
                (%b = load_input ATTR1.x)
                (store_output POS.x %a)
                (store_output COL0.x %b)
                (store_output BFC0.x %b))
              (consumer fs
                (%c = {qualifier})
                (store_output DATA0.x %c)))"
        ))
    };
    let colour = pair("load_interpolated_input COL0.x color center");
    let smooth = pair("load_interpolated_input COL0.x persp center");
    let flat = pair("load_input COL0.x");
    let seeds = 0..4u64;
    let flat_runs: Vec<bool> = seeds
        .clone()
        .map(|s| Inputs::new(s).flat_shade_model())
        .collect();
    assert!(flat_runs.contains(&true) && flat_runs.contains(&false));
    for s in seeds {
        let reference = if Inputs::new(s).flat_shade_model() {
            &flat
        } else {
            &smooth
        };
        assert_eq!(
            out(&run(&colour, s), 0, 0, "DATA0.x").to_bits(),
            out(&run(reference, s), 0, 0, "DATA0.x").to_bits(),
            "seed {s}"
        );
    }
    let cfg = EquivConfig::default();
    assert!(check_equivalent(&colour, &colour, &cfg).is_ok());
    assert!(check_equivalent(&colour, &smooth, &cfg).is_err());
    assert!(check_equivalent(&colour, &flat, &cfg).is_err());
    // Only colours are read this way.
    let text = "(pair (producer vs (%a = load_input ATTR0.x) (store_output VAR0.x %a))
      (consumer fs (%c = load_interpolated_input VAR0.x color center) (store_output DATA0.x %c)))";
    let p = varysat::text::parse(text, None).expect("parses");
    let err = varysat::validate::validate(&p).unwrap_err().to_string();
    assert!(
        err.contains("`color` interpolation reads a colour"),
        "{err}"
    );
}

/// A VS → FS pair reading `value` flat from `flat_slot` beside an interpolated
/// attribute in VAR0.x (read `interp_use` way), under the last provoking vertex.
fn mixed_slot_pair(value: &str, flat_slot: &str, interp_use: &str) -> Pipeline {
    parse(&format!(
        "(pair
  (producer vs
    (topology triangles)
    (%p = load_input ATTR0.x)
    (%a = load_input ATTR1.x)
    (%n = load_input ATTR2.x)
    (%iid = load_system_value instance_id)
    (store_output POS.x %p)
    (store_output VAR0.x %a)
    (store_output {flat_slot} {value}))
  (consumer fs
    (provoking last)
    (%x = load_interpolated_input VAR0.x persp center)
    (%k = load_input {flat_slot})
    {interp_use}
    (store_output DATA1.x %k)))"
    ))
}

#[test]
fn a_flat_read_in_an_interpolated_vec4_sees_the_first_vertex() {
    let live = "(store_output DATA0.x %x)";
    // Hardware interpolates per attribute: VAR0 is not flat-shaded, so a flat read of
    // VAR0.y gets the first vertex, not the provoking (last) one. Packing a per-vertex
    // value there changes what the FS reads; the interpreter sees it.
    let own_vec4 = mixed_slot_pair("%n", "VAR1.x", live);
    let mixed = mixed_slot_pair("%n", "VAR0.y", live);
    let why = equivalent(&own_vec4, &mixed).expect_err("first vs provoking vertex");
    assert!(why.contains("mismatch"), "{why}");
    // A value equal at every vertex reads the same either way: what the packer may mix.
    let own_vec4 = mixed_slot_pair("%iid", "VAR1.x", live);
    let mixed = mixed_slot_pair("%iid", "VAR0.y", live);
    equivalent(&own_vec4, &mixed).expect("a convergent value mixes");
    // An interpolated load that reaches nothing does not make VAR0 interpolated (the
    // driver removes it first): the flat read sees the provoking vertex again.
    let own_vec4 = mixed_slot_pair("%n", "VAR1.x", "");
    let dead = mixed_slot_pair("%n", "VAR0.y", "");
    equivalent(&own_vec4, &dead).expect("no live interpolated read");
}
