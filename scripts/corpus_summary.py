"""Summarizes a third-party corpus run (scripts/third_party_corpus.sh) by class of pair.

Every pair gets one class from what its files are (paths, piglit headers, the
sections of the `.shader_test` it was split from), never from its outcome, so the
share that imports can be stated honestly for the pairs that are real programs:

  glmark2           a glmark2 scene's vertex + fragment shader (a real program)
  program           a piglit `.shader_test` program that is expected to link
  program-units     a `.shader_test` program with several compilation units of one
                    stage: the corpus keeps the last, so the pair is incomplete
  program-file      stage files a piglit C test compiles and links as a program
                    (tests/shaders, tests/spec/ext_external_objects)
  link-error        a `.shader_test` whose [test] expects `link error`: not a valid
                    program by design
  compile-fail      a standalone compile test expected to fail to compile
                    (`expect_result: fail` in either file's [config])
  compile-partial   standalone compile tests expected to compile, one of which has no
                    `main`: a compilation unit, not a stage
  compile-pass      standalone compile tests expected to compile, both complete
                    stages: piglit compiles each alone; only the corpus pairs them by
                    file stem, so they were never meant to link

usage: corpus_summary.py RUN_DIR [--docs PATH] [--classes]
  reads RUN_DIR/files (the list split `tN` sections are numbered in), RUN_DIR/sample
  (else RUN_DIR/pairs), RUN_DIR/results, RUN_DIR/commit;
  --classes  prints `PAIR<TAB>CLASS` for every selected pair instead of the summary;
  --docs P   also writes the summary between the corpus-run markers of P.
Environment: CORPUS_FOUND, CORPUS_STEP (the script's selection, for the heading).
"""
import collections, datetime, os, re, sys

LINKED = ["glmark2", "program", "program-units", "program-file"]
NOT_PROGRAMS = ["link-error", "compile-fail", "compile-partial", "compile-pass"]
DESCRIPTION = {
    "glmark2": "glmark2 scene programs",
    "program": "piglit `.shader_test` programs expected to link",
    "program-units": "piglit `.shader_test` programs with several compilation units of a stage (the corpus pairs the last only)",
    "program-file": "stage files a piglit C test links (tests/shaders, ext_external_objects)",
    "link-error": "piglit `.shader_test` files whose [test] expects `link error`",
    "compile-fail": "standalone compile tests expected to fail (`expect_result: fail`)",
    "compile-partial": "standalone compile tests expected to compile, a file without `main` (a compilation unit, not a stage)",
    "compile-pass": "standalone compile tests expected to compile, both complete stages, compiled alone by piglit and paired here by file stem only",
}
STAGE_SECTIONS = {"vertex shader", "tessellation control shader",
                  "tessellation evaluation shader", "geometry shader", "fragment shader"}
SPLIT = re.compile(r"/split/t(\d+)\.[a-z]+$")


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def config(text):
    """The `key: value` lines of a piglit [config] header (in the opening comment)."""
    m = re.search(r"\[config\](.*?)\[end config\]", text[:8000], re.S)
    if not m:
        return None
    out = {}
    for line in m.group(1).splitlines():
        k, sep, v = line.strip(" \t*/").partition(":")
        if sep:
            out[k.strip().lower()] = v.strip().lower()
    return out


def has_main(text):
    """Whether the source defines `main` (outside comments)."""
    code = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    code = re.sub(r"//[^\n]*", " ", code)
    return re.search(r"\bvoid\s+main\s*\(\s*(void\s*)?\)\s*\{", code) is not None


def shader_test_class(text):
    """The class of a pair split from this `.shader_test`."""
    sections, test = collections.Counter(), []
    current = None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("[") and s.endswith("]"):
            current = s.strip("[] \t").lower()
            sections[current] += 1
            continue
        if current == "test":
            test.append(s.lower())
    if any(t == "link error" or t.startswith("link error ") for t in test):
        return "link-error"
    if any(sections[s] > 1 for s in STAGE_SECTIONS):
        return "program-units"
    return "program"


def classify(pair, files):
    """The class of `PRODUCER CONSUMER`; `files` maps a split index to its source."""
    paths = pair.split(" ")
    if any("/glmark2/" in p for p in paths):
        return "glmark2"
    m = SPLIT.search(paths[0])
    if m:
        n = int(m.group(1))
        return shader_test_class(read(files[n]) if n < len(files) else "")
    texts = [read(p) for p in paths]
    configs = [config(t) for t in texts]
    if all(c is None for c in configs):
        return "program-file"
    if any(c and c.get("expect_result") == "fail" for c in configs):
        return "compile-fail"
    if not all(has_main(t) for t in texts):
        return "compile-partial"
    return "compile-pass"


def cause_of(outcome):
    """The outcome without the pair's paths an `equiv` failure names and without
    the per-pair temporary directory an interpreter error names."""
    outcome = re.sub(r" \[[^\]]*\]$", "", outcome)
    return re.sub(r"/tmp/[^ :]*/", "", outcome)


def summary(run, pairs, results, classes):
    by_class = collections.defaultdict(list)
    for p in pairs:
        by_class[classes[p]].append(results.get(p))
    found = os.environ.get("CORPUS_FOUND", str(len(pairs)))
    step = os.environ.get("CORPUS_STEP", "1")
    commit = read(os.path.join(run, "commit")).strip() or "unknown"
    done = sum(1 for p in pairs if p in results)
    state = "complete" if done == len(pairs) else f"**partial: {done} of {len(pairs)} done**"
    out = [f"Run of {datetime.date.today()} (release build of {commit}): {found} pairs found, "
           f"{len(pairs)} selected (every {step}. one), {state}.", "",
           "| class | pairs | done | imported | optimized | equivalent | imported of done |",
           "|---|---|---|---|---|---|---|"]

    def row(name, outcomes):
        got = [o for o in outcomes if o is not None]
        first = collections.Counter(o.split(" ", 1)[0] for o in got)
        imp = len(got) - first["import"]
        opt = imp - first["opt"]
        eq = opt - first["equiv"]
        share = f"{100.0 * imp / len(got):.2f} %" if got else "-"
        return f"| {name} | {len(outcomes)} | {len(got)} | {imp} | {opt} | {eq} | {share} |"

    for c in LINKED + NOT_PROGRAMS:
        if by_class[c]:
            out.append(row(f"`{c}`: {DESCRIPTION[c]}", by_class[c]))
    linked = [o for c in LINKED for o in by_class[c]]
    out.append(row("**linked programs** (the first four)", linked))
    out.append(row("**all pairs**", [o for c in by_class for o in by_class[c]]))
    out += ["", "Failures by class, first failing stage and cause (the 12 largest a class):", "",
            "| class | count | stage | cause |", "|---|---|---|---|"]
    for c in LINKED + NOT_PROGRAMS:
        causes = collections.Counter(cause_of(o) for o in by_class[c] if o and o != "ok")
        ranked = sorted(causes.items(), key=lambda kv: (-kv[1], kv[0]))
        for cause, k in ranked[:12]:
            stage, _, text = cause.partition(" ")
            out.append(f"| `{c}` | {k} | {stage} | {text.replace('|', '/')} |")
        rest = ranked[12:]
        if rest:
            out.append(f"| `{c}` | {sum(k for _, k in rest)} | - | {len(rest)} other causes |")
    return "\n".join(out)


def write_docs(path, block):
    text = read(path)
    begin, end = "<!-- corpus-run:begin -->", "<!-- corpus-run:end -->"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = head + begin + "\n" + block + "\n" + end + tail
    else:
        text = text.rstrip("\n") + "\n\n" + begin + "\n" + block + "\n" + end + "\n"
    with open(path, "w") as f:
        f.write(text)


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.exit(__doc__)
    run, docs, only_classes = argv[0], None, False
    rest = argv[1:]
    while rest:
        a = rest.pop(0)
        if a == "--classes":
            only_classes = True
        elif a == "--docs" and rest:
            docs = rest.pop(0)
        else:
            sys.exit(f"corpus_summary.py: unknown argument {a}")
    files = read(os.path.join(run, "files")).splitlines()
    listed = os.path.join(run, "sample")
    if not os.path.exists(listed):
        listed = os.path.join(run, "pairs")
    pairs = [l for l in read(listed).splitlines() if l.strip()]
    results = {}
    for l in read(os.path.join(run, "results")).splitlines():
        key, tab, outcome = l.partition("\t")
        if tab:
            results[key] = outcome  # a pair run again: the last result counts
    classes = {p: classify(p, files) for p in pairs}
    if only_classes:
        for p in pairs:
            print(f"{p}\t{classes[p]}")
        return
    block = summary(run, pairs, results, classes)
    print(block)
    if docs:
        write_docs(docs, block)


if __name__ == "__main__":
    main(sys.argv[1:])
