//! A loaded SPIR-V module indexed for translation: types, constants, decorations,
//! debug names, global variables, functions and the chosen entry point.

use fxhash::FxHashMap;
use rspirv::dr::{self, Instruction, Operand};
use rspirv::spirv::{BuiltIn, Decoration, ExecutionMode, ExecutionModel, Op, StorageClass};

use crate::ir::Stage;

use super::files::fail;
use crate::Error;

/// A SPIR-V type, reduced to what translation needs.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Ty {
    Void,
    Bool,
    Int {
        width: u32,
        signed: bool,
    },
    Float {
        width: u32,
    },
    Vector {
        elem: u32,
        n: u32,
    },
    Matrix {
        col: u32,
        n: u32,
    },
    Array {
        elem: u32,
        len: u32,
    },
    RuntimeArray {
        elem: u32,
    },
    Struct {
        members: Vec<u32>,
    },
    Pointer {
        class: StorageClass,
        pointee: u32,
    },
    /// Images, samplers and sampled images: opaque handles.
    Opaque,
    Function,
}

/// Whether an instruction declares a type.
fn is_type_decl(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        TypeVoid
            | TypeBool
            | TypeInt
            | TypeFloat
            | TypeVector
            | TypeMatrix
            | TypeArray
            | TypeRuntimeArray
            | TypeStruct
            | TypePointer
            | TypeImage
            | TypeSampler
            | TypeSampledImage
            | TypeFunction
            | TypeForwardPointer
    )
}

impl Ty {
    /// The types this one is built from.
    pub fn parts(&self) -> Vec<u32> {
        match self {
            Ty::Vector { elem, .. } | Ty::Array { elem, .. } | Ty::RuntimeArray { elem } => {
                vec![*elem]
            }
            Ty::Matrix { col, .. } => vec![*col],
            Ty::Struct { members } => members.clone(),
            Ty::Pointer { pointee, .. } => vec![*pointee],
            _ => vec![],
        }
    }
}

/// The decorations translation reads, for an id or a struct member.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Decos {
    pub location: Option<u32>,
    pub component: Option<u32>,
    pub builtin: Option<BuiltIn>,
    pub flat: bool,
    pub noperspective: bool,
    pub centroid: bool,
    pub sample: bool,
    pub patch: bool,
    pub binding: Option<u32>,
    pub set: Option<u32>,
    pub offset: Option<u32>,
    pub array_stride: Option<u32>,
    pub matrix_stride: Option<u32>,
    pub row_major: bool,
    pub block: bool,
    pub buffer_block: bool,
    pub no_contraction: bool,
    pub xfb_buffer: Option<u32>,
    pub xfb_stride: Option<u32>,
    pub index: Option<u32>,
    pub spec_id: Option<u32>,
    pub viewport_relative: bool,
}

/// A scalar constant or a composite of constant ids.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ConstDef {
    /// Bit pattern of a scalar (booleans are 0/1).
    Scalar(u32),
    /// Bit pattern of a 64-bit scalar (the IR holds it as two 32-bit words).
    Wide(u64),
    Composite(Vec<u32>),
    Null,
    Undef,
}

/// A module-scope `OpVariable`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct GlobalVar {
    pub class: StorageClass,
    /// The pointee type.
    pub ty: u32,
    pub init: Option<u32>,
}

/// The indexed module.
pub(crate) struct Module {
    pub raw: dr::Module,
    pub file: String,
    pub types: FxHashMap<u32, Ty>,
    pub consts: FxHashMap<u32, (u32, ConstDef)>,
    pub decos: FxHashMap<u32, Decos>,
    pub member_decos: FxHashMap<(u32, u32), Decos>,
    pub names: FxHashMap<u32, String>,
    pub member_names: FxHashMap<(u32, u32), String>,
    /// Globals in id order (sorted, so iteration is deterministic).
    pub vars: std::collections::BTreeMap<u32, GlobalVar>,
    /// Function id → index into `raw.functions`.
    pub functions: FxHashMap<u32, usize>,
    /// The type of every id a function defines (instruction results, parameters).
    pub value_types: FxHashMap<u32, u32>,
    /// Id of the `GLSL.std.450` extended instruction set.
    pub glsl_ext: Option<u32>,
    /// Ids of imported `NonSemantic.*` instruction sets (debug printing, ...).
    pub non_semantic: Vec<u32>,
    /// Other imported instruction sets (AMD's, ...) by id: their instructions are
    /// carried as opaque ops (see `opaque.rs`).
    pub other_ext: FxHashMap<u32, String>,
    /// Values set for specialization constants, by `SpecId`.
    pub spec: std::collections::BTreeMap<u32, u32>,
    pub stage: Stage,
    pub entry_fn: u32,
    pub modes: Vec<(ExecutionMode, Vec<u32>)>,
}

/// The id operand at `i`, if it is one.
pub(crate) fn id_at(inst: &Instruction, i: usize) -> Option<u32> {
    match inst.operands.get(i) {
        Some(Operand::IdRef(id)) => Some(*id),
        _ => None,
    }
}

/// The 32-bit literal operand at `i`, if it is one.
pub(crate) fn lit_at(inst: &Instruction, i: usize) -> Option<u32> {
    match inst.operands.get(i) {
        Some(Operand::LiteralBit32(v)) => Some(*v),
        Some(Operand::LiteralExtInstInteger(v)) => Some(*v),
        _ => None,
    }
}

/// How an instruction is named in diagnostics: `OpFoo %id`.
pub(crate) fn describe(inst: &Instruction) -> String {
    match inst.result_id {
        Some(id) => format!("Op{} %{id}", inst.class.opname),
        None => format!("Op{}", inst.class.opname),
    }
}

fn stage_of(model: ExecutionModel) -> Option<Stage> {
    Some(match model {
        ExecutionModel::Vertex => Stage::Vertex,
        ExecutionModel::TessellationControl => Stage::TessCtrl,
        ExecutionModel::TessellationEvaluation => Stage::TessEval,
        ExecutionModel::Geometry => Stage::Geometry,
        ExecutionModel::Fragment => Stage::Fragment,
        _ => return None,
    })
}

impl Module {
    /// Parses and indexes a SPIR-V binary. `file` names it in diagnostics.
    pub fn load(
        bytes: &[u8],
        file: &str,
        spec: &std::collections::BTreeMap<u32, u32>,
    ) -> Result<Module, Error> {
        if !bytes.len().is_multiple_of(4) || bytes.len() < 20 {
            return Err(fail(
                file,
                "not a SPIR-V module (size is not a whole number of words)",
            ));
        }
        super::framing::check(bytes)
            .map_err(|m| fail(file, format!("cannot parse SPIR-V: {m}")))?;
        // The framing check screens what rspirv is known to panic on; a panic that
        // remains is still an error for this file, not a crash.
        let loaded = std::panic::catch_unwind(|| dr::load_bytes(bytes))
            .map_err(|_| fail(file, "cannot parse SPIR-V: the decoder failed on it"))?;
        let raw = loaded.map_err(|e| fail(file, format!("cannot parse SPIR-V: {e}")))?;
        let mut m = Module {
            raw,
            file: file.to_owned(),
            types: FxHashMap::default(),
            consts: FxHashMap::default(),
            decos: FxHashMap::default(),
            member_decos: FxHashMap::default(),
            names: FxHashMap::default(),
            member_names: FxHashMap::default(),
            vars: Default::default(),
            functions: FxHashMap::default(),
            value_types: FxHashMap::default(),
            glsl_ext: None,
            non_semantic: vec![],
            other_ext: FxHashMap::default(),
            spec: spec.clone(),
            stage: Stage::Vertex,
            entry_fn: 0,
            modes: vec![],
        };
        m.index_entry()?;
        m.index_debug_and_annotations();
        m.index_globals()?;
        for (i, f) in m.raw.functions.iter().enumerate() {
            if let Some(id) = f.def_id() {
                m.functions.insert(id, i);
            }
            let params = f.parameters.iter();
            let insts = f.blocks.iter().flat_map(|b| b.instructions.iter());
            for inst in params.chain(insts) {
                if let (Some(r), Some(t)) = (inst.result_id, inst.result_type) {
                    m.value_types.insert(r, t);
                }
            }
        }
        if !m.functions.contains_key(&m.entry_fn) {
            return Err(fail(
                file,
                format!("entry point function %{} is not defined", m.entry_fn),
            ));
        }
        Ok(m)
    }

    fn index_entry(&mut self) -> Result<(), Error> {
        let mut found = vec![];
        for ep in &self.raw.entry_points {
            let model = match ep.operands.first() {
                Some(Operand::ExecutionModel(m)) => *m,
                _ => continue,
            };
            match (stage_of(model), id_at(ep, 1)) {
                (Some(stage), Some(f)) => found.push((stage, f)),
                _ => {
                    return Err(fail(
                        &self.file,
                        format!("unsupported execution model {model:?} (varysat imports VS, TCS, TES, GS and FS)"),
                    ))
                }
            }
        }
        let (stage, f) = match found.as_slice() {
            [one] => *one,
            [] => return Err(fail(&self.file, "the module has no OpEntryPoint")),
            _ => {
                return Err(fail(
                    &self.file,
                    "the module has several entry points; pass one shader stage per module",
                ))
            }
        };
        self.stage = stage;
        self.entry_fn = f;
        for em in &self.raw.execution_modes {
            if id_at(em, 0) != Some(f) {
                continue;
            }
            if let Some(Operand::ExecutionMode(mode)) = em.operands.get(1) {
                let args = (2..em.operands.len())
                    .filter_map(|i| lit_at(em, i))
                    .collect();
                self.modes.push((*mode, args));
            }
        }
        Ok(())
    }

    fn index_debug_and_annotations(&mut self) {
        for inst in &self.raw.debug_names {
            let s = match inst.operands.last() {
                Some(Operand::LiteralString(s)) => s.clone(),
                _ => continue,
            };
            match (inst.class.opcode, id_at(inst, 0), lit_at(inst, 1)) {
                (Op::Name, Some(id), _) => {
                    self.names.insert(id, s);
                }
                (Op::MemberName, Some(id), Some(m)) => {
                    self.member_names.insert((id, m), s);
                }
                _ => {}
            }
        }
        for inst in &self.raw.annotations {
            let (target, deco, args_at) = match inst.class.opcode {
                Op::Decorate => match (id_at(inst, 0), inst.operands.get(1)) {
                    (Some(t), Some(Operand::Decoration(d))) => ((t, None), *d, 2),
                    _ => continue,
                },
                Op::MemberDecorate => match (id_at(inst, 0), lit_at(inst, 1), inst.operands.get(2))
                {
                    (Some(t), Some(m), Some(Operand::Decoration(d))) => ((t, Some(m)), *d, 3),
                    _ => continue,
                },
                _ => continue,
            };
            let slot = match target {
                (t, None) => self.decos.entry(t).or_default(),
                (t, Some(m)) => self.member_decos.entry((t, m)).or_default(),
            };
            apply_deco(slot, deco, inst, args_at);
        }
    }

    fn index_globals(&mut self) -> Result<(), Error> {
        for inst in &self.raw.ext_inst_imports {
            if let (Some(id), Some(Operand::LiteralString(s))) =
                (inst.result_id, inst.operands.first())
            {
                if s == "GLSL.std.450" {
                    self.glsl_ext = Some(id);
                }
                if s.starts_with("NonSemantic.") {
                    self.non_semantic.push(id);
                } else if s != "GLSL.std.450" {
                    self.other_ext.insert(id, s.clone());
                }
            }
        }
        let globals: Vec<Instruction> = self.raw.types_global_values.clone();
        let type_ids: std::collections::BTreeSet<u32> = globals
            .iter()
            .filter(|i| is_type_decl(i.class.opcode))
            .filter_map(|i| i.result_id)
            .collect();
        for inst in &globals {
            let Some(id) = inst.result_id else { continue };
            if let Some(ty) = self.type_of_decl(inst)? {
                // SPIR-V declares a type before any type that uses it (forward
                // pointers are refused), so no walk over types can cycle: a type
                // that uses itself or a later type is an error. (An id that is no
                // type at all stays an unknown type for the uses to reject.)
                let later = |t: &u32| type_ids.contains(t) && !self.types.contains_key(t);
                if let Some(bad) = ty.parts().into_iter().find(later) {
                    return Err(self.err(
                        inst,
                        format!("type %{id} uses %{bad}, which is not a type declared before it"),
                    ));
                }
                self.types.insert(id, ty);
                continue;
            }
            let rty = inst.result_type.unwrap_or(0);
            let def = match inst.class.opcode {
                Op::Constant | Op::SpecConstant => {
                    match (inst.operands.first(), inst.operands.len()) {
                        (Some(Operand::LiteralBit32(v)), 1) => {
                            ConstDef::Scalar(self.spec_value(id, inst.class.opcode, *v))
                        }
                        // 64-bit specialization constants keep their default:
                        // `--spec` values are 32-bit.
                        (Some(Operand::LiteralBit64(v)), 1) => ConstDef::Wide(*v),
                        _ => {
                            return Err(
                                self.err(inst, "only 32-bit and smaller constants are supported")
                            )
                        }
                    }
                }
                Op::ConstantTrue | Op::ConstantFalse => {
                    ConstDef::Scalar((inst.class.opcode == Op::ConstantTrue) as u32)
                }
                Op::SpecConstantTrue | Op::SpecConstantFalse => {
                    let default = (inst.class.opcode == Op::SpecConstantTrue) as u32;
                    ConstDef::Scalar(self.spec_value(id, inst.class.opcode, default) & 1)
                }
                Op::SpecConstantOp => self.fold_spec_op(inst, rty)?,
                Op::ConstantComposite | Op::SpecConstantComposite => ConstDef::Composite(
                    (0..inst.operands.len())
                        .filter_map(|i| id_at(inst, i))
                        .collect(),
                ),
                Op::ConstantNull => ConstDef::Null,
                Op::Undef => ConstDef::Undef,
                Op::Variable => {
                    let class = match inst.operands.first() {
                        Some(Operand::StorageClass(c)) => *c,
                        _ => return Err(self.err(inst, "variable without a storage class")),
                    };
                    let ty = match self.types.get(&rty) {
                        Some(Ty::Pointer { pointee, .. }) => *pointee,
                        _ => return Err(self.err(inst, "variable whose type is not a pointer")),
                    };
                    self.vars.insert(
                        id,
                        GlobalVar {
                            class,
                            ty,
                            init: id_at(inst, 1),
                        },
                    );
                    continue;
                }
                Op::String | Op::Line | Op::NoLine | Op::ExtInst => continue,
                _ => return Err(self.err(inst, "unsupported module-scope instruction")),
            };
            self.consts.insert(id, (rty, def));
        }
        Ok(())
    }

    /// A specialization constant's value: the one set for its `SpecId`, else its
    /// default. Plain constants keep their value.
    fn spec_value(&self, id: u32, op: Op, default: u32) -> u32 {
        let spec = matches!(
            op,
            Op::SpecConstant | Op::SpecConstantTrue | Op::SpecConstantFalse
        );
        let set = self.deco(id).spec_id.and_then(|s| self.spec.get(&s));
        match (spec, set) {
            (true, Some(v)) => *v,
            _ => default,
        }
    }

    fn type_of_decl(&self, inst: &Instruction) -> Result<Option<Ty>, Error> {
        let op = |i| id_at(inst, i).unwrap_or(0);
        let lit = |i| lit_at(inst, i).unwrap_or(0);
        Ok(Some(match inst.class.opcode {
            Op::TypeVoid => Ty::Void,
            Op::TypeBool => Ty::Bool,
            Op::TypeInt => Ty::Int {
                width: lit(0),
                signed: lit(1) != 0,
            },
            Op::TypeFloat => Ty::Float { width: lit(0) },
            // Shaders have vectors and matrix columns of 2 to 4 (the Vector16
            // capability is for kernels); bounding them here keeps every loop over
            // components short and every offset computed from them small.
            Op::TypeVector | Op::TypeMatrix if !(2..=4).contains(&lit(1)) => {
                return Err(self.err(inst, "a vector or matrix must have 2 to 4 components"));
            }
            Op::TypeVector => Ty::Vector {
                elem: op(0),
                n: lit(1),
            },
            Op::TypeMatrix => Ty::Matrix {
                col: op(0),
                n: lit(1),
            },
            Op::TypeArray => {
                let len = match self.consts.get(&op(1)) {
                    Some((_, ConstDef::Scalar(v))) => *v,
                    _ => return Err(self.err(inst, "array length is not a constant")),
                };
                Ty::Array { elem: op(0), len }
            }
            Op::TypeRuntimeArray => Ty::RuntimeArray { elem: op(0) },
            Op::TypeStruct => Ty::Struct {
                members: (0..inst.operands.len())
                    .filter_map(|i| id_at(inst, i))
                    .collect(),
            },
            Op::TypePointer => match inst.operands.first() {
                Some(Operand::StorageClass(class)) => Ty::Pointer {
                    class: *class,
                    pointee: op(1),
                },
                _ => return Err(self.err(inst, "pointer type without a storage class")),
            },
            Op::TypeImage | Op::TypeSampler | Op::TypeSampledImage => Ty::Opaque,
            Op::TypeFunction => Ty::Function,
            Op::TypeForwardPointer => {
                return Err(self.err(inst, "forward pointers are not supported"))
            }
            _ => return Ok(None),
        }))
    }

    /// Whether any function uses an imported `NonSemantic.*` instruction set.
    pub fn uses_non_semantic(&self) -> bool {
        !self.non_semantic.is_empty()
            && self.raw.functions.iter().any(|f| {
                f.blocks.iter().flat_map(|b| &b.instructions).any(|i| {
                    i.class.opcode == Op::ExtInst
                        && id_at(i, 0).is_some_and(|s| self.non_semantic.contains(&s))
                })
            })
    }

    /// An import error naming an instruction.
    pub fn err(&self, inst: &Instruction, msg: impl AsRef<str>) -> Error {
        fail(&self.file, format!("{}: {}", describe(inst), msg.as_ref()))
    }

    /// An import error not tied to one instruction.
    pub fn err_plain(&self, msg: impl Into<String>) -> Error {
        fail(&self.file, msg)
    }

    /// The type with this id.
    pub fn ty(&self, id: u32) -> Result<&Ty, Error> {
        self.types
            .get(&id)
            .ok_or_else(|| self.err_plain(format!("%{id} is not a type")))
    }

    /// Decorations of an id (empty when none).
    pub fn deco(&self, id: u32) -> Decos {
        self.decos.get(&id).cloned().unwrap_or_default()
    }

    /// Decorations of a struct member (empty when none).
    pub fn member_deco(&self, ty: u32, member: u32) -> Decos {
        self.member_decos
            .get(&(ty, member))
            .cloned()
            .unwrap_or_default()
    }

    /// The execution mode's first argument, if the mode is set.
    pub fn mode(&self, mode: ExecutionMode) -> Option<u32> {
        self.modes
            .iter()
            .find(|(m, _)| *m == mode)
            .map(|(_, a)| a.first().copied().unwrap_or(0))
    }

    /// Whether an execution mode is set.
    pub fn has_mode(&self, mode: ExecutionMode) -> bool {
        self.modes.iter().any(|(m, _)| *m == mode)
    }

    /// The function with this id.
    pub fn function(&self, id: u32) -> Option<&dr::Function> {
        self.functions
            .get(&id)
            .and_then(|i| self.raw.functions.get(*i))
    }

    /// The debug name of a variable or its block type, or "" when stripped.
    pub fn name(&self, id: u32) -> &str {
        self.names.get(&id).map(String::as_str).unwrap_or("")
    }
}

fn apply_deco(d: &mut Decos, deco: Decoration, inst: &Instruction, at: usize) {
    let lit = lit_at(inst, at);
    match deco {
        Decoration::Location => d.location = lit,
        Decoration::Component => d.component = lit,
        Decoration::BuiltIn => {
            if let Some(Operand::BuiltIn(b)) = inst.operands.get(at) {
                d.builtin = Some(*b);
            }
        }
        Decoration::Flat => d.flat = true,
        Decoration::NoPerspective => d.noperspective = true,
        Decoration::Centroid => d.centroid = true,
        Decoration::Sample => d.sample = true,
        Decoration::Patch => d.patch = true,
        Decoration::Binding => d.binding = lit,
        Decoration::DescriptorSet => d.set = lit,
        Decoration::Offset => d.offset = lit,
        Decoration::ArrayStride => d.array_stride = lit,
        Decoration::MatrixStride => d.matrix_stride = lit,
        Decoration::RowMajor => d.row_major = true,
        Decoration::Block => d.block = true,
        Decoration::BufferBlock => d.buffer_block = true,
        Decoration::NoContraction => d.no_contraction = true,
        Decoration::XfbBuffer => d.xfb_buffer = lit,
        Decoration::XfbStride => d.xfb_stride = lit,
        Decoration::Index => d.index = lit,
        Decoration::SpecId => d.spec_id = lit,
        Decoration::ViewportRelativeNV => d.viewport_relative = true,
        _ => {}
    }
}
