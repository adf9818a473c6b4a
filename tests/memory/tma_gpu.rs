//! Every TMA case measured on an H200 (data/tma-measurements/H200/tma_loads.txt), replayed
//! through the model: the driver's refusals against `TensorMap::validate`, the loads the GPU
//! trapped on against the engine's fault, and every load's shared-memory bytes (with the same
//! 0xa5 background), the bytes it wrote beyond the measured window, and its transaction count.

use std::collections::HashMap;
use tensorcore_rtl::hw::memory::box_load::{box_load, BoxSpec, HostTensor};
use tensorcore_rtl::hw::memory::{ElemType, MemParams, OobFill, Swizzle, TensorMap};

const SENTINEL: u8 = 0xA5;

/// Global byte `o` of the measured tensor (the capture program's formula).
fn gbyte(o: u64) -> u8 {
    ((o as u32).wrapping_mul(2_654_435_761) >> 13) as u8
}

fn list<T: std::str::FromStr>(s: &str) -> Vec<T> {
    if s == "-" {
        return Vec::new();
    }
    s.split(',')
        .map(|x| x.parse().ok().expect("a number"))
        .collect()
}

struct Case {
    line: usize,
    f: HashMap<String, String>,
}

impl Case {
    fn get(&self, k: &str) -> &str {
        self.f
            .get(k)
            .unwrap_or_else(|| panic!("line {}: no {k}", self.line))
    }
    fn dtype(&self) -> ElemType {
        ElemType::parse(self.get("dtype")).expect("a dtype the model names")
    }
    fn spec(&self) -> BoxSpec {
        BoxSpec {
            dtype: self.dtype(),
            box_dims: list(self.get("box")),
            coords: list(self.get("coords")),
            gdim: Some(list(self.get("gdim"))),
            gstride: Some(list(self.get("gstride"))),
            estride: Some(list(self.get("estride"))),
            swizzle: Swizzle::parse(self.get("swizzle")).expect("a swizzle"),
            oob_fill: if self.get("fill") == "nan" {
                OobFill::Nan
            } else {
                OobFill::Zero
            },
            smem_base: self.get("smem").parse().expect("smem"),
            smem_fill: SENTINEL,
        }
    }
    /// The map as the driver saw it (global address offset included).
    fn map(&self) -> TensorMap {
        let s = self.spec();
        let rank = s.box_dims.len();
        let gdim = s.gdim.clone().expect("gdim");
        let mut m = TensorMap::dense(s.dtype, 0, &gdim, &s.box_dims);
        m.global_address = self.get("gaddr").parse().expect("gaddr");
        for (i, &st) in s.gstride.as_ref().expect("gstride").iter().enumerate() {
            m.global_strides[i] = st;
        }
        for (i, &e) in s
            .estride
            .as_ref()
            .expect("estride")
            .iter()
            .enumerate()
            .take(rank)
        {
            m.element_strides[i] = e;
        }
        m.swizzle = s.swizzle;
        m.oob_fill = s.oob_fill;
        m
    }
    fn name(&self) -> String {
        format!("line {} (case {})", self.line, self.get("case"))
    }
}

/// The `case=` lines of a measurement file of data/tma-measurements/H200.
fn read_cases(file: &str) -> Vec<Case> {
    let path = format!(
        "{}/data/tma-measurements/H200/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("case="))
        .map(|(i, l)| Case {
            line: i + 1,
            f: l.split(' ')
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_string(), v.trim_matches('"').to_string()))
                .collect(),
        })
        .collect()
}

fn run(case: &Case) -> Result<tensorcore_rtl::hw::memory::box_load::BoxLoad, String> {
    let spec = case.spec();
    let es = spec.dtype.size() as usize;
    let words: Vec<u64> = (0..(1usize << 20) / es)
        .map(|i| {
            let mut w = [0u8; 8];
            for (b, x) in w.iter_mut().enumerate().take(es) {
                *x = gbyte((i * es + b) as u64);
            }
            u64::from_le_bytes(w)
        })
        .collect();
    let shape = [words.len()];
    let tensor = HostTensor {
        shape: &shape,
        words: &words,
        elem_bytes: es,
        dtype_name: "bytes",
        name: "the measured tensor",
    };
    let params = MemParams {
        smem_bytes: 64 * 1024,
        ..MemParams::default()
    };
    box_load(&spec, &tensor, params, || Ok(None))
}

#[test]
fn every_measured_case_is_reproduced() {
    let all = read_cases("tma_loads.txt");
    assert_eq!(all.len(), 120, "the file holds the 120 measured cases");
    let (mut refused, mut trapped, mut loaded) = (0, 0, 0);
    for case in &all {
        let name = case.name();
        let encode: i32 = case.get("encode").parse().expect("encode");
        let valid = case.map().validate();
        if encode != 0 {
            assert!(
                valid.is_err(),
                "{name}: the driver refused the map, the model accepts it"
            );
            refused += 1;
            continue;
        }
        assert!(
            valid.is_ok(),
            "{name}: the driver accepted the map: {valid:?}"
        );
        let got = run(case);
        if case.f.contains_key("error") {
            let e = got
                .err()
                .unwrap_or_else(|| panic!("{name}: the GPU trapped, the model ran"));
            assert!(e.contains("inner coordinate"), "{name}: {e}");
            trapped += 1;
            continue;
        }
        let load = got.unwrap_or_else(|e| panic!("{name}: {e}"));
        let es = case.dtype().size() as usize;
        let ours: Vec<u8> = load
            .slots
            .iter()
            .flat_map(|w| w.to_le_bytes()[..es].to_vec())
            .collect();
        let gpu: Vec<u8> = (0..case.get("bytes").len() / 2)
            .map(|i| u8::from_str_radix(&case.get("bytes")[2 * i..2 * i + 2], 16).expect("hex"))
            .collect();
        assert!(
            ours.len() >= gpu.len(),
            "{name}: the model's image is shorter"
        );
        assert_eq!(ours[..gpu.len()], gpu[..], "{name}: shared memory differs");
        let beyond = ours[gpu.len()..].iter().filter(|&&b| b != SENTINEL).count();
        assert_eq!(
            beyond.to_string(),
            case.get("outside"),
            "{name}: bytes written beyond the measured window"
        );
        // The count the barrier completed on: every case whose program expected the whole
        // rows (element stride 1 on dimension 0, or the full-row count) completed.
        let full_rows = case.get("estride").split(',').next() == Some("1")
            || case.f.contains_key("tx_full_inner");
        if full_rows {
            assert_eq!(case.get("wait"), "1", "{name}: the GPU's barrier completed");
            assert_eq!(
                load.tx_bytes.to_string(),
                case.get("tx"),
                "{name}: tx bytes"
            );
        }
        loaded += 1;
    }
    // The file's mix: 9 maps refused by the driver, 3 loads trapped, 108 loads run.
    assert_eq!((refused, trapped, loaded), (9, 3, 108));
}

/// Every TMA store measured on the H200 (data/tma-measurements/H200/tma_stores.txt), replayed
/// through the engine's store path: shared memory holds byte `i` = `(i * 7 + 3) mod 256`,
/// global memory `0xee`; after the store the tensor's bytes must equal the GPU's, and the
/// stores the GPU trapped on (an inner start off a 16-byte boundary, a negative coordinate)
/// must be refused.
#[test]
fn every_measured_store_is_reproduced() {
    use tensorcore_rtl::hw::memory::{run_script, MemScript, MemorySystem, Stim, TmaCmd, TmaOp};
    use tensorcore_rtl::rtl::Simulator;
    let all = read_cases("tma_stores.txt");
    assert_eq!(all.len(), 14, "the file holds the 14 measured stores");
    let (mut ran, mut trapped, mut chunk_tail) = (0, 0, 0);
    for case in &all {
        let name = case.name();
        let map = case.map();
        map.validate()
            .unwrap_or_else(|e| panic!("{name}: the driver accepted the map: {e}"));
        let rank = map.rank as usize;
        let extent = if rank == 1 {
            map.global_dims[0] * u64::from(map.dtype.size())
        } else {
            map.global_strides[rank - 2] * map.global_dims[rank - 1]
        };
        let params = MemParams {
            smem_bytes: 64 * 1024,
            ..MemParams::default()
        };
        let mut mem = MemorySystem::new(params, extent.div_ceil(16) * 16 + 64, 1).expect("builds");
        mem.host_write(0, &vec![0xEE; extent as usize]);
        let smem: Vec<u8> = (0..params.smem_bytes)
            .map(|i| (i.wrapping_mul(7).wrapping_add(3)) as u8)
            .collect();
        mem.smem_host_write(0, &smem);
        mem.set_descriptor(0, map).expect("valid descriptor");
        let mut coords = [0i32; 5];
        for (i, c) in list::<i32>(case.get("coords")).into_iter().enumerate() {
            coords[i] = c;
        }
        let store = TmaCmd {
            op: TmaOp::Store,
            desc: 0,
            coords,
            smem_addr: case.get("smem").parse().expect("smem"),
            mbar: 0,
        };
        let steps = vec![
            Stim {
                tma_cmd: Some(store),
                ..Stim::default()
            },
            Stim {
                wait_stores: true,
                ..Stim::default()
            },
        ];
        let top = MemScript::new(mem, steps).expect("script");
        let mut sim = Simulator::new(top).expect("sim");
        sim.reset(1).expect("reset");
        let r = run_script(&mut sim, 100_000);
        if case.f.contains_key("error") {
            let e = r
                .err()
                .unwrap_or_else(|| panic!("{name}: the GPU trapped, the model stored"));
            let text = e.to_string();
            assert!(
                text.contains("inner coordinate") || text.contains("negative coordinate"),
                "{name}: {text}"
            );
            trapped += 1;
            continue;
        }
        r.unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = sim.top().mem().host_read(0, extent as usize).to_vec();
        let hex = case.get("tensor");
        let want: Vec<u8> = (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex"))
            .collect();
        assert_eq!(got.len(), want.len(), "{name}: extent");
        // The one measured difference (docs/memory.md, "Checked on an H200"): past the end of
        // a row the H200 writes the 16-byte chunk holding the row's last element whole; the
        // model writes the in-bounds elements only. Every other byte must be equal.
        let es = u64::from(map.dtype.size());
        let (row_bytes, pitch) = (map.global_dims[0] * es, map.global_strides[0].max(1));
        let tail = row_bytes..row_bytes.div_ceil(16) * 16;
        for (at, (g, w)) in got.iter().zip(&want).enumerate() {
            if g == w {
                continue;
            }
            let in_tail = rank > 1 && tail.contains(&(at as u64 % pitch));
            assert!(
                in_tail && *g == 0xEE,
                "{name}: global byte {at}: model {g:#04x}, GPU {w:#04x}"
            );
            chunk_tail += 1;
        }
        ran += 1;
    }
    assert_eq!((ran, trapped), (11, 3));
    // Case 8's three in-bounds rows end 6 bytes before their 16-byte chunk does.
    assert_eq!(chunk_tail, 18, "bytes the GPU wrote past the rows' ends");
}
