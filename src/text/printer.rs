//! The canonical printer: two-space indentation, one statement per line, `if` and
//! `loop` spread over several lines with closing parentheses gathered at the end of
//! the last line, every stage parameter spelled out, no comments.

use crate::ir::{
    Indirect, Inst, InstKind, InterpMode, Pipeline, Shader, Stage, StageInfo, Stmt, Value,
};

use super::inst::{COMPONENTS, INTERPS, INTERP_LOCS};
use super::literal::print_const;
use super::parser::params_of;

/// A printed form: one line, or a list whose items go on their own lines.
enum Doc {
    Line(String),
    Group(String, Vec<Doc>),
}

impl Doc {
    fn render(&self, indent: usize, lines: &mut Vec<String>) {
        let pad = " ".repeat(indent);
        match self {
            Doc::Line(text) => lines.push(format!("{pad}{text}")),
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
    items.extend(s.body.iter().map(|stmt| printer.stmt(stmt)));
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

    fn stmt(&self, stmt: &Stmt) -> Doc {
        match stmt {
            Stmt::Inst(inst) => Doc::Line(self.inst(inst)),
            Stmt::If {
                cond,
                then_body,
                else_body,
                phis,
                ..
            } => {
                let then_doc = Doc::Group("then".to_owned(), self.block(then_body));
                let else_doc = Doc::Group("else".to_owned(), self.block(else_body));
                let mut items = vec![then_doc, else_doc];
                items.extend(phis.iter().map(|p| {
                    let (d, t, e) = (self.val(p.dst), self.val(p.then_val), self.val(p.else_val));
                    Doc::Line(format!("({d} = phi {t} {e})"))
                }));
                Doc::Group(format!("if {}", self.val(*cond)), items)
            }
            Stmt::Loop { phis, body, .. } => {
                let mut items: Vec<Doc> = phis
                    .iter()
                    .map(|p| Doc::Line(format!("({} = phi {})", self.val(p.dst), self.val(p.init))))
                    .collect();
                items.extend(self.block(body));
                Doc::Group("loop".to_owned(), items)
            }
            Stmt::Break { .. } => Doc::Line("(break)".to_owned()),
            Stmt::Continue { args, .. } => {
                let mut words = vec!["continue".to_owned()];
                words.extend(self.vals(args));
                Doc::Line(format!("({})", words.join(" ")))
            }
        }
    }

    fn block(&self, block: &[Stmt]) -> Vec<Doc> {
        block.iter().map(|s| self.stmt(s)).collect()
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
            InstKind::LoadUniform { index } => w.push(index.to_string()),
            InstKind::LoadUbo { block, offset } => {
                w.push(block.to_string());
                w.push(self.val(*offset));
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
