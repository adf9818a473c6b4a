//! Write-then-rename: output goes to `NAME.partial` and only a successful [`AtomicFile::commit`]
//! renames it to `NAME`. Dropping an uncommitted file removes the partial one, so a failed run
//! leaves nothing that looks complete.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// A buffered file written under a temporary name and renamed into place on commit.
pub struct AtomicFile {
    final_path: PathBuf,
    partial_path: PathBuf,
    writer: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Creates `path.partial` for writing. Fails with a message naming the path if it cannot.
    pub fn create(path: &Path) -> io::Result<AtomicFile> {
        let mut name = path.as_os_str().to_owned();
        name.push(".partial");
        let partial_path = PathBuf::from(name);
        let file = File::create(&partial_path).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display()))
        })?;
        Ok(AtomicFile {
            final_path: path.to_path_buf(),
            partial_path,
            writer: Some(BufWriter::new(file)),
        })
    }

    /// The path the file will have once committed.
    pub fn path(&self) -> &Path {
        &self.final_path
    }

    /// Flushes, syncs and renames the file into place.
    pub fn commit(mut self) -> io::Result<()> {
        if let Some(w) = self.writer.take() {
            let file = w.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
        }
        std::fs::rename(&self.partial_path, &self.final_path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot rename into {}: {e}", self.final_path.display()),
            )
        })
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

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.writer.take().is_some() {
            let _ = std::fs::remove_file(&self.partial_path);
        }
    }
}
