//! Translation-time values: a SPIR-V id becomes a tree of scalar IR values
//! (vectors, matrices, structs and arrays scalarized), a pointer into a variable,
//! or an opaque texture handle.

use crate::ir::{OpaqueTy, Value};

/// One index step of an access chain.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Idx {
    Const(u32),
    /// A 32-bit dynamic index.
    Dyn(Value),
}

/// A pointer: a variable (module-scope or function-local id) and an access path.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Ptr {
    pub root: u32,
    pub path: Vec<Idx>,
    /// The pointee type id.
    pub ty: u32,
}

/// The value a SPIR-V id stands for.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Val {
    Scalar(Value),
    Composite(Vec<Val>),
    Ptr(Ptr),
    /// A texture/sampler handle (see [`Handle`]).
    Image(Handle),
    /// A pointer to one texel of an image (`OpImageTexelPointer`), which only
    /// image atomics use (see [`Texel`]).
    Texel(Box<Texel>),
}

/// The texel an `OpImageTexelPointer` points to: its image (one sampler number, or
/// through a dynamic index into an array of images one per element, each with the
/// condition that the index selects it, as in [`Handle`]) and the coordinate and
/// sample operands, each with its SPIR-V type.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Texel {
    pub images: Vec<(Option<Value>, u32)>,
    pub coord: Vec<Value>,
    pub coord_ty: OpaqueTy,
    pub sample: Vec<Value>,
    pub sample_ty: OpaqueTy,
}

/// A texture/sampler handle: the sampler binding numbers `tex` may use. A handle
/// loaded through constant indices has one; one loaded through dynamic indices into
/// an array of samplers has one per element, each with the condition (a 1-bit value)
/// that the indices select it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Handle {
    /// `(condition, sampler)` in element order; the first has no condition when it
    /// is the only one.
    pub alts: Vec<(Option<Value>, u32)>,
}

impl Val {
    /// Scalar leaves in order, or `None` for pointers and handles.
    pub fn leaves(&self) -> Option<Vec<Value>> {
        let mut out = vec![];
        fn walk(v: &Val, out: &mut Vec<Value>) -> bool {
            match v {
                Val::Scalar(s) => {
                    out.push(*s);
                    true
                }
                Val::Composite(items) => items.iter().all(|i| walk(i, out)),
                Val::Ptr(_) | Val::Image(_) | Val::Texel(_) => false,
            }
        }
        walk(self, &mut out).then_some(out)
    }

    /// The same shape with leaves taken in order from `leaves`.
    pub fn rebuild(&self, leaves: &mut impl Iterator<Item = Value>) -> Option<Val> {
        Some(match self {
            Val::Scalar(_) => Val::Scalar(leaves.next()?),
            Val::Composite(items) => Val::Composite(
                items
                    .iter()
                    .map(|i| i.rebuild(leaves))
                    .collect::<Option<_>>()?,
            ),
            other => other.clone(),
        })
    }

    pub fn scalar(&self) -> Option<Value> {
        match self {
            Val::Scalar(v) => Some(*v),
            _ => None,
        }
    }

    pub fn items(&self) -> Option<&[Val]> {
        match self {
            Val::Composite(items) => Some(items),
            _ => None,
        }
    }
}
