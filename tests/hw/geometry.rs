//! The array's geometry is a value: the blocks that size the datapath take rows and columns
//! from the configuration, never from the default-geometry constants `ROWS`/`COLS` (which
//! survive only where the default is defined), and the row-index fields of the traced words
//! widen with the rows while keeping the 4 x 4 layout. Run alone with
//! `cargo test --test hw geometry::`.

use std::path::Path;

use tensorcore_rtl::hw::controller::{index_bits, ShiftCmd};
use tensorcore_rtl::hw::core::DTag;

/// The files that build or run the array: none may name `ROWS` or `COLS` in its code.
const SIZED_BY_THE_CONFIGURATION: &[&str] = &[
    "src/hw/tensor_core.rs",
    "src/hw/controller.rs",
    "src/hw/extras.rs",
    "src/hw/feeder.rs",
    "src/hw/sparse_feeder.rs",
    "src/hw/mx_feeder.rs",
    "src/hw/port.rs",
    "src/hw/mesh.rs",
    "src/hw/skew.rs",
    "src/hw/mem_port/mod.rs",
    "src/hw/mem_port/layout.rs",
    "src/hw/mem_port/consumer.rs",
    "src/hw/mem_port/producer.rs",
    "src/hw/mem_port/c_fetch.rs",
    "src/hw/mem_port/d_store.rs",
    "src/hw/mem_port/arbiter.rs",
    "src/gemm/clocked.rs",
    "src/gemm/memory.rs",
    "src/gemm/roofline.rs",
    "src/tb/mod.rs",
    "src/tb/sparse.rs",
];

/// The code of a file: line comments dropped, and everything from the first `#[cfg(test)]`
/// on.
fn code(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        out.push_str(line.find("//").map_or(line, |i| &line[..i]));
        out.push('\n');
    }
    out
}

/// The identifiers of `code` (maximal runs of letters, digits and underscores).
fn identifiers(code: &str) -> impl Iterator<Item = &str> {
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

#[test]
fn no_default_geometry_constant_sizes_the_array() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for file in SIZED_BY_THE_CONFIGURATION {
        let text =
            std::fs::read_to_string(root.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let code = code(&text);
        for name in identifiers(&code).filter(|w| *w == "ROWS" || *w == "COLS") {
            found.push(format!("{file}: {name}"));
        }
    }
    assert!(
        found.is_empty(),
        "the default geometry named in:\n{}",
        found.join("\n")
    );
}

/// Nothing outside the schedule's own module builds a schedule on the default array
/// (`Schedule::new`): every runner takes the array from its configuration
/// (`Schedule::for_core`), so a sparse or MX run on an 8 x 8 core counts 8 x 8 cycles.
#[test]
fn every_schedule_in_the_library_takes_the_configured_array() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    let mut stack = vec![root.join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("src readable") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && !path.ends_with("src/hw/schedule.rs")
            {
                let text = std::fs::read_to_string(&path).expect("readable");
                if code(&text).contains("Schedule::new(") {
                    found.push(path.display().to_string());
                }
            }
        }
    }
    assert!(found.is_empty(), "Schedule::new in:\n{}", found.join("\n"));
}

/// The check above sees a constant in code and not in a comment (so a hit cannot hide).
#[test]
fn the_scan_finds_code_and_skips_comments() {
    let text = "let r = ROWS; // COLS\n/// COLS\nlet rows = MY_ROWS;\n#[cfg(test)]\nCOLS\n";
    let c = code(text);
    let hits: Vec<&str> = identifiers(&c)
        .filter(|w| *w == "ROWS" || *w == "COLS")
        .collect();
    assert_eq!(hits, ["ROWS"]);
}

/// `index_bits(n)` is the width of an index below `n`: the least `b >= 1` with `2^b >= n`.
#[test]
fn index_bits_is_ceil_log2() {
    for n in 1..=300usize {
        let want = (1u32..).find(|&b| (1usize << b) >= n).expect("a width");
        assert_eq!(index_bits(n), want, "n = {n}");
    }
}

/// On the 4 x 4 array the row fields are 2 bits and the words keep their documented layout;
/// on taller arrays the fields widen and every field still round-trips.
#[test]
fn row_fields_widen_with_the_rows() {
    assert_eq!(index_bits(4), 2);
    let cmd = ShiftCmd {
        en: true,
        set: true,
        c_valid: false,
        d_valid: true,
        x: 3,
        last: true,
        c_tile: 0x12_3456,
        d_tile: 0xAB_CDEF,
    };
    // The 4 x 4 layout: x at 5:4, last at 6, c_tile from 8, d_tile from 32.
    let w = 1 | 1 << 1 | 1 << 3 | 3 << 4 | 1 << 6 | 0x12_3456 << 8 | 0xAB_CDEFu64 << 32;
    assert_eq!(cmd.pack(2), w);
    let tag = DTag {
        valid: true,
        row: 3,
        last: true,
        tile: 0xAB_CDEF,
    };
    assert_eq!(tag.pack(2), 1 | 3 << 1 | 1 << 3 | 0xAB_CDEF << 8);
    for rows in [2usize, 4, 5, 8, 16, 32, 64] {
        let bits = index_bits(rows);
        let x = rows - 1;
        let c = ShiftCmd { x, ..cmd };
        assert_eq!(ShiftCmd::unpack(c.pack(bits), bits), c, "{rows} rows");
        let t = DTag { row: x, ..tag };
        assert_eq!(DTag::unpack(t.pack(bits), bits), t, "{rows} rows");
    }
}
