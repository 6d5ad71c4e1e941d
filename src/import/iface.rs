//! Shader I/O: the addressed tree of an `Input`/`Output` variable (locations,
//! components, interpolation, patch, xfb, built-ins) and the IR loads and stores
//! of its leaves.

use rspirv::spirv::{BuiltIn, StorageClass};

use super::context::Translator;
use super::layout::locations;
use super::layout::per_vertex;
use super::module::{Decos, Ty};
use super::tree::{Addr, Leaf, Tree};
use crate::ir::{
    BitSize, Half, Indirect, InstKind, Interp, InterpLoc, InterpMode, IoSlot, Slot, Stage,
    SystemValue, Value,
};
use crate::Error;

/// Location-related context of one variable while its tree is built.
struct LocCtx {
    family: Slot,
    base: u32,
    fs_input: bool,
    patch: bool,
    xfb: Option<u8>,
}

impl<'a> Translator<'a> {
    /// The tree of an I/O variable with its vertex dimension stripped, and whether
    /// it has one.
    pub fn io_tree(&mut self, var: u32) -> Result<(Tree, bool), Error> {
        let g = self
            .m
            .vars
            .get(&var)
            .cloned()
            .ok_or_else(|| self.m.err_plain(format!("%{var} is not a variable")))?;
        let d = self.m.deco(var);
        let mut ty = g.ty;
        let struct_patch = self.struct_members_patch(ty);
        let tess_level = matches!(
            d.builtin,
            Some(BuiltIn::TessLevelOuter | BuiltIn::TessLevelInner)
        );
        let arrayed = matches!(self.m.ty(ty)?, Ty::Array { .. });
        let pv =
            arrayed && !tess_level && per_vertex(self.m.stage, g.class, d.patch || struct_patch);
        if pv {
            ty = match self.m.ty(ty)? {
                Ty::Array { elem, .. } => *elem,
                _ => {
                    return Err(self
                        .m
                        .err_plain(format!("per-vertex variable %{var} is not an array")))
                }
            };
        }
        let xfb_buffer = self.captured_here(d.xfb_buffer);
        if let Some(b) = d.builtin {
            let mut t = self.builtin_tree(b, ty, g.class, &d)?;
            self.capture_builtin(&mut t, xfb_buffer, d.offset)?;
            return Ok((t, pv));
        }
        if let Ty::Struct { members } = self.m.ty(ty)?.clone() {
            let any_builtin =
                (0..members.len() as u32).any(|i| self.m.member_deco(ty, i).builtin.is_some());
            if any_builtin {
                let mut kids = vec![];
                for (i, mt) in members.iter().enumerate() {
                    let md = self.m.member_deco(ty, i as u32);
                    match md.builtin {
                        Some(b) => {
                            let mut t = self.builtin_tree(b, *mt, g.class, &md)?;
                            self.capture_builtin(&mut t, xfb_buffer, md.offset)?;
                            kids.push(t);
                        }
                        None => {
                            return Err(self
                                .m
                                .err_plain(format!("block %{ty} mixes built-in and user members")))
                        }
                    }
                }
                return Ok((
                    Tree::Node {
                        kids,
                        stride: None,
                        runtime: false,
                    },
                    pv,
                ));
            }
        }
        let fixed = super::compat::fixed_function_slot(self.m.name(var));
        let named_comp = fixed.and_then(|(_, comp)| comp).map(u32::from);
        let fixed = fixed.map(|(slot, _)| slot);
        let family = match (self.m.stage, g.class, fixed) {
            (Stage::Vertex, StorageClass::Input, _) => Slot::Attr(0),
            (Stage::Fragment, StorageClass::Output, _) => Slot::Data(0),
            (_, _, Some(slot)) => slot,
            _ if d.patch || struct_patch => Slot::Patch(0),
            _ => Slot::Var(0),
        };
        let base = match family {
            Slot::Attr(_) | Slot::Data(_) => d.location.unwrap_or(0),
            _ if fixed.is_some() => 0,
            _ => *self.layout.io_base.get(&var).ok_or_else(|| {
                self.m.err_plain(format!(
                    "interface variable %{var} `{}` has no location",
                    self.m.name(var)
                ))
            })?,
        };
        if family == Slot::Data(0) && d.index.unwrap_or(0) != 0 {
            return Err(self.m.err_plain(format!(
                "%{var}: dual-source blending (Index 1) is not supported"
            )));
        }
        let ctx = LocCtx {
            family,
            base,
            fs_input: self.m.stage == Stage::Fragment && g.class == StorageClass::Input,
            patch: d.patch || struct_patch,
            xfb: xfb_buffer.map(|b| b as u8),
        };
        let first = self.layout.first_loc.get(&var).copied().unwrap_or(0);
        let mut xfb_off = d.offset;
        let comp = named_comp.unwrap_or(d.component.unwrap_or(0));
        let mut tree = self.loc_tree(ty, 0, comp, &d, &ctx, &mut xfb_off, Some((ty, first)), 0)?;
        if !family.indexable() {
            // VS attributes and FS outputs cannot be indexed indirectly in the IR:
            // a dynamic index into them reads every element and selects, or stores
            // each under its own condition (`mem.rs`).
            tree.drop_strides();
        }
        Ok((tree, pv))
    }

    /// The transform feedback buffer of a variable as the IR sees it: none in
    /// the consumer. The IR captures producer stores only; a consumer's outputs
    /// (to a stage outside the pair) are all observed, and the export keeps
    /// their variables with the decorations that capture them.
    fn captured_here(&self, buffer: Option<u32>) -> Option<u32> {
        let consumer = self.params.peer.can_feed(self.m.stage);
        buffer.filter(|_| !consumer)
    }

    /// Marks the outputs of a built-in captured by transform feedback (the
    /// variable's `XfbBuffer`, the variable's or block member's `Offset`): its
    /// scalars in order, 4 bytes each from the offset.
    fn capture_builtin(
        &self,
        t: &mut Tree,
        buffer: Option<u32>,
        offset: Option<u32>,
    ) -> Result<(), Error> {
        let (Some(b), Some(mut off)) = (buffer, offset) else {
            return Ok(());
        };
        let b = u8::try_from(b).map_err(|_| self.m.err_plain("xfb buffer out of range"))?;
        t.map_leaves(&mut |leaf| {
            if let Addr::Io { xfb, .. } = &mut leaf.addr {
                let o = u16::try_from(off).map_err(|_| "xfb offset out of range")?;
                *xfb = Some((b, o));
                off += 4;
            }
            Ok(())
        })
        .map_err(|e| self.m.err_plain(e))
    }

    fn struct_members_patch(&self, ty: u32) -> bool {
        let inner = match self.m.types.get(&ty) {
            Some(Ty::Array { elem, .. }) => *elem,
            _ => ty,
        };
        match self.m.types.get(&inner) {
            Some(Ty::Struct { members }) => {
                (0..members.len() as u32).any(|i| self.m.member_deco(inner, i).patch)
            }
            _ => false,
        }
    }

    /// Builds the tree of `ty` placed at relative location `loc`, component `comp`.
    /// `block` is the top-level block type and its first location (member
    /// `Location` decorations are absolute).
    #[allow(clippy::too_many_arguments)]
    fn loc_tree(
        &self,
        ty: u32,
        loc: u32,
        comp: u32,
        d: &Decos,
        ctx: &LocCtx,
        xfb: &mut Option<u32>,
        block: Option<(u32, u32)>,
        depth: u32,
    ) -> Result<Tree, Error> {
        if depth > 32 {
            return Err(self.m.err_plain(format!("I/O type %{ty} nests too deeply")));
        }
        match self.m.ty(ty)?.clone() {
            Ty::Int { width: 64, .. } | Ty::Float { width: 64 } => {
                // Two 32-bit components, low word first, as hardware passes a
                // 64-bit varying; never interpolated (Vulkan and GLSL require `flat`).
                if comp > 2 {
                    return Err(self.m.err_plain(format!(
                        "a 64-bit component at component {comp} does not fit its location"
                    )));
                }
                let mut kids = vec![];
                for w in 0..2 {
                    kids.push(self.io_leaf(BitSize::B32, false, loc, comp + w, d, ctx, xfb)?);
                }
                Ok(Tree::Node {
                    kids,
                    stride: None,
                    runtime: false,
                })
            }
            Ty::Bool | Ty::Int { .. } | Ty::Float { .. } => {
                let bits = self.scalar_bits(ty)?;
                let is_float = matches!(self.m.ty(ty)?, Ty::Float { .. });
                self.io_leaf(bits, is_float, loc, comp, d, ctx, xfb)
            }
            Ty::Vector { elem, n } if self.is_wide_ty(elem) => {
                // Component `i` takes words `comp + 2i` and the next, continuing in
                // the next location past the fourth (a `dvec3` uses two locations).
                let mut kids = vec![];
                for i in 0..n {
                    let w = comp + 2 * i;
                    kids.push(self.loc_tree(
                        elem,
                        loc + w / 4,
                        w % 4,
                        d,
                        ctx,
                        xfb,
                        None,
                        depth + 1,
                    )?);
                }
                Ok(Tree::Node {
                    kids,
                    stride: None,
                    runtime: false,
                })
            }
            Ty::Vector { elem, n } => {
                let mut kids = vec![];
                for i in 0..n {
                    kids.push(self.loc_tree(elem, loc, comp + i, d, ctx, xfb, None, depth + 1)?);
                }
                Ok(Tree::Node {
                    kids,
                    stride: None,
                    runtime: false,
                })
            }
            Ty::Matrix { col, n } => {
                let per = self.locations(col)?;
                let mut kids = vec![];
                for i in 0..n {
                    kids.push(self.loc_tree(
                        col,
                        loc + i * per,
                        comp,
                        d,
                        ctx,
                        xfb,
                        None,
                        depth + 1,
                    )?);
                }
                Ok(Tree::Node {
                    kids,
                    stride: Some(per),
                    runtime: false,
                })
            }
            Ty::Array { elem, len } => {
                let per = self.locations(elem)?;
                // Elements that occupy no location would all sit at one place, and
                // nothing else would bound a (possibly nested) loop over 2^32 of them.
                if per == 0 && len > 0 {
                    let msg = format!("I/O array %{ty} has elements that occupy no location");
                    return Err(self.m.err_plain(msg));
                }
                let mut kids = vec![];
                for i in 0..len {
                    kids.push(self.loc_tree(
                        elem,
                        loc + i * per,
                        comp,
                        d,
                        ctx,
                        xfb,
                        None,
                        depth + 1,
                    )?);
                }
                Ok(Tree::Node {
                    kids,
                    stride: Some(per),
                    runtime: false,
                })
            }
            Ty::Struct { members } => {
                let mut kids = vec![];
                let mut next = loc;
                for (i, mt) in members.iter().enumerate() {
                    let md = match block {
                        Some((bt, _)) => self.m.member_deco(bt, i as u32),
                        None => Decos::default(),
                    };
                    let at = match (md.location, block) {
                        (Some(l), Some((_, first))) => l.saturating_sub(first),
                        _ => next,
                    };
                    let mut merged = d.clone();
                    merged.flat |= md.flat;
                    merged.noperspective |= md.noperspective;
                    merged.centroid |= md.centroid;
                    merged.sample |= md.sample;
                    if md.offset.is_some() && ctx.xfb.is_some() {
                        *xfb = md.offset;
                    }
                    kids.push(self.loc_tree(
                        *mt,
                        at,
                        md.component.unwrap_or(0),
                        &merged,
                        ctx,
                        xfb,
                        None,
                        depth + 1,
                    )?);
                    next = at + self.locations(*mt)?;
                }
                Ok(Tree::Node {
                    kids,
                    stride: None,
                    runtime: false,
                })
            }
            other => Err(self.m.err_plain(format!(
                "type %{ty} ({other:?}) cannot be a shader input or output"
            ))),
        }
    }

    /// The leaf of one scalar (or one word of a 64-bit scalar) at relative location
    /// `loc`, component `comp`; only floats are interpolated.
    #[allow(clippy::too_many_arguments)]
    fn io_leaf(
        &self,
        bits: BitSize,
        is_float: bool,
        loc: u32,
        comp: u32,
        d: &Decos,
        ctx: &LocCtx,
        xfb: &mut Option<u32>,
    ) -> Result<Tree, Error> {
        let slot = ctx.family.offset(ctx.base + loc).ok_or_else(|| {
            self.m.err_plain(format!(
                "location {} is out of range for {}",
                ctx.base + loc,
                ctx.family
            ))
        })?;
        if comp > 3 {
            return Err(self
                .m
                .err_plain(format!("component {comp} is out of range")));
        }
        let half = if bits == BitSize::B16 {
            Half::Lo
        } else {
            Half::Full
        };
        let interp = (ctx.fs_input && !d.flat && is_float).then(|| interp_mode(d));
        let x = match (ctx.xfb, xfb.as_mut()) {
            (Some(b), Some(off)) => {
                // A captured scalar takes its own size: 2 bytes for 16 bits.
                let o = *off;
                *off += if bits == BitSize::B16 { 2 } else { 4 };
                Some((
                    b,
                    u16::try_from(o).map_err(|_| self.m.err_plain("xfb offset out of range"))?,
                ))
            }
            _ => None,
        };
        let addr = Addr::Io {
            slot: IoSlot::half(slot, comp as u8, half),
            interp,
            patch: ctx.patch,
            xfb: x,
        };
        Ok(Tree::Leaf(Leaf {
            addr,
            bits,
            dynamic: None,
        }))
    }

    /// Locations (vec4 slots) a type occupies.
    pub fn locations(&self, ty: u32) -> Result<u32, Error> {
        locations(self.m, ty, 0)
    }

    fn builtin_tree(
        &mut self,
        b: BuiltIn,
        ty: u32,
        class: StorageClass,
        d: &Decos,
    ) -> Result<Tree, Error> {
        use BuiltIn as B;
        let stage = self.m.stage;
        let input = class == StorageClass::Input;
        let fs_in = stage == Stage::Fragment && input;
        let slot = |s: Slot, comp: u8, interp: bool, patch: bool| {
            let interp = (fs_in && interp).then(|| interp_mode(d));
            Tree::Leaf(Leaf {
                addr: Addr::Io {
                    slot: IoSlot::new(s, comp),
                    interp,
                    patch,
                    xfb: None,
                },
                bits: BitSize::B32,
                dynamic: None,
            })
        };
        let sys = |sv: SystemValue| {
            Tree::Leaf(Leaf {
                addr: Addr::Sys(sv),
                bits: sv.bits(),
                dynamic: None,
            })
        };
        let vec = |items: Vec<Tree>| Tree::Node {
            kids: items,
            stride: None,
            runtime: false,
        };
        let len = match self.m.ty(ty)? {
            Ty::Array { len, .. } => *len,
            _ => 1,
        };
        let tess_patch = stage == Stage::TessCtrl || stage == Stage::TessEval;
        Ok(match b {
            B::Position => vec((0..4).map(|c| slot(Slot::Pos, c, true, false)).collect()),
            B::PointSize => slot(Slot::Psiz, 0, true, false),
            B::ClipDistance | B::CullDistance => {
                let lo = |i: u32| {
                    if b == B::ClipDistance {
                        Slot::ClipDist(i >= 4)
                    } else {
                        Slot::CullDist(i >= 4)
                    }
                };
                if len > 8 {
                    return Err(self
                        .m
                        .err_plain(format!("{b:?} has {len} elements (at most 8)")));
                }
                vec((0..len)
                    .map(|i| slot(lo(i), (i % 4) as u8, true, false))
                    .collect())
            }
            B::Layer => slot(Slot::Layer, 0, false, false),
            B::ViewportIndex => slot(Slot::Viewport, 0, false, false),
            B::PrimitiveId
                if input && !(stage == Stage::Fragment && self.params.peer == Stage::Geometry) =>
            {
                sys(SystemValue::PrimitiveId)
            }
            B::PrimitiveId => slot(Slot::PrimitiveId, 0, false, false),
            B::TessLevelOuter => vec((0..4)
                .map(|c| slot(Slot::TessLevelOuter, c, false, tess_patch))
                .collect()),
            B::TessLevelInner => vec((0..2)
                .map(|c| slot(Slot::TessLevelInner, c, false, tess_patch))
                .collect()),
            B::FragDepth => slot(Slot::Depth, 0, false, false),
            B::SampleMask if !input => vec(vec![slot(Slot::SampleMask, 0, false, false)]),
            // One word covers the 16 viewports GL allows (GL_MAX_VIEWPORTS in Mesa), so
            // `gl_ViewportMask[]` has one element; more would address viewports past 31.
            B::ViewportMaskNV if !input && len == 1 => {
                vec(vec![slot(Slot::ViewportMask, 0, false, false)])
            }
            B::ViewportMaskNV if !input => {
                return Err(self.m.err_plain(format!(
                    "ViewportMaskNV has {len} elements (one word covers every viewport)"
                )))
            }
            B::SampleMask => vec(vec![sys(SystemValue::SampleMaskIn)]),
            B::VertexIndex | B::VertexId => sys(SystemValue::VertexId),
            B::InstanceIndex | B::InstanceId => sys(SystemValue::InstanceId),
            B::InvocationId => sys(SystemValue::InvocationId),
            B::FrontFacing => sys(SystemValue::FrontFace),
            B::SampleId => sys(SystemValue::SampleId),
            B::ViewIndex => sys(SystemValue::ViewIndex),
            B::PatchVertices => sys(SystemValue::PatchVerticesIn),
            B::TessCoord => vec(vec![
                sys(SystemValue::TessCoordX),
                sys(SystemValue::TessCoordY),
                sys(SystemValue::TessCoordZ),
            ]),
            B::FragCoord => vec(vec![
                sys(SystemValue::FragCoordX),
                sys(SystemValue::FragCoordY),
                sys(SystemValue::FragCoordZ),
                sys(SystemValue::FragCoordW),
            ]),
            other if input => self.opaque_builtin(other, ty)?,
            other => {
                return Err(self
                    .m
                    .err_plain(format!("built-in output {other:?} is not supported")))
            }
        })
    }

    /// Any other built-in input: each component an opaque, stage-bound load.
    fn opaque_builtin(&mut self, b: BuiltIn, ty: u32) -> Result<Tree, Error> {
        // `SampleMask` is an array of one int: its element is the value.
        let elem = match self.m.ty(ty)? {
            Ty::Array { elem, len: 1 } => *elem,
            _ => ty,
        };
        let oty = self.opaque_type_of(elem).ok_or_else(|| {
            self.m
                .err_plain(format!("built-in {b:?} has a type varysat cannot carry"))
        })?;
        let leaf = |comp: u8| {
            Tree::Leaf(Leaf {
                addr: Addr::Builtin {
                    builtin: b as u32,
                    ty: oty,
                    comp,
                },
                bits: oty.scalar.bits(),
                dynamic: None,
            })
        };
        let kids: Vec<Tree> = (0..oty.components() as u8).map(leaf).collect();
        let one = Tree::Node {
            kids,
            stride: None,
            runtime: false,
        };
        Ok(match (elem == ty, oty.components()) {
            (true, 1) => leaf(0),
            (true, _) => one,
            (false, 1) => Tree::Node {
                kids: vec![leaf(0)],
                stride: None,
                runtime: false,
            },
            (false, _) => Tree::Node {
                kids: vec![one],
                stride: None,
                runtime: false,
            },
        })
    }

    /// Loads one I/O or system-value leaf. `vertex` is the per-vertex index; `mode`
    /// overrides the interpolation (GLSL `interpolateAt*`), with its operands.
    pub fn load_io_leaf(
        &mut self,
        leaf: &Leaf,
        class: StorageClass,
        vertex: Option<Value>,
        mode: Option<(InterpMode, Vec<Value>)>,
    ) -> Result<Value, Error> {
        let indirect = self.indirect(leaf)?;
        let kind = match &leaf.addr {
            Addr::Sys(sv) => InstKind::LoadSystemValue(*sv),
            Addr::Builtin { builtin, ty, comp } => {
                let name = format!(
                    "builtin_{}",
                    rspirv::spirv::BuiltIn::from_u32(*builtin)
                        .map(|b| format!("{b:?}").to_lowercase())
                        .unwrap_or_else(|| builtin.to_string())
                );
                let op = crate::ir::OpaqueOp {
                    name,
                    purity: crate::ir::Purity::Stage,
                    code: crate::ir::OpaqueCode::Builtin(*builtin),
                    result: Some((*ty, *comp)),
                    args: vec![],
                    resource: None,
                };
                InstKind::Opaque {
                    op: std::sync::Arc::new(op),
                    srcs: vec![],
                }
            }
            Addr::Io { slot, interp, .. } => match (class, vertex) {
                (StorageClass::Output, v) => InstKind::LoadOutput {
                    slot: *slot,
                    vertex: v,
                    indirect,
                },
                (_, Some(v)) => InstKind::LoadPerVertexInput {
                    slot: *slot,
                    vertex: v,
                    indirect,
                },
                (_, None) => match (mode, interp) {
                    (Some((mode, operands)), _) => InstKind::LoadInterpolatedInput {
                        slot: *slot,
                        mode,
                        operands,
                        indirect,
                    },
                    (None, Some(mode)) => InstKind::LoadInterpolatedInput {
                        slot: *slot,
                        mode: *mode,
                        operands: vec![],
                        indirect,
                    },
                    (None, None) => InstKind::LoadInput {
                        slot: *slot,
                        indirect,
                    },
                },
            },
            other => {
                return Err(self
                    .m
                    .err_plain(format!("internal: {other:?} is not an I/O leaf")))
            }
        };
        Ok(self.e.inst(kind, leaf.bits))
    }

    /// Stores one output leaf.
    pub fn store_io_leaf(
        &mut self,
        leaf: &Leaf,
        vertex: Option<Value>,
        value: Value,
    ) -> Result<(), Error> {
        let indirect = self.indirect(leaf)?;
        let Addr::Io {
            slot, xfb, patch, ..
        } = &leaf.addr
        else {
            return Err(self.m.err_plain("store to a built-in input"));
        };
        let kind = match vertex {
            Some(vertex) if !patch => InstKind::StorePerVertexOutput {
                slot: *slot,
                value,
                vertex,
                indirect,
            },
            _ => InstKind::StoreOutput {
                slot: *slot,
                value,
                indirect,
                xfb: xfb.map(|(buffer, offset)| crate::ir::Xfb { buffer, offset }),
                no_varying: false,
            },
        };
        self.e.effect(kind);
        Ok(())
    }

    fn indirect(&self, leaf: &Leaf) -> Result<Option<Indirect>, Error> {
        match (&leaf.addr, leaf.dynamic) {
            (Addr::Io { .. }, Some((index, len))) => {
                let len = u8::try_from(len)
                    .map_err(|_| self.m.err_plain("indirectly indexed I/O array is too long"))?;
                Ok(Some(Indirect { index, len }))
            }
            _ => Ok(None),
        }
    }
}

/// The interpolation a set of decorations asks for.
pub(crate) fn interp_mode(d: &Decos) -> InterpMode {
    InterpMode {
        interp: if d.noperspective {
            Interp::Linear
        } else {
            Interp::Persp
        },
        loc: if d.sample {
            InterpLoc::Sample
        } else if d.centroid {
            InterpLoc::Centroid
        } else {
            InterpLoc::Center
        },
    }
}
