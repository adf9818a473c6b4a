//! `tcrtl wave-filter`, driven the way GTKWave drives a translate filter process: started with
//! everything after the program name as one argument, one hex value written at a time, and
//! each answer read back before the next value is sent (so every line must be flushed).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use crate::common::cli::{assert_error, tcrtl};

#[test]
fn answers_each_line_at_once_as_gtkwave_asks() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tcrtl"))
        .arg("wave-filter fp16")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the filter");
    let mut input = child.stdin.take().expect("stdin");
    let mut output = BufReader::new(child.stdout.take().expect("stdout"));
    // binary16 by hand: 0x3C00 = 1, 0xC000 = -2, 0x3555 = 0.333251953125 (1 + 0x155/1024, / 4),
    // 0x7C00 = +Inf; two lanes 0x4200_3C00 = 3 (lane 1), 1 (lane 0).
    for (hex, want) in [
        ("3C00", "1.0"),
        ("C000", "-2.0"),
        ("3555", "0.33325195"),
        ("7C00", "inf"),
        ("42003C00", "1.0 | 3.0"),
        ("xxxx", "xxxx"),
    ] {
        writeln!(input, "{hex}").expect("write");
        input.flush().expect("flush");
        let mut line = String::new();
        output.read_line(&mut line).expect("read");
        assert_eq!(line.trim_end(), want, "for {hex}");
    }
    drop(input);
    assert!(child.wait().expect("wait").success());
}

#[test]
fn control_words_and_tags_are_decoded() {
    let run = |kind: &str, input: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tcrtl"))
            .args(["wave-filter", kind])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write");
        let out = child.wait_with_output().expect("wait");
        assert!(out.status.success());
        String::from_utf8(out.stdout).expect("utf-8")
    };
    // a_ctl: lanes 1 (bits 5:0), set 1 (bit 8), valid (bit 9), fire (bit 7) = 0x381.
    assert_eq!(run("ctl", "381\n000\n"), "n=1 valid set1 fire\n-\n");
    // d_tag: valid, row 3 (bits 2:1), tile 2 (bits 31:8) = 0x207.
    assert_eq!(run("tag", "0000000000000207\n"), "tile 2 row 3\n");
}

/// The product and block-sum kinds through the process, started as GTKWave starts them (one
/// argument). The words are laid out by hand from the stage-1 register's encoding
/// (docs/waves.md: `sig` [23:0], `exp_sum + 2048` [35:24], `frac_bits` [41:36], class [43:42]
/// with 1 = finite, sign [44], invalid [45]): 1.5 x -2.5 is sig 0x600 x 0x500 = 0x1E0000,
/// exponent sum 0 + 1 (0x801 biased), 20 fraction bits, finite, negative.
#[test]
fn products_and_block_sums_are_decoded_through_the_process() {
    let run = |kind: &str, input: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tcrtl"))
            .arg(format!("wave-filter {kind}"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write");
        let out = child.wait_with_output().expect("wait");
        assert!(out.status.success());
        String::from_utf8(out.stdout).expect("utf-8")
    };
    // s1_prod of a w = 2 PE (lane 1: 1 x 1, lane 0: 1.5 x -2.5), a 46-bit gather_<k> word,
    // an empty lane.
    assert_eq!(
        run(
            "prod",
            "000005480010000000001548011E0000\n1548011E0000\n0000000000000000\n"
        ),
        "-3.75 (- e=1 sig=0x1e0000 f=20) | 1 (+ e=0 sig=0x100000 f=20)\n\
         -3.75 (- e=1 sig=0x1e0000 f=20)\n-\n"
    );
    // Integer lanes: -128 x 255 = -32640 (0x18080 in 17 bits), 127 x 127 = 16129 (0x3F01).
    assert_eq!(
        run("iprod", "00000000000180800000000000003F01\n"),
        "16129 | -32640\n"
    );
    // blk_sum, 72 bits, LSB 2^-32: -15.25 and 0.5.
    assert_eq!(
        run("blksum", "FFFFFFFFF0C0000000\n000000000080000000\n"),
        "-15.25 (-65498251264 x 2^-32)\n0.5 (2147483648 x 2^-32)\n"
    );
}

/// The save files name the product filters: `iprod` for an integer core's `s1_prod`, `prod`
/// for a floating-point one's and for the NVIDIA block buffer `gather_<k>` (Volta, n = 4 on
/// w = 1 PEs).
#[test]
fn save_files_name_the_product_filters() {
    let dir = crate::common::cli::scratch("wave-filter", "gtkw");
    let p = |f: &str| crate::common::cli::p(&dir, f);
    let base = ["gemm", "--m", "4", "--n", "4", "--k", "8", "--vcd"];
    let int = tcrtl(&[&base[..], &[p("i.vcd").as_str(), "--format", "s8"]].concat());
    assert!(
        int.status.success(),
        "{}",
        crate::common::cli::text(&int.stderr)
    );
    let volta = [
        p("v.vcd"),
        "--acc".into(),
        "nvidia".into(),
        "--preset".into(),
        "volta".into(),
    ];
    let volta: Vec<&str> = volta.iter().map(String::as_str).collect();
    let nv = tcrtl(&[&base[..], &volta[..]].concat());
    assert!(
        nv.status.success(),
        "{}",
        crate::common::cli::text(&nv.stderr)
    );
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect("save file");
    let filtered = |gtkw: &str, kind: &str, signal: &str| {
        let want = format!(" tcrtl wave-filter {kind}\n{signal}\n");
        assert!(gtkw.contains(&want), "{want:?} not in\n{gtkw}");
    };
    let (i, v) = (read("i.gtkw"), read("v.gtkw"));
    filtered(&i, "iprod", "tensor_core.mesh.pe_0_0.s1_prod[63:0]");
    filtered(&v, "prod", "tensor_core.mesh.pe_0_0.s1_prod[63:0]");
    filtered(&v, "prod", "tensor_core.mesh.pe_3_3.gather_2[45:0]");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unknown_kind_is_a_one_line_error() {
    assert_error(
        &tcrtl(&["wave-filter", "fp99"]),
        "unknown filter kind 'fp99'",
    );
}

/// A line that is not UTF-8 (GTKWave passes whatever the waveform holds) gets an answer line
/// and the filter goes on: it must not exit at the first such byte, which would end GTKWave's
/// filter process for the rest of the session.
#[test]
fn a_line_that_is_not_utf8_is_answered_and_the_filter_goes_on() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tcrtl"))
        .args(["wave-filter", "ctl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"381\n\xff\xfe\x80\n000\n")
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "{:?}", out.status);
    let lines: Vec<&[u8]> = out.stdout.split(|&b| b == b'\n').collect();
    // Three answers (and the empty piece after the last newline).
    assert_eq!(lines.len(), 4, "{:?}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(lines[0], b"n=1 valid set1 fire");
    assert_eq!(lines[2], b"-");
}
