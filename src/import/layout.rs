//! Where values lie: the scalarized shape of a SPIR-V type, the locations an interface
//! variable takes, which variables are arrayed per vertex, and the word layout of
//! buffer blocks. Pure functions of the module's types, shared by linking and
//! translation.

use rspirv::spirv::StorageClass;

use super::module::{Module, Ty};
use super::tree::{Addr, Leaf, Tree};
use super::val::Val;
use crate::ir::{BitSize, Stage};
use crate::Error;

/// The scalarized structure of a data type: where its scalar leaves are.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Shape {
    Scalar(BitSize),
    Composite(Vec<Shape>),
}

impl Shape {
    pub fn leaf_bits(&self) -> Vec<BitSize> {
        match self {
            Shape::Scalar(b) => vec![*b],
            Shape::Composite(items) => items.iter().flat_map(Shape::leaf_bits).collect(),
        }
    }

    /// A value of this shape from leaves in order (missing leaves stay 32-bit undef
    /// shaped only if the iterator runs dry, which callers prevent).
    pub fn val(&self, leaves: &mut impl Iterator<Item = crate::ir::Value>) -> Val {
        match self {
            Shape::Scalar(_) => Val::Scalar(leaves.next().unwrap_or(crate::ir::Value(0))),
            Shape::Composite(items) => {
                Val::Composite(items.iter().map(|s| s.val(leaves)).collect())
            }
        }
    }
}

pub(crate) fn shape_of(m: &Module, ty: u32, depth: u32) -> Result<Shape, Error> {
    shape_in(m, ty, depth, false)
}

/// The shape of a default-block uniform's data: like [`shape_of`], but a sampler or
/// image member (of a struct of GLSL's default block) is an empty composite, so the
/// data members keep their indices and the handles take no words; the handles are
/// numbered apart ([`opaque_count`]).
pub(crate) fn data_shape_of(m: &Module, ty: u32) -> Result<Shape, Error> {
    shape_in(m, ty, 0, true)
}

fn shape_in(m: &Module, ty: u32, depth: u32, opaque_empty: bool) -> Result<Shape, Error> {
    if depth > 64 {
        return Err(m.err_plain(format!("type %{ty} nests too deeply")));
    }
    let bits = |b: u32| BitSize::from_bits(b).filter(|b| *b != BitSize::B1);
    Ok(match m.ty(ty)? {
        Ty::Bool => Shape::Scalar(BitSize::B1),
        // A 64-bit scalar is two 32-bit words, low word first (the IR's values are
        // at most 32 bits wide; see docs/import.md).
        Ty::Int { width: 64, .. } | Ty::Float { width: 64 } => {
            Shape::Composite(vec![Shape::Scalar(BitSize::B32); 2])
        }
        Ty::Int { width, .. } | Ty::Float { width } => match bits(*width) {
            Some(b) => Shape::Scalar(b),
            None => {
                return Err(
                    m.err_plain(format!("type %{ty}: {width}-bit scalars are not supported"))
                )
            }
        },
        Ty::Vector { elem, n } => {
            let e = shape_in(m, *elem, depth + 1, opaque_empty)?;
            Shape::Composite(vec![e; *n as usize])
        }
        Ty::Matrix { col, n } => {
            let c = shape_in(m, *col, depth + 1, opaque_empty)?;
            Shape::Composite(vec![c; *n as usize])
        }
        Ty::Array { elem, len } => {
            if *len > 4096 {
                return Err(m.err_plain(format!(
                    "type %{ty}: array of {len} elements is too large to scalarize"
                )));
            }
            let e = shape_in(m, *elem, depth + 1, opaque_empty)?;
            Shape::Composite(vec![e; *len as usize])
        }
        Ty::Struct { members } => {
            let mut items = vec![];
            for mt in members.clone() {
                items.push(shape_in(m, mt, depth + 1, opaque_empty)?);
            }
            Shape::Composite(items)
        }
        Ty::Opaque if opaque_empty => Shape::Composite(vec![]),
        other => {
            return Err(m.err_plain(format!("type %{ty} ({other:?}) cannot be held in a value")))
        }
    })
}

/// How many sampler/image handles a type holds: 1 for an opaque type, through
/// arrays and struct members (saturating), 0 for plain data. GLSL allows samplers
/// in uniform structs and arrays of them; each leaf is a sampler binding of its own.
pub(crate) fn opaque_count(m: &Module, ty: u32, depth: u32) -> u32 {
    if depth > 64 {
        return 0;
    }
    match m.types.get(&ty) {
        Some(Ty::Opaque) => 1,
        Some(Ty::Array { elem, len }) => len.saturating_mul(opaque_count(m, *elem, depth + 1)),
        Some(Ty::Struct { members }) => members.iter().fold(0u32, |n, mt| {
            n.saturating_add(opaque_count(m, *mt, depth + 1))
        }),
        _ => 0,
    }
}

/// Whether a type is or holds a sampler/image handle.
pub(crate) fn holds_opaque(m: &Module, ty: u32) -> bool {
    opaque_count(m, ty, 0) > 0
}

/// Whether an interface variable of this stage and class is arrayed per vertex.
/// Callers also require the variable's type to be an array: system values such as
/// `gl_InvocationID` or `gl_TessCoord` are inputs of these stages but not arrayed.
pub(crate) fn per_vertex(stage: Stage, class: StorageClass, patch: bool) -> bool {
    !patch
        && match class {
            StorageClass::Input => {
                matches!(stage, Stage::TessCtrl | Stage::TessEval | Stage::Geometry)
            }
            StorageClass::Output => stage == Stage::TessCtrl,
            _ => false,
        }
}

/// Locations (vec4 slots) a type occupies as a shader input or output.
pub(crate) fn locations(m: &Module, ty: u32, depth: u32) -> Result<u32, Error> {
    if depth > 32 {
        return Err(m.err_plain(format!("type %{ty} nests too deeply")));
    }
    Ok(match m.ty(ty)? {
        // A 64-bit vector of 3 or 4 components takes two locations.
        Ty::Vector { elem, n } if *n > 2 && is_wide_scalar(m, *elem) => 2,
        Ty::Bool | Ty::Int { .. } | Ty::Float { .. } | Ty::Vector { .. } => 1,
        Ty::Matrix { col, n } => n.saturating_mul(locations(m, *col, depth + 1)?),
        Ty::Array { elem, len } => len.saturating_mul(locations(m, *elem, depth + 1)?),
        Ty::Struct { members } => {
            let mut n = 0u32;
            for mt in members {
                n = n.saturating_add(locations(m, *mt, depth + 1)?);
            }
            n
        }
        other => return Err(m.err_plain(format!("type %{ty} ({other:?}) has no locations"))),
    })
}

fn is_wide_scalar(m: &Module, ty: u32) -> bool {
    matches!(
        m.ty(ty),
        Ok(Ty::Int { width: 64, .. } | Ty::Float { width: 64 })
    )
}

/// Whether a type is or contains an array (through struct members).
pub(crate) fn holds_array(m: &Module, ty: u32, depth: u32) -> bool {
    if depth > 64 {
        return false;
    }
    match m.types.get(&ty) {
        Some(Ty::Array { .. }) | Some(Ty::RuntimeArray { .. }) => true,
        Some(Ty::Struct { members }) => members.iter().any(|t| holds_array(m, *t, depth + 1)),
        _ => false,
    }
}

/// The block type and the dimensions (outermost first) of an array of uniform or
/// storage blocks (`uniform B { ... } arr[4]`, `buffer S { ... } arr[3][2]`). Each
/// element is a block of its own (binding `b + i` in GL, array element `i` of
/// binding `b` in Vulkan), so the array has no `ArrayStride`: import numbers the
/// elements, in row-major order, as consecutive buffers (`link::link_buffers`).
pub(crate) fn block_array(m: &Module, ty: u32) -> Option<(u32, Vec<u32>)> {
    let mut dims = vec![];
    let mut t = ty;
    while let Some(Ty::Array { elem, len }) = m.types.get(&t) {
        // SPIR-V nests arrays without limit; a block array of more than a few
        // dimensions is hostile input, which `buf_size` then refuses.
        if dims.len() == 8 {
            return None;
        }
        dims.push(*len);
        t = *elem;
    }
    let d = m.deco(t);
    (!dims.is_empty() && (d.block || d.buffer_block)).then_some((t, dims))
}

/// The number of blocks of an array of blocks with dimensions `dims`, None past
/// `u32`.
pub(crate) fn block_count(dims: &[u32]) -> Option<u32> {
    dims.iter().try_fold(1u32, |n, d| n.checked_mul(*d))
}

/// The tree of a default-block uniform read through the default block's UBO
/// (`block`): the words of [`word_tree`] at byte offsets 4 × word. A composite
/// whose items have one shape (array, vector, matrix column list) is strided by
/// the item's size, so a dynamic index into it is a byte offset: one load per
/// scalar read instead of a selection over every element.
pub(crate) fn default_block_tree(shape: &Shape, next: &mut u32, block: u32) -> Tree {
    match shape {
        Shape::Scalar(b) => {
            let w = *next;
            *next += 1;
            Tree::Leaf(Leaf {
                addr: Addr::Ubo {
                    block,
                    offset: w.saturating_mul(4),
                },
                bits: *b,
                dynamic: None,
            })
        }
        Shape::Composite(items) => {
            let uniform = items.windows(2).all(|p| p[0] == p[1]);
            let stride = items
                .first()
                .filter(|_| uniform)
                .map(|i| (i.leaf_bits().len() as u32).saturating_mul(4));
            Tree::Node {
                kids: items
                    .iter()
                    .map(|s| default_block_tree(s, next, block))
                    .collect(),
                stride,
                runtime: false,
            }
        }
    }
}

pub(crate) fn word_tree(shape: &Shape, next: &mut u32) -> Tree {
    match shape {
        Shape::Scalar(b) => {
            let w = *next;
            *next += 1;
            Tree::Leaf(Leaf {
                addr: Addr::Word(w),
                bits: *b,
                dynamic: None,
            })
        }
        Shape::Composite(items) => Tree::Node {
            kids: items.iter().map(|s| word_tree(s, next)).collect(),
            stride: None,
            runtime: false,
        },
    }
}

/// Layout of a buffer block member by `Offset`/`ArrayStride`/`MatrixStride`.
/// `matrix` is (stride, row-major) inherited from the enclosing member.
pub(crate) fn buf_tree(
    m: &Module,
    ty: u32,
    off: u32,
    matrix: Option<(u32, bool)>,
    mk: &dyn Fn(u32) -> Addr,
    depth: u32,
) -> Result<Tree, Error> {
    if depth > 32 {
        return Err(m.err_plain(format!("buffer type %{ty} nests too deeply")));
    }
    let leaf = |o: u32, bits| {
        Tree::Leaf(Leaf {
            addr: mk(o),
            bits,
            dynamic: None,
        })
    };
    // A 64-bit scalar is its two words, low word first (little-endian memory).
    let wide = |o: u32| -> Result<Tree, Error> {
        Ok(Tree::Node {
            kids: vec![
                leaf(o, BitSize::B32),
                leaf(at(m, ty, o, 1, 4)?, BitSize::B32),
            ],
            stride: None,
            runtime: false,
        })
    };
    Ok(match m.ty(ty)? {
        Ty::Bool => leaf(off, BitSize::B1),
        Ty::Int { width: 32, .. } | Ty::Float { width: 32 } => leaf(off, BitSize::B32),
        // A 16-bit scalar is one half of the word holding it (`load_ubo B %w lo|hi`).
        Ty::Int { width: 16, .. } | Ty::Float { width: 16 } if off.is_multiple_of(2) => {
            leaf(off, BitSize::B16)
        }
        Ty::Int { width: 64, .. } | Ty::Float { width: 64 } => wide(off)?,
        Ty::Vector { elem, n } => {
            let b = buf_tree(m, *elem, off, None, mk, depth + 1)?;
            let size = scalar_size(m, *elem);
            // Components are scalars at `off + size·i`: if the end fits, every shift does.
            at(m, ty, off, *n, size)?;
            let kids = (0..*n).map(|i| shift(&b, i * size, mk)).collect();
            Tree::Node {
                kids,
                stride: Some(size),
                runtime: false,
            }
        }
        Ty::Matrix { col, n } => {
            let (stride, row_major) = matrix.ok_or_else(|| {
                m.err_plain(format!("matrix %{ty} in a buffer without MatrixStride"))
            })?;
            let (rows, elem) = match m.ty(*col)? {
                Ty::Vector { n, elem } => (*n, *elem),
                _ => (1, *col),
            };
            let size = scalar_size(m, elem);
            let (col_step, row_step) = if row_major {
                (size, stride)
            } else {
                (stride, size)
            };
            let cell = |o: u32| match size {
                8 => wide(o),
                2 => Ok(leaf(o, BitSize::B16)),
                _ => Ok(leaf(o, BitSize::B32)),
            };
            let mut kids = vec![];
            for c in 0..*n {
                let column = at(m, ty, off, c, col_step)?;
                let cells = (0..rows)
                    .map(|r| cell(at(m, ty, column, r, row_step)?))
                    .collect::<Result<_, Error>>()?;
                kids.push(Tree::Node {
                    kids: cells,
                    stride: Some(row_step),
                    runtime: false,
                });
            }
            Tree::Node {
                kids,
                stride: Some(col_step),
                runtime: false,
            }
        }
        Ty::Array { elem, len } => {
            let stride = m.deco(ty).array_stride.ok_or_else(|| {
                m.err_plain(format!("array %{ty} in a buffer without ArrayStride"))
            })?;
            if *len > 4096 {
                return Err(m.err_plain(format!("buffer array %{ty} is too long to scalarize")));
            }
            let mut kids = vec![];
            for i in 0..*len {
                let o = at(m, ty, off, i, stride)?;
                kids.push(buf_tree(m, *elem, o, matrix, mk, depth + 1)?);
            }
            Tree::Node {
                kids,
                stride: Some(stride),
                runtime: false,
            }
        }
        Ty::Struct { members } => {
            let mut kids = vec![];
            for (i, mt) in members.iter().enumerate() {
                let d = m.member_deco(ty, i as u32);
                let o = d.offset.ok_or_else(|| {
                    m.err_plain(format!("member {i} of buffer struct %{ty} has no Offset"))
                })?;
                let mat = d.matrix_stride.map(|s| (s, d.row_major));
                kids.push(buf_tree(m, *mt, at(m, ty, off, 1, o)?, mat, mk, depth + 1)?);
            }
            Tree::Node {
                kids,
                stride: None,
                runtime: false,
            }
        }
        // One element stands for all: indices shift it by the stride (`Tree::walk`).
        Ty::RuntimeArray { elem } => {
            let stride = m
                .deco(ty)
                .array_stride
                .ok_or_else(|| m.err_plain(format!("runtime array %{ty} without ArrayStride")))?;
            Tree::Node {
                kids: vec![buf_tree(m, *elem, off, matrix, mk, depth + 1)?],
                stride: Some(stride),
                runtime: true,
            }
        }
        other => {
            return Err(m.err_plain(format!(
                "type %{ty} ({other:?}) is not supported in a buffer (16-bit members must be 2-byte aligned)"
            )))
        }
    })
}

/// Most counters one atomic counter variable is imported with (GL guarantees 8
/// counters per stage; this only bounds hostile array lengths).
const MAX_COUNTERS: u32 = 4096;

/// The number of counters of an atomic counter type (`uint`, or arrays of it).
fn counter_count(m: &Module, ty: u32, depth: u32) -> Result<u32, Error> {
    match m.ty(ty)? {
        Ty::Int { width: 32, .. } => Ok(1),
        Ty::Array { elem, len } if depth < 8 => counter_count(m, *elem, depth + 1)?
            .checked_mul(*len)
            .filter(|n| *n <= MAX_COUNTERS)
            .ok_or_else(|| {
                m.err_plain(format!(
                    "atomic counter array %{ty} has more than {MAX_COUNTERS} counters"
                ))
            }),
        other => Err(m.err_plain(format!(
            "type %{ty} ({other:?}) is not an atomic counter or an array of them"
        ))),
    }
}

/// The tree of a GL atomic counter variable of type `ty` (an `atomic_uint`, a
/// `uint` in SPIR-V, or an array of arrays of them) whose first counter is at byte
/// `off` (its `Offset`) of the counter buffer: each counter is one word, the
/// elements of an array take consecutive offsets, row-major (GLSL 4.60, 4.4.6.1:
/// an array of counters takes `4 × size` bytes), so an element's stride is 4 bytes
/// times its counters and a dynamic index is a word offset.
pub(crate) fn counter_tree(
    m: &Module,
    ty: u32,
    off: u32,
    mk: &dyn Fn(u32) -> Addr,
) -> Result<Tree, Error> {
    counter_count(m, ty, 0)?;
    counter_node(m, ty, off, mk)
}

fn counter_node(m: &Module, ty: u32, off: u32, mk: &dyn Fn(u32) -> Addr) -> Result<Tree, Error> {
    let Ty::Array { elem, len } = m.ty(ty)? else {
        return Ok(Tree::Leaf(Leaf {
            addr: mk(off),
            bits: BitSize::B32,
            dynamic: None,
        }));
    };
    let stride = counter_count(m, *elem, 0)?.saturating_mul(4);
    let kids = (0..*len)
        .map(|i| counter_node(m, *elem, at(m, ty, off, i, stride)?, mk))
        .collect::<Result<_, Error>>()?;
    Ok(Tree::Node {
        kids,
        stride: Some(stride),
        runtime: false,
    })
}

/// Bytes one scalar of a buffer member takes: 8 for 64-bit types, 2 for 16-bit
/// ones, else 4.
fn scalar_size(m: &Module, ty: u32) -> u32 {
    match m.ty(ty) {
        Ok(Ty::Int { width: 64, .. } | Ty::Float { width: 64 }) => 8,
        Ok(Ty::Int { width: 16, .. } | Ty::Float { width: 16 }) => 2,
        _ => 4,
    }
}

/// Byte offset `base + index·step` inside buffer type `ty`; offsets that do not fit
/// 32 bits (hostile strides or offsets) are an error.
fn at(m: &Module, ty: u32, base: u32, index: u32, step: u32) -> Result<u32, Error> {
    index
        .checked_mul(step)
        .and_then(|d| base.checked_add(d))
        .ok_or_else(|| m.err_plain(format!("buffer type %{ty} reaches past byte 2^32")))
}

fn shift(t: &Tree, by: u32, mk: &dyn Fn(u32) -> Addr) -> Tree {
    match t {
        Tree::Leaf(l) => {
            let o = match l.addr {
                Addr::Ubo { offset, .. } | Addr::Ssbo { offset, .. } => offset + by,
                _ => by,
            };
            Tree::Leaf(Leaf {
                addr: mk(o),
                bits: l.bits,
                dynamic: None,
            })
        }
        Tree::Node {
            kids,
            stride,
            runtime,
        } => Tree::Node {
            kids: kids.iter().map(|k| shift(k, by, mk)).collect(),
            stride: *stride,
            runtime: *runtime,
        },
    }
}

/// Size in bytes a buffer type covers: up to the end of the last word it reads.
pub(crate) fn buf_size(m: &Module, ty: u32) -> Result<u32, Error> {
    let t = buf_tree(
        m,
        ty,
        0,
        None,
        &|o| Addr::Ubo {
            block: 0,
            offset: o,
        },
        0,
    )?;
    // A member may start at any offset below 2^32, aligned or not; the buffer
    // then covers whole words up to the end of the member's last word, which
    // must itself lie below byte 2^32 (the UBO size is a word count times 4).
    let mut end = 0u32;
    for l in t.leaves() {
        if let Addr::Ubo { offset, .. } = l.addr {
            let last = offset
                .checked_add(4)
                .and_then(|e| e.checked_next_multiple_of(4))
                .ok_or_else(|| m.err_plain(format!("buffer type %{ty} reaches past byte 2^32")))?;
            end = end.max(last);
        }
    }
    Ok(end)
}
