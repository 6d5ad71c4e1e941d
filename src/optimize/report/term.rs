//! Extracted terms as short text, for the report's fates and moves.

use egg::Id;

use crate::egraph::{VGraph, VNode};
use crate::extract::{Ctx, Selection};

/// The extracted term of a class as text (depth-limited).
pub(crate) fn term_text(g: &VGraph, sel: &Selection, id: Id, ctx: Ctx, depth: usize) -> String {
    let Some(node) = sel.choice.get(&(g.find(id), ctx)) else {
        return "?".into();
    };
    let kids = egg::Language::children(node);
    if kids.is_empty() {
        return node.to_string();
    }
    if depth == 0 {
        return format!("({node} ...)");
    }
    let parts: Vec<String> = kids
        .iter()
        .enumerate()
        .map(|(i, c)| match (node, g[*c].data.konst) {
            // The emit a per-emit node names, not the bit pattern's float reading.
            (VNode::PerEmit(_), Some(at)) if i == 0 => format!("{at}i32"),
            _ => term_text(
                g,
                sel,
                *c,
                crate::extract::dag::child_ctx(node, ctx, i),
                depth - 1,
            ),
        })
        .collect();
    format!("({node} {})", parts.join(" "))
}
