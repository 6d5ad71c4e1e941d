//! The packer on the hand-written example pairs (examples/pairs/*.pair): the packed
//! pair still validates, no two surviving varyings share an address, packing again
//! needs no more vec4s, and two examples' exact layouts.

mod pack_support;

use std::collections::BTreeSet;
use std::path::Path;

use pack_support::{example_pairs, option_sets};
use varysat::internals::pack::{pack, LoadRewrite, PackOptions};
use varysat::ir::{InstKind, IoSlot};
use varysat::text::{parse, parse_file};
use varysat::validate::validate;

#[test]
fn every_example_packs_to_a_valid_collision_free_pair() {
    let files = example_pairs();
    for f in &files {
        let p = parse_file(f).unwrap();
        for o in option_sets() {
            let (out, l) = pack(&p, &o).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            validate(&out).unwrap_or_else(|e| panic!("{} {o:?}: {e}", f.display()));
            let targets: BTreeSet<IoSlot> = l.map.values().copied().collect();
            assert_eq!(
                targets.len(),
                l.map.len(),
                "{}: two varyings collide",
                f.display()
            );
            let (_, again) = pack(&out, &o).unwrap();
            assert_eq!(again.vec4s.len(), l.vec4s.len(), "{}", f.display());
        }
    }
}

#[test]
fn indirect_example_keeps_its_array_and_fills_a_hole() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pairs/vs_fs_indirect.pair");
    let (out, l) = pack(&parse_file(&path).unwrap(), &PackOptions::default()).unwrap();
    let var = IoSlot::var;
    // VAR0..VAR3.x stay; interpolated VAR4.y fills the array's hole VAR0.y; flat
    // VAR5.x cannot join an interpolated vec4 and takes the first free slot, VAR4.
    assert_eq!(l.map[&var(4, 1)], var(0, 1));
    assert_eq!(l.map[&var(5, 0)], var(4, 0));
    let mut indirect = vec![];
    out.consumer.for_each_inst(|i| {
        if let InstKind::LoadInterpolatedInput {
            slot,
            indirect: Some(ind),
            ..
        } = &i.kind
        {
            indirect.push((*slot, ind.len));
        }
    });
    assert_eq!(indirect, vec![(var(0, 0), 4)]);
}

#[test]
fn convergent_example_fills_the_interpolated_vec4() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pairs/vs_fs_convergent.pair");
    let p = parse_file(&path).unwrap();
    let (_, l) = pack(&p, &PackOptions::default()).unwrap();
    assert_eq!(l.map[&IoSlot::var(1, 0)], IoSlot::var(0, 1));
    assert_eq!(l.loads[&IoSlot::var(1, 0)], LoadRewrite::KeepInterp);
    let off = PackOptions {
        convergent_fill: false,
        ..PackOptions::default()
    };
    let (out, l) = pack(&p, &off).unwrap();
    assert_eq!(l.map[&IoSlot::var(1, 0)], IoSlot::var(1, 0));
    assert_eq!(l.loads[&IoSlot::var(1, 0)], LoadRewrite::Flat);
    let text = varysat::text::print(&out);
    assert!(text.contains("load_input VAR1.x"), "{text}");
}

#[test]
fn inline_pair_with_16_bit_flat_and_xfb() {
    let src = r#"
(pair
  (uniforms 2)
  (producer vs
    (%a = load_input ATTR0.x)
    (%h = f2f16 %a)
    (%u = load_uniform 1)
    (store_output POS.x %a)
    (store_output VAR9.w.hi %h)
    (store_output VAR2.z %a (xfb 0 4))
    (store_output VAR6.y %u (xfb 1 0) no_varying))
  (consumer fs
    (%x = load_input VAR9.w.hi)
    (%y = load_interpolated_input VAR2.z linear centroid)
    (%z = f2f32 %x)
    (%r = fadd %y %z)
    (store_output DATA0.x %r)))"#;
    let p = parse(src, Some("inline.pair")).unwrap();
    let (out, l) = pack(&p, &PackOptions::default()).unwrap();
    let half = |n, c, h| IoSlot::half(varysat::ir::Slot::Var(n), c, h);
    assert_eq!(l.map[&IoSlot::var(2, 2)], IoSlot::var(0, 0));
    assert_eq!(
        l.map[&half(9, 3, varysat::ir::Half::Hi)],
        half(1, 0, varysat::ir::Half::Lo)
    );
    assert_eq!(l.map[&IoSlot::var(6, 1)], IoSlot::var(2, 0));
    let text = varysat::text::print(&out);
    assert!(
        text.contains("(store_output VAR0.x %a (xfb 0 4))"),
        "{text}"
    );
    assert!(
        text.contains("(store_output VAR2.x %u (xfb 1 0) no_varying)"),
        "{text}"
    );
    validate(&out).unwrap();
}
