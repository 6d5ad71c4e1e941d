//! `gl_ViewportMask[]` (`GL_NV_viewport_array2`, issue 16): the `VIEWPORT_MASK`
//! slot and the `layer_viewport_relative` flag in the text format, the
//! interpreter's broadcast of a primitive to the viewports of its mask, and the
//! optimizer keeping the FS's `VIEWPORT`/`LAYER` reads, which depend on the copy.

use varysat::interpreter::{check_equivalent, run, EquivConfig, RunConfig, Unit};
use varysat::ir::{IoSlot, Slot, Stage};
use varysat::{optimize, Options};

/// A VS broadcasting to viewports 0 and 3 (mask 9; bit 20 names no viewport of the
/// 16) with a viewport-relative layer 2, and an FS writing what it reads of both.
const BROADCAST: &str = "(pair
  (producer vs
    (layer_viewport_relative)
    (%p = load_input ATTR0.x)
    (%m = const 32 0x100009)
    (%l = const 32 2)
    (%v = const 32 7)
    (store_output POS.x %p)
    (store_output VIEWPORT_MASK.x %m)
    (store_output VIEWPORT.x %v)
    (store_output LAYER.x %l))
  (consumer fs
    (%vp = load_input VIEWPORT.x)
    (%ly = load_input LAYER.x)
    (store_output DATA0.x %vp)
    (store_output DATA0.y %ly)))
";

fn parse(src: &str) -> varysat::Pipeline {
    let p = varysat::text::parse(src, Some("t.pair")).unwrap_or_else(|e| panic!("{e}"));
    varysat::validate::validate(&p).unwrap_or_else(|e| panic!("{e}"));
    p
}

#[test]
fn slot_and_flag_round_trip_through_the_text() {
    let p = parse(BROADCAST);
    assert!(p.producer.layer_viewport_relative);
    let text = varysat::text::print(&p);
    assert!(text.contains("(layer_viewport_relative)"), "{text}");
    assert!(text.contains("store_output VIEWPORT_MASK.x"), "{text}");
    assert_eq!(varysat::text::print(&parse(&text)), text);
}

#[test]
fn the_flag_needs_a_mask_and_a_rasterized_stage() {
    let no_mask = BROADCAST.replace("    (store_output VIEWPORT_MASK.x %m)\n", "");
    let p = varysat::text::parse(&no_mask, Some("t.pair")).expect("parses");
    let e = varysat::validate::validate(&p).expect_err("no mask");
    assert_eq!(
        e.to_string(),
        "t.pair:2:3: error: `layer_viewport_relative` without a `VIEWPORT_MASK` store (a layer relative to `VIEWPORT` alone is not modelled)"
    );
    let in_fs = "(pair
  (producer vs
    (%p = load_input ATTR0.x)
    (store_output POS.x %p))
  (consumer fs
    (layer_viewport_relative)
    (store_output DATA0.x %p)))
";
    let e = varysat::text::parse(in_fs, Some("t.pair")).expect_err("not an fs parameter");
    assert!(
        e.to_string().starts_with(
            "t.pair:6:6: error: `layer_viewport_relative` is not a parameter of a `fs` shader"
        ),
        "{e}"
    );
}

/// What fragment 0 of primitive 0 of each viewport copy wrote at DATA0.x/y.
fn copies(p: &varysat::Pipeline) -> Vec<(Option<u32>, u32, u32)> {
    let obs = run(p, &RunConfig::default()).expect("runs");
    let mut out = vec![];
    for copy in [None, Some(0), Some(1), Some(3), Some(4), Some(20)] {
        let path: Vec<Unit> = match copy {
            Some(i) => vec![Unit::Primitive(0), Unit::Viewport(i), Unit::Fragment(0)],
            None => vec![Unit::Primitive(0), Unit::Fragment(0)],
        };
        let get = |c| obs.output(Stage::Fragment, &path, IoSlot::new(Slot::Data(0), c));
        if let (Some(x), Some(y)) = (get(0), get(1)) {
            out.push((copy, x.bits, y.bits));
        }
    }
    out
}

#[test]
fn a_primitive_is_drawn_once_per_viewport_of_its_mask() {
    // Viewports 0 and 3, each reading its own index (not the stored 7) and the
    // layer 2 + its index; bit 20 is past the 16 viewports and draws nothing.
    assert_eq!(
        copies(&parse(BROADCAST)),
        vec![(Some(0), 0, 2), (Some(3), 3, 5)]
    );
    // Without the flag the layer is the stored one in every copy.
    let plain = BROADCAST.replace("    (layer_viewport_relative)\n", "");
    assert_eq!(
        copies(&parse(&plain)),
        vec![(Some(0), 0, 2), (Some(3), 3, 2)]
    );
    // Mask 0: the primitive is discarded.
    let none = BROADCAST.replace("const 32 0x100009", "const 32 0");
    assert_eq!(copies(&parse(&none)), vec![]);
    // No mask: one copy with the stored viewport and layer, as before.
    let unmasked = plain.replace("    (store_output VIEWPORT_MASK.x %m)\n", "");
    assert_eq!(copies(&parse(&unmasked)), vec![(None, 7, 2)]);
}

#[test]
fn the_optimizer_keeps_viewport_and_layer_reads_under_a_mask() {
    // Constant VIEWPORT and LAYER stores would otherwise be propagated into the FS
    // (the producer's value, or 0 for an unwritten one), which each copy of the
    // broadcast reads differently.
    for src in [
        BROADCAST.to_owned(),
        BROADCAST.replace("    (store_output VIEWPORT.x %v)\n", ""),
    ] {
        let p = parse(&src);
        let out = optimize(&p, &Options::new()).expect("optimizes");
        let cfg = EquivConfig {
            runs: 2,
            ..EquivConfig::default()
        };
        check_equivalent(&p, &out.pipeline, &cfg).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(copies(&out.pipeline), copies(&p));
    }
}
