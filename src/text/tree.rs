//! The positioned s-expression tree. The scanner's tokens are re-joined into clean
//! text (comments gone, single spaces) and parsed by `symbolic_expressions`; its
//! `Sexp` is then walked in the same order as the tokens to give every atom and list
//! the position it had in the original text.

use symbolic_expressions::Sexp;

use crate::ir::SrcLoc;

use super::scanner::{scan, TokKind, Token};
use super::ParseError;

/// An atom or a list, with the position of its first character.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Node {
    /// Where the atom, or the list's `(`, starts.
    pub loc: SrcLoc,
    /// Atom text or list items.
    pub kind: NodeKind,
}

/// The two shapes of a node.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum NodeKind {
    /// A bare word.
    Atom(String),
    /// A parenthesized list; `close` is where its `)` sits.
    List {
        /// The items.
        items: Vec<Node>,
        /// Position of the closing parenthesis.
        close: SrcLoc,
    },
}

impl Node {
    /// The atom's text, if this is an atom.
    pub fn atom(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::Atom(s) => Some(s),
            NodeKind::List { .. } => None,
        }
    }

    /// The first item of a list when it is an atom (`foo` in `(foo ...)`).
    pub fn head(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::List { items, .. } => items.first().and_then(Node::atom),
            NodeKind::Atom(_) => None,
        }
    }

    /// How the node reads in a message: the atom, or `(head ...)` for a list.
    pub fn describe(&self) -> String {
        match &self.kind {
            NodeKind::Atom(s) => format!("`{s}`"),
            NodeKind::List { items, .. } => match self.head() {
                Some(h) if items.len() == 1 => format!("`({h})`"),
                Some(h) => format!("`({h} ...)`"),
                None if items.is_empty() => "`()`".to_owned(),
                None => "a list".to_owned(),
            },
        }
    }
}

/// Reads `src` into one positioned list.
pub(crate) fn read(src: &str) -> Result<Node, ParseError> {
    let tokens = scan(src)?;
    let clean: Vec<&str> = tokens.iter().map(|t| t.text).collect();
    let first = tokens.first().map(|t| t.loc).unwrap_or_default();
    let sexp = symbolic_expressions::parser::parse_str(&clean.join(" "))
        .map_err(|e| ParseError::new(first, format!("malformed s-expression: {e}")))?;
    let mut rest = tokens.iter();
    let node = attach(&sexp, &mut rest, first)?;
    match rest.next() {
        Some(t) => Err(ParseError::new(t.loc, "trailing text after the pair")),
        None => Ok(node),
    }
}

/// Pairs `sexp` with the next tokens, which spell it; a disagreement (impossible for
/// text the scanner accepted) is reported rather than trusted.
fn attach<'a>(
    sexp: &Sexp,
    tokens: &mut impl Iterator<Item = &'a Token<'a>>,
    last: SrcLoc,
) -> Result<Node, ParseError> {
    let mismatch = |loc: SrcLoc| ParseError::new(loc, "the s-expression reader lost its place");
    let tok = tokens.next().ok_or_else(|| mismatch(last))?;
    match sexp {
        Sexp::String(s) if tok.kind == TokKind::Atom && tok.text == s => Ok(Node {
            loc: tok.loc,
            kind: NodeKind::Atom(s.clone()),
        }),
        Sexp::List(children) if tok.kind == TokKind::Open => {
            let mut items = Vec::with_capacity(children.len());
            let mut at = tok.loc;
            for child in children {
                let node = attach(child, tokens, at)?;
                at = node.loc;
                items.push(node);
            }
            let close = tokens.next().ok_or_else(|| mismatch(at))?;
            if close.kind != TokKind::Close {
                return Err(mismatch(close.loc));
            }
            Ok(Node {
                loc: tok.loc,
                kind: NodeKind::List {
                    items,
                    close: close.loc,
                },
            })
        }
        _ => Err(mismatch(tok.loc)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u32, col: u32) -> SrcLoc {
        SrcLoc { line, col }
    }

    #[test]
    fn every_node_has_its_position() {
        let tree = read("; c\n(pair\t(uniforms 1)\n  x)").unwrap();
        assert_eq!(tree.loc, at(2, 1));
        let NodeKind::List { items, close } = &tree.kind else {
            panic!("not a list");
        };
        assert_eq!(*close, at(3, 4));
        assert_eq!(items.len(), 3);
        assert_eq!((items[0].atom(), items[0].loc), (Some("pair"), at(2, 2)));
        assert_eq!(
            (items[1].head(), items[1].loc),
            (Some("uniforms"), at(2, 7))
        );
        assert_eq!((items[2].atom(), items[2].loc), (Some("x"), at(3, 3)));
        let NodeKind::List { items: inner, .. } = &items[1].kind else {
            panic!("not a list");
        };
        assert_eq!((inner[1].atom(), inner[1].loc), (Some("1"), at(2, 17)));
    }

    #[test]
    fn empty_lists_and_describe() {
        let tree = read("(() (a) (b c))").unwrap();
        let NodeKind::List { items, .. } = &tree.kind else {
            panic!("not a list");
        };
        let shown: Vec<String> = items.iter().map(Node::describe).collect();
        assert_eq!(shown, vec!["`()`", "`(a)`", "`(b ...)`"]);
    }
}
