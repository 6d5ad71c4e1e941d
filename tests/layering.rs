//! The layering rule of docs/architecture.md, checked on the source text: data flows
//! one way through the optimizer's stages, and nothing below the optimizer imports it.
//!
//! - The lower layers (`ir`, `text`, `validate`, `interpreter`, `egraph`, `extract`,
//!   `pack`, `gen`, `import`, `error`) never name `crate::optimize`, except its two
//!   leaves: `optimize::count` (the varying count) and `optimize::report`.
//! - Inside `src/optimize/`, a module imports only modules listed before it in
//!   [`STAGE_ORDER`] (so the optimizer's modules form no cycle), never the driver's
//!   own items, and the report modules import no stage.

use std::fs;
use std::path::{Path, PathBuf};

/// The optimizer's modules, each allowed to import only the ones before it.
const STAGE_ORDER: &[&str] = &[
    "report",
    "options",
    "emit",
    "assign",
    "renumber",
    "count",
    "reassociate",
    "unroll",
    "simplify",
    "tcs_merge",
    "prepass",
    "lowering",
    "saturation",
    "selection",
    "slots",
    "emission",
    "moves",
    "fates",
    "packing",
    "round",
    "rounds",
    "instance",
];

const LOWER_LAYERS: &[&str] = &[
    "ir",
    "text",
    "validate",
    "interpreter",
    "egraph",
    "extract",
    "pack",
    "gen",
    "import",
    "error.rs",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    if dir.is_file() {
        out.push(dir.to_path_buf());
        return;
    }
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("readable directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// The code lines of a file (comment lines dropped), numbered from 1.
fn code_lines(path: &Path) -> Vec<(usize, String)> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(n, l)| (n + 1, l.to_string()))
        .collect()
}

/// Every identifier following `prefix` on the line (`super::{a, b}` gives both).
fn names_after(line: &str, prefix: &str) -> Vec<String> {
    let mut out = vec![];
    for (at, _) in line.match_indices(prefix) {
        let rest = &line[at + prefix.len()..];
        let rest = rest.strip_prefix('{').unwrap_or(rest);
        let list_end = if line[at + prefix.len()..].starts_with('{') {
            rest.find('}').unwrap_or(rest.len())
        } else {
            rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len())
        };
        for item in rest[..list_end].split(',') {
            let name: String = item
                .trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn lower_layers_do_not_import_the_optimizer() {
    let mut bad = vec![];
    for layer in LOWER_LAYERS {
        let mut files = vec![];
        rust_files(&src().join(layer), &mut files);
        assert!(!files.is_empty(), "no sources under src/{layer}");
        for file in files {
            for (n, line) in code_lines(&file) {
                for name in names_after(&line, "crate::optimize::") {
                    if name != "count" && name != "report" {
                        bad.push(format!("{}:{n}: {}", file.display(), line.trim()));
                    }
                }
                if line.contains("crate::optimize;") || line.contains("crate::optimize::{") {
                    bad.push(format!("{}:{n}: {}", file.display(), line.trim()));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "lower layers import the optimizer:\n{}",
        bad.join("\n")
    );
}

/// The optimizer module a file belongs to (`report` for everything under report/).
fn module_of(file: &Path) -> String {
    let rel = file
        .strip_prefix(src().join("optimize"))
        .expect("under src/optimize");
    let first = rel.components().next().expect("non-empty path");
    let first = first.as_os_str().to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

#[test]
fn optimizer_stages_import_only_earlier_stages() {
    let mut files = vec![];
    rust_files(&src().join("optimize"), &mut files);
    let driver = src().join("optimize").join("mod.rs");
    let mut bad = vec![];
    let mut seen = std::collections::BTreeSet::new();
    for file in files.iter().filter(|f| **f != driver) {
        let module = module_of(file);
        seen.insert(module.clone());
        let Some(rank) = STAGE_ORDER.iter().position(|m| *m == module) else {
            bad.push(format!(
                "{}: module `{module}` missing from STAGE_ORDER",
                file.display()
            ));
            continue;
        };
        // Below report/, `super::` is the report module itself.
        let in_report = module == "report" && file.file_name().is_some_and(|f| f != "mod.rs");
        for (n, line) in code_lines(file) {
            let mut imported = names_after(&line, "crate::optimize::");
            if !in_report {
                imported.extend(names_after(&line, "super::"));
            } else if line.contains("super::super") {
                imported.push("<the driver>".into());
            }
            for name in imported {
                if !STAGE_ORDER[..rank].contains(&name.as_str()) {
                    bad.push(format!("{}:{n}: `{name}`: {}", file.display(), line.trim()));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "imports against the stage order:\n{}",
        bad.join("\n")
    );
    for m in STAGE_ORDER {
        assert!(
            seen.contains(*m),
            "STAGE_ORDER names `{m}`, which has no file"
        );
    }
}

#[test]
fn names_after_reads_single_and_grouped_imports() {
    assert_eq!(
        names_after("use super::report::{Fate};", "super::"),
        ["report"]
    );
    assert_eq!(
        names_after("use super::{lowering, slots::SlotMap};", "super::"),
        ["lowering", "slots"]
    );
    assert_eq!(
        names_after(
            "let x = crate::optimize::count_varyings(p);",
            "crate::optimize::"
        ),
        ["count_varyings"]
    );
}

/// Inside a stage folder other than the optimizer's (`export/`, `import/`), `super::` names only
/// sibling modules, never the driver's (`mod.rs`) own items, and the sibling imports
/// form no cycle: the driver owns the order, the stages share a context module.
fn folder_violations(folder: &str) -> Vec<String> {
    let dir = src().join(folder);
    let mut files = vec![];
    rust_files(&dir, &mut files);
    let stem = |f: &Path| f.file_stem().unwrap().to_string_lossy().to_string();
    let modules: std::collections::BTreeSet<String> = files
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n != "mod.rs"))
        .map(|f| stem(f))
        .collect();
    let mut bad = vec![];
    let mut edges: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for file in files.iter().filter(|f| f.parent() == Some(dir.as_path())) {
        if file.file_name().is_some_and(|n| n == "mod.rs") {
            continue;
        }
        for (n, line) in code_lines(file) {
            for name in names_after(&line, "super::") {
                if modules.contains(&name) {
                    edges.entry(stem(file)).or_default().push(name);
                } else {
                    bad.push(format!(
                        "{}:{n}: `{name}` is the driver's: {}",
                        file.display(),
                        line.trim()
                    ));
                }
            }
        }
    }
    // Depth-first search for a cycle in the sibling imports.
    fn visit(
        m: &str,
        edges: &std::collections::BTreeMap<String, Vec<String>>,
        path: &mut Vec<String>,
        done: &mut std::collections::BTreeSet<String>,
        bad: &mut Vec<String>,
    ) {
        if let Some(at) = path.iter().position(|p| p == m) {
            bad.push(format!("import cycle: {} -> {m}", path[at..].join(" -> ")));
            return;
        }
        if !done.insert(m.to_string()) {
            return;
        }
        path.push(m.to_string());
        for next in edges.get(m).into_iter().flatten() {
            visit(next, edges, path, done, bad);
        }
        path.pop();
    }
    let mut done = std::collections::BTreeSet::new();
    for m in &modules {
        visit(m, &edges, &mut vec![], &mut done, &mut bad);
    }
    bad
}

#[test]
fn export_and_import_stages_share_a_context_and_form_no_cycle() {
    for folder in ["export", "import"] {
        let bad = folder_violations(folder);
        assert!(bad.is_empty(), "src/{folder}:\n{}", bad.join("\n"));
    }
}

#[test]
fn folder_check_catches_a_driver_import_and_a_cycle() {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-layering-{}", std::process::id()));
    let folder = tmp.join("src").join("planted");
    fs::create_dir_all(&folder).unwrap();
    fs::write(
        folder.join("mod.rs"),
        "mod a;\nmod b;\npub(crate) fn helper() {}\n",
    )
    .unwrap();
    fs::write(
        folder.join("a.rs"),
        "use super::b::B;\nuse super::helper;\npub struct A;\n",
    )
    .unwrap();
    fs::write(folder.join("b.rs"), "use super::a::A;\npub struct B;\n").unwrap();
    let bad = folder_violations(folder.to_str().unwrap());
    fs::remove_dir_all(&tmp).unwrap();
    assert!(
        bad.iter().any(|b| b.contains("`helper` is the driver's")),
        "{bad:?}"
    );
    assert!(bad.iter().any(|b| b.contains("import cycle")), "{bad:?}");
}
