//! SPIR-V export of pipelines without original modules
//! (`export::standalone_to_spirv`): the shipped `.pair` examples and generated
//! pairs of every stage pair, as written and optimized, must pass `spirv-val` for
//! Vulkan 1.1 (the synthesized modules are SPIR-V 1.3); what the exporter does not
//! write is refused with an error naming it, never written invalid.

use std::path::Path;
use std::process::Command;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use varysat::import::tool_available;
use varysat::internals::gen::{arb_recipe, build, build_for_rendering, GenConfig, Recipe};
use varysat::Pipeline;

mod export_support;

fn spirv_val() -> bool {
    if tool_available("spirv-val") {
        return true;
    }
    assert!(
        !std::env::var("CI").is_ok_and(|v| !v.is_empty()),
        "spirv-val missing in CI: run scripts/setup.sh"
    );
    eprintln!("skipping: spirv-val not installed (run scripts/setup.sh)");
    false
}

fn validate(words: &[u32], what: &str) -> Result<(), String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-standalone-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let f = dir.join(format!("m{n}.spv"));
    std::fs::write(&f, varysat::export::to_bytes(words)).map_err(|e| e.to_string())?;
    let o = Command::new("spirv-val")
        .args(["--target-env", "vulkan1.1"])
        .arg(&f)
        .output()
        .map_err(|e| e.to_string())?;
    if o.status.success() {
        let _ = std::fs::remove_file(&f);
        return Ok(());
    }
    Err(format!(
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr).trim()
    ))
}

/// Exports `pipe` and validates both modules; `Ok(false)` when the export
/// refused the pair (the error is returned by `refused`).
fn export_and_validate(pipe: &Pipeline, what: &str) -> Result<Result<(), String>, String> {
    match varysat::export::standalone_to_spirv(pipe) {
        Ok((p, c)) => {
            validate(&p, &format!("{what} producer"))?;
            validate(&c, &format!("{what} consumer"))?;
            Ok(Ok(()))
        }
        Err(e) => Ok(Err(e.to_string())),
    }
}

#[test]
fn shipped_pairs_export_valid_spirv() {
    if !spirv_val() {
        return;
    }
    // What the exporter does not write, by example file.
    let refused: [(&str, &str); 0] = [];
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pairs");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("examples/pairs")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert!(files.len() >= 19, "{} example pairs", files.len());
    let mut failures = vec![];
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let pipe = varysat::text::parse_file(f).expect("example parses");
        let out = varysat::optimize(&pipe, &varysat::Options::default()).expect("optimizes");
        for (what, p) in [("as written", &pipe), ("optimized", &out.pipeline)] {
            let expect = refused.iter().find(|(n, _)| *n == name).map(|(_, e)| *e);
            match (export_and_validate(p, &format!("{name} {what}")), expect) {
                (Err(e), _) => failures.push(e),
                (Ok(Ok(())), None) => {}
                (Ok(Err(e)), Some(cause)) if e.contains(cause) => {}
                (Ok(r), _) => failures.push(format!("{name} {what}: {r:?}, expected {expect:?}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A recipe drawn deterministically from `seed`.
fn recipe(cfg: GenConfig, seed: u64) -> Recipe {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    arb_recipe(cfg)
        .new_tree(&mut runner)
        .expect("a recipe")
        .current()
}

/// `vs_fs_xfb.pair` captures `POS.x`, which the built-in `Position` (one `vec4`)
/// cannot carry alone: it is captured through a variable of its own. As written
/// and optimized (where `POS.x` and `VAR0.y` become `no_varying`), every capture
/// is exported with the stride the offsets give (8 in both buffers).
#[test]
fn transform_feedback_captures_export_as_written() {
    if !spirv_val() {
        return;
    }
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pairs/vs_fs_xfb.pair");
    let pipe = varysat::text::parse_file(&f).expect("example parses");
    let out = varysat::optimize(&pipe, &varysat::Options::default()).expect("optimizes");
    let want: std::collections::BTreeSet<(u32, u32, u32)> =
        [(0, 0, 8), (0, 4, 8), (1, 0, 8), (1, 4, 8)].into();
    for (what, p) in [("as written", &pipe), ("optimized", &out.pipeline)] {
        let (vs, fs) = varysat::export::standalone_to_spirv(p).unwrap_or_else(|e| panic!("{e}"));
        validate(&vs, &format!("{what} vs")).unwrap_or_else(|e| panic!("{e}"));
        validate(&fs, &format!("{what} fs")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            export_support::captures(&vs),
            (want.clone(), true),
            "{what}"
        );
    }
}

/// `vs_fs_indirect.pair` stores and reads `VAR0.x`-`VAR3.x` through a computed
/// index: both stages declare one `float[4]` at location 0 and index it with
/// the computed value, as written and optimized.
#[test]
fn dynamically_indexed_varyings_export_as_indexed_arrays() {
    if !spirv_val() {
        return;
    }
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pairs/vs_fs_indirect.pair");
    let pipe = varysat::text::parse_file(&f).expect("example parses");
    let out = varysat::optimize(&pipe, &varysat::Options::default()).expect("optimizes");
    for (what, p) in [("as written", &pipe), ("optimized", &out.pipeline)] {
        let (vs, fs) = varysat::export::standalone_to_spirv(p).unwrap_or_else(|e| panic!("{e}"));
        for (words, side) in [(&vs, "vs"), (&fs, "fs")] {
            validate(words, &format!("{what} {side}")).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                export_support::dynamic_access_chains(words),
                1,
                "{what} {side}: one access chain with a computed index"
            );
        }
    }
}

#[test]
fn generated_pairs_export_valid_spirv() {
    if !spirv_val() {
        return;
    }
    let mut failures = vec![];
    // Render-restricted pairs of every stage pair: every one exports.
    for seed in 0..40 {
        let pipe = build_for_rendering(&recipe(GenConfig::default(), seed));
        let out = varysat::optimize(&pipe, &varysat::Options::default()).expect("optimizes");
        for (what, p) in [("as generated", &pipe), ("optimized", &out.pipeline)] {
            match export_and_validate(p, &format!("restricted seed {seed} {what}")) {
                Ok(Ok(())) => {}
                Ok(Err(e)) => failures.push(format!("restricted seed {seed} {what}: {e}")),
                Err(e) => failures.push(e),
            }
        }
    }
    // Unrestricted pairs of every stage pair: exported ones are valid; refusals
    // name a feature the exporter documents as not written.
    let documented = [
        "dynamically indexed",
        "interpolation functions take 32-bit floats",
        "storage buffer",
        "unknown SPIR-V opcode",
        "16-bit halves of built-in slots",
        "colour (shade-model) interpolation",
    ];
    let mut exported = 0;
    let n = 120;
    for seed in 0..n {
        let pipe = build(&recipe(GenConfig::default(), 1000 + seed));
        let what = format!(
            "{}->{} seed {}",
            pipe.producer.stage(),
            pipe.consumer.stage(),
            1000 + seed
        );
        match export_and_validate(&pipe, &what) {
            Ok(Ok(())) => exported += 1,
            Ok(Err(e)) if documented.iter().any(|d| e.contains(d)) => {}
            Ok(Err(e)) => failures.push(format!("{what}: {e}")),
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("{exported} of {n} unrestricted pairs exported and validated");
    assert!(
        exported * 3 >= n as usize,
        "only {exported} of {n} exported"
    );
}

#[test]
fn cli_writes_a_pair_file_as_spirv_named_after_the_pair_and_stages() {
    if !spirv_val() {
        return;
    }
    let out = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-emit-pair-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let pair = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pairs/vs_tcs.pair");
    let o = Command::new(env!("CARGO_BIN_EXE_varysat"))
        .arg("opt")
        .arg(&pair)
        .args(["--emit", "spirv", "-o"])
        .arg(&out)
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for name in ["vs_tcs.vert.spv", "vs_tcs.tesc.spv"] {
        let bytes = std::fs::read(out.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let words: Vec<u32> = bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        validate(&words, name).unwrap_or_else(|e| panic!("{e}"));
    }
    // Without -o there is nowhere to write.
    let o = Command::new(env!("CARGO_BIN_EXE_varysat"))
        .arg("opt")
        .arg(&pair)
        .args(["--emit", "spirv"])
        .output()
        .expect("runs");
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("-o DIR"));
}

/// Outputs nothing interpolates are declared with the type of what is stored
/// to them (TES case 412 of the render long run, docs/testing.md): an
/// unread, captured float sum is a `float` output (and a `float` input of the
/// FS, so the interface matches), an integer sum stays `uint`; a float sharing
/// its location with an integer, and a float the FS reads flat, stay `uint`.
#[test]
fn unread_float_outputs_are_declared_float() {
    if !spirv_val() {
        return;
    }
    let src = "(pair
      (producer vs
        (topology points)
        (%a = load_input ATTR0.x)
        (%b = load_input ATTR0.y)
        (%ia = load_uniform 0)
        (%f = fadd %a %b)
        (%i = iadd %ia %ia)
        (store_output POS.x %a)
        (store_output VAR0.x %f (xfb 0 0))
        (store_output VAR1.x %i (xfb 0 4))
        (store_output VAR2.x %f (xfb 0 8))
        (store_output VAR2.y %i (xfb 0 12))
        (store_output VAR3.x %f))
      (consumer fs
        (%r = load_input VAR3.x)
        (store_output DATA0.x %r)))";
    assert_exported_scalars(
        src,
        &[
            ("VAR0_x", "float"),
            ("VAR1_x", "uint"),
            ("VAR2_x", "uint"),
            ("VAR2_y", "uint"),
            ("VAR3_x", "uint"),
        ],
    );
}

/// Exports the pair `src` standalone, checks both modules with spirv-val, and
/// asserts that the VS output and FS input named in `want` are declared with the
/// given scalar type on both sides.
fn assert_exported_scalars(src: &str, want: &[(&str, &str)]) {
    let pipe = varysat::text::parse(src, None).expect("parses");
    let (vs, fs) = varysat::export::standalone_to_spirv(&pipe).unwrap_or_else(|e| panic!("{e}"));
    validate(&vs, "vs").unwrap_or_else(|e| panic!("{e}"));
    validate(&fs, "fs").unwrap_or_else(|e| panic!("{e}"));
    use rspirv::spirv::StorageClass::{Input, Output};
    for (words, class, side) in [(&vs, Output, "vs"), (&fs, Input, "fs")] {
        let got = declared_scalars(words, class);
        for (name, kind) in want {
            assert_eq!(
                got.get(*name).copied(),
                Some(*kind),
                "{side} {name}: {got:?}"
            );
        }
    }
}

/// The scalar type every named variable of `class` is declared with, by name
/// (through arrays and pointers): `float`, `uint` or `int`.
pub fn declared_scalars(
    words: &[u32],
    class: rspirv::spirv::StorageClass,
) -> std::collections::BTreeMap<String, &'static str> {
    let m = rspirv::dr::load_words(words).expect("the module parses");
    let defs: std::collections::BTreeMap<u32, &rspirv::dr::Instruction> = m
        .types_global_values
        .iter()
        .filter_map(|i| i.result_id.map(|r| (r, i)))
        .collect();
    let id = |o: Option<&rspirv::dr::Operand>| match o {
        Some(rspirv::dr::Operand::IdRef(v)) => *v,
        _ => 0,
    };
    let names: std::collections::BTreeMap<u32, String> = m
        .debug_names
        .iter()
        .filter(|i| i.class.opcode == rspirv::spirv::Op::Name)
        .filter_map(|i| match i.operands.get(1) {
            Some(rspirv::dr::Operand::LiteralString(s)) => {
                Some((id(i.operands.first()), s.clone()))
            }
            _ => None,
        })
        .collect();
    let mut out = std::collections::BTreeMap::new();
    for v in m
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == rspirv::spirv::Op::Variable)
    {
        if v.operands.first() != Some(&rspirv::dr::Operand::StorageClass(class)) {
            continue;
        }
        let Some(name) = v.result_id.and_then(|r| names.get(&r)) else {
            continue;
        };
        let mut t = defs[&v.result_type.unwrap_or(0)];
        loop {
            match t.class.opcode {
                rspirv::spirv::Op::TypePointer => t = defs[&id(t.operands.get(1))],
                rspirv::spirv::Op::TypeArray | rspirv::spirv::Op::TypeVector => {
                    t = defs[&id(t.operands.first())]
                }
                _ => break,
            }
        }
        let kind = match (t.class.opcode, t.operands.get(1)) {
            (rspirv::spirv::Op::TypeFloat, _) => "float",
            (rspirv::spirv::Op::TypeInt, Some(rspirv::dr::Operand::LiteralBit32(1))) => "int",
            (rspirv::spirv::Op::TypeInt, _) => "uint",
            _ => continue,
        };
        out.insert(name.clone(), kind);
    }
    out
}

/// Flat-read floats and floats that reach a store through a phi (issue 15): a
/// float the FS reads flat and only as a float (`fmul`) is a `float` output and
/// input, one it reads as an integer (`iadd`) stays `uint`; an unread output
/// storing an `if` phi of two floats, or a loop phi accumulating floats, is
/// `float`, one storing a phi of a float and an integer stays `uint`. Both sides
/// declare alike, and pass spirv-val.
#[test]
fn flat_read_and_phi_floats_are_declared_float() {
    if !spirv_val() {
        return;
    }
    let src = "(pair
      (uniforms 1)
      (producer vs
        (topology points)
        (%a = load_input ATTR0.x)
        (%b = load_input ATTR0.y)
        (%u = load_uniform 0)
        (%zero = const 32 0)
        (%one = const 32 1)
        (%three = const 32 3)
        (%f = fadd %a %b)
        (%g = fmul %a %b)
        (%i = iadd %u %u)
        (%c = flt %a %b)
        (if %c (then) (else) (%pf = phi %f %g) (%pm = phi %f %i))
        (loop
          (%k = phi %zero)
          (%acc = phi %g)
          (%done = ige %k %three)
          (if %done (then (break)) (else))
          (%acc2 = fadd %acc %b)
          (%k2 = iadd %k %one)
          (continue %k2 %acc2))
        (store_output POS.x %a)
        (store_output VAR0.x %f)
        (store_output VAR1.x %g)
        (store_output VAR2.x %pf (xfb 0 0))
        (store_output VAR3.x %pm (xfb 0 4))
        (store_output VAR4.x %acc (xfb 0 8)))
      (consumer fs
        (%r = load_input VAR0.x)
        (%s = load_input VAR1.x)
        (%r2 = fmul %r %r)
        (%s2 = iadd %s %s)
        (store_output DATA0.x %r2)
        (store_output DATA0.y %s2)))";
    assert_exported_scalars(
        src,
        &[
            ("VAR0_x", "float"),
            ("VAR1_x", "uint"),
            ("VAR2_x", "float"),
            ("VAR3_x", "uint"),
            ("VAR4_x", "float"),
        ],
    );
}

/// A storage buffer atomic on a signed word (as a `.pair` may state it; the importer
/// records imported ones as unsigned) exports on the buffer's `uint` word view: the
/// value is bitcast to `uint`, `OpAtomicSMin` runs on the word, and its result is
/// bitcast back to `int`; scope and semantics stay constants. An atomic whose
/// operands do not fit its opcode is refused by name.
#[test]
fn signed_storage_buffer_atomics_export_on_unsigned_words() {
    if !spirv_val() {
        return;
    }
    let pair = |args: &str, srcs: &str| {
        format!(
            "(pair
      (producer vs
        (%a = load_input ATTR0.x)
        (%k = load_input ATTR1.x)
        (store_output POS.x %a)
        (store_output VAR0.x %k))
      (consumer fs
        (%k = load_input VAR0.x)
        (%addr = const 32 3)
        (%scope = const 32 1)
        (%sem = const 32 0)
        (%m = opaque atomicsmin effect op:236 i32 (args {args}) (buffer 0) {srcs})
        (store_output DATA0.x %m)))"
        )
    };
    let text = pair("u32 u32 u32 i32", "%addr %scope %sem %k");
    let pipe = varysat::text::parse(&text, None).expect("parses");
    varysat::validate::validate(&pipe).expect("valid");
    let (_, fs) = varysat::export::standalone_to_spirv(&pipe).expect("exports");
    validate(&fs, "fs").unwrap_or_else(|e| panic!("{e}"));
    let m = rspirv::dr::load_words(&fs).expect("parses");
    use rspirv::spirv::Op;
    let count = |op: Op| m.all_inst_iter().filter(|i| i.class.opcode == op).count();
    assert_eq!(count(Op::AtomicSMin), 1);
    assert!(count(Op::Bitcast) >= 2, "value and result bitcast");
    let short = pair("u32 u32 i32", "%addr %scope %k");
    let pipe = varysat::text::parse(&short, None).expect("parses");
    let err = varysat::export::standalone_to_spirv(&pipe).expect_err("refused");
    assert!(
        err.to_string()
            .contains("storage buffer atomic `atomicsmin` has 2 operands after its address where OpAtomicSMin takes 3"),
        "{err}"
    );
}

/// Image atomics export without the original modules: each image an atomic uses is
/// declared as a storage image of its texel's format (`r32ui` for the `uint` adds,
/// `r32f` for the float exchanges) at the sampler set, and each atomic goes through a
/// texel pointer into it. The render fixture's pair, as imported and optimized:
/// both modules pass spirv-val and import back interpreter-equivalent (the atomics are
/// effects whose stand-in results depend on every operand, so a wrong image, texel or
/// value shows).
#[test]
fn image_atomics_export_standalone_as_storage_images() {
    if !spirv_val() || !tool_available("glslangValidator") {
        return;
    }
    use rspirv::spirv::{ImageFormat, Op};
    use varysat::interpreter::{check_equivalent, EquivConfig};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let opts = varysat::import::ImportOptions::default();
    let p = varysat::import::import_files(
        &dir.join("image_atomics.vert"),
        &dir.join("image_atomics.frag"),
        &opts,
    )
    .expect("the fixture imports");
    let optimized = varysat::optimize(&p, &varysat::Options::new())
        .expect("optimizes")
        .pipeline;
    for (what, pipe) in [("as imported", &p), ("optimized", &optimized)] {
        let (vs, fs) = varysat::export::standalone_to_spirv(pipe)
            .unwrap_or_else(|e| panic!("{what}: exports: {e}"));
        validate(&vs, what).unwrap_or_else(|e| panic!("{e}"));
        validate(&fs, what).unwrap_or_else(|e| panic!("{e}"));
        let module = rspirv::dr::load_words(&fs).expect("loads");
        let formats: Vec<ImageFormat> = module
            .types_global_values
            .iter()
            .filter(|i| i.class.opcode == Op::TypeImage)
            .filter_map(|i| match i.operands.as_slice() {
                [.., rspirv::dr::Operand::LiteralBit32(2), rspirv::dr::Operand::ImageFormat(f)] => {
                    Some(*f)
                }
                _ => None,
            })
            .collect();
        assert!(formats.contains(&ImageFormat::R32ui), "{what}: {formats:?}");
        assert!(formats.contains(&ImageFormat::R32f), "{what}: {formats:?}");
        let pointers = module
            .all_inst_iter()
            .filter(|i| i.class.opcode == Op::ImageTexelPointer)
            .count();
        assert!(pointers >= 4, "{what}: {pointers} texel pointers");
        let back = varysat::import::import_spirv(
            &varysat::export::to_bytes(&vs),
            &varysat::export::to_bytes(&fs),
            &opts,
        )
        .unwrap_or_else(|e| panic!("{what}: imports back: {e}"));
        let cfg = EquivConfig {
            runs: 8,
            ..EquivConfig::default()
        };
        check_equivalent(pipe, &back, &cfg).unwrap_or_else(|e| panic!("{what}: {e}"));
    }
}
