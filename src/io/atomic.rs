//! A buffered [`AtomicFile`]: output goes to `NAME.partial` and only a successful
//! [`AtomicFile::commit`] renames it to `NAME` (a special file such as `/dev/null` is written
//! in place; a symlink is followed). Dropping an uncommitted file removes the partial one, so
//! a failed run leaves nothing that looks complete. Defined by the engine
//! (`crate::rtl::file`), which writes its waveforms through it.

pub use crate::rtl::file::AtomicFile;
