//! A cursor over the items of one list, with the small readers every form needs
//! (atoms, keywords, numbers, slots) and errors that say what was found where and
//! what was expected.

use std::str::FromStr;

use crate::ir::{Half, IoSlot, SrcLoc};

use super::tree::{Node, NodeKind};
use super::ParseError;

/// Items of a list still to be read.
pub(crate) struct Cursor<'a> {
    items: &'a [Node<'a>],
    pos: usize,
    /// Where the list's `)` is: errors about missing items point there.
    close: SrcLoc,
}

/// Result of the parser's readers.
pub(crate) type PResult<T> = Result<T, ParseError>;

impl<'a> Cursor<'a> {
    /// A cursor over `node`'s items, or an error when `node` is an atom.
    pub fn of(node: &'a Node<'a>, expected: &str) -> PResult<Cursor<'a>> {
        match &node.kind {
            NodeKind::List { items, close } => Ok(Cursor {
                items,
                pos: 0,
                close: *close,
            }),
            NodeKind::Atom(a) => Err(ParseError::new(
                node.loc,
                format!("expected {expected}, found `{a}`"),
            )),
        }
    }

    /// Position of the list's closing parenthesis.
    pub fn close(&self) -> SrcLoc {
        self.close
    }

    /// The next item without consuming it.
    pub fn peek(&self) -> Option<&'a Node<'a>> {
        self.items.get(self.pos)
    }

    /// The items left, consuming them.
    pub fn rest(&mut self) -> &'a [Node<'a>] {
        let rest = self.items.get(self.pos..).unwrap_or_default();
        self.pos = self.items.len();
        rest
    }

    /// The next item, or an error at `)` saying what was expected.
    pub fn next(&mut self, expected: &str) -> PResult<&'a Node<'a>> {
        let node = self.items.get(self.pos).ok_or_else(|| {
            ParseError::new(self.close, format!("expected {expected}, found `)`"))
        })?;
        self.pos += 1;
        Ok(node)
    }

    /// The next item, which must be an atom.
    pub fn atom(&mut self, expected: &str) -> PResult<(&'a str, SrcLoc)> {
        let node = self.next(expected)?;
        match node.atom() {
            Some(a) => Ok((a, node.loc)),
            None => Err(found(node, expected)),
        }
    }

    /// Consumes the next item when it is the atom `word`.
    pub fn eat(&mut self, word: &str) -> bool {
        let hit = self.peek().and_then(Node::atom) == Some(word);
        if hit {
            self.pos += 1;
        }
        hit
    }

    /// Consumes the next item when it is a list headed by `head`.
    pub fn eat_list(&mut self, head: &str) -> Option<&'a Node<'a>> {
        let node = self.peek().filter(|n| n.head() == Some(head))?;
        self.pos += 1;
        Some(node)
    }

    /// An unsigned decimal number that fits in `T`.
    pub fn number<T: TryFrom<u64>>(&mut self, what: &str) -> PResult<T> {
        let (text, loc) = self.atom(what)?;
        number(text, loc, what)
    }

    /// An unsigned word index with an optional 16-bit half: `N`, `N.lo` or `N.hi`.
    pub fn word_half(&mut self, what: &str) -> PResult<(u32, Half)> {
        let (text, loc) = self.atom(what)?;
        let (digits, half) = match text.split_once('.') {
            None => (text, Half::Full),
            Some((d, "lo")) => (d, Half::Lo),
            Some((d, "hi")) => (d, Half::Hi),
            Some((_, h)) => {
                return Err(ParseError::new(
                    loc,
                    format!("bad half `{h}` in `{text}`, expected lo or hi"),
                ))
            }
        };
        Ok((number(digits, loc, what)?, half))
    }

    /// A keyword of an enum with `FromStr`, listed in `choices` for the error.
    pub fn keyword<T: FromStr>(&mut self, what: &str, choices: &[&str]) -> PResult<T> {
        let expected = format!("{what} ({})", one_of(choices));
        let (text, loc) = self.atom(&expected)?;
        text.parse()
            .map_err(|_| ParseError::new(loc, format!("expected {expected}, found `{text}`")))
    }

    /// A varying slot with component and optional half (`VAR3.z`, `PATCH0.x.hi`).
    pub fn slot(&mut self) -> PResult<IoSlot> {
        let (text, loc) = self.atom("a slot such as `VAR0.x`")?;
        text.parse().map_err(|e: String| ParseError::new(loc, e))
    }

    /// Fails unless every item has been read; `usage` spells the whole form.
    pub fn finish(&self, usage: &str) -> PResult<()> {
        match self.peek() {
            None => Ok(()),
            Some(node) => Err(ParseError::new(
                node.loc,
                format!("unexpected {}: the form is `{usage}`", node.describe()),
            )),
        }
    }
}

/// "expected X, found Y" at `node`.
pub(crate) fn found(node: &Node, expected: &str) -> ParseError {
    ParseError::new(
        node.loc,
        format!("expected {expected}, found {}", node.describe()),
    )
}

/// Reads an unsigned decimal number that fits in `T`.
pub(crate) fn number<T: TryFrom<u64>>(text: &str, loc: SrcLoc, what: &str) -> PResult<T> {
    let digits_only = !text.is_empty() && text.chars().all(|c| c.is_ascii_digit());
    if !digits_only {
        return Err(ParseError::new(
            loc,
            format!("expected {what}, found `{text}`"),
        ));
    }
    text.parse::<u64>()
        .ok()
        .and_then(|v| T::try_from(v).ok())
        .ok_or_else(|| ParseError::new(loc, format!("`{text}` is out of range for {what}")))
}

/// `a, b or c`.
pub(crate) fn one_of(choices: &[&str]) -> String {
    match choices {
        [] => String::new(),
        [only] => (*only).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}
