//! Reading a VCD back with `wellen` (an independent parser) for tests that check signals
//! cycle by cycle.

use std::collections::HashMap;
use std::path::Path;

use tensorcore_rtl::rtl::PERIOD;
use wellen::simple::Waveform;
use wellen::SignalRef;

/// A waveform with every signal loaded, looked up by full dotted name.
pub struct Waves {
    wave: Waveform,
    vars: HashMap<String, SignalRef>,
    times: Vec<u64>,
}

impl Waves {
    /// Reads `path` (panics with the parser's message if it cannot).
    pub fn read(path: &Path) -> Self {
        let mut wave = wellen::simple::read(path).expect("wellen reads the VCD");
        let h = wave.hierarchy();
        let mut vars = HashMap::new();
        for v in h.all_vars().map(|r| &h[r]) {
            vars.insert(v.full_name(h), v.signal_ref());
        }
        let refs: Vec<_> = vars.values().copied().collect();
        wave.load_signals(&refs);
        let times = wave.time_table().to_vec();
        Self { wave, vars, times }
    }

    /// True if the waveform declares `name`.
    pub fn has(&self, name: &str) -> bool {
        self.vars.contains_key(name)
    }

    /// The number of whole clock periods traced.
    pub fn cycles(&self) -> usize {
        (self.times.last().copied().unwrap_or(0) / PERIOD) as usize
    }

    /// `name`'s value at the start of `cycle`, as a bit string (MSB first).
    pub fn bits(&self, name: &str, cycle: usize) -> String {
        let ti = self
            .times
            .binary_search(&(cycle as u64 * PERIOD))
            .expect("cycle in trace");
        let r = *self
            .vars
            .get(name)
            .unwrap_or_else(|| panic!("{name} missing"));
        let sig = self.wave.get_signal(r).expect("signal loaded");
        let off = sig.get_offset(ti as u32).expect("value");
        sig.get_value_at(&off, 0).to_bit_string().expect("bits")
    }

    /// `name`'s value at the start of `cycle` as a number (`u64::MAX` if it has x or z bits
    /// or is wider than 64 bits).
    pub fn value(&self, name: &str, cycle: usize) -> u64 {
        u64::from_str_radix(&self.bits(name, cycle), 2).unwrap_or(u64::MAX)
    }
}

/// The `$var` width of every signal named `name` (any scope) in the VCD text `vcd`.
pub fn var_widths(vcd: &str, name: &str) -> Vec<u32> {
    vcd.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.first() == Some(&"$var") && f.len() > 4 && f[4] == name)
                .then(|| f[2].parse().expect("width"))
        })
        .collect()
}
