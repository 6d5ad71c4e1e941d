//! SPIR-V `Location`s that link, by Vulkan's rules, as the importer linked a GLSL
//! pair.
//!
//! GL links the varyings a source did not locate by name (`link.rs`); glslang's
//! `--aml` numbers them per stage, in declaration order, from 0, without skipping
//! the locations the source wrote. So the modules glslang writes can link
//! otherwise on a Vulkan driver (crossed names when the two stages declare their
//! varyings in different orders), or not validly at all (an unlocated varying on an
//! explicitly located one's location). [`relocated`] rewrites such a pair's
//! `Location` decorations to the slots the importer linked, so the modules handed
//! to export (and handed back unchanged when optimization gains nothing at the
//! interface) mean what the imported pipeline means.

use fxhash::FxHashMap;
use rspirv::spirv::StorageClass;

use super::link::{first_location, has_member_locations, varyings, Linked, StageLayout, Varying};
use super::module::{Module, Ty};
use crate::ir::Stage;
use crate::Error;

/// The user varyings of one side of the pair: the producer's outputs or the
/// consumer's inputs, with the slots the importer gave them.
struct Side<'a> {
    m: &'a Module,
    vars: Vec<Varying>,
    layout: &'a StageLayout,
}

impl<'a> Side<'a> {
    fn producer(m: &'a Module, layout: &'a StageLayout) -> Result<Side<'a>, Error> {
        let vars = match m.stage {
            Stage::Fragment => vec![],
            _ => varyings(m, StorageClass::Output)?,
        };
        Ok(Side { m, vars, layout })
    }

    fn consumer(m: &'a Module, layout: &'a StageLayout) -> Result<Side<'a>, Error> {
        let vars = match m.stage {
            Stage::Vertex => vec![],
            _ => varyings(m, StorageClass::Input)?,
        };
        Ok(Side { m, vars, layout })
    }

    /// The cells `v` takes at its SPIR-V location (None without one).
    fn at_location(&self, v: &Varying) -> Option<u128> {
        v.loc.map(|l| cells(self.m, v, l))
    }

    /// The cells `v` takes at the slot the importer linked it to.
    fn at_slot(&self, v: &Varying) -> Option<u128> {
        self.layout
            .io_base
            .get(&v.var)
            .map(|b| cells(self.m, v, *b))
    }

    /// Whether two of this side's varyings share a location and component (or one
    /// has no location): not a valid Vulkan interface.
    fn overlaps(&self) -> bool {
        let mut used = 0u128;
        for v in &self.vars {
            let Some(c) = self.at_location(v) else {
                return true;
            };
            if used & c != 0 {
                return true;
            }
            used |= c;
        }
        false
    }
}

/// The cells (32 locations x 4 components, one bit each) a varying takes from
/// location `base`: a scalar or vector from its `Component` on (a 64-bit element
/// takes two), anything else whole locations.
fn cells(m: &Module, v: &Varying, base: u32) -> u128 {
    let (first, n) = match components(m, v.ty) {
        Some(n) => (u64::from(base) * 4 + u64::from(v.comp), u64::from(n)),
        None => (u64::from(base) * 4, u64::from(v.slots) * 4),
    };
    let (first, end) = (first.min(128), first.saturating_add(n).min(128));
    (first..end).fold(0, |acc, i| acc | 1u128 << i)
}

/// Components of a scalar or vector type (two per 64-bit element); None for others.
fn components(m: &Module, ty: u32) -> Option<u32> {
    let scalar = |t: u32| match m.types.get(&t) {
        Some(Ty::Int { width: 64, .. } | Ty::Float { width: 64 }) => Some(2),
        Some(Ty::Int { .. } | Ty::Float { .. } | Ty::Bool) => Some(1),
        _ => None,
    };
    match m.types.get(&ty)? {
        Ty::Vector { elem, n } => scalar(*elem).map(|w| w * n),
        _ => scalar(ty),
    }
}

/// Whether the modules' own locations link every producer output to the consumer
/// inputs the importer linked it to, at the same relative place, and to no other.
fn links_as_imported(p: &Side, c: &Side) -> bool {
    if p.overlaps() || c.overlaps() {
        return false;
    }
    for o in &p.vars {
        for v in &c.vars {
            let (Some(lo), Some(lv)) = (p.at_location(o), c.at_location(v)) else {
                return false;
            };
            let linked = o.patch == v.patch
                && matches!((p.at_slot(o), c.at_slot(v)), (Some(a), Some(b)) if a & b != 0);
            if (lo & lv != 0) != linked {
                return false;
            }
            let shift = |a: Option<&u32>, b: Option<&u32>| {
                a.zip(b).map(|(a, b)| i64::from(*b) - i64::from(*a))
            };
            let by_location = shift(o.loc.as_ref(), v.loc.as_ref());
            let by_slot = shift(p.layout.io_base.get(&o.var), c.layout.io_base.get(&v.var));
            if linked && by_location != by_slot {
                return false;
            }
        }
    }
    true
}

/// The pair's modules with their varyings' `Location`s set to the importer's slots,
/// when their own locations link otherwise (`Ok(None)` when they link as imported).
/// Per-patch varyings, which GL numbers apart from per-vertex ones but Vulkan does
/// not, are placed after every per-vertex slot of both stages. `Err` names why the
/// modules could not be rewritten (a block type shared by two varyings that need
/// different shifts, a varying without a `Location` decoration).
pub(crate) fn relocated(
    p: &Module,
    c: &Module,
    linked: &Linked,
    words: [&[u8]; 2],
) -> Result<Option<[Vec<u8>; 2]>, String> {
    let text = |e: Error| e.to_string();
    let sp = Side::producer(p, &linked.producer).map_err(text)?;
    let sc = Side::consumer(c, &linked.consumer).map_err(text)?;
    if links_as_imported(&sp, &sc) {
        return Ok(None);
    }
    let patch_base = [&sp, &sc]
        .iter()
        .flat_map(|s| s.vars.iter().filter(|v| !v.patch).map(|v| (*s, v)))
        .filter_map(|(s, v)| s.layout.io_base.get(&v.var).map(|b| b + v.slots))
        .max()
        .unwrap_or(0);
    let pw = rewrite(words[0], &sp, patch_base)?;
    let cw = rewrite(words[1], &sc, patch_base)?;
    // The rewritten modules must link as imported; checked, not assumed.
    let spec = std::collections::BTreeMap::new();
    let p2 = Module::load(&pw, &p.file, &spec).map_err(text)?;
    let c2 = Module::load(&cw, &c.file, &spec).map_err(text)?;
    let sp2 = Side::producer(&p2, &linked.producer).map_err(text)?;
    let sc2 = Side::consumer(&c2, &linked.consumer).map_err(text)?;
    if !links_as_imported(&sp2, &sc2) {
        return Err("the rewritten locations still link otherwise".to_owned());
    }
    Ok(Some([pw, cw]))
}

const OP_DECORATE: u32 = 71;
const OP_MEMBER_DECORATE: u32 = 72;
const LOCATION: u32 = 30;

/// `bytes` (a little-endian module, as glslang writes) with each varying of `side`
/// at its slot (`patch_base` added for per-patch ones): the variable's `Location`
/// set, the member `Location`s of a block whose members carry them shifted alike.
fn rewrite(bytes: &[u8], side: &Side, patch_base: u32) -> Result<Vec<u8>, String> {
    let mut var_loc: FxHashMap<u32, u32> = FxHashMap::default();
    let mut member_shift: FxHashMap<u32, i64> = FxHashMap::default();
    for v in &side.vars {
        let slot = side
            .layout
            .io_base
            .get(&v.var)
            .ok_or("a varying has no slot")?;
        let base = slot + if v.patch { patch_base } else { 0 };
        var_loc.insert(v.var, base);
        if !has_member_locations(side.m, v.ty) {
            continue;
        }
        let shift = i64::from(base) - i64::from(first_location(side.m, v.var));
        if let Some(old) = member_shift.insert(v.ty, shift) {
            if old != shift {
                return Err(format!("block type %{} is shared by two varyings", v.ty));
            }
        }
    }
    if bytes.get(..4) != Some(&0x0723_0203u32.to_le_bytes()[..]) {
        return Err("not a little-endian module".to_owned());
    }
    let mut words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut i = 5;
    while i < words.len() {
        let (n, op) = ((words[i] >> 16) as usize, words[i] & 0xffff);
        let inst = words.get(i..i + n).ok_or("a truncated instruction")?;
        if n == 0 {
            return Err("an instruction of 0 words".to_owned());
        }
        if op == OP_DECORATE && n == 4 && inst[2] == LOCATION {
            if let Some(l) = var_loc.get(&inst[1]) {
                words[i + 3] = *l;
            }
        } else if op == OP_MEMBER_DECORATE && n == 5 && inst[3] == LOCATION {
            if let Some(shift) = member_shift.get(&inst[1]) {
                let moved = i64::from(inst[4]) + shift;
                words[i + 4] = u32::try_from(moved).map_err(|_| "a member location < 0")?;
            }
        }
        i += n;
    }
    Ok(words.iter().flat_map(|w| w.to_le_bytes()).collect())
}

/// Whether a module's own locations put two of its user varyings (outputs of a
/// producer, inputs of a consumer) on one location and component: not a valid
/// Vulkan interface, whatever the importer linked.
pub(crate) fn overlapping_varyings(m: &Module, producer: bool) -> Result<bool, Error> {
    let layout = StageLayout::default();
    let side = if producer {
        Side::producer(m, &layout)?
    } else {
        Side::consumer(m, &layout)?
    };
    Ok(side.overlaps())
}
