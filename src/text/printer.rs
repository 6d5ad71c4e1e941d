//! The canonical printer: two-space indentation, one statement per line, `if` and
//! `loop` spread over several lines with closing parentheses gathered at the end of
//! the last line, every stage parameter spelled out, no comments.

use crate::ir::{
    walk, Half, Indirect, Inst, InstKind, InterpMode, Pipeline, Shader, Stage, StageInfo, Stmt,
    Value, Visit,
};

use super::inst::{COMPONENTS, INTERPS, INTERP_LOCS};
use super::literal::print_const;
use super::parser::params_of;

/// A printed form: one line, or a list whose items go on their own lines.
enum Doc {
    Line(String),
    Group(String, Vec<Doc>),
    /// Lines already laid out, indented relative to the group holding them.
    Lines(Vec<String>),
}

impl Doc {
    fn render(&self, indent: usize, lines: &mut Vec<String>) {
        let pad = " ".repeat(indent);
        match self {
            Doc::Line(text) => lines.push(format!("{pad}{text}")),
            Doc::Lines(laid) => lines.extend(laid.iter().map(|l| format!("{pad}{l}"))),
            Doc::Group(head, items) if items.is_empty() => lines.push(format!("{pad}({head})")),
            Doc::Group(head, items) => {
                lines.push(format!("{pad}({head}"));
                for item in items {
                    item.render(indent + 2, lines);
                }
                if let Some(last) = lines.last_mut() {
                    last.push(')');
                }
            }
        }
    }
}

/// The canonical text of a pipeline, ending in a newline.
pub(crate) fn pipeline(p: &Pipeline) -> String {
    let mut items = Vec::new();
    if p.uniforms > 0 {
        let only = visible(p.visibility.uniforms);
        items.push(Doc::Line(format!("(uniforms {}{only})", p.uniforms)));
    }
    for ubo in &p.ubos {
        let only = visible(p.visibility.ubos.get(&ubo.block).copied());
        items.push(Doc::Line(format!("(ubo {} {}{only})", ubo.block, ubo.size)));
    }
    items.push(shader("producer", &p.producer));
    items.push(shader("consumer", &p.consumer));
    let mut lines = Vec::new();
    Doc::Group("pair".to_owned(), items).render(0, &mut lines);
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

fn shader(role: &str, s: &Shader) -> Doc {
    let printer = ShaderPrinter { shader: s };
    let mut items = stage_params(&s.info);
    if s.layer_viewport_relative {
        items.push(Doc::Line("(layer_viewport_relative)".to_owned()));
    }
    let body = printer.body();
    if !body.is_empty() {
        items.push(Doc::Lines(body));
    }
    Doc::Group(format!("{role} {}", s.stage()), items)
}

/// Every parameter of the stage, in `params_of` order; `point_mode` only when set.
fn stage_params(info: &StageInfo) -> Vec<Doc> {
    let value = |param: &str| -> Option<String> {
        Some(match (info, param) {
            (StageInfo::Vertex { topology }, "topology") => topology.to_string(),
            (StageInfo::TessCtrl { input_vertices, .. }, "input_vertices")
            | (StageInfo::TessEval { input_vertices, .. }, "input_vertices") => {
                input_vertices.to_string()
            }
            (
                StageInfo::TessCtrl {
                    output_vertices, ..
                },
                "output_vertices",
            ) => output_vertices.to_string(),
            (StageInfo::TessEval { domain, .. }, "domain") => domain.to_string(),
            (StageInfo::TessEval { point_mode, .. }, "point_mode") => {
                return point_mode.then(String::new)
            }
            (StageInfo::Geometry { input, .. }, "input") => input.to_string(),
            (StageInfo::Geometry { output, .. }, "output") => output.to_string(),
            (StageInfo::Geometry { max_vertices, .. }, "max_vertices") => max_vertices.to_string(),
            (StageInfo::Geometry { invocations, .. }, "invocations") => invocations.to_string(),
            (StageInfo::Fragment { provoking }, "provoking") => provoking.to_string(),
            _ => return None,
        })
    };
    let stage: Stage = info.stage();
    params_of(stage)
        .iter()
        .filter_map(|param| {
            let v = value(param)?;
            let text = if v.is_empty() {
                format!("({param})")
            } else {
                format!("({param} {v})")
            };
            Some(Doc::Line(text))
        })
        .collect()
}

/// Lines being laid out with the indentation of the innermost open group.
#[derive(Default)]
struct Layout {
    lines: Vec<String>,
    indent: usize,
}

impl Layout {
    fn line(&mut self, text: String) {
        self.lines
            .push(format!("{}{text}", " ".repeat(self.indent)));
    }

    /// `(head` with the items to come indented below it, or `(head)` when it has none.
    fn open(&mut self, head: &str, empty: bool) {
        if empty {
            self.line(format!("({head})"));
        } else {
            self.line(format!("({head}"));
            self.indent += 2;
        }
    }

    /// Ends the innermost open group on its last line.
    fn close(&mut self) {
        if let Some(last) = self.lines.last_mut() {
            last.push(')');
        }
        self.indent -= 2;
    }
}

struct ShaderPrinter<'a> {
    shader: &'a Shader,
}

impl ShaderPrinter<'_> {
    /// `%name`; a handle outside the arena (invalid IR) prints as `%?N` rather than
    /// failing, so broken pipelines can still be looked at.
    fn val(&self, v: Value) -> String {
        match self.shader.values.get(v.index()) {
            Some(info) => format!("%{}", info.name),
            None => format!("%?{}", v.0),
        }
    }

    fn vals(&self, vs: &[Value]) -> Vec<String> {
        vs.iter().map(|v| self.val(*v)).collect()
    }

    /// The shader's statements laid out as lines. Nesting is the input's own, so the
    /// layout follows a [`walk`] rather than recursing: an `if` or loop opens a line
    /// and indents, its end closes the last line with `)`.
    fn body(&self) -> Vec<String> {
        let mut out = Layout::default();
        for visit in walk(&self.shader.body) {
            match visit {
                Visit::Enter(stmt) => self.enter(stmt, &mut out),
                Visit::Else(Stmt::If {
                    then_body,
                    else_body,
                    ..
                }) => {
                    if !then_body.is_empty() {
                        out.close();
                    }
                    out.open("else", else_body.is_empty());
                }
                Visit::Leave(Stmt::If {
                    else_body, phis, ..
                }) => {
                    if !else_body.is_empty() {
                        out.close();
                    }
                    for p in phis {
                        let (d, t, e) =
                            (self.val(p.dst), self.val(p.then_val), self.val(p.else_val));
                        out.line(format!("({d} = phi {t} {e})"));
                    }
                    out.close();
                }
                Visit::Leave(Stmt::Loop { phis, body, .. }) => {
                    if !(phis.is_empty() && body.is_empty()) {
                        out.close();
                    }
                }
                Visit::Else(_) | Visit::Leave(_) => {}
            }
        }
        out.lines
    }

    /// A statement's own line(s), opening a group for an `if` or a loop.
    fn enter(&self, stmt: &Stmt, out: &mut Layout) {
        match stmt {
            Stmt::Inst(inst) => out.line(self.inst(inst)),
            Stmt::If {
                cond, then_body, ..
            } => {
                out.open(&format!("if {}", self.val(*cond)), false);
                out.open("then", then_body.is_empty());
            }
            Stmt::Loop { phis, body, .. } => {
                out.open("loop", phis.is_empty() && body.is_empty());
                for p in phis {
                    out.line(format!("({} = phi {})", self.val(p.dst), self.val(p.init)));
                }
            }
            Stmt::Break { .. } => out.line("(break)".to_owned()),
            Stmt::Continue { args, .. } => {
                let mut words = vec!["continue".to_owned()];
                words.extend(self.vals(args));
                out.line(format!("({})", words.join(" ")));
            }
        }
    }

    fn inst(&self, inst: &Inst) -> String {
        let mut words = Vec::new();
        if let Some(r) = inst.result {
            words.push(self.val(r));
            words.push("=".to_owned());
        }
        words.push(inst.kind.keyword().to_owned());
        self.operand_words(inst, &mut words);
        format!("({})", words.join(" "))
    }

    /// The words after the keyword.
    fn operand_words(&self, inst: &Inst, w: &mut Vec<String>) {
        let bits = || match inst.result.and_then(|r| self.shader.values.get(r.index())) {
            Some(info) => info.bits,
            None => crate::ir::BitSize::B32,
        };
        match &inst.kind {
            InstKind::Const(pattern) => {
                w.push(bits().bits().to_string());
                w.push(print_const(*pattern, bits()));
            }
            InstKind::Undef => w.push(bits().bits().to_string()),
            InstKind::Alu { exact, srcs, .. } => {
                if *exact {
                    w.push("exact".to_owned());
                }
                w.extend(self.vals(srcs));
            }
            InstKind::LoadInput { slot, indirect } => {
                w.push(slot.to_string());
                self.indirect(indirect, w);
            }
            InstKind::LoadInterpolatedInput {
                slot,
                mode,
                operands,
                indirect,
            } => {
                w.push(slot.to_string());
                w.extend(interp_words(*mode));
                w.extend(self.vals(operands));
                self.indirect(indirect, w);
            }
            InstKind::LoadPerVertexInput {
                slot,
                vertex,
                indirect,
            } => {
                w.push(slot.to_string());
                w.push(self.val(*vertex));
                self.indirect(indirect, w);
            }
            InstKind::LoadOutput {
                slot,
                vertex,
                indirect,
            } => {
                w.push(slot.to_string());
                w.extend(vertex.map(|v| self.val(v)));
                self.indirect(indirect, w);
            }
            InstKind::StoreOutput {
                slot,
                value,
                indirect,
                xfb,
                no_varying,
            } => {
                w.push(slot.to_string());
                w.push(self.val(*value));
                self.indirect(indirect, w);
                w.extend(xfb.map(|x| format!("(xfb {} {})", x.buffer, x.offset)));
                if *no_varying {
                    w.push("no_varying".to_owned());
                }
            }
            InstKind::StorePerVertexOutput {
                slot,
                value,
                vertex,
                indirect,
            } => {
                w.push(slot.to_string());
                w.push(self.val(*value));
                w.push(self.val(*vertex));
                self.indirect(indirect, w);
            }
            InstKind::LoadUniform { index, half } => {
                w.push(format!("{index}{}", half_suffix(*half)))
            }
            InstKind::LoadUbo {
                block,
                offset,
                half,
            } => {
                w.push(block.to_string());
                w.push(self.val(*offset));
                match half {
                    Half::Full => {}
                    Half::Lo => w.push("lo".into()),
                    Half::Hi => w.push("hi".into()),
                }
            }
            InstKind::LoadSystemValue(sv) => w.push(sv.to_string()),
            InstKind::EmitVertex
            | InstKind::EndPrimitive
            | InstKind::Barrier
            | InstKind::Discard => {}
            InstKind::Texture {
                sampler,
                comp,
                coords,
            } => {
                w.push(sampler.to_string());
                let c = COMPONENTS.get(*comp as usize).copied().unwrap_or("?");
                w.push(c.to_owned());
                w.extend(self.vals(coords));
            }
            InstKind::SsboLoad { buffer, addr } => {
                w.push(buffer.to_string());
                w.push(self.val(*addr));
            }
            InstKind::SsboStore {
                buffer,
                addr,
                value,
            } => {
                w.push(buffer.to_string());
                w.push(self.val(*addr));
                w.push(self.val(*value));
            }
            InstKind::Opaque { op, srcs } => {
                w.push(op.to_string());
                w.extend(self.vals(srcs));
            }
        }
    }

    fn indirect(&self, indirect: &Option<Indirect>, w: &mut Vec<String>) {
        if let Some(ind) = indirect {
            w.push(format!("(indirect {} {})", self.val(ind.index), ind.len));
        }
    }
}

fn interp_words(mode: InterpMode) -> [String; 2] {
    let interp = INTERPS.iter().find(|(i, _)| *i == mode.interp);
    let loc = INTERP_LOCS.iter().find(|(l, _)| *l == mode.loc);
    [
        interp.map_or("?", |(_, n)| n).to_owned(),
        loc.map_or("?", |(_, n)| n).to_owned(),
    ]
}

/// The ` (visible STAGE)` suffix of a resource only one stage may read.
fn visible(only: Option<crate::ir::Reader>) -> String {
    only.map(|r| format!(" (visible {r})")).unwrap_or_default()
}

/// `.lo` / `.hi` after a word index for a 16-bit half, nothing for the whole word.
fn half_suffix(half: Half) -> &'static str {
    match half {
        Half::Full => "",
        Half::Lo => ".lo",
        Half::Hi => ".hi",
    }
}
