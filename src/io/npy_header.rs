//! The header of a `.npy` file, read as NumPy reads it: a Python dictionary literal
//! (`ast.literal_eval`) whose keys are exactly `descr` (a string), `fortran_order` (`True` or
//! `False`) and `shape` (a tuple of non-negative integers), a repeated key taking the last
//! value, surrounded only by whitespace. Anything else (a missing brace, an empty tuple item,
//! an unknown key, a nested tuple, a NUL byte, a comment) is refused, as NumPy refuses it
//! (docs/reliability.md, "Strict parsers").

/// The fields of a header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyHeader {
    /// The dtype descriptor (e.g. `<u2`).
    pub descr: String,
    /// Column-major element order.
    pub fortran_order: bool,
    /// The dimensions.
    pub shape: Vec<usize>,
}

/// One value of the dictionary.
enum Literal {
    Str(String),
    Bool(bool),
    Int(usize),
    Tuple(Vec<Literal>),
}

/// Python's parser refuses parentheses nested deeper than this.
const MAX_NESTING: usize = 200;

struct Cursor<'a> {
    text: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r' | b'\x0c') = self.text.get(self.at) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        self.skip_space();
        if self.peek() == Some(c) {
            self.at += 1;
            Ok(())
        } else {
            Err(format!("expected '{}' at byte {}", c as char, self.at))
        }
    }

    /// A string literal in single or double quotes, without escapes.
    fn string(&mut self) -> Result<String, String> {
        self.skip_space();
        let quote = match self.peek() {
            Some(q @ (b'\'' | b'"')) => q,
            _ => return Err(format!("expected a quoted string at byte {}", self.at)),
        };
        let start = self.at + 1;
        let len = self.text[start..]
            .iter()
            .position(|&b| b == quote || b == b'\\' || b == b'\n')
            .ok_or("an unterminated string")?;
        if self.text[start + len] != quote {
            return Err(format!("an unsupported string at byte {}", self.at));
        }
        self.at = start + len + 1;
        String::from_utf8(self.text[start..start + len].to_vec())
            .map_err(|_| "a string that is not text".to_string())
    }

    /// A non-negative decimal integer as Python writes it (no leading zeros, `_` only
    /// between digits).
    fn integer(&mut self) -> Result<usize, String> {
        self.skip_space();
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9' | b'_')) {
            self.at += 1;
        }
        let raw = &self.text[start..self.at];
        let ok = !raw.is_empty()
            && raw.first() != Some(&b'_')
            && raw.last() != Some(&b'_')
            && !raw.windows(2).any(|w| w == b"__")
            && (raw[0] != b'0' || raw.iter().all(|&b| b == b'0' || b == b'_'));
        if !ok {
            return Err(format!("expected a non-negative integer at byte {start}"));
        }
        let digits: String = raw
            .iter()
            .filter(|&&b| b != b'_')
            .map(|&b| b as char)
            .collect();
        digits
            .parse::<usize>()
            .map_err(|_| format!("a dimension too large at byte {start}"))
    }

    /// After `(`: a tuple, or (one item without a trailing comma) a parenthesised value, as
    /// in Python: `((2, 2))` is `(2, 2)`, `(4)` is `4`, `((2), 2)` is `(2, 2)`.
    fn parenthesised(&mut self, depth: usize) -> Result<Literal, String> {
        if depth > MAX_NESTING {
            return Err("parentheses nested too deeply".into());
        }
        let mut items = Vec::new();
        let mut comma_after_last = false;
        loop {
            self.skip_space();
            if self.peek() == Some(b')') {
                self.at += 1;
                break;
            }
            items.push(self.literal(depth)?);
            self.skip_space();
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    comma_after_last = true;
                }
                Some(b')') => {
                    self.at += 1;
                    comma_after_last = false;
                    break;
                }
                _ => return Err(format!("expected ',' or ')' at byte {}", self.at)),
            }
        }
        if items.len() == 1 && !comma_after_last {
            return Ok(items.remove(0));
        }
        Ok(Literal::Tuple(items))
    }

    fn literal(&mut self, depth: usize) -> Result<Literal, String> {
        self.skip_space();
        match self.peek() {
            Some(b'\'' | b'"') => self.string().map(Literal::Str),
            Some(b'(') => {
                self.at += 1;
                self.parenthesised(depth + 1)
            }
            Some(b'0'..=b'9') => self.integer().map(Literal::Int),
            _ => {
                for (word, value) in [(&b"True"[..], true), (&b"False"[..], false)] {
                    let end = self.at + word.len();
                    let next = self.text.get(end).copied();
                    if self.text.get(self.at..end) == Some(word)
                        && !next.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
                    {
                        self.at = end;
                        return Ok(Literal::Bool(value));
                    }
                }
                Err(format!("an unsupported value at byte {}", self.at))
            }
        }
    }
}

/// A shape: a tuple of non-negative integers.
fn shape_of(v: Literal) -> Result<Vec<usize>, String> {
    match v {
        Literal::Tuple(items) => items
            .into_iter()
            .map(|i| match i {
                Literal::Int(n) => Ok(n),
                _ => Err("a shape item that is not an integer".to_string()),
            })
            .collect(),
        Literal::Int(n) => Err(format!("a shape that is the integer {n}, not a tuple")),
        _ => Err("'shape' is not a tuple".into()),
    }
}

/// Parses the header text (the bytes between the length field and the data).
pub fn parse_header(text: &[u8]) -> Result<NpyHeader, String> {
    let mut c = Cursor { text, at: 0 };
    c.expect(b'{')?;
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    loop {
        c.skip_space();
        if c.peek() == Some(b'}') {
            c.at += 1;
            break;
        }
        let key = c.string()?;
        if !matches!(key.as_str(), "descr" | "fortran_order" | "shape") {
            let shown: String = key.escape_debug().take(40).collect();
            let more = if shown.len() < key.escape_debug().count() {
                "..."
            } else {
                ""
            };
            return Err(format!("unknown key '{shown}{more}'"));
        }
        c.expect(b':')?;
        let value = c.literal(0)?;
        match (key.as_str(), value) {
            ("descr", Literal::Str(s)) => descr = Some(s),
            ("fortran_order", Literal::Bool(b)) => fortran = Some(b),
            ("shape", v) => shape = Some(shape_of(v)?),
            _ => return Err(format!("'{key}' has a value of the wrong kind")),
        }
        c.skip_space();
        match c.peek() {
            Some(b',') => c.at += 1,
            Some(b'}') => {
                c.at += 1;
                break;
            }
            _ => return Err(format!("expected ',' or '}}' at byte {}", c.at)),
        }
    }
    c.skip_space();
    if c.at != text.len() {
        return Err(format!("text after the closing brace at byte {}", c.at));
    }
    match (descr, fortran, shape) {
        (Some(descr), Some(fortran_order), Some(shape)) => Ok(NpyHeader {
            descr,
            fortran_order,
            shape,
        }),
        (None, _, _) => Err("header has no 'descr'".into()),
        (_, None, _) => Err("header has no valid 'fortran_order'".into()),
        (_, _, None) => Err("header has no 'shape'".into()),
    }
}
