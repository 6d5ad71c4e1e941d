//! Lowering a pair into one e-graph: the final value of each producer output (gated
//! selects for stores under `if`, one value per static emit for a GS, the invocation's
//! own vertex for TCS per-vertex outputs), consumer input loads as `xfer` nodes, and
//! the consumer's varying-relevant region (pure values over inputs, uniforms,
//! constants, UBO loads and system values). Anything whose semantics would be unclear
//! in the graph **pins** its slot: the original stores and loads stay untouched.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use egg::Id;

use super::analysis::{VAnalysis, VGraph};
use super::lang::{Operands, Side, VNode, XferMode};
use crate::ir::{walk, Visit};
use crate::ir::{
    BitSize, Block, Half, Indirect, InstKind, InterpLoc, IoSlot, Pipeline, Purity, Shader, Slot,
    SlotClass, Stage, Stmt, SystemValue, Value,
};

/// How the optimizer may treat a slot in this pair (reference/000 §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// VARn, FOGC, PNTC, PRIMITIVE_ID: fully optimized.
    Generic,
    /// PATCHn: fully optimized, packed apart.
    Patch,
    /// TEXn: dead outputs removed; read inputs kept (coord replace).
    Tex,
    /// COLn/BFCn: only constants in [0,1] propagate.
    Color,
    /// System-value output (POS, PSIZ, CLIP/CULL, LAYER, VIEWPORT): always stored.
    SysVal,
    /// TESS_LEVEL_*: always stored for the tessellator.
    TessLevel,
    /// An FS input the rasterizer supplies whatever the producer stores: PNTC (the
    /// point coordinate) and PRIMITIVE_ID when no GS precedes the FS. Its loads stay;
    /// producer stores to it are dead.
    FixedFunction,
    /// Not a varying (attributes, fragment results).
    NotVarying,
}

/// The role of `slot` between `producer` and `consumer` (reference/000 §1, Mesa's
/// per-slot rules): into a TCS, TES or GS every slot but the tessellation levels is a
/// plain varying (POS in a TCS is just data); the legacy and system-value roles only
/// exist where fixed function sits between the stages, before an FS.
pub fn role(slot: Slot, producer: Stage, consumer: Stage) -> Role {
    if consumer != Stage::Fragment {
        return match slot.class() {
            SlotClass::Patch => Role::Patch,
            SlotClass::TessLevel => Role::TessLevel,
            SlotClass::Attribute | SlotClass::FragResult => Role::NotVarying,
            _ => Role::Generic,
        };
    }
    match slot {
        Slot::Pntc => return Role::FixedFunction,
        Slot::PrimitiveId if producer != Stage::Geometry => return Role::FixedFunction,
        _ => {}
    }
    match slot.class() {
        SlotClass::Generic => Role::Generic,
        SlotClass::Patch => Role::Patch,
        SlotClass::Tex => Role::Tex,
        SlotClass::Color => Role::Color,
        // The rasterizer reads them: their stores stay (as no_varying when the FS no
        // longer reads them).
        SlotClass::SysVal => Role::SysVal,
        SlotClass::TessLevel => Role::TessLevel,
        SlotClass::Attribute | SlotClass::FragResult => Role::NotVarying,
    }
}

/// Slots whose original stores and loads must stay, with the reason.
#[derive(Clone, Debug, Default)]
pub struct Pins {
    /// Whole vec4 slots (indirect access, TCS read-back, …).
    pub slots: BTreeMap<Slot, String>,
    /// Single components.
    pub comps: BTreeMap<IoSlot, String>,
}

impl Pins {
    /// Why `io` is pinned, if it is.
    pub fn reason(&self, io: IoSlot) -> Option<&str> {
        self.comps
            .get(&io)
            .or_else(|| self.slots.get(&io.slot))
            .map(String::as_str)
    }

    fn pin_slot(&mut self, slot: Slot, why: &str) -> bool {
        self.slots.entry(slot).or_insert_with(|| why.to_string());
        true
    }

    fn pin(&mut self, io: IoSlot, why: &str) -> bool {
        if self.reason(io).is_some() {
            return false;
        }
        self.comps.insert(io, why.to_string());
        true
    }

    /// Pins the component `base` addresses in every slot of an indirect array: the
    /// dynamic index selects a slot, never a component, so the other components of
    /// those vec4s stay free for direct varyings.
    fn pin_indirect(&mut self, base: IoSlot, ind: &Indirect, why: &str) {
        for i in 0..ind.len as u32 {
            if let Some(s) = base.slot.offset(i) {
                self.pin(IoSlot { slot: s, ..base }, why);
            }
        }
    }
}

/// One consumer input load that entered the graph.
#[derive(Clone, Debug)]
pub struct InputLoad {
    /// The loaded value.
    pub value: Value,
    /// The slot read.
    pub slot: IoSlot,
    /// The class the load became (an `xfer`, or a constant/undef when the slot is never
    /// written).
    pub class: Id,
}

/// A pair lowered into one e-graph.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The e-graph (not yet saturated).
    pub egraph: VGraph,
    /// Consumer values used outside the region, with their classes: the extraction roots.
    pub roots: BTreeMap<Value, Id>,
    /// Consumer values defined by region instructions (re-emitted from the graph).
    pub region: BTreeSet<Value>,
    /// Consumer input loads in the region.
    pub loads: Vec<InputLoad>,
    /// The final value of each unpinned producer output.
    pub outputs: BTreeMap<IoSlot, Id>,
    /// Every output component the producer stores (incl. pinned ones).
    pub stored: BTreeSet<IoSlot>,
    /// Output components captured by transform feedback.
    pub xfb: BTreeSet<IoSlot>,
    /// Every input component the consumer reads, in or out of the region.
    pub read: BTreeSet<IoSlot>,
    /// Stored components whose stores someone reads: the consumer (directly or through
    /// an indirect range) or the producer itself (`load_output`). Other stores of
    /// pinned slots are dead and go.
    pub needed: BTreeSet<IoSlot>,
    /// Pinned slots.
    pub pins: Pins,
    /// Every node lowering added, with its class: the as-written solution.
    pub original: Vec<(VNode, Id)>,
    /// Number of static `emit_vertex` of a GS producer (`None` for other producers).
    pub gs_emits: Option<usize>,
}

fn io_bits(io: IoSlot) -> BitSize {
    if io.half == Half::Full {
        BitSize::B32
    } else {
        BitSize::B16
    }
}

struct Graph {
    egraph: VGraph,
    original: Vec<(VNode, Id)>,
    /// When lowering must give up (`lower_within`).
    deadline: Option<Instant>,
    /// Statements walked since the deadline was last read.
    polls: u32,
    /// Whether the deadline passed: the walks stop and the graph is incomplete.
    expired: bool,
}

/// Statements walked between two reads of the clock.
const POLL_EVERY: u32 = 256;

impl Graph {
    /// Adds `node`, except that a select with an `undef` operand is its other operand.
    fn add(&mut self, node: VNode) -> Id {
        if let Some(id) = self.defined_operand(&node) {
            return id;
        }
        let id = self.egraph.add(node.clone());
        self.original.push((node, id));
        id
    }

    /// The operand a select `(bcsel c a b)` may be replaced by because its other
    /// operand is `undef`, which may be any value, whatever `c` is. This refinement is
    /// made here, once and in one direction, and never as a rewrite rule: a rule
    /// would union the select's class with the operand, and once the condition is
    /// known to be constant (at once, or after values propagate into it) `bcsel-true`
    /// or `bcsel-false` unions the same class with undef, so undef and every operand
    /// refined this way become one class (17.0 = undef = 1.0).
    fn defined_operand(&self, node: &VNode) -> Option<Id> {
        let VNode::Alu {
            op: crate::ir::AluOp::BCsel,
            children,
            ..
        } = node
        else {
            return None;
        };
        let is_undef = |c: Id| {
            self.egraph[c]
                .nodes
                .iter()
                .any(|n| matches!(n, VNode::Undef(_)))
        };
        match children.as_slice() {
            [_, a, b] if is_undef(*b) => Some(*a),
            [_, a, b] if is_undef(*a) => Some(*b),
            _ => None,
        }
    }

    /// Whether lowering is out of time, reading the clock every `POLL_EVERY` calls.
    fn out_of_time(&mut self) -> bool {
        if self.expired || self.deadline.is_none() {
            return self.expired;
        }
        self.polls += 1;
        if self.polls >= POLL_EVERY {
            self.polls = 0;
            self.expired = self.deadline.is_some_and(|d| Instant::now() >= d);
        }
        self.expired
    }
}

impl super::per_emit::Terms for Graph {
    fn node(&self, id: Id) -> VNode {
        self.egraph[id].nodes[0].clone()
    }

    fn add(&mut self, node: VNode) -> Id {
        Graph::add(self, node)
    }
}

type Env = BTreeMap<IoSlot, Option<Id>>;

/// Walks the producer, building each output's final value.
struct ProducerWalk<'a> {
    shader: &'a Shader,
    g: &'a mut Graph,
    terms: Vec<Option<Id>>,
    /// The values whose terms the walk uses (`needed_values`); the others get none.
    needed: Vec<bool>,
    invocation_ids: BTreeSet<Value>,
    pins: &'a mut Pins,
    stored: BTreeSet<IoSlot>,
    xfb: BTreeSet<IoSlot>,
    snapshots: Vec<Env>,
    dynamic_emit: bool,
    /// Each store's component and the vec4 slots it may write.
    ranges: Vec<(IoSlot, Vec<Slot>)>,
    read_back: BTreeSet<IoSlot>,
    /// TCS per-vertex components with a store at a vertex other than
    /// `invocation_id`: the term of every store of the component.
    off_vertex: BTreeMap<IoSlot, Vec<Option<Id>>>,
    /// The term of every TCS per-vertex store, by component.
    per_vertex_terms: BTreeMap<IoSlot, Vec<Option<Id>>>,
}

fn range(io: IoSlot, indirect: &Option<Indirect>) -> Vec<Slot> {
    match indirect {
        Some(ind) => (0..ind.len as u32)
            .filter_map(|i| io.slot.offset(i))
            .collect(),
        None => vec![io.slot],
    }
}

impl ProducerWalk<'_> {
    fn term(&self, v: Value) -> Option<Id> {
        self.terms.get(v.index()).copied().flatten()
    }

    fn needed(&self, v: Value) -> bool {
        self.needed.get(v.index()).copied().unwrap_or(false)
    }

    fn set(&mut self, v: Value, t: Option<Id>) {
        if let Some(slot) = self.terms.get_mut(v.index()) {
            *slot = t;
        }
    }

    fn value_term(&mut self, kind: &InstKind, result: Value, top: bool) -> Option<Id> {
        let bits = self.shader.values.get(result.index()).map(|i| i.bits)?;
        let node = match kind {
            InstKind::Const(c) => Some(VNode::Const {
                bits,
                value: c & bits.mask(),
            }),
            InstKind::Undef => Some(VNode::Undef(bits)),
            InstKind::Alu { op, exact, srcs } => srcs
                .iter()
                .map(|s| self.term(*s))
                .collect::<Option<Operands>>()
                .map(|children| VNode::Alu {
                    op: *op,
                    exact: *exact,
                    children,
                }),
            InstKind::Opaque { op, srcs } if op.purity == Purity::Pure => srcs
                .iter()
                .map(|s| self.term(*s))
                .collect::<Option<Operands>>()
                .map(|children| VNode::Op {
                    op: op.clone(),
                    children,
                }),
            InstKind::LoadUniform { index, half } => Some(VNode::Uniform(*index, *half)),
            InstKind::LoadUbo {
                block,
                offset,
                half,
            } => self.term(*offset).map(|o| VNode::Ubo {
                block: *block,
                half: *half,
                offset: [o],
            }),
            InstKind::LoadInput {
                slot,
                indirect: None,
            } => Some(VNode::Input(*slot)),
            InstKind::LoadSystemValue(sv) => Some(VNode::SysVal(Side::Producer, *sv)),
            // A TCS read of a fixed control point is one value per patch.
            InstKind::LoadPerVertexInput {
                slot,
                vertex,
                indirect: None,
            } if self.shader.stage() == Stage::TessCtrl => self
                .term(*vertex)
                .and_then(|v| self.g.egraph[v].data.konst)
                .map(|vertex| VNode::VertexInput {
                    slot: *slot,
                    vertex,
                }),
            _ => None,
        };
        match node {
            Some(n) => Some(self.g.add(n)),
            // Values outside the region are usable only where they dominate the end.
            None if top => Some(self.g.add(VNode::Opaque {
                value: result.0,
                bits,
            })),
            None => None,
        }
    }

    fn store(&mut self, env: &mut Env, io: IoSlot, value: Value, in_loop: bool) {
        self.stored.insert(io);
        if in_loop {
            self.pins.pin(io, "stored inside a loop");
        }
        env.insert(io, self.term(value));
    }

    fn select(
        &mut self,
        cond: Value,
        io: IoSlot,
        a: Option<Option<Id>>,
        b: Option<Option<Id>>,
    ) -> Option<Id> {
        let mut side = |t: Option<Option<Id>>| match t {
            Some(t) => t,
            None => Some(self.g.add(VNode::Undef(io_bits(io)))),
        };
        let (a, b) = (side(a)?, side(b)?);
        if a == b {
            return Some(a);
        }
        let c = self.term(cond)?;
        Some(self.g.add(VNode::Alu {
            op: crate::ir::AluOp::BCsel,
            exact: false,
            children: smallvec::smallvec![c, a, b],
        }))
    }

    fn walk(&mut self, block: &Block, env: &mut Env, depth: usize, in_loop: bool) {
        for stmt in block {
            if self.g.out_of_time() {
                return;
            }
            match stmt {
                Stmt::Inst(inst) => self.inst(&inst.kind, inst.result, env, depth, in_loop),
                Stmt::If {
                    cond,
                    then_body,
                    else_body,
                    phis,
                    ..
                } => {
                    let (mut t, mut e) = (env.clone(), env.clone());
                    self.walk(then_body, &mut t, depth + 1, in_loop);
                    self.walk(else_body, &mut e, depth + 1, in_loop);
                    let keys: BTreeSet<IoSlot> = t.keys().chain(e.keys()).copied().collect();
                    for io in keys {
                        let merged =
                            self.select(*cond, io, t.get(&io).copied(), e.get(&io).copied());
                        env.insert(io, merged);
                    }
                    for phi in phis {
                        if !self.needed(phi.dst) {
                            continue;
                        }
                        let (a, b) = (self.term(phi.then_val), self.term(phi.else_val));
                        let sel = match (a, b, self.term(*cond)) {
                            (Some(a), Some(b), Some(c)) => Some(self.g.add(VNode::Alu {
                                op: crate::ir::AluOp::BCsel,
                                exact: false,
                                children: smallvec::smallvec![c, a, b],
                            })),
                            _ => None,
                        };
                        let t = sel.or_else(|| self.opaque_if_top(phi.dst, depth == 0));
                        self.set(phi.dst, t);
                    }
                }
                Stmt::Loop { phis, body, .. } => {
                    for phi in phis {
                        if !self.needed(phi.dst) {
                            continue;
                        }
                        let t = self.opaque_if_top(phi.dst, depth == 0);
                        self.set(phi.dst, t);
                    }
                    let mut inner = env.clone();
                    self.walk(body, &mut inner, depth + 1, true);
                    for (io, t) in inner {
                        if env.get(&io) != Some(&t) {
                            env.insert(io, None);
                        }
                    }
                }
                Stmt::Break { .. } | Stmt::Continue { .. } => {}
            }
        }
    }

    fn opaque_if_top(&mut self, v: Value, top: bool) -> Option<Id> {
        let bits = self.shader.values.get(v.index())?.bits;
        top.then(|| self.g.add(VNode::Opaque { value: v.0, bits }))
    }

    fn inst(
        &mut self,
        kind: &InstKind,
        result: Option<Value>,
        env: &mut Env,
        depth: usize,
        in_loop: bool,
    ) {
        let tcs = self.shader.stage() == Stage::TessCtrl;
        match kind {
            InstKind::StoreOutput {
                slot,
                value,
                indirect,
                xfb,
                ..
            } => {
                self.ranges.push((*slot, range(*slot, indirect)));
                if let Some(ind) = indirect {
                    self.pins
                        .pin_indirect(*slot, ind, "indirectly indexed store");
                }
                if xfb.is_some() {
                    self.xfb.insert(*slot);
                }
                if tcs && !slot.slot.is_patch() {
                    self.pins
                        .pin(*slot, "TCS store_output of a per-vertex slot");
                }
                self.store(env, *slot, *value, in_loop);
            }
            InstKind::StorePerVertexOutput {
                slot,
                value,
                vertex,
                indirect,
            } => {
                self.ranges.push((*slot, range(*slot, indirect)));
                if let Some(ind) = indirect {
                    self.pins
                        .pin_indirect(*slot, ind, "indirectly indexed store");
                }
                if !self.invocation_ids.contains(vertex) {
                    self.off_vertex.insert(*slot, vec![]);
                }
                let t = self.term(*value);
                self.per_vertex_terms.entry(*slot).or_default().push(t);
                self.store(env, *slot, *value, in_loop);
            }
            InstKind::LoadOutput { slot, indirect, .. } => {
                // A direct read-back pins only its component, so packing other
                // varyings next to it does not pin them on the next run.
                if indirect.is_none() {
                    self.pins.pin(*slot, "read back by the producer");
                }
                for s in range(*slot, indirect) {
                    if indirect.is_some() {
                        self.pins.pin_slot(s, "read back by the producer");
                    }
                    self.read_back.insert(IoSlot { slot: s, ..*slot });
                }
            }
            InstKind::EmitVertex => {
                // An emit inside an `if` is one more emit site: its vertex carries the
                // values stored on the way to it (the branch's own environment), and
                // emission stores them right before it. Only loops make the sites
                // unknown.
                if in_loop {
                    self.dynamic_emit = true;
                }
                self.snapshots.push(env.clone());
            }
            _ => {}
        }
        if let Some(r) = result.filter(|r| self.needed(*r)) {
            let t = self.value_term(kind, r, depth == 0);
            self.set(r, t);
        }
    }
}

/// The producer values whose terms the walk reads: the operands of output stores and
/// `if` conditions (a store under an `if` becomes a select on it), and, transitively,
/// the operands of needed values and of needed `if` phis. Nothing else can reach a
/// stored value, so a term for it would only grow the graph that `keep_region` then
/// throws away: on generated pairs, where most instructions are dead, that graph was
/// the largest structure of the whole run (docs/performance.md). One backward pass:
/// in SSA every use comes after its definition, an `if`'s phis after its branches.
fn needed_values(shader: &Shader) -> Vec<bool> {
    let mut need = vec![false; shader.values.len()];
    mark_needed(&shader.body, &mut need);
    need
}

fn mark_needed(block: &[Stmt], need: &mut [bool]) {
    fn mark(need: &mut [bool], v: Value) {
        if let Some(n) = need.get_mut(v.index()) {
            *n = true;
        }
    }
    let is = |need: &[bool], v: Value| need.get(v.index()).copied().unwrap_or(false);
    for stmt in block.iter().rev() {
        match stmt {
            Stmt::Inst(inst) => {
                let store = inst.kind.output_store().is_some();
                if store || inst.result.is_some_and(|r| is(need, r)) {
                    for v in inst.kind.operands() {
                        mark(need, v);
                    }
                }
            }
            Stmt::If {
                cond,
                then_body,
                else_body,
                phis,
                ..
            } => {
                mark(need, *cond);
                for phi in phis {
                    if is(need, phi.dst) {
                        mark(need, phi.then_val);
                        mark(need, phi.else_val);
                    }
                }
                mark_needed(else_body, need);
                mark_needed(then_body, need);
            }
            Stmt::Loop { body, .. } => mark_needed(body, need),
            Stmt::Break { .. } | Stmt::Continue { .. } => {}
        }
    }
}

fn invocation_ids(shader: &Shader) -> BTreeSet<Value> {
    let mut out = BTreeSet::new();
    shader.for_each_inst(|i| {
        if let (InstKind::LoadSystemValue(SystemValue::InvocationId), Some(r)) = (&i.kind, i.result)
        {
            out.insert(r);
        }
    });
    out
}

struct ProducerModel {
    outputs: BTreeMap<IoSlot, Option<Id>>,
    stored: BTreeSet<IoSlot>,
    ranges: Vec<(IoSlot, Vec<Slot>)>,
    read_back: BTreeSet<IoSlot>,
    xfb: BTreeSet<IoSlot>,
    gs_emits: Option<usize>,
    /// TCS per-vertex components stored at a vertex other than `invocation_id`, with
    /// the term of every store of the component (`pin_tcs_off_vertex_outputs`).
    off_vertex: BTreeMap<IoSlot, Vec<Option<Id>>>,
}

fn lower_producer(shader: &Shader, g: &mut Graph, pins: &mut Pins) -> ProducerModel {
    let mut w = ProducerWalk {
        shader,
        g,
        terms: vec![None; shader.values.len()],
        needed: needed_values(shader),
        invocation_ids: invocation_ids(shader),
        pins,
        stored: BTreeSet::new(),
        xfb: BTreeSet::new(),
        snapshots: vec![],
        dynamic_emit: false,
        ranges: vec![],
        read_back: BTreeSet::new(),
        off_vertex: BTreeMap::new(),
        per_vertex_terms: BTreeMap::new(),
    };
    let mut env = Env::new();
    w.walk(&shader.body, &mut env, 0, false);
    let gs = shader.stage() == Stage::Geometry;
    let mut off_vertex = std::mem::take(&mut w.off_vertex);
    for (io, terms) in off_vertex.iter_mut() {
        *terms = w.per_vertex_terms.remove(io).unwrap_or_default();
    }
    let mut outputs = BTreeMap::new();
    for io in w.stored.clone() {
        let term = if gs {
            gs_output(&mut w, io)
        } else {
            env.get(&io).copied().flatten()
        };
        if term.is_none() {
            w.pins
                .pin(io, "stored value not expressible at the output point");
        }
        outputs.insert(io, term);
    }
    ProducerModel {
        outputs,
        stored: w.stored,
        ranges: w.ranges,
        read_back: w.read_back,
        xfb: w.xfb,
        gs_emits: gs.then_some(w.snapshots.len()),
        off_vertex,
    }
}

fn gs_output(w: &mut ProducerWalk<'_>, io: IoSlot) -> Option<Id> {
    if w.dynamic_emit {
        w.pins.pin(io, "GS emits inside a loop");
        return None;
    }
    let undef = w.g.add(VNode::Undef(io_bits(io)));
    let mut per_emit = vec![];
    for snap in w.snapshots.clone() {
        per_emit.push(match snap.get(&io) {
            Some(t) => (*t)?,
            None => undef,
        });
    }
    Some(super::per_emit::factor(w.g, &per_emit, undef))
}

/// The qualifier a consumer load reads its slot with (pinning decisions).
fn qualifier(kind: &InstKind) -> Option<(IoSlot, String, Option<&Indirect>)> {
    match kind {
        InstKind::LoadInput { slot, indirect } => Some((*slot, "flat".into(), indirect.as_ref())),
        InstKind::LoadInterpolatedInput {
            slot,
            mode,
            indirect,
            ..
        } => Some((*slot, format!("{mode:?}"), indirect.as_ref())),
        InstKind::LoadPerVertexInput { slot, indirect, .. } => {
            Some((*slot, "vertex".into(), indirect.as_ref()))
        }
        _ => None,
    }
}

/// Pins the consumer forces: indirect reads, at_offset/at_sample, mixed qualifiers,
/// and slots whose role keeps their loads.
fn consumer_pins(
    p: &Pipeline,
    prod: &ProducerModel,
    g: &Graph,
    pins: &mut Pins,
    pin_exported_reads: bool,
) -> BTreeSet<IoSlot> {
    let consumer = p.consumer.stage();
    let mut quals: BTreeMap<IoSlot, BTreeSet<String>> = BTreeMap::new();
    let mut read = BTreeSet::new();
    p.consumer.for_each_inst(|i| {
        let Some((io, q, ind)) = qualifier(&i.kind) else {
            return;
        };
        read.insert(io);
        if let Some(ind) = ind {
            pins.pin_indirect(io, ind, "indirectly indexed load");
            for k in 0..ind.len as u32 {
                if let Some(s) = io.slot.offset(k) {
                    read.extend((0..4).map(|c| IoSlot::half(s, c, io.half)));
                }
            }
        }
        if let InstKind::LoadInterpolatedInput { mode, .. } = &i.kind {
            if matches!(mode.loc, InterpLoc::AtOffset | InterpLoc::AtSample) {
                pins.pin(io, "read with at_offset/at_sample");
            }
            // Flat or interpolated by a draw-time state: no motion law holds for both
            // readings at once, so the read stays as written.
            if mode.interp == crate::ir::Interp::Color {
                pins.pin(io, "read with colour (shade-model) interpolation");
            }
        }
        quals.entry(io).or_default().insert(q);
    });
    for (io, q) in &quals {
        if q.len() > 1 {
            pins.pin(*io, "read with different qualifiers");
        }
        let written = prod.stored.contains(io);
        match role(io.slot, p.producer.stage(), consumer) {
            Role::FixedFunction => {
                pins.pin(*io, "supplied by the rasterizer");
            }
            // Under a viewport mask each broadcast copy of a primitive reads its own
            // viewport index (and, with a viewport-relative layer, its own layer):
            // neither is the producer's stored value, nor 0 when unwritten.
            Role::SysVal
                if matches!(io.slot, Slot::Layer | Slot::Viewport)
                    && writes_viewport_mask(prod) =>
            {
                pins.pin(*io, "depends on the viewport-mask copy of the primitive");
            }
            Role::SysVal if written && !fs_readable_sysval(io.slot) => {
                pins.pin(*io, "system-value output read by the consumer");
            }
            Role::TessLevel
                if p.producer.stage() != Stage::TessCtrl
                    || (written && !propagatable(prod, g, *io)) =>
            {
                pins.pin(*io, "tessellation level read by the consumer");
            }
            Role::Tex if io.comp < 2 || (written && !tex_coord_default(prod, g, *io)) => {
                pins.pin(*io, "TEXn input (coord replace)");
            }
            Role::Color if colour_constant(prod, g, *io).is_none() && colour_written(prod, *io) => {
                let partner = match io.slot {
                    Slot::Col(n) => Slot::Bfc(n),
                    Slot::Bfc(n) => Slot::Col(n),
                    s => s,
                };
                pins.pin(*io, "colour input");
                pins.pin(
                    IoSlot {
                        slot: partner,
                        ..*io
                    },
                    "colour input",
                );
            }
            _ => {}
        }
    }
    if pin_exported_reads {
        pin_beside_pinned_distances(prod, g, &read, pins);
    }
    read
}

/// Pins the other read components of a clip- or cull-distance vec4 that keeps a
/// pinned read. That vec4 stays exported as a varying for the pinned component, and
/// the packer cannot fill it, so a component read from it costs nothing more there;
/// moved to a VARn, it would take a new component and maybe a new vec4. A value
/// propagation can take (within the limit) is left free: its read can go altogether.
/// Only a repair round asks for it (`optimize`, when the first round needs more
/// vec4s than the input): elsewhere motion may drop the component, which a pin
/// would forbid.
fn pin_beside_pinned_distances(
    prod: &ProducerModel,
    g: &Graph,
    read: &BTreeSet<IoSlot>,
    pins: &mut Pins,
) {
    let kept: BTreeSet<Slot> = read
        .iter()
        .filter(|io| matches!(io.slot, Slot::ClipDist(_) | Slot::CullDist(_)))
        .filter(|io| pins.reason(**io).is_some())
        .map(|io| io.slot)
        .collect();
    for io in read.iter().filter(|io| kept.contains(&io.slot)) {
        if !propagatable(prod, g, *io) {
            pins.pin(
                *io,
                "shares its vec4 with a pinned read, which keeps that vec4 exported",
            );
        }
    }
}

/// FS-readable system values (reference/000 §3): the FS read may be propagated,
/// deduplicated or moved to a VARn like any varying, while the store stays for the
/// rasterizer (as no_varying once the FS no longer reads it).
fn fs_readable_sysval(slot: Slot) -> bool {
    matches!(
        slot,
        Slot::ClipDist(_) | Slot::CullDist(_) | Slot::Layer | Slot::Viewport
    )
}

/// Whether the producer stores `VIEWPORT_MASK`, broadcasting each primitive to the
/// viewports of its mask.
fn writes_viewport_mask(prod: &ProducerModel) -> bool {
    prod.stored.contains(&IoSlot::new(Slot::ViewportMask, 0))
}

/// The class every store of `io` stores, when it is one unpinned class.
fn stored_class(prod: &ProducerModel, io: IoSlot) -> Option<Id> {
    prod.outputs.get(&io).copied().flatten()
}

/// A tessellation level read may leave the graph's pins only to be propagated (Mesa
/// and AMD never move it to a PATCHn): its stored value is a uniform expression
/// within the consumer's propagation budget.
fn propagatable(prod: &ProducerModel, g: &Graph, io: IoSlot) -> bool {
    let Some(id) = stored_class(prod, io) else {
        return false;
    };
    let data = &g.egraph[id].data;
    let limit = g.egraph.analysis.propagation_limit.unwrap_or(u32::MAX);
    data.konst.is_some() || (data.is_free() && data.free_cost.is_some_and(|c| c <= limit))
}

/// TEXn.z/.w written with the values coord replace supplies (0 and 1): the read
/// may take the constant (reference/000 §3). Anything else stays as written.
fn tex_coord_default(prod: &ProducerModel, g: &Graph, io: IoSlot) -> bool {
    let want = match io.comp {
        2 => 0.0,
        3 => 1.0,
        _ => return false,
    };
    let Some(id) = stored_class(prod, io) else {
        return false;
    };
    let data = &g.egraph[id].data;
    match (data.konst, data.bits) {
        (Some(k), Some(bits @ (BitSize::B32 | BitSize::B16))) => crate::ir::to_f32(k, bits) == want,
        _ => false,
    }
}

/// The front and back colour addresses two-sided selection pairs for a colour read.
fn colour_pair(io: IoSlot) -> Option<(IoSlot, IoSlot)> {
    match io.slot {
        Slot::Col(n) => Some((
            io,
            IoSlot {
                slot: Slot::Bfc(n),
                ..io
            },
        )),
        _ => None,
    }
}

/// Whether the producer stores the front or the back colour a read may return.
fn colour_written(prod: &ProducerModel, io: IoSlot) -> bool {
    let (front, back) = colour_pair(io).unwrap_or((io, io));
    prod.stored.contains(&front) || prod.stored.contains(&back)
}

/// The constant a colour read may become (reference/000 §3): the stored colours are
/// constants in [0,1] (clamping leaves them alone), and when both the front and the
/// back colour are written they are the same class (two-sided selection may return
/// either). An unwritten one is undefined, so the written one stands for both.
fn colour_constant(prod: &ProducerModel, g: &Graph, io: IoSlot) -> Option<Id> {
    let (front, back) = colour_pair(io)?;
    let value = |at: IoSlot| -> Option<Option<Id>> {
        prod.stored
            .contains(&at)
            .then(|| prod.outputs.get(&at).copied().flatten())
    };
    let (f, b) = (value(front), value(back));
    let id = match (f, b) {
        (Some(Some(f)), Some(Some(b))) if g.egraph.find(f) == g.egraph.find(b) => f,
        (Some(Some(x)), None) | (None, Some(Some(x))) => x,
        _ => return None,
    };
    let data = &g.egraph[id].data;
    match (data.konst, data.bits) {
        (Some(k), Some(bits @ (BitSize::B32 | BitSize::B16))) => (0.0..=1.0)
            .contains(&crate::ir::to_f32(k, bits))
            .then_some(id),
        _ => None,
    }
}

struct ConsumerWalk<'a> {
    p: &'a Pipeline,
    g: &'a mut Graph,
    prod: &'a ProducerModel,
    pins: &'a Pins,
    terms: Vec<Option<Id>>,
    loads: Vec<InputLoad>,
    region: BTreeSet<Value>,
}

impl ConsumerWalk<'_> {
    fn term(&self, v: Value) -> Option<Id> {
        self.terms.get(v.index()).copied().flatten()
    }

    /// The node for reading `io` through `mode`, or `None` when the load must stay.
    fn input(&mut self, io: IoSlot, mode: XferMode, children: Vec<Id>) -> Option<Id> {
        if self.pins.reason(io).is_some() {
            return None;
        }
        let consumer = self.p.consumer.stage();
        let bits = io_bits(io);
        let written = self.prod.stored.contains(&io);
        let role = role(io.slot, self.p.producer.stage(), consumer);
        let unwritten_value = match (role, io.comp) {
            (Role::SysVal, _) if matches!(io.slot, Slot::Layer | Slot::Viewport) => {
                Some(VNode::Const { bits, value: 0 })
            }
            (Role::Tex, 2) => Some(VNode::Const {
                bits,
                value: crate::ir::from_f32(0.0, bits),
            }),
            (Role::Tex, 3) => Some(VNode::Const {
                bits,
                value: crate::ir::from_f32(1.0, bits),
            }),
            _ => Some(VNode::Undef(bits)),
        };
        if role == Role::Color && colour_written(self.prod, io) {
            return colour_constant(self.prod, self.g, io);
        }
        if !written {
            return unwritten_value.map(|n| self.g.add(n));
        }
        let p = self.prod.outputs.get(&io).copied().flatten()?;
        let m = self.g.add(VNode::Mode(mode, children.into()));
        Some(self.g.add(VNode::Xfer([m, p])))
    }

    fn load_term(&mut self, kind: &InstKind) -> Option<Option<Id>> {
        let consumer = self.p.consumer.stage();
        Some(match kind {
            InstKind::LoadInput {
                slot,
                indirect: None,
            } => {
                let mode = if slot.slot.is_patch() {
                    XferMode::Patch
                } else if consumer.has_per_vertex_inputs() {
                    return Some(None);
                } else {
                    XferMode::Flat
                };
                self.input(*slot, mode, vec![])
            }
            InstKind::LoadInterpolatedInput {
                slot,
                mode,
                operands,
                indirect: None,
            } if operands.is_empty() => self.input(*slot, XferMode::Interp(*mode), vec![]),
            InstKind::LoadPerVertexInput {
                slot,
                vertex,
                indirect: None,
            } => match self.term(*vertex) {
                Some(v) => self.input(*slot, XferMode::Vertex, vec![v]),
                None => None,
            },
            _ => return None,
        })
    }

    fn value(&mut self, kind: &InstKind, bits: BitSize) -> Option<Id> {
        if let Some(t) = self.load_term(kind) {
            return t;
        }
        let node = match kind {
            InstKind::Const(c) => VNode::Const {
                bits,
                value: c & bits.mask(),
            },
            InstKind::Undef => VNode::Undef(bits),
            InstKind::Alu { op, exact, srcs } => VNode::Alu {
                op: *op,
                exact: *exact,
                children: srcs
                    .iter()
                    .map(|s| self.term(*s))
                    .collect::<Option<Operands>>()?,
            },
            InstKind::Opaque { op, srcs } if op.purity == Purity::Pure => VNode::Op {
                op: op.clone(),
                children: srcs
                    .iter()
                    .map(|s| self.term(*s))
                    .collect::<Option<Operands>>()?,
            },
            InstKind::LoadUniform { index, half } => VNode::Uniform(*index, *half),
            InstKind::LoadUbo {
                block,
                offset,
                half,
            } => VNode::Ubo {
                block: *block,
                half: *half,
                offset: [self.term(*offset)?],
            },
            InstKind::LoadSystemValue(sv) => VNode::SysVal(Side::Consumer, *sv),
            _ => return None,
        };
        Some(self.g.add(node))
    }

    fn run(&mut self) {
        let shader = &self.p.consumer;
        let mut insts = vec![];
        shader.for_each_inst(|i| insts.push(i));
        for inst in insts {
            if self.g.out_of_time() {
                return;
            }
            let Some(r) = inst.result else { continue };
            let Some(bits) = shader.values.get(r.index()).map(|v| v.bits) else {
                continue;
            };
            let t = self.value(&inst.kind, bits);
            if let Some(id) = t {
                self.region.insert(r);
                if let Some((io, _, _)) = qualifier(&inst.kind) {
                    self.loads.push(InputLoad {
                        value: r,
                        slot: io,
                        class: id,
                    });
                }
            }
            if let Some(slot) = self.terms.get_mut(r.index()) {
                *slot = t;
            }
        }
    }
}

/// Consumer values in the region that something outside the region uses.
fn roots(shader: &Shader, region: &BTreeSet<Value>) -> BTreeSet<Value> {
    let mut out = BTreeSet::new();
    for visit in walk(&shader.body) {
        let Visit::Enter(stmt) = visit else { continue };
        if matches!(stmt, Stmt::Inst(i) if i.result.is_some_and(|r| region.contains(&r))) {
            continue;
        }
        out.extend(stmt.own_uses().into_iter().filter(|v| region.contains(v)));
    }
    out
}

/// Lowers `p` into an e-graph whose analysis uses `analysis` (propagation limit, …).
/// A consumer load that cannot enter the graph pins its slot, which can change what
/// enters the graph, so lowering repeats until no new pin appears.
///
/// With `pin_exported_reads`, consumer reads of outputs that stay exported anyway are
/// pinned: outputs captured by transform feedback, and the components read beside a
/// pinned clip- or cull-distance read (`pin_beside_pinned_distances`). Their stores
/// then serve the consumer too, which `optimize` uses when giving them varyings of
/// their own would need more vec4 slots than the input.
pub fn lower(p: &Pipeline, analysis: VAnalysis, pin_exported_reads: bool) -> Lowered {
    lower_until(p, analysis, pin_exported_reads, None, Region::Kept).0
}

/// [`lower`] that gives up at `deadline`: `None` when it passed before the graph was
/// complete (the walks poll the clock every few hundred statements).
pub fn lower_within(
    p: &Pipeline,
    analysis: VAnalysis,
    pin_exported_reads: bool,
    deadline: Option<Instant>,
) -> Option<Lowered> {
    let (lowered, expired) = lower_until(p, analysis, pin_exported_reads, deadline, Region::Kept);
    (!expired).then_some(lowered)
}

/// [`lower_within`] for a graph that is only priced, never saturated: it keeps what
/// lies outside the region. Pricing walks from the consumer's roots and loads, the
/// region's own starts, so it reads the same classes and nodes either way; the
/// compaction would rebuild the graph (as long again as lowering it) for nothing.
pub fn lower_for_pricing_within(
    p: &Pipeline,
    analysis: VAnalysis,
    deadline: Option<Instant>,
) -> Option<Lowered> {
    let (lowered, expired) = lower_until(p, analysis, false, deadline, Region::Whole);
    (!expired).then_some(lowered)
}

/// Whether a finished lowering is compacted to the region (`keep_region`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Region {
    /// Only what the consumer's roots and loads reach: the graph saturation runs on.
    Kept,
    /// Everything lowered: a graph only priced.
    Whole,
}

/// Lowering until done or past `deadline`; the flag says the latter (the graph is
/// then incomplete).
fn lower_until(
    p: &Pipeline,
    analysis: VAnalysis,
    pin_exported_reads: bool,
    deadline: Option<Instant>,
    region: Region,
) -> (Lowered, bool) {
    let mut pins = Pins::default();
    loop {
        let (lowered, missing, expired) = lower_once(
            p,
            analysis.clone(),
            pins.clone(),
            deadline,
            pin_exported_reads,
        );
        if expired {
            return (lowered, true);
        }
        let mut grew = false;
        for io in missing {
            grew |= pins.pin(io, "load not representable in the graph");
        }
        if pin_exported_reads {
            for io in lowered.xfb.intersection(&lowered.read) {
                grew |= pins.pin(*io, "transform feedback output also read by the consumer");
            }
        }
        if !grew {
            let mut kept = match region {
                Region::Kept => keep_region(lowered),
                Region::Whole => lowered,
            };
            kept.egraph.analysis.consumer_roots = kept.roots.values().copied().collect();
            return (kept, false);
        }
    }
}

/// The region rule (`super::region`): keeps only what the consumer's roots and input
/// loads reach, and the outputs among it. Loads count as starts even when their value
/// is dead, since the report and the as-written price still read their classes.
fn keep_region(l: Lowered) -> Lowered {
    let starts = l
        .roots
        .values()
        .chain(l.loads.iter().map(|ld| &ld.class))
        .copied()
        .collect::<Vec<_>>();
    let Some(c) = super::region::compact(&l.egraph, &l.original, starts) else {
        return l;
    };
    let old = &l.egraph;
    let class = |id: Id| c.class(old, id);
    let roots = l
        .roots
        .iter()
        .map(|(v, id)| Some((*v, class(*id)?)))
        .collect();
    let loads = l
        .loads
        .iter()
        .map(|ld| {
            Some(InputLoad {
                class: class(ld.class)?,
                ..ld.clone()
            })
        })
        .collect();
    let outputs = l
        .outputs
        .iter()
        .filter_map(|(io, id)| Some((*io, class(*id)?)))
        .collect();
    let (Some(roots), Some(loads)) = (roots, loads) else {
        return l;
    };
    Lowered {
        egraph: c.egraph,
        original: c.original,
        roots,
        loads,
        outputs,
        ..l
    }
}

/// What is left of a lowering abandoned at its deadline: the partial graph and
/// nothing else (no roots, loads or outputs), never to be used for optimizing.
fn abandoned(g: Graph, pins: Pins) -> Lowered {
    Lowered {
        egraph: g.egraph,
        roots: BTreeMap::new(),
        region: BTreeSet::new(),
        loads: vec![],
        outputs: BTreeMap::new(),
        stored: BTreeSet::new(),
        xfb: BTreeSet::new(),
        read: BTreeSet::new(),
        needed: BTreeSet::new(),
        pins,
        original: g.original,
        gs_emits: None,
    }
}

/// A TCS patch output is one value for the whole patch, so it may enter the graph
/// only when every invocation that stores it stores the same invocation-independent
/// value: free, or built by pure ops from free values, convergent system values
/// (`primitive_id`, `patch_vertices_in`) and control points read at a constant index
/// (the analysis' `convergent_p`; never `invocation_id`, `load_output` or loop
/// values). A store gated by a condition (typically `invocation_id == 0`) with
/// nothing stored on the other path counts as storing its value: emission stores it
/// unconditionally from every invocation at the end, which writes the same value.
/// Anything else is pinned.
fn pin_tcs_patch_outputs(p: &Pipeline, prod: &mut ProducerModel, g: &Graph, pins: &mut Pins) {
    if p.producer.stage() != Stage::TessCtrl {
        return;
    }
    for (io, t) in prod.outputs.iter_mut() {
        if !io.slot.is_patch() {
            continue;
        }
        *t = t.and_then(|id| ungated_invariant(g, id));
        if t.is_none() {
            pins.pin(*io, "TCS patch output that may differ between invocations");
        }
    }
}

/// A TCS per-vertex output stored at a vertex other than the invocation's own
/// (`out[2].x = ...`) holds, at each vertex, whatever the last invocation that
/// stored there wrote. It may enter the graph only when every store of the
/// component stores one invocation-independent value `t` (as for patch outputs):
/// then every written vertex holds `t`, unwritten ones are undefined, and emission
/// storing `t` at `invocation_id` from every invocation writes `t` at every vertex,
/// a refinement. So such outputs are removed when dead, propagated when `t` is free,
/// deduplicated and moved like any other. Anything else pins the component, as
/// stores of one invocation to another's vertex race. Only the component: the other
/// components of its vec4 are separate outputs that each invocation writes at its own
/// vertex (or pins itself), so packing other varyings next to a pinned one does not
/// pin them on the next run, which made the first round short of its fixed point.
fn pin_tcs_off_vertex_outputs(prod: &mut ProducerModel, g: &Graph, pins: &mut Pins) {
    let eg = &g.egraph;
    for (io, terms) in &prod.off_vertex {
        let first = terms.first().copied().flatten().map(|t| eg.find(t));
        let one = first.filter(|t| {
            terms.iter().all(|u| u.map(|u| eg.find(u)) == Some(*t))
                && (eg[*t].data.is_free() || eg[*t].data.convergent_p)
        });
        let out = prod.outputs.get_mut(io);
        match (one, out) {
            (Some(t), Some(out)) if out.is_some() => *out = Some(t),
            (_, out) => {
                if let Some(out) = out {
                    *out = None;
                }
                pins.pin(*io, "per-vertex store not at invocation_id");
            }
        }
    }
}

fn ungated_invariant(g: &Graph, id: Id) -> Option<Id> {
    // A store under `if (invocation_id == 0)` is already its stored value here: the
    // select with the undef of the other invocations was refined at `Graph::add`.
    let data = &g.egraph[id].data;
    (data.is_free() || data.convergent_p).then_some(id)
}

fn lower_once(
    p: &Pipeline,
    analysis: VAnalysis,
    mut pins: Pins,
    deadline: Option<Instant>,
    pin_exported_reads: bool,
) -> (Lowered, Vec<IoSlot>, bool) {
    let mut g = Graph {
        egraph: VGraph::new(analysis),
        original: vec![],
        deadline,
        polls: 0,
        expired: false,
    };
    let mut prod = lower_producer(&p.producer, &mut g, &mut pins);
    if g.expired {
        return (abandoned(g, pins), vec![], true);
    }
    pin_tcs_patch_outputs(p, &mut prod, &g, &mut pins);
    pin_tcs_off_vertex_outputs(&mut prod, &g, &mut pins);
    let read = consumer_pins(p, &prod, &g, &mut pins, pin_exported_reads);
    let mut cw = ConsumerWalk {
        p,
        g: &mut g,
        prod: &prod,
        pins: &pins,
        terms: vec![None; p.consumer.values.len()],
        loads: vec![],
        region: BTreeSet::new(),
    };
    cw.run();
    let (loads, region, terms) = (cw.loads, cw.region, cw.terms);
    if g.expired {
        return (abandoned(g, pins), vec![], true);
    }
    let mut missing = vec![];
    p.consumer.for_each_inst(|i| {
        let outside = i.result.is_some_and(|r| !region.contains(&r));
        if let (true, Some((io, _, _))) = (outside, qualifier(&i.kind)) {
            if pins.reason(io).is_none() && colour_written(&prod, io) {
                missing.push(io);
            }
        }
    });
    let mut root_map = BTreeMap::new();
    for v in roots(&p.consumer, &region) {
        if let Some(Some(id)) = terms.get(v.index()) {
            root_map.insert(v, *id);
        }
    }
    let mut outputs = BTreeMap::new();
    for (io, t) in &prod.outputs {
        if let (Some(t), None) = (t, pins.reason(*io)) {
            outputs.insert(*io, *t);
        }
    }
    let mut needed = BTreeSet::new();
    for (io, slots) in &prod.ranges {
        let used = |s: &Slot| {
            let read_as = |slot: Slot| read.contains(&IoSlot { slot, ..*io });
            // Two-sided lighting: a read front colour may come from the back colour.
            let partner = match *s {
                Slot::Bfc(n) => Some(Slot::Col(n)),
                Slot::Col(n) => Some(Slot::Bfc(n)),
                _ => None,
            };
            // The FS never sees a store to a slot the rasterizer supplies.
            let supplied = role(*s, p.producer.stage(), p.consumer.stage()) == Role::FixedFunction;
            !supplied && (read_as(*s) || partner.is_some_and(read_as))
                || prod.read_back.contains(&IoSlot { slot: *s, ..*io })
        };
        if slots.iter().any(used) {
            needed.insert(*io);
        }
    }
    g.egraph.rebuild();
    let expired = g.expired || deadline.is_some_and(|d| Instant::now() >= d);
    let lowered = Lowered {
        egraph: g.egraph,
        roots: root_map,
        region,
        loads,
        outputs,
        stored: prod.stored,
        xfb: prod.xfb,
        read,
        needed,
        pins,
        original: g.original,
        gs_emits: prod.gs_emits,
    };
    (lowered, missing, expired)
}

/// The lowered graphs of the generator's sample pairs (one of every stage pair), for
/// the scheduler's and saturation's tests.
#[cfg(test)]
pub(crate) fn sample_graphs() -> Vec<VGraph> {
    crate::gen::sample_pairs()
        .iter()
        .map(|pair| {
            let analysis = VAnalysis {
                producer_is_gs: pair.producer.stage() == Stage::Geometry,
                ..VAnalysis::default()
            };
            lower(pair, analysis, false).egraph
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::lower;
    use crate::egraph::analysis::VAnalysis;
    use crate::ir::IoSlot;

    /// A TCS storing an invocation-dependent value at control point 0 (`VAR0.x`) and a
    /// uniform at its own vertex in the same vec4 (`VAR0.y`), both read by the TES.
    const OFF_VERTEX: &str = "(pair (uniforms 1)
  (producer tcs (input_vertices 3) (output_vertices 3)
    (%k0 = const 32 0)
    (%id = load_system_value invocation_id)
    (%a = load_per_vertex_input VAR0.x %id)
    (store_per_vertex_output VAR0.x %a %k0)
    (%u = load_uniform 0)
    (store_per_vertex_output VAR0.y %u %id))
  (consumer tes (domain triangles) (input_vertices 3)
    (%k0 = const 32 0)
    (%x = load_per_vertex_input VAR0.x %k0)
    (%y = load_per_vertex_input VAR0.y %k0)
    (%s = fadd %x %y)
    (store_output POS.x %s)))";

    fn io(name: &str) -> IoSlot {
        name.parse().expect("a slot name")
    }

    #[test]
    fn an_off_vertex_store_pins_its_component_only() {
        let pair = crate::text::parse(OFF_VERTEX, None).expect("test pair parses");
        let lowered = lower(&pair, VAnalysis::default(), false);
        let why = lowered.pins.reason(io("VAR0.x"));
        assert_eq!(why, Some("per-vertex store not at invocation_id"));
        // The uniform next to it stays free to propagate in this round; pinning the
        // vec4 left that to a second round on the re-packed output.
        assert_eq!(lowered.pins.reason(io("VAR0.y")), None);
    }
}
