//! Every file a run writes goes through here: checked before any work ([`OutputPlan`]: each
//! output creatable, none named twice, the tracer's side files included, each locked against
//! a second run), written to a unique temporary ([`OutputFile`]) and committed with the
//! run's other outputs at the very end ([`begin_run`], [`commit_run`]), or removed again when
//! the run fails or is interrupted ([`rollback`], [`clean_up_for_exit`]).
//!
//! The atomic file and its registry live in the engine (`crate::rtl::file`, whose tracer
//! writes waveforms through them) and are re-exported here; this module adds the checks a
//! command makes before it starts.

use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};

pub use crate::rtl::file::{
    begin_run, clean_up_for_exit, commit_run, commit_staged, create_dir_all, is_special, lock_path,
    lock_target, remove_on_commit, resolve, rollback, temp_path, written_metadata, ExitGuard,
    OutputFile,
};

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The outputs of one run, checked together before any work: each must be creatable (its
/// directory exists, it is not a directory, it can be opened for writing), no two may name
/// the same file, none may take a name reserved for a trace's translate filter files, and
/// (during a run) each regular one is locked against a second run ([`lock_target`]).
#[derive(Debug, Default)]
pub struct OutputPlan {
    seen: Vec<(String, PathBuf, PathBuf)>,
    keys: HashSet<PathBuf>,
    /// Names reserved by a trace: (option, its path, folder key, `STEM.`, `.txt`).
    families: Vec<(String, PathBuf, PathBuf, String, String)>,
}

/// The canonical folder of `target` and its file name, the key two paths share when they
/// name the same file.
fn key_of(target: &Path) -> Option<(PathBuf, String)> {
    let name = target.file_name()?.to_string_lossy().into_owned();
    let dir = std::fs::canonicalize(parent_dir(target)).ok()?;
    Some((dir, name))
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
            special_key(&target).map_err(|e| format!("{what} {shown}: {e}"))?
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
        if let Some((other, p, ..)) = self.families.iter().find(|f| in_family(f, &key)) {
            return Err(format!(
                "{what} {shown}: the name of a GTKWave translate filter file of {other} {}",
                p.display()
            ));
        }
        probe(&target, special).map_err(|e| format!("{what} {shown}: {e}"))?;
        if !special {
            lock_target(&target).map_err(|e| format!("{what} {shown}: {e}"))?;
        }
        self.keys.insert(key.clone());
        self.seen.push((what.to_string(), path.to_path_buf(), key));
        Ok(target)
    }

    /// Adds a waveform `path` (option `flag`) and the side files the tracer writes beside a
    /// regular one: `STEM.gtkw`, `STEM.overview.gtkw`, and the names `STEM.*.txt` reserved
    /// for its translate filter files (refused to any other output, before or after).
    pub fn add_trace(&mut self, flag: &str, path: &Path) -> Result<PathBuf, String> {
        let target = self.add(flag, path)?;
        if is_special(&target) {
            return Ok(target);
        }
        let gtkw = path.with_extension("gtkw");
        self.add(
            &format!("{flag} {} (its GTKWave save file)", path.display()),
            &gtkw,
        )?;
        self.add(
            &format!("{flag} {} (its GTKWave overview save file)", path.display()),
            &gtkw.with_extension("overview.gtkw"),
        )?;
        let stem = gtkw
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let family_target = resolve(&gtkw).unwrap_or(gtkw);
        let Some((dir, _)) = key_of(&family_target) else {
            return Ok(target);
        };
        let family = (
            flag.to_string(),
            path.to_path_buf(),
            dir,
            format!("{stem}."),
            ".txt".to_string(),
        );
        if let Some((other, p, _)) = self.seen.iter().find(|(_, _, k)| in_family(&family, k)) {
            return Err(format!(
                "{other} {}: the name of a GTKWave translate filter file of {flag} {}",
                p.display(),
                path.display()
            ));
        }
        self.families.push(family);
        Ok(target)
    }

    /// Whether `path` is one of the planned outputs (after following symlinks).
    pub fn contains(&self, path: &Path) -> bool {
        let Ok(target) = resolve(path) else {
            return false;
        };
        if is_special(&target) {
            return special_key(&target).is_ok_and(|k| self.keys.contains(&k));
        }
        let key = std::fs::canonicalize(&target).ok().or_else(|| {
            let name = target.file_name()?;
            Some(std::fs::canonicalize(parent_dir(&target)).ok()?.join(name))
        });
        key.is_some_and(|k| self.keys.contains(&k))
    }
}

/// The key of a special file: its canonical path, or (a pipe behind `/dev/stdout`, which
/// has none) its device and inode.
fn special_key(target: &Path) -> io::Result<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    std::fs::canonicalize(target).or_else(|_| {
        let m = std::fs::metadata(target)?;
        Ok(PathBuf::from(format!(
            "special file {}:{}",
            m.dev(),
            m.ino()
        )))
    })
}

/// Whether the file `key` (canonical folder joined with the name) takes a name `family`
/// reserves.
fn in_family(family: &(String, PathBuf, PathBuf, String, String), key: &Path) -> bool {
    let (_, _, dir, prefix, suffix) = family;
    let name = key
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    key.parent() == Some(dir.as_path())
        && name.len() > prefix.len() + suffix.len()
        && name.starts_with(prefix.as_str())
        && name.ends_with(suffix.as_str())
}

/// Checks that `target` can be written: for a regular one a temporary is created beside it
/// and removed again. A special file is not opened here (opening a FIFO waits for, and ends,
/// its reader); its errors are reported when it is written.
fn probe(target: &Path, special: bool) -> io::Result<()> {
    if special {
        return Ok(());
    }
    crate::rtl::file::probe_temp(target)
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
