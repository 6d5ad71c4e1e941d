//! Slot assignment: places the classified items into vec4 "bins" of one slot family,
//! first-fit in group order, so that every vec4 holds only compatible varyings. Fixed
//! components (indirect arrays) are pre-placed bins whose holes may be filled.

use std::collections::BTreeMap;

use super::groups::{Class, Domain, Group, Item, Key};
use super::varying::{Qual, Varyings};
use super::{LoadRewrite, PackOptions};
use crate::ir::{Half, InterpMode, Slot, Stage};

/// What a vec4 may hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BinKind {
    /// Interpolated varyings of one width and key.
    Interp {
        /// fp16 interpolation.
        fp16: bool,
        /// Qualifier set.
        key: Key,
    },
    /// Flat varyings of both widths.
    Flat,
    /// Outputs the consumer does not read.
    Tail,
    /// A fixed vec4 whose fixed parts impose no kind yet; the first filler decides.
    Open,
    /// A fixed vec4 whose fixed parts disagree: no filling.
    Locked,
}

/// Occupancy of one component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cell {
    /// Unused.
    Free,
    /// Held by something that keeps its place.
    Fixed,
    /// A whole 32-bit component is used.
    Full,
    /// 16-bit halves: which are used.
    Halves {
        /// Low half used.
        lo: bool,
        /// High half used.
        hi: bool,
    },
}

/// One vec4 being filled.
#[derive(Clone, Debug)]
pub(crate) struct Bin {
    /// The vec4 slot.
    pub slot: Slot,
    /// What it holds.
    pub kind: BinKind,
    /// Occupancy by component (x..w).
    pub cells: [Cell; 4],
    /// The group whose varying opened it.
    pub group: Group,
}

impl Bin {
    /// Whether anything is placed or fixed in it.
    pub fn used(&self) -> bool {
        self.cells.iter().any(|c| *c != Cell::Free)
    }
}

/// The slots of one family, in fill order, and the component rotation.
pub(crate) struct Family {
    /// Slots in the order new vec4s are opened.
    pub slots: Vec<Slot>,
    /// Component order: position `p` of a vec4 is component `(p + rot) % 4`.
    pub rot: u8,
}

/// Where one item went.
#[derive(Clone, Debug)]
pub(crate) struct Placed {
    /// Bin slot.
    pub slot: Slot,
    /// Component.
    pub comp: u8,
    /// Half for 16-bit values.
    pub half: Half,
    /// How convergent loads are rewritten.
    pub load: LoadRewrite,
}

/// The result for one family.
pub(crate) struct Packed {
    /// Bins in slot order.
    pub bins: Vec<Bin>,
    /// Placement per item (index into the item list given).
    pub placed: Vec<Placed>,
}

/// A family ran out of slots.
pub(crate) struct Overflow;

/// Packs `items` (already sorted in group order) into `fam`, around `fixed` bins.
pub(crate) fn pack_family(
    fam: &Family,
    fixed: Vec<Bin>,
    items: &[&Item],
    opts: &PackOptions,
) -> Result<Packed, Overflow> {
    let mut st = State {
        fam,
        bins: fixed,
        opts,
    };
    let mut placed = vec![];
    for item in items {
        placed.push(st.place(item)?);
    }
    let order = |s: &Slot| fam.slots.iter().position(|x| x == s);
    st.bins.sort_by_key(|b| order(&b.slot));
    Ok(Packed {
        bins: st.bins,
        placed,
    })
}

struct State<'a> {
    fam: &'a Family,
    bins: Vec<Bin>,
    opts: &'a PackOptions,
}

impl State<'_> {
    fn place(&mut self, item: &Item) -> Result<Placed, Overflow> {
        let tiers = self.tiers(item);
        for tier in &tiers {
            if let Some(p) = self.find(item, tier) {
                return Ok(self.take(item, p));
            }
        }
        let kind = kind_for(item);
        let slot = self.fresh_slot().ok_or(Overflow)?;
        self.bins.push(Bin {
            slot,
            kind,
            cells: [Cell::Free; 4],
            group: item.group(),
        });
        let idx = self.bins.len() - 1;
        let p = self.first_free(idx, item).ok_or(Overflow)?;
        Ok(self.take(item, p))
    }

    /// Bin-kind predicates to try, in order of preference.
    fn tiers(&self, item: &Item) -> Vec<Tier> {
        match &item.class {
            Class::Interp(key) => vec![Tier::Interp(key.clone()), Tier::Open],
            Class::Flat => vec![Tier::Flat, Tier::Open],
            Class::Convergent if self.opts.convergent_fill => {
                vec![Tier::ConvergentInterp, Tier::Flat, Tier::Open]
            }
            Class::Convergent => vec![Tier::Flat, Tier::Open],
            Class::ConvergentFlat => vec![Tier::ConvergentInterp, Tier::Flat, Tier::Open],
            Class::Tail => vec![Tier::Tail],
        }
    }

    fn accepts(&self, tier: &Tier, kind: &BinKind, item: &Item) -> bool {
        match (tier, kind) {
            (Tier::Interp(k), BinKind::Interp { fp16, key }) => *fp16 == item.fp16 && key == k,
            (Tier::ConvergentInterp, BinKind::Interp { fp16, key }) => {
                // Flat reads take no interpolation mode: any such vec4 of their width.
                let flat_reads = item.class == Class::ConvergentFlat;
                *fp16 == item.fp16
                    && (flat_reads || convergent_mode(key, self.opts.flexible_interp).is_some())
            }
            (Tier::Flat, BinKind::Flat) | (Tier::Tail, BinKind::Tail) => true,
            (Tier::Open, BinKind::Open) => true,
            _ => false,
        }
    }

    /// First bin of the tier with room; 16-bit values first look for a half-used
    /// component anywhere so that halves pair up.
    fn find(&self, item: &Item, tier: &Tier) -> Option<Pos> {
        let ok: Vec<usize> = (0..self.bins.len())
            .filter(|i| self.accepts(tier, &self.bins[*i].kind, item))
            .collect();
        let ok = self.sorted(ok);
        if item.fp16 && self.opts.pack_16bit {
            for &i in &ok {
                for p in 0..4u8 {
                    let c = self.comp(p);
                    if let Cell::Halves { lo, hi } = self.bins[i].cells[c as usize] {
                        let free = match (lo, hi) {
                            (true, false) => Some(Half::Hi),
                            (false, true) => Some(Half::Lo),
                            _ => None,
                        };
                        if let Some(half) = free.filter(|h| item.pin.is_none_or(|p| p == *h)) {
                            return Some(Pos {
                                bin: i,
                                comp: c,
                                half,
                            });
                        }
                    }
                }
            }
        }
        ok.into_iter().find_map(|i| self.first_free(i, item))
    }

    fn sorted(&self, mut idx: Vec<usize>) -> Vec<usize> {
        let order = |s: &Slot| self.fam.slots.iter().position(|x| x == s);
        idx.sort_by_key(|i| order(&self.bins[*i].slot));
        idx
    }

    fn comp(&self, p: u8) -> u8 {
        (p + self.fam.rot) % 4
    }

    fn first_free(&self, bin: usize, item: &Item) -> Option<Pos> {
        let b = self.bins.get(bin)?;
        (0..4u8).map(|p| self.comp(p)).find_map(|c| {
            (b.cells[c as usize] == Cell::Free).then_some(Pos {
                bin,
                comp: c,
                half: match (item.fp16, item.pin) {
                    (false, _) => Half::Full,
                    (true, pin) => pin.unwrap_or(Half::Lo),
                },
            })
        })
    }

    fn fresh_slot(&self) -> Option<Slot> {
        self.fam
            .slots
            .iter()
            .copied()
            .find(|s| self.bins.iter().all(|b| b.slot != *s))
    }

    fn take(&mut self, item: &Item, pos: Pos) -> Placed {
        let pack16 = self.opts.pack_16bit;
        let flexible = self.opts.flexible_interp;
        let bin = &mut self.bins[pos.bin];
        if bin.kind == BinKind::Open {
            bin.kind = kind_for(item);
        }
        let cell = &mut bin.cells[pos.comp as usize];
        *cell = match (*cell, pos.half) {
            (Cell::Halves { hi, .. }, Half::Lo) => Cell::Halves { lo: true, hi },
            (Cell::Halves { lo, .. }, Half::Hi) => Cell::Halves { lo, hi: true },
            (Cell::Free, h) if pack16 && h != Half::Full => Cell::Halves {
                lo: h == Half::Lo,
                hi: h == Half::Hi,
            },
            _ => Cell::Full,
        };
        let load = match (&item.class, &bin.kind) {
            (Class::Convergent, BinKind::Interp { key, .. }) => {
                match convergent_mode(key, flexible) {
                    Some(Some(mode)) => LoadRewrite::Interp(mode),
                    _ => LoadRewrite::KeepInterp,
                }
            }
            (Class::Convergent, _) => LoadRewrite::Flat,
            _ => LoadRewrite::Keep,
        };
        Placed {
            slot: bin.slot,
            comp: pos.comp,
            half: pos.half,
            load,
        }
    }
}

/// The kind of a vec4 opened by (or adopting) `item`: convergent values open flat ones.
fn kind_for(item: &Item) -> BinKind {
    match &item.class {
        Class::Interp(key) => BinKind::Interp {
            fp16: item.fp16,
            key: key.clone(),
        },
        Class::Tail => BinKind::Tail,
        _ => BinKind::Flat,
    }
}

/// The mode a convergent varying's loads take in a vec4 of `key`: `Some(None)` keeps
/// its own interpolated loads (flexible interpolation), `Some(Some(m))` rewrites them
/// to `m`, `None` means it may not join (flat members, or only modes that need
/// per-load operands).
pub(crate) fn convergent_mode(key: &Key, flexible: bool) -> Option<Option<InterpMode>> {
    let colour = |q: &Qual| matches!(q, Qual::Interp(m) if m.interp == crate::ir::Interp::Color);
    if key.contains(&Qual::Flat) || key.iter().any(colour) {
        return None;
    }
    if flexible {
        return key.contains(&Qual::AnyInterp).then_some(None);
    }
    key.iter().find_map(|q| match q {
        Qual::Interp(m) if m.operand_count() == 0 => Some(Some(*m)),
        _ => None,
    })
}

#[derive(Clone, Debug)]
enum Tier {
    Interp(Key),
    ConvergentInterp,
    Flat,
    Tail,
    Open,
}

#[derive(Clone, Copy, Debug)]
struct Pos {
    bin: usize,
    comp: u8,
    half: Half,
}

/// The fill order of a family's slots.
pub(crate) fn family(domain: Domain, rot: u8) -> Family {
    let slots = match domain {
        Domain::Var => (0..32).map(Slot::Var).collect(),
        Domain::Patch => (0..32).map(Slot::Patch).collect(),
        Domain::Color => vec![Slot::Col(0), Slot::Col(1)],
    };
    Family { slots, rot }
}

/// Pre-placed bins for the fixed components of a family, with the kind their
/// consumer loads impose.
pub(crate) fn fixed_bins(
    domain: Domain,
    vars: &Varyings,
    consumer: Stage,
    opts: &PackOptions,
) -> Vec<Bin> {
    let fam = family(domain, 0);
    let mut bins: BTreeMap<usize, Bin> = BTreeMap::new();
    for &(slot, comp) in &vars.fixed {
        let Some(idx) = fam.slots.iter().position(|s| *s == slot) else {
            continue;
        };
        let kind = fixed_kind(vars, (slot, comp), consumer, opts);
        let bin = bins.entry(idx).or_insert(Bin {
            slot,
            kind: BinKind::Open,
            cells: [Cell::Free; 4],
            group: Group::Fixed,
        });
        if let Some(c) = bin.cells.get_mut(comp as usize) {
            *c = Cell::Fixed;
        }
        bin.kind = join(&bin.kind, &kind);
    }
    bins.into_values().collect()
}

fn fixed_kind(vars: &Varyings, comp: (Slot, u8), consumer: Stage, opts: &PackOptions) -> BinKind {
    let Some(quals) = vars.comp_quals.get(&comp) else {
        return BinKind::Open;
    };
    let interpolated = quals.iter().any(|q| *q != Qual::Flat);
    if consumer != Stage::Fragment || !interpolated {
        return BinKind::Flat;
    }
    BinKind::Interp {
        fp16: vars.comp_half.contains(&comp),
        key: super::groups::normalize(quals, opts.flexible_interp),
    }
}

fn join(a: &BinKind, b: &BinKind) -> BinKind {
    match (a, b) {
        (BinKind::Open, k) | (k, BinKind::Open) => k.clone(),
        (x, y) if x == y => x.clone(),
        _ => BinKind::Locked,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Interp, InterpLoc};

    fn key(q: &[Qual]) -> Key {
        q.iter().copied().collect()
    }

    #[test]
    fn convergent_values_join_only_operand_free_interpolated_vec4s() {
        let pc = InterpMode::PERSP_CENTER;
        let off = InterpMode {
            interp: Interp::Persp,
            loc: InterpLoc::AtOffset,
        };
        assert_eq!(convergent_mode(&key(&[Qual::AnyInterp]), true), Some(None));
        assert_eq!(
            convergent_mode(&key(&[Qual::Interp(pc)]), false),
            Some(Some(pc))
        );
        assert_eq!(convergent_mode(&key(&[Qual::Interp(off)]), false), None);
        assert_eq!(
            convergent_mode(&key(&[Qual::Interp(off), Qual::Interp(pc)]), false),
            Some(Some(pc))
        );
        assert_eq!(
            convergent_mode(&key(&[Qual::AnyInterp, Qual::Flat]), true),
            None
        );
    }

    #[test]
    fn fixed_kinds_join_to_locked_when_they_disagree() {
        let interp = BinKind::Interp {
            fp16: false,
            key: key(&[Qual::AnyInterp]),
        };
        assert_eq!(join(&BinKind::Open, &interp), interp);
        assert_eq!(join(&interp, &interp), interp);
        assert_eq!(join(&interp, &BinKind::Flat), BinKind::Locked);
    }
}
