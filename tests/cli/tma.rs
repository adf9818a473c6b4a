//! `tcrtl tma load` through the built binary: the JSON contract (shared-memory image against
//! the independent reference `verify::tma_ref`, tx bytes, OOB count, bank conflicts), the
//! default dimensions and strides from the .npy shape, and one-line errors (exit code 2) for
//! bad descriptors, unsupported modes and extents past the file.

use crate::common::cli::{assert_error, tcrtl};
use std::path::{Path, PathBuf};
use std::process::Output;
use tensorcore_rtl::hw::memory::{ElemType, OobFill, Swizzle, TensorMap};
use tensorcore_rtl::io::npy::{write_npy, Dtype};
use tensorcore_rtl::verify::tma_ref;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcrtl-tma-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// A tensor of `shape` (numpy order) with element `i` = `i * 2654435761` truncated.
fn tensor(dir: &Path, shape: &[usize], dtype: Dtype, bytes: usize) -> (PathBuf, Vec<u8>) {
    let n: usize = shape.iter().product();
    let mask = if bytes == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * bytes)) - 1
    };
    let words: Vec<u64> = (0..n as u64)
        .map(|i| i.wrapping_mul(2_654_435_761) & mask)
        .collect();
    let p = dir.join("t.npy");
    write_npy(&p, shape, dtype, &words).expect("writes");
    let img = words
        .iter()
        .flat_map(|w| w.to_le_bytes()[..bytes].to_vec())
        .collect();
    (p, img)
}

fn json(out: &Output) -> serde_json::Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// The expected `smem` list: the reference placement, element-sized slots from `base` through
/// the end of the last 128-byte row.
fn expected_slots(img: &[u8], map: &TensorMap, coords: [i32; 5], base: u32, mask: u32) -> Vec<u64> {
    let (dense, _) = tma_ref::dense_box(img, map, &coords);
    let (row, pitch) = tma_ref::row_layout(map);
    let footprint = dense.len() / row * pitch;
    let end = (base as usize + footprint).div_ceil(128) * 128;
    let mut smem = vec![0u8; end];
    tma_ref::place_rows(&dense, row, pitch, base, mask, &mut smem);
    let es = map.dtype.size() as usize;
    smem[base as usize..]
        .chunks(es)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..es].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect()
}

#[test]
fn load_json_matches_the_reference() {
    let d = tmp("json");
    let (p, img) = tensor(&d, &[12, 40], Dtype::U16, 2);
    for (swz, mask, base) in [("none", 0, 0u32), ("64B", 3, 256), ("128B", 7, 2048)] {
        let out = tcrtl(&[
            "tma",
            "load",
            "--tensor",
            s(&p),
            "--dtype",
            "fp16",
            "--box",
            "32,6",
            "--coords",
            "-8,9",
            "--swizzle",
            swz,
            "--oob",
            "nan",
            "--smem-base",
            &base.to_string(),
            "--mem-latency",
            "20",
            "--json",
        ]);
        let v = json(&out);
        let mut map = TensorMap::dense(ElemType::Fp16, 0, &[40, 12], &[32, 6]);
        map.oob_fill = OobFill::Nan;
        map.swizzle = Swizzle::parse(swz).expect("mode");
        let want = expected_slots(&img, &map, [-8, 9, 0, 0, 0], base, mask);
        let got: Vec<u64> = v["smem"]
            .as_array()
            .expect("smem")
            .iter()
            .map(|x| x.as_u64().expect("int"))
            .collect();
        assert_eq!(got, want, "swizzle {swz}");
        assert_eq!(v["tx_bytes"], 32 * 6 * 2);
        // Rows 9..14 of 12 exist up to 11: 3 rows in bounds; columns -8..23: 8 OOB per row.
        assert_eq!(v["oob_elements"], 3 * 32 + 3 * 8);
        assert!(v["cycles"].as_u64().expect("cycles") > 20);
        assert!(v["bank_conflicts"].is_u64());
        // The summary reads before the shared-memory words: every other key precedes `smem`,
        // which comes last.
        let text = String::from_utf8_lossy(&out.stdout);
        let smem_at = text.find("\"smem\":").expect("smem key");
        for key in [
            "tx_bytes",
            "oob_elements",
            "cycles",
            "bank_conflicts",
            "smem_base",
        ] {
            let at = text.find(&format!("\"{key}\":")).expect(key);
            assert!(at < smem_at, "{key} after smem: {text}");
        }
        assert!(text.trim_end().ends_with("]}"), "{text}");
    }
}

#[test]
fn strides_and_explicit_dims() {
    let d = tmp("strides");
    let (p, img) = tensor(&d, &[4, 6, 32], Dtype::U8, 1);
    // A 3-D u8 tensor viewed with element strides and a smaller gdim.
    let out = tcrtl(&[
        "tma",
        "load",
        "--tensor",
        s(&p),
        "--dtype",
        "e4m3",
        "--box",
        "32,5,3",
        "--coords",
        "0,-1,0",
        "--estride",
        "2,1,2",
        "--gdim",
        "30,6,4",
        "--gstride",
        "32,192",
        "--json",
    ]);
    let v = json(&out);
    let mut map = TensorMap::dense(ElemType::E4M3, 0, &[30, 6, 4], &[32, 5, 3]);
    map.global_strides = [32, 192, 0, 0];
    map.element_strides = [2, 1, 2, 1, 1];
    let want = expected_slots(&img, &map, [0, -1, 0, 0, 0], 0, 0);
    let got: Vec<u64> = v["smem"]
        .as_array()
        .expect("smem")
        .iter()
        .map(|x| x.as_u64().expect("int"))
        .collect();
    assert_eq!(got, want);
    // Dimension 0's stride does not thin a row (as measured on an H200): 32 x 5 x 2.
    assert_eq!(v["tx_bytes"], 32 * 5 * 2);
}

#[test]
fn bad_descriptors_exit_2_with_one_line() {
    let d = tmp("bad");
    let (p, _) = tensor(&d, &[8, 16], Dtype::U16, 2);
    let base = ["tma", "load", "--tensor", s(&p), "--dtype", "fp16"];
    let run = |extra: &[&str]| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend_from_slice(extra);
        tcrtl(&a)
    };
    assert_error(
        &run(&["--box", "6,4", "--coords", "0,0"]),
        "box_dims[0] x element size: 12 bytes",
    );
    assert_error(
        &run(&["--box", "8,300", "--coords", "0,0"]),
        "box_dims[1]: 300",
    );
    assert_error(
        &run(&["--box", "8,4", "--coords", "0,0", "--estride", "1,9"]),
        "element_strides[1]: 9",
    );
    assert_error(
        &run(&[
            "--box",
            "8,4",
            "--coords",
            "0,0",
            "--swizzle",
            "128B_ATOM_64B",
        ]),
        "128B_ATOM_64B is unsupported",
    );
    assert_error(
        &run(&["--box", "64,4", "--coords", "0,0", "--swizzle", "32B"]),
        "exceeds the 32-byte span",
    );
    assert_error(
        &run(&["--box", "8,4", "--coords", "0,0", "--gstride", "40"]),
        "must be a multiple of 16",
    );
    assert_error(
        &run(&["--box", "8,4", "--coords", "0,0", "--gdim", "16,9"]),
        "reads past",
    );
    assert_error(
        &run(&["--box", "8,4", "--coords", "0,0", "--smem-base", "64"]),
        "not 128-byte aligned",
    );
    assert_error(
        &run(&["--box", "8,4", "--coords", "0,0", "--mem-bandwidth", "0"]),
        "bytes_per_cycle",
    );
    // An inner start off a 16-byte boundary: a GPU traps (measured on an H200).
    assert_error(
        &run(&["--box", "8,4", "--coords", "3,0"]),
        "inner coordinate 3 starts the box 6 bytes in",
    );
    let out = tcrtl(&[
        "tma",
        "load",
        "--tensor",
        s(&p),
        "--dtype",
        "u16",
        "--box",
        "8,4",
        "--coords",
        "0,0",
        "--oob",
        "nan",
    ]);
    assert_error(&out, "nan requested for the integer type u16");
    let out = tcrtl(&[
        "tma",
        "load",
        "--tensor",
        s(&p),
        "--dtype",
        "fp32",
        "--box",
        "8,4",
        "--coords",
        "0,0",
    ]);
    assert_error(&out, "4-byte elements");
}

#[test]
fn text_output_and_vcd() {
    let d = tmp("text");
    let (p, _) = tensor(&d, &[8, 64], Dtype::U8, 1);
    let vcd = d.join("load.vcd");
    let out = tcrtl(&[
        "tma",
        "load",
        "--tensor",
        s(&p),
        "--dtype",
        "u8",
        "--box",
        "64,8",
        "--coords",
        "0,0",
        "--swizzle",
        "64B",
        "--vcd",
        s(&vcd),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("loaded 512 bytes"), "{text}");
    let wave = std::fs::read_to_string(&vcd).expect("vcd written");
    for sig in ["req_valid", "req_ready", "tx", "phase", "conflict"] {
        assert!(wave.contains(sig), "{sig} traced");
    }
}
