//! The scanner: splits `.pair` text into parentheses and atoms, each with its
//! line:column, dropping `;` comments and whitespace, and checks the shape: balanced
//! parentheses, exactly one top-level list, no trailing text, bounded nesting.

use crate::ir::SrcLoc;

use super::ParseError;

/// Lists nested deeper than this are rejected, so that no recursive walker (ours or
/// the crate's) can exhaust the stack on hostile input.
pub(crate) const MAX_DEPTH: usize = 128;

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TokKind {
    /// `(`
    Open,
    /// `)`
    Close,
    /// Any run of characters other than whitespace, parentheses and `;`.
    Atom,
}

/// One token and where it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Token<'a> {
    /// Kind.
    pub kind: TokKind,
    /// The token's text (`(` or `)` for parentheses).
    pub text: &'a str,
    /// Position of its first character.
    pub loc: SrcLoc,
}

/// A character cursor that counts lines and columns in characters.
struct Chars<'a> {
    src: &'a str,
    offset: usize,
    loc: SrcLoc,
}

impl<'a> Chars<'a> {
    fn peek(&self) -> Option<char> {
        self.src.get(self.offset..).and_then(|s| s.chars().next())
    }

    fn bump(&mut self) {
        if let Some(c) = self.peek() {
            self.offset += c.len_utf8();
            if c == '\n' {
                self.loc.line += 1;
                self.loc.col = 1;
            } else {
                self.loc.col += 1;
            }
        }
    }
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

fn ends_atom(c: char) -> bool {
    is_space(c) || matches!(c, '(' | ')' | ';')
}

/// Splits `src` into tokens one at a time, checking that they form exactly one
/// balanced list; no token vector is held (a 100k-instruction pair has ~600k tokens).
pub(crate) struct Scanner<'a> {
    chars: Chars<'a>,
    /// Opening positions of the lists not yet closed, innermost last.
    open: Vec<SrcLoc>,
    top_level_done: bool,
    any: bool,
}

impl<'a> Scanner<'a> {
    /// A scanner at the start of `src`.
    pub fn new(src: &'a str) -> Scanner<'a> {
        Scanner {
            chars: Chars {
                src,
                offset: 0,
                loc: SrcLoc { line: 1, col: 1 },
            },
            open: Vec::new(),
            top_level_done: false,
            any: false,
        }
    }

    /// The next token, `None` at the end of a well-formed text; the shape errors at
    /// the end (an unclosed list, no list at all) come from this call too.
    pub fn next_token(&mut self) -> Result<Option<Token<'a>>, ParseError> {
        self.skip_blanks();
        let chars = &mut self.chars;
        let loc = chars.loc;
        let Some(c) = chars.peek() else {
            return self.at_end().map(|()| None);
        };
        if self.top_level_done {
            return Err(ParseError::new(loc, "trailing text after the pair"));
        }
        let start = chars.offset;
        let kind = match c {
            '(' => {
                if self.open.len() >= MAX_DEPTH {
                    let msg = format!("lists are nested more than {MAX_DEPTH} deep");
                    return Err(ParseError::new(loc, msg));
                }
                self.open.push(loc);
                chars.bump();
                TokKind::Open
            }
            ')' => {
                if self.open.pop().is_none() {
                    return Err(ParseError::new(loc, "unexpected `)`: no list is open"));
                }
                self.top_level_done = self.open.is_empty();
                chars.bump();
                TokKind::Close
            }
            '"' => {
                let msg = "unexpected `\"`: the .pair format has no quoted strings";
                return Err(ParseError::new(loc, msg));
            }
            _ => {
                while chars.peek().is_some_and(|c| !ends_atom(c)) {
                    chars.bump();
                }
                if self.open.is_empty() {
                    let text = chars.src.get(start..chars.offset).unwrap_or_default();
                    let msg = format!("expected `(pair ...)`, found `{text}`");
                    return Err(ParseError::new(loc, msg));
                }
                TokKind::Atom
            }
        };
        self.any = true;
        let text = chars.src.get(start..chars.offset).unwrap_or_default();
        Ok(Some(Token { kind, text, loc }))
    }

    /// Skips whitespace and `;` comments.
    fn skip_blanks(&mut self) {
        while let Some(c) = self.chars.peek() {
            if is_space(c) {
                self.chars.bump();
            } else if c == ';' {
                while self.chars.peek().is_some_and(|c| c != '\n') {
                    self.chars.bump();
                }
            } else {
                break;
            }
        }
    }

    fn at_end(&self) -> Result<(), ParseError> {
        if let Some(opened) = self.open.last() {
            let msg = format!("expected `)` to close the list opened at {opened}");
            return Err(ParseError::new(self.chars.loc, msg));
        }
        if !self.any {
            return Err(ParseError::new(
                self.chars.loc,
                "empty input: expected `(pair ...)`",
            ));
        }
        Ok(())
    }
}

/// Every token of `src` (the scanner's tests read them this way).
#[cfg(test)]
fn scan(src: &str) -> Result<Vec<Token<'_>>, ParseError> {
    let mut scanner = Scanner::new(src);
    let mut tokens = Vec::new();
    while let Some(t) = scanner.next_token()? {
        tokens.push(t);
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u32, col: u32) -> SrcLoc {
        SrcLoc { line, col }
    }

    #[test]
    fn tokens_carry_positions_in_characters() {
        // Line 2 starts with a tab and a two-byte character inside an atom: columns
        // count characters, so `b` sits at column 2 + "é1 ".len() in chars = 5.
        let toks = scan("(a ; comment (\n\té1 b)").unwrap();
        let summary: Vec<(TokKind, &str, SrcLoc)> =
            toks.iter().map(|t| (t.kind, t.text, t.loc)).collect();
        assert_eq!(
            summary,
            vec![
                (TokKind::Open, "(", at(1, 1)),
                (TokKind::Atom, "a", at(1, 2)),
                (TokKind::Atom, "é1", at(2, 2)),
                (TokKind::Atom, "b", at(2, 5)),
                (TokKind::Close, ")", at(2, 6)),
            ]
        );
    }

    #[test]
    fn comment_glued_to_atom_ends_it() {
        // `;x)` is a comment, so the `)` on line 2 is the one that closes the list.
        let toks = scan("(a;x)\n)").unwrap();
        let texts: Vec<&str> = toks.iter().map(|t| t.text).collect();
        assert_eq!(texts, vec!["(", "a", ")"]);
        assert_eq!(toks[2].loc, at(2, 1));
    }

    #[test]
    fn shape_errors() {
        let err = |s: &str| scan(s).unwrap_err();
        assert_eq!(err("").location, at(1, 1));
        assert_eq!(err("; only\n").location, at(2, 1));
        assert_eq!(err("(a) b").location, at(1, 5));
        assert_eq!(err("(a))").message, "trailing text after the pair");
        assert_eq!(err("a").message, "expected `(pair ...)`, found `a`");
        assert_eq!(err(")").message, "unexpected `)`: no list is open");
        let e = err("(a\n  (b)");
        assert_eq!(e.location, at(2, 6));
        assert_eq!(e.message, "expected `)` to close the list opened at 1:1");
        let deep = "(".repeat(MAX_DEPTH + 1);
        assert_eq!(err(&deep).location, at(1, MAX_DEPTH as u32 + 1));
    }
}
