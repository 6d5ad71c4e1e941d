//! Properties of the random pair generator: every generated pair is well formed (checked
//! here independently of the generator), building is deterministic, every feature the
//! optimizer handles appears on purpose, shrinking gives small pairs, and `synth_pair`
//! hits the requested size.
//!
//! `VARYSAT_PROPTEST_CASES` raises the case count for long runs (docs/testing.md).

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestError, TestRunner};
use varysat::internals::gen::{
    arb_pipeline, arb_pipeline_for, arb_readable, arb_recipe, build, describe, synth_pair,
    GenConfig,
};
use varysat::interpreter::{check_equivalent, EquivConfig};
use varysat::ir::{
    AluOp, BitSize, Block, Half, InstKind, InterpLoc, IoSlot, Pipeline, Shader, Slot, SlotClass,
    Stage, StageInfo, Stmt, SystemValue, Value,
};

fn cases(default: u32) -> u32 {
    std::env::var("VARYSAT_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

// ---------------------------------------------------------------------------------
// An independent well-formedness check (the generator must not grade its own work).
// ---------------------------------------------------------------------------------

struct Checker<'a> {
    p: &'a Pipeline,
    s: &'a Shader,
    errors: Vec<String>,
    defined: BTreeSet<Value>,
    emits: usize,
}

impl<'a> Checker<'a> {
    fn err(&mut self, msg: String) {
        self.errors.push(format!("{}: {msg}", self.s.stage()));
    }

    fn define(&mut self, v: Value, scope: &mut Vec<Value>) {
        if !self.defined.insert(v) {
            self.err(format!("value {v:?} defined twice"));
        }
        if v.index() >= self.s.values.len() {
            self.err(format!("value {v:?} outside the arena"));
        }
        scope.push(v);
    }

    fn use_(&mut self, v: Value, visible: &BTreeSet<Value>) {
        if v.index() >= self.s.values.len() {
            self.err(format!("use of {v:?} outside the arena"));
        } else if !visible.contains(&v) {
            self.err(format!("use of {v:?} not in scope"));
        }
    }

    fn block(&mut self, b: &Block, visible: &BTreeSet<Value>, depth: usize, in_loop: bool) {
        let mut vis = visible.clone();
        for stmt in b {
            match stmt {
                Stmt::Inst(i) => {
                    for op in i.kind.operands() {
                        self.use_(op, &vis);
                    }
                    self.inst(&i.kind, i.result, depth);
                    if let Some(r) = i.result {
                        let mut scope = vec![];
                        self.define(r, &mut scope);
                        vis.extend(scope);
                    }
                }
                Stmt::If {
                    cond,
                    then_body,
                    else_body,
                    phis,
                    ..
                } => {
                    self.use_(*cond, &vis);
                    if bits_of(self.s, *cond) != BitSize::B1 {
                        self.err("if condition is not 1-bit".into());
                    }
                    let then_vis = self.block_scope(then_body, &vis, depth + 1, in_loop);
                    let else_vis = self.block_scope(else_body, &vis, depth + 1, in_loop);
                    for phi in phis {
                        self.use_(phi.then_val, &then_vis);
                        self.use_(phi.else_val, &else_vis);
                        let sizes =
                            [phi.dst, phi.then_val, phi.else_val].map(|v| bits_of(self.s, v));
                        if sizes[0] != sizes[1] || sizes[0] != sizes[2] {
                            self.err("phi sizes differ".into());
                        }
                        let mut scope = vec![];
                        self.define(phi.dst, &mut scope);
                        vis.extend(scope);
                    }
                }
                Stmt::Loop { phis, body, .. } => {
                    let mut inner = vis.clone();
                    for phi in phis {
                        self.use_(phi.init, &vis);
                        let mut scope = vec![];
                        self.define(phi.dst, &mut scope);
                        inner.extend(scope.iter().copied());
                        vis.extend(scope);
                    }
                    self.check_continues(body, phis.len());
                    self.block(body, &inner, depth + 1, true);
                }
                Stmt::Break { .. } | Stmt::Continue { .. } => {
                    if !in_loop {
                        self.err("break/continue outside a loop".into());
                    }
                }
            }
        }
    }

    fn block_scope(
        &mut self,
        b: &Block,
        vis: &BTreeSet<Value>,
        depth: usize,
        in_loop: bool,
    ) -> BTreeSet<Value> {
        self.block(b, vis, depth, in_loop);
        let mut out = vis.clone();
        for_each_def(b, &mut |v| {
            out.insert(v);
        });
        out
    }

    fn check_continues(&mut self, body: &Block, n: usize) {
        let mut bad = false;
        walk_stmts(body, &mut |s| {
            if let Stmt::Continue { args, .. } = s {
                bad |= args.len() != n;
            }
        });
        if bad {
            self.err("continue argument count differs from the header phis".into());
        }
        if n > 0
            && !matches!(
                body.last(),
                Some(Stmt::Continue { .. }) | Some(Stmt::Break { .. })
            )
        {
            self.err("loop with phis falls off its end".into());
        }
    }

    fn inst(&mut self, k: &InstKind, result: Option<Value>, depth: usize) {
        let stage = self.s.stage();
        let bits = |v: Value| bits_of(self.s, v);
        match k {
            InstKind::Alu { op, srcs, .. } => {
                let sizes: Vec<BitSize> = srcs.iter().map(|v| bits(*v)).collect();
                match (op.result_bits(&sizes), result) {
                    (Ok(b), Some(r)) if b == bits(r) => {}
                    other => self.err(format!("{op} typed wrong: {other:?}")),
                }
            }
            InstKind::LoadInput { slot, .. } => {
                let ok = match stage {
                    Stage::Vertex => slot.slot.class() == SlotClass::Attribute,
                    Stage::Fragment => slot.slot.is_varying(),
                    Stage::TessEval => slot.slot.is_patch(),
                    _ => false,
                };
                if !ok {
                    self.err(format!("load_input {slot} illegal in this stage"));
                }
                self.io_bits(*slot, result);
            }
            InstKind::LoadInterpolatedInput {
                slot,
                mode,
                operands,
                ..
            } => {
                if stage != Stage::Fragment || operands.len() != mode.operand_count() {
                    self.err(format!("bad interpolated load of {slot}"));
                }
                self.io_bits(*slot, result);
            }
            InstKind::LoadPerVertexInput { slot, vertex, .. } => {
                if !stage.has_per_vertex_inputs() || bits(*vertex) != BitSize::B32 {
                    self.err(format!("bad per-vertex load of {slot}"));
                }
                if let Some(c) = const_of(self.s, *vertex) {
                    if c >= input_vertices(&self.s.info) {
                        self.err(format!("vertex {c} out of range"));
                    }
                }
                self.io_bits(*slot, result);
            }
            InstKind::LoadOutput { slot, .. } => {
                if stage != Stage::TessCtrl {
                    self.err("load_output outside TCS".into());
                }
                self.io_bits(*slot, result);
            }
            InstKind::StoreOutput {
                slot,
                value,
                indirect,
                xfb,
                ..
            } => {
                let ok = match stage {
                    Stage::Fragment => slot.slot.class() == SlotClass::FragResult,
                    Stage::TessCtrl => slot.slot.is_patch(),
                    _ => slot.slot.is_varying() && !slot.slot.is_patch(),
                };
                if !ok {
                    self.err(format!("store to {slot} illegal in this stage"));
                }
                if xfb.is_some() && self.p.consumer.stage() != Stage::Fragment {
                    self.err("xfb before a non-rasterizing stage".into());
                }
                if let Some(ind) = indirect {
                    self.indirect(slot.slot, ind.len, ind.index);
                }
                self.io_bits(*slot, Some(*value));
            }
            InstKind::StorePerVertexOutput {
                slot,
                value,
                vertex,
                ..
            } => {
                let at_invocation = matches!(
                    def_of(self.s, *vertex),
                    Some(InstKind::LoadSystemValue(SystemValue::InvocationId))
                );
                // Or at a constant output vertex inside the patch.
                let outputs = match self.s.info {
                    StageInfo::TessCtrl {
                        output_vertices, ..
                    } => u32::from(output_vertices),
                    _ => 0,
                };
                let at_constant = const_of(self.s, *vertex).is_some_and(|k| k < outputs);
                let vertex_ok = at_invocation || at_constant;
                if stage != Stage::TessCtrl || !vertex_ok || slot.slot.is_patch() {
                    self.err(format!("bad per-vertex store of {slot}"));
                }
                self.io_bits(*slot, Some(*value));
            }
            InstKind::LoadUniform { index, .. } if *index >= self.p.uniforms => {
                self.err(format!("uniform {index} not declared"));
            }
            InstKind::LoadUbo { block, offset, .. } => {
                match (self.p.ubo_size(*block), const_of(self.s, *offset)) {
                    (Some(size), Some(off)) if off + 4 <= size && off % 4 == 0 => {}
                    other => self.err(format!("bad UBO load {other:?}")),
                }
            }
            InstKind::LoadSystemValue(sv) if !sv.legal_in(stage) => {
                self.err(format!("{sv} illegal in this stage"));
            }
            InstKind::EmitVertex => {
                self.emits += 1;
                if stage != Stage::Geometry {
                    self.err("emit outside GS".into());
                }
            }
            InstKind::EndPrimitive if stage != Stage::Geometry => {
                self.err("end_primitive outside GS".into());
            }
            InstKind::Barrier if stage != Stage::TessCtrl || depth > 0 => {
                self.err("barrier outside TCS top level".into());
            }
            _ => {}
        }
    }

    fn indirect(&mut self, base: Slot, len: u8, index: Value) {
        if len == 0 || base.offset(u32::from(len) - 1).is_none() {
            self.err(format!(
                "indirect array of {len} at {base} leaves its family"
            ));
        }
        if bits_of(self.s, index) != BitSize::B32 {
            self.err("indirect index is not 32-bit".into());
        }
    }

    fn io_bits(&mut self, io: IoSlot, v: Option<Value>) {
        if io.comp >= io.slot.num_components() {
            self.err(format!("{io} has no such component"));
        }
        if let Some(v) = v {
            let want = if io.half == Half::Full {
                BitSize::B32
            } else {
                BitSize::B16
            };
            if bits_of(self.s, v) != want {
                self.err(format!(
                    "{io} holds a {}-bit value",
                    bits_of(self.s, v).bits()
                ));
            }
        }
    }
}

/// A value's size, tolerating handles outside the arena (reported elsewhere).
fn bits_of(s: &Shader, v: Value) -> BitSize {
    s.values.get(v.index()).map_or(BitSize::B32, |i| i.bits)
}

fn walk_stmts(b: &Block, f: &mut dyn FnMut(&Stmt)) {
    for s in b {
        f(s);
        match s {
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                walk_stmts(then_body, f);
                walk_stmts(else_body, f);
            }
            Stmt::Loop { body, .. } => walk_stmts(body, f),
            _ => {}
        }
    }
}

/// Values defined at the top level of a block (visible after it in a branch).
fn for_each_def(b: &Block, f: &mut dyn FnMut(Value)) {
    for s in b {
        match s {
            Stmt::Inst(i) => i.result.into_iter().for_each(&mut *f),
            Stmt::If { phis, .. } => phis.iter().for_each(|p| f(p.dst)),
            Stmt::Loop { phis, .. } => phis.iter().for_each(|p| f(p.dst)),
            _ => {}
        }
    }
}

fn defs(s: &Shader) -> BTreeMap<Value, InstKind> {
    let mut m = BTreeMap::new();
    s.for_each_inst(|i| {
        if let Some(r) = i.result {
            m.insert(r, i.kind.clone());
        }
    });
    m
}

fn def_of(s: &Shader, v: Value) -> Option<InstKind> {
    defs(s).remove(&v)
}

fn const_of(s: &Shader, v: Value) -> Option<u32> {
    match def_of(s, v) {
        Some(InstKind::Const(c)) => Some(c),
        _ => None,
    }
}

fn input_vertices(info: &StageInfo) -> u32 {
    match *info {
        StageInfo::TessCtrl { input_vertices, .. } | StageInfo::TessEval { input_vertices, .. } => {
            u32::from(input_vertices)
        }
        StageInfo::Geometry { input, .. } => input.vertex_count() as u32,
        _ => 0,
    }
}

fn stores(s: &Shader) -> Vec<(IoSlot, Value)> {
    let mut out = vec![];
    s.for_each_inst(|i| match &i.kind {
        InstKind::StoreOutput { slot, value, .. }
        | InstKind::StorePerVertexOutput { slot, value, .. } => out.push((*slot, *value)),
        _ => {}
    });
    out
}

fn input_loads(s: &Shader) -> Vec<(IoSlot, Option<varysat::ir::InterpMode>, Value)> {
    let mut out = vec![];
    s.for_each_inst(|i| {
        let r = i.result.unwrap_or(Value(u32::MAX));
        match &i.kind {
            InstKind::LoadInput { slot, .. } | InstKind::LoadPerVertexInput { slot, .. } => {
                out.push((*slot, None, r))
            }
            InstKind::LoadInterpolatedInput { slot, mode, .. } => out.push((*slot, Some(*mode), r)),
            _ => {}
        }
    });
    out
}

/// Every problem found in `p`; empty when well formed.
fn check(p: &Pipeline) -> Vec<String> {
    let mut errors = vec![];
    if !p.producer.stage().can_feed(p.consumer.stage()) {
        errors.push("illegal stage pair".into());
    }
    for s in [&p.producer, &p.consumer] {
        let mut c = Checker {
            p,
            s,
            errors: vec![],
            defined: BTreeSet::new(),
            emits: 0,
        };
        c.block(&s.body, &BTreeSet::new(), 0, false);
        if let StageInfo::Geometry { max_vertices, .. } = s.info {
            if c.emits == 0 || c.emits > usize::from(max_vertices) {
                c.err(format!("{} emits, max_vertices {max_vertices}", c.emits));
            }
        }
        errors.extend(c.errors);
    }
    errors.extend(link_errors(p));
    errors
}

/// Whether fixed function supplies an FS read the producer does not write: the point
/// coordinate, the primitive id without a GS, a front colour whose back colour is
/// written (two-sided selection), the viewport under a viewport mask.
fn supplied(p: &Pipeline, io: IoSlot, written: &BTreeMap<IoSlot, BitSize>) -> bool {
    if p.consumer.stage() != Stage::Fragment {
        return false;
    }
    match io.slot {
        Slot::Pntc => true,
        Slot::PrimitiveId => p.producer.stage() != Stage::Geometry,
        Slot::Col(n) => written.contains_key(&IoSlot {
            slot: Slot::Bfc(n),
            ..io
        }),
        // Each copy of a viewport-mask broadcast reads its own viewport.
        Slot::Viewport => written.contains_key(&IoSlot::new(Slot::ViewportMask, 0)),
        _ => false,
    }
}

/// Cross-stage rules: every varying read is written with the same size; one qualifier
/// per FS input slot; GS input matches what the producer hands on; FS results depend on
/// inputs.
fn link_errors(p: &Pipeline) -> Vec<String> {
    let mut errors = vec![];
    let written: BTreeMap<IoSlot, BitSize> = stores(&p.producer)
        .into_iter()
        .map(|(io, v)| (io, bits_of(&p.producer, v)))
        .collect();
    let arrays = indirect_ranges(&p.producer);
    let mut quals: BTreeMap<Slot, BTreeSet<String>> = BTreeMap::new();
    for (io, mode, _) in input_loads(&p.consumer) {
        let covered =
            written.contains_key(&io) || arrays.contains(&io.slot) || supplied(p, io, &written);
        if !covered {
            errors.push(format!(
                "consumer reads {io}, which the producer never writes"
            ));
        }
        if p.consumer.stage() == Stage::Fragment {
            let q = match mode {
                None => "flat".to_string(),
                Some(m) if matches!(m.loc, InterpLoc::AtOffset | InterpLoc::AtSample) => continue,
                Some(m) => format!("{m:?}"),
            };
            quals.entry(io.slot).or_default().insert(q);
        }
    }
    for (slot, q) in quals {
        if q.len() > 1 {
            errors.push(format!("{slot} read with several qualifiers: {q:?}"));
        }
    }
    if let StageInfo::Geometry { input, .. } = p.consumer.info {
        if p.producer.info.output_primitive() != Some(input) {
            errors.push("GS input primitive differs from the producer's".into());
        }
    }
    if let (
        StageInfo::TessCtrl {
            output_vertices, ..
        },
        StageInfo::TessEval { input_vertices, .. },
    ) = (&p.producer.info, &p.consumer.info)
    {
        if output_vertices != input_vertices {
            errors.push("TES patch size differs from the TCS output patch".into());
        }
    }
    if !consumer_output_depends_on_inputs(&p.consumer) {
        errors.push("no consumer output depends on an input".into());
    }
    errors
}

/// Slots covered by the producer's indirectly indexed arrays (direct element stores
/// are already in the written set; this adds the base slots of indirect stores).
fn indirect_ranges(s: &Shader) -> BTreeSet<Slot> {
    let mut out = BTreeSet::new();
    s.for_each_inst(|i| {
        if let InstKind::StoreOutput {
            slot,
            indirect: Some(ind),
            ..
        } = &i.kind
        {
            for k in 0..u32::from(ind.len) {
                out.extend(slot.slot.offset(k));
            }
        }
    });
    out
}

fn depends_on_input(d: &BTreeMap<Value, InstKind>, v: Value, seen: &mut BTreeSet<Value>) -> bool {
    if !seen.insert(v) {
        return false;
    }
    match d.get(&v) {
        Some(
            InstKind::LoadInput { .. }
            | InstKind::LoadInterpolatedInput { .. }
            | InstKind::LoadPerVertexInput { .. },
        ) => true,
        Some(k) => k.operands().iter().any(|o| depends_on_input(d, *o, seen)),
        None => false,
    }
}

fn consumer_output_depends_on_inputs(s: &Shader) -> bool {
    let d = defs(s);
    stores(s)
        .iter()
        .any(|(_, v)| depends_on_input(&d, *v, &mut BTreeSet::new()))
}

// ---------------------------------------------------------------------------------
// Properties.
// ---------------------------------------------------------------------------------

proptest! {
    #![proptest_config(Config::with_cases(cases(96)))]

    #[test]
    fn every_generated_pair_is_well_formed(shown in arb_readable(GenConfig::default())) {
        let p = &shown.0;
        let errors = check(p);
        prop_assert!(errors.is_empty(), "{errors:#?}");
    }

    #[test]
    fn every_generated_pair_validates(shown in arb_readable(GenConfig::default())) {
        let p = &shown.0;
        let result = varysat::validate::validate(p);
        prop_assert!(result.is_ok(), "{}", result.err().map(|e| e.to_string()).unwrap_or_default());
    }

    #[test]
    fn every_generated_pair_runs_in_the_interpreter(shown in arb_readable(GenConfig::default())) {
        let p = &shown.0;
        let cfg = EquivConfig { runs: 2, ..EquivConfig::default() };
        let result = check_equivalent(p, p, &cfg);
        prop_assert!(result.is_ok(), "{:?}", result.err());
    }

    #[test]
    fn generated_pairs_round_trip_through_text(shown in arb_readable(GenConfig::default())) {
        let p = &shown.0;
        let text = varysat::text::print(p);
        let parsed = varysat::text::parse(&text, None);
        prop_assert!(parsed.is_ok(), "{:?}\n{text}", parsed.err());
        let mut parsed = parsed.unwrap_or_else(|_| p.clone());
        prop_assert_eq!(varysat::text::print(&parsed), text.clone());
        varysat::text::strip_locs(&mut parsed);
        prop_assert!(&parsed == p, "parsed pair differs from the generated one\n{text}");
    }

    #[test]
    fn building_is_deterministic(r in arb_recipe(GenConfig::default())) {
        prop_assert_eq!(build(&r), build(&r));
    }
}

/// The checker itself must reject broken pairs, or the property above proves nothing.
#[test]
fn checker_rejects_broken_pairs() {
    let good = synth_pair((Stage::Vertex, Stage::Fragment), 40, 1);
    assert_eq!(check(&good), Vec::<String>::new());

    let mut undefined = good.clone();
    undefined.consumer.for_each_inst_mut(|i| {
        if let InstKind::StoreOutput { value, .. } = &mut i.kind {
            *value = Value(9999);
        }
    });
    assert!(!check(&undefined).is_empty());

    let mut unwritten = good.clone();
    unwritten.producer.for_each_inst_mut(|i| {
        if let InstKind::StoreOutput { slot, .. } = &mut i.kind {
            if slot.slot != Slot::Pos {
                slot.slot = Slot::Var(31);
            }
        }
    });
    assert!(check(&unwritten).iter().any(|e| e.contains("never writes")));

    let mut no_uniform = good;
    no_uniform.uniforms = 0;
    let has_uniform_load = {
        let mut any = false;
        no_uniform
            .producer
            .for_each_inst(|i| any |= matches!(i.kind, InstKind::LoadUniform { .. }));
        no_uniform
            .consumer
            .for_each_inst(|i| any |= matches!(i.kind, InstKind::LoadUniform { .. }));
        any
    };
    assert_eq!(!check(&no_uniform).is_empty(), has_uniform_load);
}

// ---------------------------------------------------------------------------------
// Coverage: each feature appears on purpose over a fixed sample.
// ---------------------------------------------------------------------------------

fn sample(n: usize) -> Vec<Pipeline> {
    let mut runner = TestRunner::deterministic();
    let strategy = arb_pipeline(GenConfig::default());
    (0..n)
        .map(|_| {
            strategy
                .new_tree(&mut runner)
                .map(|t| t.current())
                .unwrap_or_else(|e| panic!("generation failed: {e}"))
        })
        .collect()
}

fn features(p: &Pipeline) -> BTreeSet<String> {
    let mut f = BTreeSet::new();
    f.insert(format!(
        "pair {}->{}",
        p.producer.stage(),
        p.consumer.stage()
    ));
    for (side, s) in [("producer", &p.producer), ("consumer", &p.consumer)] {
        shader_features(s, side, &mut f);
    }
    varying_features(p, &mut f);
    slot_features(p, &mut f);
    f
}

/// Slot families whose meaning depends on the stage pair (docs/design.md).
fn slot_features(p: &Pipeline, f: &mut BTreeSet<String>) {
    let fs = p.consumer.stage() == Stage::Fragment;
    let written: BTreeSet<Slot> = stores(&p.producer)
        .into_iter()
        .map(|(io, _)| io.slot)
        .collect();
    if written.contains(&Slot::ViewportMask) {
        f.insert("viewport-mask broadcast".into());
        if p.producer.layer_viewport_relative {
            f.insert("viewport-relative layer".into());
        }
    }
    for (io, _, _) in input_loads(&p.consumer) {
        match io.slot {
            Slot::Viewport | Slot::Layer if written.contains(&Slot::ViewportMask) => {
                f.insert(format!("FS reads {} under a viewport mask", io.slot));
                if !written.contains(&io.slot) {
                    f.insert("FS reads an unwritten VIEWPORT under a viewport mask".into());
                }
            }
            Slot::Col(n) if fs && written.contains(&Slot::Bfc(n)) => {
                f.insert("back colour read as COLn".into());
            }
            Slot::Pntc | Slot::PrimitiveId if fs => {
                f.insert("fixed-function FS input".into());
            }
            Slot::TessLevelOuter | Slot::TessLevelInner => {
                f.insert("tess level read by the TES".into());
            }
            s if !fs && s.class() == varysat::ir::SlotClass::SysVal => {
                f.insert("system-value slot into a non-FS consumer".into());
                if s == Slot::ClipVertex {
                    f.insert("CLIP_VERTEX into a non-FS consumer".into());
                }
            }
            _ => {}
        }
    }
}

fn shader_features(s: &Shader, side: &str, f: &mut BTreeSet<String>) {
    walk_stmts(&s.body, &mut |st| match st {
        Stmt::If {
            then_body,
            else_body,
            ..
        } => {
            f.insert(format!("{side} if"));
            if then_body.iter().chain(else_body).any(is_store) {
                f.insert(format!("{side} store in if"));
            }
            let emits = |st: &Stmt| matches!(st, Stmt::Inst(i) if i.kind == InstKind::EmitVertex);
            if then_body.iter().chain(else_body).any(emits) {
                f.insert(format!("{side} gs emit in if"));
            }
        }
        Stmt::Loop { body, .. } => {
            f.insert(format!("{side} loop"));
            if body.iter().any(is_store) {
                f.insert(format!("{side} store in loop"));
            }
        }
        _ => {}
    });
    let mut emits = 0;
    s.for_each_inst(|i| match &i.kind {
        InstKind::Alu { op, exact, .. } => {
            if *exact {
                f.insert("exact".into());
            }
            if matches!(op, AluOp::F2F16 | AluOp::F2F32) {
                f.insert(format!("{}", op));
            }
        }
        InstKind::LoadInterpolatedInput { mode, indirect, .. } => {
            if mode.interp == varysat::ir::Interp::Color {
                f.insert("colour read with the shade model".into());
            } else {
                f.insert(format!("mode {:?} {:?}", mode.interp, mode.loc));
            }
            if indirect.is_some() {
                f.insert("indirect load".into());
            }
        }
        InstKind::LoadInput { indirect, .. } if s.stage() == Stage::Fragment => {
            f.insert("mode flat".into());
            if indirect.is_some() {
                f.insert("indirect load".into());
            }
        }
        InstKind::LoadPerVertexInput {
            vertex, indirect, ..
        } => {
            if const_of(s, *vertex).is_none() {
                f.insert("dynamic vertex index".into());
            }
            if indirect.is_some() {
                f.insert("indirect load".into());
            }
        }
        InstKind::StoreOutput {
            slot,
            xfb,
            indirect,
            ..
        } => {
            if xfb.is_some() {
                f.insert("xfb".into());
            }
            if indirect.is_some() {
                f.insert("indirect store".into());
            }
            if slot.half != Half::Full {
                f.insert("16-bit store".into());
            }
            if s.stage() == Stage::TessCtrl && slot.slot.is_patch() {
                f.insert("tcs patch store".into());
            }
        }
        InstKind::StorePerVertexOutput { vertex, .. } => {
            f.insert("tcs per-vertex store".into());
            if !matches!(
                def_of(s, *vertex),
                Some(InstKind::LoadSystemValue(SystemValue::InvocationId))
            ) {
                f.insert("tcs per-vertex store at a constant vertex".into());
            }
        }
        InstKind::LoadOutput { .. } => {
            f.insert("tcs output read-back".into());
        }
        InstKind::Barrier => {
            f.insert("barrier".into());
        }
        InstKind::LoadUbo { half, .. } => {
            f.insert("ubo".into());
            if *half != varysat::ir::Half::Full {
                f.insert("16-bit ubo".into());
            }
        }
        InstKind::LoadUniform { half, .. } if *half != varysat::ir::Half::Full => {
            f.insert("16-bit uniform".into());
        }
        InstKind::EmitVertex => emits += 1,
        InstKind::EndPrimitive => {
            f.insert("end_primitive".into());
        }
        _ => {}
    });
    if emits >= 2 {
        f.insert(format!("{side} gs several emits"));
    }
}

fn is_store(s: &Stmt) -> bool {
    matches!(
        s,
        Stmt::Inst(i) if matches!(i.kind, InstKind::StoreOutput { .. } | InstKind::StorePerVertexOutput { .. })
    )
}

/// Kinds of varyings, recognized from the IR alone.
/// TCS stores at a constant vertex of one value (at one vertex) into two components,
/// which `tcs_merge` merges when their stores are paired.
fn off_vertex_features(tcs: &Shader, f: &mut BTreeSet<String>) {
    let mut slots: BTreeMap<(Value, u32), BTreeSet<IoSlot>> = BTreeMap::new();
    walk_stmts(&tcs.body, &mut |st| {
        if let Stmt::Inst(i) = st {
            if let InstKind::StorePerVertexOutput {
                slot,
                value,
                vertex,
                ..
            } = &i.kind
            {
                if let Some(k) = const_of(tcs, *vertex) {
                    slots.entry((*value, k)).or_default().insert(*slot);
                }
            }
        }
    });
    if slots.values().any(|s| s.len() >= 2) {
        f.insert("tcs one value into two components at a constant vertex".into());
    }
}

fn varying_features(p: &Pipeline, f: &mut BTreeSet<String>) {
    let d = defs(&p.producer);
    let read: BTreeSet<Slot> = input_loads(&p.consumer).iter().map(|l| l.0.slot).collect();
    let varyings: Vec<(IoSlot, Value)> = stores(&p.producer)
        .into_iter()
        .filter(|(io, _)| {
            matches!(
                io.slot.class(),
                SlotClass::Generic | SlotClass::Patch | SlotClass::Tex | SlotClass::Color
            )
        })
        .collect();
    off_vertex_features(&p.producer, f);
    let mut by_value: BTreeMap<Value, BTreeSet<IoSlot>> = BTreeMap::new();
    for (io, v) in &varyings {
        by_value.entry(*v).or_default().insert(*io);
        if !read.contains(&io.slot) {
            f.insert("dead varying".into());
        }
        match d.get(v) {
            Some(InstKind::Const(_)) => {
                f.insert("constant varying".into());
            }
            Some(InstKind::LoadUniform { .. } | InstKind::LoadUbo { .. }) => {
                f.insert("uniform varying".into());
            }
            Some(InstKind::Alu { .. }) if only_uniform_leaves(&d, *v) => {
                f.insert("uniform-expression varying".into());
            }
            _ => {}
        }
        if reaches_sysval(&d, *v, &[SystemValue::InstanceId, SystemValue::PrimitiveId]) {
            f.insert("convergent varying".into());
        }
    }
    if by_value.values().any(|s| s.len() > 1) {
        f.insert("duplicated varying".into());
    }
    let stored: BTreeSet<Value> = varyings.iter().map(|x| x.1).collect();
    for v in &stored {
        if let Some(InstKind::Alu { op, srcs, .. }) = d.get(v) {
            let commuted = stored.iter().any(|w| {
                matches!(d.get(w), Some(InstKind::Alu { op: o2, srcs: s2, .. })
                    if o2 == op && w != v && s2.len() == 2 && srcs.len() == 2
                        && s2[0] == srcs[1] && s2[1] == srcs[0])
            });
            if commuted {
                f.insert("commuted duplicate".into());
            }
            let derived = matches!(op, AluOp::FAdd | AluOp::FMul)
                && srcs.first().is_some_and(|s| stored.contains(s))
                && srcs.get(1).and_then(|k| d.get(k)).is_some_and(|k| {
                    matches!(k, InstKind::Const(c) if *c == 1.0f32.to_bits() || *c == 2.0f32.to_bits())
                });
            if derived {
                f.insert("derived varying".into());
            }
        }
    }
    consumer_shapes(&p.consumer, f);
}

fn only_uniform_leaves(d: &BTreeMap<Value, InstKind>, v: Value) -> bool {
    match d.get(&v) {
        Some(InstKind::Const(_) | InstKind::LoadUniform { .. } | InstKind::LoadUbo { .. }) => true,
        Some(InstKind::Alu { srcs, .. }) => srcs.iter().all(|s| only_uniform_leaves(d, *s)),
        _ => false,
    }
}

fn reaches_sysval(d: &BTreeMap<Value, InstKind>, v: Value, svs: &[SystemValue]) -> bool {
    match d.get(&v) {
        Some(InstKind::LoadSystemValue(sv)) => svs.contains(sv),
        Some(InstKind::Alu { srcs, .. }) => srcs.iter().any(|s| reaches_sysval(d, *s, svs)),
        _ => false,
    }
}

fn consumer_shapes(s: &Shader, f: &mut BTreeSet<String>) {
    let d = defs(s);
    let is_input = |v: &Value| {
        matches!(
            d.get(v),
            Some(
                InstKind::LoadInput { .. }
                    | InstKind::LoadInterpolatedInput { .. }
                    | InstKind::LoadPerVertexInput { .. }
            )
        )
    };
    let is_uniform = |v: &Value| matches!(d.get(v), Some(InstKind::LoadUniform { .. }));
    for k in d.values() {
        if let InstKind::Alu { op, srcs, .. } = k {
            match (op, srcs.as_slice()) {
                (AluOp::FFma, [a, u, b]) if is_input(a) && is_uniform(u) && is_input(b) => {
                    f.insert("movable in*u+in".into());
                }
                (AluOp::BCsel, [c, v, k]) if is_input(v) => {
                    let konst = matches!(d.get(k), Some(InstKind::Const(_)));
                    let cond = matches!(d.get(c), Some(InstKind::Alu { op: AluOp::FLt, srcs, .. })
                        if srcs.len() == 2 && is_uniform(&srcs[1]));
                    if konst && cond {
                        f.insert("movable select with a constant".into());
                    }
                }
                (AluOp::FAdd, [a, bk]) if is_input(a) => {
                    let scaled = matches!(d.get(bk), Some(InstKind::Alu { op: AluOp::FMul, srcs, .. })
                        if srcs.len() == 2 && is_input(&srcs[0]) && is_uniform(&srcs[1]));
                    if scaled {
                        f.insert("movable a+b*k".into());
                    }
                }
                _ => {}
            }
        }
    }
}

#[test]
fn every_feature_is_generated() {
    let mut seen = BTreeSet::new();
    for p in sample(400) {
        seen.extend(features(&p));
    }
    let mut want: Vec<String> = Stage::pairs()
        .iter()
        .map(|(a, b)| format!("pair {a}->{b}"))
        .collect();
    for interp in ["Persp", "Linear"] {
        for loc in ["Center", "Centroid", "Sample", "AtOffset", "AtSample"] {
            want.push(format!("mode {interp} {loc}"));
        }
    }
    for side in ["producer", "consumer"] {
        for what in [
            "if",
            "store in if",
            "loop",
            "store in loop",
            "gs several emits",
        ] {
            want.push(format!("{side} {what}"));
        }
    }
    want.push("producer gs emit in if".into());
    want.push("colour read with the shade model".into());
    want.extend(
        [
            "mode flat",
            "exact",
            "f2f16",
            "f2f32",
            "16-bit store",
            "xfb",
            "ubo",
            "16-bit ubo",
            "16-bit uniform",
            "indirect load",
            "indirect store",
            "dynamic vertex index",
            "end_primitive",
            "tcs per-vertex store",
            "tcs per-vertex store at a constant vertex",
            "tcs one value into two components at a constant vertex",
            "tcs patch store",
            "tcs output read-back",
            "barrier",
            "dead varying",
            "constant varying",
            "uniform varying",
            "uniform-expression varying",
            "convergent varying",
            "duplicated varying",
            "commuted duplicate",
            "derived varying",
            "movable in*u+in",
            "movable a+b*k",
            "movable select with a constant",
            "back colour read as COLn",
            "fixed-function FS input",
            "system-value slot into a non-FS consumer",
            "CLIP_VERTEX into a non-FS consumer",
            "tess level read by the TES",
            "viewport-mask broadcast",
            "viewport-relative layer",
            "FS reads VIEWPORT under a viewport mask",
            "FS reads LAYER under a viewport mask",
            "FS reads an unwritten VIEWPORT under a viewport mask",
        ]
        .map(String::from),
    );
    let missing: Vec<&String> = want.iter().filter(|w| !seen.contains(*w)).collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
}

// ---------------------------------------------------------------------------------
// Shrinking and synth.
// ---------------------------------------------------------------------------------

fn shrunk_counterexample(fails: fn(&Pipeline) -> bool) -> Pipeline {
    let mut runner = TestRunner::new(Config {
        cases: 256,
        failure_persistence: None,
        rng_algorithm: proptest::test_runner::RngAlgorithm::ChaCha,
        ..Config::default()
    });
    let result = runner.run(&arb_pipeline(GenConfig::default()), |p| {
        prop_assert!(!fails(&p));
        Ok(())
    });
    match result {
        Err(TestError::Fail(_, p)) => p,
        other => panic!("expected a counterexample, got {other:?}"),
    }
}

#[test]
fn shrinking_gives_small_counterexamples() {
    // A property that fails whenever the producer contains a loop: the shrunk case
    // should be little more than the loop itself.
    let has_loop = |p: &Pipeline| {
        let mut found = false;
        walk_stmts(&p.producer.body, &mut |s| {
            found |= matches!(s, Stmt::Loop { .. })
        });
        found
    };
    let p = shrunk_counterexample(has_loop);
    assert!(has_loop(&p));
    let total = p.producer.inst_count() + p.consumer.inst_count();
    assert!(
        total <= 24,
        "shrunk pair has {total} instructions:\n{}",
        describe(&p)
    );
    assert_eq!(
        (p.producer.stage(), p.consumer.stage()),
        (Stage::Vertex, Stage::Fragment)
    );
}

#[test]
fn synth_pairs_have_the_requested_size() {
    // Tessellation and geometry pairs carry a fixed overhead (tessellation levels,
    // positions, emits) above 10 instructions, so the smallest size uses VS -> FS.
    let mut sizes = vec![((Stage::Vertex, Stage::Fragment), 10usize)];
    for (i, pair) in Stage::pairs().into_iter().enumerate() {
        sizes.push((pair, [100, 1_000, 10_000][i % 3]));
    }
    sizes.push(((Stage::Vertex, Stage::Fragment), 10_000));
    for (pair, n) in sizes {
        let p = synth_pair(pair, n, 7);
        let size = p.producer.inst_count() + p.consumer.inst_count();
        let (lo, hi) = (n - n / 10, n + n / 10);
        assert!(
            (lo..=hi).contains(&size),
            "{pair:?} {n}: {size} instructions"
        );
        assert_eq!(check(&p), Vec::<String>::new(), "{pair:?} {n}");
        let valid = varysat::validate::validate(&p);
        assert!(valid.is_ok(), "{pair:?} {n}: {:?}", valid.err());
        assert_eq!((p.producer.stage(), p.consumer.stage()), pair);
    }
}

#[test]
fn synth_is_deterministic_and_seeded() {
    for pair in Stage::pairs() {
        let a = synth_pair(pair, 300, 11);
        assert_eq!(a, synth_pair(pair, 300, 11));
        assert_ne!(a, synth_pair(pair, 300, 12), "{pair:?}");
        assert_eq!(check(&a), Vec::<String>::new(), "{pair:?}");
        let cfg = EquivConfig {
            runs: 1,
            ..EquivConfig::default()
        };
        assert!(check_equivalent(&a, &a, &cfg).is_ok(), "{pair:?}");
    }
}

#[test]
fn per_pair_strategies_stay_on_their_pair() {
    let mut runner = TestRunner::deterministic();
    for (producer, consumer) in Stage::pairs() {
        let strategy = arb_pipeline_for(producer, consumer);
        for _ in 0..8 {
            let p = strategy
                .new_tree(&mut runner)
                .map(|t| t.current())
                .unwrap_or_else(|e| panic!("generation failed: {e}"));
            assert_eq!(
                (p.producer.stage(), p.consumer.stage()),
                (producer, consumer)
            );
        }
    }
}
