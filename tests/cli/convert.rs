//! `tcrtl convert`, run as the built binary. Expected codes are worked out by hand from the
//! OCP definitions (E2M1 values 0, 0.5, 1, 1.5, 2, 3, 4, 6; E8M0 `2^(e - 127)`; TF32 = the top
//! 19 bits of FP32).

use crate::common::cli::{assert_error, p, scratch, tcrtl, text};
use tensorcore_rtl::io::npy::{read_npy, write_npy, Dtype};

fn ok(args: &[&str]) -> String {
    let o = tcrtl(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
    text(&o.stdout)
}

fn f32_words(v: &[f32]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits() as u64).collect()
}

#[test]
fn values_to_fp4_in_every_mode() {
    // 5 lies halfway between 4 (0x6) and 6 (0x7).
    let code = |mode: &str, v: &str| -> String {
        let out = ok(&["convert", "--to", "e2m1", "--values", v, "--rounding", mode]);
        out.split_whitespace().next().unwrap().to_string()
    };
    assert_eq!(code("rne", "5"), "0x6");
    assert_eq!(code("rna", "5"), "0x7");
    assert_eq!(code("rtz", "5"), "0x6");
    assert_eq!(code("rup", "5"), "0x7");
    assert_eq!(code("rdn", "-5"), "0xf");
    assert_eq!(code("rto", "4.5"), "0x7");
    assert_eq!(code("rne", "100"), "0x7", "overflow clamps to 6");
    assert_eq!(code("rne", "-inf"), "0xf", "-Inf clamps to -6");
    assert_eq!(code("rne", "-0"), "0x8");
}

#[test]
fn json_lists_bits_and_values() {
    let out = ok(&[
        "convert",
        "--to",
        "e8m0",
        "--values",
        "1,3,0.25,-1",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let items = v.as_array().unwrap();
    assert_eq!(items.len(), 4);
    assert_eq!(items[0]["bits"], "0x7f");
    assert_eq!(items[0]["value"], 1.0);
    assert_eq!(items[1]["bits"], "0x81", "3 ties up to 4");
    assert_eq!(items[2]["bits"], "0x7d");
    assert_eq!(items[3]["bits"], "0xff", "no negative scales: NaN");
    assert_eq!(items[3]["value"], "nan");
    let out = ok(&[
        "convert",
        "--to",
        "tf32",
        "--values",
        "1.00048828125",
        "--rounding",
        "rna",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v[0]["bits"], "0x3f802000");
    assert_eq!(v[0]["value"], 1.0009765625);
}

#[test]
fn npy_in_raw_bits_out() {
    let d = scratch("convert", "npy");
    let x = [0.0f32, 0.5, 1.25, -3.0, 7.0, 1e-3];
    write_npy(&d.join("x.npy"), &[2, 3], Dtype::F32, &f32_words(&x)).unwrap();
    ok(&[
        "convert",
        "--to",
        "e2m1",
        "--in",
        &p(&d, "x.npy"),
        "--out",
        &p(&d, "y.npy"),
    ]);
    let y = read_npy(&d.join("y.npy")).unwrap();
    assert_eq!(y.dtype, Dtype::U8);
    assert_eq!(y.shape, vec![2, 3]);
    // 1.25 ties to 1 (even), 7 overflows to 6.
    assert_eq!(y.words(), vec![0x0, 0x1, 0x2, 0xD, 0x7, 0x0]);
    // TF32: uint32 containers with the low 13 bits zero.
    let t = [1.0f64 + 2f64.powi(-11) + 2f64.powi(-30)];
    write_npy(&d.join("t.npy"), &[1], Dtype::F64, &[t[0].to_bits()]).unwrap();
    ok(&[
        "convert",
        "--to",
        "tf32",
        "--in",
        &p(&d, "t.npy"),
        "--out",
        &p(&d, "t32.npy"),
    ]);
    let y = read_npy(&d.join("t32.npy")).unwrap();
    assert_eq!(
        (y.dtype, y.words().clone()),
        (Dtype::U32, vec![0x3F80_2000])
    );
    // FP16 out: uint16; raw bits in with --from.
    write_npy(&d.join("b.npy"), &[2], Dtype::U8, &[0x7E, 0x38]).unwrap();
    ok(&[
        "convert",
        "--from",
        "e4m3",
        "--to",
        "fp16",
        "--in",
        &p(&d, "b.npy"),
        "--out",
        &p(&d, "h.npy"),
    ]);
    let y = read_npy(&d.join("h.npy")).unwrap();
    assert_eq!(
        (y.dtype, y.words().clone()),
        (Dtype::U16, vec![0x5F00, 0x3C00])
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn mx_blocks_along_the_last_axis() {
    let d = scratch("convert", "mx");
    // 2 rows of 40: blocks of 32 and 8 per row.
    let mut x = vec![0f32; 80];
    x[0] = 100.0; // row 0 block 0: scale 2^4
    x[1] = 5.0; // 0.3125 -> 0.5
    x[32] = 1.0; // row 0 block 1: scale 2^-2, element 4 (0x6)
    x[40] = -6.0; // row 1 block 0: scale 2^0, element -6 (0xF)
    write_npy(&d.join("x.npy"), &[2, 40], Dtype::F32, &f32_words(&x)).unwrap();
    let out = ok(&[
        "convert",
        "--to",
        "mxfp4",
        "--in",
        &p(&d, "x.npy"),
        "--out",
        &p(&d, "e.npy"),
        "--scales-out",
        &p(&d, "s.npy"),
    ]);
    assert!(out.contains("mxfp4"), "{out}");
    let e = read_npy(&d.join("e.npy")).unwrap();
    let s = read_npy(&d.join("s.npy")).unwrap();
    assert_eq!((e.dtype, e.shape.clone()), (Dtype::U8, vec![2, 40]));
    assert_eq!((s.dtype, s.shape.clone()), (Dtype::U8, vec![2, 2]));
    assert_eq!(s.words(), vec![127 + 4, 127 - 2, 127, 0]);
    assert_eq!(&e.words()[..2], &[0x7, 0x1]);
    assert_eq!(e.word(32), 0x6);
    assert_eq!(e.word(40), 0xF);
    // NVFP4 reports its FP32 tensor scale: amax 2688 gives 1.0.
    let out = ok(&["convert", "--to", "nvfp4", "--values", "2688,1", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["tensor_scale"]["bits"], "0x3f800000");
    assert_eq!(v["scales"][0]["value"], 448.0);
    assert_eq!(v["elements"][0]["bits"], "0x7");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_input_is_one_line_and_writes_nothing() {
    let d = scratch("convert", "bad");
    let out = p(&d, "y.npy");
    assert_error(
        &tcrtl(&["convert", "--to", "fp5", "--values", "1"]),
        "unknown format",
    );
    assert_error(
        &tcrtl(&["convert", "--to", "e2m1", "--values", "nan"]),
        "has no NaN",
    );
    assert_error(
        &tcrtl(&["convert", "--to", "e2m1", "--values", "1,x"]),
        "not a decimal",
    );
    assert_error(
        &tcrtl(&[
            "convert",
            "--to",
            "e2m1",
            "--values",
            "1",
            "--rounding",
            "rnx",
        ]),
        "unknown rounding",
    );
    assert_error(
        &tcrtl(&[
            "convert",
            "--to",
            "mxfp4",
            "--values",
            "1",
            "--rounding",
            "rtz",
        ]),
        "rne only",
    );
    assert_error(
        &tcrtl(&[
            "convert",
            "--to",
            "e4m3",
            "--from",
            "tf32",
            "--values",
            "0x3f800001",
        ]),
        "low 13 bits",
    );
    assert_error(
        &tcrtl(&["convert", "--to", "nvfp4", "--values", "1,inf"]),
        "finite",
    );
    assert_error(&tcrtl(&["convert", "--to", "e2m1"]), "--values");
    // NaN in a file: error, no output file.
    let x = [1.0f32, f32::NAN];
    write_npy(&d.join("x.npy"), &[2], Dtype::F32, &f32_words(&x)).unwrap();
    assert_error(
        &tcrtl(&[
            "convert",
            "--to",
            "e3m2",
            "--in",
            &p(&d, "x.npy"),
            "--out",
            &out,
        ]),
        "has no NaN",
    );
    assert!(!d.join("y.npy").exists());
    // Raw bits without --from, bits too wide for --from, block format without --scales-out.
    write_npy(&d.join("u.npy"), &[2], Dtype::U16, &[0x3C00, 0x1FF]).unwrap();
    assert_error(
        &tcrtl(&[
            "convert",
            "--to",
            "e2m1",
            "--in",
            &p(&d, "u.npy"),
            "--out",
            &out,
        ]),
        "--from",
    );
    assert_error(
        &tcrtl(&[
            "convert",
            "--from",
            "e4m3",
            "--to",
            "e2m1",
            "--in",
            &p(&d, "u.npy"),
            "--out",
            &out,
        ]),
        "does not fit",
    );
    assert_error(
        &tcrtl(&[
            "convert",
            "--to",
            "mxfp8e4m3",
            "--in",
            &p(&d, "x.npy"),
            "--out",
            &out,
        ]),
        "--scales-out",
    );
    assert_error(
        &tcrtl(&[
            "convert",
            "--to",
            "e2m1",
            "--in",
            &p(&d, "x.npy"),
            "--out",
            &out,
            "--scales-out",
            &p(&d, "s.npy"),
        ]),
        "block format",
    );
    assert_error(
        &tcrtl(&[
            "convert",
            "--to",
            "e2m1",
            "--in",
            &p(&d, "missing.npy"),
            "--out",
            &out,
        ]),
        "missing.npy",
    );
    assert!(!d.join("y.npy").exists() && !d.join("s.npy").exists());
    // An existing output is left as it was when the run fails.
    std::fs::write(d.join("y.npy"), b"keep").unwrap();
    assert_error(
        &tcrtl(&[
            "convert",
            "--to",
            "e3m2",
            "--in",
            &p(&d, "x.npy"),
            "--out",
            &out,
        ]),
        "has no NaN",
    );
    assert_eq!(std::fs::read(d.join("y.npy")).unwrap(), b"keep");
    let _ = std::fs::remove_dir_all(&d);
}

/// The block summary counts the elements the MX rule clamped (hand-worked from the OCP
/// definition): in [-1.99, 1] the shared exponent is floor(log2 1.99) - 8 = -8 (E4M3's emax),
/// and 1.99 / 2^-8 = 509.4 exceeds E4M3's largest 448, so -1.99 is set to -448 x 2^-8 = -1.75;
/// 1 fits. For MXINT8 (emax 0, scale 1) 1.99 exceeds 127/64 and 1.5 fits. [1, 0.5] has none.
#[test]
fn block_summary_counts_clamped_elements() {
    let out = ok(&["convert", "--to", "mxfp8e4m3", "--values", "-1.99,1"]);
    assert!(out.contains("; 1 clamped"), "{out}");
    assert!(out.contains("0xfe -448 -1.75"), "{out}");
    let out = ok(&["convert", "--to", "mxint8", "--values", "1.99,1.5"]);
    assert!(out.contains("; 1 clamped"), "{out}");
    let out = ok(&[
        "convert",
        "--to",
        "mxfp8e4m3",
        "--values",
        "1,0.5",
        "--json",
    ]);
    let j: serde_json::Value = serde_json::from_str(out.trim()).expect("json");
    assert_eq!(j["clamped"], 0, "{j}");
}
