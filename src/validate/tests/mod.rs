//! Unit tests of the validator: one valid pipeline per legal stage pair, and for each
//! check a broken variant built with `ShaderBuilder` that must yield exactly the
//! expected diagnostic.

mod bits;
mod flow;
mod intrinsics;
mod locations;
mod names;
mod robust;
mod slots;
mod stages;

use crate::error::Error;
use crate::ir::{
    AluOp, BitSize, InterpMode, IoSlot, Pipeline, ShaderBuilder, Slot, Stage, SystemValue, Value,
};

use super::validate;

/// The messages `validate` reports, in order (empty when the pair is valid).
fn messages(p: &Pipeline) -> Vec<String> {
    match validate(p) {
        Ok(()) => vec![],
        Err(Error::Invalid(list)) => list.into_iter().map(|d| d.message).collect(),
        Err(other) => panic!("validate returned a non-validation error: {other}"),
    }
}

/// Asserts that `p` yields exactly one diagnostic with this message.
fn assert_one(p: &Pipeline, expected: &str) {
    assert_eq!(messages(p), vec![expected.to_owned()]);
}

fn assert_valid(p: &Pipeline) {
    assert_eq!(messages(p), Vec::<String>::new());
}

/// Names a value so messages can be asserted by name.
fn named(b: &mut ShaderBuilder, v: Value, name: &str) -> Value {
    b.set_name(v, name);
    v
}

fn pair(producer: ShaderBuilder, consumer: ShaderBuilder) -> Pipeline {
    Pipeline::new(producer.finish(), consumer.finish())
}

/// VS: passes attribute 0 to POS.x and VAR0.x.
fn vs() -> ShaderBuilder {
    let mut b = ShaderBuilder::new(Stage::Vertex);
    let a = b.load_input(IoSlot::new(Slot::Attr(0), 0));
    named(&mut b, a, "a");
    b.store(IoSlot::new(Slot::Pos, 0), a);
    b.store(IoSlot::var(0, 0), a);
    b
}

/// FS: writes interpolated VAR0.x to DATA0.x.
fn fs() -> ShaderBuilder {
    let mut b = ShaderBuilder::new(Stage::Fragment);
    let x = b.load_interpolated(IoSlot::var(0, 0), InterpMode::PERSP_CENTER);
    named(&mut b, x, "x");
    b.store(IoSlot::new(Slot::Data(0), 0), x);
    b
}

/// TCS: copies VAR0.x of its own vertex and writes constant tessellation levels.
fn tcs() -> ShaderBuilder {
    let mut b = ShaderBuilder::new(Stage::TessCtrl);
    let id = b.system_value(SystemValue::InvocationId);
    named(&mut b, id, "id");
    let v = b.load_per_vertex(IoSlot::var(0, 0), id);
    b.store_per_vertex(IoSlot::var(0, 0), v, id);
    let one = b.f32(1.0);
    b.store(IoSlot::new(Slot::TessLevelOuter, 0), one);
    b.store(IoSlot::new(Slot::TessLevelInner, 0), one);
    b
}

/// TES: reads vertex 0 and a tessellation level, writes POS.x and VAR0.x.
fn tes() -> ShaderBuilder {
    let mut b = ShaderBuilder::new(Stage::TessEval);
    let k0 = b.constant(BitSize::B32, 0);
    let v = b.load_per_vertex(IoSlot::var(0, 0), k0);
    let t = b.load_input(IoSlot::new(Slot::TessLevelOuter, 0));
    let u = b.system_value(SystemValue::TessCoordX);
    let r = b.alu(AluOp::FFma, &[v, u, t]);
    b.store(IoSlot::new(Slot::Pos, 0), r);
    b.store(IoSlot::var(0, 0), r);
    b
}

/// GS: emits the three input vertices' VAR0.x as one triangle.
fn gs() -> ShaderBuilder {
    let mut b = ShaderBuilder::new(Stage::Geometry);
    for k in 0..3 {
        let kk = b.constant(BitSize::B32, k);
        let v = b.load_per_vertex(IoSlot::var(0, 0), kk);
        b.store(IoSlot::new(Slot::Pos, 0), v);
        b.store(IoSlot::var(0, 0), v);
        b.effect(crate::ir::InstKind::EmitVertex);
    }
    b.effect(crate::ir::InstKind::EndPrimitive);
    b
}

/// The base shader of a stage.
fn base(stage: Stage) -> ShaderBuilder {
    match stage {
        Stage::Vertex => vs(),
        Stage::TessCtrl => tcs(),
        Stage::TessEval => tes(),
        Stage::Geometry => gs(),
        Stage::Fragment => fs(),
    }
}

#[test]
fn every_legal_pair_of_base_shaders_is_valid() {
    let pairs = Stage::pairs();
    assert_eq!(pairs.len(), 8);
    for (p, c) in pairs {
        let pipeline = pair(base(p), base(c));
        assert_eq!(messages(&pipeline), Vec::<String>::new(), "{p} -> {c}");
    }
}
