//! OpenGL default-block ("loose") uniforms of an exported stage. OpenGL SPIR-V
//! (glslang `-G`) declares `uniform vec4 c;` as a `UniformConstant` variable with a
//! `Location`; the IR reads its scalars as uniform words (`LoadUniform`, numbered by
//! `import::link`), and dynamically indexed arrays as byte offsets into one
//! synthesized buffer (`LoadUbo` of the layout's `default_ubo`, word `i` at byte
//! `4 i`). The export turns each word back into an access chain into the variable
//! that holds it: this stage's own declaration, or, where code moved across the
//! stages, a copy of the other stage's (same type, name and `Location`, which is
//! how GL links loose uniforms of two stages into one).

use std::collections::BTreeMap;

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Capability, Decoration, Op, StorageClass};

use super::context::{fail, Sides};
use super::globals::Globals;
use crate::import::link::StageLayout;
use crate::import::module::{Module, Ty};
use crate::Error;

/// A loose uniform's type, owned, so that a stage can declare a copy of the other
/// stage's variable.
#[derive(Clone, Debug, PartialEq)]
enum TyTree {
    Bool,
    Int {
        width: u32,
        signed: bool,
    },
    Float {
        width: u32,
    },
    /// A vector, matrix or array: `n` elements of one type.
    Seq {
        kind: Op,
        elem: Box<TyTree>,
        n: u32,
    },
    Struct(Vec<TyTree>),
}

impl TyTree {
    fn of(m: &Module, ty: u32, depth: u32) -> Result<TyTree, Error> {
        if depth > 64 {
            return Err(fail(format!("uniform type %{ty} nests too deeply")));
        }
        let seq = |kind, elem, n| -> Result<TyTree, Error> {
            Ok(TyTree::Seq {
                kind,
                elem: Box::new(TyTree::of(m, elem, depth + 1)?),
                n,
            })
        };
        match m.ty(ty)? {
            Ty::Bool => Ok(TyTree::Bool),
            Ty::Int { width, signed } => Ok(TyTree::Int {
                width: *width,
                signed: *signed,
            }),
            Ty::Float { width } => Ok(TyTree::Float { width: *width }),
            Ty::Vector { elem, n } => seq(Op::TypeVector, *elem, *n),
            Ty::Matrix { col, n } => seq(Op::TypeMatrix, *col, *n),
            Ty::Array { elem, len } => seq(Op::TypeArray, *elem, *len),
            Ty::Struct { members } => Ok(TyTree::Struct(
                members
                    .iter()
                    .map(|t| TyTree::of(m, *t, depth + 1))
                    .collect::<Result<_, _>>()?,
            )),
            other => Err(fail(format!(
                "a default-block uniform of type {other:?} is not exported"
            ))),
        }
    }

    /// The uniform words it takes: one a scalar, two a 64-bit one (low word first).
    fn words(&self) -> u32 {
        match self {
            TyTree::Bool => 1,
            TyTree::Int { width, .. } | TyTree::Float { width } => 1 + (*width == 64) as u32,
            TyTree::Seq { elem, n, .. } => elem.words().saturating_mul(*n),
            TyTree::Struct(members) => members.iter().map(TyTree::words).sum(),
        }
    }

    fn holds_array(&self) -> bool {
        match self {
            TyTree::Seq { kind, elem, .. } => *kind == Op::TypeArray || elem.holds_array(),
            TyTree::Struct(members) => members.iter().any(TyTree::holds_array),
            _ => false,
        }
    }

    /// Declares the type in the stage being written.
    fn declare(&self, g: &mut Globals) -> u32 {
        match self {
            TyTree::Bool => g.boolean(),
            TyTree::Int { width, signed } => {
                if *width == 64 {
                    g.capability(Capability::Int64);
                }
                g.int_ty(*width, *signed)
            }
            TyTree::Float { width } => {
                if *width == 64 {
                    g.capability(Capability::Float64);
                }
                g.float(*width)
            }
            TyTree::Seq { kind, elem, n } => {
                let e = elem.declare(g);
                match kind {
                    Op::TypeArray => g.array(e, *n),
                    k => g.ty(*k, vec![Operand::IdRef(e), Operand::LiteralBit32(*n)]),
                }
            }
            TyTree::Struct(members) => {
                let ids = members
                    .iter()
                    .map(|t| Operand::IdRef(t.declare(g)))
                    .collect();
                g.fresh_ty(Op::TypeStruct, ids)
            }
        }
    }
}

/// One loose uniform of the pair.
#[derive(Clone, Debug)]
struct Entry {
    ty: TyTree,
    /// This stage's variable, once declared (the original one when the stage has it).
    var: Option<u32>,
    /// Whether `var` is a copy this export declared.
    copy: bool,
    name: String,
    location: Option<u32>,
}

/// The pair's loose uniforms by first uniform word, seen from one stage.
#[derive(Clone, Debug, Default)]
pub(crate) struct Loose {
    entries: BTreeMap<u32, Entry>,
    /// The synthesized buffer of dynamically indexed arrays (`StageLayout::default_ubo`).
    pub default_ubo: Option<u32>,
}

/// A word index into a uniform: known, or computed at run time (an id of a `uint`).
#[derive(Clone, Copy, Debug)]
enum Ix {
    Const(u32),
    Dyn(u32),
}

impl Loose {
    /// The loose uniforms of both stages; this stage's (`m`) own variables first.
    pub fn new(sides: &Sides, m: &Module, layout: &StageLayout) -> Result<Loose, Error> {
        let mut entries = BTreeMap::new();
        for (sm, sl) in [(m, layout), (sides.p, sides.lp), (sides.c, sides.lc)] {
            let local = std::ptr::eq(sm, m);
            for (var, base) in &sl.uniform_word {
                if entries.contains_key(base) {
                    continue;
                }
                let g = sm
                    .vars
                    .get(var)
                    .ok_or_else(|| fail(format!("%{var} is not a variable")))?;
                entries.insert(
                    *base,
                    Entry {
                        ty: TyTree::of(sm, g.ty, 0)?,
                        var: local.then_some(*var),
                        copy: false,
                        name: sm.name(*var).to_owned(),
                        location: sm.deco(*var).location,
                    },
                );
            }
        }
        Ok(Loose {
            entries,
            default_ubo: layout.default_ubo,
        })
    }

    /// Variables declared for this stage that the original did not have.
    pub fn copies(&self) -> impl Iterator<Item = u32> + '_ {
        self.entries
            .values()
            .filter(|e| e.copy)
            .filter_map(|e| e.var)
    }

    /// The uniform holding word `w`: its first word.
    fn holder(&self, w: u32) -> Option<u32> {
        let (base, e) = self.entries.range(..=w).next_back()?;
        (w - base < e.ty.words()).then_some(*base)
    }

    /// This stage's variable for the uniform at `base`, declaring a copy of the
    /// other stage's on first use.
    fn var(&mut self, g: &mut Globals, base: u32) -> Result<u32, Error> {
        let e = self
            .entries
            .get_mut(&base)
            .ok_or_else(|| fail(format!("no uniform at word {base}")))?;
        if let Some(v) = e.var {
            return Ok(v);
        }
        let ty = e.ty.declare(g);
        let ptr = g.ptr(StorageClass::UniformConstant, ty);
        let v = g.variable(ptr, StorageClass::UniformConstant);
        if let Some(l) = e.location {
            g.decorate(v, Decoration::Location, &[l]);
        }
        if !e.name.is_empty() {
            g.name(v, &e.name);
        }
        e.var = Some(v);
        e.copy = true;
        Ok(v)
    }
}

/// Where the loads go: the stage's globals and the instructions of the block
/// being written.
pub(crate) struct Emit<'a> {
    pub g: &'a mut Globals,
    pub insts: &'a mut Vec<Instruction>,
}

impl Emit<'_> {
    fn op(&mut self, op: Op, ty: u32, ops: Vec<Operand>) -> u32 {
        let id = self.g.id();
        self.insts
            .push(Instruction::new(op, Some(ty), Some(id), ops));
        id
    }
}

impl Loose {
    /// Uniform word `w` of a pair with loose uniforms, as a `uint`.
    pub(super) fn word(&mut self, e: &mut Emit, w: u32) -> Result<u32, Error> {
        let base = self
            .holder(w)
            .ok_or_else(|| fail(format!("uniform word {w} belongs to no uniform")))?;
        self.loose_load(e, base, Ix::Const(w - base))
    }

    /// The word at byte offset `offset` (a `uint` id) of the synthesized buffer of
    /// dynamically indexed arrays. Which array it falls in is known only at run
    /// time: every array is read at the offset clamped into it, and the one whose
    /// range holds the offset is selected (out of every range, GLSL leaves the
    /// access undefined).
    pub(super) fn dynamic(&mut self, e: &mut Emit, offset: u32) -> Result<u32, Error> {
        let u = e.g.uint(32);
        let two = e.g.u32(2);
        let w = e.op(
            Op::ShiftRightLogical,
            u,
            vec![Operand::IdRef(offset), Operand::IdRef(two)],
        );
        let arrays: Vec<(u32, u32)> = self
            .entries
            .iter()
            .filter(|(_, e)| e.ty.holds_array())
            .map(|(b, e)| (*b, e.ty.words()))
            .collect();
        let mut acc = None;
        for (base, words) in arrays {
            let (inside, safe) = clamp_into(e, w, base, words);
            let v = self.loose_load(e, base, Ix::Dyn(safe))?;
            acc = Some(select_inside(e, inside, v, acc));
        }
        acc.ok_or_else(|| fail("a dynamic uniform load in a pair without uniform arrays"))
    }

    /// Word `ix` of the uniform at `base`, loaded and made a `uint`.
    fn loose_load(&mut self, e: &mut Emit, base: u32, ix: Ix) -> Result<u32, Error> {
        let var = self.var(e.g, base)?;
        // `var` found the entry, so it is there.
        let ty = match self.entries.get(&base) {
            Some(entry) => entry.ty.clone(),
            None => return Err(fail(format!("no uniform at word {base}"))),
        };
        self.load_word(e, var, &ty, ix, vec![])
    }

    /// Word `ix` of a value of type `ty` that `chain` (access chain indices) leads to
    /// from `var`: walks the type down to the scalar holding it and loads that.
    fn load_word(
        &self,
        e: &mut Emit,
        var: u32,
        ty: &TyTree,
        ix: Ix,
        mut chain: Vec<u32>,
    ) -> Result<u32, Error> {
        match (ty, ix) {
            (TyTree::Seq { elem, n, .. }, Ix::Const(w)) => {
                let ew = elem.words().max(1);
                if w / ew >= *n {
                    return Err(fail(format!("uniform word {w} is past its uniform")));
                }
                chain.push(e.g.u32(w / ew));
                self.load_word(e, var, elem, Ix::Const(w % ew), chain)
            }
            (TyTree::Seq { elem, .. }, Ix::Dyn(w)) => {
                let ew = elem.words().max(1);
                if ew == 1 {
                    chain.push(w);
                    return self.load_word(e, var, elem, Ix::Const(0), chain);
                }
                let (u, k) = (e.g.uint(32), e.g.u32(ew));
                let at = e.op(Op::UDiv, u, vec![Operand::IdRef(w), Operand::IdRef(k)]);
                let rest = e.op(Op::UMod, u, vec![Operand::IdRef(w), Operand::IdRef(k)]);
                chain.push(at);
                self.load_word(e, var, elem, Ix::Dyn(rest), chain)
            }
            (TyTree::Struct(members), Ix::Const(mut w)) => {
                for (i, m) in members.iter().enumerate() {
                    if w < m.words() {
                        chain.push(e.g.u32(i as u32));
                        return self.load_word(e, var, m, Ix::Const(w), chain);
                    }
                    w -= m.words();
                }
                Err(fail(format!("uniform word {w} is past its uniform")))
            }
            (TyTree::Struct(members), Ix::Dyn(w)) => {
                // A struct cannot be indexed dynamically: every member is read at
                // the word clamped into it, and the one holding `w` is selected.
                let mut start = 0u32;
                let mut acc = None;
                for (i, m) in members.iter().enumerate() {
                    let (inside, safe) = clamp_into(e, w, start, m.words());
                    let mut path = chain.clone();
                    path.push(e.g.u32(i as u32));
                    let v = self.load_word(e, var, m, Ix::Dyn(safe), path)?;
                    acc = Some(select_inside(e, inside, v, acc));
                    start = start.saturating_add(m.words());
                }
                acc.ok_or_else(|| fail("a uniform struct without members"))
            }
            (leaf, ix) => {
                let part = (leaf.words() == 2).then_some(ix);
                let scalar = leaf.declare(e.g);
                let ptr = if chain.is_empty() {
                    var
                } else {
                    let pty = e.g.ptr(StorageClass::UniformConstant, scalar);
                    let mut ops = vec![Operand::IdRef(var)];
                    ops.extend(chain.into_iter().map(Operand::IdRef));
                    e.op(Op::AccessChain, pty, ops)
                };
                let v = e.op(Op::Load, scalar, vec![Operand::IdRef(ptr)]);
                Ok(self.loose_to_word(e, leaf, v, part))
            }
        }
    }

    /// A loaded uniform scalar as the IR's word: booleans 0 or 1, 16-bit values in
    /// the low half, one word of a 64-bit value.
    fn loose_to_word(&self, e: &mut Emit, leaf: &TyTree, v: u32, part: Option<Ix>) -> u32 {
        let u = e.g.uint(32);
        match (leaf, part) {
            (TyTree::Bool, _) => {
                let (one, zero) = (e.g.u32(1), e.g.u32(0));
                let ids = [v, one, zero].map(Operand::IdRef).to_vec();
                e.op(Op::Select, u, ids)
            }
            (_, Some(part)) => {
                let uv2 = e.g.vec(u, 2);
                let pair = e.op(Op::Bitcast, uv2, vec![Operand::IdRef(v)]);
                match part {
                    Ix::Const(k) => e.op(
                        Op::CompositeExtract,
                        u,
                        vec![Operand::IdRef(pair), Operand::LiteralBit32(k)],
                    ),
                    Ix::Dyn(k) => e.op(
                        Op::VectorExtractDynamic,
                        u,
                        vec![Operand::IdRef(pair), Operand::IdRef(k)],
                    ),
                }
            }
            (
                TyTree::Int {
                    width: 16,
                    signed: false,
                },
                None,
            ) => e.op(Op::UConvert, u, vec![Operand::IdRef(v)]),
            (TyTree::Int { width: 16, .. } | TyTree::Float { width: 16 }, None) => {
                let u16 = e.g.uint(16);
                let half = e.op(Op::Bitcast, u16, vec![Operand::IdRef(v)]);
                e.op(Op::UConvert, u, vec![Operand::IdRef(half)])
            }
            (TyTree::Int { signed: false, .. }, None) => v,
            _ => e.op(Op::Bitcast, u, vec![Operand::IdRef(v)]),
        }
    }
}

/// Whether the dynamic word `w` falls in the `len` words from `start` (a `bool`
/// id), and the word relative to `start`, 0 when it does not, so that reading at
/// it stays in bounds (a `uint` id).
fn clamp_into(e: &mut Emit, w: u32, start: u32, len: u32) -> (u32, u32) {
    let u = e.g.uint(32);
    let (b, n, zero) = (e.g.u32(start), e.g.u32(len), e.g.u32(0));
    let rel = e.op(Op::ISub, u, vec![Operand::IdRef(w), Operand::IdRef(b)]);
    let bool_ty = e.g.boolean();
    let inside = e.op(
        Op::ULessThan,
        bool_ty,
        vec![Operand::IdRef(rel), Operand::IdRef(n)],
    );
    let ids = [inside, rel, zero].map(Operand::IdRef).to_vec();
    (inside, e.op(Op::Select, u, ids))
}

/// `v` where `inside` holds, else the value chosen so far (`v` for the first range).
fn select_inside(e: &mut Emit, inside: u32, v: u32, acc: Option<u32>) -> u32 {
    match acc {
        None => v,
        Some(a) => {
            let u = e.g.uint(32);
            let ids = [inside, v, a].map(Operand::IdRef).to_vec();
            e.op(Op::Select, u, ids)
        }
    }
}
