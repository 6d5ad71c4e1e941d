//! Memory: variables, access chains, loads and stores. Locals, privates and output
//! shadows live in the translator's environment as scalarized values; inputs,
//! outputs, uniforms and buffers are reached through addressed trees.

use rspirv::dr::Instruction;
use rspirv::spirv::StorageClass;

use super::context::Translator;
use super::layout::{buf_tree, data_shape_of, opaque_count, word_tree};
use super::module::Ty;
use super::tree::{Addr, Leaf, Scale, Tree};
use super::val::{Handle, Idx, Ptr, Val};
use crate::ir::{AluOp, BitSize, Half, InstKind, Value};
use crate::Error;

/// Most sampler handles one load or one dynamically indexed handle may stand for
/// (the selects it becomes grow with it).
const MAX_LOADED_HANDLES: u32 = 256;

impl<'a> Translator<'a> {
    pub fn global_ptr(&self, id: u32, ty: u32, _class: StorageClass) -> Val {
        Val::Ptr(Ptr {
            root: id,
            path: vec![],
            ty,
        })
    }

    /// A function-scope `OpVariable`: its contents start as the initializer or undef.
    pub fn local_var(&mut self, inst: &Instruction) -> Result<(), Error> {
        let rid = inst
            .result_id
            .ok_or_else(|| self.err(inst, "variable without a result"))?;
        let ptr_ty = inst
            .result_type
            .ok_or_else(|| self.err(inst, "variable without a type"))?;
        let ty = match self.m.ty(ptr_ty)? {
            Ty::Pointer { pointee, .. } => *pointee,
            _ => return Err(self.err(inst, "variable type is not a pointer")),
        };
        let init = match super::module::id_at(inst, 1) {
            Some(i) => self.val(i)?,
            None => self
                .filled(ty, false)
                .map_err(|e| self.err(inst, e.to_string()))?,
        };
        self.env.insert(rid, init);
        self.bind(
            rid,
            Val::Ptr(Ptr {
                root: rid,
                path: vec![],
                ty,
            }),
        );
        Ok(())
    }

    pub fn ptr_operand(&mut self, inst: &Instruction, i: usize) -> Result<Ptr, Error> {
        match self.val(self.id(inst, i)?)? {
            Val::Ptr(p) => Ok(p),
            _ => Err(self.err(inst, format!("operand {i} is not a pointer"))),
        }
    }

    pub fn access_chain(&mut self, inst: &Instruction) -> Result<Val, Error> {
        let mut p = self.ptr_operand(inst, 0)?;
        for i in 1..inst.operands.len() {
            let id = self.id(inst, i)?;
            let idx = match self.m.consts.get(&id) {
                Some((_, super::module::ConstDef::Scalar(k))) => Idx::Const(*k),
                // An index past 2^32 is out of bounds whatever its high word.
                Some((_, super::module::ConstDef::Wide(k))) => {
                    Idx::Const(u32::try_from(*k).unwrap_or(u32::MAX))
                }
                _ => Idx::Dyn(self.index_operand(id)?),
            };
            p.path.push(idx);
        }
        p.ty = match inst.result_type.map(|t| self.m.ty(t)) {
            Some(Ok(Ty::Pointer { pointee, .. })) => *pointee,
            _ => return Err(self.err(inst, "result type is not a pointer")),
        };
        Ok(Val::Ptr(p))
    }

    pub fn load_op(&mut self, inst: &Instruction) -> Result<Val, Error> {
        let p = self.ptr_operand(inst, 0)?;
        self.load(&p, inst)
    }

    pub fn store_op(&mut self, inst: &Instruction) -> Result<(), Error> {
        let p = self.ptr_operand(inst, 0)?;
        let v = self.val(self.id(inst, 1)?)?;
        self.store(&p, v, Some(inst))
    }

    fn class_of(&self, root: u32) -> Option<StorageClass> {
        self.m.vars.get(&root).map(|g| g.class)
    }

    pub fn load(&mut self, p: &Ptr, inst: &Instruction) -> Result<Val, Error> {
        if let Some(v) = self.env.get(&p.root).cloned() {
            return self.extract(v, &p.path).map_err(|e| self.err(inst, e));
        }
        let class = self
            .class_of(p.root)
            .ok_or_else(|| self.err(inst, "loads through an unknown pointer"))?;
        match class {
            StorageClass::Input | StorageClass::Output => self
                .load_io(p, class, None)
                .map_err(|e| relabel(self, inst, e)),
            StorageClass::UniformConstant if super::layout::holds_opaque(self.m, p.ty) => {
                self.load_handles(p, inst)
            }
            _ => {
                if let Some((elem, dims, first)) = self.block_array(p.root) {
                    return self.load_block_array(p.root, elem, &dims, first, &p.path, inst);
                }
                let tree = self
                    .buffer_tree(p.root)
                    .map_err(|e| relabel(self, inst, e))?;
                self.load_tree(tree, &p.path, inst)
            }
        }
    }

    /// Loads what `path` selects in a buffer or uniform `tree`: the leaves the walk
    /// reaches, then the rest of the path applied to the loaded value.
    fn load_tree(&mut self, tree: Tree, path: &[Idx], inst: &Instruction) -> Result<Val, Error> {
        let walk = self
            .walk(tree, path, false)
            .map_err(|e| self.err(inst, e))?;
        let mut out = vec![];
        for leaf in walk.tree.leaves() {
            out.push(self.load_buffer_leaf(leaf)?);
        }
        let v = tree_val(&walk.tree, &mut out.into_iter());
        self.extract(v, &walk.rest).map_err(|e| self.err(inst, e))
    }

    /// The block type, dimensions and first buffer of `var` when it is an array
    /// of uniform or storage blocks.
    pub(super) fn block_array(&self, var: u32) -> Option<(u32, Vec<u32>, u32)> {
        let g = self.m.vars.get(&var)?;
        let first = self
            .layout
            .ubo_block
            .get(&var)
            .or_else(|| self.layout.ssbo.get(&var))?;
        let (elem, dims) = super::layout::block_array(self.m, g.ty)?;
        Some((elem, dims, *first))
    }

    /// Loads through an array of blocks, whose elements are consecutive buffers
    /// from `first` (row-major). An element index cannot be a byte offset, so
    /// with a dynamic one the rest of the path is loaded from every element
    /// (dynamic indices inside an element stay indexed loads) and the index
    /// selects among the results, element 0 when it matches none: GLSL and Vulkan
    /// leave an index past the array undefined.
    #[allow(clippy::too_many_arguments)]
    fn load_block_array(
        &mut self,
        var: u32,
        elem: u32,
        dims: &[u32],
        first: u32,
        path: &[Idx],
        inst: &Instruction,
    ) -> Result<Val, Error> {
        let Some((&len, inner)) = dims.split_first() else {
            return self.load_block_element(var, elem, first, path, inst);
        };
        // Bounded by `MAX_BLOCK_ARRAY` when the buffers were linked.
        let step = super::layout::block_count(inner).unwrap_or(u32::MAX);
        let at = |k: u32| first.saturating_add(k.saturating_mul(step));
        let rest = path.get(1..).unwrap_or(&[]);
        match path.first() {
            None => {
                let items = (0..len)
                    .map(|k| self.load_block_array(var, elem, inner, at(k), &[], inst))
                    .collect::<Result<_, Error>>()?;
                Ok(Val::Composite(items))
            }
            Some(Idx::Const(k)) if *k < len => {
                self.load_block_array(var, elem, inner, at(*k), rest, inst)
            }
            Some(Idx::Const(k)) => Err(self.err(
                inst,
                format!("constant index {k} is out of bounds of {len} blocks"),
            )),
            Some(Idx::Dyn(i)) => {
                let i = *i;
                let mut acc = self.load_block_array(var, elem, inner, first, rest, inst)?;
                for k in 1..len {
                    let item = self.load_block_array(var, elem, inner, at(k), rest, inst)?;
                    let c = self.index_is(i, k).map_err(|e| self.err(inst, e))?;
                    acc = self.select(c, &item, &acc).map_err(|e| self.err(inst, e))?;
                }
                Ok(acc)
            }
        }
    }

    /// The tree of buffer `block` (a storage buffer when `var` is one), of block
    /// type `elem`: one element of an array of blocks.
    fn block_element_tree(&self, var: u32, elem: u32, block: u32) -> Result<Tree, Error> {
        if self.layout.ssbo.contains_key(&var) {
            let mk = |o| Addr::Ssbo {
                buffer: block,
                offset: o,
            };
            return buf_tree(self.m, elem, 0, None, &mk, 0);
        }
        buf_tree(
            self.m,
            elem,
            0,
            None,
            &|o| Addr::Ubo { block, offset: o },
            0,
        )
    }

    /// Loads `path` from one element (buffer `block`, of block type `elem`) of an
    /// array of blocks.
    fn load_block_element(
        &mut self,
        var: u32,
        elem: u32,
        block: u32,
        path: &[Idx],
        inst: &Instruction,
    ) -> Result<Val, Error> {
        let tree = self
            .block_element_tree(var, elem, block)
            .map_err(|e| relabel(self, inst, e))?;
        self.load_tree(tree, path, inst)
    }

    /// The tree a store or an atomic through `p` walks, and the path left to
    /// walk: the variable's, or in an array of storage blocks the element its
    /// constant indices name (a dynamic one would need a guarded access to every
    /// element; not done).
    fn buffer_root<'p>(&self, p: &'p Ptr) -> Result<(Tree, &'p [Idx]), Error> {
        let Some((elem, dims, first)) = self.block_array(p.root) else {
            return Ok((self.buffer_tree(p.root)?, &p.path));
        };
        let (idx, rest) = p.path.split_at_checked(dims.len()).ok_or_else(|| {
            self.m
                .err_plain("a whole array of storage blocks is accessed at once")
        })?;
        let mut block = first;
        for (n, (i, len)) in idx.iter().zip(&dims).enumerate() {
            let step = super::layout::block_count(&dims[n + 1..]).unwrap_or(u32::MAX);
            match i {
                Idx::Const(k) if k < len => block = block.saturating_add(k.saturating_mul(step)),
                Idx::Const(k) => {
                    return Err(self.m.err_plain(format!(
                        "constant index {k} is out of bounds of {len} blocks"
                    )))
                }
                Idx::Dyn(_) => {
                    return Err(self.m.err_plain(
                        "a dynamic index into an array of storage blocks in a store or atomic \
                         is not supported",
                    ))
                }
            }
        }
        let tree = self.block_element_tree(p.root, elem, block)?;
        Ok((tree, rest))
    }

    /// Loads (part of) an I/O variable; `mode` overrides FS interpolation.
    pub fn load_io(
        &mut self,
        p: &Ptr,
        class: StorageClass,
        mode: Option<(crate::ir::InterpMode, Vec<Value>)>,
    ) -> Result<Val, Error> {
        let (tree, pv) = self.io_tree(p.root)?;
        let path = p.path.as_slice();
        if !pv {
            return self.load_io_at(&tree, path, None, class, &mode);
        }
        let Some((v, rest)) = path.split_first() else {
            // The whole per-vertex array: one load per vertex, all walking the one
            // tree built above (rebuilding it per vertex made such loads slow).
            let n = match self.m.vars.get(&p.root).map(|g| self.m.ty(g.ty)) {
                Some(Ok(Ty::Array { len, .. })) => *len,
                _ => 0,
            };
            let mut items = vec![];
            for k in 0..n {
                self.max_vertex = self.max_vertex.max(k.saturating_add(1));
                let vertex = Some(self.e.u32(k));
                items.push(self.load_io_at(&tree, &[], vertex, class, &mode)?);
            }
            return Ok(Val::Composite(items));
        };
        if let Idx::Const(k) = v {
            self.max_vertex = self.max_vertex.max(k.saturating_add(1));
        }
        let vertex = Some(self.index_value(v));
        self.load_io_at(&tree, rest, vertex, class, &mode)
    }

    /// Loads the part of an I/O tree that `path` names, at `vertex` if per-vertex.
    fn load_io_at(
        &mut self,
        tree: &Tree,
        path: &[Idx],
        vertex: Option<Value>,
        class: StorageClass,
        mode: &Option<(crate::ir::InterpMode, Vec<Value>)>,
    ) -> Result<Val, Error> {
        let walk = self
            .walk(tree.clone(), path, true)
            .map_err(|e| self.m.err_plain(e))?;
        let mut out = vec![];
        for leaf in walk.tree.leaves() {
            out.push(self.load_io_leaf(leaf, class, vertex, mode.clone())?);
        }
        let v = tree_val(&walk.tree, &mut out.into_iter());
        self.extract(v, &walk.rest).map_err(|e| self.m.err_plain(e))
    }

    fn index_value(&mut self, i: &Idx) -> Value {
        match i {
            Idx::Const(k) => self.e.u32(*k),
            Idx::Dyn(v) => *v,
        }
    }

    pub fn store(&mut self, p: &Ptr, v: Val, inst: Option<&Instruction>) -> Result<(), Error> {
        let label = |t: &Self, e: String| match inst {
            Some(i) => t.err(i, e),
            None => t.m.err_plain(e),
        };
        let class = self.class_of(p.root);
        if let Some(old) = self.env.get(&p.root).cloned() {
            let new = self
                .insert(old, &p.path, v.clone())
                .map_err(|e| label(self, e))?;
            self.env.insert(p.root, new);
            if class != Some(StorageClass::Output) {
                return Ok(());
            }
        }
        match class {
            Some(StorageClass::Output) => self.store_io(p, v).map_err(|e| match inst {
                Some(i) => relabel(self, i, e),
                None => e,
            }),
            Some(StorageClass::StorageBuffer) | Some(StorageClass::Uniform) => {
                let (tree, path) = self.buffer_root(p).map_err(|e| match inst {
                    Some(i) => relabel(self, i, e),
                    None => e,
                })?;
                let walk = self.walk(tree, path, false).map_err(|e| label(self, e))?;
                if !walk.rest.is_empty() {
                    return Err(label(
                        self,
                        "dynamic index into a vector in a buffer store".into(),
                    ));
                }
                let leaves: Vec<Leaf> = walk.tree.leaves().into_iter().cloned().collect();
                let vals = v
                    .leaves()
                    .ok_or_else(|| label(self, "stores a pointer".into()))?;
                for (leaf, x) in leaves.iter().zip(vals) {
                    let Addr::Ssbo { buffer, offset } = leaf.addr else {
                        return Err(label(self, "store into a uniform buffer".into()));
                    };
                    let addr = self.word_addr(offset, leaf.dynamic.map(|d| d.0))?;
                    self.e.effect(InstKind::SsboStore {
                        buffer,
                        addr,
                        value: x,
                    });
                }
                Ok(())
            }
            _ => Err(label(self, "store into read-only memory".into())),
        }
    }

    fn store_io(&mut self, p: &Ptr, v: Val) -> Result<(), Error> {
        let (tree, pv) = self.io_tree(p.root)?;
        let mut path = p.path.as_slice();
        let vertex = if pv {
            match path.split_first() {
                Some((x, rest)) => {
                    path = rest;
                    Some(self.index_value(x))
                }
                None => {
                    let items = v.items().map(<[Val]>::to_vec).unwrap_or_default();
                    for (k, item) in items.into_iter().enumerate() {
                        let q = Ptr {
                            root: p.root,
                            path: vec![Idx::Const(k as u32)],
                            ty: p.ty,
                        };
                        self.store_io(&q, item)?;
                    }
                    return Ok(());
                }
            }
        } else {
            None
        };
        let walk = self
            .walk(tree, path, true)
            .map_err(|e| self.m.err_plain(e))?;
        self.store_tree(&walk.tree, &walk.rest, vertex, &v)
    }

    /// Stores `v` into the part of `tree` that `rest` selects. A dynamic index the
    /// slot addressing cannot express (a vector component, a built-in array element)
    /// becomes one guarded store per candidate element.
    fn store_tree(
        &mut self,
        tree: &Tree,
        rest: &[Idx],
        vertex: Option<Value>,
        v: &Val,
    ) -> Result<(), Error> {
        let Some((first, more)) = rest.split_first() else {
            let vals = v
                .leaves()
                .ok_or_else(|| self.m.err_plain("stores a pointer"))?;
            let leaves: Vec<Leaf> = tree.leaves().into_iter().cloned().collect();
            for (leaf, x) in leaves.iter().zip(vals) {
                self.store_io_leaf(leaf, vertex, x)?;
            }
            return Ok(());
        };
        let Tree::Node { kids, .. } = tree else {
            return Err(self.m.err_plain("access chain indexes into a scalar"));
        };
        match first {
            Idx::Const(k) => {
                let kid = kids
                    .get(*k as usize)
                    .ok_or_else(|| self.m.err_plain(format!("index {k} is out of bounds")))?;
                self.store_tree(kid, more, vertex, v)
            }
            Idx::Dyn(i) => {
                for (k, kid) in kids.iter().enumerate() {
                    let cond = self
                        .index_is(*i, k as u32)
                        .map_err(|e| self.m.err_plain(e))?;
                    self.e.open();
                    let r = self.store_tree(kid, more, vertex, v);
                    let then_body = self.e.close();
                    r?;
                    let stmt = crate::ir::Stmt::If {
                        cond,
                        then_body,
                        else_body: vec![],
                        phis: vec![],
                        loc: None,
                    };
                    self.e.push_stmt(stmt);
                }
                Ok(())
            }
        }
    }

    /// Loads a value that is or holds sampler handles from a uniform: a handle, or a
    /// composite whose plain members are loaded as data and whose opaque ones as
    /// handles (a GLSL struct with a sampler member, an array of samplers).
    fn load_handles(&mut self, p: &Ptr, inst: &Instruction) -> Result<Val, Error> {
        let kids: Vec<u32> = match self.m.ty(p.ty)? {
            Ty::Opaque => return self.load_handle(p, inst),
            Ty::Array { elem, len } if *len <= MAX_LOADED_HANDLES => vec![*elem; *len as usize],
            Ty::Struct { members } => members.clone(),
            _ => return Err(self.err(inst, "loads too many samplers at once")),
        };
        let mut items = vec![];
        for (k, ty) in kids.into_iter().enumerate() {
            let mut path = p.path.clone();
            path.push(Idx::Const(k as u32));
            let q = Ptr {
                root: p.root,
                path,
                ty,
            };
            items.push(self.load(&q, inst)?);
        }
        Ok(Val::Composite(items))
    }

    /// The handle an access chain into a uniform holding samplers selects. Handles
    /// are numbered from the variable's first sampler in type order
    /// ([`opaque_count`]). A dynamic index gives one candidate per element, each with
    /// the condition that the index selects it; an index past the array selects none,
    /// which GLSL leaves undefined.
    fn load_handle(&mut self, p: &Ptr, inst: &Instruction) -> Result<Val, Error> {
        let base = *self
            .layout
            .sampler
            .get(&p.root)
            .ok_or_else(|| self.err(inst, "sampler without a binding"))?;
        let mut ty = self.m.vars.get(&p.root).map(|g| g.ty).unwrap_or(0);
        // (condition so far, offset) of each candidate.
        let mut alts: Vec<(Option<Value>, u32)> = vec![(None, base)];
        for i in &p.path {
            ty = match (self.m.ty(ty)?.clone(), i) {
                (Ty::Array { elem, len }, Idx::Const(k)) if *k < len => {
                    let skip = k.saturating_mul(opaque_count(self.m, elem, 0));
                    alts.iter_mut().for_each(|a| a.1 = a.1.saturating_add(skip));
                    elem
                }
                (Ty::Array { elem, len }, Idx::Dyn(v)) => {
                    let stride = opaque_count(self.m, elem, 0);
                    alts = self.handle_candidates(alts, *v, len, stride, inst)?;
                    elem
                }
                (Ty::Struct { members }, Idx::Const(k)) if (*k as usize) < members.len() => {
                    let k = *k as usize;
                    let skip = members[..k]
                        .iter()
                        .fold(0u32, |n, mt| n.saturating_add(opaque_count(self.m, *mt, 0)));
                    alts.iter_mut().for_each(|a| a.1 = a.1.saturating_add(skip));
                    members[k]
                }
                (_, Idx::Const(k)) => {
                    return Err(self.err(inst, format!("constant index {k} is out of bounds")))
                }
                _ => return Err(self.err(inst, "dynamic index into a struct of samplers")),
            };
        }
        Ok(Val::Image(Handle { alts }))
    }

    /// Each candidate of `alts` times each element `k` of an array of `len` whose
    /// elements hold `stride` handles, selected by `index == k`.
    fn handle_candidates(
        &mut self,
        alts: Vec<(Option<Value>, u32)>,
        index: Value,
        len: u32,
        stride: u32,
        inst: &Instruction,
    ) -> Result<Vec<(Option<Value>, u32)>, Error> {
        if (alts.len() as u64).saturating_mul(u64::from(len)) > u64::from(MAX_LOADED_HANDLES) {
            return Err(self.err(
                inst,
                format!("dynamic index selects among more than {MAX_LOADED_HANDLES} samplers"),
            ));
        }
        let mut out = vec![];
        for (c, o) in alts {
            for k in 0..len {
                let is_k = self.index_is(index, k).map_err(|e| self.err(inst, e))?;
                let cond = match c {
                    Some(c) => self
                        .e
                        .alu(AluOp::IAnd, false, &[c, is_k])
                        .map_err(|e| self.err(inst, e))?,
                    None => is_k,
                };
                out.push((Some(cond), o.saturating_add(k.saturating_mul(stride))));
            }
        }
        Ok(out)
    }

    fn buffer_tree(&self, var: u32) -> Result<Tree, Error> {
        let g = self
            .m
            .vars
            .get(&var)
            .ok_or_else(|| self.m.err_plain(format!("%{var} is not a variable")))?;
        if let Some(w) = self.layout.uniform_word.get(&var) {
            let shape = data_shape_of(self.m, g.ty)?;
            let mut next = *w;
            if let Some(block) = self.layout.default_ubo {
                if super::layout::holds_array(self.m, g.ty, 0) {
                    return Ok(super::layout::default_block_tree(&shape, &mut next, block));
                }
            }
            return Ok(word_tree(&shape, &mut next));
        }
        if let Some(b) = self.layout.ubo_block.get(&var) {
            return buf_tree(
                self.m,
                g.ty,
                0,
                None,
                &|o| Addr::Ubo {
                    block: *b,
                    offset: o,
                },
                0,
            );
        }
        if let (Some(b), StorageClass::AtomicCounter) = (self.layout.ssbo.get(&var), g.class) {
            let off = self.m.deco(var).offset.unwrap_or(0);
            return super::layout::counter_tree(self.m, g.ty, off, &|o| Addr::Ssbo {
                buffer: *b,
                offset: o,
            });
        }
        if let Some(b) = self.layout.ssbo.get(&var) {
            return buf_tree(
                self.m,
                g.ty,
                0,
                None,
                &|o| Addr::Ssbo {
                    buffer: *b,
                    offset: o,
                },
                0,
            );
        }
        Err(self.m.err_plain(format!(
            "variable %{var} `{}` in storage class {:?} is not supported",
            self.m.name(var),
            g.class
        )))
    }

    fn load_buffer_leaf(&mut self, leaf: &Leaf) -> Result<Value, Error> {
        let dyn_off = leaf.dynamic.map(|d| d.0);
        let wide = leaf.bits != BitSize::B16;
        // A boolean is stored as a 32-bit word (non-zero is true), compared below.
        let word_bits = if leaf.bits == BitSize::B1 {
            BitSize::B32
        } else {
            leaf.bits
        };
        let raw = match leaf.addr {
            Addr::Word(w) => {
                let half = if wide { Half::Full } else { Half::Lo };
                self.e
                    .inst(InstKind::LoadUniform { index: w, half }, word_bits)
            }
            Addr::Ubo { block, offset } => {
                // A 16-bit member is the half of its word the byte offset names; with
                // a dynamic part of the offset that half is not known here.
                let half =
                    match (wide, offset % 4, dyn_off) {
                        (true, _, _) => Half::Full,
                        (false, _, Some(_)) => return Err(self.m.err_plain(
                            "a 16-bit uniform buffer member indexed dynamically is not supported",
                        )),
                        (false, 0, None) => Half::Lo,
                        (false, _, None) => Half::Hi,
                    };
                let off = self.byte_offset(if wide { offset } else { offset & !3 }, dyn_off)?;
                self.e.inst(
                    InstKind::LoadUbo {
                        block,
                        offset: off,
                        half,
                    },
                    word_bits,
                )
            }
            Addr::Ssbo { .. } if !wide => {
                return Err(self
                    .m
                    .err_plain("16-bit storage buffer members are not supported"))
            }
            Addr::Ssbo { buffer, offset } => {
                let addr = self.word_addr(offset, dyn_off)?;
                self.e
                    .inst(InstKind::SsboLoad { buffer, addr }, BitSize::B32)
            }
            _ => return Err(self.m.err_plain("internal: not a buffer leaf")),
        };
        if leaf.bits == BitSize::B1 {
            let zero = self.e.u32(0);
            return self.alu(AluOp::INe, &[raw, zero]);
        }
        Ok(raw)
    }

    /// The storage buffer and word address a pointer to one scalar names (atomics):
    /// its word, or for a 64-bit scalar (two consecutive words) its low word.
    pub(crate) fn ssbo_word(&mut self, p: &Ptr, inst: &Instruction) -> Result<(u32, Value), Error> {
        if self.class_of(p.root) != Some(StorageClass::StorageBuffer)
            && !self.layout.ssbo.contains_key(&p.root)
        {
            return Err(self.err(inst, "atomic on memory other than a storage buffer"));
        }
        let (tree, path) = self.buffer_root(p).map_err(|e| relabel(self, inst, e))?;
        let walk = self
            .walk(tree, path, false)
            .map_err(|e| self.err(inst, e))?;
        let leaves = walk.tree.leaves();
        let leaf = match (leaves.as_slice(), walk.rest.is_empty()) {
            ([leaf], true) => leaf,
            ([lo, hi], true) if hi.addr == next_word(&lo.addr) && hi.dynamic == lo.dynamic => lo,
            _ => return Err(self.err(inst, "atomic on something other than one scalar")),
        };
        let Addr::Ssbo { buffer, offset } = leaf.addr else {
            return Err(self.err(inst, "atomic on memory other than a storage buffer"));
        };
        let dynamic = leaf.dynamic.map(|d| d.0);
        Ok((buffer, self.word_addr(offset, dynamic)?))
    }

    fn byte_offset(&mut self, offset: u32, dyn_off: Option<Value>) -> Result<Value, Error> {
        let k = self.e.u32(offset);
        match dyn_off {
            None => Ok(k),
            Some(d) if offset == 0 => Ok(d),
            Some(d) => self.alu(AluOp::IAdd, &[d, k]),
        }
    }

    fn word_addr(&mut self, offset: u32, dyn_off: Option<Value>) -> Result<Value, Error> {
        match dyn_off {
            None => Ok(self.e.u32(offset / 4)),
            Some(_) => {
                let b = self.byte_offset(offset, dyn_off)?;
                let two = self.e.u32(2);
                self.alu(AluOp::UShr, &[b, two])
            }
        }
    }

    fn walk(&mut self, tree: Tree, path: &[Idx], io: bool) -> Result<super::tree::Walk, String> {
        let mut s = Scaler { t: self };
        tree.walk(path, io, &mut s)
    }

    /// Reads `path` out of a scalarized value; dynamic indices select with `bcsel`
    /// (element 0 when the index matches none), a constant index past the array
    /// reads an undefined value.
    pub fn extract(&mut self, v: Val, path: &[Idx]) -> Result<Val, String> {
        let Some((first, rest)) = path.split_first() else {
            return Ok(v);
        };
        let items = v
            .items()
            .ok_or("access chain indexes into a scalar")?
            .to_vec();
        match first {
            Idx::Const(k) => match items.get(*k as usize) {
                Some(item) => self.extract(item.clone(), rest),
                None => {
                    let like = items
                        .first()
                        .ok_or_else(|| format!("constant index {k} into an empty array"))?;
                    let item = self.undef_like(like)?;
                    self.extract(item, rest)
                }
            },
            Idx::Dyn(i) => {
                let mut acc: Option<Val> = None;
                for (k, item) in items.into_iter().enumerate() {
                    let item = self.extract(item, rest)?;
                    acc = Some(match acc {
                        None => item,
                        Some(prev) => {
                            let c = self.index_is(*i, k as u32)?;
                            self.select(c, &item, &prev)?
                        }
                    });
                }
                acc.ok_or_else(|| "dynamic index into an empty array".into())
            }
        }
    }

    /// An undefined value of `like`'s shape: what a read past the end of an array
    /// gives (GLSL leaves it undefined; spirv-opt folds such an index to a constant).
    fn undef_like(&mut self, like: &Val) -> Result<Val, String> {
        let leaves = like.leaves().ok_or("an array of pointers")?;
        let undefs: Vec<Value> = leaves
            .into_iter()
            .map(|l| {
                let bits = self.e.bits(l);
                self.e.undef(bits)
            })
            .collect();
        like.rebuild(&mut undefs.into_iter())
            .ok_or_else(|| "undefined element shape".into())
    }

    /// Writes `x` at `path` into a scalarized value.
    pub fn insert(&mut self, v: Val, path: &[Idx], x: Val) -> Result<Val, String> {
        let Some((first, rest)) = path.split_first() else {
            return Ok(x);
        };
        let mut items = v
            .items()
            .ok_or("access chain indexes into a scalar")?
            .to_vec();
        match first {
            // A store past the array (GLSL leaves it undefined) changes nothing.
            Idx::Const(k) => {
                if let Some(slot) = items.get_mut(*k as usize) {
                    let old = std::mem::replace(slot, Val::Composite(vec![]));
                    *slot = self.insert(old, rest, x)?;
                }
            }
            Idx::Dyn(i) => {
                for (k, item) in items.iter_mut().enumerate() {
                    let new = self.insert(item.clone(), rest, x.clone())?;
                    let c = self.index_is(*i, k as u32)?;
                    *item = self.select(c, &new, item)?;
                }
            }
        }
        Ok(Val::Composite(items))
    }

    fn index_is(&mut self, i: Value, k: u32) -> Result<Value, String> {
        let bits = self.e.bits(i);
        let kv = self.e.konst(bits, k);
        self.e.alu(AluOp::IEq, false, &[i, kv])
    }

    /// Leafwise `c ? a : b`.
    pub fn select(&mut self, c: Value, a: &Val, b: &Val) -> Result<Val, String> {
        let (al, bl) = (
            a.leaves().ok_or("select of a pointer")?,
            b.leaves().ok_or("select of a pointer")?,
        );
        let mut out = vec![];
        for (x, y) in al.iter().zip(&bl) {
            out.push(if x == y {
                *x
            } else {
                self.e.alu(AluOp::BCsel, false, &[c, *x, *y])?
            });
        }
        a.rebuild(&mut out.into_iter())
            .ok_or_else(|| "select shape".into())
    }
}

struct Scaler<'t, 'a> {
    t: &'t mut Translator<'a>,
}

impl Scale for Scaler<'_, '_> {
    fn scale(&mut self, idx: Value, stride: u32, prev: Option<Value>) -> Result<Value, String> {
        let e = &mut self.t.e;
        let scaled = if stride == 1 {
            idx
        } else {
            let k = e.u32(stride);
            e.alu(AluOp::IMul, false, &[idx, k])?
        };
        match prev {
            Some(p) => e.alu(AluOp::IAdd, false, &[p, scaled]),
            None => Ok(scaled),
        }
    }
}

fn relabel(t: &Translator, inst: &Instruction, e: Error) -> Error {
    match e {
        Error::Import(d)
            if !d.message.contains(": ")
                || d.message.starts_with('%')
                || !d.message.starts_with("Op") =>
        {
            t.err(inst, d.message)
        }
        other => other,
    }
}

/// The value of a tree's leaves, in the tree's shape.
fn tree_val(t: &Tree, vals: &mut impl Iterator<Item = Value>) -> Val {
    match t {
        Tree::Leaf(_) => Val::Scalar(vals.next().unwrap_or(Value(0))),
        Tree::Node { kids, .. } => Val::Composite(kids.iter().map(|k| tree_val(k, vals)).collect()),
    }
}

/// The storage buffer word after `a` (the high word of a 64-bit scalar at `a`).
fn next_word(a: &Addr) -> Addr {
    match a {
        Addr::Ssbo { buffer, offset } => Addr::Ssbo {
            buffer: *buffer,
            offset: offset.wrapping_add(4),
        },
        other => other.clone(),
    }
}
