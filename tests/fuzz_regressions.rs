//! Inputs that once made a fuzz target (`fuzz/fuzz_targets/*.rs`) panic, hang or
//! misbehave, kept as inline text with the clean result or error each must now give.
//! `docs/testing.md` says how the targets are run and what each finding was.

use varysat::interpreter::{check_equivalent, run, EquivConfig, RunConfig, Scalar, Unit};
use varysat::ir::{BitSize, IoSlot, Slot, Stage};
use varysat::text::parse;
use varysat::validate::validate;
use varysat::{optimize, Error, Options};

/// Three loops nested in a VS, each counting `%i`, `%j`, `%k` from 0 to `n`; the
/// outer counter's final value is stored to `POS.y`.
fn nested_loops(n: u32) -> String {
    format!(
        "(pair
  (producer vs
    (%p = load_input ATTR0.x)
    (%z = const 32 0)
    (%one = const 32 1)
    (%n = const 32 {n})
    (loop (%i = phi %z)
      (%di = ige %i %n) (if %di (then (break)) (else))
      (loop (%j = phi %z)
        (%dj = ige %j %n) (if %dj (then (break)) (else))
        (loop (%k = phi %z)
          (%dk = ige %k %n) (if %dk (then (break)) (else))
          (%k2 = iadd %k %one) (continue %k2))
        (%j2 = iadd %j %one) (continue %j2))
      (%i2 = iadd %i %one) (continue %i2))
    (store_output POS.x %p)
    (store_output POS.y %i))
  (consumer fs))"
    )
}

fn with_limit(loop_limit: u32) -> RunConfig {
    RunConfig {
        loop_limit,
        max_primitives: 1,
        fragments_per_primitive: 1,
        ..RunConfig::default()
    }
}

/// Hang: the loop limit used to bound each execution of a loop on its own, so three
/// nested loops of 1000 trips ran 10^9 iterations (the CLI's `run` never finished).
/// The limit is now a budget for all loop iterations of one invocation.
#[test]
fn nested_loops_share_one_iteration_budget() {
    let p = parse(&nested_loops(1000), None).unwrap();
    validate(&p).unwrap();
    let started = std::time::Instant::now();
    let err = run(&p, &RunConfig::default()).unwrap_err();
    let limit = RunConfig::default().loop_limit;
    assert!(
        matches!(&err, Error::Interpret(m) if m.contains(&format!("more than {limit} iterations"))),
        "{err}"
    );
    assert!(
        started.elapsed().as_secs() < 30,
        "the budget did not stop the run"
    );
}

/// The budget counts every header entry, breaking ones included: the outer loop
/// runs n+1 times, each of its n bodies runs the middle loop n+1 times, and each of
/// the n² middle bodies runs the inner loop n+1 times.
#[test]
fn nested_loops_run_within_an_exact_budget() {
    let n = 10;
    let total = (n + 1) * (1 + n + n * n);
    let p = parse(&nested_loops(n), None).unwrap();
    validate(&p).unwrap();
    let o = run(&p, &with_limit(total)).unwrap();
    let pos_y = o.output(Stage::Vertex, &[Unit::Vertex(0)], IoSlot::new(Slot::Pos, 1));
    assert_eq!(pos_y, Some(Scalar::new(n, BitSize::B32)));
    let err = run(&p, &with_limit(total - 1)).unwrap_err();
    assert!(
        matches!(&err, Error::Interpret(m) if m.contains(&format!("more than {} iterations", total - 1))),
        "{err}"
    );
}

/// `const 32 350` is a subnormal float pattern. Stored by every vertex and read
/// interpolated, it came back rounded by the perspective division, while the
/// optimizer (rightly) propagates the constant unchanged: `optimize` target, seed
/// pair `vs_fs_xfb.pair` mutated. A value equal at every vertex now interpolates to
/// itself exactly.
const INTERPOLATED_SUBNORMAL: &str = "(pair
  (producer vs
    (topology points)
    (%p = load_input ATTR0.x)
    (%a = load_input ATTR0.x)
    (%b = load_input ATTR1.y)
    (%c = const 32 350)
    (store_output POS.x %p (xfb 0 0))
    (store_output VAR0.x %a (xfb 0 4))
    (store_output VAR0.y %b (xfb 2 0))
    (store_output VAR1.x %c (xfb 1 4)))
  (consumer fs
    (provoking first)
    (%x = load_interpolated_input VAR0.x persp center)
    (%k = load_interpolated_input VAR1.x persp center)
    (%r = fmul %x %k)
    (store_output DATA0.x %r)
    (store_output DATA1.x %k)))";

#[test]
fn interpolated_constant_is_exact() {
    let p = parse(INTERPOLATED_SUBNORMAL, None).unwrap();
    validate(&p).unwrap();
    for topology in ["points", "lines", "triangles"] {
        let src = INTERPOLATED_SUBNORMAL.replace("points", topology);
        let o = run(&parse(&src, None).unwrap(), &RunConfig::default()).unwrap();
        let path = [Unit::Primitive(0), Unit::Fragment(0)];
        let k = o.output(Stage::Fragment, &path, IoSlot::new(Slot::Data(1), 0));
        assert_eq!(k, Some(Scalar::new(350, BitSize::B32)), "{topology}");
    }
}

#[test]
fn optimizing_an_interpolated_subnormal_constant_keeps_behaviour() {
    let p = parse(INTERPOLATED_SUBNORMAL, None).unwrap();
    let out = optimize(&p, &Options::new()).unwrap();
    validate(&out.pipeline).unwrap();
    check_equivalent(&p, &out.pipeline, &EquivConfig::default()).unwrap();
}

/// A SPIR-V instruction whose word count runs past the end of the module made rspirv
/// panic on a slice out of range (`import_spirv` target, mutated glslang output).
/// The word framing is now checked before rspirv sees the module.
#[test]
fn spirv_word_count_past_the_end_is_an_error() {
    use varysat::import::{import_spirv, ImportOptions};
    // Header (magic, version 1.0, generator, bound, schema), then OpSourceExtension
    // (opcode 4, a literal string) claiming 200 words where 2 remain.
    let words: [u32; 7] = [
        0x0723_0203,
        0x0001_0000,
        0,
        1,
        0,
        (200 << 16) | 4,
        0x6c73_6c67,
    ];
    let module: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let err = import_spirv(&module, &module, &ImportOptions::default()).unwrap_err();
    let shown = err.to_string();
    assert!(matches!(err, Error::Import(_)), "{shown}");
    assert!(
        shown.contains("the instruction at word 5 has 200 words, but the module ends at word 7"),
        "{shown}"
    );
}

/// A mutated SPIR-V pair whose consumer has a block that branches to itself outside
/// any loop header (spirv-val: "Back-edges ... can only be formed between a block and
/// a loop header"): the walk went round it, emitting the block's code again on every
/// turn, out of memory after 14 s in the `import_spirv` target. The block budget
/// (`MAX_BLOCK_VISITS`) stopped it first; since the walk rejects cycles that do not
/// go through a loop header, it fails at the cycle. The input is binary, so it is
/// kept as a file in the fuzz target's layout (little-endian u32 producer length,
/// producer, consumer).
#[test]
fn spirv_translation_that_expands_without_bound_is_an_error() {
    let err = import_fuzz_input(include_bytes!("fuzz_inputs/import_spirv_expands.bin"));
    assert!(
        err.to_string().contains(
            "branch back to %49, which is not the header of the loop it is in (unstructured cycle)"
        ),
        "{err}"
    );
}

/// The block budget on its own (hand-made, not a fuzzer find): a loop body of 15
/// blocks, each branching to the next on both sides of an `OpBranchConditional`
/// without a merge, so the walk translates the rest of the body once per side and
/// 2^15 paths reach the continue target. There is no cycle outside the loop header,
/// so only `MAX_BLOCK_VISITS` stops it. Assembled with `spirv-as` from glslang's output
/// for a small VS (with an FS that reads its output).
#[test]
fn spirv_translation_that_doubles_per_block_stops_at_the_block_budget() {
    let err = import_fuzz_input(include_bytes!(
        "fuzz_inputs/import_spirv_branch_doubling.bin"
    ));
    assert!(
        err.to_string()
            .contains("translation walked more than 16384 blocks"),
        "{err}"
    );
}

/// Splits an `import_spirv` fuzz input into its two modules and imports them.
fn import_fuzz_input(data: &[u8]) -> Error {
    use varysat::import::{import_spirv, ImportOptions};
    let (head, rest) = data.split_at(4);
    let split =
        u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize % (rest.len() + 1);
    let (producer, consumer) = rest.split_at(split);
    import_spirv(producer, consumer, &ImportOptions::default()).unwrap_err()
}

/// A huge `MatrixStride` overflowed the byte-offset arithmetic of a buffer layout
/// (`attempt to multiply with overflow`, `import_spirv` target). Offsets are now
/// checked, and vectors and matrices must have 2 to 4 components.
#[test]
fn spirv_buffer_offsets_past_4_gib_are_an_error() {
    let err = import_fuzz_input(include_bytes!(
        "fuzz_inputs/import_spirv_stride_overflow.bin"
    ));
    assert!(err.to_string().contains("reaches past byte 2^32"), "{err}");
}

/// A uniform block member in the last word below 2^32 overflowed the block's end
/// (`attempt to add with overflow` in `layout::buf_size`, `import_spirv` target,
/// 2026-11-27 seventh session, 12 minutes into the run). The end is now checked.
#[test]
fn spirv_buffer_member_in_the_last_word_is_an_error() {
    let err = import_fuzz_input(include_bytes!(
        "fuzz_inputs/import_spirv_buffer_end_overflow.bin"
    ));
    assert!(err.to_string().contains("reaches past byte 2^32"), "{err}");
}

/// A float member at the unaligned offset 2^32 - 5 ends at byte 2^32 - 1, inside the
/// buffer's last word, but rounding the buffer up to whole words overflowed
/// (`attempt to multiply with overflow` in `link::link_buffers`, `import_spirv`
/// target, 2026-11-28, 36 minutes into a one-hour run; reproduced here by moving a
/// member of the previous finding's block). Sizes are now measured in whole words.
#[test]
fn spirv_buffer_member_in_the_last_unaligned_word_is_an_error() {
    let err = import_fuzz_input(include_bytes!(
        "fuzz_inputs/import_spirv_buffer_word_round_overflow.bin"
    ));
    assert!(err.to_string().contains("reaches past byte 2^32"), "{err}");
}

/// An array type whose element type was itself (a mutated id) sent the walk down
/// arrays to their element type round forever (`link::opaque`, `import_spirv`
/// target, 2026-11-29, 49 minutes into a one-hour run: a timeout; the unit still ran
/// after 9 minutes alone). A type must now use only types declared before it, as
/// SPIR-V requires, so no walk over types can cycle.
#[test]
fn spirv_type_that_uses_itself_is_an_error() {
    let err = import_fuzz_input(include_bytes!("fuzz_inputs/import_spirv_type_cycle.bin"));
    assert!(
        err.to_string()
            .contains("which is not a type declared before it"),
        "{err}"
    );
}

/// A TCS/TES read of input vertex 2^32 - 1 at a constant index overflowed the
/// count of vertices it proves the patch has (`attempt to add with overflow` in
/// `mem::load_io`, `import_spirv` target, seventh 2026-11-27 session, 2 minutes into
/// the run after the buffer-end fix). The count now saturates (it is capped at 255
/// anyway), and the import gives a clean result: an error, or a pair that validates.
#[test]
fn spirv_input_vertex_at_u32_max_does_not_overflow() {
    use varysat::import::{import_spirv, ImportOptions};
    let data = include_bytes!("fuzz_inputs/import_spirv_vertex_index_overflow.bin");
    let (head, rest) = data.split_at(4);
    let split =
        u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize % (rest.len() + 1);
    let (producer, consumer) = rest.split_at(split);
    match import_spirv(producer, consumer, &ImportOptions::default()) {
        Ok(p) => validate(&p).unwrap_or_else(|e| panic!("imported pair is invalid: {e}")),
        Err(e) => assert!(e.to_string().contains("error"), "{e}"),
    }
}

/// A continue block that branched back into its loop's body instead of to the
/// header (a cycle that does not pass through a loop header, which structured control
/// flow forbids) made the translator walk round the cycle until its block budget:
/// each of the 16,384 visits translated the body's buffer loads again, 6.5 s for a
/// 5 KB input in the instrumented fuzz build (`import_spirv` target, a timeout on
/// the loaded machine; the corpus pair `water.vert`/`water.frag` mutated). Minimized by instruction (`cargo fuzz tmin`
/// does not shrink timeouts) to 352 bytes: a loop body block that branches to itself.
/// Re-entering a block already on the walk is now an error.
#[test]
fn spirv_cycle_outside_a_loop_header_is_an_error() {
    let err = import_fuzz_input(include_bytes!(
        "fuzz_inputs/import_spirv_unstructured_cycle.bin"
    ));
    assert!(
        err.to_string().contains(
            "branch back to %31, which is not the header of the loop it is in (unstructured cycle)"
        ),
        "{err}"
    );
}

/// A huge `ArrayStride` (1,778,384,912 on the 3-element `waves` array of
/// `water.vert`'s uniform block) overflowed when a dynamic index into that array
/// computed the array's extent (`attempt to multiply with overflow`, `import_spirv`
/// target). The elements' own offsets stay below 2^32, so the layout accepted it;
/// the extent is now checked like every other buffer offset. Minimized by
/// instruction to 572 bytes (`cargo fuzz tmin` found no smaller crash).
#[test]
fn spirv_dynamically_indexed_array_past_4_gib_is_an_error() {
    let err = import_fuzz_input(include_bytes!(
        "fuzz_inputs/import_spirv_array_extent_overflow.bin"
    ));
    assert!(
        err.to_string()
            .contains("an array of 3 elements of stride 1778384912 reaches past 2^32"),
        "{err}"
    );
}

/// `Location 4294967295` on a consumer input overflowed `location + slots` in the
/// check that a varying fits the 32 generic slots (`attempt to add with overflow`,
/// `import_spirv` target, two minutes into the run after the array-extent fix). The
/// sum is now checked. Minimized by instruction to 252 bytes.
#[test]
fn spirv_location_near_2_pow_32_is_an_error() {
    let err = import_fuzz_input(include_bytes!(
        "fuzz_inputs/import_spirv_location_overflow.bin"
    ));
    assert!(
        err.to_string()
            .contains("needs VAR4294967295..VAR4294967295, beyond the 32 generic slots"),
        "{err}"
    );
}
