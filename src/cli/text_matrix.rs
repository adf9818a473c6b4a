//! Matrices as text for `tcrtl gemm` (`--a A.txt`, `.hex` too): one row a line, elements
//! separated by spaces, tabs or commas (a comma between two elements only: `1,,3` and a
//! trailing comma are errors), `#` starts a comment, blank lines are skipped. Each
//! element is parsed by the operand grammar of [`super::values::operand`]: a bit pattern
//! (`0x3c00`) or a decimal value that must be exactly representable (`1`, `-2.5`). A first lab
//! writes `1 2 3 4` and reads 1, 2, 3, 4 in the waves.

use std::path::Path;

/// True if `path` names a text matrix (extension `.txt` or `.hex`, any case) rather than
/// a `.npy` file.
pub fn is_text(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("txt") || e.eq_ignore_ascii_case("hex"))
}

/// Reads a text matrix, each element through `parse` (which returns its bit pattern):
/// returns `(rows, cols, elements row-major)`. Errors name the file, the line and the column
/// of the element, or the rows of unequal length.
pub fn read(
    path: &Path,
    name: &str,
    parse: impl Fn(&str) -> Result<u64, String>,
) -> Result<(usize, usize, Vec<u64>), String> {
    let text = tensorcore_rtl::io::bounded::read_text_bounded(
        path,
        tensorcore_rtl::io::bounded::MAX_TEXT_BYTES,
        "a text matrix",
    )
    .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut words = Vec::new();
    let (mut rows, mut cols) = (0usize, None);
    for (i, line) in text.lines().enumerate() {
        let body = line.split('#').next().unwrap_or("");
        // A comma separates exactly two elements: an empty field (two commas in a row, or a
        // comma at the start or end of the row) is an error, not a skipped element.
        if body.contains(',') && body.split(',').any(|f| f.trim().is_empty()) {
            return Err(format!(
                "{}:{}: {name} row {rows} has an empty element (two commas in a row, or a \
                 comma at the start or end of the row)",
                path.display(),
                i + 1
            ));
        }
        let row: Vec<&str> = body
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|t| !t.is_empty())
            .collect();
        if row.is_empty() {
            continue;
        }
        match cols {
            None => cols = Some(row.len()),
            Some(c) if c != row.len() => {
                return Err(format!(
                    "{}:{}: {name} row {rows} has {} elements but row 0 has {c}",
                    path.display(),
                    i + 1,
                    row.len()
                ))
            }
            Some(_) => {}
        }
        for (j, t) in row.iter().enumerate() {
            let bits = parse(t).map_err(|e| {
                format!(
                    "{}:{}: {name}[{rows}][{j}] = {t:?}: {e}",
                    path.display(),
                    i + 1
                )
            })?;
            words.push(bits);
        }
        rows += 1;
    }
    match cols {
        Some(c) => Ok((rows, c, words)),
        None => Err(format!("{}: {name} holds no elements", path.display())),
    }
}
