//! The golden trace of lab 0's MAC mesh: every cell's `a`, `b` and `acc` registers in every
//! cycle, from the model's `MacMesh<4>` (the `mac_mesh` testbench's design), for grading a
//! Verilog `mac_mesh` recorded by `testbenches/verilog/tb/tb_mac_mesh.v`.
//!
//! Cycle numbering follows the testbenches (`docs/course/interfaces.md`): the model is reset
//! for one cycle (the edge that ends cycle 0), and cycle `c` is the state after `c` clock
//! edges, recorded for `c = 1 ..= cycles`. A record is one 64-bit word, `a` (16 bits) | `b`
//! (16) | `acc` (32), cycle-major, then the cells row-major (`cells.hex`).

use crate::io::memh::write_memh_with_header;
use crate::rtl::Simulator;
use crate::tb::mac_mesh::MacMesh;
use serde_json::json;
use std::path::Path;

/// The largest number of cycles a trace may hold (the testbench's memory).
pub const MAX_CYCLES: usize = 4096;

/// Cells of the mesh.
pub const CELLS: usize = 16;

/// The mesh's registers in cycles 1 ..= `cycles`: one `(a, b, acc)` packed word per cell
/// and cycle, as in `cells.hex`.
pub fn trace(cycles: usize) -> Result<Vec<u64>, String> {
    if !(1..=MAX_CYCLES).contains(&cycles) {
        return Err(format!("--cycles {cycles}: expected 1 to {MAX_CYCLES}"));
    }
    let mesh = MacMesh::<4>::new().map_err(|e| e.to_string())?;
    let mut sim = Simulator::new(mesh).map_err(|e| e.to_string())?;
    sim.reset(1).map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(cycles * CELLS);
    for c in 1..=cycles {
        for r in 0..4 {
            for col in 0..4 {
                let (a, b, acc) = sim.top().cell(r, col);
                out.push(pack(a, b, acc));
            }
        }
        if c < cycles {
            sim.step().map_err(|e| e.to_string())?;
        }
    }
    Ok(out)
}

/// One record: `a` | `b` | `acc`.
pub fn pack(a: u16, b: u16, acc: u32) -> u64 {
    u64::from(a) << 48 | u64::from(b) << 32 | u64::from(acc)
}

/// The fields `(a, b, acc)` of a record.
pub fn unpack(w: u64) -> (u16, u16, u32) {
    ((w >> 48) as u16, (w >> 32) as u16, w as u32)
}

/// Writes `cells.hex` and `manifest.json` (`task`: `mac_mesh`, `cycles`) into `dir`
/// (created if missing).
pub fn write(dir: &Path, cycles: usize) -> Result<(), String> {
    let words = trace(cycles)?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let header = [
        format!(
            "tcrtl golden MAC mesh trace cells.hex: {cycles} cycles x 16 cells, 64-bit records"
        ),
        "record: a (16) | b (16) | acc (32); order: cycle 1.., row, col".to_string(),
    ];
    let path = dir.join("cells.hex");
    write_memh_with_header(&path, &header, &words, 64)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let manifest = json!({
        "task": "mac_mesh",
        "generator": "tcrtl course mac-golden",
        "cycles": cycles,
        "files": [{
            "file": "cells.hex", "bits": 64, "records": words.len(),
            "layout": "a (16) | b (16) | acc (32)", "order": "cycle, row, col",
        }],
    });
    let path = dir.join("manifest.json");
    std::fs::write(&path, format!("{manifest:#}\n")).map_err(|e| format!("{}: {e}", path.display()))
}
