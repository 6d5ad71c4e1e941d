//! A pipeline whose `Debug` is its `.pair` text, so proptest reports shrunk
//! counterexamples in the project's own format instead of a struct dump.

use std::fmt;

use crate::ir::Pipeline;

/// A generated pipeline that debug-prints as `.pair` text: `{:#?}` gives the canonical
/// multi-line text, `{:?}` the same on one line (for proptest's regression files).
#[derive(Clone, PartialEq)]
pub struct Readable(pub Pipeline);

impl fmt::Debug for Readable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = crate::text::print(&self.0);
        if f.alternate() {
            return write!(f, "\n{text}");
        }
        let words: Vec<&str> = text.split_whitespace().collect();
        f.write_str(&words.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{build, Recipe};
    use crate::ir::Stage;

    #[test]
    fn debug_is_pair_text() {
        let p = build(&Recipe::minimal((Stage::Vertex, Stage::Fragment)));
        let one_line = format!("{:?}", Readable(p.clone()));
        assert!(one_line.starts_with("(pair (uniforms 1) (producer vs"));
        assert!(!one_line.contains('\n'));
        let pretty = format!("{:#?}", Readable(p.clone()));
        assert_eq!(pretty, format!("\n{}", crate::text::print(&p)));
    }
}
