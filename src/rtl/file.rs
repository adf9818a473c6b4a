//! Files the engine writes (waveforms, GTKWave save and filter files), written so that a
//! failed or interrupted run never leaves a half-written file looking complete, and so that a
//! command-line run's outputs change together or not at all.
//!
//! - A regular file (or a name that does not exist yet) is written under a temporary name
//!   beside it, `NAME.<pid>-<counter>-<random>.partial` (unique per process and per file, so
//!   two runs writing one path never touch each other's temporaries; it is created with
//!   `O_EXCL`), and renamed to `NAME` when committed. A temporary is removed when the
//!   [`OutputFile`] is dropped uncommitted, when the rename fails, and on interrupt.
//! - A symlink is followed to its final target, which is then written as above (the link
//!   stays a link).
//! - An existing special file (`/dev/null`, `/dev/full`, a FIFO) is opened and written in
//!   place, so its errors (`No space left on device`) reach the user.
//!
//! Outside a run, [`OutputFile::commit`] renames at once (the library's own use). Between
//! [`begin_run`] and [`commit_run`] the process makes one output transaction (the command
//! line's runs, docs/reliability.md "All-or-nothing outputs"):
//!
//! - [`OutputFile::commit`] only finishes the temporary (flushed and synced) and stages it;
//!   [`remove_on_commit`] stages the removal of a stale file; [`create_dir_all`] journals
//!   every folder it makes; [`lock_target`] holds an advisory lock on a `NAME.lock` sibling
//!   of each regular target, so a second run writing the same path is refused up front.
//! - [`commit_run`] renames every staged temporary into place, makes the staged removals and
//!   releases the locks, all under the registry's lock, so a SIGINT or SIGTERM (handled on a
//!   thread that takes the same lock, [`clean_up_for_exit`]) waits for the renames to finish.
//! - [`rollback`] (a failure) and [`clean_up_for_exit`] (a signal) before the commit remove
//!   every temporary and every folder the run made, and release the locks: every target keeps
//!   its old content.
//!
//! The engine owns this primitive because its tracer is the lowest layer that writes files;
//! the file handling of the layers above (the `io` layer's output plan) builds on it.

use std::collections::hash_map::RandomState;
use std::fs::{File, Metadata, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// How many symlinks [`resolve`] follows before giving up (as the kernel's `ELOOP`).
const MAX_LINKS: usize = 40;

/// One output waiting for the run's commit.
struct Staged {
    /// The finished temporary.
    temp: PathBuf,
    /// The file it replaces (symlinks followed).
    target: PathBuf,
}

/// An advisory lock held on a target's `NAME.lock` sibling for the whole run.
struct TargetLock {
    target: PathBuf,
    path: PathBuf,
    file: File,
}

/// The journal of a run between [`begin_run`] and [`commit_run`].
#[derive(Default)]
struct Run {
    staged: Vec<Staged>,
    removals: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
    locks: Vec<TargetLock>,
}

/// What this process has on disk that a failure or an interrupt must remove.
struct Registry {
    /// Temporaries being written or staged.
    temps: Vec<PathBuf>,
    /// The run's journal (`None`: no run; commits rename at once).
    run: Option<Run>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    temps: Vec::new(),
    run: None,
});

/// Counts the temporaries this process has named.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts a run's output transaction (see the module documentation).
pub fn begin_run() {
    registry().run = Some(Run::default());
}

/// Commits the run's outputs: renames every staged temporary into place, in the order they
/// were staged, then removes the files staged for removal and releases the target locks.
/// Returns the files put in place. If a rename fails, the remaining temporaries are removed
/// and the error names the file and how many outputs were already in place.
pub fn commit_run() -> Result<Vec<PathBuf>, String> {
    let mut r = registry();
    let Some(run) = r.run.take() else {
        return Ok(Vec::new());
    };
    let total = run.staged.len();
    let (placed, failure) = place_staged(&run.staged, |_| {});
    let mut failure = failure.map(|e| {
        format!(
            "{e} ({} of the run's {total} output files were already replaced)",
            placed.len()
        )
    });
    if failure.is_none() {
        for p in &run.removals {
            if let Err(e) = std::fs::remove_file(p) {
                if e.kind() != io::ErrorKind::NotFound {
                    failure = Some(format!("cannot remove {}: {e}", p.display()));
                }
            }
        }
    }
    r.temps.clear();
    sync_dirs(&placed);
    release_locks(run.locks);
    match failure {
        Some(e) => Err(e),
        None => Ok(placed),
    }
}

/// Commits what the run has staged so far without ending it: renames every staged
/// temporary into place (in staging order, under the registry's lock, so a signal waits for
/// the renames), keeps the target locks and the run open, and forgets the folders made so
/// far (they now hold committed files). A long command uses it for checkpoints: files that
/// are complete in themselves (a partial report saying it is partial) land while the run goes
/// on. Outside a run there is nothing staged. If a rename fails, the remaining staged
/// temporaries are removed and the error names the file.
pub fn commit_staged() -> Result<Vec<PathBuf>, String> {
    let mut r = registry();
    let reg = &mut *r;
    let Some(run) = reg.run.as_mut() else {
        return Ok(Vec::new());
    };
    let staged = std::mem::take(&mut run.staged);
    run.dirs.clear();
    let temps = &mut reg.temps;
    let (placed, failure) = place_staged(&staged, |temp| temps.retain(|p| p != temp));
    sync_dirs(&placed);
    match failure {
        Some(e) => Err(e),
        None => Ok(placed),
    }
}

/// Renames each of `staged` into place in order, calling `forget` with each temporary first;
/// after a failed rename the remaining temporaries are removed. Returns the files placed and
/// the first failure (`cannot put TARGET in place: ...`).
fn place_staged(
    staged: &[Staged],
    mut forget: impl FnMut(&Path),
) -> (Vec<PathBuf>, Option<String>) {
    let mut placed = Vec::with_capacity(staged.len());
    let mut failure = None;
    for s in staged {
        forget(&s.temp);
        if failure.is_some() {
            let _ = std::fs::remove_file(&s.temp);
            continue;
        }
        match std::fs::rename(&s.temp, &s.target) {
            Ok(()) => placed.push(s.target.clone()),
            Err(e) => {
                let _ = std::fs::remove_file(&s.temp);
                failure = Some(format!("cannot put {} in place: {e}", s.target.display()));
            }
        }
    }
    (placed, failure)
}

/// Syncs the folders holding `files`, so the renames are on disk (errors ignored: a folder
/// that cannot be synced still holds the files).
fn sync_dirs(files: &[PathBuf]) {
    let mut dirs: Vec<&Path> = files.iter().map(|f| parent_dir(f)).collect();
    dirs.sort();
    dirs.dedup();
    for d in dirs {
        if let Ok(f) = File::open(d) {
            let _ = f.sync_all();
        }
    }
}

/// Removes the lock files (while still holding their locks) and drops the locks.
fn release_locks(locks: Vec<TargetLock>) {
    for l in locks {
        let _ = std::fs::remove_file(&l.path);
        drop(l.file);
    }
}

/// Removes every temporary and every folder made since [`begin_run`] (newest first, only
/// while empty), releases the target locks and ends the run: every target keeps its old
/// content. Returns the paths removed.
pub fn rollback() -> Vec<PathBuf> {
    let mut r = registry();
    remove_all(&mut r)
}

fn remove_all(r: &mut Registry) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    for p in r.temps.drain(..) {
        if std::fs::remove_file(&p).is_ok() {
            removed.push(p);
        }
    }
    if let Some(run) = r.run.take() {
        // The lock files first: they may sit in a folder the run made.
        release_locks(run.locks);
        for d in run.dirs.iter().rev() {
            if std::fs::remove_dir(d).is_ok() {
                removed.push(d.clone());
            }
        }
    }
    removed
}

/// Holds the output registry locked after [`clean_up_for_exit`], so no new file can be
/// started or committed before the process exits.
pub struct ExitGuard {
    _lock: MutexGuard<'static, Registry>,
}

/// For a signal handler: [`rollback`] (nothing, once [`commit_run`] has finished), keeping
/// the registry locked (hold the guard until `process::exit`).
pub fn clean_up_for_exit() -> ExitGuard {
    let mut r = registry();
    remove_all(&mut r);
    ExitGuard { _lock: r }
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Creates `path` and any missing parents; during a run each folder made is journaled, so a
/// failed or interrupted run removes it again. An existing path that is not a folder is an
/// error saying so.
pub fn create_dir_all(path: &Path) -> io::Result<()> {
    let mut missing = Vec::new();
    let mut p = path;
    loop {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => break,
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{} exists and is not a directory", p.display()),
                ))
            }
            Err(_) => {
                missing.push(p.to_path_buf());
                match p.parent() {
                    Some(q) if !q.as_os_str().is_empty() => p = q,
                    _ => break,
                }
            }
        }
    }
    let mut r = registry();
    for d in missing.iter().rev() {
        match std::fs::create_dir(d) {
            Ok(()) => {
                if let Some(run) = r.run.as_mut() {
                    run.dirs.push(d.clone());
                }
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && d.is_dir() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Removes `path` (a stale output of an earlier run): during a run, only at [`commit_run`];
/// otherwise at once. A path that does not exist is not an error.
pub fn remove_on_commit(path: &Path) -> io::Result<()> {
    let mut r = registry();
    let reg = &mut *r;
    if let Some(run) = reg.run.as_mut() {
        // A removal outranks an output of the same file staged earlier in the run.
        let target = resolve(path)?;
        if let Some(i) = run.staged.iter().position(|s| s.target == target) {
            let old = run.staged.remove(i);
            let _ = std::fs::remove_file(&old.temp);
            reg.temps.retain(|p| *p != old.temp);
        }
        // The name itself goes (a symlink, not the file it points at), as outside a run.
        run.removals.push(path.to_path_buf());
        return Ok(());
    }
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// `NAME.lock`, the sibling a run locks while it writes `NAME`.
pub fn lock_path(target: &Path) -> PathBuf {
    let mut s = target.as_os_str().to_owned();
    s.push(".lock");
    PathBuf::from(s)
}

/// During a run, takes an exclusive advisory lock on `target`'s `NAME.lock` sibling (created
/// if missing, removed at the end of the run) and holds it until the run ends, so a second
/// run writing the same file is refused instead of racing for it. Outside a run, and for a
/// target already locked by this run, it does nothing. The error says another run holds it.
pub fn lock_target(target: &Path) -> io::Result<()> {
    let mut r = registry();
    let Some(run) = r.run.as_mut() else {
        return Ok(());
    };
    // One lock per file, however it is named (`d.npy`, `./d.npy`): a second lock on the same
    // file from this process would conflict with the first.
    let target = match (
        target.file_name(),
        std::fs::canonicalize(parent_dir(target)),
    ) {
        (Some(name), Ok(dir)) => dir.join(name),
        _ => target.to_path_buf(),
    };
    if run.locks.iter().any(|l| l.target == target) {
        return Ok(());
    }
    let path = lock_path(&target);
    // The lock file may be removed by the run that held it between our open and our lock:
    // after locking, the name must still be the file locked, or we try again.
    for _ in 0..8 {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    format!(
                        "another run is writing it now (its lock {} is held)",
                        path.display()
                    ),
                ))
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
        if same_file(&file.metadata()?, &std::fs::metadata(&path)) {
            run.locks.push(TargetLock { target, path, file });
            return Ok(());
        }
    }
    Err(io::Error::other(format!(
        "its lock {} keeps changing (another run is writing it)",
        path.display()
    )))
}

fn same_file(a: &Metadata, b: &io::Result<Metadata>) -> bool {
    use std::os::unix::fs::MetadataExt;
    b.as_ref()
        .is_ok_and(|b| a.dev() == b.dev() && a.ino() == b.ino())
}

/// Follows `path` through any chain of symlinks to the file it names (which need not exist:
/// a dangling link resolves to the path it points at). Other paths, and any path naming a
/// special file, are returned unchanged.
pub fn resolve(path: &Path) -> io::Result<PathBuf> {
    // A name for a special file is kept as given: the kernel follows its links, some of
    // which name no path (`/dev/stdout` on a pipe is `/proc/self/fd/1`, a link to
    // `pipe:[N]`).
    if is_special(path) {
        return Ok(path.to_path_buf());
    }
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

/// A fresh temporary name beside `target`: `NAME.<pid>-<counter>-<random>.partial`.
pub fn temp_path(target: &Path) -> PathBuf {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut h = RandomState::new().build_hasher();
    h.write_u64(n);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    h.write_u32(nanos);
    let random = h.finish() as u32;
    let mut s = target.as_os_str().to_owned();
    s.push(format!(".{}-{n}-{random:08x}.partial", std::process::id()));
    PathBuf::from(s)
}

/// Creates a fresh temporary for `target` (never an existing file) and registers it.
fn create_temp(r: &mut Registry, target: &Path) -> io::Result<(PathBuf, File)> {
    let mut last = None;
    for _ in 0..8 {
        let temp = temp_path(target);
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => {
                r.temps.push(temp.clone());
                return Ok((temp, file));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temporary name")))
}

/// Checks that a temporary for `target` can be created beside it (creates and removes one).
pub fn probe_temp(target: &Path) -> io::Result<()> {
    let mut r = registry();
    let (temp, file) = create_temp(&mut r, target)?;
    drop(file);
    r.temps.retain(|t| *t != temp);
    std::fs::remove_file(&temp)
}

/// The metadata of `path` as this run leaves it: its staged temporary's while the run's
/// commit is pending, the file's own otherwise.
pub fn written_metadata(path: &Path) -> io::Result<Metadata> {
    let target = resolve(path)?;
    let staged = registry().run.as_ref().and_then(|run| {
        run.staged
            .iter()
            .rev()
            .find(|s| s.target == target)
            .map(|s| s.temp.clone())
    });
    std::fs::metadata(staged.as_deref().unwrap_or(path))
}

/// One output file being written: a temporary renamed on commit, or a special file in place.
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
        lock_target(&target).map_err(|e| named(e, "write"))?;
        let mut r = registry();
        let (partial, file) = create_temp(&mut r, &target).map_err(|e| named(e, "create"))?;
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

    /// Syncs (regular files) the temporary; during a run stages it for [`commit_run`]
    /// (replacing an earlier staging of the same target), otherwise renames it into place at
    /// once. On failure the temporary is removed.
    pub fn commit(mut self) -> io::Result<()> {
        let Some(partial) = self.partial.take() else {
            return Ok(());
        };
        let mut r = registry();
        let res = match self.file.take() {
            Some(f) => f.sync_all(),
            None => File::open(&partial).and_then(|f| f.sync_all()),
        };
        let fail = |r: &mut Registry, e: io::Error| {
            r.temps.retain(|p| *p != partial);
            let _ = std::fs::remove_file(&partial);
            io::Error::new(
                e.kind(),
                format!("cannot write {}: {e}", self.target.display()),
            )
        };
        if let Err(e) = res {
            return Err(fail(&mut r, e));
        }
        let reg = &mut *r;
        if let Some(run) = reg.run.as_mut() {
            if let Some(i) = run.staged.iter().position(|s| s.target == self.target) {
                let old = run.staged.remove(i);
                let _ = std::fs::remove_file(&old.temp);
                reg.temps.retain(|p| *p != old.temp);
            }
            // An output outranks a removal of the same file staged earlier in the run.
            run.removals
                .retain(|p| resolve(p).map_or(true, |t| t != self.target));
            run.staged.push(Staged {
                temp: partial,
                target: self.target.clone(),
            });
            return Ok(());
        }
        match std::fs::rename(&partial, &self.target) {
            Ok(()) => {
                r.temps.retain(|p| *p != partial);
                Ok(())
            }
            Err(e) => Err(fail(&mut r, e)),
        }
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if let Some(p) = self.partial.take() {
            self.file = None;
            let _ = std::fs::remove_file(&p);
            registry().temps.retain(|q| *q != p);
        }
    }
}

/// A buffered file written under a temporary name and renamed into place on commit.
pub struct AtomicFile {
    out: OutputFile,
    writer: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Creates a temporary for `path` (or opens a special file). Fails with a message
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
