//! Export of a pipeline that has no original SPIR-V modules (parsed from a `.pair`
//! file, built in code, generated): this module owns the synthesis of one skeleton
//! module per stage from the IR (version, capabilities, entry point, execution
//! modes, the resources the pair reads and the stage's side away from the pair),
//! which the regular exporter then rewrites as it rewrites an imported module.
//!
//! Resources follow one fixed convention, the same in both stages (see
//! [`super::standalone_to_spirv`]): UBO block `b` at set 0, binding `b`; the
//! uniform words in a push-constant block (or, past [`PUSH_WORDS`], a uniform
//! buffer after the last block); sampler `s` a combined image sampler at set 1,
//! binding `s`, or, when atomics use it, a storage image of their texel's format
//! there; storage buffer `k` at set 2, binding `k`.

use std::collections::{BTreeMap, BTreeSet};

use rspirv::binary::Assemble;
use rspirv::dr::{self, Instruction, Operand};
use rspirv::spirv::{
    AddressingModel, Capability, Decoration, Dim, ExecutionMode, ExecutionModel, FunctionControl,
    ImageFormat, MemoryModel, Op, StorageClass,
};

use super::context::fail;
use super::globals::Globals;
use crate::ir::{
    BitSize, InstKind, OpaqueCode, OpaqueOp, Pipeline, Primitive, Resource, ScalarTy, Shader, Slot,
    Stage, StageInfo, SystemValue,
};
use crate::Error;

/// Uniform words up to this many go in a push-constant block: 128 bytes, the
/// `maxPushConstantsSize` every Vulkan device supports. More go in a uniform buffer.
pub const PUSH_WORDS: u32 = 32;
/// Location of `PATCH0` among a tessellation stage's varyings from or to a stage
/// outside the pair (`VAR0`-`VAR23` take locations 0-23, `PATCH0`-`PATCH7` 24-31).
pub const OUTER_PATCH_BASE: u32 = 24;
/// Descriptor set of the uniform buffers.
pub const UBO_SET: u32 = 0;
/// Descriptor set of the samplers (combined image samplers).
pub const SAMPLER_SET: u32 = 1;
/// Descriptor set of the storage buffers.
pub const SSBO_SET: u32 = 2;

/// Blocks, samplers and buffers numbered past this are refused: the convention
/// declares every binding up to the highest one used, so that the importer's dense
/// numbering of bindings equals the IR's numbers.
const MAX_BINDING: u32 = 64;

/// The two skeletons and where the uniform words live.
pub(crate) struct Skeletons {
    pub producer: Vec<u8>,
    pub consumer: Vec<u8>,
    /// Index of the uniform-word buffer in the shared UBO numbering.
    pub uniform_block: Option<u32>,
    /// Location of `PATCH0` outside the pair (producer, consumer): per-patch
    /// variables follow the per-vertex ones, which share their location space.
    pub patch_base: [u32; 2],
}

/// How one stage reads a sampler: the number of coordinates of its reads.
type Shapes = BTreeMap<u32, usize>;

/// The texel an image atomic works on: what the storage image it needs is declared
/// with (a 32-bit texel of this type, as many coordinates as the atomic passes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Texel {
    scalar: ScalarTy,
    coords: u8,
}

/// Image index → the texel of one stage's atomics on it.
type Texels = BTreeMap<u32, Texel>;

/// What the pair reads, gathered from both stages.
struct Uses {
    ubo_count: u32,
    ubo_sizes: BTreeMap<u32, u32>,
    ssbo_count: u32,
    uniform_words: u32,
    /// Sampler → image dimensionality (from its coordinate count).
    dims: BTreeMap<u32, Dim>,
    /// Images either stage uses with atomics: declared as storage images.
    storage: Texels,
}

fn stage_shapes(s: &Shader) -> Result<(Shapes, Texels), Error> {
    let fs = s.stage() == Stage::Fragment;
    let mut out = Shapes::new();
    let mut texels = Texels::new();
    let mut err = None;
    s.for_each_inst(|i| {
        let (sampler, n) = match &i.kind {
            InstKind::Texture {
                sampler, coords, ..
            } => (*sampler, coords.len()),
            InstKind::Opaque { op, .. } => match op.resource {
                // An atomic addresses a texel of a storage image (declared with the
                // format of its texel type), through a texel pointer into it.
                Some(Resource::Image(i)) if super::body::is_image_atomic(op) => {
                    let texel = texel_of(op).map_err(|why| {
                        fail(format!(
                            "{}: image atomic `{}` on image {i} {why}",
                            s.stage(),
                            op.name
                        ))
                    });
                    match texel {
                        Ok(t) if *texels.entry(i).or_insert(t) == t => {}
                        Ok(t) => {
                            err.get_or_insert(fail(format!(
                                "{}: image {i} is used by atomics on {:?} and on {:?} texels",
                                s.stage(),
                                texels[&i],
                                t
                            )));
                        }
                        Err(e) => {
                            err.get_or_insert(e);
                        }
                    }
                    return;
                }
                // An image query needs a handle of the image only: a 2D image,
                // unless a texture read says otherwise.
                Some(Resource::Image(i)) => {
                    out.entry(i).or_insert(if fs { 2 } else { 3 });
                    return;
                }
                _ => return,
            },
            _ => return,
        };
        match out.insert(sampler, n) {
            Some(m) if m != n => {
                err.get_or_insert(fail(format!(
                    "{}: sampler {sampler} is read with {m} and with {n} coordinates",
                    s.stage()
                )));
            }
            _ => {}
        }
    });
    if let Some(i) = texels.keys().find(|i| out.contains_key(i)) {
        err.get_or_insert(fail(format!(
            "{}: image {i} is both read through a sampler and used by atomics",
            s.stage()
        )));
    }
    match err {
        Some(e) => Err(e),
        None => Ok((out, texels)),
    }
}

/// The texel an image atomic works on: its value's 32-bit type (the result, or the
/// stored value) and its coordinate count; or why no storage image can hold it.
fn texel_of(op: &OpaqueOp) -> Result<Texel, String> {
    let value = op.result.map(|(t, _)| t).or(op.args.last().copied());
    let scalar = match value.map(|t| (t.scalar, t.rows, t.cols)) {
        Some((s @ (ScalarTy::U32 | ScalarTy::I32 | ScalarTy::F32), 1, 1)) => s,
        other => {
            return Err(format!(
                "works on a {other:?} texel; the standalone export declares 32-bit storage \
                 images (r32ui, r32i, r32f)"
            ))
        }
    };
    match op.args.first().map(|c| c.rows) {
        Some(coords @ 1..=3) => Ok(Texel { scalar, coords }),
        n => Err(format!(
            "has {n:?} coordinates; a storage image takes 1 to 3"
        )),
    }
}

/// The image dimensionality of a read with `n` coordinates: a fragment shader's
/// reads take every coordinate as a position (implicit level of detail), other
/// stages' reads end with the level of detail.
fn dim_of(n: usize, fs: bool, sampler: u32) -> Result<Dim, Error> {
    let spatial = if fs { n } else { n.wrapping_sub(1) };
    match spatial {
        1 => Ok(Dim::Dim1D),
        2 => Ok(Dim::Dim2D),
        3 => Ok(Dim::Dim3D),
        _ => Err(fail(format!(
            "sampler {sampler} is read with {n} coordinates: a {} read takes 1-3 {}",
            if fs {
                "fragment shader"
            } else {
                "non-fragment"
            },
            if fs {
                "coordinates"
            } else {
                "coordinates and the level of detail"
            }
        ))),
    }
}

fn gather(pipe: &Pipeline, shapes: [&Shapes; 2], texels: [&Texels; 2]) -> Result<Uses, Error> {
    let mut ubo_sizes: BTreeMap<u32, u32> = BTreeMap::new();
    for u in &pipe.ubos {
        ubo_sizes.insert(u.block, u.size);
    }
    let mut ssbo_max = None::<u32>;
    let mut uniform_words = pipe.uniforms;
    for s in [&pipe.producer, &pipe.consumer] {
        s.for_each_inst(|i| match &i.kind {
            InstKind::LoadUbo { block, .. } => {
                ubo_sizes.entry(*block).or_insert(16);
            }
            InstKind::SsboLoad { buffer, .. } | InstKind::SsboStore { buffer, .. } => {
                ssbo_max = Some(ssbo_max.map_or(*buffer, |m| m.max(*buffer)));
            }
            InstKind::Opaque { op, .. } => {
                if let Some(Resource::Buffer(b)) = op.resource {
                    ssbo_max = Some(ssbo_max.map_or(b, |m| m.max(b)));
                }
            }
            InstKind::LoadUniform { index, .. } => uniform_words = uniform_words.max(index + 1),
            _ => {}
        });
    }
    let ubo_count = ubo_sizes.keys().next_back().map_or(0, |m| m + 1);
    let ssbo_count = ssbo_max.map_or(0, |m| m + 1);
    let mut dims = BTreeMap::new();
    for (shapes, fs) in [
        (shapes[0], pipe.producer.stage() == Stage::Fragment),
        (shapes[1], pipe.consumer.stage() == Stage::Fragment),
    ] {
        for (s, n) in shapes {
            let d = dim_of(*n, fs, *s)?;
            if dims.insert(*s, d).is_some_and(|old| old != d) {
                return Err(fail(format!(
                    "sampler {s} is read as a {:?} and a {d:?} image by the two stages",
                    dims[s]
                )));
            }
        }
    }
    let mut storage = Texels::new();
    for (i, t) in texels.iter().flat_map(|t| t.iter()) {
        if *storage.entry(*i).or_insert(*t) != *t {
            return Err(fail(format!(
                "image {i} is used by atomics on {:?} and on {t:?} texels by the two stages",
                storage[i]
            )));
        }
        if dims.contains_key(i) {
            return Err(fail(format!(
                "image {i} is read through a sampler by one stage and used by atomics by \
                 the other"
            )));
        }
    }
    let images = dims.keys().chain(storage.keys()).max();
    let sampler_count = images.map_or(0, |m| m + 1);
    for (what, n) in [
        ("uniform buffer", ubo_count),
        ("storage buffer", ssbo_count),
        ("sampler", sampler_count),
    ] {
        if n > MAX_BINDING {
            return Err(fail(format!(
                "{what} {} is past the highest binding the standalone export declares ({})",
                n - 1,
                MAX_BINDING - 1
            )));
        }
    }
    Ok(Uses {
        ubo_count,
        ubo_sizes,
        ssbo_count,
        uniform_words,
        dims,
        storage,
    })
}

/// Synthesizes the skeleton modules of both stages of `pipe`.
pub(crate) fn skeletons(pipe: &Pipeline) -> Result<Skeletons, Error> {
    let (ps, pt) = stage_shapes(&pipe.producer)?;
    let (cs, ct) = stage_shapes(&pipe.consumer)?;
    let uses = gather(pipe, [&ps, &cs], [&pt, &ct])?;
    let (producer, pb) = stage(&pipe.producer, true, &uses, (&ps, &pt))?;
    let (consumer, cb) = stage(&pipe.consumer, false, &uses, (&cs, &ct))?;
    Ok(Skeletons {
        producer,
        consumer,
        patch_base: [pb, cb],
        uniform_block: (uses.uniform_words > 0).then_some(uses.ubo_count),
    })
}

fn model(stage: Stage) -> ExecutionModel {
    match stage {
        Stage::Vertex => ExecutionModel::Vertex,
        Stage::TessCtrl => ExecutionModel::TessellationControl,
        Stage::TessEval => ExecutionModel::TessellationEvaluation,
        Stage::Geometry => ExecutionModel::Geometry,
        Stage::Fragment => ExecutionModel::Fragment,
    }
}

/// The execution modes a stage's parameters ask for (the primitive topology and
/// patch size of the input are pipeline state, not shader modes).
fn modes(info: &StageInfo) -> Vec<(ExecutionMode, Vec<u32>)> {
    use ExecutionMode as M;
    match *info {
        StageInfo::Vertex { .. } => vec![],
        StageInfo::TessCtrl {
            output_vertices, ..
        } => vec![(M::OutputVertices, vec![u32::from(output_vertices)])],
        StageInfo::TessEval {
            domain, point_mode, ..
        } => {
            let d = match domain {
                Primitive::Quads => M::Quads,
                Primitive::Isolines => M::Isolines,
                _ => M::Triangles,
            };
            let mut v = vec![
                (d, vec![]),
                (M::SpacingEqual, vec![]),
                (M::VertexOrderCcw, vec![]),
            ];
            if point_mode {
                v.push((M::PointMode, vec![]));
            }
            v
        }
        StageInfo::Geometry {
            input,
            output,
            max_vertices,
            invocations,
        } => {
            let i = match input {
                Primitive::Points => M::InputPoints,
                Primitive::Lines | Primitive::LineStrip | Primitive::Isolines => M::InputLines,
                Primitive::LinesAdjacency => M::InputLinesAdjacency,
                Primitive::TrianglesAdjacency => M::InputTrianglesAdjacency,
                _ => M::Triangles,
            };
            let o = match output {
                Primitive::Points => M::OutputPoints,
                Primitive::LineStrip | Primitive::Lines => M::OutputLineStrip,
                _ => M::OutputTriangleStrip,
            };
            vec![
                (i, vec![]),
                (o, vec![]),
                (M::OutputVertices, vec![u32::from(max_vertices)]),
                (M::Invocations, vec![u32::from(invocations.max(1))]),
            ]
        }
        StageInfo::Fragment { .. } => vec![(M::OriginUpperLeft, vec![])],
    }
}

/// Capabilities beyond `Shader` the IR of a stage needs.
fn capabilities(g: &mut Globals, s: &Shader, dims: &BTreeMap<u32, Dim>, shapes: &Shapes) {
    let stage = s.stage();
    g.capability(Capability::Shader);
    match stage {
        Stage::TessCtrl | Stage::TessEval => g.capability(Capability::Tessellation),
        Stage::Geometry => g.capability(Capability::Geometry),
        _ => {}
    }
    if s.values.iter().any(|v| v.bits == BitSize::B16) {
        g.capability(Capability::Float16);
        g.capability(Capability::Int16);
    }
    if shapes.keys().any(|k| dims.get(k) == Some(&Dim::Dim1D)) {
        g.capability(Capability::Sampled1D);
    }
    atomic_capabilities(g, s);
    let mut slots = BTreeSet::new();
    let mut system = BTreeSet::new();
    s.for_each_inst(|i| {
        match &i.kind {
            InstKind::LoadSystemValue(sv) => {
                system.insert(*sv);
            }
            InstKind::LoadInput { slot, .. }
            | InstKind::LoadInterpolatedInput { slot, .. }
            | InstKind::LoadPerVertexInput { slot, .. }
            | InstKind::LoadOutput { slot, .. }
            | InstKind::StoreOutput { slot, .. }
            | InstKind::StorePerVertexOutput { slot, .. } => {
                slots.insert(slot.slot);
            }
            _ => {}
        };
    });
    for slot in &slots {
        match slot {
            Slot::ClipDist(_) => g.capability(Capability::ClipDistance),
            Slot::CullDist(_) => g.capability(Capability::CullDistance),
            Slot::Layer | Slot::Viewport | Slot::PrimitiveId if stage == Stage::Fragment => {
                g.capability(Capability::Geometry);
                if *slot == Slot::Viewport {
                    g.capability(Capability::MultiViewport);
                }
            }
            Slot::Viewport if stage == Stage::Geometry => g.capability(Capability::MultiViewport),
            Slot::Layer if stage == Stage::Geometry => {}
            Slot::Layer | Slot::Viewport => {
                g.capability(Capability::ShaderViewportIndexLayerEXT);
                g.extension("SPV_EXT_shader_viewport_index_layer");
            }
            // Implies ShaderViewportIndexLayerNV and MultiViewport.
            Slot::ViewportMask => {
                g.capability(Capability::ShaderViewportMaskNV);
                g.extension("SPV_NV_viewport_array2");
            }
            _ => {}
        }
    }
    for sv in &system {
        match sv {
            SystemValue::ViewIndex => g.capability(Capability::MultiView),
            SystemValue::PrimitiveId if stage == Stage::Fragment => {
                g.capability(Capability::Geometry)
            }
            _ => {}
        }
    }
}

/// The capabilities and extensions of the float arithmetic atomics
/// (`OpAtomicFAddEXT`; `OpAtomicFMinEXT` / `OpAtomicFMaxEXT`) and the 64-bit buffer
/// atomics a stage runs.
fn atomic_capabilities(g: &mut Globals, s: &Shader) {
    let (mut add, mut min_max, mut wide) = (false, false, false);
    s.for_each_inst(|i| {
        if let InstKind::Opaque { op, .. } = &i.kind {
            if let OpaqueCode::Core(c) = op.code {
                add |= c == Op::AtomicFAddEXT as u32;
                min_max |= c == Op::AtomicFMinEXT as u32 || c == Op::AtomicFMaxEXT as u32;
                let atomic = matches!(op.resource, Some(Resource::Buffer(_)))
                    && op.purity == crate::ir::Purity::Effect;
                let value = op.result.map(|(t, _)| t).or(op.args.last().copied());
                wide |= atomic && value.is_some_and(|t| t.scalar.is_wide());
            }
        }
    });
    if wide {
        g.capability(Capability::Int64Atomics);
    }
    if add {
        g.capability(Capability::AtomicFloat32AddEXT);
        g.extension("SPV_EXT_shader_atomic_float_add");
    }
    if min_max {
        g.capability(Capability::AtomicFloat32MinMaxEXT);
        g.extension("SPV_EXT_shader_atomic_float_min_max");
    }
}

/// One stage's skeleton.
fn stage(
    s: &Shader,
    producer: bool,
    uses: &Uses,
    (shapes, texels): (&Shapes, &Texels),
) -> Result<(Vec<u8>, u32), Error> {
    let mut m = dr::Module::new();
    let mut header = dr::ModuleHeader::new(1);
    header.set_version(1, 3);
    m.header = Some(header);
    m.memory_model = Some(Instruction::new(
        Op::MemoryModel,
        None,
        None,
        vec![
            Operand::AddressingModel(AddressingModel::Logical),
            Operand::MemoryModel(MemoryModel::GLSL450),
        ],
    ));
    let mut g = Globals::new(m, 1);
    capabilities(&mut g, s, &uses.dims, shapes);
    let mut interface = vec![];
    buffers(&mut g, uses);
    let (outer, patch_base) = outer_io(&mut g, s, producer)?;
    interface.extend(outer);
    let fs = s.stage() == Stage::Fragment;
    let mut body = vec![];
    // Every sampler or image up to the highest this stage uses is declared, so that
    // the importer's dense numbering of the bindings is the IR's; only the ones read
    // get a read (the template of the stage's reads), and only the ones this stage's
    // atomics use a texel pointer (what the exporter rebuilds its atomics from).
    let top = shapes
        .keys()
        .chain(texels.keys())
        .max()
        .map_or(0, |m| m + 1);
    for index in 0..top {
        if let Some(texel) = uses.storage.get(&index) {
            let used = texels.contains_key(&index);
            body.extend(storage_image(&mut g, index, *texel, used));
            continue;
        }
        let dim = uses.dims.get(&index).copied().unwrap_or(Dim::Dim2D);
        let read = shapes.get(&index).copied();
        body.extend(sampler_and_read(&mut g, index, dim, read, fs));
    }
    let void = g.void();
    let fty = g.ty(Op::TypeFunction, vec![Operand::IdRef(void)]);
    let fid = g.id();
    let label = g.id();
    body.push(Instruction::new(Op::Return, None, None, vec![]));
    let block = dr::Block {
        label: Some(Instruction::new(Op::Label, None, Some(label), vec![])),
        instructions: body,
    };
    g.m.functions.push(dr::Function {
        def: Some(Instruction::new(
            Op::Function,
            Some(void),
            Some(fid),
            vec![
                Operand::FunctionControl(FunctionControl::NONE),
                Operand::IdRef(fty),
            ],
        )),
        end: Some(Instruction::new(Op::FunctionEnd, None, None, vec![])),
        parameters: vec![],
        blocks: vec![block],
    });
    let mut ep = vec![
        Operand::ExecutionModel(model(s.stage())),
        Operand::IdRef(fid),
        Operand::LiteralString("main".to_owned()),
    ];
    ep.extend(interface.into_iter().map(Operand::IdRef));
    g.m.entry_points
        .push(Instruction::new(Op::EntryPoint, None, None, ep));
    for (mode, args) in modes(&s.info) {
        let mut ops = vec![Operand::IdRef(fid), Operand::ExecutionMode(mode)];
        ops.extend(args.into_iter().map(Operand::LiteralBit32));
        g.m.execution_modes
            .push(Instruction::new(Op::ExecutionMode, None, None, ops));
    }
    let bound = g.bound();
    if let Some(h) = g.m.header.as_mut() {
        h.bound = bound;
    }
    let bytes =
        g.m.assemble()
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
    Ok((bytes, patch_base))
}

/// A block `{ T data; }` at offset 0, decorated `Block`.
fn block_var(g: &mut Globals, member: u32, class: StorageClass, name: &str) -> u32 {
    let st = g.fresh_ty(Op::TypeStruct, vec![Operand::IdRef(member)]);
    g.member_decorate(st, 0, Decoration::Offset, &[0]);
    g.decorate(st, Decoration::Block, &[]);
    let ptr = g.ptr(class, st);
    let var = g.variable(ptr, class);
    g.name(var, name);
    var
}

/// Every buffer of the convention, in both stages (the exporter declares in its
/// output only the ones a stage reads).
fn buffers(g: &mut Globals, uses: &Uses) {
    let u = g.uint(32);
    let v4 = g.vec(u, 4);
    for b in 0..uses.ubo_count {
        let size = uses.ubo_sizes.get(&b).copied().unwrap_or(16);
        let arr = g.array(v4, size.div_ceil(16).max(1));
        g.decorate(arr, Decoration::ArrayStride, &[16]);
        let var = block_var(g, arr, StorageClass::Uniform, &format!("ubo{b}"));
        g.decorate(var, Decoration::DescriptorSet, &[UBO_SET]);
        g.decorate(var, Decoration::Binding, &[b]);
    }
    if uses.uniform_words > 0 {
        if uses.uniform_words <= PUSH_WORDS {
            let arr = g.array(u, uses.uniform_words);
            g.decorate(arr, Decoration::ArrayStride, &[4]);
            block_var(g, arr, StorageClass::PushConstant, "uniforms");
        } else {
            let arr = g.array(v4, uses.uniform_words.div_ceil(4));
            g.decorate(arr, Decoration::ArrayStride, &[16]);
            let var = block_var(g, arr, StorageClass::Uniform, "uniforms");
            g.decorate(var, Decoration::DescriptorSet, &[UBO_SET]);
            g.decorate(var, Decoration::Binding, &[uses.ubo_count]);
        }
    }
    for k in 0..uses.ssbo_count {
        let arr = g.fresh_ty(Op::TypeRuntimeArray, vec![Operand::IdRef(u)]);
        g.decorate(arr, Decoration::ArrayStride, &[4]);
        let var = block_var(g, arr, StorageClass::StorageBuffer, &format!("ssbo{k}"));
        g.decorate(var, Decoration::DescriptorSet, &[SSBO_SET]);
        g.decorate(var, Decoration::Binding, &[k]);
    }
}

/// An image type of texel type `texel`: `sampled` 1 for a sampled image, 2 for a
/// storage image.
fn image_type(g: &mut Globals, texel: u32, dim: Dim, sampled: u32, format: ImageFormat) -> u32 {
    g.ty(
        Op::TypeImage,
        vec![
            Operand::IdRef(texel),
            Operand::Dim(dim),
            Operand::LiteralBit32(0),
            Operand::LiteralBit32(0),
            Operand::LiteralBit32(0),
            Operand::LiteralBit32(sampled),
            Operand::ImageFormat(format),
        ],
    )
}

/// A `UniformConstant` variable of type `ty` at the sampler set, binding `index`.
fn binding_var(g: &mut Globals, ty: u32, index: u32, name: &str) -> u32 {
    let ptr = g.ptr(StorageClass::UniformConstant, ty);
    let var = g.variable(ptr, StorageClass::UniformConstant);
    g.decorate(var, Decoration::DescriptorSet, &[SAMPLER_SET]);
    g.decorate(var, Decoration::Binding, &[index]);
    g.name(var, name);
    var
}

/// The zero of `elem` (a 32-bit type), or a constant vector of `n` of them.
fn zeros(g: &mut Globals, elem: u32, n: u32) -> u32 {
    let zero = g.constant(elem, 0);
    if n == 1 {
        return zero;
    }
    let vt = g.vec(elem, n);
    let id = g.id();
    g.m.types_global_values.push(Instruction::new(
        Op::ConstantComposite,
        Some(vt),
        Some(id),
        (0..n).map(|_| Operand::IdRef(zero)).collect(),
    ));
    id
}

/// A storage image variable for the atomics on image `index`, with a texel pointer
/// into it when this stage's atomics use it (the exporter finds the variable its
/// atomics address through the module's texel pointers).
fn storage_image(g: &mut Globals, index: u32, texel: Texel, used: bool) -> Vec<Instruction> {
    let (scalar, format) = match texel.scalar {
        ScalarTy::I32 => (g.int_ty(32, true), ImageFormat::R32i),
        ScalarTy::F32 => (g.float(32), ImageFormat::R32f),
        _ => (g.uint(32), ImageFormat::R32ui),
    };
    let dim = match texel.coords {
        1 => {
            g.capability(Capability::Image1D);
            Dim::Dim1D
        }
        2 => Dim::Dim2D,
        _ => Dim::Dim3D,
    };
    // Sampled 2: a storage image.
    let img = image_type(g, scalar, dim, 2, format);
    let var = binding_var(g, img, index, &format!("image{index}"));
    if !used {
        return vec![];
    }
    let int = g.int_ty(32, true);
    let coord = zeros(g, int, u32::from(texel.coords));
    let uint = g.uint(32);
    let sample = g.constant(uint, 0);
    let texel_ptr = g.ptr(StorageClass::Image, scalar);
    let id = g.id();
    vec![Instruction::new(
        Op::ImageTexelPointer,
        Some(texel_ptr),
        Some(id),
        vec![
            Operand::IdRef(var),
            Operand::IdRef(coord),
            Operand::IdRef(sample),
        ],
    )]
}

/// The sampler variable and one read of it in the shape the stage uses (the
/// exporter's template for every read of that sampler).
fn sampler_and_read(
    g: &mut Globals,
    s: u32,
    dim: Dim,
    read: Option<usize>,
    fs: bool,
) -> Vec<Instruction> {
    let f = g.float(32);
    // Sampled 1: read through a sampler.
    let img = image_type(g, f, dim, 1, ImageFormat::Unknown);
    let sampled = g.ty(Op::TypeSampledImage, vec![Operand::IdRef(img)]);
    let var = binding_var(g, sampled, s, &format!("sampler{s}"));
    let Some(n) = read else {
        return vec![];
    };
    let spatial = if fs { n } else { n - 1 } as u32;
    let zero = g.constant(f, 0);
    let coord = zeros(g, f, spatial);
    let v4 = g.vec(f, 4);
    let loaded = g.id();
    let read = g.id();
    let load = Instruction::new(
        Op::Load,
        Some(sampled),
        Some(loaded),
        vec![Operand::IdRef(var)],
    );
    let sample = if fs {
        Instruction::new(
            Op::ImageSampleImplicitLod,
            Some(v4),
            Some(read),
            vec![Operand::IdRef(loaded), Operand::IdRef(coord)],
        )
    } else {
        Instruction::new(
            Op::ImageSampleExplicitLod,
            Some(v4),
            Some(read),
            vec![
                Operand::IdRef(loaded),
                Operand::IdRef(coord),
                Operand::ImageOperands(rspirv::spirv::ImageOperands::LOD),
                Operand::IdRef(zero),
            ],
        )
    };
    vec![load, sample]
}

/// The variables of a stage's side away from the pair: vertex attributes (a
/// producer VS), fragment outputs (a consumer FS), and the varyings from or to a
/// stage outside the pair, each a `vec4` of floats at its slot's location
/// (arrayed per vertex where the stage reads or writes per vertex).
fn outer_io(g: &mut Globals, s: &Shader, producer: bool) -> Result<(Vec<u32>, u32), Error> {
    let stage = s.stage();
    let mut used: BTreeSet<Slot> = BTreeSet::new();
    let mut err = None;
    s.for_each_inst(|i| {
        let (slot, output) = match &i.kind {
            InstKind::LoadInput { slot, .. }
            | InstKind::LoadInterpolatedInput { slot, .. }
            | InstKind::LoadPerVertexInput { slot, .. } => (slot, false),
            InstKind::LoadOutput { slot, .. }
            | InstKind::StoreOutput { slot, .. }
            | InstKind::StorePerVertexOutput { slot, .. } => (slot, true),
            _ => return,
        };
        // The pair's own side: the producer's outputs, the consumer's inputs.
        if output == producer {
            return;
        }
        let family_ok = matches!(slot.slot, Slot::Attr(_) | Slot::Data(_) | Slot::Var(_))
            || slot.slot.is_patch();
        if !family_ok {
            return; // built-ins: declared by the exporter.
        }
        if let Some(v) = i.result.filter(|v| s.bits(*v) != BitSize::B32) {
            err.get_or_insert(fail(format!(
                "{stage}: {} is read as a {}-bit value; the standalone export declares \
                 attributes, fragment outputs and outer varyings as 32-bit",
                slot,
                s.bits(v).bits()
            )));
        }
        if let InstKind::StoreOutput { value, .. } | InstKind::StorePerVertexOutput { value, .. } =
            &i.kind
        {
            if s.bits(*value) != BitSize::B32 {
                err.get_or_insert(fail(format!(
                    "{stage}: {slot} stores a {}-bit value; the standalone export declares \
                     attributes, fragment outputs and outer varyings as 32-bit",
                    s.bits(*value).bits()
                )));
            }
        }
        used.insert(slot.slot);
    });
    if let Some(e) = err {
        return Err(e);
    }
    let class = if producer {
        StorageClass::Input
    } else {
        StorageClass::Output
    };
    let f = g.float(32);
    let v4 = g.vec(f, 4);
    // Per-patch and per-vertex varyings share a tessellation interface's
    // locations: PATCHn sits at a fixed OUTER_PATCH_BASE + n, so that the
    // interface does not depend on which varyings a shader happens to read (an
    // optimized stage must fit the same neighbour as the original).
    let patch_base = OUTER_PATCH_BASE;
    for slot in &used {
        let beyond = match slot {
            Slot::Var(n) if stage != Stage::Vertex && stage != Stage::Fragment => {
                u32::from(*n) >= OUTER_PATCH_BASE
            }
            Slot::Patch(n) => u32::from(*n) >= 32 - OUTER_PATCH_BASE,
            _ => false,
        };
        if beyond {
            return Err(fail(format!(
                "{stage}: {slot} outside the pair is past the standalone convention \
                 (VAR0-VAR{} at their index, PATCH0-PATCH{} from location {OUTER_PATCH_BASE})",
                OUTER_PATCH_BASE - 1,
                31 - OUTER_PATCH_BASE
            )));
        }
    }
    let mut vars = vec![];
    for slot in used {
        let (loc, patch) = match slot {
            Slot::Attr(n) | Slot::Data(n) | Slot::Var(n) => (u32::from(n), false),
            Slot::Patch(n) => (patch_base + u32::from(n), true),
            _ => continue,
        };
        let vlen = if patch {
            None
        } else {
            match (&s.info, class) {
                (
                    StageInfo::TessCtrl {
                        output_vertices, ..
                    },
                    StorageClass::Output,
                ) => Some(u32::from(*output_vertices)),
                (StageInfo::TessCtrl { .. } | StageInfo::TessEval { .. }, StorageClass::Input) => {
                    Some(32)
                }
                (StageInfo::Geometry { input, .. }, StorageClass::Input) => {
                    Some(input.vertex_count() as u32)
                }
                _ => None,
            }
        };
        let ty = match vlen {
            Some(n) => g.array(v4, n),
            None => v4,
        };
        let ptr = g.ptr(class, ty);
        let var = g.variable(ptr, class);
        g.decorate(var, Decoration::Location, &[loc]);
        if patch {
            g.decorate(var, Decoration::Patch, &[]);
        }
        g.name(var, &format!("{slot}"));
        vars.push(var);
    }
    Ok((vars, patch_base))
}
