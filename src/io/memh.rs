//! `$readmemh` images: one hexadecimal word per line, as Verilog testbenches load them.
//!
//! An image may start with `//` comment lines (Verilog's `$readmemh` skips comments), which
//! the golden images use for a header naming the problem they belong to.

use super::atomic::AtomicFile;
use std::io::{self, Write};
use std::path::Path;

/// Writes `words` of `width` bits each as a `$readmemh` file (one zero-padded word a line).
pub fn write_memh(path: &Path, words: &[u64], width: u32) -> io::Result<()> {
    write_memh_with_header(path, &[], words, width)
}

/// Writes a `$readmemh` file that starts with `header`, one `// ` comment line per entry,
/// followed by `words` of `width` bits each (one zero-padded word a line).
pub fn write_memh_with_header(
    path: &Path,
    header: &[String],
    words: &[u64],
    width: u32,
) -> io::Result<()> {
    let digits = width.div_ceil(4) as usize;
    let mut f = AtomicFile::create(path)?;
    for line in header {
        writeln!(f, "// {line}")?;
    }
    for w in words {
        writeln!(f, "{w:0digits$x}")?;
    }
    f.commit()
}

/// Parses the text of a `$readmemh` image: one hexadecimal word per line; blank lines, `//`
/// line comments and `_` digit separators are skipped. Address directives (`@...`) and
/// several words on one line are refused, so a word's position is its line order. The error
/// names the line (counted from 1) and what is wrong with it.
pub fn parse_memh(text: &str) -> Result<Vec<u64>, String> {
    let mut words = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split("//").next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let digits: String = line.chars().filter(|&c| c != '_').collect();
        if digits.len() > 16 || digits.is_empty() {
            return Err(format!(
                "line {}: '{line}' is not one hexadecimal word",
                i + 1
            ));
        }
        let w = u64::from_str_radix(&digits, 16)
            .map_err(|_| format!("line {}: '{line}' is not one hexadecimal word", i + 1))?;
        words.push(w);
    }
    Ok(words)
}
