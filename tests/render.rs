//! Differential rendering on lavapipe: every VS -> FS pair of the GLSL corpus is
//! drawn as imported (the original SPIR-V), as exported without optimization
//! (the import/export round trip) and as exported after optimization; every
//! pixel of every colour attachment must agree (see `render_support::compare`
//! for the tolerance). Without lavapipe the test skips locally and fails in CI.

mod render_support;

use std::collections::BTreeSet;
use std::path::Path;

use render_support::harness::{corpus, gpu, has_feature, words};
use render_support::{compare, coverage, Attachment, Gpu, Setup, Stages};
use varysat::import::{import_files_with_modules, stage_from_extension, ImportOptions};
use varysat::ir::Stage;

fn vs_fs_pairs() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(corpus().join("pairs.txt")).expect("pairs.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (a, b) = (w.next()?.to_owned(), w.next()?.to_owned());
            let st = |f: &str| stage_from_extension(Path::new(f));
            (st(&a) == Some(Stage::Vertex) && st(&b) == Some(Stage::Fragment)).then_some((a, b))
        })
        .collect()
}

/// Pairs whose fragment shader amplifies rounding through a discontinuity, so a
/// last-bit difference upstream can move a few pixels far: the consumer, why,
/// and how many channels (of 4096) may differ.
const DISCONTINUOUS: &[(&str, &str, usize)] = &[
    ("toon_outline.frag", "fract(v_screen * 100.0) wraps from ~1 to 0 when v_screen*100 rounds across an integer (the optimizer interpolates the product)", 48),
    ("parallax.frag", "the parallax offset feeds a second texture read: one rounding step moves the sample by a texel", 8),
];

/// Renders original, round trip and optimized; returns an error naming the
/// first disagreement, or the original's attachments.
fn check_pair(gpu: &Gpu, a: &Path, b: &Path) -> Result<Option<Vec<Attachment>>, String> {
    let opts = ImportOptions::default();
    let ((pipe, _), (pm, cm)) =
        import_files_with_modules(a, b, &opts).map_err(|e| e.to_string())?;
    let original = Stages {
        vert: words(&pm),
        frag: words(&cm),
        ..Default::default()
    };
    // OpenGL SPIR-V (loose uniforms) exports as OpenGL SPIR-V, which no Vulkan
    // driver takes (tests/export_spirv.rs checks it by re-import instead).
    if varysat::export::has_loose_uniforms(&pm).map_err(|e| e.to_string())? {
        return Ok(None);
    }
    let (rp, rc) = varysat::export::pipeline_to_spirv(&pipe, &pm, &cm)
        .map_err(|e| format!("round-trip export: {e}"))?;
    let round = Stages {
        vert: rp,
        frag: rc,
        ..Default::default()
    };
    let outcome = varysat::optimize(&pipe, &varysat::Options::new()).map_err(|e| e.to_string())?;
    // Always the regenerated modules: `to_spirv` hands back the originals when the
    // interface gains nothing, which would leave the export itself undrawn.
    let (op, oc) = varysat::export::pipeline_to_spirv(&outcome.pipeline, &pm, &cm)
        .map_err(|e| format!("export: {e}"))?;
    let optimized = Stages {
        vert: op,
        frag: oc,
        ..Default::default()
    };
    let setup = Setup::of(
        &[&original, &round, &optimized],
        ash::vk::PrimitiveTopology::TRIANGLE_LIST,
        3,
    );
    let want = gpu.render(&original, &setup)?;
    for (what, stages) in [("round trip", &round), ("optimized", &optimized)] {
        let got = gpu
            .render(stages, &setup)
            .map_err(|e| format!("{what}: {e}"))?;
        let allowed = DISCONTINUOUS
            .iter()
            .find(|(f, _, _)| b.ends_with(f))
            .map_or(0, |(_, _, n)| *n);
        for (x, y) in want.iter().zip(&got) {
            let (bad, msg) = compare(x, y);
            if bad > allowed {
                return Err(format!("{what}: {msg}"));
            }
        }
    }
    Ok(Some(want))
}

/// `tests/fixtures/NAME.{vert,frag}` drawn as compiled, round trip and optimized
/// (`check_pair`); the original's attachments.
fn drawn_fixture(gpu: &Gpu, name: &str) -> Vec<Attachment> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let (a, b) = (
        dir.join(format!("{name}.vert")),
        dir.join(format!("{name}.frag")),
    );
    check_pair(gpu, &a, &b)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .expect("exports")
}

/// The pixels of a four-channel attachment whose fourth channel was written
/// (non-zero), at least 100 of them.
fn covered_pixels(att: &Attachment) -> Vec<&[u32]> {
    let covered: Vec<&[u32]> = att.words.chunks(4).filter(|p| p[3] != 0).collect();
    assert!(covered.len() > 100, "{} pixels covered", covered.len());
    covered
}

#[test]
fn corpus_vs_fs_pairs_render_identically() {
    let Some(gpu) = gpu() else { return };
    let d = corpus();
    let mut failures = vec![];
    let mut drawn = 0;
    let pairs = vs_fs_pairs();
    for (a, b) in &pairs {
        match check_pair(&gpu, &d.join(a), &d.join(b)) {
            Ok(Some(want)) => {
                let px = coverage(&want);
                eprintln!("{a} + {b}: identical, {px} pixels covered");
                drawn += (px > 0) as usize;
            }
            Ok(None) => eprintln!("{a} + {b}: skipped (OpenGL default-block uniforms)"),
            Err(e) => failures.push(format!("{a} + {b}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        drawn * 2 >= pairs.len(),
        "only {drawn} of {} pairs drew anything",
        pairs.len()
    );
}

/// 64-bit vertex attributes (`tests/fixtures/f64_attr.{vert,frag}`: a `dvec3`
/// attribute over locations 1-2 fed by one `R64G64B64_SFLOAT` attribute, a
/// `double` flat varying) render identically as compiled, round trip and
/// optimized, and the doubles arrive: every covered pixel's green channel is the
/// flat `dattr.z` of its provoking vertex, which the harness draws in
/// [0.1, 0.9] (zeros or misread words would not be). On a driver without 64-bit
/// vertex formats (lavapipe of Mesa 22.3.6 reports no `VERTEX_BUFFER` feature
/// for any `R64*` format, and drawing anyway fed zeros: every green was 0; 25.0.7
/// still none for `R64*_SFLOAT`) the harness refuses to draw the pair, naming the
/// attribute.
#[test]
fn sixty_four_bit_attributes_render_identically() {
    let Some(gpu) = gpu() else { return };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let (a, b) = (dir.join("f64_attr.vert"), dir.join("f64_attr.frag"));
    let drawn = check_pair(&gpu, &a, &b);
    if !gpu.vertex_format(ash::vk::Format::R64G64B64_SFLOAT) {
        let e = drawn.expect_err("no 64-bit vertex formats");
        assert!(e.contains("64-bit vertex attribute at location 1"), "{e}");
        eprintln!("not drawn: {e}");
        return;
    }
    let want = drawn.unwrap_or_else(|e| panic!("{e}")).expect("exports");
    let pixels: Vec<&[u32]> = want[0].words.chunks(4).filter(|p| p[3] != 0).collect();
    assert!(pixels.len() > 100, "{} pixels covered", pixels.len());
    for p in pixels {
        let g = f32::from_bits(p[1]);
        assert!((0.1..=0.9).contains(&g), "green {g}: not a drawn dattr.z");
    }
}

/// The Mesa release from which lavapipe offers the 64-bit integer vertex
/// formats (`R64*_SINT`, `R64*_UINT`) for vertex buffers: 22.3.6 offered none.
const INT64_VERTEX_FORMATS_SINCE: (u32, u32) = (25, 0);

/// Mesa releases whose lavapipe offers those formats but reads them wrong: each
/// 64-bit component is narrowed to 32 bits and the shader's 64-bit input is made
/// of two of them (25.0.7: an `i64vec3` attribute's `.x` has `x` in its low word
/// and `y` in its high word).
const INT64_VERTEX_FETCH_WRONG: &[(u32, u32)] = &[(25, 0)];

/// 64-bit integer vertex attributes (`tests/fixtures/i64_attr.{vert,frag}`: an
/// `i64vec3` over locations 1-2 fed by one `R64G64B64_SINT` attribute, a
/// `u64vec2` at location 3 fed by `R64G64_UINT`; a flat `int64_t` varying
/// `3 z - x` and a flat `uint` `x + 4 y` made from them) render identically as
/// compiled, round trip and optimized, words bit for bit. And the integers
/// arrive: the harness feeds 64-bit integers 0-3, so every covered pixel's words
/// hold a sign-extended `v_i` in [-3, 9] and a `v_u` in [0, 15], several of each
/// (zeros or misread words would not be); on a lavapipe of
/// [`INT64_VERTEX_FETCH_WRONG`] that check is skipped, naming the defect, and the
/// comparison stands on what the driver feeds. Without the formats the harness
/// refuses the draw, naming the attribute, which fails from Mesa 25.0 on.
#[test]
fn sixty_four_bit_integer_attributes_render_identically() {
    use ash::vk::Format;
    let Some(gpu) = gpu() else { return };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let (a, b) = (dir.join("i64_attr.vert"), dir.join("i64_attr.frag"));
    let drawn = check_pair(&gpu, &a, &b);
    let have = gpu.vertex_format(Format::R64G64B64_SINT) && gpu.vertex_format(Format::R64G64_UINT);
    let release = (gpu.version.0, gpu.version.1);
    let expected = release >= INT64_VERTEX_FORMATS_SINCE;
    if !has_feature(&gpu, have, "the R64*_SINT/UINT vertex formats", expected) {
        let e = drawn.expect_err("no 64-bit integer vertex formats");
        assert!(e.contains("64-bit vertex attribute at location 1"), "{e}");
        return;
    }
    let want = drawn.unwrap_or_else(|e| panic!("{e}")).expect("exports");
    assert_eq!(want.len(), 2, "the float and the word attachments");
    let covered: Vec<&[u32]> = want[1].words.chunks(4).filter(|p| p[3] == 1).collect();
    assert!(covered.len() > 100, "{} pixels covered", covered.len());
    let fetched = int64_attributes_as_fed(&covered);
    if !has_feature(
        &gpu,
        fetched.is_ok(),
        "a correct fetch of R64*_SINT/UINT vertex attributes (it narrows each component to 32 bits)",
        !INT64_VERTEX_FETCH_WRONG.contains(&release),
    ) {
        eprintln!("{}; drawn and compared all the same", fetched.unwrap_err());
    }
}

/// `Ok` when the covered pixels' words hold what `i64_attr.vert` makes of the
/// harness's attributes (integers 0-3): `v_i = 3 z - x` in [-3, 9] and
/// `v_u = x + 4 y` in [0, 15], more than three values of each.
fn int64_attributes_as_fed(covered: &[&[u32]]) -> Result<(), String> {
    let (mut vi, mut vu) = (BTreeSet::new(), BTreeSet::new());
    for p in covered {
        let i = (u64::from(p[1]) << 32 | u64::from(p[0])) as i64;
        if !(-3..=9).contains(&i) || p[2] > 15 {
            return Err(format!("pixel words {p:x?}: not from attributes 0-3"));
        }
        vi.insert(i);
        vu.insert(p[2]);
    }
    if vi.len() > 3 && vu.len() > 3 {
        Ok(())
    } else {
        Err(format!("too few values: v_i {vi:?}, v_u {vu:?}"))
    }
}

/// 16-bit uniform buffer members (`tests/fixtures/f16_ubo.{vert,frag}`: `float16_t`
/// members at bytes 0 and 2, an `f16vec2` at 8, std140), which import as
/// `load_ubo B %o lo|hi`: the uniform `v_k` is propagated, so the optimized FS
/// makes two of the 16-bit loads itself (`tests/import_features.rs`). As compiled,
/// round trip and optimized, every channel agrees on lavapipe (which has
/// `uniformAndStorageBuffer16BitAccess`), and the channels are drawn values: red
/// (`v_k`) the same finite value on every covered pixel, green (`v_p`) several.
#[test]
fn sixteen_bit_ubo_members_render_identically() {
    let Some(gpu) = gpu() else { return };
    let want = drawn_fixture(&gpu, "f16_ubo");
    let covered = covered_pixels(&want[0]);
    let reds: BTreeSet<u32> = covered.iter().map(|p| p[0]).collect();
    let greens: BTreeSet<u32> = covered.iter().map(|p| p[1]).collect();
    assert!(
        reds.len() == 1 && f32::from_bits(covered[0][0]).is_finite(),
        "v_k {reds:x?}"
    );
    assert!(greens.len() > 10, "v_p {greens:x?}");
}

/// Image atomics (`tests/fixtures/image_atomics.{vert,frag}`: two adds on a storage
/// image, exchanges on an element of an array of storage images at a constant and
/// at a dynamic index, each at the fragment's own texel) render alike as compiled,
/// round trip and optimized: the export rebuilds each texel pointer into the
/// original variable, keeps both identical-looking adds, and selects the dynamic
/// exchange among guarded ones. The channels are the atomics' results: the second
/// add returns the first's plus `k` (a lost add would return the same value), the
/// exchanges return the initial texels (several values, none zero) or, where the
/// dynamic index chose the image the first exchange wrote, its value.
#[test]
fn image_atomics_render_identically() {
    let Some(gpu) = gpu() else { return };
    let want = drawn_fixture(&gpu, "image_atomics");
    assert_image_atomics_worked(&want);
}

/// What the image atomics fixture's channels show when its atomics ran: every second
/// add saw the first, the exchanges returned initial texels (several values, none
/// zero), and the dynamic exchange reached both images.
fn assert_image_atomics_worked(want: &[Attachment]) {
    let covered = covered_pixels(&want[0]);
    assert!(
        covered.iter().all(|p| p[1] != p[0]),
        "every second add sees the first"
    );
    let old: BTreeSet<u32> = covered.iter().map(|p| p[2]).collect();
    assert!(old.len() > 10 && !old.contains(&0), "{old:x?}");
    let selected = covered_pixels(&want[1]);
    let images: BTreeSet<u32> = selected.iter().map(|p| p[1]).collect();
    assert_eq!(images.len(), 2, "both images selected somewhere");
}

/// The standalone export (no original modules: `export::standalone_to_spirv`, which
/// declares each image an atomic uses as a storage image of its texel's format) of
/// the image atomics fixture draws alike as imported and as optimized, every pixel of
/// every attachment, and the atomics do what the compiled fixture's do: every second
/// add sees the first, the exchanges return initial texels, and the dynamic exchange
/// reaches both images. (The original modules' draw cannot be the reference: the
/// standalone convention renumbers the bindings, and the harness's texel data follows
/// the bindings.)
#[test]
fn image_atomics_render_identically_from_the_standalone_export() {
    let Some(gpu) = gpu() else { return };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let opts = ImportOptions::default();
    let p = varysat::import::import_files(
        &dir.join("image_atomics.vert"),
        &dir.join("image_atomics.frag"),
        &opts,
    )
    .expect("the fixture imports");
    let optimized = varysat::optimize(&p, &varysat::Options::new())
        .expect("optimizes")
        .pipeline;
    let (imported, optimized) = (Stages::standalone(&p), Stages::standalone(&optimized));
    let setup = Setup::of(
        &[&imported, &optimized],
        ash::vk::PrimitiveTopology::TRIANGLE_LIST,
        3,
    );
    let want = gpu.render(&imported, &setup).expect("as imported draws");
    let got = gpu.render(&optimized, &setup).expect("optimized draws");
    assert_eq!(want.len(), got.len());
    for (x, y) in want.iter().zip(&got) {
        let (bad, msg) = compare(x, y);
        assert_eq!(bad, 0, "{msg}");
    }
    assert_image_atomics_worked(&want);
}

/// Storage buffer atomics (`tests/fixtures/ssbo_atomics.{vert,frag}`: two adds, a
/// signed min and a compare-exchange on the fragment's own buffer words) render
/// alike as compiled, round trip and optimized: the export runs each on the
/// buffer's `uint` word view. The second add returns the first's result plus `k`,
/// so a lost add would show.
#[test]
fn storage_buffer_atomics_render_identically() {
    let Some(gpu) = gpu() else { return };
    let want = drawn_fixture(&gpu, "ssbo_atomics");
    let covered = covered_pixels(&want[0]);
    assert!(
        covered.iter().all(|p| p[1] != p[0]),
        "every second add sees the first (k is never 0)"
    );
    let firsts: BTreeSet<u32> = covered.iter().map(|p| p[0]).collect();
    assert!(firsts.len() > 10, "{firsts:x?}");
}

/// Float atomics on storage buffer words (`tests/fixtures/float_atomics.{vert,frag}`:
/// two `atomicAdd`s and an `atomicExchange` on the fragment's own words, with
/// `VK_EXT_shader_atomic_float`) render alike as compiled, round trip and optimized:
/// the export runs the adds on a `float[]` view of the buffer and the exchange on its
/// `uint` word view. The channels are the results' bits: the second add returns the
/// first's plus `k / 2` (a lost add would return the same value).
#[test]
fn float_atomics_render_identically() {
    let Some(gpu) = gpu() else { return };
    let want = drawn_fixture(&gpu, "float_atomics");
    let covered = covered_pixels(&want[0]);
    let moved = covered.iter().filter(|p| p[1] != p[0]).count();
    assert!(
        moved * 2 > covered.len(),
        "{moved} of {} second adds differ",
        covered.len()
    );
    let olds: BTreeSet<u32> = covered.iter().map(|p| p[2]).collect();
    assert!(olds.len() > 10, "{olds:x?}");
}

/// 64-bit atomics on storage buffer elements (`tests/fixtures/int64_atomics.*`: two
/// unsigned adds that carry into the high word and a signed min on the fragment's own
/// elements) render alike as compiled, round trip and optimized: the export runs them
/// on a `uint64_t[]` view of the buffer. The second add returns the first's result
/// plus its operand, high word included.
#[test]
fn sixty_four_bit_atomics_render_identically() {
    let Some(gpu) = gpu() else { return };
    let want = drawn_fixture(&gpu, "int64_atomics");
    let covered = covered_pixels(&want[0]);
    let highs: BTreeSet<u32> = covered.iter().map(|p| p[1]).collect();
    assert!(highs.len() > 1, "high words {highs:x?}");
    let mins = covered_pixels(&want[1]);
    let signed: BTreeSet<(u32, u32)> = mins.iter().map(|p| (p[0], p[1])).collect();
    assert!(signed.len() > 10, "{signed:x?}");
}

/// 64-bit varyings, which lavapipe draws (`tests/fixtures/f64_varying.{vert,frag}`:
/// a `double` and a `dvec2` computed in the VS, flat, read in the FS as floats
/// and as their 32-bit words): as compiled, round trip and optimized, every
/// channel agrees, the word channels bit for bit.
#[test]
fn sixty_four_bit_varyings_render_identically() {
    let Some(gpu) = gpu() else { return };
    let want = drawn_fixture(&gpu, "f64_varying");
    assert!(coverage(&want) > 100, "{} pixels covered", coverage(&want));
    assert_eq!(want.len(), 2, "the float and the word attachments");
    // The words are doubles' words (a low word with bits set, several values),
    // not a cleared attachment a lost word would leave alike in both.
    let words: std::collections::BTreeSet<&[u32]> =
        want[1].words.chunks(4).filter(|p| p[1] != 0).collect();
    assert!(
        words.len() > 10 && words.iter().any(|p| p[0] != 0),
        "{words:x?}"
    );
}

/// glslang's automatic locations can link a GLSL pair otherwise than GL does
/// (fixtures `auto_loc_*`: an unlocated output on an explicit one's location, and
/// unlocated varyings declared in crossed orders). Both pairs gain nothing at the
/// interface, so `export::to_spirv` hands the imported modules back; drawn, they
/// must agree with the round trip, whose interface is re-declared from the
/// importer's (GL's) link. With glslang's own locations they do not.
#[test]
fn glslang_auto_locations_render_as_linked() {
    let Some(gpu) = gpu() else { return };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for pair in ["mixed", "crossed"] {
        let [a, b] = ["vert", "frag"].map(|s| dir.join(format!("auto_loc_{pair}.{s}")));
        let ((pipe, _), (pm, cm)) =
            import_files_with_modules(&a, &b, &ImportOptions::default()).expect("imports");
        let outcome = varysat::optimize(&pipe, &varysat::Options::new()).expect("optimizes");
        assert!(varysat::export::interface_gains_nothing(&outcome.report));
        let (hp, hc) = varysat::export::to_spirv(&outcome, &pm, &cm).expect("exports");
        let (rp, rc) = varysat::export::pipeline_to_spirv(&pipe, &pm, &cm).expect("exports");
        let stages = |vert, frag| Stages {
            vert,
            frag,
            ..Default::default()
        };
        let (handed, round) = (stages(hp, hc), stages(rp, rc));
        let setup = Setup::of(
            &[&handed, &round],
            ash::vk::PrimitiveTopology::TRIANGLE_LIST,
            3,
        );
        let want = gpu.render(&round, &setup).unwrap_or_else(|e| panic!("{e}"));
        let got = gpu
            .render(&handed, &setup)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(coverage(&want) > 100, "{pair}: {} pixels", coverage(&want));
        for (x, y) in want.iter().zip(&got) {
            let (bad, msg) = compare(x, y);
            assert_eq!(bad, 0, "{pair}: {msg}");
        }
    }
}
