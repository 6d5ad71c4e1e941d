//! DAG extraction: one node per (e-class, stage) so that a subterm shared by several
//! roots is paid once, each node charged to the stage that computes it, and varyings
//! charged by estimated packed vec4 slots. A bottom-up fixed point gives a first
//! choice; local search then flips single choices and keeps a flip when the whole-DAG
//! cost drops. Seeded with the as-written solution, the result is never costlier than
//! the input under the model.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use egg::{Id, Language};

use super::cost::{Cost, CostModel};
use crate::egraph::{VGraph, VNode, XferMode};
use crate::ir::{BitSize, Stage, StageInfo};

/// Where a chosen node runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ctx {
    /// In the producer.
    P,
    /// In the consumer.
    C,
}

/// How a varying is received; with the producer class it identifies one varying.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VaryingKind {
    /// FS flat input.
    Flat,
    /// FS interpolated input with this qualifier.
    Interp(crate::ir::InterpMode),
    /// Per-vertex input of a TCS/TES/GS.
    PerVertex,
    /// Per-patch input of a TES.
    Patch,
}

/// One varying a selection needs: how it is read and the producer class it carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VaryingKey {
    /// How it is read.
    pub kind: VaryingKind,
    /// The producer value (canonical class).
    pub value: Id,
    /// Its size.
    pub bits: BitSize,
}

/// A choice of node per (class, stage).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    /// The chosen (canonical) node of each class in each stage.
    pub choice: BTreeMap<(Id, Ctx), VNode>,
}

/// The whole-DAG cost of a selection.
#[derive(Clone, Debug, PartialEq)]
pub struct DagCost {
    /// Total cost (`Cost::INFINITE` for a cyclic selection).
    pub total: Cost,
    /// ALU cost charged to the producer.
    pub producer_alu: Cost,
    /// ALU cost charged to the consumer.
    pub consumer_alu: Cost,
    /// The varyings the selection reads, sorted.
    pub varyings: Vec<VaryingKey>,
    /// Estimated packed vec4 slots.
    pub slots: u64,
}

/// The inputs of one extraction.
pub struct Problem<'a> {
    /// The saturated e-graph.
    pub egraph: &'a VGraph,
    /// Consumer roots (canonical classes).
    pub roots: Vec<Id>,
    /// The cost model.
    pub model: &'a CostModel,
    /// The consumer's stage parameters.
    pub consumer: &'a StageInfo,
    /// The as-written solution (upper bound), if known.
    pub seed: Option<Selection>,
    /// The number of static emits when the producer is a GS. Emission stores the
    /// varyings before every emit, so producer work that differs per emit runs once
    /// per emit that reaches it (a `per-emit` node routes each emit to one branch);
    /// work that is the same at every emit runs once (`emit_runs`).
    pub gs_emits: Option<usize>,
    /// When the whole run's time budget ends: extraction returns the best valid
    /// selection found by then (`None`: no time budget, only the evaluation counts).
    pub deadline: Option<Instant>,
}

impl<'a> Problem<'a> {
    /// A problem over `roots` with no seed and no GS producer (set the public fields
    /// for those).
    pub fn new(
        egraph: &'a VGraph,
        roots: Vec<Id>,
        model: &'a CostModel,
        consumer: &'a StageInfo,
    ) -> Problem<'a> {
        Problem {
            egraph,
            roots,
            model,
            consumer,
            seed: None,
            gs_emits: None,
            deadline: None,
        }
    }

    /// Whether the run's time budget is spent.
    pub fn past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// A tree-cost estimate of running `node` in `ctx`: its ALU cost, times the
    /// number of emits for GS producer work over per-emit values (exact for work every
    /// emit reaches, an over-estimate inside one `per-emit` branch). The whole-DAG
    /// cost (`dag_cost`) counts the runs of each node instead (`emit_runs`).
    pub fn own_estimate(&self, node: &VNode, ctx: Ctx) -> Cost {
        let c = alu_cost(self.model, self.consumer.stage(), node, ctx);
        let per_emit = || node.children().iter().any(|k| !self.egraph[*k].data.single);
        match (ctx, self.gs_emits) {
            (Ctx::P, Some(n)) if per_emit() => c * n as u64,
            _ => c,
        }
    }
}

/// An extraction strategy (issue 5 adds exact and global-search ones).
pub trait Extractor {
    /// Picks a node per needed (class, stage).
    fn extract(&self, problem: &Problem<'_>) -> Selection;
}

/// Greedy bottom-up choice improved by whole-DAG local search.
#[derive(Clone, Copy, Debug)]
pub struct DagExtractor {
    /// Maximum number of whole-DAG evaluations in the local search.
    pub max_evaluations: usize,
}

impl Default for DagExtractor {
    fn default() -> DagExtractor {
        DagExtractor {
            max_evaluations: 20_000,
        }
    }
}

/// The stage each child of `node` is computed in when `node` runs in `ctx`.
pub fn child_ctx(node: &VNode, ctx: Ctx, index: usize) -> Ctx {
    match node {
        VNode::Xfer(_) if index == 1 => Ctx::P,
        _ => ctx,
    }
}

/// Whether `node` of class `class` can run in `ctx` (its children then must be
/// computable there too). An `xfer` in a class that also holds a free value is not a
/// choice: propagation within the stage's limit is mandatory, as in Mesa, and the limit
/// (checked when the propagation rule fired) is what governs it.
pub fn valid(g: &VGraph, class: Id, node: &VNode, ctx: Ctx) -> bool {
    let kind_ok = match node {
        VNode::Xfer(_) => ctx == Ctx::C && !g[class].data.is_free(),
        VNode::Mode(..) => ctx == Ctx::C,
        VNode::SysVal(side, _) => (*side == crate::egraph::Side::Producer) == (ctx == Ctx::P),
        VNode::Input(_) | VNode::VertexInput { .. } | VNode::Opaque { .. } | VNode::PerEmit(_) => {
            ctx == Ctx::P
        }
        _ => true,
    };
    kind_ok
        && node.children().iter().enumerate().all(|(i, c)| {
            let d = &g[*c].data;
            match child_ctx(node, ctx, i) {
                Ctx::P => d.in_producer,
                Ctx::C => d.in_consumer,
            }
        })
}

fn weight(model: &CostModel, consumer: Stage, ctx: Ctx) -> u64 {
    match ctx {
        Ctx::P => model.weight_producer,
        Ctx::C => model.consumer_weight(consumer),
    }
}

/// The ALU cost of running `node` in `ctx` (zero for leaves, modes and transfers).
pub fn alu_cost(model: &CostModel, consumer: Stage, node: &VNode, ctx: Ctx) -> Cost {
    let w = weight(model, consumer, ctx);
    match node {
        VNode::Alu { op, .. } => model.alu(*op, w),
        VNode::Ubo { .. } => Cost(w),
        VNode::Op { op, .. } => Cost(model.opaque(op)) * w,
        _ => Cost(0),
    }
}

/// Input vertices per consumer invocation (what a per-vertex slot is paid for).
pub(crate) fn vertices(consumer: &StageInfo) -> u64 {
    match consumer {
        StageInfo::TessCtrl { input_vertices, .. } | StageInfo::TessEval { input_vertices, .. } => {
            *input_vertices as u64
        }
        StageInfo::Geometry { input, .. } => input.vertex_count() as u64,
        _ => 1,
    }
}

/// The varying a chosen `xfer` node reads.
pub fn varying_key(g: &VGraph, node: &VNode) -> Option<VaryingKey> {
    let VNode::Xfer([m, v]) = node else {
        return None;
    };
    let mode = g[*m].nodes.iter().find_map(|n| match n {
        VNode::Mode(mode, _) => Some(*mode),
        _ => None,
    })?;
    let kind = match mode {
        XferMode::Flat => VaryingKind::Flat,
        XferMode::Interp(i) => VaryingKind::Interp(i),
        XferMode::Vertex => VaryingKind::PerVertex,
        XferMode::Patch => VaryingKind::Patch,
    };
    Some(VaryingKey {
        kind,
        value: g.find(*v),
        bits: g[*v].data.bits.unwrap_or(BitSize::B32),
    })
}

fn units(bits: BitSize) -> u64 {
    if bits == BitSize::B16 {
        1
    } else {
        2
    }
}

/// Estimated packed components: two 16-bit values of one group share a component.
pub fn packed_components(vars: &[VaryingKey]) -> u64 {
    let c = VaryingCounts::of(vars);
    c.units.iter().map(|u| u.div_ceil(2)).sum()
}

/// Packing groups of `VaryingCounts::units`: varyings of one group may share a vec4.
const GROUPS: usize = 5;
/// The group of patch varyings (priced per component between non-FS stages).
const PATCH_GROUP: usize = 4;

/// The packing group of a varying: flat, interpolated fp32, interpolated fp16,
/// per-vertex, patch.
fn group(v: &VaryingKey) -> usize {
    match v.kind {
        VaryingKind::Flat => 0,
        VaryingKind::Interp(_) => 1 + usize::from(v.bits == BitSize::B16),
        VaryingKind::PerVertex => 3,
        VaryingKind::Patch => PATCH_GROUP,
    }
}

/// What the price of a set of varyings depends on (`varying_cost`), as counts that
/// one varying more or less changes by a constant: the global search keeps them up to
/// date as varyings enter and leave its selection (`super::tally`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct VaryingCounts {
    /// Half-components (16-bit units) per packing group.
    units: [u64; GROUPS],
    /// Varyings read interpolated.
    interpolated: u64,
    /// Varyings read otherwise.
    other: u64,
    /// Distinct interpolation qualifiers among them (kept by the caller, who knows
    /// which qualifiers are still in use).
    pub(crate) qualifiers: u64,
}

impl VaryingCounts {
    /// The counts of `vars`.
    pub(crate) fn of(vars: &[VaryingKey]) -> VaryingCounts {
        let mut c = VaryingCounts::default();
        let mut qualifiers = BTreeSet::new();
        for v in vars {
            c.add(v);
            if let VaryingKind::Interp(m) = v.kind {
                qualifiers.insert(m);
            }
        }
        c.qualifiers = qualifiers.len() as u64;
        c
    }

    /// Counts one varying more (all but its qualifier).
    pub(crate) fn add(&mut self, v: &VaryingKey) {
        self.units[group(v)] += units(v.bits);
        match v.kind {
            VaryingKind::Interp(_) => self.interpolated += 1,
            _ => self.other += 1,
        }
    }

    /// Counts one varying fewer (all but its qualifier); it was counted before.
    pub(crate) fn remove(&mut self, v: &VaryingKey) {
        self.units[group(v)] -= units(v.bits);
        match v.kind {
            VaryingKind::Interp(_) => self.interpolated -= 1,
            _ => self.other -= 1,
        }
    }

    /// The cost and estimated packed vec4 slots of the counted varyings
    /// (`varying_cost` says how).
    pub(crate) fn price(&self, model: &CostModel, consumer: &StageInfo) -> (Cost, u64) {
        let fs = consumer.stage() == Stage::Fragment;
        let mut cost = Cost(0);
        if fs {
            cost += Cost(model.interp_component) * self.interpolated;
            cost += Cost(model.flat_component) * self.other;
        }
        let per_vertex = model
            .stage_slot_per_vertex
            .saturating_mul(vertices(consumer));
        let mut slots = 0;
        for (g, u) in self.units.iter().enumerate() {
            let s = u.div_ceil(8);
            slots += s;
            cost += match (fs, g) {
                (true, _) => Cost(s) * model.fs_slot,
                (false, PATCH_GROUP) => Cost(u.div_ceil(2)) * model.patch_component,
                (false, _) => Cost(s) * per_vertex,
            };
        }
        let extra = self.qualifiers.saturating_sub(1);
        (cost + Cost(extra) * model.extra_barycentric, slots)
    }
}

/// Estimated packed vec4 slots and their cost: flat and interpolated components never
/// share a vec4, nor do fp16 and fp32 interpolated ones; different qualifiers may
/// (AMD flexible interpolation) but each barycentric set beyond the first is charged;
/// two 16-bit values share a component. Slots between TCS/TES/GS stages are paid per
/// input vertex; patch varyings per packed component (`patch_component`), since AMD
/// stores and loads them in off-chip memory one dword at a time. (In an FS every
/// component is charged as well.)
pub fn varying_cost(model: &CostModel, consumer: &StageInfo, vars: &[VaryingKey]) -> (Cost, u64) {
    VaryingCounts::of(vars).price(model, consumer)
}

struct Eval<'a> {
    p: &'a Problem<'a>,
    sel: &'a Selection,
    // Probed once per DAG edge on every local-search evaluation: a dense table by
    // class id and stage (class ids are dense), which needs no hashing.
    marks: Marks,
    cyclic: bool,
    producer_alu: Cost,
    consumer_alu: Cost,
    varyings: BTreeSet<VaryingKey>,
    /// Producer classes the consumer part reaches directly (GS emit routing starts
    /// there).
    producer_roots: Vec<Id>,
}

impl Eval<'_> {
    /// Depth-first walk from `(id, ctx)` pricing every chosen node once and noting a
    /// cycle. Iterative (an explicit stack of enter and leave steps, children entered
    /// in order) because a dependency chain is as deep as the input is long.
    fn visit(&mut self, id: Id, ctx: Ctx) {
        let mut stack = vec![Step::Enter(id, ctx)];
        while let Some(step) = stack.pop() {
            let (id, ctx) = match step {
                Step::Leave(key) => {
                    self.marks.set(key, Mark::Done);
                    continue;
                }
                Step::Enter(id, ctx) => (id, ctx),
            };
            let key = (self.p.egraph.find(id), ctx);
            match self.marks.get(key) {
                _ if self.cyclic => continue,
                Mark::Done => continue,
                Mark::OnStack => {
                    self.cyclic = true;
                    continue;
                }
                Mark::Unseen => self.marks.set(key, Mark::OnStack),
            }
            stack.push(Step::Leave(key));
            let Some(node) = self.sel.choice.get(&key) else {
                self.cyclic = true;
                continue;
            };
            self.price(node, ctx);
            let first = stack.len();
            for (i, ch) in node.children().iter().enumerate() {
                let child = child_ctx(node, ctx, i);
                if ctx == Ctx::C && child == Ctx::P {
                    self.producer_roots.push(self.p.egraph.find(*ch));
                }
                stack.push(Step::Enter(*ch, child));
            }
            // Popped last-in first: reversed, the first child is entered first.
            stack[first..].reverse();
        }
    }

    /// Adds `node`'s own cost and varying.
    fn price(&mut self, node: &VNode, ctx: Ctx) {
        let c = alu_cost(self.p.model, self.p.consumer.stage(), node, ctx);
        match ctx {
            // A GS's producer work is priced per emit once the walk is done.
            Ctx::P if self.p.gs_emits.is_some() => {}
            Ctx::P => self.producer_alu += c,
            Ctx::C => self.consumer_alu += c,
        }
        if let Some(v) = varying_key(self.p.egraph, node) {
            self.varyings.insert(v);
        }
    }

    /// The producer ALU cost when the producer is a GS with `emits` emits: each node
    /// is paid as often as emission runs it (`emit_runs`), and at least once (a node
    /// only a branch no emit takes reaches is still in the selection; charging it
    /// keeps per-node costs a lower bound for the exact search).
    fn gs_producer_alu(&self, emits: usize) -> Cost {
        let runs = emit_runs(self.p.egraph, self.sel, &self.producer_roots, emits);
        let mut total = Cost(0);
        for id in self.marks.done_in(Ctx::P) {
            if let Some(node) = self.sel.choice.get(&(id, Ctx::P)) {
                let own = alu_cost(self.p.model, self.p.consumer.stage(), node, Ctx::P);
                total += own * runs.get(&id).copied().unwrap_or(0).max(1);
            }
        }
        total
    }
}

/// Where a walk of the selection ([`Eval::visit`], [`reachable`]) is with a
/// (class, stage).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mark {
    Unseen,
    OnStack,
    Done,
}

/// A [`Mark`] per (class id, stage), grown on demand.
#[derive(Default)]
struct Marks(Vec<Mark>);

impl Marks {
    fn index((id, ctx): (Id, Ctx)) -> usize {
        usize::from(id) * 2 + usize::from(ctx == Ctx::C)
    }

    fn get(&self, key: (Id, Ctx)) -> Mark {
        self.0
            .get(Marks::index(key))
            .copied()
            .unwrap_or(Mark::Unseen)
    }

    fn set(&mut self, key: (Id, Ctx), mark: Mark) {
        let i = Marks::index(key);
        if i >= self.0.len() {
            self.0.resize(i + 1, Mark::Unseen);
        }
        self.0[i] = mark;
    }

    /// The classes done in `ctx`.
    fn done_in(&self, ctx: Ctx) -> impl Iterator<Item = Id> + '_ {
        let want = usize::from(ctx == Ctx::C);
        self.0
            .iter()
            .enumerate()
            .filter(move |(i, m)| i % 2 == want && **m == Mark::Done)
            .map(|(i, _)| Id::from(i / 2))
    }
}

/// One step of [`Eval::visit`]'s explicit stack.
enum Step {
    /// Look at a class in a context.
    Enter(Id, Ctx),
    /// Every child of this class is done.
    Leave((Id, Ctx)),
}

/// The producer classes reachable from `roots` whose chosen term contains no
/// `per-emit` node: their value is the same at every emit of a GS, so emission
/// computes each once, where it is first needed (straight-line code before an emit
/// dominates every later emit), and reuses it. Classes not listed (per-emit ones, or
/// any this walk did not reach) are recomputed at every emit, which is always correct.
pub fn emit_invariant_classes(g: &VGraph, sel: &Selection, roots: &[Id]) -> fxhash::FxHashSet<Id> {
    // Post-order over an explicit stack (a chain is as deep as the input is long).
    // `known` holds a provisional "varies" (the safe answer) from a class's first
    // visit, so a stale cyclic selection ends instead of looping; every child is
    // visited (not just until one varies): emission asks about each class it reaches,
    // including the branches of a `per-emit` node.
    fn visit(g: &VGraph, sel: &Selection, root: Id, known: &mut fxhash::FxHashMap<Id, bool>) {
        let mut stack = vec![(root, false)];
        while let Some((id, children_done)) = stack.pop() {
            let id = g.find(id);
            let node = sel.choice.get(&(id, Ctx::P));
            if children_done {
                let varies = node.is_some_and(|n| {
                    matches!(n, VNode::PerEmit(_))
                        || n.children()
                            .iter()
                            .any(|c| known.get(&g.find(*c)) == Some(&true))
                });
                known.insert(id, varies);
                continue;
            }
            if known.contains_key(&id) {
                continue;
            }
            known.insert(id, true);
            stack.push((id, true));
            if let Some(n) = node {
                stack.extend(n.children().iter().rev().map(|c| (*c, false)));
            }
        }
    }
    let mut known = fxhash::FxHashMap::default();
    for r in roots {
        visit(g, sel, *r, &mut known);
    }
    known
        .into_iter()
        .filter(|(_, v)| !*v)
        .map(|(k, _)| k)
        .collect()
}

/// How many times a GS producer computes each producer class of `sel` reachable from
/// `roots`: emission stores the varyings before every one of the `emits` emits and
/// follows one branch of each `per-emit` node (its head at the emit it names, its tail
/// elsewhere). A class that varies per emit runs at every emit that reaches it; an
/// invariant one runs once (`emit_invariant_classes`).
pub fn emit_runs(
    g: &VGraph,
    sel: &Selection,
    roots: &[Id],
    emits: usize,
) -> fxhash::FxHashMap<Id, u64> {
    let invariant = emit_invariant_classes(g, sel, roots);
    let mut runs: fxhash::FxHashMap<Id, u64> = fxhash::FxHashMap::default();
    for emit in 0..emits {
        let mut seen = fxhash::FxHashSet::default();
        let mut stack = roots.to_vec();
        while let Some(id) = stack.pop() {
            let id = g.find(id);
            if !seen.insert(id) {
                continue;
            }
            *runs.entry(id).or_default() += 1;
            match sel.choice.get(&(id, Ctx::P)) {
                Some(VNode::PerEmit([index, head, tail])) => {
                    let at = g[*index].data.konst.map(u64::from);
                    stack.push(if at == Some(emit as u64) {
                        *head
                    } else {
                        *tail
                    });
                }
                Some(node) => stack.extend(node.children().iter().copied()),
                None => {}
            }
        }
    }
    for (id, n) in runs.iter_mut() {
        if invariant.contains(id) {
            *n = (*n).min(1);
        }
    }
    runs
}

/// The whole-DAG cost of `sel` over the problem's roots.
pub fn dag_cost(p: &Problem<'_>, sel: &Selection) -> DagCost {
    let mut e = Eval {
        p,
        sel,
        marks: Marks::default(),
        cyclic: false,
        producer_alu: Cost(0),
        consumer_alu: Cost(0),
        varyings: BTreeSet::new(),
        producer_roots: vec![],
    };
    for r in &p.roots {
        e.visit(*r, Ctx::C);
    }
    if let (Some(n), false) = (p.gs_emits, e.cyclic) {
        e.producer_alu = e.gs_producer_alu(n);
    }
    let varyings: Vec<VaryingKey> = e.varyings.into_iter().collect();
    let (vcost, slots) = varying_cost(p.model, p.consumer, &varyings);
    let total = if e.cyclic {
        Cost::INFINITE
    } else {
        vcost + e.producer_alu + e.consumer_alu
    };
    DagCost {
        total,
        producer_alu: e.producer_alu,
        consumer_alu: e.consumer_alu,
        varyings,
        slots,
    }
}

/// The (class, stage) pairs a selection reaches from the roots, in visit order.
pub fn reachable(p: &Problem<'_>, sel: &Selection) -> Vec<(Id, Ctx)> {
    let mut seen = Marks::default();
    let mut order = vec![];
    let mut stack: Vec<(Id, Ctx)> = p
        .roots
        .iter()
        .rev()
        .map(|r| (p.egraph.find(*r), Ctx::C))
        .collect();
    while let Some(key) = stack.pop() {
        if seen.get(key) == Mark::Done {
            continue;
        }
        seen.set(key, Mark::Done);
        order.push(key);
        if let Some(node) = sel.choice.get(&key) {
            for (i, ch) in node.children().iter().enumerate().rev() {
                stack.push((p.egraph.find(*ch), child_ctx(node, key.1, i)));
            }
        }
    }
    order
}

/// Approximate per-node cost of a varying for the bottom-up pass (its share of a slot).
pub(crate) fn xfer_estimate(p: &Problem<'_>, node: &VNode) -> Cost {
    match varying_key(p.egraph, node) {
        Some(k) => varying_cost(p.model, p.consumer, &[k]).0 * 1,
        None => Cost(0),
    }
}

/// Bottom-up fixed point of tree cost (ties broken by size, so never cyclic).
fn greedy(p: &Problem<'_>) -> Selection {
    greedy_priced(p, &|node| Some(xfer_estimate(p, node)))
}

/// Bottom-up fixed point of tree cost where `price` gives each node's own extra cost on
/// top of its ALU cost (the varying price of an `xfer`), or `None` to forbid the node.
/// Ties are broken by term size, so the result is never cyclic.
pub(crate) fn greedy_priced(p: &Problem<'_>, price: &dyn Fn(&VNode) -> Option<Cost>) -> Selection {
    let g = p.egraph;
    let mut best: BTreeMap<(Id, Ctx), ((Cost, u64), VNode)> = BTreeMap::new();
    let classes: Vec<Id> = {
        let mut v: Vec<Id> = g.classes().map(|c| c.id).collect();
        v.sort();
        v
    };
    loop {
        let mut changed = false;
        for &id in &classes {
            for ctx in [Ctx::P, Ctx::C] {
                for node in &g[id].nodes {
                    if !valid(g, id, node, ctx) {
                        continue;
                    }
                    let Some(extra) = price(node) else {
                        continue;
                    };
                    let own = p.own_estimate(node, ctx) + extra;
                    let mut total = (own, 1u64);
                    let mut ok = true;
                    for (i, ch) in node.children().iter().enumerate() {
                        match best.get(&(g.find(*ch), child_ctx(node, ctx, i))) {
                            Some(((c, n), _)) => {
                                total = (total.0 + *c, total.1.saturating_add(*n));
                            }
                            None => ok = false,
                        }
                    }
                    if !ok {
                        continue;
                    }
                    let better = best.get(&(id, ctx)).is_none_or(|(old, _)| total < *old);
                    if better {
                        best.insert((id, ctx), (total, node.clone()));
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    Selection {
        choice: best.into_iter().map(|(k, (_, n))| (k, n)).collect(),
    }
}

/// Whether choosing `b` instead of `a` (in `ctx`) leaves the DAG cost unchanged: same
/// ALU cost, same varying and the same set of (child class, stage) below. Commutative
/// twins such as `(fadd x y)` / `(fadd y x)` are the common case; evaluating them would
/// cost a whole-DAG pass each and can never improve the total, which made the local
/// search quadratic on large pairs.
fn same_effect(p: &Problem<'_>, a: &VNode, b: &VNode, ctx: Ctx) -> bool {
    let g = p.egraph;
    let stage = p.consumer.stage();
    let kids = |n: &VNode| -> BTreeSet<(Id, Ctx)> {
        n.children()
            .iter()
            .enumerate()
            .map(|(i, c)| (g.find(*c), child_ctx(n, ctx, i)))
            .collect()
    };
    alu_cost(p.model, stage, a, ctx) == alu_cost(p.model, stage, b, ctx)
        && varying_key(g, a) == varying_key(g, b)
        && kids(a) == kids(b)
}

impl DagExtractor {
    /// The alternatives a flip of `key` may try: valid nodes other than the current
    /// choice that can change the cost.
    fn alternatives(p: &Problem<'_>, cur: &Selection, key: (Id, Ctx)) -> Vec<VNode> {
        let current = cur.choice.get(&key);
        p.egraph[key.0]
            .nodes
            .iter()
            .filter(|n| valid(p.egraph, key.0, n, key.1) && current != Some(n))
            .filter(|n| current.is_none_or(|c| !same_effect(p, c, n, key.1)))
            .cloned()
            .collect()
    }

    /// Flips single choices of `cur` while the whole-DAG cost drops, pricing each flip
    /// incrementally (`super::incremental`) by what it adds to and removes from the
    /// DAG. Same flips in the same order as [`DagExtractor::local_search_full`], so
    /// the same result; a GS producer (per-emit routing) or a start that is already
    /// cyclic uses that whole-DAG search.
    pub fn local_search(&self, p: &Problem<'_>, cur: Selection) -> Selection {
        self.descend(p, cur, Ties::Refused)
    }

    /// [`DagExtractor::local_search`] that also takes a flip at the same cost with
    /// fewer packed varying components: the global search's last step, on its
    /// result, so that the tie-break never leads the search elsewhere.
    ///
    /// Components break ties because the model prices varyings between non-FS stages
    /// by the vec4 slot: into a TES, sending a difference of two values already sent
    /// costs what computing it there does, but every component is still a store and a
    /// load. Without the tie-break a first run could keep the extra component and a
    /// second run, starting from that output, drop it (the optimizer would not be
    /// idempotent).
    pub fn polish_components(&self, p: &Problem<'_>, cur: Selection) -> Selection {
        self.descend(p, cur, Ties::FewerComponents)
    }

    fn descend(&self, p: &Problem<'_>, mut cur: Selection, ties: Ties) -> Selection {
        if p.gs_emits.is_some() {
            return self.local_search_full(p, cur, ties);
        }
        let mut inc = super::incremental::Incremental::new(p, &cur);
        // An incomplete or cyclic start (never one the extractors build) is left to
        // the whole-DAG search, which handles every selection.
        if inc.total() == Cost::INFINITE {
            return self.local_search_full(p, cur, ties);
        }
        let mut cur_cost = inc.total();
        // Counted only where ties count (a walk of the varyings).
        let components = |inc: &super::incremental::Incremental<'_>| match ties {
            Ties::Refused => 0,
            Ties::FewerComponents => inc.components(),
        };
        let mut cur_components = components(&inc);
        let mut evals = 0;
        loop {
            let mut improved = false;
            for key in reachable(p, &cur) {
                for alt in Self::alternatives(p, &cur, key) {
                    if evals >= self.max_evaluations || p.past_deadline() {
                        return cur;
                    }
                    evals += 1;
                    // A key without a choice keeps the flip, as in the whole-DAG
                    // search (only possible outside the DAG: the start is complete).
                    let had = cur.choice.contains_key(&key);
                    let Some(undo) = inc.set(key, alt.clone()) else {
                        // A cycle: infinite, never better. (Every key the walk meets
                        // has a choice, which the whole-DAG search puts back.)
                        continue;
                    };
                    let c = inc.total();
                    let better =
                        c < cur_cost || (c == cur_cost && components(&inc) < cur_components);
                    if better || !had {
                        if better {
                            (cur_cost, cur_components) = (c, components(&inc));
                            improved = true;
                        }
                        cur.choice.insert(key, alt);
                        inc.commit();
                    } else {
                        inc.undo(undo);
                    }
                }
            }
            if !improved {
                return cur;
            }
        }
    }

    /// [`DagExtractor::local_search`] (or, by `ties`, [`DagExtractor::polish_components`])
    /// re-evaluating the whole DAG for every flip: the reference the incremental
    /// search is tested against, and the search for GS producers.
    pub fn local_search_full(&self, p: &Problem<'_>, mut cur: Selection, ties: Ties) -> Selection {
        let rank = |c: &DagCost| match ties {
            Ties::Refused => (c.total, 0),
            Ties::FewerComponents => (c.total, packed_components(&c.varyings)),
        };
        let mut cur_rank = rank(&dag_cost(p, &cur));
        let mut evals = 0;
        loop {
            let mut improved = false;
            for key in reachable(p, &cur) {
                for alt in Self::alternatives(p, &cur, key) {
                    if evals >= self.max_evaluations || p.past_deadline() {
                        return cur;
                    }
                    evals += 1;
                    let old = cur.choice.insert(key, alt);
                    let r = rank(&dag_cost(p, &cur));
                    if r < cur_rank {
                        cur_rank = r;
                        improved = true;
                    } else if let Some(o) = old {
                        cur.choice.insert(key, o);
                    }
                }
            }
            if !improved {
                return cur;
            }
        }
    }
}

/// What a single-flip search takes besides a lower cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ties {
    /// Nothing: a flip at the same cost is refused.
    Refused,
    /// A flip at the same cost with fewer packed varying components.
    FewerComponents,
}

impl Extractor for DagExtractor {
    fn extract(&self, p: &Problem<'_>) -> Selection {
        self.extract_from(p, greedy(p))
    }
}

impl DagExtractor {
    /// [`Extractor::extract`] given the greedy pass's selection `base` (the global
    /// search computes it on its flattened table).
    pub(crate) fn extract_from(&self, p: &Problem<'_>, base: Selection) -> Selection {
        let mut start = base.clone();
        if let Some(seed) = &p.seed {
            let mut seeded = base.clone();
            seeded
                .choice
                .extend(seed.choice.iter().map(|(k, v)| (*k, v.clone())));
            if dag_cost(p, &seeded).total < dag_cost(p, &base).total {
                start = seeded;
            }
        }
        self.local_search(p, start)
    }
}

/// The as-written selection: for each class and stage, the first node lowering added
/// that is valid there.
pub fn seed_from(g: &VGraph, original: &[(VNode, Id)]) -> Selection {
    let mut sel = Selection::default();
    for (node, id) in original {
        let canon = node.clone().map_children(|c| g.find(c));
        let class = g.find(*id);
        for ctx in [Ctx::P, Ctx::C] {
            if valid(g, class, &canon, ctx) {
                sel.choice
                    .entry((class, ctx))
                    .or_insert_with(|| canon.clone());
            }
        }
    }
    sel
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egraph::VAnalysis;
    use crate::ir::AluOp;
    use egg::RecExpr;

    fn graph(exprs: &[&str]) -> (VGraph, Vec<Id>) {
        let mut g = VGraph::new(VAnalysis::default());
        let ids = exprs
            .iter()
            .map(|t| g.add_expr(&t.parse::<RecExpr<VNode>>().unwrap()))
            .collect();
        g.rebuild();
        (g, ids)
    }

    #[test]
    fn shared_varyings_are_paid_once() {
        let (g, roots) = graph(&[
            "(fadd (xfer persp.center in:ATTR0.x) 1f32)",
            "(fmul (xfer persp.center in:ATTR0.x) 2f32)",
        ]);
        let model = CostModel::amd_gfx10();
        let fs = StageInfo::default_for(Stage::Fragment);
        let p = Problem::new(&g, roots, &model, &fs);
        let sel = DagExtractor::default().extract(&p);
        let c = dag_cost(&p, &sel);
        // one interpolated component + one vec4 + fadd and fmul in the FS.
        let ops = 2 * model.weight_fs;
        assert_eq!(c.total, Cost(model.interp_component + model.fs_slot + ops));
        assert_eq!(c.varyings.len(), 1);
        assert_eq!(c.slots, 1);
    }

    /// A selection whose chosen node reaches its own class is cyclic and priced
    /// infinite; a class reached twice through a diamond is not a cycle.
    #[test]
    fn a_cyclic_selection_costs_infinity_and_a_diamond_does_not() {
        let (mut g, roots) = graph(&["(fadd (fneg uniform:0) (fabs (fneg uniform:0)))"]);
        let model = CostModel::amd_gfx10();
        let fs = StageInfo::default_for(Stage::Fragment);
        let class = |g: &VGraph, t: &str| g.lookup_expr(&t.parse().unwrap()).unwrap();
        let mut sel = Selection::default();
        for c in g.classes() {
            sel.choice.insert((c.id, Ctx::C), c.nodes[0].clone());
        }
        let p = Problem::new(&g, roots.clone(), &model, &fs);
        let fine = dag_cost(&p, &sel);
        assert!(
            fine.total < Cost::INFINITE,
            "the diamond over fneg is no cycle"
        );
        // fneg(u) = u: choosing the fneg node in the merged class reads the class itself.
        let (u, neg) = (class(&g, "uniform:0"), class(&g, "(fneg uniform:0)"));
        g.union(u, neg);
        g.rebuild();
        let merged = g.find(u);
        let mut cyclic = Selection::default();
        for c in g.classes() {
            let node = c.nodes.iter().find(|n| matches!(n, VNode::Alu { .. }));
            let node = if c.id == merged {
                node
            } else {
                c.nodes.first()
            };
            cyclic.choice.insert((c.id, Ctx::C), node.unwrap().clone());
        }
        let p = Problem::new(&g, roots, &model, &fs);
        assert_eq!(dag_cost(&p, &cyclic).total, Cost::INFINITE);
    }

    #[test]
    fn gs_work_over_per_emit_values_runs_per_emit_and_invariant_work_once() {
        let (g, roots) = graph(&[
            "(xfer flat (fadd (fsin (per-emit 0i32 opaque:1:32 opaque:2:32)) (fcos opaque:3:32)))",
        ]);
        let model = CostModel::amd_gfx10();
        let fs = StageInfo::default_for(Stage::Fragment);
        let mut p = Problem::new(&g, roots, &model, &fs);
        // One node per class: every extractor makes the same choice.
        let sel = DagExtractor::default().extract(&p);
        let w = model.weight_producer;
        let (fsin, fadd, fcos) = (
            model.alu(AluOp::FSin, w),
            model.alu(AluOp::FAdd, w),
            model.alu(AluOp::FCos, w),
        );
        assert_eq!(dag_cost(&p, &sel).producer_alu, fsin + fadd + fcos);
        // Three emits: the sine and the add see a per-emit value and run at each
        // emit; the cosine is the same at every emit and runs once.
        p.gs_emits = Some(3);
        assert_eq!(dag_cost(&p, &sel).producer_alu, fsin * 3 + fadd * 3 + fcos);
        let root = g.find(p.roots[0]);
        let VNode::Xfer([_, value]) = &sel.choice[&(root, Ctx::C)] else {
            panic!("the root is the transfer");
        };
        let runs = emit_runs(&g, &sel, &[*value], 3);
        let class = |t: &str| g.lookup_expr(&t.parse().unwrap()).unwrap();
        assert_eq!(runs[&class("opaque:2:32")], 1);
        assert_eq!(runs[&class("(fcos opaque:3:32)")], 1);
        assert_eq!(runs[&g.find(*value)], 3);
    }

    #[test]
    fn a_per_emit_node_routes_each_emit_to_one_branch() {
        let tail = "(fmul (per-emit 1i32 opaque:5:32 opaque:6:32) 2f32)";
        let (g, roots) = graph(&[&format!("(per-emit 0i32 opaque:4:32 {tail})")]);
        let mut sel = Selection::default();
        for class in g.classes() {
            sel.choice
                .insert((class.id, Ctx::P), class.nodes[0].clone());
        }
        let runs = emit_runs(&g, &sel, &roots, 3);
        let class = |t: &str| g.lookup_expr(&t.parse().unwrap()).unwrap();
        // Emit 0 takes the head; emits 1 and 2 take the tail, where the product of a
        // per-emit value runs at each of them.
        assert_eq!(runs[&class(tail)], 2);
        assert_eq!(runs[&g.find(roots[0])], 3);
        let invariant = emit_invariant_classes(&g, &sel, &roots);
        assert!(invariant.contains(&class("opaque:4:32")));
        assert!(!invariant.contains(&class(tail)));
    }

    #[test]
    fn flat_and_interpolated_never_share_a_vec4() {
        let model = CostModel::amd_gfx10();
        let fs = StageInfo::default_for(Stage::Fragment);
        let key = |kind, v: usize, bits| VaryingKey {
            kind,
            value: Id::from(v),
            bits,
        };
        let pc = crate::ir::InterpMode::PERSP_CENTER;
        let vars = [
            key(VaryingKind::Flat, 0, BitSize::B32),
            key(VaryingKind::Interp(pc), 1, BitSize::B32),
            key(VaryingKind::Interp(pc), 2, BitSize::B16),
            key(VaryingKind::Interp(pc), 3, BitSize::B16),
        ];
        let (cost, slots) = varying_cost(&model, &fs, &vars);
        // flat vec4 + fp32 interp vec4 + fp16 interp vec4 (two halves share a component).
        assert_eq!(slots, 3);
        let (flat, interp) = (model.flat_component, model.interp_component);
        assert_eq!(cost, Cost(flat + interp * 3 + model.fs_slot * 3));
        let gs = StageInfo::default_for(Stage::Geometry);
        let per_vertex = [key(VaryingKind::PerVertex, 0, BitSize::B32)];
        assert_eq!(varying_cost(&model, &gs, &per_vertex), (Cost(4 * 3), 1));
    }

    /// `varying_cost` as it was written before the counts (one map of packing groups
    /// and one set of qualifiers per call): the yardstick for `VaryingCounts`.
    fn varying_cost_by_groups(
        model: &CostModel,
        consumer: &StageInfo,
        vars: &[VaryingKey],
    ) -> (Cost, u64) {
        let mut groups: BTreeMap<(u8, bool), u64> = BTreeMap::new();
        let mut interp_sets = BTreeSet::new();
        let mut cost = Cost(0);
        let fs = consumer.stage() == Stage::Fragment;
        for v in vars {
            let group = match v.kind {
                VaryingKind::Flat => (0, false),
                VaryingKind::Interp(_) => (1, v.bits == BitSize::B16),
                VaryingKind::PerVertex => (2, false),
                VaryingKind::Patch => (3, false),
            };
            *groups.entry(group).or_default() += units(v.bits);
            if let VaryingKind::Interp(m) = v.kind {
                interp_sets.insert(m);
            }
            if fs {
                cost += Cost(match v.kind {
                    VaryingKind::Interp(_) => model.interp_component,
                    _ => model.flat_component,
                });
            }
        }
        let mut slots = 0;
        for ((kind, _), u) in &groups {
            let s = u.div_ceil(8);
            slots += s;
            cost += match (fs, kind) {
                (true, _) => Cost(s) * model.fs_slot,
                (false, 3) => Cost(u.div_ceil(2)) * model.patch_component,
                (false, _) => {
                    Cost(s)
                        * model
                            .stage_slot_per_vertex
                            .saturating_mul(vertices(consumer))
                }
            };
        }
        let extra = (interp_sets.len() as u64).saturating_sub(1);
        cost += Cost(extra) * model.extra_barycentric;
        (cost, slots)
    }

    proptest::proptest! {
        /// Prices from counts equal the per-group formula on every set of varyings
        /// (kinds, sizes and qualifiers mixed) into every consumer stage, and counts
        /// kept up to date one varying at a time equal the counts of the final set.
        #[test]
        fn varying_counts_price_as_the_groups_do(
            picks in proptest::collection::vec((0u8..8, 0u8..3, 0usize..40), 0..60),
            stage in 0usize..4,
            removals in proptest::collection::vec(0usize..60, 0..30),
        ) {
            use crate::ir::{Interp, InterpLoc, InterpMode};
            let modes = [
                InterpMode::PERSP_CENTER,
                InterpMode { interp: Interp::Linear, loc: InterpLoc::Center },
                InterpMode { interp: Interp::Persp, loc: InterpLoc::Centroid },
                InterpMode { interp: Interp::Color, loc: InterpLoc::Sample },
                InterpMode { interp: Interp::Linear, loc: InterpLoc::AtOffset },
            ];
            let vars: Vec<VaryingKey> = picks
                .iter()
                .map(|&(kind, bits, value)| VaryingKey {
                    kind: match kind {
                        0 => VaryingKind::Flat,
                        1 => VaryingKind::PerVertex,
                        2 => VaryingKind::Patch,
                        k => VaryingKind::Interp(modes[usize::from(k - 3)]),
                    },
                    value: Id::from(value),
                    bits: [BitSize::B1, BitSize::B16, BitSize::B32][usize::from(bits)],
                })
                .collect();
            let consumer = StageInfo::default_for(
                [Stage::Fragment, Stage::Geometry, Stage::TessEval, Stage::TessCtrl][stage],
            );
            let model = CostModel::amd_gfx10();
            proptest::prop_assert_eq!(
                varying_cost(&model, &consumer, &vars),
                varying_cost_by_groups(&model, &consumer, &vars)
            );
            // Remove some, one at a time, from counts of the whole set.
            let mut kept = vars.clone();
            let mut counts = VaryingCounts::of(&vars);
            for r in removals {
                if kept.is_empty() {
                    break;
                }
                let v = kept.remove(r % kept.len());
                counts.remove(&v);
            }
            counts.qualifiers = VaryingCounts::of(&kept).qualifiers;
            proptest::prop_assert_eq!(&counts, &VaryingCounts::of(&kept));
            proptest::prop_assert_eq!(
                counts.price(&model, &consumer),
                varying_cost_by_groups(&model, &consumer, &kept)
            );
        }
    }

    #[test]
    fn patch_varyings_are_priced_per_component() {
        let model = CostModel::amd_gfx10();
        let tes = StageInfo::default_for(Stage::TessEval);
        let key = |v: usize, bits| VaryingKey {
            kind: VaryingKind::Patch,
            value: Id::from(v),
            bits,
        };
        let one = [key(0, BitSize::B32)];
        let two = [key(0, BitSize::B32), key(1, BitSize::B32)];
        // One vec4 either way, but the second component costs one more dword.
        assert_eq!(
            varying_cost(&model, &tes, &one),
            (Cost(model.patch_component), 1)
        );
        assert_eq!(
            varying_cost(&model, &tes, &two),
            (Cost(2 * model.patch_component), 1)
        );
        // Two 16-bit halves share one component.
        let halves = [key(0, BitSize::B16), key(1, BitSize::B16)];
        assert_eq!(
            varying_cost(&model, &tes, &halves).0,
            Cost(model.patch_component)
        );
        // Five components: two vec4s, five dwords.
        let five: Vec<_> = (0..5).map(|v| key(v, BitSize::B32)).collect();
        assert_eq!(
            varying_cost(&model, &tes, &five),
            (Cost(5 * model.patch_component), 2)
        );
    }
}
