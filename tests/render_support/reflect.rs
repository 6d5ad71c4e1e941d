//! Minimal SPIR-V reflection for the render harness: descriptor bindings, push
//! constant size, vertex inputs and fragment outputs (location, numeric kind),
//! and the transform feedback records a module captures.

use std::collections::BTreeMap;

use rspirv::dr::{self, Operand};
use rspirv::spirv::{Decoration, Dim, ImageFormat, Op, StorageClass};

/// Numeric kind of an attribute or colour output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Float,
    Sint,
    Uint,
}

/// A descriptor the pipeline layout must provide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Desc {
    Uniform {
        size: u32,
    },
    Storage,
    CombinedImage {
        dim: Dim,
        arrayed: bool,
    },
    SampledImage {
        dim: Dim,
        arrayed: bool,
    },
    /// A storage image (`Sampled` 2), which image loads, stores and atomics use.
    StorageImage {
        dim: Dim,
        arrayed: bool,
        format: ImageFormat,
    },
    Sampler,
}

/// What one module needs.
#[derive(Debug, Default)]
pub struct Reflection {
    pub bindings: BTreeMap<(u32, u32), (Desc, u32)>,
    pub push_size: u32,
    /// Location → (kind, components).
    pub inputs: BTreeMap<u32, (Kind, u32)>,
    pub outputs: BTreeMap<u32, (Kind, u32)>,
    /// Location → bits of a vertex input's scalars (32 or 64).
    pub input_bits: BTreeMap<u32, u32>,
}

/// How a captured word of a transform feedback record is compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Word {
    /// One 32-bit float: within the float tolerance.
    F32,
    /// Two 16-bit floats (or one and padding): each half within the half tolerance.
    F16,
    /// Integers, 64-bit values, mixed words and padding: bit for bit.
    Exact,
}

/// One transform feedback buffer a module captures to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XfbBuffer {
    /// Bytes per record (`XfbStride`).
    pub stride: u32,
    /// Word index within the record → how it compares (words nothing captures
    /// are absent: they keep the buffer's initial contents).
    pub words: BTreeMap<u32, Word>,
}

struct Index<'a> {
    defs: BTreeMap<u32, &'a dr::Instruction>,
    decos: BTreeMap<(u32, Decoration), u32>,
    flags: std::collections::BTreeSet<(u32, Decoration)>,
    member_offsets: BTreeMap<(u32, u32), u32>,
}

fn lit(o: Option<&Operand>) -> u32 {
    match o {
        Some(Operand::LiteralBit32(v)) => *v,
        _ => 0,
    }
}

fn id(o: Option<&Operand>) -> u32 {
    match o {
        Some(Operand::IdRef(v)) => *v,
        _ => 0,
    }
}

impl Index<'_> {
    fn ty(&self, t: u32) -> Option<&dr::Instruction> {
        self.defs.get(&t).copied()
    }

    fn konst(&self, c: u32) -> u32 {
        self.ty(c).map(|i| lit(i.operands.first())).unwrap_or(1)
    }

    /// (scalar kind, components) of a numeric type, through arrays/matrices' element.
    fn numeric(&self, t: u32) -> Option<(Kind, u32)> {
        let i = self.ty(t)?;
        match i.class.opcode {
            Op::TypeFloat => Some((Kind::Float, 1)),
            Op::TypeInt if lit(i.operands.get(1)) == 1 => Some((Kind::Sint, 1)),
            Op::TypeInt => Some((Kind::Uint, 1)),
            Op::TypeVector => {
                let (k, _) = self.numeric(id(i.operands.first()))?;
                Some((k, lit(i.operands.get(1))))
            }
            _ => None,
        }
    }

    /// Bits of a numeric type's scalars (through vectors), 32 when unknown.
    fn scalar_bits(&self, t: u32) -> u32 {
        match self.ty(t) {
            Some(i) if i.class.opcode == Op::TypeVector => self.scalar_bits(id(i.operands.first())),
            Some(i) if matches!(i.class.opcode, Op::TypeFloat | Op::TypeInt) => {
                lit(i.operands.first())
            }
            _ => 32,
        }
    }

    /// Bytes a buffer type spans (offsets and strides as decorated).
    fn size(&self, t: u32) -> u32 {
        let Some(i) = self.ty(t) else { return 0 };
        match i.class.opcode {
            Op::TypeFloat | Op::TypeInt => lit(i.operands.first()) / 8,
            Op::TypeBool => 4,
            Op::TypeVector => self.size(id(i.operands.first())) * lit(i.operands.get(1)),
            Op::TypeMatrix => {
                let stride = self
                    .decos
                    .get(&(t, Decoration::MatrixStride))
                    .copied()
                    .unwrap_or(16);
                stride * lit(i.operands.get(1))
            }
            Op::TypeArray => {
                let stride = self.decos.get(&(t, Decoration::ArrayStride)).copied();
                let e = id(i.operands.first());
                let n = self.konst(id(i.operands.get(1)));
                stride.unwrap_or_else(|| self.size(e)) * n
            }
            Op::TypeStruct => i
                .operands
                .iter()
                .enumerate()
                .map(|(m, o)| {
                    let off = self
                        .member_offsets
                        .get(&(t, m as u32))
                        .copied()
                        .unwrap_or(0);
                    off + self.member_size(t, m as u32, id(Some(o)))
                })
                .max()
                .unwrap_or(0),
            _ => 0,
        }
    }

    fn member_size(&self, _st: u32, _m: u32, t: u32) -> u32 {
        self.size(t)
    }
}

fn index(m: &dr::Module) -> Index<'_> {
    let mut ix = Index {
        defs: BTreeMap::new(),
        decos: BTreeMap::new(),
        flags: Default::default(),
        member_offsets: BTreeMap::new(),
    };
    for i in m.types_global_values.iter() {
        if let Some(r) = i.result_id {
            ix.defs.insert(r, i);
        }
    }
    for a in &m.annotations {
        match (a.class.opcode, a.operands.get(1)) {
            (Op::Decorate, Some(Operand::Decoration(d))) => {
                ix.decos
                    .insert((id(a.operands.first()), *d), lit(a.operands.get(2)));
                ix.flags.insert((id(a.operands.first()), *d));
            }
            (Op::MemberDecorate, _)
                if a.operands.get(2) == Some(&Operand::Decoration(Decoration::Offset)) =>
            {
                ix.member_offsets.insert(
                    (id(a.operands.first()), lit(a.operands.get(1))),
                    lit(a.operands.get(3)),
                );
            }
            _ => {}
        }
    }
    ix
}

/// Reflects one module.
pub fn reflect(words: &[u32]) -> Reflection {
    let m = dr::load_words(words).expect("valid SPIR-V");
    let ix = index(&m);
    let mut r = Reflection::default();
    let model = m.entry_points[0].operands[0].clone();
    let vs = model == Operand::ExecutionModel(rspirv::spirv::ExecutionModel::Vertex);
    let fs = model == Operand::ExecutionModel(rspirv::spirv::ExecutionModel::Fragment);
    for v in m
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::Variable)
    {
        let var = v.result_id.unwrap_or(0);
        let Some(Operand::StorageClass(class)) = v.operands.first() else {
            continue;
        };
        let ptr = ix.ty(v.result_type.unwrap_or(0)).expect("pointer type");
        let mut ty = id(ptr.operands.get(1));
        let mut count = 1;
        while let Some(i) = ix.ty(ty).filter(|i| i.class.opcode == Op::TypeArray) {
            count *= ix.konst(id(i.operands.get(1)));
            ty = id(i.operands.first());
        }
        let set = ix
            .decos
            .get(&(var, Decoration::DescriptorSet))
            .copied()
            .unwrap_or(0);
        let binding = ix.decos.get(&(var, Decoration::Binding)).copied();
        let builtin = ix.flags.contains(&(var, Decoration::BuiltIn));
        let t = ix.ty(ty).map(|i| i.class.opcode);
        match class {
            StorageClass::Uniform | StorageClass::StorageBuffer | StorageClass::UniformConstant => {
                let Some(b) = binding else { continue };
                let desc = match (class, t) {
                    (StorageClass::StorageBuffer, _) => Desc::Storage,
                    (StorageClass::Uniform, _)
                        if ix.flags.contains(&(ty, Decoration::BufferBlock)) =>
                    {
                        Desc::Storage
                    }
                    (StorageClass::Uniform, _) => Desc::Uniform { size: ix.size(ty) },
                    (_, Some(Op::TypeSampler)) => Desc::Sampler,
                    (_, Some(Op::TypeSampledImage)) => {
                        let img = ix.ty(id(ix.ty(ty).unwrap().operands.first())).unwrap();
                        image_desc(img, true)
                    }
                    (_, Some(Op::TypeImage)) => image_desc(ix.ty(ty).unwrap(), false),
                    _ => continue,
                };
                let e = r.bindings.entry((set, b)).or_insert((desc, count));
                if let (Desc::Uniform { size: a }, Desc::Uniform { size: b }) = (&mut e.0, desc) {
                    *a = (*a).max(b);
                }
            }
            StorageClass::PushConstant => r.push_size = r.push_size.max(ix.size(ty)),
            StorageClass::Input if vs && !builtin => {
                if let (Some(loc), Some(n)) =
                    (ix.decos.get(&(var, Decoration::Location)), ix.numeric(ty))
                {
                    // One attribute per element; a 64-bit vector of more than
                    // two scalars spans two locations, fed by one attribute.
                    let bits = ix.scalar_bits(ty);
                    let per = if bits == 64 && n.1 > 2 { 2 } else { 1 };
                    for k in 0..count {
                        r.inputs.insert(loc + k * per, n);
                        r.input_bits.insert(loc + k * per, bits);
                    }
                }
            }
            StorageClass::Output if fs && !builtin => {
                if let (Some(loc), Some(n)) =
                    (ix.decos.get(&(var, Decoration::Location)), ix.numeric(ty))
                {
                    for k in 0..count {
                        r.outputs.insert(loc + k, n);
                    }
                }
            }
            _ => {}
        }
    }
    r
}

fn image_desc(img: &dr::Instruction, combined: bool) -> Desc {
    let dim = match img.operands.get(1) {
        Some(Operand::Dim(d)) => *d,
        _ => Dim::Dim2D,
    };
    let arrayed = lit(img.operands.get(3)) == 1;
    if lit(img.operands.get(5)) == 2 {
        let format = match img.operands.get(6) {
            Some(Operand::ImageFormat(f)) => *f,
            _ => ImageFormat::Unknown,
        };
        return Desc::StorageImage {
            dim,
            arrayed,
            format,
        };
    }
    if combined {
        Desc::CombinedImage { dim, arrayed }
    } else {
        Desc::SampledImage { dim, arrayed }
    }
}

/// The transform feedback records a module captures (nothing unless it declares
/// the `Xfb` execution mode): per `XfbBuffer`, the stride and how each captured
/// word compares. A captured variable's scalars follow each other from its
/// `Offset` (vectors, matrix columns and array elements tightly packed); a
/// block's captured members are those with a member `Offset`.
pub fn captures(words: &[u32]) -> BTreeMap<u32, XfbBuffer> {
    let m = dr::load_words(words).expect("valid SPIR-V");
    let xfb = m.execution_modes.iter().any(|i| {
        i.operands.get(1) == Some(&Operand::ExecutionMode(rspirv::spirv::ExecutionMode::Xfb))
    });
    let mut out: BTreeMap<u32, XfbBuffer> = BTreeMap::new();
    if !xfb {
        return out;
    }
    let ix = index(&m);
    for v in m
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::Variable)
        .filter(|i| i.operands.first() == Some(&Operand::StorageClass(StorageClass::Output)))
    {
        let var = v.result_id.unwrap_or(0);
        let Some(buffer) = ix.decos.get(&(var, Decoration::XfbBuffer)).copied() else {
            continue;
        };
        let ty = ix
            .ty(v.result_type.unwrap_or(0))
            .map_or(0, |p| id(p.operands.get(1)));
        let mut scalars = vec![];
        match ix.decos.get(&(var, Decoration::Offset)) {
            Some(off) => ix.flatten(ty, *off, &mut scalars),
            None => {
                let members = ix.ty(ty).map(|i| i.operands.clone()).unwrap_or_default();
                for (k, mt) in members.iter().enumerate() {
                    if let Some(off) = ix.member_offsets.get(&(ty, k as u32)) {
                        ix.flatten(id(Some(mt)), *off, &mut scalars);
                    }
                }
            }
        }
        let b = out.entry(buffer).or_insert(XfbBuffer {
            stride: 0,
            words: BTreeMap::new(),
        });
        if let Some(s) = ix.decos.get(&(var, Decoration::XfbStride)) {
            b.stride = b.stride.max(*s);
        }
        for (off, bytes, word) in scalars {
            for w in off / 4..(off + bytes).div_ceil(4) {
                let merged = match b.words.get(&w) {
                    None => word,
                    Some(old) if *old == word && word == Word::F16 => word,
                    Some(_) => Word::Exact,
                };
                b.words.insert(w, merged);
            }
        }
    }
    out
}

impl Index<'_> {
    /// The scalars of `ty` captured from byte `off`: (offset, bytes, comparison).
    fn flatten(&self, ty: u32, off: u32, out: &mut Vec<(u32, u32, Word)>) {
        let Some(i) = self.ty(ty) else { return };
        match i.class.opcode {
            Op::TypeFloat => {
                let bytes = lit(i.operands.first()) / 8;
                let word = match bytes {
                    4 => Word::F32,
                    2 => Word::F16,
                    _ => Word::Exact,
                };
                out.push((off, bytes, word));
            }
            Op::TypeInt => out.push((off, lit(i.operands.first()) / 8, Word::Exact)),
            Op::TypeVector | Op::TypeMatrix | Op::TypeArray => {
                let elem = id(i.operands.first());
                let n = match i.class.opcode {
                    Op::TypeArray => self.konst(id(i.operands.get(1))),
                    _ => lit(i.operands.get(1)),
                };
                let size = self.xfb_size(elem);
                for k in 0..n {
                    self.flatten(elem, off + k * size, out);
                }
            }
            Op::TypeStruct => {
                let mut next = off;
                for (k, mt) in i.operands.iter().enumerate() {
                    let at = self
                        .member_offsets
                        .get(&(ty, k as u32))
                        .map_or(next, |o| off + o);
                    self.flatten(id(Some(mt)), at, out);
                    next = at + self.xfb_size(id(Some(mt)));
                }
            }
            _ => {}
        }
    }

    /// Bytes a type takes in a transform feedback record (tightly packed).
    fn xfb_size(&self, ty: u32) -> u32 {
        let mut v = vec![];
        self.flatten(ty, 0, &mut v);
        v.iter().map(|(o, b, _)| o + b).max().unwrap_or(0)
    }
}
