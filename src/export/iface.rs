//! The varying interface of an exported pair. A pair-level [`Plan`] gives every
//! user varying component (one `IoSlot`) a location, a component and a type both
//! stages agree on; [`StageIo`] declares, per stage, the variables the body reads
//! and writes: one scalar variable per varying component (arrayed per vertex where
//! the stage is), built-ins for the system slots, and the original vertex
//! attributes and fragment outputs, which are kept as they were.

use std::collections::{BTreeMap, BTreeSet};

use rspirv::spirv::{BuiltIn, Capability, Decoration, StorageClass};

use super::context::fail;
use super::globals::Globals;
use crate::import::link::StageLayout;
use crate::import::module::{Module, Ty};
use crate::ir::{
    walk, AluOp, BitSize, Half, InstKind, Interp, InterpLoc, IoSlot, LoopPhi, Pipeline, Shader,
    Slot, Stage, StageInfo, Stmt, SystemValue, Value, Visit,
};
use crate::Error;

/// How a value is typed in SPIR-V where it is declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Num {
    /// Floating point.
    Float,
    /// Unsigned integer.
    Uint,
    /// Signed integer.
    Sint,
    /// Boolean.
    Bool,
}

/// A declared scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Scalar {
    /// Numeric kind.
    pub num: Num,
    /// Width in bits.
    pub bits: u32,
}

impl Scalar {
    /// The SPIR-V type id.
    pub fn ty(self, g: &mut Globals) -> u32 {
        match self.num {
            Num::Float => g.float(self.bits),
            Num::Uint => g.uint(self.bits),
            Num::Sint => g.int_ty(self.bits, true),
            Num::Bool => g.boolean(),
        }
    }
}

const F32: Scalar = Scalar {
    num: Num::Float,
    bits: 32,
};
const I32: Scalar = Scalar {
    num: Num::Sint,
    bits: 32,
};

/// What the pair knows about one user varying component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CompInfo {
    bits: BitSize,
    /// The consumer interpolates it (declared float with this mode).
    interp: Option<(Interp, InterpLoc)>,
    /// The consumer is a fragment shader that reads it flat.
    flat: bool,
}

/// The pair's varying layout.
pub(crate) struct Plan {
    comps: BTreeMap<IoSlot, CompInfo>,
    locs: BTreeMap<(Slot, bool), u32>,
    /// Locations of the components whose interpolation differs from the first
    /// component's of their slot, by slot, half and interpolation.
    split: Split,
    /// Dynamically indexed arrays: per (patch, component), disjoint slot ranges.
    arrays: Arrays,
    clip_len: u32,
    cull_len: u32,
    /// The producer's transform feedback captures.
    pub xfb: super::xfb::Captures,
    /// Components declared float though nothing interpolates them (see
    /// [`float_outputs`]); every other non-interpolated one is `uint`.
    floats: BTreeSet<IoSlot>,
}

/// Whether a slot is carried by a SPIR-V built-in rather than a located variable.
pub(crate) fn is_builtin_slot(s: Slot) -> bool {
    matches!(
        s,
        Slot::Pos
            | Slot::Psiz
            | Slot::ClipDist(_)
            | Slot::CullDist(_)
            | Slot::Layer
            | Slot::Viewport
            | Slot::PrimitiveId
            | Slot::TessLevelOuter
            | Slot::TessLevelInner
            | Slot::Depth
            | Slot::SampleMask
            | Slot::ViewportMask
    )
}

fn is_user_varying(s: Slot) -> bool {
    s.is_varying() && !is_builtin_slot(s)
}

/// One I/O access of a shader: slot, bits, interpolation, indirect.
struct Access {
    slot: IoSlot,
    bits: BitSize,
    interp: Option<(Interp, InterpLoc)>,
    flat_load: bool,
    /// Length of the dynamically indexed array the access starts, if any.
    indirect: Option<u8>,
    output: bool,
}

fn accesses(s: &Shader) -> Vec<Access> {
    let mut out = vec![];
    let fs = s.stage() == Stage::Fragment;
    s.for_each_inst(|i| {
        let rbits = i.result.map(|r| s.bits(r));
        let output = matches!(
            i.kind,
            InstKind::StoreOutput { .. }
                | InstKind::StorePerVertexOutput { .. }
                | InstKind::LoadOutput { .. }
        );
        let loaded = match &i.kind {
            InstKind::LoadOutput { slot, indirect, .. }
            | InstKind::LoadPerVertexInput { slot, indirect, .. } => Some((
                *slot,
                rbits.unwrap_or(BitSize::B32),
                None,
                false,
                indirect.map(|i| i.len),
            )),
            InstKind::LoadInput { slot, indirect } => Some((
                *slot,
                rbits.unwrap_or(BitSize::B32),
                None,
                fs,
                indirect.map(|i| i.len),
            )),
            InstKind::LoadInterpolatedInput {
                slot,
                mode,
                indirect,
                ..
            } => Some((
                *slot,
                rbits.unwrap_or(BitSize::B32),
                Some((mode.interp, mode.loc)),
                false,
                indirect.map(|i| i.len),
            )),
            _ => None,
        };
        let stored = i.kind.output_store().map(|(slot, value, indirect)| {
            (slot, s.bits(value), None, false, indirect.map(|i| i.len))
        });
        let Some((slot, bits, interp, flat_load, indirect)) = stored.or(loaded) else {
            return;
        };
        out.push(Access {
            slot,
            bits,
            interp,
            flat_load,
            indirect,
            output,
        });
    });
    out
}

impl Plan {
    /// Lays out the varyings both stages of `pipe` touch.
    pub fn new(pipe: &Pipeline) -> Result<Plan, Error> {
        let mut comps: BTreeMap<IoSlot, CompInfo> = BTreeMap::new();
        let mut arrays = Arrays::new();
        let (mut clip_len, mut cull_len) = (0, 0);
        let mut read = BTreeSet::new();
        for (shader, consumer) in [(&pipe.producer, false), (&pipe.consumer, true)] {
            for a in accesses(shader) {
                if a.output == consumer {
                    continue;
                }
                let s = a.slot.slot;
                if let Some(len) = a.indirect {
                    add_range(&mut arrays, shader.stage(), a.slot, len)?;
                }
                let top = a.slot.comp as u32 + 1;
                match s {
                    Slot::ClipDist(hi) => clip_len = clip_len.max(top + 4 * hi as u32),
                    Slot::CullDist(hi) => cull_len = cull_len.max(top + 4 * hi as u32),
                    _ => {}
                }
                if !is_user_varying(s) {
                    continue;
                }
                if consumer {
                    read.insert(a.slot);
                }
                let e = comps.entry(a.slot).or_insert(CompInfo {
                    bits: a.bits,
                    interp: None,
                    flat: false,
                });
                if e.bits != a.bits {
                    return Err(fail(format!(
                        "{} is accessed as {}-bit and {}-bit",
                        a.slot,
                        e.bits.bits(),
                        a.bits.bits()
                    )));
                }
                if !consumer || pipe.consumer.stage() != Stage::Fragment {
                    continue;
                }
                merge_interp(e, &a)?;
            }
        }
        merge_arrays(&arrays, &mut comps)?;
        let (locs, split) = locations(&comps, &arrays);
        check_split(&arrays, &comps, &split)?;
        let mut plan = Plan {
            locs,
            split,
            arrays,
            comps,
            clip_len,
            cull_len,
            xfb: super::xfb::Captures::default(),
            floats: BTreeSet::new(),
        };
        plan.floats = float_outputs(&plan, pipe, &read);
        Ok(plan)
    }

    /// The dynamically indexed array holding `s`: its first slot index and length.
    pub fn array_of(&self, s: IoSlot) -> Option<(u8, u8)> {
        let (patch, n) = range_key(s)?;
        let r = self.arrays.get(&(patch, s.comp))?;
        r.iter()
            .find(|(a, b)| (*a..*b).contains(&n))
            .map(|(a, b)| (*a, b - a))
    }

    /// The first location after every location of the plan.
    fn end(&self) -> u32 {
        self.locs
            .values()
            .chain(self.split.values())
            .map(|l| l + 1)
            .max()
            .unwrap_or(0)
    }

    /// Location and component of a user varying component.
    fn place(&self, s: IoSlot) -> Option<(u32, u32)> {
        let hi = s.half == Half::Hi;
        let class = self.comps.get(&s).and_then(|c| c.interp);
        if let Some(loc) = self.split.get(&(s.slot, hi, class)) {
            return Some((*loc, s.comp as u32));
        }
        let loc = self.locs.get(&(s.slot, hi))?;
        Some((*loc, s.comp as u32))
    }
}

/// The components declared with the float type of the values stored to them
/// although no consumer interpolates them: the producer stores only floats to
/// each (constants and undefined values count as either; at least one store is
/// computed as a float, see [`float_values`]), the consumer never reads it
/// (transform feedback only, or kept for a stage outside the pair) or reads it
/// flat and only as a float ([`flat_float_reads`]), it is no element of a
/// dynamically indexed array, and every component sharing its location is
/// interpolated or qualifies too (GLSL 4.60, 4.4.1: aliases of a location share
/// one numeric type; one type per location keeps to that). Declaring such an
/// output `uint` would make a capture of it read as an integer (an application
/// or a comparison would then take float rounding as a different value), and a
/// driver see an integer varying. Both stages declare from this one set, so the
/// interface matches.
fn float_outputs(plan: &Plan, pipe: &Pipeline, read: &BTreeSet<IoSlot>) -> BTreeSet<IoSlot> {
    let producer = &pipe.producer;
    let (floats, neutral) = float_values(producer);
    let flat_reads = flat_float_reads(&pipe.consumer);
    // Per slot: whether every store so far is a float (or neutral), and whether one is.
    let mut stores: BTreeMap<IoSlot, (bool, bool)> = BTreeMap::new();
    producer.for_each_inst(|i| {
        let Some((slot, value, indirect)) = i.kind.output_store() else {
            return;
        };
        let float = floats.contains(&value) && indirect.is_none();
        let e = stores.entry(slot).or_insert((true, false));
        e.0 &= float || neutral.contains(&value);
        e.1 |= float;
    });
    let qualifies = |s: &IoSlot| {
        let c = plan.comps[s];
        c.interp.is_none()
            && (!read.contains(s) || flat_reads.contains(s))
            && !in_array(&plan.arrays, *s)
            && stores.get(s) == Some(&(true, true))
    };
    // Per location: whether every component there is float (interpolated, or
    // qualifies).
    let mut by_loc: BTreeMap<(bool, u32), bool> = BTreeMap::new();
    for s in plan.comps.keys() {
        if let Some((loc, _)) = plan.place(*s) {
            let e = by_loc.entry((s.slot.is_patch(), loc)).or_insert(true);
            *e &= plan.comps[s].interp.is_some() || qualifies(s);
        }
    }
    plan.comps
        .keys()
        .filter(|s| plan.comps[s].interp.is_none())
        .filter(|s| {
            plan.place(**s)
                .is_some_and(|(loc, _)| by_loc[&(s.slot.is_patch(), loc)])
        })
        .copied()
        .collect()
}

/// The input components a fragment shader reads flat and only as floats: every
/// read of one is a direct `load_input`, and every use of what it loads is an ALU
/// op that reads its sources as floats (`AluOp::reads_float`). Any other use (an
/// integer op, a select, a phi, a store, an opaque operation) keeps the component
/// out: its value is then used as bits the producer need not have computed as a
/// float. Other consumers read nothing flat: empty.
fn flat_float_reads(consumer: &Shader) -> BTreeSet<IoSlot> {
    if consumer.stage() != Stage::Fragment {
        return BTreeSet::new();
    }
    let mut loads: BTreeMap<Value, IoSlot> = BTreeMap::new();
    let mut other: BTreeSet<IoSlot> = BTreeSet::new();
    consumer.for_each_inst(|i| match (&i.kind, i.result) {
        (
            InstKind::LoadInput {
                slot,
                indirect: None,
            },
            Some(r),
        ) => {
            loads.insert(r, *slot);
        }
        _ => other.extend(i.kind.direct_input_slot()),
    });
    let mut bad: BTreeSet<IoSlot> = other;
    let mut use_of = |v: &Value, float: bool| {
        if let (Some(s), false) = (loads.get(v), float) {
            bad.insert(*s);
        }
    };
    for visit in walk(&consumer.body) {
        let Visit::Enter(stmt) = visit else { continue };
        match stmt {
            Stmt::Inst(i) => {
                let float = matches!(&i.kind, InstKind::Alu { op, .. } if op.reads_float());
                i.kind.operands().iter().for_each(|v| use_of(v, float));
            }
            Stmt::If { cond, phis, .. } => {
                use_of(cond, false);
                for p in phis {
                    use_of(&p.then_val, false);
                    use_of(&p.else_val, false);
                }
            }
            Stmt::Loop { phis, .. } => phis.iter().for_each(|p| use_of(&p.init, false)),
            Stmt::Continue { args, .. } => args.iter().for_each(|v| use_of(v, false)),
            Stmt::Break { .. } => {}
        }
    }
    loads.into_values().filter(|s| !bad.contains(s)).collect()
}

/// Each phi of `s` with the values that reach it: an `if`'s then- and else-values,
/// a loop header's initial value and every `continue` argument for it.
fn phi_sources(s: &Shader) -> BTreeMap<Value, Vec<Value>> {
    let mut srcs: BTreeMap<Value, Vec<Value>> = BTreeMap::new();
    let mut loops: Vec<&[LoopPhi]> = vec![];
    for visit in walk(&s.body) {
        match visit {
            Visit::Enter(Stmt::If { phis, .. }) => {
                for p in phis {
                    srcs.entry(p.dst)
                        .or_default()
                        .extend([p.then_val, p.else_val]);
                }
            }
            Visit::Enter(Stmt::Loop { phis, .. }) => {
                for p in phis {
                    srcs.entry(p.dst).or_default().push(p.init);
                }
                loops.push(phis);
            }
            Visit::Leave(Stmt::Loop { .. }) => {
                loops.pop();
            }
            Visit::Enter(Stmt::Continue { args, .. }) => {
                for (p, a) in loops.last().into_iter().flat_map(|l| l.iter()).zip(args) {
                    srcs.entry(p.dst).or_default().push(*a);
                }
            }
            _ => {}
        }
    }
    srcs
}

/// The values of `s` the exporter computes as floats: results of float ALU ops
/// (`AluOp::yields_float`), interpolated inputs, opaque operations with a float
/// result, and moves, selects and phis of such values (constants neutral; a phi
/// counts every value that reaches it, [`phi_sources`]). Loops make that a
/// fixed point: the set only grows, pass by pass, until a pass adds nothing. Also
/// returns the constants and undefined values.
fn float_values(s: &Shader) -> (BTreeSet<Value>, BTreeSet<Value>) {
    let phis = phi_sources(s);
    let mut out = BTreeSet::new();
    let mut consts = BTreeSet::new();
    let floats_of = |vals: &[Value], out: &BTreeSet<Value>, consts: &BTreeSet<Value>| {
        vals.iter().all(|v| out.contains(v) || consts.contains(v))
            && vals.iter().any(|v| out.contains(v))
    };
    loop {
        let before = out.len();
        // Program order: a value's definition comes before its uses.
        s.for_each_inst(|i| {
            let Some(r) = i.result else { return };
            let float = match &i.kind {
                InstKind::Const(_) | InstKind::Undef => {
                    consts.insert(r);
                    false
                }
                InstKind::LoadInterpolatedInput { .. } => true,
                InstKind::Opaque { op, .. } => op.result.is_some_and(|(t, _)| t.scalar.is_float()),
                InstKind::Alu { op, srcs, .. } => match op {
                    AluOp::Mov => floats_of(srcs, &out, &consts),
                    AluOp::BCsel => floats_of(&srcs[1..], &out, &consts),
                    _ => op.yields_float(),
                },
                _ => false,
            };
            if float {
                out.insert(r);
            }
        });
        for (dst, vals) in &phis {
            if floats_of(vals, &out, &consts) {
                out.insert(*dst);
            }
        }
        if out.len() == before {
            return (out, consts);
        }
    }
}

/// Dynamically indexed ranges of the pair's varyings: per (patch, component),
/// disjoint `[first, end)` slot index ranges. Each exports as one array variable
/// at the first slot's location and the component, indexed dynamically.
type Arrays = BTreeMap<(bool, u8), Vec<(u8, u8)>>;

/// The family and slot index of a slot that may be indexed dynamically.
fn range_key(s: IoSlot) -> Option<(bool, u8)> {
    match (s.slot, s.half) {
        (Slot::Var(n), Half::Full) => Some((false, n)),
        (Slot::Patch(n), Half::Full) => Some((true, n)),
        _ => None,
    }
}

/// Adds the range an access with a dynamic index covers, merging overlaps.
fn add_range(arrays: &mut Arrays, stage: Stage, s: IoSlot, len: u8) -> Result<(), Error> {
    let (patch, n) = range_key(s).ok_or_else(|| {
        fail(format!(
            "{stage}: dynamically indexed {s} is not exported (only 32-bit VARn and PATCHn arrays are)"
        ))
    })?;
    let end = n
        .checked_add(len)
        .ok_or_else(|| fail(format!("dynamically indexed {s}: the array is too long")))?;
    let r = arrays.entry((patch, s.comp)).or_default();
    let (mut a, mut b) = (n, end);
    r.retain(|(x, y)| {
        let overlap = *x < b && a < *y;
        if overlap {
            a = a.min(*x);
            b = b.max(*y);
        }
        !overlap
    });
    r.push((a, b));
    r.sort_unstable();
    Ok(())
}

/// The elements of one array variable are typed and interpolated alike: every
/// accessed element takes the merged description (an element only the producer
/// stores directly has no interpolation of its own); elements of different
/// widths, or read flat and interpolated, are refused.
fn merge_arrays(arrays: &Arrays, comps: &mut BTreeMap<IoSlot, CompInfo>) -> Result<(), Error> {
    for ((patch, comp), ranges) in arrays {
        for (a, b) in ranges {
            let slots: Vec<IoSlot> = (*a..*b)
                .map(|n| IoSlot::new(if *patch { Slot::Patch(n) } else { Slot::Var(n) }, *comp))
                .filter(|s| comps.contains_key(s))
                .collect();
            let mut merged: Option<CompInfo> = None;
            for s in &slots {
                let c = comps[s];
                let m = merged.get_or_insert(c);
                let clash = m.bits != c.bits
                    || matches!((m.interp, c.interp), (Some(x), Some(y)) if x != y)
                    || ((m.flat || c.flat) && (m.interp.is_some() || c.interp.is_some()));
                if clash {
                    return Err(fail(format!(
                        "dynamically indexed array elements of {s} differ in type or interpolation"
                    )));
                }
                m.interp = m.interp.or(c.interp);
                m.flat |= c.flat;
            }
            if let Some(m) = merged {
                for s in slots {
                    comps.insert(s, m);
                }
            }
        }
    }
    Ok(())
}

/// Whether `s` is an element of a dynamically indexed array.
fn in_array(arrays: &Arrays, s: IoSlot) -> bool {
    let Some((patch, n)) = range_key(s) else {
        return false;
    };
    arrays
        .get(&(patch, s.comp))
        .is_some_and(|r| r.iter().any(|(a, b)| (*a..*b).contains(&n)))
}

/// No element of an array may be split off by interpolation (one variable at
/// its slot's location): two arrays in one slot read with different modes.
fn check_split(
    arrays: &Arrays,
    comps: &BTreeMap<IoSlot, CompInfo>,
    split: &Split,
) -> Result<(), Error> {
    for (s, c) in comps.iter().filter(|(s, _)| in_array(arrays, **s)) {
        if split.contains_key(&(s.slot, false, c.interp)) {
            return Err(fail(format!(
                "dynamically indexed {s} shares its slot with another array read with another interpolation"
            )));
        }
    }
    Ok(())
}

/// Records how the fragment shader reads a component: the declared mode is the
/// one of plain (centre, centroid, sample) loads; at-offset/at-sample loads only
/// fix perspective vs linear.
fn merge_interp(e: &mut CompInfo, a: &Access) -> Result<(), Error> {
    if a.flat_load {
        e.flat = true;
    }
    if let Some((interp, loc)) = a.interp {
        if interp == Interp::Color {
            // Vulkan has no shade model: neither `smooth` nor `flat` says it.
            return Err(fail(format!(
                "{} is read with colour (shade-model) interpolation, which SPIR-V cannot express",
                a.slot
            )));
        }
        let plain = matches!(
            loc,
            InterpLoc::Center | InterpLoc::Centroid | InterpLoc::Sample
        );
        match e.interp {
            None => {
                let l = if plain { loc } else { InterpLoc::Center };
                e.interp = Some((interp, l));
            }
            Some((i, _)) if i != interp => {
                return Err(fail(format!(
                    "{} is read both perspective-correct and linear",
                    a.slot
                )))
            }
            Some((i, l)) if plain && l != loc && l == InterpLoc::Center => {
                e.interp = Some((i, l));
            }
            Some(_) => {}
        }
    }
    if e.flat && e.interp.is_some() {
        return Err(fail(format!(
            "{} is read both flat and interpolated",
            a.slot
        )));
    }
    Ok(())
}

/// The locations of [`Plan::split`]: where the components of one slot are read
/// with different interpolation (flat and interpolated, or two modes: the IR's
/// model, AMD's, interpolates per component), the components of each further
/// mode get a location of their own. GLSL forbids location aliases with
/// different interpolation qualification (4.60, section 4.4.1) and drivers apply
/// one mode per location (lavapipe interpolated a persp component as flat when a
/// flat one shared its location).
type Split = BTreeMap<(Slot, bool, Option<(Interp, InterpLoc)>), u32>;

/// Locations: `VARn` at n, the legacy slots after the last `VARn`, 16-bit high
/// halves after those, components split off by interpolation after those, then
/// the patch slots (per-vertex and per-patch locations never overlap).
fn locations(
    comps: &BTreeMap<IoSlot, CompInfo>,
    arrays: &Arrays,
) -> (BTreeMap<(Slot, bool), u32>, Split) {
    let mut locs = BTreeMap::new();
    // An array's elements hold locations though not every one is accessed.
    let end_of = |patch: bool| {
        arrays
            .iter()
            .filter(|((p, _), _)| *p == patch)
            .flat_map(|(_, r)| r.iter().map(|(_, b)| *b as u32))
            .max()
            .unwrap_or(0)
    };
    let mut next = end_of(false);
    for s in comps.keys() {
        if let Slot::Var(n) = s.slot {
            locs.insert((s.slot, false), n as u32);
            next = next.max(n as u32 + 1);
        }
    }
    let legacy = |s: Slot| {
        matches!(
            s,
            Slot::Col(_) | Slot::Bfc(_) | Slot::Fogc | Slot::Tex(_) | Slot::Pntc | Slot::ClipVertex
        )
    };
    for s in comps.keys() {
        if legacy(s.slot) && !locs.contains_key(&(s.slot, false)) {
            locs.insert((s.slot, false), next);
            next += 1;
        }
    }
    for s in comps.keys() {
        if s.half == Half::Hi && !s.slot.is_patch() && !locs.contains_key(&(s.slot, true)) {
            locs.insert((s.slot, true), next);
            next += 1;
        }
    }
    let mut first: BTreeMap<(Slot, bool), Option<(Interp, InterpLoc)>> = BTreeMap::new();
    // An array element keeps its slot's location (the array is one variable):
    // its interpolation is the slot's primary one, the other components move.
    for (s, c) in comps.iter().filter(|(s, _)| in_array(arrays, **s)) {
        first.entry((s.slot, false)).or_insert(c.interp);
    }
    let mut split = Split::new();
    for (s, c) in comps.iter().filter(|(s, _)| !s.slot.is_patch()) {
        let key = (s.slot, s.half == Half::Hi);
        let primary = *first.entry(key).or_insert(c.interp);
        if c.interp != primary && !split.contains_key(&(key.0, key.1, c.interp)) {
            split.insert((key.0, key.1, c.interp), next);
            next += 1;
        }
    }
    let patch_base = next;
    let mut next_patch = patch_base + end_of(true);
    for s in comps.keys() {
        if let Slot::Patch(n) = s.slot {
            let l = patch_base + n as u32;
            locs.insert((s.slot, false), l);
            next_patch = next_patch.max(l + 1);
        }
    }
    for s in comps.keys() {
        if s.half == Half::Hi && s.slot.is_patch() && !locs.contains_key(&(s.slot, true)) {
            locs.insert((s.slot, true), next_patch);
            next_patch += 1;
        }
    }
    (locs, split)
}

/// Where a load or store goes: a variable, constant indices into it after the
/// optional vertex index, and the declared scalar type.
#[derive(Clone, Debug)]
pub(crate) struct Place {
    /// The variable.
    pub var: u32,
    /// Storage class (for pointer types).
    pub class: StorageClass,
    /// The variable is an array over vertices (the vertex index comes first).
    pub per_vertex: bool,
    /// Constant indices after the vertex index.
    pub path: Vec<u32>,
    /// Declared scalar type at the end of the path.
    pub scalar: Scalar,
    /// For a 64-bit scalar, the 32-bit word (0 low, 1 high) the IR's component is:
    /// the importer reads a 64-bit attribute or output as two 32-bit components.
    pub word: Option<u32>,
    /// Ids of dynamic indices that replace constants of `path`, by position.
    pub dynamic: Vec<(usize, u32)>,
    /// Where a dynamic slot index goes in `path`.
    pub step: Step,
}

/// Where a dynamic slot index (in vec4 slots, as the importer counts it: each
/// dynamic index of the access chain times its level's element size in
/// locations, summed) goes in a place's path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Into the nest of arrays, matrices and structs from `path[at]`, the first
    /// array or matrix the path steps through: `levels[n]` is the level
    /// `path[at + n]` indexes, and the place's scalar is `off` locations past
    /// the start of the array at `path[at]`. An access `index` slots further is
    /// the scalar at location `off + index` of that array, same component; each
    /// array or matrix level takes the quotient of the locations left by its
    /// element size and keeps the remainder, a struct level keeps the place's
    /// member and subtracts its offset.
    At {
        /// Path position of the first array or matrix.
        at: usize,
        /// The place's location past that array's start.
        off: u32,
        /// The levels from `path[at]` down to the first element of one
        /// location (or the vector holding the scalar).
        levels: Vec<Level>,
    },
    /// Nowhere: what the place is, for the refusal to name.
    No(&'static str),
}

/// One level of a dynamically indexed nest ([`Step::At`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    /// An array or a matrix whose elements (columns) take this many locations.
    Div(u32),
    /// The place's struct member, this many locations into its struct.
    Member(u32),
}

/// Declared variables of one stage.
pub(crate) struct StageIo<'a> {
    plan: &'a Plan,
    stage: Stage,
    info: StageInfo,
    producer: bool,
    user: BTreeMap<IoSlot, Place>,
    builtins: BTreeMap<(BuiltIn, bool), u32>,
    attrs: BTreeMap<(Slot, u8), Place>,
    /// Output variables carrying captures of built-in components.
    xfb_copies: BTreeMap<IoSlot, Place>,
    /// The consumer's captured built-in outputs (to a stage outside the pair),
    /// as its original module captures them.
    outer_captures: BTreeMap<BuiltIn, super::xfb::BuiltinCapture>,
    vertex_builtins: (BuiltIn, BuiltIn),
    /// The producer's `gl_Layer` is viewport-relative (`ViewportRelativeNV`).
    layer_relative: bool,
}

impl<'a> StageIo<'a> {
    /// The I/O of `shader` (the producer when `producer`), kept attributes and
    /// fragment outputs of its original module `m`.
    pub fn new(
        plan: &'a Plan,
        shader: &Shader,
        m: &Module,
        layout: &StageLayout,
        producer: bool,
    ) -> Result<StageIo<'a>, Error> {
        let uses_old = m
            .decos
            .values()
            .any(|d| d.builtin == Some(BuiltIn::VertexId));
        let vertex_builtins = if uses_old {
            (BuiltIn::VertexId, BuiltIn::InstanceId)
        } else {
            (BuiltIn::VertexIndex, BuiltIn::InstanceIndex)
        };
        Ok(StageIo {
            plan,
            stage: shader.stage(),
            info: shader.info.clone(),
            producer,
            user: BTreeMap::new(),
            builtins: BTreeMap::new(),
            attrs: original_slots(m, layout, producer)?,
            xfb_copies: BTreeMap::new(),
            outer_captures: match producer {
                true => BTreeMap::new(),
                false => super::xfb::consumer_builtins(m),
            },
            vertex_builtins,
            layer_relative: producer && shader.layer_viewport_relative,
        })
    }

    /// Whether this is the pair's producer.
    pub fn is_producer(&self) -> bool {
        self.producer
    }

    /// Every variable declared or kept (for the entry point's interface).
    pub fn vars(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.user.values().map(|p| p.var).collect();
        v.extend(self.builtins.values());
        v.extend(self.attrs.values().map(|p| p.var));
        v.extend(self.xfb_copies.values().map(|p| p.var));
        v
    }

    /// Declares every user varying of the plan on this side, so both stages
    /// declare the same interface even where one side never touches a component.
    pub fn declare_all(&mut self, g: &mut Globals) -> Result<(), Error> {
        let keys: Vec<IoSlot> = self.plan.comps.keys().copied().collect();
        for k in keys {
            self.user_place(g, k)?;
        }
        // The flag changes the layer each viewport-mask copy is drawn to even when
        // the shader never stores `gl_Layer` (the layer is then 0 + the viewport).
        if self.layer_relative {
            self.builtin_place(g, IoSlot::new(Slot::Layer, 0), StorageClass::Output)?;
        }
        Ok(())
    }

    fn class(&self) -> StorageClass {
        if self.producer {
            StorageClass::Output
        } else {
            StorageClass::Input
        }
    }

    /// Vertex-array length of per-vertex variables of this class, if arrayed.
    fn vertex_len(&self, patch: bool, class: StorageClass) -> Option<u32> {
        if patch {
            return None;
        }
        let input = class == StorageClass::Input;
        match (&self.info, input) {
            (
                StageInfo::TessCtrl {
                    output_vertices, ..
                },
                false,
            ) => Some(*output_vertices as u32),
            (StageInfo::TessCtrl { .. } | StageInfo::TessEval { .. }, true) => Some(32),
            (StageInfo::Geometry { input, .. }, true) => Some(input.vertex_count() as u32),
            _ => None,
        }
    }

    /// The place of an input (`output` false) or output access to `slot`. The
    /// pair's own varyings follow the plan; the stage's other side (vertex
    /// attributes, fragment outputs, varyings from or to a stage outside the pair)
    /// keeps its original variables.
    pub fn place(&mut self, g: &mut Globals, slot: IoSlot, output: bool) -> Result<Place, Error> {
        let class = if output {
            StorageClass::Output
        } else {
            StorageClass::Input
        };
        if is_builtin_slot(slot.slot) {
            return self.builtin_place(g, slot, class);
        }
        if output == self.producer {
            return self.user_place(g, slot);
        }
        self.attrs
            .get(&(slot.slot, slot.comp))
            .cloned()
            .ok_or_else(|| fail(format!("{slot} has no variable in the original module")))
    }

    fn user_place(&mut self, g: &mut Globals, slot: IoSlot) -> Result<Place, Error> {
        if let Some(p) = self.user.get(&slot) {
            return Ok(p.clone());
        }
        if let Some((start, len)) = self.plan.array_of(slot) {
            return self.array_place(g, slot, start, len);
        }
        // A fixed-function varying keeps a name the importer maps back to its slot.
        let name = crate::import::compat::component_name(slot)
            .unwrap_or_else(|| format!("{slot}").replace('.', "_"));
        let (var, class, per_vertex, scalar) = self.declare_user_var(g, slot, None, &name)?;
        if self.producer {
            self.plan.xfb.decorate(g, var, slot);
        }
        let p = Place {
            var,
            class,
            per_vertex,
            path: vec![],
            scalar,
            word: None,
            dynamic: vec![],
            step: Step::No("a varying of the pair outside its indexed arrays"),
        };
        self.user.insert(slot, p.clone());
        Ok(p)
    }

    /// Declares the variable of user slot `slot` (an array of `array_len` slots from
    /// it when given), arrayed per vertex where the stage is, with its location,
    /// component, patch, 16-bit and (FS) interpolation decorations: the variable, its
    /// storage class, whether it is per vertex, and its scalar type.
    fn declare_user_var(
        &mut self,
        g: &mut Globals,
        slot: IoSlot,
        array_len: Option<u8>,
        name: &str,
    ) -> Result<(u32, StorageClass, bool, Scalar), Error> {
        let info = *self
            .plan
            .comps
            .get(&slot)
            .ok_or_else(|| fail(format!("{slot} is not in the pair's interface")))?;
        let (loc, comp) = self
            .plan
            .place(slot)
            .ok_or_else(|| fail(format!("{slot} has no location")))?;
        let scalar = Scalar {
            num: if info.interp.is_some() || self.plan.floats.contains(&slot) {
                Num::Float
            } else {
                Num::Uint
            },
            bits: info.bits.bits(),
        };
        let patch = slot.slot.is_patch();
        let class = self.class();
        let vlen = self.vertex_len(patch, class);
        let mut ty = scalar.ty(g);
        if let Some(len) = array_len {
            ty = g.array(ty, u32::from(len));
        }
        if let Some(n) = vlen {
            ty = g.array(ty, n);
        }
        let ptr = g.ptr(class, ty);
        let var = g.variable(ptr, class);
        g.decorate(var, Decoration::Location, &[loc]);
        if comp != 0 {
            g.decorate(var, Decoration::Component, &[comp]);
        }
        if patch {
            g.decorate(var, Decoration::Patch, &[]);
        }
        if info.bits == BitSize::B16 {
            g.capability(Capability::StorageInputOutput16);
            g.extension("SPV_KHR_16bit_storage");
        }
        if !self.producer && self.stage == Stage::Fragment {
            decorate_interp(g, var, info);
        }
        g.name(var, name);
        Ok((var, class, vlen.is_some(), scalar))
    }

    /// The output variable that carries the capture of a built-in component
    /// (see `xfb`), or `None` when `slot` needs none: its own variable carries it.
    pub fn xfb_copy(&mut self, g: &mut Globals, slot: IoSlot) -> Result<Option<Place>, Error> {
        if !self.producer || !is_builtin_slot(slot.slot) || self.plan.xfb.of(slot).is_none() {
            return Ok(None);
        }
        if let Some(p) = self.xfb_copies.get(&slot) {
            return Ok(Some(p.clone()));
        }
        // One location per captured built-in slot, the component its own.
        let mut families: Vec<Slot> = (self.plan.xfb.slots())
            .filter(|s| is_builtin_slot(s.slot))
            .map(|s| s.slot)
            .collect();
        families.dedup();
        let at = families.iter().position(|s| *s == slot.slot).unwrap_or(0) as u32;
        let comp = slot.comp as u32;
        let scalar = self.builtin_place(g, slot, StorageClass::Output)?.scalar;
        let ptr_ty = {
            let elem = scalar.ty(g);
            g.ptr(StorageClass::Output, elem)
        };
        let var = g.variable(ptr_ty, StorageClass::Output);
        g.decorate(var, Decoration::Location, &[self.plan.end() + at]);
        if comp != 0 {
            g.decorate(var, Decoration::Component, &[comp]);
        }
        self.plan.xfb.decorate(g, var, slot);
        g.name(var, &format!("xfb_{slot}").replace('.', "_"));
        let p = Place {
            var,
            class: StorageClass::Output,
            per_vertex: false,
            path: vec![],
            scalar,
            word: None,
            dynamic: vec![],
            step: Step::No("a transform feedback copy of a built-in"),
        };
        self.xfb_copies.insert(slot, p.clone());
        Ok(Some(p))
    }

    /// The place of element `slot` of the dynamically indexed array of `len`
    /// slots from slot index `start`: one array variable at the first slot's
    /// location, typed and interpolated as its elements.
    fn array_place(
        &mut self,
        g: &mut Globals,
        slot: IoSlot,
        start: u8,
        len: u8,
    ) -> Result<Place, Error> {
        let patch = slot.slot.is_patch();
        let first = IoSlot::new(
            if patch {
                Slot::Patch(start)
            } else {
                Slot::Var(start)
            },
            slot.comp,
        );
        if self.producer && self.plan.xfb.of(slot).is_some() {
            return Err(fail(format!(
                "{slot}: transform feedback of a dynamically indexed array element is not exported"
            )));
        }
        let first_place = match self.user.get(&first) {
            Some(p) => p.clone(),
            None => {
                let name = format!("{first}_array").replace('.', "_");
                let (var, class, per_vertex, scalar) =
                    self.declare_user_var(g, first, Some(len), &name)?;
                let p = Place {
                    var,
                    class,
                    per_vertex,
                    path: vec![0],
                    scalar,
                    word: None,
                    dynamic: vec![],
                    step: Step::At {
                        at: 0,
                        off: 0,
                        levels: vec![Level::Div(1)],
                    },
                };
                self.user.insert(first, p.clone());
                p
            }
        };
        let n = range_key(slot).map(|(_, n)| n).unwrap_or(start);
        let k = u32::from(n.saturating_sub(start));
        let p = Place {
            path: vec![k],
            step: Step::At {
                at: 0,
                off: k,
                levels: vec![Level::Div(1)],
            },
            ..first_place
        };
        self.user.insert(slot, p.clone());
        Ok(p)
    }

    fn builtin_place(
        &mut self,
        g: &mut Globals,
        slot: IoSlot,
        class: StorageClass,
    ) -> Result<Place, Error> {
        if slot.half != Half::Full {
            return Err(fail(format!(
                "{slot}: 16-bit halves of built-in slots are not exported (a SPIR-V \
                 built-in is one 32-bit value)"
            )));
        }
        let c = slot.comp as u32;
        let (b, path, scalar, len) = match slot.slot {
            Slot::Pos => (BuiltIn::Position, vec![c], F32, Some(4)),
            Slot::Psiz => (BuiltIn::PointSize, vec![], F32, None),
            Slot::ClipDist(hi) => (
                BuiltIn::ClipDistance,
                vec![c + 4 * hi as u32],
                F32,
                Some(-(self.plan.clip_len as i32)),
            ),
            Slot::CullDist(hi) => (
                BuiltIn::CullDistance,
                vec![c + 4 * hi as u32],
                F32,
                Some(-(self.plan.cull_len as i32)),
            ),
            Slot::Layer => (BuiltIn::Layer, vec![], I32, None),
            Slot::Viewport => (BuiltIn::ViewportIndex, vec![], I32, None),
            Slot::PrimitiveId => (BuiltIn::PrimitiveId, vec![], I32, None),
            Slot::TessLevelOuter => (BuiltIn::TessLevelOuter, vec![c], F32, Some(-4)),
            Slot::TessLevelInner => (BuiltIn::TessLevelInner, vec![c], F32, Some(-2)),
            Slot::Depth => (BuiltIn::FragDepth, vec![], F32, None),
            Slot::SampleMask => (BuiltIn::SampleMask, vec![0], I32, Some(-1)),
            Slot::ViewportMask => (BuiltIn::ViewportMaskNV, vec![0], I32, Some(-1)),
            other => return Err(fail(format!("{other} is not a built-in slot"))),
        };
        let patch = matches!(slot.slot, Slot::TessLevelOuter | Slot::TessLevelInner);
        let vlen = self.vertex_len(patch, class);
        let var = self.builtin_var(g, b, class, scalar, len, vlen, patch);
        Ok(Place {
            var,
            class,
            per_vertex: vlen.is_some(),
            path,
            scalar,
            word: None,
            dynamic: vec![],
            step: Step::No("a built-in"),
        })
    }

    /// A built-in variable: `len` > 0 is a vector, < 0 an array of that many.
    #[allow(clippy::too_many_arguments)]
    fn builtin_var(
        &mut self,
        g: &mut Globals,
        b: BuiltIn,
        class: StorageClass,
        scalar: Scalar,
        len: Option<i32>,
        vlen: Option<u32>,
        patch: bool,
    ) -> u32 {
        let input = class == StorageClass::Input;
        if let Some(v) = self.builtins.get(&(b, input)) {
            return *v;
        }
        let elem = scalar.ty(g);
        let mut ty = match len {
            Some(n) if n > 0 => g.vec(elem, n as u32),
            Some(n) => g.array(elem, (-n).max(1) as u32),
            None => elem,
        };
        if let Some(n) = vlen {
            ty = g.array(ty, n);
        }
        let ptr = g.ptr(class, ty);
        let var = g.variable(ptr, class);
        g.builtin(var, b);
        if let Some(c) = self.outer_captures.get(&b).filter(|_| !input) {
            c.decorate(g, var);
        }
        if patch {
            g.decorate(var, Decoration::Patch, &[]);
        }
        if b == BuiltIn::Layer && !input && self.layer_relative {
            g.decorate(var, Decoration::ViewportRelativeNV, &[]);
        }
        if input
            && self.stage == Stage::Fragment
            && scalar.num != Num::Float
            && b != BuiltIn::FrontFacing
        {
            g.decorate(var, Decoration::Flat, &[]);
        }
        self.builtins.insert((b, input), var);
        var
    }

    /// The input variable of a built-in an opaque load reads whole (`PointCoord`,
    /// `HelperInvocation`, ...), declared with the load's result type `ty`.
    pub fn opaque_builtin(&mut self, g: &mut Globals, b: u32, ty: u32) -> Result<u32, Error> {
        let bi = BuiltIn::from_u32(b).ok_or_else(|| fail(format!("unknown built-in {b}")))?;
        if let Some(v) = self.builtins.get(&(bi, true)) {
            return Ok(*v);
        }
        let ptr = g.ptr(StorageClass::Input, ty);
        let var = g.variable(ptr, StorageClass::Input);
        g.builtin(var, bi);
        self.builtins.insert((bi, true), var);
        Ok(var)
    }

    /// The place of a system value.
    pub fn system_value(&mut self, g: &mut Globals, sv: SystemValue) -> Place {
        use SystemValue as S;
        let (vi, ii) = self.vertex_builtins;
        let bool_ty = Scalar {
            num: Num::Bool,
            bits: 1,
        };
        let (b, path, scalar, len) = match sv {
            S::VertexId => (vi, vec![], I32, None),
            S::InstanceId => (ii, vec![], I32, None),
            S::InvocationId => (BuiltIn::InvocationId, vec![], I32, None),
            S::PrimitiveId => (BuiltIn::PrimitiveId, vec![], I32, None),
            S::ViewIndex => (BuiltIn::ViewIndex, vec![], I32, None),
            S::FrontFace => (BuiltIn::FrontFacing, vec![], bool_ty, None),
            S::SampleId => (BuiltIn::SampleId, vec![], I32, None),
            S::SampleMaskIn => (BuiltIn::SampleMask, vec![0], I32, Some(-1)),
            S::TessCoordX => (BuiltIn::TessCoord, vec![0], F32, Some(3)),
            S::TessCoordY => (BuiltIn::TessCoord, vec![1], F32, Some(3)),
            S::TessCoordZ => (BuiltIn::TessCoord, vec![2], F32, Some(3)),
            S::FragCoordX => (BuiltIn::FragCoord, vec![0], F32, Some(4)),
            S::FragCoordY => (BuiltIn::FragCoord, vec![1], F32, Some(4)),
            S::FragCoordZ => (BuiltIn::FragCoord, vec![2], F32, Some(4)),
            S::FragCoordW => (BuiltIn::FragCoord, vec![3], F32, Some(4)),
            S::PatchVerticesIn => (BuiltIn::PatchVertices, vec![], I32, None),
        };
        if sv == S::SampleId {
            g.capability(Capability::SampleRateShading);
        }
        let var = self.builtin_var(g, b, StorageClass::Input, scalar, len, None, false);
        Place {
            var,
            class: StorageClass::Input,
            per_vertex: false,
            path,
            scalar,
            word: None,
            dynamic: vec![],
            step: Step::No("a system value"),
        }
    }
}

fn decorate_interp(g: &mut Globals, var: u32, info: CompInfo) {
    match info.interp {
        None => g.decorate(var, Decoration::Flat, &[]),
        Some((interp, loc)) => {
            if interp == Interp::Linear {
                g.decorate(var, Decoration::NoPerspective, &[]);
            }
            match loc {
                InterpLoc::Centroid => g.decorate(var, Decoration::Centroid, &[]),
                InterpLoc::Sample => {
                    g.capability(Capability::SampleRateShading);
                    g.decorate(var, Decoration::Sample, &[]);
                }
                _ => {}
            }
        }
    }
}

/// The declared interpolation location of a component (what a plain load gives).
pub(crate) fn declared_loc(plan: &Plan, slot: IoSlot) -> Option<InterpLoc> {
    plan.comps.get(&slot).and_then(|c| c.interp).map(|(_, l)| l)
}

/// The kept variables of the stage's other side (inputs of the producer: vertex
/// attributes or varyings from an earlier stage; outputs of the consumer:
/// fragment outputs or varyings to a later stage), by slot and component: the
/// variable and the path to each scalar after the vertex index.
fn original_slots(
    m: &Module,
    layout: &StageLayout,
    producer: bool,
) -> Result<BTreeMap<(Slot, u8), Place>, Error> {
    let class = if producer {
        StorageClass::Input
    } else {
        StorageClass::Output
    };
    let mut out = BTreeMap::new();
    for (var, gv) in &m.vars {
        if gv.class != class || !super::carry::is_user_io(m, *var) {
            continue;
        }
        let d = m.deco(*var);
        // Per patch by its own decoration or its block members' (glslang
        // decorates the members of a `patch out` block), as the importer reads it.
        let patch = d.patch || crate::import::link::is_patch_block(m, gv.ty);
        // The families and bases the importer gives (`import::iface`): a
        // compatibility-profile variable (`varysat_COL0`, ...) is its fixed-function
        // slot whatever its location, as a GS or TES consumer's `gl_FrontColor` output.
        let fixed = crate::import::compat::fixed_function_slot(m.name(*var));
        let named_comp = fixed.and_then(|(_, comp)| comp).map(u32::from);
        let fixed = fixed.map(|(slot, _)| slot);
        let (family, loc) = match (m.stage, class, fixed) {
            (Stage::Vertex, StorageClass::Input, _) => (Slot::Attr(0), d.location.unwrap_or(0)),
            (Stage::Fragment, StorageClass::Output, _) => (Slot::Data(0), d.location.unwrap_or(0)),
            (_, _, Some(slot)) => (slot, 0),
            _ => {
                let base = layout.io_base.get(var).copied().unwrap_or(0);
                (if patch { Slot::Patch(0) } else { Slot::Var(0) }, base)
            }
        };
        let mut ty = gv.ty;
        let per_vertex = crate::import::layout::per_vertex(m.stage, class, patch);
        if per_vertex {
            if let Ty::Array { elem, .. } = m.ty(ty)? {
                ty = *elem;
            }
        }
        // Laid out in the module's own locations (a block's member `Location`s
        // are absolute), then moved to the slots: the importer may place a
        // variable elsewhere than its first location (`link::link_outer`).
        let first = layout.first_loc.get(var).copied().unwrap_or(loc);
        let mut leaves = vec![];
        let comp = named_comp.unwrap_or(d.component.unwrap_or(0));
        flatten(m, ty, first, comp, vec![], &mut leaves, 0, &Nest::default())?;
        for Leaf {
            loc: l,
            comp: c,
            path,
            scalar,
            word,
            step,
        } in leaves
        {
            let l = (i64::from(l) - i64::from(first) + i64::from(loc)).max(0) as u32;
            let slot = family
                .offset(l)
                .ok_or_else(|| fail(format!("location {l} is out of range for {family}")))?;
            out.insert(
                (slot, c as u8),
                Place {
                    var: *var,
                    class,
                    per_vertex,
                    path,
                    scalar,
                    word,
                    dynamic: vec![],
                    step,
                },
            );
        }
    }
    Ok(out)
}

/// One scalar (or 32-bit word of a 64-bit scalar) of a kept variable.
struct Leaf {
    /// Location (the module's own numbering).
    loc: u32,
    /// Component.
    comp: u32,
    /// Constant indices to the scalar.
    path: Vec<u32>,
    /// Its declared type.
    scalar: Scalar,
    /// For a 64-bit scalar, which 32-bit word of it the component is.
    word: Option<u32>,
    /// Where a dynamic slot index goes.
    step: Step,
}

/// The dynamically indexable nest a type walk is in: from the first array or
/// matrix on the path ([`Step::At`]).
#[derive(Clone, Debug, Default)]
struct Nest {
    /// Path position and location of the first array or matrix, once reached.
    start: Option<(usize, u32)>,
    /// The levels from it.
    levels: Vec<Level>,
    /// An element of one location was reached: what lies inside it is reached
    /// by constant indices (one location further is the next element).
    closed: bool,
    /// Why a dynamic index cannot be placed, if it cannot.
    refused: Option<&'static str>,
}

impl Nest {
    /// Whether levels are still being added.
    fn open(&self) -> bool {
        self.start.is_some() && !self.closed && self.refused.is_none()
    }

    /// Enters an array or matrix at path position `at` and location `loc`
    /// whose elements take `per` locations.
    fn enter_array(&self, at: usize, loc: u32, per: u32) -> Nest {
        let mut n = self.clone();
        if n.start.is_none() {
            n.start = Some((at, loc));
        }
        if n.open() && per == 0 {
            n.refused = Some("an array of elements of no location");
        } else if n.open() {
            n.levels.push(Level::Div(per));
            n.closed = per <= 1;
        }
        n
    }

    /// The step of a scalar at location `loc`.
    fn step(&self, loc: u32) -> Step {
        match (self.refused, self.start) {
            (Some(why), _) => Step::No(why),
            (None, None) => Step::No("a variable that is no array"),
            (None, Some((at, start))) => Step::At {
                at,
                off: loc.saturating_sub(start),
                levels: self.levels.clone(),
            },
        }
    }
}

/// Appends the leaves of type `ty` at location `loc` and component `comp`,
/// reached by `path`, inside `nest`; returns the locations the type takes.
#[allow(clippy::too_many_arguments)]
fn flatten(
    m: &Module,
    ty: u32,
    loc: u32,
    comp: u32,
    path: Vec<u32>,
    out: &mut Vec<Leaf>,
    depth: u32,
    nest: &Nest,
) -> Result<u32, Error> {
    if depth > 8 {
        return Err(fail(format!("type %{ty} nests too deeply")));
    }
    let scalar = |t: &Ty| -> Option<Scalar> {
        match t {
            Ty::Float { width } => Some(Scalar {
                num: Num::Float,
                bits: *width,
            }),
            Ty::Int { width, signed } => Some(Scalar {
                num: if *signed { Num::Sint } else { Num::Uint },
                bits: *width,
            }),
            _ => None,
        }
    };
    let t = m.ty(ty)?.clone();
    if let Some(s) = scalar(&t) {
        push_scalar(out, loc, comp, path, s, nest);
        return Ok(1);
    }
    // The locations one element takes: every element of an array (column of a
    // matrix) takes as many as the first.
    let per = |elem: u32| -> Result<u32, Error> {
        let mut scratch = vec![];
        flatten(
            m,
            elem,
            loc,
            comp,
            vec![],
            &mut scratch,
            depth + 1,
            &Nest::default(),
        )
    };
    match t {
        Ty::Vector { elem, n } => {
            let s = scalar(m.ty(elem)?).ok_or_else(|| fail("vector of a non-numeric type"))?;
            // A 64-bit component takes two words, continuing in the next location
            // past the fourth (a `dvec3` uses two), as the importer lays it out.
            let words = if s.bits == 64 { 2 } else { 1 };
            for i in 0..n {
                let mut p = path.clone();
                p.push(i);
                let w = comp + words * i;
                push_scalar(out, loc + w / 4, w % 4, p, s, nest);
            }
            Ok((comp + words * n).div_ceil(4).max(1))
        }
        Ty::Matrix { col: elem, n: len } | Ty::Array { elem, len } => {
            let inner = nest.enter_array(path.len(), loc, per(elem)?);
            let mut used = 0;
            for i in 0..len {
                let mut p = path.clone();
                p.push(i);
                used += flatten(m, elem, loc + used, comp, p, out, depth + 1, &inner)?;
            }
            Ok(used)
        }
        Ty::Struct { members } => {
            // Members follow each other unless a member `Location` (absolute)
            // places one, which only the variable's own block can do: the
            // importer lays blocks out the same way and reads no member
            // `Location` below the top (GLSL allows none on the members of an
            // arrayed block but for the vertex dimension), so each element of an
            // array of blocks repeats the members' layout.
            let mut at = loc;
            for (i, mt) in members.iter().enumerate() {
                if depth == 0 {
                    if let Some(l) = m.member_deco(ty, i as u32).location {
                        at = l;
                    }
                }
                let mut p = path.clone();
                p.push(i as u32);
                let mut inner = nest.clone();
                if inner.open() {
                    inner.levels.push(Level::Member(at.saturating_sub(loc)));
                }
                at += flatten(m, *mt, at, 0, p, out, depth + 1, &inner)?;
            }
            Ok(at.saturating_sub(loc))
        }
        _ => Err(fail(format!(
            "attribute or output type %{ty} is not exported"
        ))),
    }
}

/// One scalar's leaves: itself, or the two 32-bit words of a 64-bit scalar at
/// components `comp` and `comp + 1`.
fn push_scalar(out: &mut Vec<Leaf>, loc: u32, comp: u32, path: Vec<u32>, s: Scalar, nest: &Nest) {
    let leaf = |comp, path, word| Leaf {
        loc,
        comp,
        path,
        scalar: s,
        word,
        step: nest.step(loc),
    };
    if s.bits == 64 {
        out.push(leaf(comp, path.clone(), Some(0)));
        out.push(leaf(comp + 1, path, Some(1)));
    } else {
        out.push(leaf(comp, path, None));
    }
}
