//! The top of the grammar: `(pair decl* producer consumer)`, the declarations, and
//! each shader's stage and stage parameters. Statements are read by `stmt`.

use std::collections::BTreeMap;

use crate::ir::{
    Pipeline, Primitive, ProvokingVertex, Reader, Shader, SrcLoc, Stage, StageInfo, UboDecl,
    Visibility,
};

use super::cursor::{found, one_of, Cursor, PResult};
use super::stmt;
use super::tree::Node;
use super::ParseError;

/// Every stage-parameter keyword, whatever the stage.
pub(crate) const INFO_KEYWORDS: &[&str] = &[
    "topology",
    "input_vertices",
    "output_vertices",
    "domain",
    "point_mode",
    "input",
    "output",
    "max_vertices",
    "invocations",
    "provoking",
    "layer_viewport_relative",
];

/// The parameters a stage takes, in printing order.
pub(crate) fn params_of(stage: Stage) -> &'static [&'static str] {
    match stage {
        Stage::Vertex => &["topology", "layer_viewport_relative"],
        Stage::TessCtrl => &["input_vertices", "output_vertices"],
        Stage::TessEval => &[
            "domain",
            "input_vertices",
            "point_mode",
            "layer_viewport_relative",
        ],
        Stage::Geometry => &[
            "input",
            "output",
            "max_vertices",
            "invocations",
            "layer_viewport_relative",
        ],
        Stage::Fragment => &["provoking"],
    }
}

/// Primitives accepted by each primitive-valued parameter.
pub(crate) fn primitives_for(param: &str) -> &'static [Primitive] {
    use Primitive::*;
    match param {
        "topology" => &[Points, Lines, Triangles],
        "domain" => &[Triangles, Quads, Isolines],
        "input" => &[Points, Lines, Triangles, LinesAdjacency, TrianglesAdjacency],
        "output" => &[Points, LineStrip, TriangleStrip],
        _ => &[],
    }
}

const TOP_ITEMS: &str = "`(uniforms N)`, `(ubo BLOCK SIZE)`, `(producer ...)` or `(consumer ...)`";

/// What an optional `(visible READER...)` at the end of a resource declaration says:
/// `None` when absent or naming both stages.
fn visible(cur: &mut Cursor<'_>) -> PResult<Option<Reader>> {
    let Some(node) = cur.eat_list("visible") else {
        return Ok(None);
    };
    let mut c = Cursor::of(node, "`(visible producer|consumer ...)`")?;
    c.next("`visible`")?;
    let mut readers = std::collections::BTreeSet::new();
    while c.peek().is_some() {
        let r: Reader = c.keyword("a stage", &["producer", "consumer"])?;
        readers.insert(r);
    }
    match readers.len() {
        0 => Err(ParseError::new(
            node.loc,
            "`(visible)` names no stage: give `producer`, `consumer` or both",
        )),
        1 => Ok(readers.into_iter().next()),
        _ => Ok(None),
    }
}

/// The parts of a pair read so far, with where each was first seen.
#[derive(Default)]
struct Parts {
    uniforms: Option<(u32, SrcLoc)>,
    ubos: Vec<UboDecl>,
    visibility: Visibility,
    producer: Option<Shader>,
    consumer: Option<Shader>,
}

/// Builds the pipeline from the tree of a whole file.
pub(crate) fn pipeline(tree: &Node) -> PResult<Pipeline> {
    let mut cur = Cursor::of(tree, "`(pair ...)`")?;
    let (head, loc) = cur.atom("`pair`")?;
    if head != "pair" {
        return Err(ParseError::new(
            loc,
            format!("expected `pair`, found `{head}`"),
        ));
    }
    let mut parts = Parts::default();
    while let Some(node) = cur.peek() {
        cur.next(TOP_ITEMS)?;
        top_item(node, &mut parts)?;
    }
    let close = cur.close();
    let producer = parts
        .producer
        .ok_or_else(|| ParseError::new(close, "missing `(producer ...)`"))?;
    let consumer = parts
        .consumer
        .ok_or_else(|| ParseError::new(close, "missing `(consumer ...)`"))?;
    let mut p = Pipeline::new(producer, consumer);
    p.uniforms = parts.uniforms.map_or(0, |(n, _)| n);
    p.ubos = parts.ubos;
    p.visibility = parts.visibility;
    Ok(p)
}

fn top_item(node: &Node, parts: &mut Parts) -> PResult<()> {
    let head = node.head().unwrap_or_default();
    let is_decl = matches!(head, "uniforms" | "ubo");
    if is_decl && (parts.producer.is_some() || parts.consumer.is_some()) {
        let msg = format!("`({head} ...)` must come before `(producer ...)`");
        return Err(ParseError::new(node.loc, msg));
    }
    match head {
        "uniforms" => uniforms(node, parts),
        "ubo" => ubo(node, parts),
        "producer" => {
            if let Some(first) = &parts.producer {
                return Err(twice(node, "`(producer ...)`", first.loc));
            }
            parts.producer = Some(shader(node)?);
            Ok(())
        }
        "consumer" => {
            if let Some(first) = &parts.consumer {
                return Err(twice(node, "`(consumer ...)`", first.loc));
            }
            if parts.producer.is_none() {
                let msg = "missing `(producer ...)` before `(consumer ...)`";
                return Err(ParseError::new(node.loc, msg));
            }
            parts.consumer = Some(shader(node)?);
            Ok(())
        }
        _ => Err(found(node, TOP_ITEMS)),
    }
}

fn twice(node: &Node, what: &str, first: Option<SrcLoc>) -> ParseError {
    let first = first
        .map(|l| format!(" (first at {l})"))
        .unwrap_or_default();
    ParseError::new(node.loc, format!("{what} appears twice{first}"))
}

fn uniforms(node: &Node, parts: &mut Parts) -> PResult<()> {
    if let Some((_, first)) = parts.uniforms {
        return Err(twice(node, "`(uniforms ...)`", Some(first)));
    }
    let mut cur = Cursor::of(node, "`(uniforms N)`")?;
    cur.next("`uniforms`")?;
    let n = cur.number("a number of uniform words")?;
    parts.visibility.uniforms = visible(&mut cur)?;
    cur.finish("(uniforms N [(visible STAGE...)])")?;
    parts.uniforms = Some((n, node.loc));
    Ok(())
}

fn ubo(node: &Node, parts: &mut Parts) -> PResult<()> {
    let mut cur = Cursor::of(node, "`(ubo BLOCK SIZE)`")?;
    cur.next("`ubo`")?;
    let (text, loc) = cur.atom("a UBO block index")?;
    let block: u32 = super::cursor::number(text, loc, "a UBO block index")?;
    let size = cur.number("a UBO size in bytes")?;
    let only = visible(&mut cur)?;
    cur.finish("(ubo BLOCK SIZE [(visible STAGE...)])")?;
    if let Some(first) = parts.ubos.iter().find(|u| u.block == block) {
        let at = first
            .loc
            .map(|l| format!(" (first at {l})"))
            .unwrap_or_default();
        let msg = format!("UBO block {block} is declared twice{at}");
        return Err(ParseError::new(loc, msg));
    }
    if let Some(r) = only {
        parts.visibility.ubos.insert(block, r);
    }
    parts.ubos.push(UboDecl {
        block,
        size,
        loc: Some(node.loc),
    });
    Ok(())
}

/// `(producer STAGE info* stmt*)` or `(consumer ...)`.
fn shader(node: &Node) -> PResult<Shader> {
    let mut cur = Cursor::of(node, "a shader")?;
    cur.next("`producer` or `consumer`")?;
    let names: Vec<&str> = Stage::ALL.iter().map(|s| s.keyword()).collect();
    let stage: Stage = cur.keyword("a stage", &names)?;
    let mut shader = Shader::new(stage);
    shader.loc = Some(node.loc);
    stage_params(&mut cur, &mut shader)?;
    shader.body = stmt::body(&mut shader, cur.rest())?;
    shader.shrink_to_fit();
    Ok(shader)
}

/// The leading `(param ...)` lists of a shader.
fn stage_params(cur: &mut Cursor<'_>, shader: &mut Shader) -> PResult<()> {
    let stage = shader.stage();
    let mut seen: BTreeMap<&str, SrcLoc> = BTreeMap::new();
    while let Some(node) = cur.peek() {
        let Some(head) = node.head().filter(|h| INFO_KEYWORDS.contains(h)) else {
            break;
        };
        cur.next("a stage parameter")?;
        let mut param = Cursor::of(node, "a stage parameter")?;
        let (_, head_loc) = param.atom("a stage parameter")?;
        if !params_of(stage).contains(&head) {
            let takes = one_of(params_of(stage));
            let msg =
                format!("`{head}` is not a parameter of a `{stage}` shader (it takes {takes})");
            return Err(ParseError::new(head_loc, msg));
        }
        if let Some(first) = seen.insert(head, node.loc) {
            let msg = format!("stage parameter `{head}` appears twice (first at {first})");
            return Err(ParseError::new(node.loc, msg));
        }
        if head == "layer_viewport_relative" {
            // A flag of the shader's `gl_Layer` output, not of the stage's info.
            param.finish("(layer_viewport_relative)")?;
            shader.layer_viewport_relative = true;
        } else {
            set_param(&mut shader.info, head, &mut param)?;
        }
    }
    Ok(())
}

fn set_param(info: &mut StageInfo, head: &str, cur: &mut Cursor<'_>) -> PResult<()> {
    match (info, head) {
        (StageInfo::Vertex { topology }, "topology") => *topology = primitive(cur, head)?,
        (StageInfo::TessCtrl { input_vertices, .. }, "input_vertices")
        | (StageInfo::TessEval { input_vertices, .. }, "input_vertices") => {
            *input_vertices = count(cur, head, "a vertex count")?
        }
        (
            StageInfo::TessCtrl {
                output_vertices, ..
            },
            "output_vertices",
        ) => *output_vertices = count(cur, head, "a vertex count")?,
        (StageInfo::TessEval { domain, .. }, "domain") => *domain = primitive(cur, head)?,
        (StageInfo::TessEval { point_mode, .. }, "point_mode") => {
            cur.finish("(point_mode)")?;
            *point_mode = true;
        }
        (StageInfo::Geometry { input, .. }, "input") => *input = primitive(cur, head)?,
        (StageInfo::Geometry { output, .. }, "output") => *output = primitive(cur, head)?,
        (StageInfo::Geometry { max_vertices, .. }, "max_vertices") => {
            *max_vertices = count(cur, head, "a vertex count")?
        }
        (StageInfo::Geometry { invocations, .. }, "invocations") => {
            *invocations = count(cur, head, "an invocation count")?
        }
        (StageInfo::Fragment { provoking }, "provoking") => {
            let names: Vec<&str> = ProvokingVertex::ALL.iter().map(|p| p.keyword()).collect();
            *provoking = cur.keyword("a provoking vertex", &names)?;
            cur.finish("(provoking first|last)")?;
        }
        // `stage_params` only passes parameters of the shader's stage.
        (_, other) => {
            let msg = format!("`{other}` is not a parameter of this stage");
            return Err(ParseError::new(cur.close(), msg));
        }
    }
    Ok(())
}

fn primitive(cur: &mut Cursor<'_>, param: &str) -> PResult<Primitive> {
    let allowed = primitives_for(param);
    let names: Vec<&str> = allowed.iter().map(|p| p.keyword()).collect();
    let (text, loc) = cur.atom(&one_of(&names))?;
    let prim = allowed.iter().find(|p| p.keyword() == text).copied();
    let prim = prim.ok_or_else(|| {
        ParseError::new(loc, format!("expected {}, found `{text}`", one_of(&names)))
    })?;
    cur.finish(&format!("({param} {})", names.join("|")))?;
    Ok(prim)
}

fn count<T: TryFrom<u64>>(cur: &mut Cursor<'_>, param: &str, what: &str) -> PResult<T> {
    let n = cur.number(what)?;
    cur.finish(&format!("({param} N)"))?;
    Ok(n)
}
