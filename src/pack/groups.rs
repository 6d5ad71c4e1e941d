//! Classification of the movable varyings into the packing groups of reference/000 §7:
//! which family of slots a varying lives in (VARn, PATCHn, colours), and whether it is
//! interpolated, flat, convergent or stored only for transform feedback / read-back.

use std::collections::{BTreeMap, BTreeSet};

use super::varying::{Access, Qual, Varyings};
use super::PackOptions;
use crate::ir::{Half, IoSlot, Pipeline, Slot, SlotClass, Stage};

/// A packing group, in the order the packer fills slots (reference/000 §7). The
/// variant a vec4 is reported under is the group of the varying that opened it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Group {
    /// 32-bit interpolated (fp32) varyings.
    Interp32,
    /// 32-bit flat varyings (all varyings of non-FS consumers are flat).
    Flat32,
    /// 32-bit convergent varyings: read interpolated, but equal on all vertices.
    Convergent32,
    /// 16-bit interpolated (fp16) varyings.
    Interp16,
    /// 16-bit flat varyings.
    Flat16,
    /// 16-bit convergent varyings.
    Convergent16,
    /// 32-bit outputs the consumer does not read (xfb capture or TCS read-back).
    XfbOnly32,
    /// 16-bit outputs the consumer does not read.
    XfbOnly16,
    /// Indirectly indexed arrays and other components that keep their place.
    Fixed,
}

/// The slot family a varying is packed within.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Domain {
    /// VARn (and FOGC, PNTC, GS→FS PRIMITIVE_ID moved into VARn).
    Var,
    /// PATCHn.
    Patch,
    /// COLn/BFCn.
    Color,
}

/// The set of qualifiers a vec4 may hold (flexible interpolation folds the modes).
pub(crate) type Key = BTreeSet<Qual>;

/// How a varying may be placed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Class {
    /// Read interpolated (maybe also flat): only beside varyings of the same key.
    Interp(Key),
    /// Read flat only.
    Flat,
    /// Read interpolated but convergent: fits interpolated holes or flat vec4s.
    Convergent,
    /// Read flat only and convergent, where the hardware may read a flat component of
    /// an interpolated vec4 ([`PackOptions::mix_convergent_flat`]): fits interpolated
    /// holes (its loads stay flat) or flat vec4s.
    ConvergentFlat,
    /// Stored but not read by the consumer.
    Tail,
}

/// One thing to place: a scalar varying, or a colour channel (COLn and BFCn of the
/// same component move together, since the consumer may select either).
#[derive(Clone, Debug)]
pub(crate) struct Item {
    /// The addresses that move together; `members[0]` names the item.
    pub members: Vec<IoSlot>,
    /// Slot family.
    pub domain: Domain,
    /// Whether the value is 16-bit.
    pub fp16: bool,
    /// Placement class.
    pub class: Class,
    /// The half a 16-bit value must keep: transform feedback captures a high half two
    /// bytes further than a low one, so a captured value may not change halves.
    pub pin: Option<Half>,
}

impl Item {
    /// The report group.
    pub fn group(&self) -> Group {
        match (&self.class, self.fp16) {
            (Class::Interp(_), false) => Group::Interp32,
            (Class::Interp(_), true) => Group::Interp16,
            (Class::Flat, false) => Group::Flat32,
            (Class::Flat, true) => Group::Flat16,
            (Class::Convergent | Class::ConvergentFlat, false) => Group::Convergent32,
            (Class::Convergent | Class::ConvergentFlat, true) => Group::Convergent16,
            (Class::Tail, false) => Group::XfbOnly32,
            (Class::Tail, true) => Group::XfbOnly16,
        }
    }

    /// Sort key: group order, then key (so one mode's varyings stay together), then name.
    pub fn order(&self) -> (Group, Option<Key>, IoSlot) {
        let key = match &self.class {
            Class::Interp(k) => Some(k.clone()),
            _ => None,
        };
        (self.group(), key, self.members[0])
    }
}

/// The family a slot is packed in, or `None` when it keeps its place (TEXn, system
/// values, tessellation levels, PRIMITIVE_ID other than GS→FS, PNTC read by an FS:
/// the rasterizer supplies those two).
pub(crate) fn domain_of(slot: Slot, p: &Pipeline) -> Option<Domain> {
    if p.consumer.stage() != Stage::Fragment {
        // Into a TCS, TES or GS every slot but the tessellation levels is plain data
        // and packs with VARn (Mesa relocates legacy slots to VARn there).
        return match slot.class() {
            SlotClass::Patch => Some(Domain::Patch),
            SlotClass::TessLevel | SlotClass::Attribute | SlotClass::FragResult => None,
            _ => Some(Domain::Var),
        };
    }
    if slot == Slot::Pntc {
        return None;
    }
    match slot.class() {
        SlotClass::Generic if slot == Slot::PrimitiveId => {
            let gs_fs =
                p.producer.stage() == Stage::Geometry && p.consumer.stage() == Stage::Fragment;
            gs_fs.then_some(Domain::Var)
        }
        SlotClass::Generic => Some(Domain::Var),
        SlotClass::Patch => Some(Domain::Patch),
        SlotClass::Color => Some(Domain::Color),
        _ => None,
    }
}

/// Folds the interpolation modes together when they may share a vec4.
pub(crate) fn normalize(quals: &BTreeSet<Qual>, flexible: bool) -> Key {
    quals
        .iter()
        .map(|q| match q {
            // Shade-model colours keep a vec4 of their own, as in Mesa
            // (`FS_VEC4_TYPE_INTERP_COLOR`).
            Qual::Interp(m) if flexible && m.interp != crate::ir::Interp::Color => Qual::AnyInterp,
            q => *q,
        })
        .collect()
}

/// What happens to one movable address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Crosses to the consumer: placed.
    Live,
    /// Stored for xfb or read back only: kept (xfb-only values placed last).
    Tail,
    /// Stored but never observed: stores removed.
    Dead,
    /// Read but never stored: loads become undef.
    Undefined,
}

/// The fate of an address from its accesses.
pub(crate) fn fate(a: &Access) -> Fate {
    if a.live() {
        Fate::Live
    } else if a.stores > 0 && (a.xfb || a.readback) {
        Fate::Tail
    } else if a.stores > 0 {
        Fate::Dead
    } else if a.readback || !a.quals.is_empty() {
        Fate::Undefined
    } else {
        Fate::Dead
    }
}

/// Builds the items to place from the pair's usage.
pub(crate) fn classify(
    p: &Pipeline,
    vars: &Varyings,
    convergent: &BTreeSet<IoSlot>,
    opts: &PackOptions,
) -> Vec<Item> {
    let fs = p.consumer.stage() == Stage::Fragment;
    let mut colours: BTreeMap<(u8, u8, Half), Vec<IoSlot>> = BTreeMap::new();
    let mut items = vec![];
    for (slot, a) in &vars.access {
        let Some(domain) = domain_of(slot.slot, p) else {
            continue;
        };
        if vars.is_fixed(*slot) || !matches!(fate(a), Fate::Live | Fate::Tail) {
            continue;
        }
        if domain == Domain::Color {
            let n = match slot.slot {
                Slot::Col(n) | Slot::Bfc(n) => n,
                _ => 0,
            };
            colours
                .entry((n, slot.comp, slot.half))
                .or_default()
                .push(*slot);
            continue;
        }
        // A load at an offset or sample keeps its form: the optimizer leaves such
        // slots exactly as written, so packing must not turn them flat either.
        let per_load_operands = a
            .quals
            .iter()
            .any(|q| matches!(q, Qual::Interp(m) if m.operand_count() > 0));
        let conv = domain == Domain::Var && convergent.contains(slot) && !per_load_operands;
        items.push(make_item(vec![*slot], domain, vars, fs, conv, opts));
    }
    for (_, members) in colours {
        items.push(make_item(members, Domain::Color, vars, fs, false, opts));
    }
    items.sort_by_key(Item::order);
    items
}

fn make_item(
    members: Vec<IoSlot>,
    domain: Domain,
    vars: &Varyings,
    fs: bool,
    convergent: bool,
    opts: &PackOptions,
) -> Item {
    let fp16 = members.first().is_some_and(|m| m.half != Half::Full);
    let live: Vec<&Access> = members
        .iter()
        .filter_map(|m| vars.access.get(m))
        .filter(|a| a.live())
        .collect();
    let quals: BTreeSet<Qual> = live.iter().flat_map(|a| a.quals.iter().copied()).collect();
    let interpolated = quals.iter().any(|q| *q != Qual::Flat);
    let captured = members
        .iter()
        .any(|m| vars.access.get(m).is_some_and(|a| a.xfb));
    // Only an FS has groups for values it never reads (reference/000 §7: the
    // transform-feedback-only ones, packed last); into any other stage every value
    // packs flat, so an output only its TCS reads back fills a flat vec4's hole
    // instead of opening a vec4 of its own.
    let class = if live.is_empty() && (fs || captured) {
        Class::Tail
    } else if !fs {
        Class::Flat
    } else if !interpolated {
        match convergent && opts.convergent_fill && opts.mix_convergent_flat {
            true => Class::ConvergentFlat,
            false => Class::Flat,
        }
    } else if convergent {
        Class::Convergent
    } else {
        Class::Interp(normalize(&quals, opts.flexible_interp))
    };
    let pin = members.first().filter(|_| fp16 && captured).map(|m| m.half);
    Item {
        members,
        domain,
        fp16,
        class,
        pin,
    }
}
