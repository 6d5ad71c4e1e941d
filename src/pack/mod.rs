//! The compaction packer: assigns the surviving scalar varyings of a pair to vec4
//! slots following the grouping rules of reference/000 §7 and the AMD facts of the
//! design (§5), and rewrites producer stores and consumer loads to match.
//!
//! The pipeline: `varying` collects every direct access and the components that
//! must stay (indirect arrays, components accessed both as 32-bit and as halves);
//! `convergence` finds producer outputs equal on all vertices; `groups` sorts the
//! movable varyings into the reference's groups; `assign` fills vec4s first-fit in
//! group order; `rewrite` applies the result.
//!
//! Decisions worth knowing:
//! - Only VARn-class slots (VARn, FOGC, PNTC, and PRIMITIVE_ID between GS and FS),
//!   PATCHn and colours move. TEXn, system-value slots and tessellation levels stay.
//! - Outputs the consumer never reads are deleted unless transform feedback captures
//!   them (those are packed last, "xfb-only") or a TCS reads them back (those pack
//!   flat like every value into a TES, filling holes); consumer loads of addresses
//!   nothing stores become `undef` so that a moved varying can never leak into them.
//! - Slot counts are minimal for the rules: interpolated varyings of one key need
//!   `ceil(n / 4)` vec4s whatever else happens, and convergent values only ever take
//!   a hole that already exists before a flat vec4 is opened. The property test
//!   checks this against an exhaustive search.
//! - Flat and interpolated reads share a vec4 only for convergent values
//!   (`mix_convergent_flat`): hardware interpolates per vec4, so a flat read there
//!   sees the first vertex rather than the provoking one (the interpreter models
//!   this), which is the same value only when every vertex stores the same.
//! - Colours pack into COL0/COL1 (BFCn moving with COLn); when the rules would need a
//!   third vec4 they stay where they were and a note says so.
//!
//! ```
//! use varysat::ir::{IoSlot, InterpMode, Pipeline, ShaderBuilder, Slot, Stage};
//! use varysat::internals::pack::{pack, PackOptions};
//! let mut vs = ShaderBuilder::new(Stage::Vertex);
//! let a = vs.load_input(IoSlot::new(Slot::Attr(0), 0));
//! vs.store(IoSlot::var(7, 3), a);
//! let mut fs = ShaderBuilder::new(Stage::Fragment);
//! let x = fs.load_interpolated(IoSlot::var(7, 3), InterpMode::PERSP_CENTER);
//! fs.store(IoSlot::new(Slot::Data(0), 0), x);
//! let pair = Pipeline::new(vs.finish(), fs.finish());
//! let (_packed, layout) = pack(&pair, &PackOptions::default()).unwrap();
//! assert_eq!(layout.map[&IoSlot::var(7, 3)], IoSlot::var(0, 0));
//! ```

mod assign;
mod convergence;
mod groups;
mod rewrite;
mod varying;

use std::collections::{BTreeMap, BTreeSet};

pub use convergence::convergent_outputs;
pub use groups::Group;

use crate::ir::{InterpMode, IoSlot, Pipeline, Slot, Stage};
use crate::Error;
use assign::{Bin, Placed};
use groups::{Domain, Fate, Item};
use varying::Varyings;

/// Hard limit on vec4 slots the FS may read, and on PATCH slots.
pub const MAX_SLOTS: usize = 32;

/// Packing rules. `Default` is AMD: everything on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackOptions {
    /// Different interpolation modes and locations may share a vec4.
    pub flexible_interp: bool,
    /// Convergent varyings fill holes in interpolated vec4s; when off they are packed
    /// as flat.
    pub convergent_fill: bool,
    /// Convergent varyings read flat may also fill holes in interpolated vec4s, their
    /// loads staying flat: the hardware reads one component of an interpolated
    /// attribute without interpolating it (AMD's `v_interp_mov`, what Mesa's
    /// `nir_io_mix_convergent_flat_with_interpolated` states), and a convergent value
    /// is the same at every vertex, so no provoking vertex has to be chosen for it.
    /// Only together with `convergent_fill` (without it, convergent values are flat).
    pub mix_convergent_flat: bool,
    /// Two 16-bit values share one 32-bit component.
    pub pack_16bit: bool,
    /// Colour channels start at the first unused VARn channel (reference/000 §7).
    pub rotate_colors: bool,
    /// Outputs known to be convergent; `None` runs the built-in analysis. Ignored for a
    /// GS producer, whose outputs are never convergent.
    pub convergent: Option<BTreeSet<IoSlot>>,
}

impl Default for PackOptions {
    fn default() -> PackOptions {
        PackOptions {
            flexible_interp: true,
            convergent_fill: true,
            mix_convergent_flat: true,
            pack_16bit: true,
            rotate_colors: true,
            convergent: None,
        }
    }
}

/// How a convergent varying's consumer loads change when it is packed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LoadRewrite {
    /// Loads keep their form (only the address changes).
    Keep,
    /// Loads become flat (`load_input`): interpolating equal values gives the value.
    Flat,
    /// Loads take this interpolation mode (the vec4's own).
    Interp(InterpMode),
    /// Interpolated loads keep their mode; flat loads become perspective-centre ones.
    KeepInterp,
}

/// One vec4 in use after packing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vec4 {
    /// The slot.
    pub slot: Slot,
    /// The group of the varying that opened it ([`Group::Fixed`] for arrays).
    pub group: Group,
}

/// What the packer did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    /// Old → new address of every surviving varying (unmoved ones map to themselves).
    pub map: BTreeMap<IoSlot, IoSlot>,
    /// Convergent varyings whose consumer loads changed form, by old address.
    pub loads: BTreeMap<IoSlot, LoadRewrite>,
    /// Outputs nobody observes; their stores were deleted.
    pub removed: BTreeSet<IoSlot>,
    /// Inputs (or TCS read-backs) nothing stores; their loads became undef.
    pub undefined: BTreeSet<IoSlot>,
    /// The vec4s of the packed families (VARn, PATCHn, colours) in use, in slot order.
    pub vec4s: Vec<Vec4>,
    /// Distinct varying vec4 slots the packed consumer reads.
    pub consumer_slots: usize,
    /// Non-fatal remarks (e.g. colours left in place).
    pub notes: Vec<String>,
}

impl Layout {
    /// Number of vec4s opened by each group.
    pub fn group_slots(&self) -> BTreeMap<Group, usize> {
        let mut m = BTreeMap::new();
        for v in &self.vec4s {
            *m.entry(v.group).or_default() += 1;
        }
        m
    }

    /// Number of vec4s in use whose slot satisfies `pred`.
    pub fn count(&self, pred: impl Fn(Slot) -> bool) -> usize {
        self.vec4s.iter().filter(|v| pred(v.slot)).count()
    }
}

/// A packer with builder-style options.
#[derive(Clone, Debug, Default)]
pub struct Packer {
    opts: PackOptions,
}

impl Packer {
    /// A packer with the AMD defaults.
    pub fn new() -> Packer {
        Packer::default()
    }

    /// Sets [`PackOptions::flexible_interp`].
    pub fn flexible_interp(mut self, on: bool) -> Packer {
        self.opts.flexible_interp = on;
        self
    }

    /// Sets [`PackOptions::convergent_fill`].
    pub fn convergent_fill(mut self, on: bool) -> Packer {
        self.opts.convergent_fill = on;
        self
    }

    /// Sets [`PackOptions::pack_16bit`].
    pub fn pack_16bit(mut self, on: bool) -> Packer {
        self.opts.pack_16bit = on;
        self
    }

    /// Sets [`PackOptions::rotate_colors`].
    pub fn rotate_colors(mut self, on: bool) -> Packer {
        self.opts.rotate_colors = on;
        self
    }

    /// Uses the caller's convergence set instead of the built-in analysis.
    pub fn convergent(mut self, set: BTreeSet<IoSlot>) -> Packer {
        self.opts.convergent = Some(set);
        self
    }

    /// The options.
    pub fn options(&self) -> &PackOptions {
        &self.opts
    }

    /// Packs a pair; see [`pack`].
    pub fn pack(&self, p: &Pipeline) -> Result<(Pipeline, Layout), Error> {
        pack(p, &self.opts)
    }
}

/// Packs the varyings of `p` and returns the rewritten pair with its layout.
///
/// Fails with [`Error::Invalid`] when `p` does not validate, and with [`Error::Limit`]
/// when the VARn or PATCHn family runs out of slots or the packed FS reads more than
/// 32 vec4 slots.
pub fn pack(p: &Pipeline, opts: &PackOptions) -> Result<(Pipeline, Layout), Error> {
    crate::validate::validate(p)?;
    pack_valid(p, opts)
}

/// [`pack`] of a pair the caller has just validated (the optimizer's emission
/// validates what it emits): validating is about a tenth of packing a small pair.
pub(crate) fn pack_valid(p: &Pipeline, opts: &PackOptions) -> Result<(Pipeline, Layout), Error> {
    let vars = Varyings::collect(p);
    let convergent = if p.producer.stage() == Stage::Geometry {
        BTreeSet::new()
    } else {
        opts.convergent
            .clone()
            .unwrap_or_else(|| convergent_outputs(&p.producer))
    };
    let items = groups::classify(p, &vars, &convergent, opts);
    let mut layout = Layout::default();
    let mut placements: Vec<(&Item, Placed)> = vec![];
    let mut bins = pack_domain(Domain::Var, 0, &items, &vars, p, opts, &mut placements)?;
    let rot = if opts.rotate_colors {
        first_unused_channel(&bins)
    } else {
        0
    };
    bins.extend(pack_domain(
        Domain::Patch,
        0,
        &items,
        &vars,
        p,
        opts,
        &mut placements,
    )?);
    bins.extend(pack_colours(
        rot,
        &items,
        &vars,
        p,
        opts,
        &mut placements,
        &mut layout,
    ));
    layout.vec4s = bins
        .iter()
        .filter(|b| b.used())
        .map(|b| Vec4 {
            slot: b.slot,
            group: b.group,
        })
        .collect();
    let plan = plan(p, &vars, &placements, &mut layout);
    let out = rewrite::apply(p, &plan);
    layout.consumer_slots = rewrite::input_slots(&out.consumer).len();
    if p.consumer.stage() == Stage::Fragment && layout.consumer_slots > MAX_SLOTS {
        return Err(Error::Limit(format!(
            "the packed fragment shader reads {} vec4 slots, more than {MAX_SLOTS}",
            layout.consumer_slots
        )));
    }
    Ok((out, layout))
}

fn pack_domain<'a>(
    domain: Domain,
    rot: u8,
    items: &'a [Item],
    vars: &Varyings,
    p: &Pipeline,
    opts: &PackOptions,
    out: &mut Vec<(&'a Item, Placed)>,
) -> Result<Vec<Bin>, Error> {
    let mine: Vec<&Item> = items.iter().filter(|i| i.domain == domain).collect();
    let fixed = assign::fixed_bins(domain, vars, p.consumer.stage(), opts);
    let fam = assign::family(domain, rot);
    let packed = assign::pack_family(&fam, fixed, &mine, opts).map_err(|_| {
        let family = if domain == Domain::Patch {
            "PATCH"
        } else {
            "VAR"
        };
        Error::Limit(format!(
            "{} varyings need more than {MAX_SLOTS} {family}n vec4 slots",
            mine.len()
        ))
    })?;
    out.extend(mine.into_iter().zip(packed.placed));
    Ok(packed.bins)
}

/// Colours pack among themselves into COL0/COL1; when the rules need more than those
/// two vec4s (or a colour is indexed indirectly) they keep their original places.
fn pack_colours<'a>(
    rot: u8,
    items: &'a [Item],
    vars: &Varyings,
    p: &Pipeline,
    opts: &PackOptions,
    out: &mut Vec<(&'a Item, Placed)>,
    layout: &mut Layout,
) -> Vec<Bin> {
    let mine: Vec<&Item> = items.iter().filter(|i| i.domain == Domain::Color).collect();
    if mine.is_empty() {
        return vec![];
    }
    let fixed = vars
        .fixed
        .iter()
        .any(|(s, _)| groups::domain_of(*s, p) == Some(Domain::Color));
    let fam = assign::family(Domain::Color, rot);
    if !fixed {
        if let Ok(packed) = assign::pack_family(&fam, vec![], &mine, opts) {
            out.extend(mine.into_iter().zip(packed.placed));
            return packed.bins;
        }
    }
    layout.notes.push(
        "colour varyings kept in place: they do not pack into COL0/COL1 under the rules".into(),
    );
    for item in mine {
        let m = item.members[0];
        let slot = match m.slot {
            Slot::Bfc(n) => Slot::Col(n),
            s => s,
        };
        let placed = Placed {
            slot,
            comp: m.comp,
            half: m.half,
            load: LoadRewrite::Keep,
        };
        out.push((item, placed));
    }
    vec![]
}

/// The component after the last one used in the highest VARn vec4 the consumer reads
/// (x when that vec4 is full or there is none): where colour channels start.
fn first_unused_channel(bins: &[Bin]) -> u8 {
    let last = bins
        .iter()
        .filter(|b| b.used() && b.kind != assign::BinKind::Tail)
        .max_by_key(|b| match b.slot {
            Slot::Var(n) => n,
            _ => 0,
        });
    let Some(b) = last else {
        return 0;
    };
    let top = b
        .cells
        .iter()
        .rposition(|c| *c != assign::Cell::Free)
        .unwrap_or(3);
    ((top + 1) % 4) as u8
}

/// The new address of `member` when its item was placed at `at`.
fn relocate(member: IoSlot, at: &Placed) -> IoSlot {
    let slot = match (member.slot, at.slot) {
        (Slot::Bfc(_), Slot::Col(k)) => Slot::Bfc(k),
        (_, s) => s,
    };
    IoSlot {
        slot,
        comp: at.comp,
        half: at.half,
    }
}

/// Turns placements and fates into the rewrite plan, filling in the layout's maps.
fn plan(
    p: &Pipeline,
    vars: &Varyings,
    placements: &[(&Item, Placed)],
    layout: &mut Layout,
) -> rewrite::Plan {
    let mut plan = rewrite::Plan::default();
    for (item, at) in placements {
        for m in &item.members {
            let Some(a) = vars.access.get(m) else {
                continue;
            };
            let fate = groups::fate(a);
            if !matches!(fate, Fate::Live | Fate::Tail) {
                continue;
            }
            let new = relocate(*m, at);
            layout.map.insert(*m, new);
            plan.outputs.insert(*m, new);
            if fate == Fate::Live {
                plan.inputs.insert(*m, (new, at.load));
                if at.load != LoadRewrite::Keep {
                    layout.loads.insert(*m, at.load);
                }
            }
        }
    }
    for (slot, a) in &vars.access {
        let movable = groups::domain_of(slot.slot, p).is_some() && !vars.is_fixed(*slot);
        let fate = groups::fate(a);
        if !movable {
            if matches!(fate, Fate::Live | Fate::Tail) {
                layout.map.insert(*slot, *slot);
            }
            continue;
        }
        if a.stores > 0 && !matches!(fate, Fate::Live | Fate::Tail) {
            plan.dead.insert(*slot);
            layout.removed.insert(*slot);
        }
        if a.stores == 0 && a.readback {
            plan.undef_readbacks.insert(*slot);
            layout.undefined.insert(*slot);
        }
        if !a.live() && !a.quals.is_empty() {
            plan.undef_loads.insert(*slot);
            layout.undefined.insert(*slot);
        }
    }
    plan
}
