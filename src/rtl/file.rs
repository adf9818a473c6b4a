//! Files the engine writes (waveforms, GTKWave save and filter files), written so that a
//! failed or interrupted run never leaves a half-written file looking complete.
//!
//! - A regular file (or a name that does not exist yet) is written as `NAME.partial` beside it
//!   and renamed to `NAME` on [`OutputFile::commit`]; a partial file is removed when the
//!   [`OutputFile`] is dropped uncommitted, when the rename fails, and on interrupt.
//! - A symlink is followed to its final target, which is then written as above (the link
//!   stays a link).
//! - An existing special file (`/dev/null`, `/dev/full`, a FIFO) is opened and written in
//!   place, so its errors (`No space left on device`) reach the user.
//! - Between [`begin_run`] and [`end_run`], every file a commit creates is remembered;
//!   [`rollback`] removes them, so a failed run leaves nothing new behind.
//!
//! The engine owns this primitive because its tracer is the lowest layer that writes files;
//! the file handling of the layers above (the `io` layer's output plan) builds on it, and both share one
//! registry, so a command-line run's waveforms are removed with its other outputs when the run
//! fails.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
/// How many symlinks [`resolve`] follows before giving up (as the kernel's `ELOOP`).
const MAX_LINKS: usize = 40;

/// What this process has on disk that a failure or an interrupt must remove.
struct Registry {
    /// `NAME.partial` files being written now.
    partials: Vec<PathBuf>,
    /// Files created by commits since [`begin_run`] (`None`: no run is being journaled).
    created: Option<Vec<PathBuf>>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    partials: Vec::new(),
    created: None,
});

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts journaling: files created by commits from now on are removed by [`rollback`].
pub fn begin_run() {
    registry().created = Some(Vec::new());
}

/// Stops journaling and keeps every file written (the run succeeded or a check failed).
pub fn end_run() {
    registry().created = None;
}

/// Removes every partial file and every file created since [`begin_run`], and stops
/// journaling. Returns the files removed.
pub fn rollback() -> Vec<PathBuf> {
    let mut r = registry();
    remove_all(&mut r)
}

fn remove_all(r: &mut Registry) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    for p in r
        .partials
        .drain(..)
        .chain(r.created.take().unwrap_or_default())
    {
        if std::fs::remove_file(&p).is_ok() {
            removed.push(p);
        }
    }
    removed
}

/// Holds the output registry locked after [`clean_up_for_exit`], so no new file can be
/// started or committed before the process exits.
pub struct ExitGuard {
    _lock: MutexGuard<'static, Registry>,
}

/// For a signal handler: removes every partial file and every file created since
/// [`begin_run`], and keeps the registry locked (hold the guard until `process::exit`).
pub fn clean_up_for_exit() -> ExitGuard {
    let mut r = registry();
    remove_all(&mut r);
    ExitGuard { _lock: r }
}

/// Follows `path` through any chain of symlinks to the file it names (which need not exist:
/// a dangling link resolves to the path it points at). Other paths are returned unchanged.
pub fn resolve(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&p)?;
                p = if target.is_absolute() {
                    target
                } else {
                    p.parent().unwrap_or(Path::new("")).join(target)
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::other(format!(
        "{}: too many levels of symbolic links",
        path.display()
    )))
}

/// Whether `path` exists and is neither a regular file nor a directory (a device, a FIFO, a
/// socket), after following symlinks.
pub fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// `NAME.partial`, the name a regular output is written under until it is complete.
pub fn partial_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".partial");
    PathBuf::from(s)
}

/// One output file being written: `NAME.partial` renamed on commit, or a special file in place.
#[derive(Debug)]
pub struct OutputFile {
    target: PathBuf,
    partial: Option<PathBuf>,
    file: Option<File>,
}

impl OutputFile {
    /// Opens `path` for writing (see the module documentation). Errors name the path.
    pub fn create(path: &Path) -> io::Result<OutputFile> {
        let named = |e: io::Error, what: &str| {
            io::Error::new(e.kind(), format!("cannot {what} {}: {e}", path.display()))
        };
        let target = resolve(path)?;
        if is_special(&target) {
            let file = OpenOptions::new()
                .write(true)
                .open(&target)
                .map_err(|e| named(e, "open"))?;
            return Ok(OutputFile {
                target,
                partial: None,
                file: Some(file),
            });
        }
        if target.is_dir() {
            return Err(io::Error::other(format!(
                "cannot create {}: is a directory",
                path.display()
            )));
        }
        let partial = partial_path(&target);
        let mut r = registry();
        let file = File::create(&partial).map_err(|e| named(e, "create"))?;
        r.partials.push(partial.clone());
        Ok(OutputFile {
            target,
            partial: Some(partial),
            file: Some(file),
        })
    }

    /// The file written to (symlinks followed).
    pub fn path(&self) -> &Path {
        &self.target
    }

    /// Whether this output is a special file written in place.
    pub fn is_special(&self) -> bool {
        self.partial.is_none()
    }

    /// Takes the open file handle to write through (only once; later calls fail).
    pub fn take_file(&mut self) -> io::Result<File> {
        self.file
            .take()
            .ok_or_else(|| io::Error::other("output file already taken"))
    }

    /// Syncs (regular files) and renames the partial file into place; on failure the partial
    /// file is removed. A file this creates is journaled for [`rollback`].
    pub fn commit(mut self) -> io::Result<()> {
        let Some(partial) = self.partial.take() else {
            return Ok(());
        };
        let mut r = registry();
        r.partials.retain(|p| *p != partial);
        let res = match self.file.take() {
            Some(f) => f.sync_all(),
            None => File::open(&partial).and_then(|f| f.sync_all()),
        };
        let existed = std::fs::symlink_metadata(&self.target).is_ok();
        let res = res.and_then(|()| std::fs::rename(&partial, &self.target));
        match res {
            Ok(()) => {
                if let (false, Some(created)) = (existed, r.created.as_mut()) {
                    created.push(self.target.clone());
                }
                Ok(())
            }
            Err(e) => {
                let _ = std::fs::remove_file(&partial);
                Err(io::Error::new(
                    e.kind(),
                    format!("cannot write {}: {e}", self.target.display()),
                ))
            }
        }
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if let Some(p) = self.partial.take() {
            self.file = None;
            let _ = std::fs::remove_file(&p);
            registry().partials.retain(|q| *q != p);
        }
    }
}

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
