//! Output files written beside their target and renamed: symlinks, special files.

use std::io::Write;
use std::path::{Path, PathBuf};
use tensorcore_rtl::rtl::file::OutputFile;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcrtl-output-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

#[test]
fn a_symlink_is_followed_and_kept() {
    let d = dir("link");
    let real = d.join("real.bin");
    std::fs::write(&real, b"old").expect("write");
    let link = d.join("link.bin");
    std::os::unix::fs::symlink("real.bin", &link).expect("symlink");
    let mut f = OutputFile::create(&link).expect("create");
    f.take_file()
        .expect("file")
        .write_all(b"new")
        .expect("write");
    f.commit().expect("commit");
    assert!(std::fs::symlink_metadata(&link)
        .expect("link")
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&real).expect("read"), b"new");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_special_file_is_written_in_place() {
    let mut f = OutputFile::create(Path::new("/dev/full")).expect("open");
    assert!(f.is_special());
    let err = f
        .take_file()
        .expect("file")
        .write_all(b"x")
        .expect_err("full");
    assert_eq!(err.raw_os_error(), Some(28));
}
