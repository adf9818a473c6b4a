//! Power in the waves (`--energy` beside `--vcd`): the same charges as the estimate, cycle by
//! cycle, as a [`crate::rtl::PowerModel`] the tracer evaluates. Every block of the estimate
//! becomes a real-valued signal `power.<block>` (watts at the clock), and `power.total` their
//! sum. Toggles are charged as the estimate charges them; global memory by the growth of the
//! memory system's byte counters (`mem.gmem.bytes_read`, `bytes_written`), the TMA by its
//! request counter (`mem.gmem.requests`), shared memory by the TMA's landing writes
//! (`mem.tma.tx_bytes`). The core's operand reads from shared memory, which the estimate
//! counts from the problem's shape, have no counter in the design and are not in the waves.

use super::estimate::{
    block_index, blocks_of, toggle_blocks, toggle_energies, AccKind, MulKind, BLOCKS,
};
use super::table::Tech;
use crate::hw::Dataflow;
use crate::rtl::{Charge, PowerModel};
use crate::rtl::{SignalInfo, SignalKind};

/// The power model of a run: its technology, datapath and clock.
#[derive(Debug, Clone)]
pub struct PowerWeights {
    /// The energy table.
    pub tech: Tech,
    /// What the multipliers multiply.
    pub mul: MulKind,
    /// Storage bits of an A and a B element.
    pub operand_bits: (u32, u32),
    /// The accumulator.
    pub acc: AccKind,
    /// Shared memory's capacity in bytes (0 without the memory path).
    pub smem_capacity: u64,
    /// The clock in GHz.
    pub clock_ghz: f64,
    /// The core (its arithmetic inputs and blocks, as the estimate's).
    pub dataflow: Dataflow,
}

impl PowerModel for PowerWeights {
    fn blocks(&self) -> Vec<String> {
        blocks_of(self.dataflow)
            .iter()
            .map(|&i| BLOCKS[i].to_string())
            .collect()
    }

    fn charges(&self, table: &[SignalInfo]) -> Vec<Vec<Charge>> {
        let product_bits = table
            .iter()
            .find(|s| s.name == "s1_prod" && s.path().contains(".mesh.pe_"))
            .map_or(32, |s| s.width);
        let each = toggle_energies(
            &self.tech,
            self.mul,
            self.operand_bits,
            self.acc,
            product_bits,
        );
        let smem_byte = self.tech.sram_read64_at(self.smem_capacity as f64) / 8.0;
        // Each block's place among the power signals (past the end: not this core's).
        let order = blocks_of(self.dataflow);
        let mut place = [usize::MAX; BLOCKS.len()];
        for (at, &i) in order.iter().enumerate() {
            place[i] = at;
        }
        table
            .iter()
            .map(|s| {
                let path = s.path();
                let mut charges: Vec<Charge> =
                    toggle_blocks(&path, s.kind == SignalKind::Reg, self.dataflow)
                        .map(|block| Charge::Toggle {
                            block: place[block],
                            pj: each[block],
                        })
                        .collect();
                let counter = match path.rsplit_once(".mem.").map(|(_, tail)| tail) {
                    Some("gmem.bytes_read" | "gmem.bytes_written") => {
                        Some((block_index::GLOBAL_MEMORY, self.tech.dram_byte))
                    }
                    Some("gmem.requests") => Some((block_index::TMA, self.tech.tma_request)),
                    Some("tma.tx_bytes") => Some((block_index::SHARED_MEMORY, smem_byte)),
                    _ => None,
                };
                if let Some((block, pj)) = counter {
                    charges.push(Charge::Increase {
                        block: place[block],
                        pj,
                    });
                }
                charges
            })
            .collect()
    }

    fn clock_ghz(&self) -> f64 {
        self.clock_ghz
    }
}
