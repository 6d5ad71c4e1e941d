//! The positioned s-expression tree, built straight from the scanner's tokens: no
//! token vector and no second s-expression tree is held, and atoms borrow the text.
//! (Reading a 3 MB pair through the `symbolic_expressions` crate held its tree, a
//! positioned copy with owned atoms and the token vector at once: 94 MB of heap.)

use crate::ir::SrcLoc;

use super::scanner::{Scanner, TokKind};
use super::ParseError;

/// An atom or a list, with the position of its first character.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Node<'a> {
    /// Where the atom, or the list's `(`, starts.
    pub loc: SrcLoc,
    /// Atom text or list items.
    pub kind: NodeKind<'a>,
}

/// The two shapes of a node.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum NodeKind<'a> {
    /// A bare word, as written in the text.
    Atom(&'a str),
    /// A parenthesized list; `close` is where its `)` sits.
    List {
        /// The items.
        items: Vec<Node<'a>>,
        /// Position of the closing parenthesis.
        close: SrcLoc,
    },
}

impl<'a> Node<'a> {
    /// The atom's text, if this is an atom.
    pub fn atom(&self) -> Option<&'a str> {
        match &self.kind {
            NodeKind::Atom(s) => Some(s),
            NodeKind::List { .. } => None,
        }
    }

    /// The first item of a list when it is an atom (`foo` in `(foo ...)`).
    pub fn head(&self) -> Option<&'a str> {
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

/// Reads `src` into one positioned list. The items of the lists still open wait on
/// one shared stack; a list's items move into a vector of their exact count when its
/// `)` comes, so no list keeps spare capacity.
pub(crate) fn read(src: &str) -> Result<Node<'_>, ParseError> {
    let mut scanner = Scanner::new(src);
    // Items of the open lists, innermost last; `opens` holds each open list's `(`
    // position and where its items start on `items`.
    let mut items: Vec<Node<'_>> = Vec::new();
    let mut opens: Vec<(SrcLoc, usize)> = Vec::new();
    let mut root = None;
    while let Some(tok) = scanner.next_token()? {
        match tok.kind {
            TokKind::Open => opens.push((tok.loc, items.len())),
            TokKind::Atom => items.push(Node {
                loc: tok.loc,
                kind: NodeKind::Atom(tok.text),
            }),
            TokKind::Close => {
                // The scanner rejects a `)` with no open list.
                let Some((loc, first)) = opens.pop() else {
                    return Err(ParseError::new(tok.loc, "unexpected `)`: no list is open"));
                };
                let list = Node {
                    loc,
                    kind: NodeKind::List {
                        items: items.drain(first..).collect(),
                        close: tok.loc,
                    },
                };
                match opens.is_empty() {
                    true => root = Some(list),
                    false => items.push(list),
                }
            }
        }
    }
    // The scanner's end-of-text check guarantees one complete top-level list.
    root.ok_or_else(|| ParseError::new(SrcLoc::default(), "empty input: expected `(pair ...)`"))
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
    fn atoms_borrow_the_text_and_lists_have_no_spare_capacity() {
        let src = "(pair (a bb ccc) (d) e)";
        let tree = read(src).unwrap();
        let NodeKind::List { items, .. } = &tree.kind else {
            panic!("not a list");
        };
        assert_eq!(items.capacity(), 4);
        let NodeKind::List { items: inner, .. } = &items[1].kind else {
            panic!("not a list");
        };
        assert_eq!(inner.capacity(), 3);
        let text = src.as_bytes().as_ptr_range();
        let atom = inner[2].atom().unwrap();
        assert_eq!(atom, "ccc");
        assert!(
            text.contains(&atom.as_ptr()),
            "the atom is a slice of the text"
        );
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
