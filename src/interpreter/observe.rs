//! What a run observes: the consumer's stores, the producer's system-value and
//! transform-feedback outputs, and final SSBO words — keyed in a fixed order — plus
//! the fragment positions used, so reports and tests can recompute interpolation.

use std::collections::BTreeMap;
use std::fmt;

use crate::ir::{IoSlot, Stage};

use super::Scalar;

/// One step of the path naming where an observable value was produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Unit {
    /// An assembled or input primitive.
    Primitive(u32),
    /// A patch.
    Patch(u32),
    /// A vertex: global VS vertex number, or vertex within a patch.
    Vertex(u32),
    /// A GS invocation of one input primitive.
    Invocation(u32),
    /// The n-th vertex one GS invocation emitted.
    Emit(u32),
    /// A fragment of a rasterized primitive.
    Fragment(u32),
    /// A TES tess coordinate within a patch.
    Coord(u32),
    /// The copy of a primitive broadcast to one viewport of its `VIEWPORT_MASK`.
    Viewport(u32),
}

/// The observed item at a place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Item {
    /// A stored output component.
    Output(IoSlot),
    /// A transform feedback capture at a byte offset (16-bit high halves at +2).
    Xfb {
        /// Buffer index.
        buffer: u8,
        /// Byte offset in the vertex record.
        offset: u32,
    },
    /// Whether the fragment was discarded.
    Discard,
    /// How many vertices a GS invocation emitted.
    EmitCount,
    /// The strip an emitted vertex belongs to (count of `end_primitive` before it).
    Strip,
    /// A storage buffer word after the run.
    Ssbo {
        /// Buffer binding.
        buffer: u32,
        /// Word address.
        addr: u32,
    },
}

/// The full name of an observable value.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObsKey {
    /// The stage that produced it (`None` for SSBO words).
    pub stage: Option<Stage>,
    /// Where, outermost first.
    pub path: Vec<Unit>,
    /// What.
    pub item: Item,
}

/// Positions a fragment was shaded at: barycentric weights (one per vertex) at the
/// centre, centroid and sample locations, and the clip w of each vertex.
#[derive(Clone, Debug, PartialEq)]
pub struct FragmentInfo {
    /// Weights at the pixel centre (also used by `at_offset` / `at_sample`).
    pub center: Vec<f32>,
    /// Weights at the centroid.
    pub centroid: Vec<f32>,
    /// Weights at the sample position.
    pub sample: Vec<f32>,
    /// Clip-space w of each vertex.
    pub clip_w: Vec<f32>,
}

/// Everything one run observes.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Observation {
    /// The seed of the run.
    pub seed: u64,
    /// Observable values in key order.
    pub values: BTreeMap<ObsKey, Scalar>,
    /// Fragment positions by (primitive, fragment).
    pub fragments: BTreeMap<(u32, u32), FragmentInfo>,
}

impl Observation {
    /// An empty observation of the run with `seed`.
    pub fn new(seed: u64) -> Observation {
        Observation {
            seed,
            ..Observation::default()
        }
    }

    /// Records a value.
    pub fn insert(&mut self, stage: Option<Stage>, path: &[Unit], item: Item, value: Scalar) {
        let key = ObsKey {
            stage,
            path: path.to_vec(),
            item,
        };
        self.values.insert(key, value);
    }

    /// The value of stored output `slot` at `path` in `stage`, if observed.
    pub fn output(&self, stage: Stage, path: &[Unit], slot: IoSlot) -> Option<Scalar> {
        let key = ObsKey {
            stage: Some(stage),
            path: path.to_vec(),
            item: Item::Output(slot),
        };
        self.values.get(&key).copied()
    }

    /// The fragment a key belongs to, when it names one.
    pub fn fragment_of(&self, key: &ObsKey) -> Option<&FragmentInfo> {
        match key.path.as_slice() {
            [Unit::Primitive(p), Unit::Fragment(f)]
            | [Unit::Primitive(p), Unit::Viewport(_), Unit::Fragment(f)] => {
                self.fragments.get(&(*p, *f))
            }
            _ => None,
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unit::Primitive(n) => write!(f, "primitive {n}"),
            Unit::Patch(n) => write!(f, "patch {n}"),
            Unit::Vertex(n) => write!(f, "vertex {n}"),
            Unit::Invocation(n) => write!(f, "invocation {n}"),
            Unit::Emit(n) => write!(f, "emit {n}"),
            Unit::Fragment(n) => write!(f, "fragment {n}"),
            Unit::Coord(n) => write!(f, "coord {n}"),
            Unit::Viewport(n) => write!(f, "viewport {n}"),
        }
    }
}

impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Item::Output(slot) => write!(f, "{slot}"),
            Item::Xfb { buffer, offset } => write!(f, "xfb {buffer} +{offset}"),
            Item::Discard => write!(f, "discard"),
            Item::EmitCount => write!(f, "emitted vertices"),
            Item::Strip => write!(f, "strip"),
            Item::Ssbo { buffer, addr } => write!(f, "ssbo {buffer}[{addr}]"),
        }
    }
}

impl fmt::Display for ObsKey {
    /// e.g. `fs primitive 0 fragment 2: DATA0.x`, `ssbo 0[12]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(stage) = self.stage else {
            return write!(f, "{}", self.item);
        };
        write!(f, "{stage}")?;
        for u in &self.path {
            write!(f, " {u}")?;
        }
        write!(f, ": {}", self.item)
    }
}

impl fmt::Display for FragmentInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "barycentrics center {:?} centroid {:?} sample {:?}, clip w {:?}",
            self.center, self.centroid, self.sample, self.clip_w
        )
    }
}

impl fmt::Display for Observation {
    /// One line per observable value, in key order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, v) in &self.values {
            writeln!(f, "{k} = {v}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{BitSize, Slot};

    #[test]
    fn keys_print_readably_and_order_numerically() {
        let mut o = Observation::new(0);
        let data = Item::Output(IoSlot::new(Slot::Data(0), 0));
        let v = Scalar::float(1.0, BitSize::B32);
        o.insert(
            Some(Stage::Fragment),
            &[Unit::Primitive(0), Unit::Fragment(10)],
            data,
            v,
        );
        o.insert(
            Some(Stage::Fragment),
            &[Unit::Primitive(0), Unit::Fragment(2)],
            data,
            v,
        );
        o.insert(
            None,
            &[],
            Item::Ssbo { buffer: 1, addr: 3 },
            Scalar::undef(BitSize::B32),
        );
        let text = o.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "ssbo 1[3] = undef32",
                "fs primitive 0 fragment 2: DATA0.x = 0x3f800000 (1.0)",
                "fs primitive 0 fragment 10: DATA0.x = 0x3f800000 (1.0)",
            ]
        );
    }
}
