//! The `.npy` reader and writer: every dtype, headers by hand, bad files.

use std::path::Path;
use tensorcore_rtl::io::npy::{parse_npy, read_npy, write_npy, Dtype, MAX_FILE_BYTES};

/// The magic string that opens every `.npy` file (NumPy format specification, version 1.0).
const MAGIC: &[u8] = b"\x93NUMPY";

#[test]
fn round_trip_every_dtype() {
    let dir = std::env::temp_dir().join(format!("tcrtl-npy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (dtype, words) in [
        (Dtype::U8, vec![0u64, 1, 255, 7, 8, 9]),
        (Dtype::I8, vec![0u64, 0x80, 0xFF, 7, 8, 9]),
        (Dtype::I32, vec![0u64, 0x8000_0000, 0xFFFF_FFFF, 7, 8, 9]),
        (Dtype::U16, vec![0x3c00, 0xffff, 1, 2, 3, 4]),
        (
            Dtype::F32,
            vec![0x3f80_0000, 0xbf80_0000, 0, 1, 2, 0x7f80_0000],
        ),
        (Dtype::F64, vec![1.5f64.to_bits(), 0, 1, 2, 3, 4]),
    ] {
        let p = dir.join(format!("{}.npy", dtype.numpy_name()));
        write_npy(&p, &[2, 3], dtype, &words).unwrap();
        let back = read_npy(&p).unwrap();
        assert_eq!(back.shape, vec![2, 3]);
        assert_eq!(back.dtype, dtype);
        assert_eq!(back.words(), words);
        let bytes = std::fs::read(&p).unwrap();
        let header_end = 10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!(header_end % 64, 0, "data must start 64-byte aligned");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn parses_numpy_written_header_fortran_and_big_endian() {
    // Hand-built: a 2x3 big-endian uint16 array in Fortran order.
    let header = "{'descr': '>u2', 'fortran_order': True, 'shape': (2, 3), }";
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&[1, 0]);
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    // Column-major data for [[1,2,3],[4,5,6]]: 1,4,2,5,3,6.
    for v in [1u16, 4, 2, 5, 3, 6] {
        bytes.extend_from_slice(&v.to_be_bytes());
    }
    let a = parse_npy(&bytes, Path::new("x.npy")).unwrap();
    assert_eq!(a.words(), vec![1, 2, 3, 4, 5, 6]);
}

#[test]
fn rejects_bad_files_with_clear_errors() {
    let e = parse_npy(b"hello world", Path::new("bad.npy")).unwrap_err();
    assert!(e.to_string().contains("magic"), "{e}");
    let header = "{'descr': '<u8', 'fortran_order': False, 'shape': (1,), }";
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&[1, 0]);
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(&[0; 8]);
    let e = parse_npy(&bytes, Path::new("u8.npy")).unwrap_err();
    assert!(e.to_string().contains("unsupported dtype '<u8'"), "{e}");
    let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&[1, 0]);
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(&[0; 8]);
    let e = parse_npy(&bytes, Path::new("short.npy")).unwrap_err();
    assert!(e.to_string().contains("expected 16 data bytes"), "{e}");
    // A shape whose element count overflows u64 (npyz 0.9.1 panics on this one).
    let header =
        "{'descr': '<u2', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }";
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&[1, 0]);
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    let e = parse_npy(&bytes, Path::new("huge.npy")).unwrap_err();
    assert!(e.to_string().contains("shape too large"), "{e}");
}

#[test]
fn a_file_too_large_is_refused_before_it_is_read() {
    let dir = std::env::temp_dir().join(format!("tcrtl-npy-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("big.npy");
    // A sparse file: nothing is written to disk, and nothing may be read from it.
    std::fs::File::create(&p)
        .unwrap()
        .set_len(MAX_FILE_BYTES + 1)
        .unwrap();
    let t = std::time::Instant::now();
    let e = read_npy(&p).unwrap_err();
    assert!(e.to_string().contains("more than"), "{e}");
    assert!(t.elapsed().as_secs_f64() < 1.0, "{:?}", t.elapsed());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unwritable_path_is_an_error_and_leaves_nothing() {
    let p = Path::new("/nonexistent-dir/out.npy");
    let e = write_npy(p, &[1], Dtype::F32, &[0]).unwrap_err();
    assert!(e.to_string().contains("/nonexistent-dir/out.npy"), "{e}");
}
