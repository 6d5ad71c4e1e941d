//! Imports every GLSL pair of `tests/corpus/glsl/pairs.txt` through glslang and
//! spirv-opt and checks the result validates; plus hand-derived expectations on a
//! few pairs (slots, interpolation, stats).

use std::path::{Path, PathBuf};

use varysat::import::{import_files, import_glsl, stats, ImportOptions, GLSLANG};
use varysat::ir::{InstKind, Interp, InterpLoc, Slot, Stage};
use varysat::Pipeline;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/glsl")
}

/// Whether the GLSL tools are there; outside CI their absence skips the test.
mod tool_support;

fn tools() -> bool {
    tool_support::installed(&[GLSLANG])
}

fn pairs() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(corpus().join("pairs.txt")).expect("pairs.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut w = l.split_whitespace();
            (
                w.next().unwrap_or("").to_owned(),
                w.next().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn import(a: &str, b: &str) -> Pipeline {
    let d = corpus();
    import_glsl(&d.join(a), &d.join(b), &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{a} + {b}: {e}"))
}

#[test]
fn corpus_has_thirty_pairs_over_every_stage_pair() {
    let ps = pairs();
    assert!(ps.len() >= 30, "{} pairs", ps.len());
    let stage = |f: &str| varysat::import::stage_from_extension(Path::new(f)).expect(f);
    for (p, c) in Stage::pairs() {
        assert!(
            ps.iter().any(|(a, b)| stage(a) == p && stage(b) == c),
            "no {p} -> {c} pair"
        );
    }
}

#[test]
fn every_corpus_pair_imports_and_validates() {
    if !tools() {
        return;
    }
    let mut failures = vec![];
    for (a, b) in pairs() {
        let d = corpus();
        match import_glsl(&d.join(&a), &d.join(&b), &ImportOptions::default()) {
            Ok(p) => {
                if let Err(e) = varysat::validate::validate(&p) {
                    failures.push(format!("{a} + {b}: invalid:\n{e}"));
                }
                // Imported pairs must also execute: the interpreter is the oracle every
                // later optimization of them is checked against.
                let cfg = varysat::interpreter::RunConfig::default();
                if let Err(e) = varysat::interpreter::run(&p, &cfg) {
                    failures.push(format!("{a} + {b}: does not run: {e}"));
                }
                if let Err(why) = optimizes_soundly(&p) {
                    failures.push(format!("{a} + {b}: {why}"));
                }
                let s = stats(&p);
                assert!(s.live_components <= s.declared_components, "{a}: {s:?}");
                assert!(s.live_slots <= s.declared_slots, "{a}: {s:?}");
            }
            Err(e) => failures.push(format!("{a} + {b}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn fog_stats_count_the_dead_varying() {
    if !tools() {
        return;
    }
    // fog.vert writes v_uv (2), v_fog (1) and v_unused (1) in three slots; the FS
    // never reads v_unused.
    let s = stats(&import("fog.vert", "fog.frag"));
    assert_eq!((s.declared_components, s.declared_slots), (4, 3));
    assert_eq!((s.live_components, s.live_slots), (3, 2));
}

#[test]
fn varyings_are_matched_by_name_and_share_slots() {
    if !tools() {
        return;
    }
    let p = import("toon_outline.vert", "toon_outline.frag");
    let mut stored = vec![];
    p.producer.for_each_inst(|i| {
        if let InstKind::StoreOutput { slot, .. } = &i.kind {
            if matches!(slot.slot, Slot::Var(_)) {
                stored.push(slot.slot);
            }
        }
    });
    let mut modes = vec![];
    let mut flat = vec![];
    p.consumer.for_each_inst(|i| match &i.kind {
        InstKind::LoadInterpolatedInput { slot, mode, .. } => {
            modes.push((slot.slot, mode.interp, mode.loc))
        }
        InstKind::LoadInput { slot, .. } => flat.push(slot.slot),
        _ => {}
    });
    // Every consumer read addresses a slot the producer writes.
    for (s, _, _) in &modes {
        assert!(stored.contains(s), "{s} read but never written");
    }
    assert!(flat.iter().all(|s| stored.contains(s)));
    // v_band is flat (int), v_screen noperspective, v_ndl centroid.
    assert_eq!(flat.len(), 1);
    assert!(modes
        .iter()
        .any(|(_, i, l)| *i == Interp::Linear && *l == InterpLoc::Center));
    assert!(modes
        .iter()
        .any(|(_, i, l)| *i == Interp::Persp && *l == InterpLoc::Centroid));
}

#[test]
fn tess_levels_and_patch_outputs() {
    if !tools() {
        return;
    }
    let p = import("terrain.tesc", "terrain.tese");
    let mut outer = 0;
    let mut patch = 0;
    let mut per_vertex = 0;
    p.producer.for_each_inst(|i| match &i.kind {
        InstKind::StoreOutput { slot, .. } if slot.slot == Slot::TessLevelOuter => outer += 1,
        InstKind::StoreOutput { slot, .. } if matches!(slot.slot, Slot::Patch(_)) => patch += 1,
        InstKind::StorePerVertexOutput { .. } => per_vertex += 1,
        _ => {}
    });
    assert_eq!(outer, 3, "gl_TessLevelOuter[0..3] written once each");
    assert_eq!(patch, 1, "te_lod");
    // te_uv (2 components) and gl_Position (4).
    assert_eq!(per_vertex, 6);
    let mut reads_patch = false;
    p.consumer.for_each_inst(|i| {
        if let InstKind::LoadInput { slot, .. } = &i.kind {
            reads_patch |= matches!(slot.slot, Slot::Patch(_));
        }
    });
    assert!(reads_patch);
}

#[test]
fn gs_emits_and_layer() {
    if !tools() {
        return;
    }
    let p = import("layered.geom", "layered.frag");
    let mut emits = 0;
    let mut layer = 0;
    p.producer.for_each_inst(|i| match &i.kind {
        InstKind::EmitVertex => emits += 1,
        InstKind::StoreOutput { slot, .. } if slot.slot == Slot::Layer => layer += 1,
        _ => {}
    });
    assert!(emits >= 1 && layer >= 1);
    assert_eq!(p.producer.stage(), Stage::Geometry);
}

#[test]
fn spirv_files_import_by_location() {
    if !tools() {
        return;
    }
    // The same pair compiled to SPIR-V first and imported from .spv files keeps the
    // explicit locations 0, 1, 2 of push_const.
    let d = corpus();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    let mut files = vec![];
    for f in ["push_const.vert", "push_const.frag"] {
        let bytes = varysat::import::compile_glsl(&d.join(f), false).expect("compile");
        let out = dir.join(format!("{f}.spv"));
        std::fs::write(&out, bytes).expect("write");
        files.push(out);
    }
    let p = import_files(&files[0], &files[1], &ImportOptions::default()).expect("import");
    let _ = std::fs::remove_dir_all(&dir);
    let mut slots = std::collections::BTreeSet::new();
    p.producer.for_each_inst(|i| {
        if let InstKind::StoreOutput { slot, .. } = &i.kind {
            if let Slot::Var(n) = slot.slot {
                slots.insert(n);
            }
        }
    });
    assert_eq!(slots.into_iter().collect::<Vec<_>>(), vec![0, 1, 2]);
    assert_eq!(p.ubos.len(), 1, "the push-constant block");
    assert_eq!(p.ubos[0].size, 64 + 4 + 4);
}

#[test]
fn corpus_imports_without_spirv_opt() {
    if !tools() {
        return;
    }
    // Unoptimized glslang output: locals in memory, real function calls, loops whose
    // counters live in variables. The translator must build SSA itself.
    let opts = ImportOptions {
        spirv_opt: false,
        ..ImportOptions::default()
    };
    let mut failures = vec![];
    for (a, b) in pairs() {
        let d = corpus();
        match import_glsl(&d.join(&a), &d.join(&b), &opts) {
            Ok(p) => {
                if let Err(e) = varysat::validate::validate(&p) {
                    failures.push(format!("{a} + {b}: invalid:\n{e}"));
                }
            }
            Err(e) => failures.push(format!("{a} + {b}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Optimizes an imported pair and checks the result the way every optimization is
/// checked: valid, interpreter-equivalent, never more varying components or slots.
fn optimizes_soundly(p: &varysat::Pipeline) -> Result<(), String> {
    use varysat::interpreter::{check_equivalent, EquivConfig};
    let out = varysat::optimize(p, &varysat::Options::new()).map_err(|e| e.to_string())?;
    let r = &out.report;
    if r.fallback.is_some() || r.after.components > r.before.components {
        return Err(format!("optimization went wrong:\n{r}"));
    }
    if r.after.slots > r.before.slots {
        return Err(format!("slots grew:\n{r}"));
    }
    let cfg = EquivConfig {
        runs: 2,
        ..EquivConfig::default()
    };
    check_equivalent(p, &out.pipeline, &cfg).map_err(|e| format!("not equivalent: {e}"))
}
