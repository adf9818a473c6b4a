//! A buffered [`AtomicFile`]: output goes to a unique temporary beside `NAME` and only a
//! successful [`AtomicFile::commit`] renames it to `NAME` (during a command-line run, with the
//! run's other outputs at its end; a special file such as `/dev/null` is written in place; a
//! symlink is followed). Dropping an uncommitted file removes the temporary, so
//! a failed run leaves nothing that looks complete. Defined by the engine
//! (`crate::rtl::file`), which writes its waveforms through it.

pub use crate::rtl::file::AtomicFile;
