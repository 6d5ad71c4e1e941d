//! The IR's invariants: stage pairing and parameters, SSA dominance under structured
//! control flow, bit sizes, and the stage legality of intrinsics and slots.
//!
//! [`validate`] reports every problem it finds, in source order, so a user fixes a
//! file in one round trip instead of one error at a time. The checks, by file:
//!
//! - `stages`: the link is legal (`Stage::can_feed`), stage parameters are in range
//!   and fit the role, a TES patch has the TCS output size, UBO declarations are sane;
//! - `names`: value names are non-empty, printable and unique;
//! - `flow`: single definitions, dominance under structured control flow, phis,
//!   `break`/`continue` placement and arity, loops with phis never fall through;
//! - `bits`: ALU typing, recorded sizes, 1-bit conditions, phi operands, slot halves,
//!   32-bit indices and addresses, constants that fit;
//! - `intrinsics`: stage legality, system values, interpolation operands, uniform and
//!   UBO ranges, constant vertex indices, transform feedback;
//! - `slots`: slot roles per stage (attributes, fragment results, patch and
//!   per-vertex varyings), component ranges, indirect arrays;
//! - `gs_emit`: a GS never emits more than `max_vertices` on a path outside loops.

mod bits;
mod context;
mod flow;
mod gs_emit;
mod intrinsics;
mod names;
mod slots;
mod stages;
#[cfg(test)]
mod tests;

use crate::error::{Diagnostic, Error};
use crate::ir::{Pipeline, Shader};

use context::{Ctx, Role};

/// Checks every invariant the rest of varysat relies on.
///
/// Returns `Error::Invalid` with one diagnostic per problem, sorted by position; each
/// names the offending value (`%name`) and what was expected.
pub fn validate(p: &Pipeline) -> Result<(), Error> {
    let mut diags = vec![];
    stages::check_pipeline(p, &mut diags);
    check_shader(p, &p.producer, Role::Producer, &mut diags);
    check_shader(p, &p.consumer, Role::Consumer, &mut diags);
    if diags.is_empty() {
        return Ok(());
    }
    // A stable sort keeps the walk's order among diagnostics at one position (and for
    // pipelines built in code, which carry no positions at all).
    diags.sort_by_key(|d| d.loc.map(|l| (l.line, l.col)));
    Err(Error::Invalid(diags))
}

fn check_shader(p: &Pipeline, shader: &Shader, role: Role, diags: &mut Vec<Diagnostic>) {
    let mut ctx = Ctx::new(p, shader, role, diags);
    stages::check_info(&mut ctx);
    names::check(&mut ctx);
    flow::check(&mut ctx);
    gs_emit::check(&mut ctx);
}
