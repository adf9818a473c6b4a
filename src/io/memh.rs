//! `$readmemh` images: one hexadecimal word per line, as Verilog testbenches load them.

use super::atomic::AtomicFile;
use std::io::{self, Write};
use std::path::Path;

/// Writes `words` of `width` bits each as a `$readmemh` file (one zero-padded word a line).
pub fn write_memh(path: &Path, words: &[u64], width: u32) -> io::Result<()> {
    let digits = width.div_ceil(4) as usize;
    let mut f = AtomicFile::create(path)?;
    for w in words {
        writeln!(f, "{w:0digits$x}")?;
    }
    f.commit()
}
