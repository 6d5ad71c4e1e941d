//! The packed pair computes what the unpacked one did: every example pair under every
//! option set, and random VS → FS varying sets, run through the reference interpreter.

mod pack_support;

use pack_support::{example_pairs, fs_pair, option_sets, V};
use proptest::prelude::*;
use varysat::internals::pack::pack;
use varysat::interpreter::{check_equivalent, EquivConfig};
use varysat::ir::{Half, Interp, InterpLoc, InterpMode, IoSlot, Slot};
use varysat::text::parse_file;

#[test]
fn every_example_is_equivalent_after_packing() {
    let files = example_pairs();
    for f in &files {
        let p = parse_file(f).unwrap();
        for o in option_sets() {
            let (out, _) = pack(&p, &o).unwrap();
            if let Err(e) = check_equivalent(&p, &out, &EquivConfig::default()) {
                panic!("{} with {o:?}: {e}", f.display());
            }
        }
    }
}

const MODES: [InterpMode; 3] = [
    InterpMode::PERSP_CENTER,
    InterpMode {
        interp: Interp::Linear,
        loc: InterpLoc::Center,
    },
    InterpMode {
        interp: Interp::Persp,
        loc: InterpLoc::AtOffset,
    },
];

fn var_spec() -> impl Strategy<Value = (u8, bool, usize)> {
    (0u8..3, any::<bool>(), 0..MODES.len())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_pairs_are_equivalent_after_packing(
        specs in prop::collection::vec(var_spec(), 1..9),
        perm in Just((0..128u8).collect::<Vec<_>>()).prop_shuffle(),
        bits in 0u8..16,
    ) {
        let vs: Vec<V> = specs
            .iter()
            .enumerate()
            .map(|(i, (kind, fp16, mode))| {
                let (n, c) = (perm[i] / 4, perm[i] % 4);
                let slot = if *fp16 {
                    IoSlot::half(Slot::Var(n), c, if i % 2 == 0 { Half::Lo } else { Half::Hi })
                } else {
                    IoSlot::var(n, c)
                };
                match kind {
                    0 => V::interp(slot, MODES[*mode]),
                    1 => V::flat(slot),
                    _ => V::conv(slot, MODES[*mode]),
                }
            })
            .collect();
        let p = fs_pair(&vs);
        let o = option_sets().swap_remove(bits as usize);
        let (out, _) = pack(&p, &o).unwrap();
        let r = check_equivalent(&p, &out, &EquivConfig::default());
        prop_assert!(r.is_ok(), "{}", r.err().map(|e| e.to_string()).unwrap_or_default());
    }
}
