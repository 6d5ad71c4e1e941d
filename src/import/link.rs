//! Linking two modules before translation: which location (VARn/PATCHn slot) each
//! varying gets — matched by location (SPIR-V), by name (locations assigned
//! automatically), or as GL links GLSL: explicitly located varyings by location and
//! component, the others by name — and a shared numbering of uniforms, UBOs, SSBOs
//! and samplers across both stages.

use std::collections::BTreeMap;

use fxhash::FxHashMap;
use rspirv::spirv::StorageClass;

use super::explicit::{Explicit, GlslVersion};
use super::layout::{
    block_array, block_count, buf_size, data_shape_of, holds_array, holds_opaque, locations,
    opaque_count, per_vertex,
};
use super::module::{Module, Ty};
use crate::ir::{SrcLoc, Stage, UboDecl};
use crate::{Diagnostic, Error};

/// Where one stage's variables live in the pair's shared numbering.
#[derive(Clone, Debug, Default)]
pub(crate) struct StageLayout {
    /// Interface variable → index of its first VARn / PATCHn slot.
    pub io_base: FxHashMap<u32, u32>,
    /// Interface variable → its first SPIR-V location (member locations are absolute).
    pub first_loc: FxHashMap<u32, u32>,
    /// Default-block uniform → first word.
    pub uniform_word: FxHashMap<u32, u32>,
    /// Uniform block or push-constant block → UBO index.
    pub ubo_block: FxHashMap<u32, u32>,
    /// Storage buffer → buffer index.
    pub ssbo: FxHashMap<u32, u32>,
    /// Sampler/image (or array of them) → first sampler index.
    pub sampler: FxHashMap<u32, u32>,
    /// The UBO standing for the default uniform block, when a default-block uniform
    /// holds an array: such uniforms are read from it at byte offset 4 × word, so a
    /// dynamic index is one indexed load (see `layout::default_block_tree`).
    pub default_ubo: Option<u32>,
}

/// The pair's shared layout.
pub(crate) struct Linked {
    pub producer: StageLayout,
    pub consumer: StageLayout,
    pub uniform_words: u32,
    pub ubos: Vec<UboDecl>,
    /// Consumer inputs no producer output writes (SPIR-V: undefined, reported).
    pub warnings: Vec<String>,
}

/// How a resource is identified across the two stages.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Binding(u32, u32),
    Push,
    Name(String),
    /// Element `i` (row-major) of an array of blocks identified by the key.
    Element(Box<Key>, u32),
    /// The GL atomic counter buffer at this binding (a binding namespace of its
    /// own: `binding = 0` of a counter and of a storage block are two buffers).
    Counter(u32),
}

/// Links the two modules; `by_name` matches varyings by name instead of location,
/// except those `located` (the GLSL sources of producer and consumer) says the
/// source located explicitly, which match by location and component as in GL.
/// A consumer input no producer output matches is an error when `strict` (GLSL, where
/// it is a link error), else a warning in [`Linked::warnings`].
pub(crate) fn link(
    p: &Module,
    c: &Module,
    by_name: bool,
    strict: bool,
    located: Option<[&Explicit; 2]>,
) -> Result<Linked, Error> {
    let mut lp = StageLayout::default();
    let mut lc = StageLayout::default();
    for (m, l) in [(p, &mut lp), (c, &mut lc)] {
        for (id, g) in &m.vars {
            if matches!(g.class, StorageClass::Input | StorageClass::Output) {
                l.first_loc.insert(*id, first_location(m, *id));
            }
        }
    }
    let unmatched = match located {
        Some(sources) if by_name => link_gl(p, c, sources, &mut lp, &mut lc)?,
        _ => link_varyings(p, c, by_name, &mut lp, &mut lc)?,
    };
    let mut warnings = vec![];
    for (var, what) in unmatched {
        let msg = format!(
            "input `{}` ({what}) is not written by any output of the {} shader",
            c.name(var),
            p.stage
        );
        if strict {
            // At the input's declaration in the consumer's source, as GL's
            // qualifier errors are (`qualifier_error`).
            let pos = located.and_then(|[_, ec]| ec.position(var_declared_name(c, var)));
            let msg = format!("link error: {msg}");
            return Err(Error::Import(Diagnostic::new(Some(&c.file), pos, msg)));
        }
        warnings.push(format!("{}: {msg}; it reads undefined values", c.file));
    }
    let uniform_words = link_uniforms(p, c, &mut lp, &mut lc)?;
    let mut ubos = link_buffers(p, c, &mut lp, &mut lc)?;
    let arrays = [(p, &lp), (c, &lc)].into_iter().any(|(m, l)| {
        l.uniform_word
            .keys()
            .any(|v| m.vars.get(v).is_some_and(|g| holds_array(m, g.ty, 0)))
    });
    if arrays {
        // After the real blocks, so their numbering does not change.
        let block = ubos.len() as u32;
        ubos.push(UboDecl {
            block,
            size: uniform_words.saturating_mul(4).max(4),
            loc: None,
        });
        lp.default_ubo = Some(block);
        lc.default_ubo = Some(block);
    }
    link_samplers(p, c, &mut lp, &mut lc)?;
    Ok(Linked {
        producer: lp,
        consumer: lc,
        uniform_words,
        ubos,
        warnings,
    })
}

/// The first location of an interface variable. A block whose first member has a
/// `Location` starts at its members' lowest one, whatever the variable says: with
/// `--aml` glslang also gives such a block variable a location of its own, which
/// the members' override.
pub(super) fn first_location(m: &Module, var: u32) -> u32 {
    let d = m.deco(var);
    let Some(g) = m.vars.get(&var) else {
        return d.location.unwrap_or(0);
    };
    let ty = strip_vertex(m, var).unwrap_or(g.ty);
    let Some(Ty::Struct { members }) = m.types.get(&ty) else {
        return d.location.unwrap_or(0);
    };
    let member_min = (0..members.len() as u32)
        .filter_map(|i| m.member_deco(ty, i).location)
        .min();
    match (m.member_deco(ty, 0).location, d.location) {
        (None, Some(l)) => l,
        _ => member_min.unwrap_or(0),
    }
}

pub(super) fn has_member_locations(m: &Module, ty: u32) -> bool {
    match m.types.get(&ty) {
        Some(Ty::Struct { members }) => {
            (0..members.len() as u32).any(|i| m.member_deco(ty, i).location.is_some())
        }
        _ => false,
    }
}

/// The locations a block with member `Location`s spans from `first`: members
/// without one follow the previous member.
fn block_span(m: &Module, ty: u32, first: u32) -> Result<u32, Error> {
    let Some(Ty::Struct { members }) = m.types.get(&ty) else {
        return locations(m, ty, 0);
    };
    let (mut next, mut span) = (0u32, 0u32);
    for (i, mt) in members.iter().enumerate() {
        let at = match m.member_deco(ty, i as u32).location {
            Some(l) => l.saturating_sub(first),
            None => next,
        };
        next = at.saturating_add(locations(m, *mt, 0)?);
        span = span.max(next);
    }
    Ok(span)
}

/// The variable's type without its per-vertex array dimension.
fn strip_vertex(m: &Module, var: u32) -> Option<u32> {
    let g = m.vars.get(&var)?;
    let d = m.deco(var);
    let patch = d.patch || is_patch_block(m, g.ty) || d.builtin.is_some();
    if per_vertex(m.stage, g.class, patch) {
        if let Some(Ty::Array { elem, .. }) = m.types.get(&g.ty) {
            return Some(*elem);
        }
    }
    Some(g.ty)
}

/// Whether a block (or array of blocks) is per patch by its members' `Patch`
/// decorations.
pub(crate) fn is_patch_block(m: &Module, ty: u32) -> bool {
    let inner = match m.types.get(&ty) {
        Some(Ty::Array { elem, .. }) => *elem,
        _ => ty,
    };
    match m.types.get(&inner) {
        Some(Ty::Struct { members }) => {
            (0..members.len() as u32).any(|i| m.member_deco(inner, i).patch)
        }
        _ => false,
    }
}

/// A user varying of one side.
pub(super) struct Varying {
    pub(super) var: u32,
    /// Its name, or `block NAME` for a block (GL matches blocks by block name).
    pub(super) key: String,
    pub(super) patch: bool,
    /// Locations it spans.
    pub(super) slots: u32,
    pub(super) loc: Option<u32>,
    /// First component (`Component`) of a variable that is not a block.
    pub(super) comp: u32,
    /// Its type without the per-vertex array dimension.
    pub(super) ty: u32,
    /// The GLSL source located it explicitly.
    pub(super) explicit: bool,
}

fn is_builtin_var(m: &Module, var: u32, ty: u32) -> bool {
    if m.deco(var).builtin.is_some() {
        return true;
    }
    match m.types.get(&ty) {
        Some(Ty::Struct { members }) => {
            (0..members.len() as u32).any(|i| m.member_deco(ty, i).builtin.is_some())
        }
        _ => false,
    }
}

pub(super) fn varyings(m: &Module, class: StorageClass) -> Result<Vec<Varying>, Error> {
    varyings_of(m, class, None)
}

/// The user varyings of `class`, each marked explicit when `located` says the
/// GLSL source located it.
fn varyings_of(
    m: &Module,
    class: StorageClass,
    located: Option<&Explicit>,
) -> Result<Vec<Varying>, Error> {
    let mut out = vec![];
    for (id, g) in &m.vars {
        if g.class != class {
            continue;
        }
        let ty = strip_vertex(m, *id).unwrap_or(g.ty);
        // Fixed-function varyings have their own slots, like built-ins.
        if is_builtin_var(m, *id, ty) || super::compat::fixed_function_slot(m.name(*id)).is_some() {
            continue;
        }
        let is_block = matches!(m.types.get(&ty), Some(Ty::Struct { .. })) && m.deco(ty).block;
        let key = if is_block {
            format!("block {}", m.name(ty))
        } else {
            m.name(*id).to_owned()
        };
        let d = m.deco(*id);
        let member_locs = is_block && has_member_locations(m, ty);
        let loc = if member_locs {
            Some(first_location(m, *id))
        } else {
            d.location.or_else(|| m.deco(ty).location)
        };
        let slots = if member_locs {
            block_span(m, ty, first_location(m, *id))?
        } else {
            locations(m, ty, 0)?
        };
        out.push(Varying {
            var: *id,
            key,
            patch: d.patch || is_patch_block(m, g.ty),
            slots,
            loc,
            comp: d.component.unwrap_or(0),
            ty,
            explicit: located.is_some_and(|e| e.located(m, *id)),
        });
    }
    Ok(out)
}

/// Assigns slots; returns the consumer inputs no producer output matches (by name,
/// or by overlapping locations of the same kind), with how they were looked for.
fn link_varyings(
    p: &Module,
    c: &Module,
    by_name: bool,
    lp: &mut StageLayout,
    lc: &mut StageLayout,
) -> Result<Vec<(u32, String)>, Error> {
    let outs = if p.stage == Stage::Fragment {
        vec![]
    } else {
        varyings(p, StorageClass::Output)?
    };
    let ins = if c.stage == Stage::Vertex {
        vec![]
    } else {
        varyings(c, StorageClass::Input)?
    };
    link_outer(p, StorageClass::Input, lp)?;
    link_outer(c, StorageClass::Output, lc)?;
    if !by_name {
        for (m, list, l) in [(p, &outs, &mut *lp), (c, &ins, &mut *lc)] {
            for v in list {
                let loc = v.loc.ok_or_else(|| {
                    m.err_plain(format!(
                        "varying %{} `{}` has no Location decoration",
                        v.var,
                        m.name(v.var)
                    ))
                })?;
                check_range(m, v, loc)?;
                l.io_base.insert(v.var, loc);
            }
        }
        let written = |v: &Varying| {
            let (lo, hi) = (v.loc.unwrap_or(0), v.loc.unwrap_or(0) + v.slots);
            outs.iter().any(|o| {
                let (a, b) = (o.loc.unwrap_or(0), o.loc.unwrap_or(0) + o.slots);
                o.patch == v.patch && a < hi && lo < b
            })
        };
        let unmatched = ins.iter().filter(|v| !written(v));
        let what = |v: &Varying| format!("location {}", v.loc.unwrap_or(0));
        return Ok(unmatched.map(|v| (v.var, what(v))).collect());
    }
    let mut unmatched = vec![];
    for patch in [false, true] {
        let mut next = 0u32;
        let mut by_key: BTreeMap<&str, u32> = BTreeMap::new();
        let mut sorted: Vec<&Varying> = outs.iter().filter(|v| v.patch == patch).collect();
        sorted.sort_by_key(|v| (v.loc.unwrap_or(u32::MAX), v.var));
        for v in sorted {
            check_range(p, v, next)?;
            lp.io_base.insert(v.var, next);
            if !v.key.is_empty() {
                by_key.insert(&v.key, next);
            }
            next += v.slots;
        }
        let mut sorted: Vec<&Varying> = ins.iter().filter(|v| v.patch == patch).collect();
        sorted.sort_by_key(|v| (v.loc.unwrap_or(u32::MAX), v.var));
        for v in sorted {
            let base = match by_key.get(v.key.as_str()) {
                Some(b) if !v.key.is_empty() => *b,
                _ => {
                    unmatched.push((v.var, "matched by name".to_string()));
                    let b = next;
                    next = check_range(c, v, b)?;
                    b
                }
            };
            check_range(c, v, base)?;
            lc.io_base.insert(v.var, base);
        }
    }
    Ok(unmatched)
}

/// Assigns slots as GL links GLSL stages (GL 4.6 §7.4.1, GLSL 4.60 §4.4.1): an
/// explicitly located input matches the explicitly located output at its location
/// and component, which must have the same type (else a link error); an input the
/// source did not locate matches the unlocated output of its name (a located output
/// of that name does not). Located varyings keep their locations as slots, so
/// matched ones meet; the others take the first free slots, in the order
/// [`link_varyings`] numbers them (so a pair without explicit locations links as
/// before). A block whose members carry locations is matched member by member
/// ([`located_parts`]), which also links its members to located variables as
/// separable programs do. Returns the unmatched consumer inputs.
fn link_gl(
    p: &Module,
    c: &Module,
    [ep, ec]: [&Explicit; 2],
    lp: &mut StageLayout,
    lc: &mut StageLayout,
) -> Result<Vec<(u32, String)>, Error> {
    let outs = match p.stage {
        Stage::Fragment => vec![],
        _ => varyings_of(p, StorageClass::Output, Some(ep))?,
    };
    let ins = match c.stage {
        Stage::Vertex => vec![],
        _ => varyings_of(c, StorageClass::Input, Some(ec))?,
    };
    link_outer(p, StorageClass::Input, lp)?;
    link_outer(c, StorageClass::Output, lc)?;
    // GL checks qualifiers by the program's version, the higher of the two.
    let version = ep.version.max(ec.version);
    let mut unmatched = vec![];
    for patch in [false, true] {
        let mut used = 0u64;
        let mut by_key: BTreeMap<&str, (u32, &Varying)> = BTreeMap::new();
        let place = |m: &Module, v: &Varying, base: u32, used: &mut u64| {
            let end = check_range(m, v, base)?;
            *used |= slot_mask(base, end);
            Ok::<u32, Error>(base)
        };
        let (located, mut named): (Vec<&Varying>, Vec<&Varying>) = outs
            .iter()
            .filter(|v| v.patch == patch)
            .partition(|v| v.explicit);
        let mut parts = vec![];
        for v in &located {
            let base = place(p, v, v.loc.unwrap_or(0), &mut used)?;
            lp.io_base.insert(v.var, base);
            parts.extend(located_parts(p, v)?);
        }
        named.sort_by_key(|v| (v.loc.unwrap_or(u32::MAX), v.var));
        for v in named {
            let base = place(p, v, first_free(used, v.slots), &mut used)?;
            lp.io_base.insert(v.var, base);
            by_key.insert(&v.key, (base, v));
        }
        let mut sorted: Vec<&Varying> = ins.iter().filter(|v| v.patch == patch).collect();
        sorted.sort_by_key(|v| (v.loc.unwrap_or(u32::MAX), v.var));
        for v in sorted {
            let matched = if v.explicit {
                match_located(p, &parts, c, v, ec, version)?
            } else {
                match by_key.get(v.key.as_str()) {
                    Some((base, o)) => {
                        check_named_qualifiers(p, o, c, v, ec, version)?;
                        Ok(*base)
                    }
                    None => Err("matched by name".to_owned()),
                }
            };
            let base = match matched {
                Ok(b) => b,
                Err(how) => {
                    unmatched.push((v.var, how));
                    // Reads nothing the producer writes (a link error for GLSL,
                    // reported by the caller): a located one at its location, whose
                    // range its stage checked, so the error is the link error.
                    let free = first_free(used, v.slots);
                    place(
                        c,
                        v,
                        if v.explicit { v.loc.unwrap_or(0) } else { free },
                        &mut used,
                    )?
                }
            };
            check_range(c, v, base)?;
            lc.io_base.insert(v.var, base);
        }
    }
    Ok(unmatched)
}

/// Checks the qualifiers of an input matched by name against its output's, part
/// by part ([`named_qualifiers`], [`qualifier_mismatch`]).
fn check_named_qualifiers(
    p: &Module,
    o: &Varying,
    c: &Module,
    v: &Varying,
    ec: &Explicit,
    version: GlslVersion,
) -> Result<(), Error> {
    let outs = named_qualifiers(p, o);
    for ((out_name, oq), (in_name, iq)) in outs.iter().zip(named_qualifiers(c, v)) {
        if let Some(why) = qualifier_mismatch(version, *oq, iq) {
            let pos = ec.position(declared_name(c, v));
            return Err(qualifier_error(p, out_name, c, &in_name, why, pos));
        }
    }
    Ok(())
}

/// A located variable, or a member of a block whose members carry locations.
struct Part {
    loc: u32,
    comp: u32,
    ty: u32,
    /// `var` or `var.member`, for messages.
    name: String,
    quals: Qualifiers,
}

/// How a varying (or block member) is interpolated: its interpolation qualifier
/// and its auxiliary ones, as its decorations (and its block variable's) say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Qualifiers {
    /// `smooth` (no decoration), `flat` or `noperspective`.
    interpolation: &'static str,
    centroid: bool,
    sample: bool,
}

impl Qualifiers {
    /// The qualifiers of variable `var`, or of member `member` of its block type `ty`.
    fn of(m: &Module, var: u32, ty: u32, member: Option<u32>) -> Qualifiers {
        let d = m.deco(var);
        let md = member.map(|i| m.member_deco(ty, i));
        let any = |f: fn(&super::module::Decos) -> bool| f(&d) || md.as_ref().is_some_and(f);
        Qualifiers {
            interpolation: if any(|d| d.flat) {
                "flat"
            } else if any(|d| d.noperspective) {
                "noperspective"
            } else {
                "smooth"
            },
            centroid: any(|d| d.centroid),
            sample: any(|d| d.sample),
        }
    }

    /// The auxiliary qualifier, for messages.
    fn auxiliary(self) -> &'static str {
        match (self.sample, self.centroid) {
            (true, _) => "sample",
            (_, true) => "centroid",
            _ => "neither centroid nor sample",
        }
    }
}

/// Why GL refuses to link an output with qualifiers `out` to an input with `inp`
/// in a program of GLSL `version` (the higher of the two stages'), if it does.
///
/// Interpolation qualifiers (`flat`, `noperspective`, none) must match across
/// stages below GLSL 4.40, whose section 4.5 keeps the rule within a stage only,
/// and in every GLSL ES version. The auxiliary ones (`centroid`, `sample`) must
/// match below GLSL 4.30 and GLSL ES 3.10; from those versions on a mismatch is
/// allowed and the consumer's qualifiers apply, which is what import translates
/// (the fragment shader's input decorations set the interpolation).
fn qualifier_mismatch(version: GlslVersion, out: Qualifiers, inp: Qualifiers) -> Option<Mismatch> {
    let interpolation_binds = version.es || version.number < 440;
    let auxiliary_binds = if version.es {
        version.number < 310
    } else {
        version.number < 430
    };
    if interpolation_binds && out.interpolation != inp.interpolation {
        let below = if version.es {
            "GLSL ES"
        } else {
            "GLSL below 4.40"
        };
        return Some(Mismatch {
            input: inp.interpolation,
            output: out.interpolation,
            rule: format!("{below} requires interpolation qualifiers to match"),
        });
    }
    let auxiliary = |q: Qualifiers| (q.centroid, q.sample);
    if auxiliary_binds && auxiliary(out) != auxiliary(inp) {
        let below = if version.es {
            "GLSL ES below 3.10"
        } else {
            "GLSL below 4.30"
        };
        return Some(Mismatch {
            input: inp.auxiliary(),
            output: out.auxiliary(),
            rule: format!("{below} requires centroid and sample to match"),
        });
    }
    None
}

/// Qualifiers GL refuses to link: the input's, the output's and the rule.
struct Mismatch {
    input: &'static str,
    output: &'static str,
    rule: String,
}

/// The qualifiers of each part GL matches by name: the variable, or each member
/// of a block.
fn named_qualifiers(m: &Module, v: &Varying) -> Vec<(String, Qualifiers)> {
    let name = display_name(m, v);
    match m.types.get(&v.ty) {
        Some(Ty::Struct { members }) if m.deco(v.ty).block => (0..members.len() as u32)
            .map(|i| {
                let member = m.member_names.get(&(v.ty, i)).map_or("", String::as_str);
                (
                    format!("{name}.{member}"),
                    Qualifiers::of(m, v.var, v.ty, Some(i)),
                )
            })
            .collect(),
        _ => vec![(name, Qualifiers::of(m, v.var, v.ty, None))],
    }
}

/// The link error for an input whose qualifiers GL refuses against the output it
/// matches, at the input's declaration.
fn qualifier_error(
    p: &Module,
    out_name: &str,
    c: &Module,
    in_name: &str,
    why: Mismatch,
    pos: Option<SrcLoc>,
) -> Error {
    let msg = format!(
        "link error: input `{in_name}` is {} but output `{out_name}` of the {} shader is {} ({})",
        why.input, p.stage, why.output, why.rule
    );
    Error::Import(Diagnostic::new(Some(&c.file), pos, msg))
}

/// `location L` or `location L component C`.
fn place_of(loc: u32, comp: u32) -> String {
    match comp {
        0 => format!("location {loc}"),
        comp => format!("location {loc} component {comp}"),
    }
}

/// The parts GL matches of a located varying: itself, or each member of a block
/// whose members carry locations (a member without one follows the previous).
fn located_parts(m: &Module, v: &Varying) -> Result<Vec<Part>, Error> {
    let base = v.loc.unwrap_or(0);
    let name = display_name(m, v);
    let members = match m.types.get(&v.ty) {
        Some(Ty::Struct { members }) if has_member_locations(m, v.ty) => members,
        _ => {
            return Ok(vec![Part {
                loc: base,
                comp: v.comp,
                ty: v.ty,
                name,
                quals: Qualifiers::of(m, v.var, v.ty, None),
            }])
        }
    };
    let mut out = vec![];
    let mut next = base;
    for (i, mt) in members.iter().enumerate() {
        let d = m.member_deco(v.ty, i as u32);
        let loc = d.location.unwrap_or(next);
        let member = m.member_names.get(&(v.ty, i as u32));
        out.push(Part {
            loc,
            comp: d.component.unwrap_or(0),
            ty: *mt,
            name: format!("{name}.{}", member.map_or("", String::as_str)),
            quals: Qualifiers::of(m, v.var, v.ty, Some(i as u32)),
        });
        next = loc.saturating_add(locations(m, *mt, 0)?);
    }
    Ok(out)
}

/// Matches a located input part by part against the producer's located `outputs`:
/// its slot (its own location, where the outputs sit too), or how it was looked
/// for when some part has no output at its location and component. A part whose
/// output has another type, or qualifiers GL refuses in a program of `version`
/// ([`qualifier_mismatch`]), is a link error at the input's declaration.
fn match_located(
    p: &Module,
    outputs: &[Part],
    c: &Module,
    v: &Varying,
    ec: &Explicit,
    version: GlslVersion,
) -> Result<Result<u32, String>, Error> {
    for part in located_parts(c, v)? {
        let found = outputs
            .iter()
            .find(|o| o.loc == part.loc && o.comp == part.comp);
        let Some(o) = found else {
            return Ok(Err(place_of(part.loc, part.comp)));
        };
        if !same_type(p, o.ty, c, part.ty, 0) {
            let pos = ec.position(declared_name(c, v));
            return Err(type_mismatch(p, o, c, &part, pos));
        }
        if let Some(why) = qualifier_mismatch(version, o.quals, part.quals) {
            let pos = ec.position(declared_name(c, v));
            return Err(qualifier_error(p, &o.name, c, &part.name, why, pos));
        }
    }
    Ok(Ok(v.loc.unwrap_or(0)))
}

/// GL links two located varyings only when their types match (GL 4.6 §7.4.1).
fn type_mismatch(p: &Module, o: &Part, c: &Module, i: &Part, pos: Option<SrcLoc>) -> Error {
    let msg = format!(
        "link error: input `{}` at {} is {} but output `{}` of the {} shader there is {}",
        i.name,
        place_of(i.loc, i.comp),
        type_name(c, i.ty, 0),
        o.name,
        p.stage,
        type_name(p, o.ty, 0),
    );
    Error::Import(Diagnostic::new(Some(&c.file), pos, msg))
}

/// Slots `from..to` as bits (slots past 63 are beyond the 32 generic ones, which
/// `check_range` has refused).
fn slot_mask(from: u32, to: u32) -> u64 {
    (from..to.min(64)).fold(0, |m, s| m | 1 << s)
}

/// The first slot from which `n` slots are free; past the used ones when none are
/// (`check_range` then reports the overflow).
fn first_free(used: u64, n: u32) -> u32 {
    (0..32u32)
        .find(|&b| slot_mask(b, b.saturating_add(n)) & used == 0)
        .unwrap_or(64 - used.leading_zeros())
}

/// A varying's name for messages: the variable's, or `block NAME` for an
/// anonymous block.
fn display_name(m: &Module, v: &Varying) -> String {
    match m.name(v.var) {
        "" => v.key.clone(),
        name => name.to_owned(),
    }
}

/// The word the source declares the varying with (its instance name, or the block
/// name of an anonymous block).
fn declared_name<'a>(m: &'a Module, v: &Varying) -> &'a str {
    match m.name(v.var) {
        "" => m.name(v.ty),
        name => name,
    }
}

/// [`declared_name`] of the interface variable `var`: its name, or its block's
/// for an anonymous block.
fn var_declared_name(m: &Module, var: u32) -> &str {
    match (m.name(var), m.vars.get(&var)) {
        ("", Some(g)) => m.name(g.ty),
        (name, _) => name,
    }
}

/// Whether two types are the same GLSL type: the same shape, struct and block
/// members with the same names (where both modules name them), types and
/// locations.
fn same_type(p: &Module, pt: u32, c: &Module, ct: u32, depth: u32) -> bool {
    if depth > 32 {
        return false;
    }
    match (p.types.get(&pt), c.types.get(&ct)) {
        (Some(Ty::Vector { elem: a, n: x }), Some(Ty::Vector { elem: b, n: y })) => {
            x == y && same_type(p, *a, c, *b, depth + 1)
        }
        (Some(Ty::Matrix { col: a, n: x }), Some(Ty::Matrix { col: b, n: y })) => {
            x == y && same_type(p, *a, c, *b, depth + 1)
        }
        (Some(Ty::Array { elem: a, len: x }), Some(Ty::Array { elem: b, len: y })) => {
            x == y && same_type(p, *a, c, *b, depth + 1)
        }
        (Some(Ty::Struct { members: a }), Some(Ty::Struct { members: b })) => {
            a.len() == b.len()
                && (0..a.len() as u32).all(|i| {
                    let (na, nb) = (p.member_names.get(&(pt, i)), c.member_names.get(&(ct, i)));
                    let named = match (na, nb) {
                        (Some(x), Some(y)) if !x.is_empty() && !y.is_empty() => x == y,
                        _ => true,
                    };
                    let (da, db) = (p.member_deco(pt, i), c.member_deco(ct, i));
                    named
                        && da.location == db.location
                        && da.component == db.component
                        && same_type(p, a[i as usize], c, b[i as usize], depth + 1)
                })
        }
        (Some(x), Some(y)) => x == y && !matches!(x, Ty::Pointer { .. }),
        _ => false,
    }
}

/// A type as GLSL spells it, for messages.
fn type_name(m: &Module, ty: u32, depth: u32) -> String {
    if depth > 32 {
        return "…".to_owned();
    }
    let prefix = |elem: u32| match m.types.get(&elem) {
        Some(Ty::Int { signed: true, .. }) => "i",
        Some(Ty::Int { signed: false, .. }) => "u",
        Some(Ty::Bool) => "b",
        Some(Ty::Float { width: 64 }) => "d",
        _ => "",
    };
    match m.types.get(&ty) {
        Some(Ty::Bool) => "bool".to_owned(),
        Some(Ty::Int { width, signed }) => {
            let base = if *signed { "int" } else { "uint" };
            match width {
                32 => base.to_owned(),
                w => format!("{base}{w}_t"),
            }
        }
        Some(Ty::Float { width: 64 }) => "double".to_owned(),
        Some(Ty::Float { width: 16 }) => "float16_t".to_owned(),
        Some(Ty::Float { .. }) => "float".to_owned(),
        Some(Ty::Vector { elem, n }) => format!("{}vec{n}", prefix(*elem)),
        Some(Ty::Matrix { col, n }) => match m.types.get(col) {
            Some(Ty::Vector { elem, n: rows }) if rows == n => format!("{}mat{n}", prefix(*elem)),
            Some(Ty::Vector { elem, n: rows }) => format!("{}mat{n}x{rows}", prefix(*elem)),
            _ => "matrix".to_owned(),
        },
        Some(Ty::Array { elem, len }) => format!("{}[{len}]", type_name(m, *elem, depth + 1)),
        Some(Ty::Struct { .. }) if m.deco(ty).block => format!("block {}", m.name(ty)),
        Some(Ty::Struct { .. }) => format!("struct {}", m.name(ty)),
        _ => "an opaque type".to_owned(),
    }
}

/// The interfaces outside the pair (producer inputs, consumer outputs) keep their
/// locations, or are numbered in order when they have none; a family (per-vertex,
/// per-patch) that does not fit the 32 slots there moves down by its lowest
/// location, keeping its own layout ([`outer_shift`]).
fn link_outer(m: &Module, class: StorageClass, l: &mut StageLayout) -> Result<(), Error> {
    let skip = match class {
        StorageClass::Input => m.stage == Stage::Vertex,
        _ => m.stage == Stage::Fragment,
    };
    if skip {
        return Ok(());
    }
    let all = varyings(m, class)?;
    for patch in [false, true] {
        let mut next = 0u32;
        let mut placed = vec![];
        for v in all.iter().filter(|v| v.patch == patch) {
            let base = v.loc.unwrap_or(next);
            // Its locations must exist before any move (export lays the variable
            // out in them).
            let Some(end) = base.checked_add(v.slots) else {
                return check_range(m, v, base).map(|_| ());
            };
            next = next.max(end);
            placed.push((v, base));
        }
        let shift = outer_shift(&placed);
        for (v, base) in placed {
            check_range(m, v, base - shift)?;
            l.io_base.insert(v.var, base - shift);
        }
    }
    Ok(())
}

/// How far a family of outer varyings (each with its location) moves down: 0 when
/// every one ends within the 32 slots, else the lowest location. Nothing in the
/// pair links to them, so any placement that keeps them apart means the same;
/// this one is a function of the module alone, so that export, which links the
/// modules again, finds each variable at the slot import gave it (and writes it
/// back with its own `Location`). glslang's `--aml` numbers a GLSL stage's
/// per-vertex and per-patch varyings in one sequence, which puts a TCS's patch
/// outputs behind its per-vertex ones (piglit: 30 patch floats at 31..60 behind a
/// 31-location block), while GL, like varysat's `PATCHn`, gives them their own
/// space.
fn outer_shift(placed: &[(&Varying, u32)]) -> u32 {
    let fits = placed
        .iter()
        .all(|(v, base)| u64::from(*base) + u64::from(v.slots) <= 32);
    match fits {
        true => 0,
        false => placed.iter().map(|(_, base)| *base).min().unwrap_or(0),
    }
}

/// Checks that `v` placed at `base` fits the 32 generic slots; returns its end. The
/// sum is checked (in `u64` for the message): a `Location` near 2^32 overflowed
/// `base + slots` (`import_spirv` fuzz target), and array slot counts saturate at
/// `u32::MAX`.
fn check_range(m: &Module, v: &Varying, base: u32) -> Result<u32, Error> {
    match base.checked_add(v.slots) {
        Some(end) if end <= 32 => Ok(end),
        _ => {
            let what = if v.patch { "PATCH" } else { "VAR" };
            Err(m.err_plain(format!(
                "varying `{}` needs {what}{base}..{what}{}, beyond the 32 generic slots",
                m.name(v.var),
                (u64::from(base) + u64::from(v.slots)).saturating_sub(1)
            )))
        }
    }
}

pub(crate) fn opaque(m: &Module, mut ty: u32) -> bool {
    while let Some(Ty::Array { elem, .. }) = m.types.get(&ty) {
        ty = *elem;
    }
    matches!(m.types.get(&ty), Some(Ty::Opaque))
}

fn link_uniforms(
    p: &Module,
    c: &Module,
    lp: &mut StageLayout,
    lc: &mut StageLayout,
) -> Result<u32, Error> {
    let mut sizes: BTreeMap<String, u32> = BTreeMap::new();
    for m in [p, c] {
        for (id, g) in &m.vars {
            if g.class == StorageClass::UniformConstant && !opaque(m, g.ty) {
                let n = data_shape_of(m, g.ty)?.leaf_bits().len() as u32;
                let e = sizes.entry(uniform_key(m, *id)).or_insert(0);
                *e = (*e).max(n);
            }
        }
    }
    let mut base = BTreeMap::new();
    let mut next = 0u32;
    for (k, n) in &sizes {
        base.insert(k.clone(), next);
        next += n;
    }
    for (m, l) in [(p, lp), (c, lc)] {
        for (id, g) in &m.vars {
            if g.class == StorageClass::UniformConstant && !opaque(m, g.ty) {
                if let Some(b) = base.get(&uniform_key(m, *id)) {
                    l.uniform_word.insert(*id, *b);
                }
            }
        }
    }
    Ok(next)
}

/// The default-block uniforms a stage reads, as `(name, first word, words)`:
/// the name is the one both stages link by (`location N` for an unnamed one).
pub(crate) fn default_uniforms(
    m: &Module,
    l: &StageLayout,
) -> Result<Vec<(String, u32, u32)>, Error> {
    let mut out = vec![];
    for (id, word) in &l.uniform_word {
        let ty = m.vars.get(id).map(|g| g.ty).unwrap_or(0);
        let words = data_shape_of(m, ty)?.leaf_bits().len() as u32;
        out.push((uniform_key(m, *id), *word, words));
    }
    Ok(out)
}

fn uniform_key(m: &Module, var: u32) -> String {
    match m.deco(var).location {
        Some(l) if m.name(var).is_empty() => format!("location {l}"),
        _ => m.name(var).to_owned(),
    }
}

fn resource_key(m: &Module, var: u32) -> Key {
    let d = m.deco(var);
    match d.binding {
        Some(b) => Key::Binding(d.set.unwrap_or(0), b),
        None => Key::Name(m.name(var).to_owned()),
    }
}

/// Most blocks an array of uniform or storage blocks imported (GL guarantees 14
/// uniform buffer bindings per stage, Vulkan 12; this only bounds hostile lengths).
const MAX_BLOCK_ARRAY: u32 = 1024;

/// The elements of an array of blocks of type `ty` (the whole variable when it
/// is a single block): their keys and block types.
fn block_parts(m: &Module, ty: u32, key: Key) -> Result<Vec<(Key, u32)>, Error> {
    let Some((elem, dims)) = block_array(m, ty) else {
        return Ok(vec![(key, ty)]);
    };
    let len = block_count(&dims)
        .filter(|n| *n <= MAX_BLOCK_ARRAY)
        .ok_or_else(|| {
            m.err_plain(format!(
                "an array of {dims:?} blocks (more than {MAX_BLOCK_ARRAY})"
            ))
        })?;
    Ok((0..len)
        .map(|i| (Key::Element(Box::new(key.clone()), i), elem))
        .collect())
}

/// The UBOs one uniform variable of type `ty` and key `key` stands for, with their
/// sizes: itself, or each element of an array of blocks.
fn ubo_parts(m: &Module, ty: u32, key: Key) -> Result<Vec<(Key, u32)>, Error> {
    block_parts(m, ty, key)?
        .into_iter()
        .map(|(k, t)| Ok((k, buf_size(m, t)?)))
        .collect()
}

fn link_buffers(
    p: &Module,
    c: &Module,
    lp: &mut StageLayout,
    lc: &mut StageLayout,
) -> Result<Vec<UboDecl>, Error> {
    let mut ubo_sizes: BTreeMap<Key, u32> = BTreeMap::new();
    let mut ssbos: BTreeMap<Key, ()> = BTreeMap::new();
    let classify = |m: &Module, id: u32| -> Option<(bool, Key)> {
        let g = m.vars.get(&id)?;
        // An array of blocks is a uniform or storage buffer by its element type.
        let block = m.deco(block_array(m, g.ty).map_or(g.ty, |(elem, _)| elem));
        match g.class {
            StorageClass::PushConstant => Some((true, Key::Push)),
            StorageClass::Uniform if block.buffer_block => Some((false, resource_key(m, id))),
            StorageClass::Uniform => Some((true, resource_key(m, id))),
            StorageClass::StorageBuffer => Some((false, resource_key(m, id))),
            // OpenGL SPIR-V's atomic counters: each counter is a word of the
            // counter buffer bound at the variable's binding (every variable of
            // one binding shares it, at its own `Offset`), a storage buffer to the IR.
            StorageClass::AtomicCounter => {
                Some((false, Key::Counter(m.deco(id).binding.unwrap_or(0))))
            }
            _ => None,
        }
    };
    for m in [p, c] {
        for (id, g) in &m.vars {
            match classify(m, *id) {
                Some((true, k)) => {
                    for (part, size) in ubo_parts(m, g.ty, k)? {
                        let e = ubo_sizes.entry(part).or_insert(0);
                        *e = (*e).max(size);
                    }
                }
                Some((false, k)) => {
                    for (part, _) in block_parts(m, g.ty, k)? {
                        ssbos.insert(part, ());
                    }
                }
                None => {}
            }
        }
    }
    let ubo_index: BTreeMap<&Key, u32> = ubo_sizes.keys().zip(0..).collect();
    let ssbo_index: BTreeMap<&Key, u32> = ssbos.keys().zip(0..).collect();
    for (m, l) in [(p, lp), (c, lc)] {
        for (id, g) in &m.vars {
            match classify(m, *id) {
                Some((true, k)) => {
                    // An array of blocks: its elements' keys sort together, so
                    // they are consecutive UBOs from element 0's.
                    let first = match block_array(m, g.ty) {
                        Some(_) => Key::Element(Box::new(k), 0),
                        None => k,
                    };
                    l.ubo_block
                        .insert(*id, ubo_index.get(&first).copied().unwrap_or(0));
                }
                Some((false, k)) => {
                    let first = match block_array(m, g.ty) {
                        Some(_) => Key::Element(Box::new(k), 0),
                        None => k,
                    };
                    l.ssbo
                        .insert(*id, ssbo_index.get(&first).copied().unwrap_or(0));
                }
                None => {}
            }
        }
    }
    Ok(ubo_sizes
        .values()
        .zip(0..)
        .map(|(size, block)| UboDecl {
            block,
            size: (*size).max(4).div_ceil(4) * 4,
            loc: None,
        })
        .collect())
}

fn link_samplers(
    p: &Module,
    c: &Module,
    lp: &mut StageLayout,
    lc: &mut StageLayout,
) -> Result<(), Error> {
    // A uniform holding handles (a sampler, an array of them, a struct with sampler
    // members) takes consecutive sampler numbers, one a handle, in type order.
    let mut counts: BTreeMap<Key, u32> = BTreeMap::new();
    for m in [p, c] {
        for (id, g) in &m.vars {
            if g.class == StorageClass::UniformConstant && holds_opaque(m, g.ty) {
                let e = counts.entry(resource_key(m, *id)).or_insert(0);
                *e = (*e).max(opaque_count(m, g.ty, 0));
            }
        }
    }
    let mut base = BTreeMap::new();
    let mut next = 0u32;
    for (k, n) in &counts {
        base.insert(k.clone(), next);
        next = next.saturating_add(*n);
    }
    for (m, l) in [(p, lp), (c, lc)] {
        for (id, g) in &m.vars {
            if g.class == StorageClass::UniformConstant && holds_opaque(m, g.ty) {
                if let Some(b) = base.get(&resource_key(m, *id)) {
                    l.sampler.insert(*id, *b);
                }
            }
        }
    }
    Ok(())
}
