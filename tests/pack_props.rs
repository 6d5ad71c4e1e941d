//! Property tests of the packer on random VS → FS varying sets: no two varyings
//! collide, every varying is placed, each vec4 obeys the grouping rules, and the
//! number of vec4s equals the minimum found by an exhaustive search written here.

mod pack_support;

use std::collections::{BTreeMap, BTreeSet};

use pack_support::{fs_pair, loads_of, Read, V};
use proptest::prelude::*;
use varysat::internals::pack::{pack, PackOptions};
use varysat::ir::{Half, Interp, InterpLoc, InterpMode, IoSlot, Slot};
use varysat::validate::validate;

const MODES: [InterpMode; 3] = [
    InterpMode::PERSP_CENTER,
    InterpMode {
        interp: Interp::Linear,
        loc: InterpLoc::Center,
    },
    InterpMode {
        interp: Interp::Persp,
        loc: InterpLoc::Centroid,
    },
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Interp,
    Flat,
    Conv,
    /// Convergent, read flat.
    ConvFlat,
}

#[derive(Clone, Copy, Debug)]
struct Spec {
    kind: Kind,
    fp16: bool,
    mode: usize,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        prop_oneof![
            Just(Kind::Interp),
            Just(Kind::Flat),
            Just(Kind::Conv),
            Just(Kind::ConvFlat)
        ],
        any::<bool>(),
        0..MODES.len(),
    )
        .prop_map(|(kind, fp16, mode)| Spec { kind, fp16, mode })
}

fn options() -> impl Strategy<Value = PackOptions> {
    (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(f, c, m, p)| {
        PackOptions {
            flexible_interp: f,
            convergent_fill: c,
            mix_convergent_flat: m,
            pack_16bit: p,
            ..PackOptions::default()
        }
    })
}

/// Old address of item `i`: distinct components spread over VAR0..VAR31.
fn address(i: usize, s: &Spec, perm: &[u8]) -> IoSlot {
    let k = perm[i];
    let (n, c) = (k / 4, k % 4);
    if s.fp16 {
        let half = if i.is_multiple_of(2) {
            Half::Lo
        } else {
            Half::Hi
        };
        IoSlot::half(Slot::Var(n), c, half)
    } else {
        IoSlot::var(n, c)
    }
}

fn to_v(i: usize, s: &Spec, perm: &[u8]) -> V {
    let slot = address(i, s, perm);
    match s.kind {
        Kind::Interp => V::interp(slot, MODES[s.mode]),
        Kind::Flat => V::flat(slot),
        Kind::Conv => V::conv(slot, MODES[s.mode]),
        Kind::ConvFlat => V::conv_flat(slot),
    }
}

/// Whether these items may share one vec4 under the rules, derived from the rule text
/// (not from the packer): capacity, no flat with interpolated, no fp16 with fp32
/// interpolation, one mode per vec4 unless flexible; convergent items go anywhere
/// their width fits (as flat when filling is off; read flat, only where the hardware
/// reads a flat component of an interpolated vec4).
fn feasible(block: &[Spec], o: &PackOptions) -> bool {
    let n32 = block.iter().filter(|s| !s.fp16).count();
    let n16 = block.len() - n32;
    let comps = n32 + if o.pack_16bit { n16.div_ceil(2) } else { n16 };
    if comps > 4 {
        return false;
    }
    let eff = |s: &Spec| match s.kind {
        Kind::Conv if !o.convergent_fill => Kind::Flat,
        Kind::ConvFlat if !(o.mix_convergent_flat && o.convergent_fill) => Kind::Flat,
        Kind::ConvFlat => Kind::Conv,
        k => k,
    };
    let interps: Vec<&Spec> = block.iter().filter(|s| eff(s) == Kind::Interp).collect();
    let Some(first) = interps.first() else {
        return true;
    };
    let flat = block.iter().any(|s| eff(s) == Kind::Flat);
    let widths = block.iter().all(|s| s.fp16 == first.fp16);
    let modes = o.flexible_interp || interps.iter().all(|s| s.mode == first.mode);
    !flat && widths && modes
}

/// The fewest vec4s any rule-abiding assignment needs: tries every set partition.
fn brute_force(items: &[Spec], o: &PackOptions) -> usize {
    fn go(
        i: usize,
        items: &[Spec],
        blocks: &mut Vec<Vec<Spec>>,
        o: &PackOptions,
        best: &mut usize,
    ) {
        if blocks.len() >= *best {
            return;
        }
        let Some(item) = items.get(i) else {
            *best = blocks.len();
            return;
        };
        for b in 0..blocks.len() {
            blocks[b].push(*item);
            if feasible(&blocks[b], o) {
                go(i + 1, items, blocks, o, best);
            }
            blocks[b].pop();
        }
        blocks.push(vec![*item]);
        go(i + 1, items, blocks, o, best);
        blocks.pop();
    }
    let mut best = usize::MAX;
    go(0, items, &mut vec![], o, &mut best);
    if items.is_empty() {
        0
    } else {
        best
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn packing_is_collision_free_complete_rule_abiding_and_minimal(
        items in prop::collection::vec(spec(), 0..9),
        perm in Just((0..128u8).collect::<Vec<_>>()).prop_shuffle(),
        o in options(),
    ) {
        let vs: Vec<V> = items.iter().enumerate().map(|(i, s)| to_v(i, s, &perm)).collect();
        let pair = fs_pair(&vs);
        prop_assert!(validate(&pair).is_ok());
        let (out, layout) = pack(&pair, &o).unwrap();
        prop_assert!(validate(&out).is_ok(), "{:?}", validate(&out));

        // Every varying placed, at an address of its width; no two share one.
        let mut seen: BTreeSet<IoSlot> = BTreeSet::new();
        let mut widths: BTreeMap<(Slot, u8), BTreeSet<bool>> = BTreeMap::new();
        for v in &vs {
            let new = layout.map.get(&v.slot).copied();
            prop_assert!(new.is_some(), "{} not placed", v.slot);
            let new = new.unwrap_or(v.slot);
            prop_assert!(seen.insert(new), "{new} used twice");
            prop_assert_eq!(new.half != Half::Full, v.fp16());
            prop_assert!(matches!(new.slot, Slot::Var(_)));
            widths.entry((new.slot, new.comp)).or_default().insert(new.half == Half::Full);
        }
        for (c, w) in &widths {
            prop_assert!(w.len() == 1, "{:?} holds 32- and 16-bit values", c);
        }
        if !o.pack_16bit {
            prop_assert!(seen.iter().all(|s| s.half != Half::Hi));
        }

        // Rules per vec4, read off the packed consumer's loads.
        let mut per_vec4: BTreeMap<Slot, Vec<(Read, bool, Kind)>> = BTreeMap::new();
        for (v, s) in vs.iter().zip(&items) {
            let new = layout.map[&v.slot];
            let reads = loads_of(&out, new);
            prop_assert_eq!(reads.len(), 1);
            if s.kind != Kind::Conv {
                prop_assert_eq!(reads[0], v.reads[0]);
            }
            per_vec4.entry(new.slot).or_default().push((reads[0], v.fp16(), s.kind));
        }
        for (slot, reads) in &per_vec4 {
            // A convergent value read flat may sit in an interpolated vec4 only where
            // the hardware reads one component flat, and only beside its own width.
            let mixable = |k: Kind| k == Kind::ConvFlat && o.mix_convergent_flat && o.convergent_fill;
            let flat = reads.iter().any(|(r, _, k)| *r == Read::Flat && !mixable(*k));
            let interp: Vec<_> = reads.iter().filter(|(r, _, _)| *r != Read::Flat).collect();
            prop_assert!(!flat || interp.is_empty(), "{slot} mixes flat and interpolated");
            let fp16: BTreeSet<bool> = interp.iter().map(|(_, h, _)| *h).collect();
            prop_assert!(fp16.len() <= 1, "{slot} mixes fp16 and fp32 interpolation");
            if let Some((_, h, _)) = interp.first() {
                prop_assert!(reads.iter().all(|(_, w, _)| w == h), "{slot} mixes widths");
            }
            if !o.flexible_interp {
                let modes: BTreeSet<_> = interp.iter().map(|(r, _, _)| *r).collect();
                prop_assert!(modes.len() <= 1, "{slot} mixes modes");
            }
        }

        // Minimal.
        prop_assert_eq!(layout.vec4s.len(), brute_force(&items, &o));
        prop_assert_eq!(layout.consumer_slots, layout.vec4s.len());
    }
}

#[test]
fn brute_force_agrees_with_hand_counts() {
    let o = PackOptions::default();
    let i32_ = |mode| Spec {
        kind: Kind::Interp,
        fp16: false,
        mode,
    };
    let flat = Spec {
        kind: Kind::Flat,
        fp16: false,
        mode: 0,
    };
    // 5 interpolated fp32: two vec4s; 4 of them + 1 flat: two vec4s.
    assert_eq!(brute_force(&[i32_(0); 5], &o), 2);
    assert_eq!(
        brute_force(&[i32_(0), i32_(0), i32_(0), i32_(0), flat], &o),
        2
    );
    // Two modes, strict: two vec4s; flexible: one.
    let strict = PackOptions {
        flexible_interp: false,
        ..o.clone()
    };
    assert_eq!(brute_force(&[i32_(0), i32_(1)], &strict), 2);
    assert_eq!(brute_force(&[i32_(0), i32_(1)], &o), 1);
    // A convergent value read flat fills an interpolated hole only where mixing is on.
    let conv_flat = Spec {
        kind: Kind::ConvFlat,
        ..flat
    };
    let three = [i32_(0), i32_(0), i32_(0), conv_flat];
    assert_eq!(brute_force(&three, &o), 1);
    let unmixed = PackOptions {
        mix_convergent_flat: false,
        ..o.clone()
    };
    assert_eq!(brute_force(&three, &unmixed), 2);
}

/// A VS → GS pair storing `n32` 32-bit and `n16` 16-bit varyings at spread-out
/// addresses, all read by the GS.
fn gs_pair(n32: usize, n16: usize, perm: &[u8]) -> (varysat::ir::Pipeline, Vec<IoSlot>) {
    use varysat::ir::{AluOp, ShaderBuilder, Stage};
    let mut vs = ShaderBuilder::new(Stage::Vertex);
    let mut gs = ShaderBuilder::new(Stage::Geometry);
    let a = vs.load_input(IoSlot::new(Slot::Attr(0), 0));
    let h = vs.alu(AluOp::F2F16, &[a]);
    let k = gs.constant(varysat::ir::BitSize::B32, 1);
    let mut slots = vec![];
    for (i, p) in perm.iter().take(n32 + n16).enumerate() {
        let (n, c) = (p / 4, p % 4);
        let slot = if i < n32 {
            IoSlot::var(n, c)
        } else {
            IoSlot::half(Slot::Var(n), c, Half::Lo)
        };
        vs.store(slot, if i < n32 { a } else { h });
        let x = gs.load_per_vertex(slot, k);
        gs.store(slot, x);
        slots.push(slot);
    }
    gs.effect(varysat::ir::InstKind::EmitVertex);
    (varysat::ir::Pipeline::new(vs.finish(), gs.finish()), slots)
}

proptest! {
    #[test]
    fn non_fs_varyings_pack_densely(
        n32 in 0usize..10,
        n16 in 0usize..10,
        perm in Just((0..128u8).collect::<Vec<_>>()).prop_shuffle(),
        pack16 in any::<bool>(),
    ) {
        let (p, slots) = gs_pair(n32, n16, &perm);
        let o = PackOptions { pack_16bit: pack16, ..PackOptions::default() };
        let (out, l) = pack(&p, &o).unwrap();
        prop_assert!(validate(&out).is_ok(), "{:?}", validate(&out));
        // All flat: 32-bit and 16-bit share vec4s; halves pair when allowed.
        let comps = n32 + if pack16 { n16.div_ceil(2) } else { n16 };
        prop_assert_eq!(l.vec4s.len(), comps.div_ceil(4));
        let targets: BTreeSet<IoSlot> = slots.iter().map(|s| l.map[s]).collect();
        prop_assert_eq!(targets.len(), slots.len());
    }
}
