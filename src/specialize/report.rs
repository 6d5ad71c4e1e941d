//! What specialization did (words inlined, conditions folded, per stage) and what
//! detection found (conditions that known uniform words would decide), as text and
//! JSON.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::json;

use crate::ir::{BitSize, SrcLoc, Stage, UniformWord};

/// What decides which way a folded or foldable condition goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConditionKind {
    /// The condition of an `if`.
    Branch,
    /// The selector of a `bcsel`.
    Select,
    /// The bound a loop's induction variable is compared with before `break`.
    LoopBound,
}

impl ConditionKind {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            ConditionKind::Branch => "if",
            ConditionKind::Select => "bcsel",
            ConditionKind::LoopBound => "loop bound",
        }
    }
}

/// A condition the inlined values decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoldedCondition {
    /// `if` or `bcsel` (loop bounds become constants but the loop stays).
    pub kind: ConditionKind,
    /// Where it was written.
    pub loc: Option<SrcLoc>,
    /// Whether the condition was true (the then-branch, the first select operand).
    pub taken: bool,
}

/// What inlining and folding did to one stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageFolds {
    /// The stage.
    pub stage: Stage,
    /// Loads replaced by a constant, per word.
    pub inlined: BTreeMap<UniformWord, usize>,
    /// ALU instructions evaluated to a constant.
    pub constants: usize,
    /// `bcsel`s replaced by the operand they select.
    pub selects: usize,
    /// `if`s replaced by the branch they take.
    pub branches: usize,
    /// Instructions of the branches never taken, removed with them.
    pub removed: usize,
    /// Every folded condition, in program order.
    pub conditions: Vec<FoldedCondition>,
}

impl StageFolds {
    pub(crate) fn new(stage: Stage) -> StageFolds {
        StageFolds {
            stage,
            inlined: BTreeMap::new(),
            constants: 0,
            selects: 0,
            branches: 0,
            removed: 0,
            conditions: vec![],
        }
    }
}

/// What specializing a pair on known uniform words did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecializeReport {
    /// The known words and their values (bit patterns), in word order.
    pub known: Vec<(UniformWord, u32)>,
    /// Producer, then consumer.
    pub stages: Vec<StageFolds>,
}

fn value_text(bits: u32) -> String {
    crate::text::literal::print_const(bits, BitSize::B32)
}

/// `1 select`, `2 selects`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else if noun.ends_with("ch") {
        format!("{n} {noun}es")
    } else {
        format!("{n} {noun}s")
    }
}

fn loc_text(loc: Option<SrcLoc>) -> String {
    loc.map_or("-".into(), |l| l.to_string())
}

impl SpecializeReport {
    /// The report as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        let known: Vec<_> = self
            .known
            .iter()
            .map(|(w, v)| {
                let loads: BTreeMap<String, usize> = self
                    .stages
                    .iter()
                    .map(|s| (s.stage.to_string(), s.inlined.get(w).copied().unwrap_or(0)))
                    .collect();
                json!({ "word": w.to_string(), "value": value_text(*v), "bits": v, "loads": loads })
            })
            .collect();
        let stages: Vec<_> = self.stages.iter().map(stage_json).collect();
        json!({ "inlined": known, "stages": stages })
    }
}

fn stage_json(s: &StageFolds) -> serde_json::Value {
    let conditions: Vec<_> = s
        .conditions
        .iter()
        .map(|c| json!({ "kind": c.kind.name(), "loc": loc_text(c.loc), "taken": c.taken }))
        .collect();
    json!({
        "stage": s.stage.to_string(),
        "constants_folded": s.constants,
        "selects_collapsed": s.selects,
        "branches_folded": s.branches,
        "instructions_removed": s.removed,
        "conditions": conditions,
    })
}

impl fmt::Display for SpecializeReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "specialized on {} known uniform words:",
            self.known.len()
        )?;
        for (w, v) in &self.known {
            let loads: Vec<String> = self
                .stages
                .iter()
                .filter_map(|s| {
                    s.inlined
                        .get(w)
                        .map(|n| format!("{} loads in {}", n, s.stage))
                })
                .collect();
            let loads = if loads.is_empty() {
                "never loaded".to_string()
            } else {
                loads.join(", ")
            };
            writeln!(f, "  {w} = {} ({loads})", value_text(*v))?;
        }
        for s in &self.stages {
            if s.inlined.is_empty() && s.constants == 0 {
                continue;
            }
            writeln!(
                f,
                "  {}: {} collapsed, {} folded ({} removed), {} folded",
                s.stage,
                count(s.selects, "select"),
                count(s.branches, "branch"),
                count(s.removed, "instruction"),
                count(s.constants, "constant")
            )?;
            for c in &s.conditions {
                let side = match (c.kind, c.taken) {
                    (ConditionKind::Select, true) => "selects its first operand",
                    (ConditionKind::Select, false) => "selects its second operand",
                    (_, true) => "takes the then-branch",
                    (_, false) => "takes the else-branch",
                };
                writeln!(f, "    {} {} {side}", loc_text(c.loc), c.kind.name())?;
            }
        }
        Ok(())
    }
}

/// A condition built only from constants and uniform words, which knowing those
/// words would decide.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InlinableCondition {
    /// `if`, `bcsel` or loop bound.
    pub kind: ConditionKind,
    /// Where it is written.
    pub loc: Option<SrcLoc>,
    /// The words it reads, all needed to decide it.
    pub words: Vec<UniformWord>,
    /// Instructions that would fold: the condition's own (uniform loads and ALU), the
    /// `bcsel` itself, and for an `if` the instructions of its smaller branch (at least
    /// that many disappear whichever way it goes).
    pub folds: usize,
}

/// One word's share of a stage's inlinable conditions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InlinableWord {
    /// The word.
    pub word: UniformWord,
    /// Conditions reading it.
    pub conditions: usize,
    /// Sum of those conditions' fold counts.
    pub folds: usize,
}

/// The inlinable conditions of one stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageInlinable {
    /// The stage.
    pub stage: Stage,
    /// Per word, in word order.
    pub words: Vec<InlinableWord>,
    /// Every condition, in program order.
    pub conditions: Vec<InlinableCondition>,
}

impl StageInlinable {
    /// The UBO words as ranges: `(block, first byte, end byte)` of adjacent words.
    pub fn ubo_ranges(&self) -> Vec<(u32, u32, u32)> {
        let mut out: Vec<(u32, u32, u32)> = vec![];
        for w in &self.words {
            let UniformWord::Ubo { block, offset } = w.word else {
                continue;
            };
            match out.last_mut() {
                Some((b, _, end)) if *b == block && *end == offset => *end = offset + 4,
                _ => out.push((block, offset, offset + 4)),
            }
        }
        out
    }
}

/// What `varysat stats --inlinable` lists: per stage, the uniform words and UBO
/// ranges whose values decide conditions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inlinable {
    /// Producer, then consumer.
    pub stages: Vec<StageInlinable>,
}

impl Inlinable {
    /// Whether no stage has an inlinable condition.
    pub fn is_empty(&self) -> bool {
        self.stages.iter().all(|s| s.conditions.is_empty())
    }

    /// The listing as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        let stages: Vec<_> = self
            .stages
            .iter()
            .map(|s| {
                let words: Vec<_> = s
                    .words
                    .iter()
                    .map(|w| json!({ "word": w.word.to_string(), "conditions": w.conditions, "folds": w.folds }))
                    .collect();
                let ranges: Vec<_> = s
                    .ubo_ranges()
                    .iter()
                    .map(|(b, start, end)| json!({ "block": b, "start": start, "end": end }))
                    .collect();
                let conditions: Vec<_> = s
                    .conditions
                    .iter()
                    .map(|c| {
                        let words: Vec<String> = c.words.iter().map(|w| w.to_string()).collect();
                        json!({ "kind": c.kind.name(), "loc": loc_text(c.loc), "words": words, "folds": c.folds })
                    })
                    .collect();
                json!({ "stage": s.stage.to_string(), "words": words, "ubo_ranges": ranges, "conditions": conditions })
            })
            .collect();
        json!({ "stages": stages })
    }
}

impl fmt::Display for Inlinable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for s in &self.stages {
            if s.conditions.is_empty() {
                writeln!(f, "  {}: no condition decided by uniforms alone", s.stage)?;
                continue;
            }
            writeln!(f, "  {}:", s.stage)?;
            for w in &s.words {
                writeln!(
                    f,
                    "    {}: decides {}, folds {}",
                    w.word,
                    count(w.conditions, "condition"),
                    count(w.folds, "instruction")
                )?;
            }
            for (block, start, end) in s.ubo_ranges() {
                writeln!(f, "    ubo range {block}:{start}..{end}")?;
            }
            for c in &s.conditions {
                let words: Vec<String> = c.words.iter().map(|w| w.to_string()).collect();
                writeln!(
                    f,
                    "    {} {} on {} (folds {})",
                    loc_text(c.loc),
                    c.kind.name(),
                    words.join(", "),
                    c.folds
                )?;
            }
        }
        Ok(())
    }
}
