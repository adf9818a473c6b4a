//! Writes a short waveform of the demo design to `waves/demo.vcd` (+ `waves/demo.gtkw`), for
//! looking at in GTKWave or Surfer:
//! `cargo run --example rtl_demo_wave && gtkwave waves/demo.vcd waves/demo.gtkw`.
//! (The integer MAC mesh of lab 0 is a testbench: `tcrtl tb run mac_mesh`.)

use tensorcore_rtl::rtl::demo::Demo;
use tensorcore_rtl::rtl::{Result, Simulator, TraceConfig};

fn main() -> Result<()> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("waves");
    let _ = std::fs::create_dir_all(&dir);

    let cfg = TraceConfig::vcd(dir.join("demo.vcd"))
        .glob("lfsr")
        .glob("fifo");
    let mut sim = Simulator::with_trace(Demo::new("demo", 3)?, &cfg)?;
    sim.set_watchdog(100);
    sim.reset(2)?;
    sim.run(40)?;
    let (_, summary) = sim.finish()?;
    println!("{summary:?}");
    Ok(())
}
