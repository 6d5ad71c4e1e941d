//! Chosen terms back into IR. The consumer's region values are re-emitted at its start
//! (all their leaves are available there) under their original value handles, so the
//! untouched rest of the shader keeps using them; the producer's surviving varyings are
//! stored at its end (before each static emit for a GS, at `invocation_id` for TCS
//! per-vertex outputs). Side effects and control flow are left as they were; pinned,
//! system-value and xfb stores stay (the latter two with `no_varying` where due).

use std::collections::{BTreeMap, BTreeSet};

use egg::Id;

use crate::egraph::lower::{role, Lowered, Role};
use crate::egraph::{VGraph, VNode, XferMode};
use crate::error::Error;
use crate::extract::dag::emit_invariant_classes;
use crate::extract::{Ctx, Selection, VaryingKey, VaryingKind};
use crate::ir::{
    for_each_block_mut, walk, AluOp, BitSize, Block, Inst, InstKind, IoSlot, Pipeline, Shader,
    Stage, Stmt, SystemValue, Value, Values, Visit,
};

/// What emission needs besides the pipeline.
pub struct EmitInput<'a> {
    /// The lowered pair.
    pub lowered: &'a Lowered,
    /// The saturated e-graph.
    pub egraph: &'a VGraph,
    /// The extraction result.
    pub selection: &'a Selection,
    /// The slot of every surviving varying.
    pub slots: &'a BTreeMap<VaryingKey, IoSlot>,
}

/// Builds instructions for chosen terms into one block of one shader.
struct Builder<'a> {
    input: &'a EmitInput<'a>,
    shader: &'a mut Shader,
    names: &'a mut FreshNames,
    memo: BTreeMap<(Id, Ctx), Value>,
    out: Block,
    /// Producer values that may be used here (GS: defined before this emit).
    available: Option<&'a BTreeSet<u32>>,
    /// Index of the GS emit being stored, if any.
    emit_index: Option<usize>,
    invocation_id: Option<Value>,
    /// Constant vertex indices emitted for re-loaded TCS control points, by index.
    vertex_indices: BTreeMap<u32, Value>,
    /// Top-level producer loads that can stand for a leaf node instead of a new load.
    leaves: BTreeMap<VNode, Value>,
}

/// Emission failures are internal inconsistencies; `optimize` answers them by keeping
/// the input pair unchanged and saying so in the report.
fn internal(msg: String) -> Error {
    Error::Limit(format!("optimizer emission: {msg}"))
}

/// The fresh `vyN` names of one shader being emitted already taken, and where the
/// search for the next one resumes.
struct FreshNames {
    /// The `N` of every taken name of the form `vyN`, `N` in decimal without leading
    /// zeros (as `take` writes it): no other name can equal a fresh one, so only these
    /// are kept. A set of every name (a copy of each) was, at 100k instructions, one
    /// of the largest structures live at emission.
    taken: BTreeSet<usize>,
    /// Every `vyN` below this was taken when last looked at. Names are only added, so
    /// the search never needs to look below it again; restarting it from the value
    /// count made re-optimizing an output (whose `vyN` names run past its value count)
    /// quadratic in the number of new values.
    next: usize,
}

impl FreshNames {
    fn of(shader: &Shader) -> Self {
        Self::from_names(shader.values.iter().map(|v| v.name.as_str()))
    }

    fn from_names<'n>(names: impl Iterator<Item = &'n str>) -> Self {
        FreshNames {
            taken: names.filter_map(fresh_number).collect(),
            next: 0,
        }
    }

    /// The first `vyN` name not taken with `N >= from`, which is then taken.
    fn take(&mut self, from: usize) -> String {
        let mut n = from.max(self.next);
        while self.taken.contains(&n) {
            n += 1;
        }
        self.next = n + 1;
        self.taken.insert(n);
        format!("vy{n}")
    }
}

/// `N` when `name` is `vyN` written as [`FreshNames::take`] writes it (decimal digits,
/// no sign, no leading zero but in `vy0`); `None` for any other name, which no fresh
/// name can equal.
fn fresh_number(name: &str) -> Option<usize> {
    let digits = name.strip_prefix("vy")?;
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits.len() == 1 || !digits.starts_with('0'));
    canonical.then(|| digits.parse().ok()).flatten()
}

impl Builder<'_> {
    fn fresh(&mut self, bits: BitSize) -> Value {
        let name = self.names.take(self.shader.values.len());
        self.shader.add_value(name, bits)
    }

    fn push(&mut self, result: Option<Value>, kind: InstKind) {
        self.out.push(Stmt::Inst(Inst {
            result,
            kind,
            loc: None,
        }));
    }

    fn bits_of(&self, id: Id) -> BitSize {
        self.input.egraph[id].data.bits.unwrap_or(BitSize::B32)
    }

    /// Emits class `id` in `ctx`; the result is `target` when given. Iterative (an
    /// explicit stack of frames, children visited in order before their parent is built)
    /// because a dependency chain in the input is as deep as the input is long.
    fn emit(&mut self, id: Id, ctx: Ctx, target: Option<Value>) -> Result<Value, Error> {
        let mut frames = vec![Frame::Visit { id, ctx, target }];
        let mut results: Vec<Value> = vec![];
        while let Some(frame) = frames.pop() {
            match frame {
                Frame::Visit { id, ctx, target } => match self.visit(id, ctx, target)? {
                    Visited::Done(v) => results.push(v),
                    Visited::Redirect(taken) => frames.push(Frame::Visit {
                        id: taken,
                        ctx,
                        target,
                    }),
                    Visited::Build { key, node } => {
                        let children = self.children(&node, ctx)?;
                        let arity = children.len();
                        frames.push(Frame::Build {
                            key,
                            node,
                            target,
                            arity,
                        });
                        for (child, child_ctx) in children.into_iter().rev() {
                            frames.push(Frame::Visit {
                                id: child,
                                ctx: child_ctx,
                                target: None,
                            });
                        }
                    }
                },
                Frame::Build {
                    key,
                    node,
                    target,
                    arity,
                } => {
                    let srcs = results.split_off(results.len() - arity);
                    let kind = self.kind(&node, key.1, srcs)?;
                    let v = match target {
                        Some(t) => t,
                        None => self.fresh(self.bits_of(key.0)),
                    };
                    self.push(Some(v), kind);
                    self.memo.insert(key, v);
                    results.push(v);
                }
            }
        }
        results
            .pop()
            .ok_or_else(|| internal("emission produced no value".into()))
    }

    /// A `mov` of `v` into `target` when one is given, else `v` itself.
    fn deliver(&mut self, v: Value, target: Option<Value>) -> Value {
        match target {
            Some(t) => {
                let kind = InstKind::Alu {
                    op: AluOp::Mov,
                    exact: false,
                    srcs: vec![v],
                };
                self.push(Some(t), kind);
                t
            }
            None => v,
        }
    }

    /// The first look at class `id` in `ctx`: an existing value, another class to emit
    /// instead (a GS per-emit choice), or a node whose children must come first.
    fn visit(&mut self, id: Id, ctx: Ctx, target: Option<Value>) -> Result<Visited, Error> {
        let g = self.input.egraph;
        let key = (g.find(id), ctx);
        if let Some(v) = self.memo.get(&key).copied() {
            return Ok(Visited::Done(self.deliver(v, target)));
        }
        let node = self
            .input
            .selection
            .choice
            .get(&key)
            .cloned()
            .ok_or_else(|| internal(format!("no choice for class {}", key.0)))?;
        let existing = self.leaves.get(&node).copied();
        let reusable = existing.filter(|v| self.available.is_none_or(|a| a.contains(&v.0)));
        let node = match reusable {
            Some(v) => VNode::Opaque {
                value: v.0,
                bits: self.bits_of(key.0),
            },
            None => node,
        };
        if let VNode::Opaque { value, .. } = node {
            if self.available.is_some_and(|a| !a.contains(&value)) {
                return Err(internal(format!(
                    "producer value {value} is not available at its store"
                )));
            }
            let v = Value(value);
            if target.is_none() {
                self.memo.insert(key, v);
            }
            return Ok(Visited::Done(self.deliver(v, target)));
        }
        if let VNode::PerEmit([index, head, tail]) = node {
            let i = self
                .emit_index
                .ok_or_else(|| internal("a per-emit value outside a GS emit".into()))?;
            let at = g[index]
                .data
                .konst
                .ok_or_else(|| internal("a per-emit index is not a constant".into()))?;
            let taken = if u64::from(at) == i as u64 {
                head
            } else {
                tail
            };
            return Ok(Visited::Redirect(taken));
        }
        Ok(Visited::Build { key, node })
    }

    /// The classes `node` reads, in emission order, each with the context it is
    /// emitted in (interpolation operands are consumer values).
    fn children(&self, node: &VNode, ctx: Ctx) -> Result<Vec<(Id, Ctx)>, Error> {
        Ok(match node {
            VNode::Alu { children, .. } | VNode::Op { children, .. } => {
                children.iter().map(|c| (*c, ctx)).collect()
            }
            VNode::Ubo { offset, .. } => vec![(offset[0], ctx)],
            VNode::Xfer([mode, _]) => match self.mode_node(*mode)? {
                VNode::Mode(_, operands) => operands.iter().map(|c| (*c, Ctx::C)).collect(),
                _ => return Err(internal("mode class without a mode".into())),
            },
            _ => vec![],
        })
    }

    fn mode_node(&self, mode: Id) -> Result<VNode, Error> {
        self.input.egraph[mode]
            .nodes
            .iter()
            .find(|n| matches!(n, VNode::Mode(..)))
            .cloned()
            .ok_or_else(|| internal("mode class without a mode".into()))
    }

    /// The instruction for `node`, whose children were emitted as `srcs`.
    fn kind(&mut self, node: &VNode, ctx: Ctx, srcs: Vec<Value>) -> Result<InstKind, Error> {
        Ok(match node {
            VNode::Const { value, .. } => InstKind::Const(*value),
            VNode::Undef(_) => InstKind::Undef,
            VNode::Alu { op, exact, .. } => InstKind::Alu {
                op: *op,
                exact: *exact,
                srcs,
            },
            VNode::Op { op, .. } => InstKind::Opaque {
                op: op.clone(),
                srcs,
            },
            VNode::Uniform(index, half) => InstKind::LoadUniform {
                index: *index,
                half: *half,
            },
            VNode::Ubo { block, half, .. } => InstKind::LoadUbo {
                block: *block,
                offset: only(&srcs)?,
                half: *half,
            },
            VNode::Input(slot) => InstKind::LoadInput {
                slot: *slot,
                indirect: None,
            },
            VNode::VertexInput { slot, vertex } => {
                let index = match self.vertex_indices.get(vertex) {
                    Some(v) => *v,
                    None => {
                        let v = self.fresh(BitSize::B32);
                        self.push(Some(v), InstKind::Const(*vertex));
                        self.vertex_indices.insert(*vertex, v);
                        v
                    }
                };
                InstKind::LoadPerVertexInput {
                    slot: *slot,
                    vertex: index,
                    indirect: None,
                }
            }
            VNode::SysVal(_, sv) => InstKind::LoadSystemValue(*sv),
            VNode::Xfer([m, v]) => self.load(*m, *v, srcs)?,
            other => return Err(internal(format!("cannot emit `{other}` in {ctx:?}"))),
        })
    }

    fn load(&mut self, mode: Id, value: Id, operands: Vec<Value>) -> Result<InstKind, Error> {
        let g = self.input.egraph;
        let node = VNode::Xfer([mode, value]);
        let key = crate::extract::dag::varying_key(g, &node)
            .ok_or_else(|| internal("xfer without a mode".into()))?;
        let slot = *self
            .input
            .slots
            .get(&key)
            .ok_or_else(|| internal("varying without a slot".into()))?;
        let VNode::Mode(m, _) = self.mode_node(mode)? else {
            return Err(internal("mode class without a mode".into()));
        };
        Ok(match m {
            XferMode::Flat | XferMode::Patch => InstKind::LoadInput {
                slot,
                indirect: None,
            },
            XferMode::Interp(mode) => InstKind::LoadInterpolatedInput {
                slot,
                mode,
                operands,
                indirect: None,
            },
            XferMode::Vertex => InstKind::LoadPerVertexInput {
                slot,
                vertex: *operands
                    .first()
                    .ok_or_else(|| internal("vertex mode without an index".into()))?,
                indirect: None,
            },
        })
    }
}

/// One step of [`Builder::emit`]'s explicit stack.
enum Frame {
    /// Look at a class; its value ends up on the result stack.
    Visit {
        id: Id,
        ctx: Ctx,
        target: Option<Value>,
    },
    /// Build `node` from the top `arity` results (its children's values).
    Build {
        key: (Id, Ctx),
        node: VNode,
        target: Option<Value>,
        arity: usize,
    },
}

/// What [`Builder::visit`] found.
enum Visited {
    Done(Value),
    Redirect(Id),
    Build { key: (Id, Ctx), node: VNode },
}

/// The one operand of a single-operand node.
fn only(srcs: &[Value]) -> Result<Value, Error> {
    match srcs {
        [v] => Ok(*v),
        _ => Err(internal("a single-operand node without its operand".into())),
    }
}

fn strip_region(block: &mut Block, region: &BTreeSet<Value>) {
    for_each_block_mut(block, |b| b.retain(|stmt| !defines(stmt, region)));
}

/// Whether `stmt` is an instruction defining a value of `region`.
fn defines(stmt: &Stmt, region: &BTreeSet<Value>) -> bool {
    matches!(stmt, Stmt::Inst(i) if i.result.is_some_and(|r| region.contains(&r)))
}

/// [`strip_region`] on the blocks nested in `stmt`.
fn strip_nested(stmt: &mut Stmt, region: &BTreeSet<Value>) {
    match stmt {
        Stmt::If {
            then_body,
            else_body,
            ..
        } => {
            strip_region(then_body, region);
            strip_region(else_body, region);
        }
        Stmt::Loop { body, .. } => strip_region(body, region),
        Stmt::Inst(_) | Stmt::Break { .. } | Stmt::Continue { .. } => {}
    }
}

/// A copy of `s` without its body, with room for the values emission adds. A cloned
/// value table is exactly full, so the first fresh value would double it (3.8 MB of
/// slack for the producer of the 100k-instruction pair, at the peak of `optimize`).
/// Emission adds at most one value per chosen (class, stage) outside a GS's per-emit
/// copies; past that the table grows as before.
fn copy_for_emission(s: &Shader, input: &EmitInput<'_>) -> Shader {
    let mut values = Vec::with_capacity(s.values.len() + input.selection.choice.len());
    values.extend_from_slice(&s.values);
    Shader {
        info: s.info.clone(),
        values,
        body: vec![],
        loc: s.loc,
        layer_viewport_relative: s.layer_viewport_relative,
    }
}

/// Rewrites the consumer: region values re-emitted at the start, the rest untouched.
pub fn emit_consumer(p: &Pipeline, input: &EmitInput<'_>) -> Result<Shader, Error> {
    let mut shader = copy_for_emission(&p.consumer, input);
    let mut names = FreshNames::of(&shader);
    let mut b = Builder {
        input,
        shader: &mut shader,
        names: &mut names,
        memo: BTreeMap::new(),
        out: vec![],
        available: None,
        emit_index: None,
        invocation_id: None,
        vertex_indices: BTreeMap::new(),
        leaves: BTreeMap::new(),
    };
    for (v, id) in &input.lowered.roots {
        b.emit(*id, Ctx::C, Some(*v))?;
    }
    let mut body = std::mem::take(&mut b.out);
    // The input's statements outside the region are copied once, behind the emitted
    // ones, into exact room (a doubled statement vector is megabytes on a large
    // shader; cloning the whole body first held two copies at once).
    let region = &input.lowered.region;
    let kept = |stmt: &&Stmt| !defines(stmt, region);
    body.reserve_exact(p.consumer.body.iter().filter(kept).count());
    let start = body.len();
    body.extend(p.consumer.body.iter().filter(kept).cloned());
    for stmt in &mut body[start..] {
        strip_nested(stmt, region);
    }
    shader.body = body;
    Ok(shader)
}

/// What happens to an original producer store: `None` drops it, `Some(nv)` keeps it
/// and sets `no_varying` when `nv`.
fn keep_store(l: &Lowered, link: (Stage, Stage), io: IoSlot, xfb: bool) -> Option<bool> {
    if matches!(
        role(io.slot, link.0, link.1),
        Role::SysVal | Role::TessLevel | Role::NotVarying
    ) {
        // An unpinned read went through the graph: no original load of it is left.
        return Some(!(l.read.contains(&io) && l.pins.reason(io).is_some()));
    }
    if l.pins.reason(io).is_some() && l.needed.contains(&io) {
        return Some(false);
    }
    xfb.then_some(true)
}

/// Keeps the stores that must stay (setting `no_varying`), drops the rest.
fn filter_stores(block: &mut Block, l: &Lowered, link: (Stage, Stage)) {
    for_each_block_mut(block, |b| {
        b.retain_mut(|stmt| match stmt {
            Stmt::Inst(Inst {
                kind:
                    InstKind::StoreOutput {
                        slot,
                        xfb,
                        no_varying,
                        ..
                    },
                ..
            }) => match keep_store(l, link, *slot, xfb.is_some()) {
                Some(nv) => {
                    *no_varying |= nv;
                    true
                }
                None => false,
            },
            Stmt::Inst(Inst {
                kind: InstKind::StorePerVertexOutput { slot, .. },
                ..
            }) => keep_store(l, link, *slot, false).is_some(),
            _ => true,
        })
    });
}

impl Builder<'_> {
    fn store_all(&mut self, stage: Stage) -> Result<(), Error> {
        for (key, slot) in self.input.slots {
            let v = self.emit(key.value, Ctx::P, None)?;
            let kind = if stage == Stage::TessCtrl && key.kind == VaryingKind::PerVertex {
                let vertex = match self.invocation_id {
                    Some(i) => i,
                    None => {
                        let i = self.fresh(BitSize::B32);
                        self.push(
                            Some(i),
                            InstKind::LoadSystemValue(SystemValue::InvocationId),
                        );
                        self.invocation_id = Some(i);
                        i
                    }
                };
                InstKind::StorePerVertexOutput {
                    slot: *slot,
                    value: v,
                    vertex,
                    indirect: None,
                }
            } else {
                InstKind::StoreOutput {
                    slot: *slot,
                    value: v,
                    indirect: None,
                    xfb: None,
                    no_varying: false,
                }
            };
            self.push(None, kind);
        }
        Ok(())
    }
}

/// Rewrites the producer: original varying stores dropped, the surviving varyings
/// stored at the end (before each emit for a GS).
pub fn emit_producer(p: &Pipeline, input: &EmitInput<'_>) -> Result<Shader, Error> {
    let mut shader = copy_for_emission(&p.producer, input);
    shader.body = p.producer.body.clone();
    let link = (p.producer.stage(), p.consumer.stage());
    filter_stores(&mut shader.body, input.lowered, link);
    let stage = shader.stage();
    let mut names = FreshNames::of(&shader);
    let leaves = top_level_leaves(&shader);
    let body = std::mem::take(&mut shader.body);
    let mut out = vec![];
    if stage == Stage::Geometry {
        // Values that are the same at every emit are computed once, before the first
        // emit that needs them, and reused by the later ones (what extraction charged).
        let roots: Vec<Id> = input.slots.keys().map(|k| k.value).collect();
        let invariant = emit_invariant_classes(input.egraph, input.selection, &roots);
        let mut gs = GsEmission {
            input,
            shader: &mut shader,
            names: &mut names,
            invariant: &invariant,
            emit_index: 0,
        };
        out = gs.block(body, &mut BTreeSet::new(), &mut BTreeMap::new())?;
    } else {
        out = body;
        let mut b = builder(input, &mut shader, &mut names, None, None);
        b.leaves = leaves;
        b.store_all(stage)?;
        // Exact: appending to the full body would double its capacity.
        out.reserve_exact(b.out.len());
        out.append(&mut b.out);
    }
    shader.body = out;
    Ok(shader)
}

/// Stores the surviving varyings of a GS before each of its emits, in the order
/// lowering numbered them (program order, a `then` branch before its `else`): emits
/// at the top level and inside `if` branches. Emits inside loops pin every output at
/// lowering, so no varying reaches them.
struct GsEmission<'a, 'b> {
    input: &'a EmitInput<'a>,
    shader: &'b mut Shader,
    names: &'b mut FreshNames,
    invariant: &'b fxhash::FxHashSet<Id>,
    emit_index: usize,
}

impl GsEmission<'_, '_> {
    /// Rebuilds `body` with the stores before its emits. `defined` holds the values
    /// defined so far on the way here; `shared` the emit-invariant values already
    /// computed there. A branch starts from copies of both, and what it computes is
    /// not reused after it (it does not dominate what follows).
    fn block(
        &mut self,
        body: Block,
        defined: &mut BTreeSet<u32>,
        shared: &mut BTreeMap<(Id, Ctx), Value>,
    ) -> Result<Block, Error> {
        let mut out = Vec::with_capacity(body.len());
        for stmt in body {
            match stmt {
                Stmt::Inst(Inst {
                    kind: InstKind::EmitVertex,
                    ..
                }) => {
                    let mut b = builder(
                        self.input,
                        self.shader,
                        self.names,
                        Some(defined),
                        Some(self.emit_index),
                    );
                    b.memo = shared.clone();
                    b.store_all(Stage::Geometry)?;
                    out.append(&mut b.out);
                    *shared = b
                        .memo
                        .into_iter()
                        .filter(|((id, _), _)| self.invariant.contains(id))
                        .collect();
                    self.emit_index += 1;
                    out.push(stmt);
                }
                Stmt::If {
                    cond,
                    then_body,
                    else_body,
                    phis,
                    loc,
                } => {
                    let then_body =
                        self.block(then_body, &mut defined.clone(), &mut shared.clone())?;
                    let else_body =
                        self.block(else_body, &mut defined.clone(), &mut shared.clone())?;
                    let stmt = Stmt::If {
                        cond,
                        then_body,
                        else_body,
                        phis,
                        loc,
                    };
                    top_level_defs(&stmt, defined);
                    out.push(stmt);
                }
                stmt => {
                    top_level_defs(&stmt, defined);
                    out.push(stmt);
                }
            }
        }
        Ok(out)
    }
}

fn builder<'a>(
    input: &'a EmitInput<'a>,
    shader: &'a mut Shader,
    names: &'a mut FreshNames,
    available: Option<&'a BTreeSet<u32>>,
    emit_index: Option<usize>,
) -> Builder<'a> {
    Builder {
        input,
        shader,
        names,
        memo: BTreeMap::new(),
        out: vec![],
        available,
        emit_index,
        invocation_id: None,
        vertex_indices: BTreeMap::new(),
        leaves: BTreeMap::new(),
    }
}

/// Loads at the producer's top level, by the leaf node they compute, so stores at the
/// end reuse them rather than loading again.
fn top_level_leaves(shader: &Shader) -> BTreeMap<VNode, Value> {
    let mut out = BTreeMap::new();
    let mut consts = BTreeMap::new();
    for stmt in &shader.body {
        let Some((r, kind)) = stmt.as_def() else {
            continue;
        };
        let leaf = match kind {
            InstKind::LoadInput {
                slot,
                indirect: None,
            } => VNode::Input(*slot),
            InstKind::LoadSystemValue(sv) => VNode::SysVal(crate::egraph::Side::Producer, *sv),
            InstKind::LoadUniform { index, half } => VNode::Uniform(*index, *half),
            InstKind::Const(c) => {
                consts.insert(r, *c);
                continue;
            }
            InstKind::LoadPerVertexInput {
                slot,
                vertex,
                indirect: None,
            } if shader.stage() == Stage::TessCtrl => match consts.get(vertex) {
                Some(v) => VNode::VertexInput {
                    slot: *slot,
                    vertex: *v,
                },
                None => continue,
            },
            _ => continue,
        };
        out.entry(leaf).or_insert(r);
    }
    out
}

fn top_level_defs(stmt: &Stmt, out: &mut BTreeSet<u32>) {
    match stmt {
        Stmt::Inst(i) => out.extend(i.result.map(|r| r.0)),
        Stmt::If { phis, .. } => out.extend(phis.iter().map(|p| p.dst.0)),
        Stmt::Loop { phis, .. } => out.extend(phis.iter().map(|p| p.dst.0)),
        _ => {}
    }
}

/// Removes pure instructions whose results nothing uses, to a fixed point. Linear: use
/// counts once, then a worklist that releases each dead instruction's operands (a dead
/// chain is removed in one pass, not one link per pass).
pub fn remove_dead_code(shader: &mut Shader) {
    remove_dead(shader, removable);
}

/// [`remove_dead_code`] that keeps every load of an input, used or not: what the
/// pre-pass drops, so that the input's varyings stay as written.
pub(super) fn remove_dead_computations(shader: &mut Shader) {
    remove_dead(shader, is_computation);
}

/// Removes the instructions `dead_if_unused` accepts whose results nothing uses.
fn remove_dead(shader: &mut Shader, dead_if_unused: fn(&InstKind) -> bool) {
    let n = shader.values.len();
    let mut liveness = Liveness {
        uses: vec![0; n],
        operands: vec![None; n],
    };
    liveness.count(&shader.body, dead_if_unused);
    let mut dead = vec![false; n];
    let mut work: Vec<usize> = (0..n).filter(|&v| liveness.unused(v)).collect();
    while let Some(v) = work.pop() {
        if std::mem::replace(&mut dead[v], true) {
            continue;
        }
        for op in liveness.operands[v].take().unwrap_or_default() {
            let i = op.index();
            liveness.uses[i] -= 1;
            if liveness.unused(i) && !dead[i] {
                work.push(i);
            }
        }
    }
    drop_dead(&mut shader.body, &dead);
}

/// Use counts of every value, and the operands of each removable instruction by the
/// value it defines.
struct Liveness {
    uses: Vec<u32>,
    operands: Vec<Option<Values>>,
}

impl Liveness {
    fn unused(&self, v: usize) -> bool {
        self.uses[v] == 0 && self.operands[v].is_some()
    }

    fn used(&mut self, vs: impl IntoIterator<Item = Value>) {
        for v in vs {
            self.uses[v.index()] += 1;
        }
    }

    fn count(&mut self, block: &Block, dead_if_unused: fn(&InstKind) -> bool) {
        for visit in walk(block) {
            let Visit::Enter(stmt) = visit else { continue };
            self.used(stmt.own_uses());
            if let Stmt::Inst(i) = stmt {
                if let Some(r) = i.result.filter(|_| dead_if_unused(&i.kind)) {
                    self.operands[r.index()] = Some(i.kind.operands());
                }
            }
        }
    }
}

/// Whether an instruction computes something other than a constant or an input's
/// value, with no effect but its result.
pub(super) fn is_computation(kind: &InstKind) -> bool {
    matches!(
        kind,
        InstKind::Alu { .. }
            | InstKind::LoadUniform { .. }
            | InstKind::LoadUbo { .. }
            | InstKind::LoadSystemValue(_)
    ) || matches!(kind, InstKind::Opaque { op, .. } if op.purity != crate::ir::Purity::Effect)
}

/// Whether an instruction has no effect but its result (dead-code removal may drop it).
fn removable(kind: &InstKind) -> bool {
    is_computation(kind)
        || matches!(
            kind,
            InstKind::Const(_)
                | InstKind::Undef
                | InstKind::LoadInput { .. }
                | InstKind::LoadInterpolatedInput { .. }
                | InstKind::LoadPerVertexInput { .. }
        )
}

fn drop_dead(block: &mut Block, dead: &[bool]) {
    for_each_block_mut(block, |b| {
        b.retain(|stmt| !matches!(stmt, Stmt::Inst(i) if i.result.is_some_and(|r| dead[r.index()])))
    });
}

/// The producer-side store kinds, for callers that count varyings.
pub fn is_store(kind: &InstKind) -> Option<(IoSlot, bool)> {
    match kind {
        InstKind::StoreOutput {
            slot, no_varying, ..
        } => Some((*slot, *no_varying)),
        InstKind::StorePerVertexOutput { slot, .. } => Some((*slot, false)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(names: &[&str]) -> FreshNames {
        FreshNames::from_names(names.iter().copied())
    }

    #[test]
    fn fresh_names_skip_taken_ones_and_never_repeat() {
        let mut names = taken(&["vy3", "vy4", "vy6"]);
        assert_eq!(names.take(3), "vy5");
        // The value count lags behind the names handed out: the search resumes past
        // them instead of handing out a taken name again.
        assert_eq!(names.take(3), "vy7");
        assert_eq!(names.take(2), "vy8");
        // A value count ahead of the search moves it forward.
        assert_eq!(names.take(20), "vy20");
        assert!([5, 7, 8, 20].iter().all(|n| names.taken.contains(n)));
    }

    #[test]
    fn only_names_a_fresh_name_can_equal_are_taken() {
        // `vy07`, `vy+8`, `vy` and `xvy9` can never be written by `take`, so they do
        // not hold back `vy7`, `vy8` or `vy9`; `vy0` and `vy10` do.
        let mut names = taken(&[
            "vy07",
            "vy+8",
            "vy",
            "xvy9",
            "vy0",
            "vy10",
            "vy18446744073709551616",
        ]);
        assert_eq!(names.take(0), "vy1");
        assert_eq!(names.take(7), "vy7");
        assert_eq!(names.take(8), "vy8");
        assert_eq!(names.take(9), "vy9");
        assert_eq!(names.take(10), "vy11");
    }

    #[test]
    fn fresh_names_match_the_first_free_name_from_the_value_count() {
        // The same names as the search from the value count alone, which restarted
        // every time: with names only added and value counts never falling (values are
        // only added too), resuming changes no choice.
        let names = ["vy0", "vy2", "vy3", "vy9"];
        let mut resumed = taken(&names);
        let mut restarted: BTreeSet<String> = names.iter().map(|n| n.to_string()).collect();
        for count in [0, 1, 1, 4, 5, 5, 12] {
            let first_free = (count..)
                .map(|n| format!("vy{n}"))
                .find(|c| !restarted.contains(c))
                .expect("a free name exists");
            restarted.insert(first_free.clone());
            assert_eq!(resumed.take(count), first_free, "value count {count}");
        }
    }
}
