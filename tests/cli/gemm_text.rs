//! `tcrtl gemm` with text matrices (`.txt`, `.hex`): the result equals the GEMM written out by
//! hand, and malformed text is a one-line error (exit 2) that names the file and line.

use crate::common::cli::{assert_error, p, scratch, tcrtl};
use tensorcore_rtl::io::npy::read_npy;

#[test]
fn text_operands_give_the_hand_computed_product() {
    let d = scratch("gemm-text", "ok");
    // A (2 x 3) with a comment and commas, B (3 x 2) as FP16 bit patterns and decimals,
    // C (2 x 2) as FP32 decimals.
    std::fs::write(d.join("a.txt"), "# A\n1 2 3\n4, 5, 6  # row 1\n\n").unwrap();
    std::fs::write(d.join("b.hex"), "0x3c00 0\n0 0x3c00\n1 1\n").unwrap();
    std::fs::write(d.join("c.txt"), "0.5 0\n0 -1\n").unwrap();
    let out = p(&d, "d.npy");
    let o = tcrtl(&[
        "gemm",
        "--a",
        &p(&d, "a.txt"),
        "--b",
        &p(&d, "b.hex"),
        "--c",
        &p(&d, "c.txt"),
        "--format",
        "fp16",
        "--out",
        &out,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let arr = read_npy(std::path::Path::new(&out)).unwrap();
    assert_eq!(arr.shape, vec![2, 2]);
    // [[1,2,3],[4,5,6]] x [[1,0],[0,1],[1,1]] + [[0.5,0],[0,-1]], by hand.
    let want = [4.5f32, 5.0, 10.0, 10.0];
    for (i, w) in want.iter().enumerate() {
        assert_eq!(f32::from_bits(arr.word(i) as u32), *w, "D element {i}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn malformed_text_is_a_clear_error() {
    let d = scratch("gemm-text", "bad");
    std::fs::write(d.join("b.txt"), "1 0\n0 1\n").unwrap();
    let cases: [(&str, &str, &str); 4] = [
        (
            "ragged.txt",
            "1 2\n3\n",
            "row 1 has 1 elements but row 0 has 2",
        ),
        (
            "inexact.txt",
            "1 2.1\n",
            "not exactly representable in fp16",
        ),
        ("word.txt", "1 two\n", "\"two\""),
        ("empty.txt", "# nothing\n\n", "holds no elements"),
    ];
    for (name, text, needle) in cases {
        std::fs::write(d.join(name), text).unwrap();
        let o = tcrtl(&["gemm", "--a", &p(&d, name), "--b", &p(&d, "b.txt")]);
        assert_error(&o, needle);
        assert!(String::from_utf8_lossy(&o.stderr).contains(name), "{name}");
    }
    let _ = std::fs::remove_dir_all(&d);
}
