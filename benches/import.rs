//! Import speed (issue 16): a vertex shader of about 20,000 SPIR-V instructions (a
//! long chain of float arithmetic over its attributes, built with rspirv) linked to a
//! small fragment shader. Target: at most 50 ms per import (docs/performance.md).
//!
//! `cargo bench --bench import -- --warm-up-time 1 --measurement-time 3`

use criterion::{criterion_group, criterion_main, Criterion};
use rspirv::binary::Assemble;
use rspirv::dr::{Builder, Operand};
use rspirv::spirv::{
    AddressingModel, BuiltIn, Capability, Decoration, ExecutionModel, FunctionControl, MemoryModel,
    StorageClass,
};
use varysat::import::{import_spirv, ImportOptions};

/// SPIR-V words as the bytes `import_spirv` reads.
fn bytes(b: Builder) -> Vec<u8> {
    b.module()
        .assemble()
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect()
}

/// A module with float, vec4 and pointer types, an entry point `main` of `model`
/// whose body `body` fills (given the builder, the float and vec4 type ids).
fn module(model: ExecutionModel, body: impl FnOnce(&mut Builder, u32, u32) -> Vec<u32>) -> Vec<u8> {
    let mut b = Builder::new();
    b.set_version(1, 0);
    b.capability(Capability::Shader);
    b.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);
    let void = b.type_void();
    let f32t = b.type_float(32, None);
    let vec4 = b.type_vector(f32t, 4);
    let fn_ty = b.type_function(void, vec![]);
    let main = b
        .begin_function(void, None, FunctionControl::NONE, fn_ty)
        .expect("function");
    b.begin_block(None).expect("block");
    let iface = body(&mut b, f32t, vec4);
    b.ret().expect("return");
    b.end_function().expect("end");
    b.entry_point(model, main, "main", iface);
    if model == ExecutionModel::Fragment {
        b.execution_mode(main, rspirv::spirv::ExecutionMode::OriginUpperLeft, vec![]);
    }
    bytes(b)
}

fn var(b: &mut Builder, ty: u32, class: StorageClass, location: Option<u32>) -> u32 {
    let ptr = b.type_pointer(None, class, ty);
    let v = b.variable(ptr, None, class, None);
    if let Some(l) = location {
        b.decorate(v, Decoration::Location, vec![Operand::LiteralBit32(l)]);
    }
    v
}

/// VS: `n` dependent float ops (fadd, fmul, fsub in turn) over two attributes,
/// stored to a varying and to the position.
fn big_vs(n: usize) -> Vec<u8> {
    module(ExecutionModel::Vertex, |b, f32t, vec4| {
        let a0 = var(b, vec4, StorageClass::Input, Some(0));
        let a1 = var(b, f32t, StorageClass::Input, Some(1));
        let out = var(b, f32t, StorageClass::Output, Some(0));
        let pos = var(b, vec4, StorageClass::Output, None);
        b.decorate(
            pos,
            Decoration::BuiltIn,
            vec![Operand::BuiltIn(BuiltIn::Position)],
        );
        let p = b.load(vec4, None, a0, None, vec![]).expect("load");
        let k = b.load(f32t, None, a1, None, vec![]).expect("load");
        let mut x = k;
        for i in 0..n {
            x = match i % 3 {
                0 => b.f_add(f32t, None, x, k),
                1 => b.f_mul(f32t, None, x, k),
                _ => b.f_sub(f32t, None, x, k),
            }
            .expect("op");
        }
        b.store(out, x, None, vec![]).expect("store");
        b.store(pos, p, None, vec![]).expect("store");
        vec![a0, a1, out, pos]
    })
}

fn small_fs() -> Vec<u8> {
    module(ExecutionModel::Fragment, |b, f32t, vec4| {
        let inp = var(b, f32t, StorageClass::Input, Some(0));
        let out = var(b, vec4, StorageClass::Output, Some(0));
        let x = b.load(f32t, None, inp, None, vec![]).expect("load");
        let v = b
            .composite_construct(vec4, None, vec![x, x, x, x])
            .expect("construct");
        b.store(out, v, None, vec![]).expect("store");
        vec![inp, out]
    })
}

fn bench(c: &mut Criterion) {
    let (vs, fs) = (big_vs(20_000), small_fs());
    let opts = ImportOptions::default();
    let p = import_spirv(&vs, &fs, &opts).expect("the benchmark pair imports");
    let mut n = 0;
    p.producer.for_each_inst(|_| n += 1);
    assert!(n >= 20_000, "{n} IR instructions");
    c.bench_function("import_spirv_20k_instructions", |b| {
        b.iter(|| import_spirv(&vs, &fs, &opts).expect("imports"))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
