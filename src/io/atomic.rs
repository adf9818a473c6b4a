//! A buffered [`OutputFile`]: output goes to `NAME.partial` and only a successful
//! [`AtomicFile::commit`] renames it to `NAME` (a special file such as `/dev/null` is written
//! in place; a symlink is followed). Dropping an uncommitted file removes the partial one, so
//! a failed run leaves nothing that looks complete.

use super::output::OutputFile;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// A buffered file written under a temporary name and renamed into place on commit.
pub struct AtomicFile {
    out: OutputFile,
    writer: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Creates `path.partial` for writing (or opens a special file). Fails with a message
    /// naming the path if it cannot.
    pub fn create(path: &Path) -> io::Result<AtomicFile> {
        let mut out = OutputFile::create(path)?;
        let file = out.take_file()?;
        Ok(AtomicFile {
            out,
            writer: Some(BufWriter::new(file)),
        })
    }

    /// The path the file will have once committed (symlinks followed).
    pub fn path(&self) -> &Path {
        self.out.path()
    }

    /// Flushes, syncs and renames the file into place.
    pub fn commit(mut self) -> io::Result<()> {
        if let Some(w) = self.writer.take() {
            let path = self.out.path().display().to_string();
            w.into_inner().map_err(|e| {
                let e = e.into_error();
                io::Error::new(e.kind(), format!("cannot write {path}: {e}"))
            })?;
        }
        self.out.commit()
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.writer.as_mut() {
            Some(w) => w.write(buf),
            None => Err(io::Error::other("file already committed")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.writer.as_mut() {
            Some(w) => w.flush(),
            None => Ok(()),
        }
    }
}
