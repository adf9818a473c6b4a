//! The memory port's split into role blocks moved its signals into child scopes
//! (`tensor_core.mem.producer.*`, `mem.consumer.*`, `mem.c_fetch.*`, `mem.d_store.*`,
//! `mem.arbiter.*`) and changed nothing else. [`ROLE_OF`] is the mapping, signal by signal
//! (`docs/waves.md`, "Memory path"). Two checks, read back with `wellen`:
//!
//! - always: every signal of the memory runs' new waveforms that sits in a role scope is in
//!   the mapping under that role, and no mapped signal is left directly in `mem`;
//! - with `TCRTL_OLD_WAVES=<dir>` holding the VCDs of the same runs written by the design
//!   before the split (`<dir>/gemm/<run>.vcd`, `<dir>/tb/<bench>.vcd`, as
//!   `tests/hw/wave_digests.rs` and `tcrtl tb run` write them): every signal of the old
//!   waveform, renamed by the mapping, exists in the new one with the same width and exactly
//!   the same value changes at the same times, and the new one declares nothing else.

use std::collections::HashMap;
use std::path::Path;

use crate::common::cli::{scratch, tcrtl, text};

/// Signals that moved from `mem` into a role scope: (leaf name, or a prefix ending in `_`
/// or a digit-free stem for numbered registers, role scope). Leaf names are unchanged.
const ROLE_OF: &[(&str, &str)] = &[
    ("producer_chunk", "producer"),
    ("producer_sub", "producer"),
    ("producer_part", "producer"),
    ("producer_c", "producer"),
    ("rd_tile", "consumer"),
    ("rd_step", "consumer"),
    ("released", "consumer"),
    ("rq_busy", "consumer"),
    ("rq_ops", "consumer"),
    ("got_ops", "consumer"),
    ("off_tile", "consumer"),
    ("off_step", "consumer"),
    ("held", "consumer"),
    ("hold_a_*", "consumer"),
    ("hold_b_*", "consumer"),
    ("hold_e_*", "consumer"),
    ("e_row_*", "consumer"),
    ("rq_cmask", "c_fetch"),
    ("got_cmask", "c_fetch"),
    ("cf_tile", "c_fetch"),
    ("cf_have", "c_fetch"),
    ("cf_asked", "c_fetch"),
    ("c_used", "c_fetch"),
    ("c_b*", "c_fetch"),
    ("producer_stores", "d_store"),
    ("d_claimed", "d_store"),
    ("d_rows_in", "d_store"),
    ("d_rows_written", "d_store"),
    ("dq_head", "d_store"),
    ("dq_count", "d_store"),
    ("dq_*", "d_store"),
    ("tma_cmd", "arbiter"),
];

/// The role a leaf of the `mem` scope moved to, if it moved.
fn role_of(leaf: &str) -> Option<&'static str> {
    ROLE_OF.iter().find_map(|&(pat, role)| {
        let hit = match pat.strip_suffix('*') {
            Some(stem) => {
                leaf.starts_with(stem)
                    && leaf[stem.len()..]
                        .chars()
                        .all(|c| c.is_ascii_digit() || c == '_' || c == 'r')
                    && leaf.len() > stem.len()
            }
            None => leaf == pat,
        };
        hit.then_some(role)
    })
}

/// The new full name of an old one: `<...>.mem.<leaf>` -> `<...>.mem.<role>.<leaf>` for a
/// moved leaf; anything else unchanged.
fn renamed(old: &str) -> String {
    if let Some(at) = old.rfind(".mem.") {
        let leaf = &old[at + 5..];
        if !leaf.contains('.') {
            if let Some(role) = role_of(leaf) {
                return format!("{}.mem.{role}.{leaf}", &old[..at]);
            }
        }
    }
    old.to_string()
}

/// Every declared signal: full name -> (reference, width).
fn vars(h: &wellen::Hierarchy) -> HashMap<String, (wellen::SignalRef, u32)> {
    h.all_vars()
        .map(|r| &h[r])
        .map(|v| (v.full_name(h), (v.signal_ref(), v.length(h).unwrap_or(0))))
        .collect()
}

/// The memory-path runs of `tests/hw/wave_digests.rs`: gemm runs (name, arguments).
const GEMM_RUNS: &[(&str, &[&str])] = &[
    (
        "tma_fp16_w1",
        &["--m", "8", "--n", "8", "--k", "32", "--memory", "tma"],
    ),
    (
        "tma_fp16_out_w4",
        &[
            "--m",
            "8",
            "--n",
            "8",
            "--k",
            "32",
            "--memory",
            "tma",
            "--width",
            "4",
            "--out-format",
            "fp16",
            "--mem-latency",
            "7",
        ],
    ),
    (
        "tma_s8_w4",
        &[
            "--m", "8", "--n", "8", "--k", "32", "--memory", "tma", "--format", "s8", "--width",
            "4",
        ],
    ),
    (
        "tma_sparse_fp16_w2",
        &[
            "--m", "8", "--n", "8", "--k", "64", "--memory", "tma", "--sparse", "--width", "2",
        ],
    ),
];

/// The testbenches whose waves hold port signals.
const TB_RUNS: &[&str] = &["tma_gemm_pipeline", "tma_sparse"];

/// Writes the new waveforms; returns (key, path) pairs (`gemm/<run>`, `tb/<bench>`).
fn new_waves(dir: &Path) -> Vec<(String, std::path::PathBuf)> {
    let mut out = Vec::new();
    for (name, args) in GEMM_RUNS {
        let vcd = dir.join(format!("{name}.vcd"));
        let mut all: Vec<&str> = vec!["gemm"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--vcd", vcd.to_str().unwrap()]);
        let o = tcrtl(&all);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", text(&o.stderr));
        out.push((format!("gemm/{name}"), vcd));
    }
    let tb = dir.join("tb");
    for bench in TB_RUNS {
        let o = tcrtl(&["tb", "run", bench, "--waves", tb.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{bench}: {}", text(&o.stderr));
        out.push((format!("tb/{bench}"), tb.join(format!("{bench}.vcd"))));
    }
    out
}

/// Checks the new waveform at `new` against the old one at `old`; returns the value changes
/// compared.
fn same_after_renaming(key: &str, old: &Path, new: &Path) -> usize {
    let mut wo = wellen::simple::read(old).unwrap_or_else(|e| panic!("{key}: old: {e}"));
    let mut wn = wellen::simple::read(new).unwrap_or_else(|e| panic!("{key}: new: {e}"));
    let (vo, vn) = (vars(wo.hierarchy()), vars(wn.hierarchy()));
    assert_eq!(vo.len(), vn.len(), "{key}: as many signals");
    let mut pairs = Vec::new();
    for (name, &(r, width)) in &vo {
        let to = renamed(name);
        let &(rn, wnew) = vn
            .get(&to)
            .unwrap_or_else(|| panic!("{key}: {name} -> {to} missing from the new waves"));
        assert_eq!(width, wnew, "{key}: {to} width");
        pairs.push((name.clone(), r, rn));
    }
    let refs_o: Vec<_> = pairs.iter().map(|p| p.1).collect();
    let refs_n: Vec<_> = pairs.iter().map(|p| p.2).collect();
    wo.load_signals(&refs_o);
    wn.load_signals(&refs_n);
    let (to, tn) = (wo.time_table().to_vec(), wn.time_table().to_vec());
    assert_eq!(to, tn, "{key}: the same time table");
    let mut compared = 0;
    for (name, r, rn) in &pairs {
        let (so, sn) = (wo.get_signal(*r).unwrap(), wn.get_signal(*rn).unwrap());
        let co: Vec<_> = so.iter_changes().collect();
        let cn: Vec<_> = sn.iter_changes().collect();
        assert_eq!(co.len(), cn.len(), "{key}: {name}: number of changes");
        for ((io, xo), (inew, xn)) in co.iter().zip(&cn) {
            assert_eq!(
                to[*io as usize], tn[*inew as usize],
                "{key}: {name}: change times"
            );
            assert!(
                xo == xn,
                "{key}: {name}: value at time {}",
                to[*io as usize]
            );
        }
        compared += co.len();
    }
    compared
}

#[test]
fn the_port_split_only_moved_signals_into_role_scopes() {
    let dir = scratch("mem_port_scopes", "new");
    let waves = new_waves(&dir);
    let old_dir = std::env::var_os("TCRTL_OLD_WAVES");
    let mut moved = 0;
    for (key, path) in &waves {
        let w = wellen::simple::read(path).unwrap_or_else(|e| panic!("{key}: {e}"));
        for name in vars(w.hierarchy()).keys() {
            let Some(at) = name.rfind(".mem.") else {
                continue;
            };
            let rest = &name[at + 5..];
            match rest.split_once('.') {
                // A role scope: its leaf is mapped to that role.
                Some((role, leaf))
                    if ["producer", "consumer", "c_fetch", "d_store", "arbiter"]
                        .contains(&role) =>
                {
                    assert_eq!(role_of(leaf), Some(role), "{key}: {name} is in the mapping");
                    moved += 1;
                }
                Some(_) => {}
                // Directly in `mem`: not a moved signal.
                None => assert_eq!(role_of(rest), None, "{key}: {name} left in mem"),
            }
        }
        if let Some(old) = &old_dir {
            let old = Path::new(old).join(format!("{key}.vcd"));
            let n = same_after_renaming(key, &old, path);
            assert!(n > 0, "{key}: value changes compared");
            eprintln!("{key}: {n} value changes identical after renaming");
        }
    }
    assert!(moved > 0, "the memory runs trace role scopes");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_mapping_moves_mem_leaves_only() {
    assert_eq!(
        renamed("tensor_core.mem.producer_chunk"),
        "tensor_core.mem.producer.producer_chunk"
    );
    assert_eq!(
        renamed("tensor_core.mem.c_b1_r3"),
        "tensor_core.mem.c_fetch.c_b1_r3"
    );
    assert_eq!(
        renamed("tensor_core.mem.dq_7"),
        "tensor_core.mem.d_store.dq_7"
    );
    assert_eq!(
        renamed("tensor_core.mem.hold_e_0"),
        "tensor_core.mem.consumer.hold_e_0"
    );
    assert_eq!(
        renamed("tensor_core.mem.tma_cmd"),
        "tensor_core.mem.arbiter.tma_cmd"
    );
    // Shared signals and the memory blocks stay.
    for keep in [
        "tensor_core.mem.rd_req",
        "tensor_core.mem.init_done",
        "tensor_core.mem.overlap_count",
        "tensor_core.mem.smem.rd_passes",
        "tensor_core.mem.tma.cmd_valid",
        "tensor_core.mem.cycle",
        "tensor_core.controller.take",
    ] {
        assert_eq!(renamed(keep), keep);
    }
}
