//! Every file a run writes goes through here: checked before any work ([`OutputPlan`]),
//! written atomically to regular files and in place to special files ([`OutputFile`]), and
//! removed again when the run fails or is interrupted ([`begin_run`], [`rollback`],
//! [`clean_up_for_exit`]).
//!
//! The atomic file and its registry live in the engine (`crate::rtl::file`, whose tracer
//! writes waveforms through them) and are re-exported here; this module adds the checks a
//! command makes before it starts.

use std::collections::HashSet;
use std::fs::OpenOptions;
use std::io;
use std::path::{Path, PathBuf};

pub use crate::rtl::file::{
    begin_run, clean_up_for_exit, end_run, is_special, partial_path, resolve, rollback, ExitGuard,
    OutputFile,
};

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The outputs of one run, checked together before any work: each must be creatable (its
/// directory exists, it is not a directory, it can be opened for writing) and no two may
/// name the same file.
#[derive(Debug, Default)]
pub struct OutputPlan {
    seen: Vec<(String, PathBuf, PathBuf)>,
    keys: HashSet<PathBuf>,
}

impl OutputPlan {
    /// An empty plan.
    pub fn new() -> OutputPlan {
        OutputPlan::default()
    }

    /// Checks one output, `what` naming it in errors (e.g. `--out`). Returns the file that
    /// will be written (symlinks followed).
    pub fn add(&mut self, what: &str, path: &Path) -> Result<PathBuf, String> {
        let shown = path.display();
        if path.as_os_str().is_empty() {
            return Err(format!("{what}: empty path"));
        }
        let target = resolve(path).map_err(|e| format!("{what} {shown}: {e}"))?;
        if target.is_dir() {
            return Err(format!("{what} {shown}: is a directory"));
        }
        let special = is_special(&target);
        let key = if special {
            std::fs::canonicalize(&target).map_err(|e| format!("{what} {shown}: {e}"))?
        } else {
            let dir = parent_dir(&target);
            if !dir.is_dir() {
                return Err(format!(
                    "{what} {shown}: directory {} does not exist",
                    dir.display()
                ));
            }
            let name = target
                .file_name()
                .ok_or_else(|| format!("{what} {shown}: not a file name"))?;
            std::fs::canonicalize(dir)
                .map_err(|e| format!("{what} {shown}: {e}"))?
                .join(name)
        };
        if let Some((other, p, _)) = self.seen.iter().find(|(_, _, k)| *k == key) {
            return Err(format!(
                "{what} {shown} and {other} {} are the same file",
                p.display()
            ));
        }
        probe(&target, special).map_err(|e| format!("{what} {shown}: {e}"))?;
        self.keys.insert(key.clone());
        self.seen.push((what.to_string(), path.to_path_buf(), key));
        Ok(target)
    }

    /// Whether `path` is one of the planned outputs (after following symlinks).
    pub fn contains(&self, path: &Path) -> bool {
        let Ok(target) = resolve(path) else {
            return false;
        };
        let key = std::fs::canonicalize(&target).ok().or_else(|| {
            let name = target.file_name()?;
            Some(std::fs::canonicalize(parent_dir(&target)).ok()?.join(name))
        });
        key.is_some_and(|k| self.keys.contains(&k))
    }
}

/// Checks that `target` can be written: for a regular one its partial file is created and
/// removed again. A special file is not opened here (opening a FIFO waits for, and ends, its
/// reader); its errors are reported when it is written.
fn probe(target: &Path, special: bool) -> io::Result<()> {
    if special {
        return Ok(());
    }
    let partial = partial_path(target);
    let existed = partial.exists();
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&partial)?;
    if !existed {
        std::fs::remove_file(&partial)?;
    }
    Ok(())
}

/// Writes `bytes` to `path` as one [`OutputFile`] (atomic for a regular file, in place for a
/// special file). Errors name the path.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write as _;
    let err = |e: io::Error| format!("{}: {e}", path.display());
    let mut f = OutputFile::create(path).map_err(err)?;
    f.take_file()
        .and_then(|mut file| file.write_all(bytes))
        .map_err(err)?;
    f.commit().map_err(err)
}
