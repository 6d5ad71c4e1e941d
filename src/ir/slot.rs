//! Varying slots: the vec4 locations NIR names (`POS`, `VAR3`, `PATCH0`, …) and the
//! scalar component (and 16-bit half) of one of them that a load or store addresses.

use std::fmt;
use std::str::FromStr;

/// Vertex attribute slots: 16 generic attributes, doubled because a 64-bit
/// `dvec3`/`dvec4` attribute takes two slots (Mesa's dual-slot inputs).
pub const ATTR_SLOTS: u8 = 32;

/// One vec4 I/O location, named as NIR names varying slots.
///
/// `Attr` (vertex attributes, VS inputs only) and the fragment results `Data`,
/// `Depth`, `SampleMask` (FS outputs only) are not varyings but share the addressing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Slot {
    /// Clip-space position.
    Pos,
    /// Point size.
    Psiz,
    /// Clip distances 0-3 (`false`) or 4-7 (`true`).
    ClipDist(bool),
    /// Cull distances 0-3 (`false`) or 4-7 (`true`).
    CullDist(bool),
    /// Layer index.
    Layer,
    /// Viewport index.
    Viewport,
    /// Primitive id written by a GS.
    PrimitiveId,
    /// Front colour 0 or 1.
    Col(u8),
    /// Back colour 0 or 1.
    Bfc(u8),
    /// Fog coordinate.
    Fogc,
    /// Legacy texture coordinate 0-7.
    Tex(u8),
    /// Point coordinate.
    Pntc,
    /// Generic varying 0-31.
    Var(u8),
    /// Generic per-patch varying 0-31.
    Patch(u8),
    /// Outer tessellation levels (4 components).
    TessLevelOuter,
    /// Inner tessellation levels (2 components).
    TessLevelInner,
    /// Vertex attribute 0-31 (VS input; see [`ATTR_SLOTS`]).
    Attr(u8),
    /// Fragment colour output 0-7.
    Data(u8),
    /// Fragment depth output.
    Depth,
    /// Fragment sample mask output.
    SampleMask,
    /// Legacy clip vertex (user clipping against clip planes), consumed by clipping
    /// after the last pre-rasterization stage; last so that adding it kept the order
    /// of every other slot.
    ClipVertex,
    /// `gl_ViewportMask[0]` (`GL_NV_viewport_array2`): one int word whose set bits
    /// are the viewports the primitive is broadcast to. Written by the last
    /// pre-rasterization stage only; after `ClipVertex` for the same reason.
    ViewportMask,
}

/// Which 16 bits of a 32-bit component a 16-bit value occupies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Half {
    /// The whole 32-bit component (32-bit and 1-bit values).
    Full,
    /// Low 16 bits.
    Lo,
    /// High 16 bits.
    Hi,
}

/// A scalar I/O address: slot, component (0-3 = x-w) and half.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IoSlot {
    /// The vec4 slot.
    pub slot: Slot,
    /// Component 0..4 (x, y, z, w).
    pub comp: u8,
    /// Half of the component for 16-bit values.
    pub half: Half,
}

/// The role a slot plays, which decides how freely it may be optimized
/// (reference/000 §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SlotClass {
    /// VARn, FOGC, PNTC, PRIMITIVE_ID: fully optimized and compacted.
    Generic,
    /// PATCHn: fully optimized, packed apart from per-vertex varyings.
    Patch,
    /// TEXn: dead outputs removed; not deduplicated or compacted.
    Tex,
    /// COLn/BFCn: constants only in [0,1], deduplicated among colours only.
    Color,
    /// POS, PSIZ, CLIP/CULL, LAYER, VIEWPORT, CLIP_VERTEX, VIEWPORT_MASK:
    /// system-value outputs that stay.
    SysVal,
    /// TESS_LEVEL_OUTER/INNER.
    TessLevel,
    /// Vertex attributes (VS inputs).
    Attribute,
    /// Fragment shader results.
    FragResult,
}

const COMPONENTS: [char; 4] = ['x', 'y', 'z', 'w'];

impl Slot {
    /// Whether an indirect (dynamically indexed) access may address this slot's
    /// family: the generic varyings, texture coordinates and clip/cull distances.
    pub fn indexable(self) -> bool {
        matches!(
            self,
            Slot::Var(_) | Slot::Patch(_) | Slot::Tex(_) | Slot::ClipDist(_) | Slot::CullDist(_)
        )
    }

    /// Every slot, in a fixed order (useful for exhaustive tests and generators).
    pub fn all() -> Vec<Slot> {
        let mut v = vec![
            Slot::Pos,
            Slot::Psiz,
            Slot::ClipDist(false),
            Slot::ClipDist(true),
            Slot::CullDist(false),
            Slot::CullDist(true),
            Slot::Layer,
            Slot::Viewport,
            Slot::PrimitiveId,
            Slot::Fogc,
            Slot::Pntc,
            Slot::TessLevelOuter,
            Slot::TessLevelInner,
            Slot::Depth,
            Slot::SampleMask,
        ];
        v.extend((0..2).map(Slot::Col));
        v.extend((0..2).map(Slot::Bfc));
        v.extend((0..8).map(Slot::Tex));
        v.extend((0..32).map(Slot::Var));
        v.extend((0..32).map(Slot::Patch));
        v.extend((0..ATTR_SLOTS).map(Slot::Attr));
        v.extend((0..8).map(Slot::Data));
        v.push(Slot::ClipVertex);
        v.push(Slot::ViewportMask);
        v
    }

    /// The class that decides the optimization rules for this slot.
    pub fn class(self) -> SlotClass {
        match self {
            Slot::Var(_) | Slot::Fogc | Slot::Pntc | Slot::PrimitiveId => SlotClass::Generic,
            Slot::Patch(_) => SlotClass::Patch,
            Slot::Tex(_) => SlotClass::Tex,
            Slot::Col(_) | Slot::Bfc(_) => SlotClass::Color,
            Slot::Pos
            | Slot::Psiz
            | Slot::ClipDist(_)
            | Slot::CullDist(_)
            | Slot::Layer
            | Slot::Viewport
            | Slot::ClipVertex
            | Slot::ViewportMask => SlotClass::SysVal,
            Slot::TessLevelOuter | Slot::TessLevelInner => SlotClass::TessLevel,
            Slot::Attr(_) => SlotClass::Attribute,
            Slot::Data(_) | Slot::Depth | Slot::SampleMask => SlotClass::FragResult,
        }
    }

    /// Whether the slot is per patch (PATCHn and tessellation levels).
    pub fn is_patch(self) -> bool {
        matches!(self.class(), SlotClass::Patch | SlotClass::TessLevel)
    }

    /// Number of valid components (tess inner levels have 2, scalar slots 1).
    pub fn num_components(self) -> u8 {
        match self {
            Slot::TessLevelInner => 2,
            Slot::Psiz
            | Slot::Layer
            | Slot::Viewport
            | Slot::ViewportMask
            | Slot::PrimitiveId
            | Slot::Depth
            | Slot::SampleMask
            | Slot::Fogc => 1,
            Slot::Pntc => 2,
            _ => 4,
        }
    }

    /// Whether a value written here is a varying, i.e. may cross between two stages.
    pub fn is_varying(self) -> bool {
        !matches!(self.class(), SlotClass::Attribute | SlotClass::FragResult)
    }

    /// A dense index (0..NUM_SLOTS) for tables keyed by slot.
    pub fn index(self) -> usize {
        Slot::all().iter().position(|s| *s == self).unwrap_or(0)
    }

    /// The generic slot `base + n` within an indexed family (VARn, PATCHn, TEXn…),
    /// or `None` when it leaves the family.
    pub fn offset(self, n: u32) -> Option<Slot> {
        let add = |base: u8, max: u32| -> Option<u8> {
            let v = base as u32 + n;
            (v < max).then_some(v as u8)
        };
        Some(match self {
            Slot::Var(i) => Slot::Var(add(i, 32)?),
            Slot::Patch(i) => Slot::Patch(add(i, 32)?),
            Slot::Tex(i) => Slot::Tex(add(i, 8)?),
            Slot::Col(i) => Slot::Col(add(i, 2)?),
            Slot::Bfc(i) => Slot::Bfc(add(i, 2)?),
            Slot::Attr(i) => Slot::Attr(add(i, ATTR_SLOTS as u32)?),
            Slot::Data(i) => Slot::Data(add(i, 8)?),
            Slot::ClipDist(false) if n <= 1 => Slot::ClipDist(n == 1),
            Slot::CullDist(false) if n <= 1 => Slot::CullDist(n == 1),
            s if n == 0 => s,
            _ => return None,
        })
    }
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Slot::Pos => write!(f, "POS"),
            Slot::Psiz => write!(f, "PSIZ"),
            Slot::ClipDist(b) => write!(f, "CLIP_DIST{}", *b as u8),
            Slot::CullDist(b) => write!(f, "CULL_DIST{}", *b as u8),
            Slot::Layer => write!(f, "LAYER"),
            Slot::Viewport => write!(f, "VIEWPORT"),
            Slot::PrimitiveId => write!(f, "PRIMITIVE_ID"),
            Slot::Col(i) => write!(f, "COL{i}"),
            Slot::Bfc(i) => write!(f, "BFC{i}"),
            Slot::Fogc => write!(f, "FOGC"),
            Slot::Tex(i) => write!(f, "TEX{i}"),
            Slot::Pntc => write!(f, "PNTC"),
            Slot::Var(i) => write!(f, "VAR{i}"),
            Slot::Patch(i) => write!(f, "PATCH{i}"),
            Slot::TessLevelOuter => write!(f, "TESS_LEVEL_OUTER"),
            Slot::TessLevelInner => write!(f, "TESS_LEVEL_INNER"),
            Slot::Attr(i) => write!(f, "ATTR{i}"),
            Slot::Data(i) => write!(f, "DATA{i}"),
            Slot::Depth => write!(f, "DEPTH"),
            Slot::SampleMask => write!(f, "SAMPLE_MASK"),
            Slot::ClipVertex => write!(f, "CLIP_VERTEX"),
            Slot::ViewportMask => write!(f, "VIEWPORT_MASK"),
        }
    }
}

impl FromStr for Slot {
    type Err = String;
    fn from_str(s: &str) -> Result<Slot, String> {
        let indexed = |prefix: &str, max: u8| -> Option<u8> {
            let rest = s.strip_prefix(prefix)?;
            if rest.is_empty() || (rest.len() > 1 && rest.starts_with('0')) {
                return None;
            }
            rest.parse::<u8>().ok().filter(|i| *i < max)
        };
        let fixed = match s {
            "POS" => Some(Slot::Pos),
            "PSIZ" => Some(Slot::Psiz),
            "CLIP_DIST0" => Some(Slot::ClipDist(false)),
            "CLIP_DIST1" => Some(Slot::ClipDist(true)),
            "CULL_DIST0" => Some(Slot::CullDist(false)),
            "CULL_DIST1" => Some(Slot::CullDist(true)),
            "LAYER" => Some(Slot::Layer),
            "VIEWPORT" => Some(Slot::Viewport),
            "PRIMITIVE_ID" => Some(Slot::PrimitiveId),
            "FOGC" => Some(Slot::Fogc),
            "PNTC" => Some(Slot::Pntc),
            "TESS_LEVEL_OUTER" => Some(Slot::TessLevelOuter),
            "TESS_LEVEL_INNER" => Some(Slot::TessLevelInner),
            "DEPTH" => Some(Slot::Depth),
            "SAMPLE_MASK" => Some(Slot::SampleMask),
            "CLIP_VERTEX" => Some(Slot::ClipVertex),
            "VIEWPORT_MASK" => Some(Slot::ViewportMask),
            _ => None,
        };
        fixed
            .or_else(|| indexed("COL", 2).map(Slot::Col))
            .or_else(|| indexed("BFC", 2).map(Slot::Bfc))
            .or_else(|| indexed("TEX", 8).map(Slot::Tex))
            .or_else(|| indexed("VAR", 32).map(Slot::Var))
            .or_else(|| indexed("PATCH", 32).map(Slot::Patch))
            .or_else(|| indexed("ATTR", ATTR_SLOTS).map(Slot::Attr))
            .or_else(|| indexed("DATA", 8).map(Slot::Data))
            .ok_or_else(|| format!("unknown varying slot `{s}`"))
    }
}

impl IoSlot {
    /// A 32-bit (full) component address.
    pub fn new(slot: Slot, comp: u8) -> IoSlot {
        IoSlot {
            slot,
            comp,
            half: Half::Full,
        }
    }

    /// A 16-bit address in the given half.
    pub fn half(slot: Slot, comp: u8, half: Half) -> IoSlot {
        IoSlot { slot, comp, half }
    }

    /// Shorthand for `VARn.c`.
    pub fn var(n: u8, comp: u8) -> IoSlot {
        IoSlot::new(Slot::Var(n), comp)
    }
}

impl fmt::Display for IoSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = COMPONENTS.get(self.comp as usize).copied().unwrap_or('?');
        write!(f, "{}.{}", self.slot, c)?;
        match self.half {
            Half::Full => Ok(()),
            Half::Lo => write!(f, ".lo"),
            Half::Hi => write!(f, ".hi"),
        }
    }
}

impl FromStr for IoSlot {
    type Err = String;
    fn from_str(s: &str) -> Result<IoSlot, String> {
        let mut parts = s.split('.');
        let slot: Slot = parts.next().unwrap_or("").parse()?;
        let comp = match parts.next() {
            Some("x") => 0,
            Some("y") => 1,
            Some("z") => 2,
            Some("w") => 3,
            Some(c) => {
                return Err(format!(
                    "bad component `{c}` in `{s}`, expected x, y, z or w"
                ))
            }
            None => return Err(format!("slot `{s}` needs a component, e.g. `{slot}.x`")),
        };
        let half = match parts.next() {
            None => Half::Full,
            Some("lo") => Half::Lo,
            Some("hi") => Half::Hi,
            Some(h) => return Err(format!("bad half `{h}` in `{s}`, expected lo or hi")),
        };
        if parts.next().is_some() {
            return Err(format!("trailing text in slot `{s}`"));
        }
        Ok(IoSlot { slot, comp, half })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_slot_name_round_trips() {
        for s in Slot::all() {
            let text = s.to_string();
            assert_eq!(text.parse::<Slot>(), Ok(s), "{text}");
        }
        // Fixed slots, COL, BFC, TEX, VAR, PATCH, ATTR (dual-slot 64-bit doubles 16), DATA,
        // CLIP_VERTEX, VIEWPORT_MASK.
        assert_eq!(Slot::all().len(), 15 + 2 + 2 + 8 + 32 + 32 + 32 + 8 + 1 + 1);
    }

    #[test]
    fn io_slot_parse() {
        assert_eq!("VAR3.z".parse(), Ok(IoSlot::var(3, 2)));
        assert_eq!(
            "PATCH1.w.hi".parse(),
            Ok(IoSlot::half(Slot::Patch(1), 3, Half::Hi))
        );
        assert!("VAR32.x".parse::<IoSlot>().is_err());
        assert!("VAR01.x".parse::<IoSlot>().is_err());
        assert!("VAR1".parse::<IoSlot>().is_err());
        assert!("VAR1.q".parse::<IoSlot>().is_err());
        assert!("VAR1.x.mid".parse::<IoSlot>().is_err());
    }

    #[test]
    fn offsets_stay_in_family() {
        assert_eq!(Slot::Var(30).offset(1), Some(Slot::Var(31)));
        assert_eq!(Slot::Var(31).offset(1), None);
        assert_eq!(Slot::Pos.offset(1), None);
        assert_eq!(Slot::ClipDist(false).offset(1), Some(Slot::ClipDist(true)));
    }
}
