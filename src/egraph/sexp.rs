//! A small position-tracking s-expression reader for rule files and cost profiles:
//! `;` comments, atoms and lists, every node with its line:column, and an error for
//! anything unbalanced. (The `.pair` scanner lives in `text/`; this one is private to
//! the optimizer's own input files.)

use std::fmt;

use crate::ir::SrcLoc;

/// One parsed s-expression.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Sexp {
    /// A token.
    Atom(String, SrcLoc),
    /// A parenthesized list.
    List(Vec<Sexp>, SrcLoc),
}

impl Sexp {
    /// Where the node starts.
    pub(crate) fn loc(&self) -> SrcLoc {
        match self {
            Sexp::Atom(_, l) | Sexp::List(_, l) => *l,
        }
    }

    /// The token, if this is an atom.
    pub(crate) fn atom(&self) -> Option<&str> {
        match self {
            Sexp::Atom(s, _) => Some(s),
            Sexp::List(..) => None,
        }
    }

    /// The items, if this is a list.
    pub(crate) fn list(&self) -> Option<&[Sexp]> {
        match self {
            Sexp::List(items, _) => Some(items),
            Sexp::Atom(..) => None,
        }
    }
}

impl fmt::Display for Sexp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sexp::Atom(s, _) => f.write_str(s),
            Sexp::List(items, _) => {
                f.write_str("(")?;
                for (i, it) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" ")?;
                    }
                    write!(f, "{it}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// Lists nested deeper than this are refused, so that the reader and every walker of
/// its trees (rule templates, profile entries) recurse at most this deep; real rule
/// and profile files nest a handful of levels. Same bound as the `.pair` reader's.
const MAX_DEPTH: usize = 128;

struct Reader<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    loc: SrcLoc,
}

impl Reader<'_> {
    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        if c == '\n' {
            self.loc.line += 1;
            self.loc.col = 1;
        } else {
            self.loc.col += 1;
        }
        Some(c)
    }

    fn skip_space(&mut self) {
        while let Some(&c) = self.chars.peek() {
            if c == ';' {
                while self.chars.peek().is_some_and(|c| *c != '\n') {
                    self.bump();
                }
            } else if c.is_whitespace() {
                self.bump();
            } else {
                break;
            }
        }
    }

    fn item(&mut self, depth: usize) -> Result<Sexp, (SrcLoc, String)> {
        let start = self.loc;
        match self.chars.peek() {
            Some('(') if depth >= MAX_DEPTH => Err((
                start,
                format!("lists are nested more than {MAX_DEPTH} deep"),
            )),
            Some('(') => {
                self.bump();
                let mut items = vec![];
                loop {
                    self.skip_space();
                    match self.chars.peek() {
                        None => return Err((start, "unclosed `(`".into())),
                        Some(')') => {
                            self.bump();
                            return Ok(Sexp::List(items, start));
                        }
                        Some(_) => items.push(self.item(depth + 1)?),
                    }
                }
            }
            Some(')') => Err((start, "unexpected `)`".into())),
            _ => {
                let mut s = String::new();
                while let Some(&c) = self.chars.peek() {
                    if c.is_whitespace() || c == '(' || c == ')' || c == ';' {
                        break;
                    }
                    s.push(c);
                    self.bump();
                }
                Ok(Sexp::Atom(s, start))
            }
        }
    }
}

/// Reads every top-level expression of `text`.
pub(crate) fn parse_all(text: &str) -> Result<Vec<Sexp>, (SrcLoc, String)> {
    let mut r = Reader {
        chars: text.chars().peekable(),
        loc: SrcLoc { line: 1, col: 1 },
    };
    let mut out = vec![];
    loop {
        r.skip_space();
        if r.chars.peek().is_none() {
            return Ok(out);
        }
        out.push(r.item(0)?);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_and_comments() {
        let v = parse_all("; c\n(a (b c))\n  (d)").unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].loc(), SrcLoc { line: 2, col: 1 });
        assert_eq!(v[1].loc(), SrcLoc { line: 3, col: 3 });
        assert_eq!(v[0].to_string(), "(a (b c))");
        let inner = v[0].list().unwrap();
        assert_eq!(inner[1].loc(), SrcLoc { line: 2, col: 4 });
    }

    #[test]
    fn unbalanced_is_an_error() {
        assert_eq!(
            parse_all("(a\n (b)").unwrap_err().0,
            SrcLoc { line: 1, col: 1 }
        );
        assert_eq!(parse_all("a )").unwrap_err().0, SrcLoc { line: 1, col: 3 });
    }

    #[test]
    fn nesting_is_bounded() {
        let ok = format!("{}{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
        assert!(parse_all(&ok).is_ok());
        let deep = "(".repeat(MAX_DEPTH + 1);
        let (loc, msg) = parse_all(&deep).unwrap_err();
        assert_eq!(
            loc,
            SrcLoc {
                line: 1,
                col: MAX_DEPTH as u32 + 1
            }
        );
        assert!(msg.contains("nested"), "{msg}");
    }
}
