//! Value names: every value has a non-empty name that the printer can write back
//! (`%` + letters, digits, `_`, `.`), unique within its shader.

use fxhash::FxHashMap;

use crate::ir::SrcLoc;

use super::context::Ctx;

/// Checks the names of every arena value.
pub(super) fn check(ctx: &mut Ctx<'_>) {
    let shader = ctx.shader;
    // Hashed, not ordered: errors come out in value order either way, and this runs
    // on every validation of every round's output.
    let mut first: FxHashMap<&str, Option<SrcLoc>> = FxHashMap::default();
    first.reserve(shader.values.len());
    for (index, info) in shader.values.iter().enumerate() {
        if info.name.is_empty() {
            ctx.error(info.loc, format!("value #{index} has an empty name"));
            continue;
        }
        if let Some(c) = info.name.chars().find(|c| !is_name_char(*c)) {
            let msg = format!(
                "value name `%{}` contains `{c}`; names may only use letters, digits, `_` and `.`",
                info.name
            );
            ctx.error(info.loc, msg);
        }
        match first.get(info.name.as_str()) {
            Some(prev) => {
                let msg = format!(
                    "value name `%{}` is used for two values{}",
                    info.name,
                    first_at(*prev)
                );
                ctx.error(info.loc, msg);
            }
            None => {
                first.insert(&info.name, info.loc);
            }
        }
    }
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '.'
}

/// ` (first at L:C)`, or nothing when the position is unknown.
pub(super) fn first_at(loc: Option<SrcLoc>) -> String {
    loc.map(|l| format!(" (first at {l})")).unwrap_or_default()
}
