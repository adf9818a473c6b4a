//! Every lab of the course (`docs/course/lab0.md` .. `lab9.md`), run as written: the shell
//! commands of each ```` ```sh ```` block, in order, in one `bash` per lab, with `tcrtl` the
//! built binary and `gtkwave` a no-op. They run in a scratch copy of a fresh clone (the
//! repository's `data/`, `testbenches/` and `scripts/` linked in, an empty `waves/`) and every
//! `/tmp/` of the text becomes the scratch directory's own `tmp/`, which starts empty, so a lab
//! that forgets a `mkdir` fails here as it would for a student.
//!
//! Every command must exit 0 unless [`FAILS`] says otherwise, and every number the lab quotes
//! from an output is in [`QUOTES`]: the text around it in the lab and where it is printed;
//! the numbers it reads in the waveforms its commands write are in [`WAVE_QUOTES`] (signal,
//! cycle, and the value as the save file shows it, filters included). The lab's save files in
//! `docs/course/gtkw/` are checked against those waveforms too.
//! A lab edit that changes a command or a number, or a model change that changes an output,
//! fails here. [`EXTRAS`] are the few commands the questions ask for in prose.
//!
//! The two error sweeps of lab 7 take about 25 s in a debug build, lab 9's four large GEMMs
//! about 12 s: they (and the numbers they print) run only with `TCRTL_COURSE_LONG=1`. Needs `bash`, `python3` with numpy (labs 6, 7)
//! and Icarus Verilog (labs 1 and 5), as the labs do.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::cli::scratch;

/// A number a lab quotes from the output of one of its commands.
struct Quote {
    lab: u8,
    /// The command (a unique part of it, or all of it without its comment).
    cmd: &'static str,
    /// The number as the lab writes it; `~` first: the lab rounds it (to the place of its last
    /// nonzero digit: `~9,400` accepts 9,350 to 9,449).
    number: &'static str,
    /// Where the lab says it: text of the lab with `{}` where the number stands.
    text: &'static str,
    /// Where the command prints it: text of the output with `{}` where the number stands (the
    /// printed number may have more decimals than the quoted one, which must be it rounded),
    /// or, without `{}`, text that must be printed as it is.
    out: &'static str,
}

const fn q(
    lab: u8,
    cmd: &'static str,
    number: &'static str,
    text: &'static str,
    out: &'static str,
) -> Quote {
    Quote {
        lab,
        cmd,
        number,
        text,
        out,
    }
}

/// Every number the labs quote from their commands' outputs.
#[rustfmt::skip]
const QUOTES: &[Quote] = &[
    // Lab 1: the cancellation case, ieee against fused, the skeleton's grade.
    q(1, "--c 0.5 --a 1,-1,0.5 --b 1,1,-1", "0x00000000", "--b 1,1,-1 # {}", "bits: {} (fp32)"),
    q(1, "tcrtl dot --format fp16 --acc ieee --c 0x3f800000 --a 0x0c00,0x0c00 --b 0x0c00,0x0c00",
      "0x3F800000", "the last two commands above give `{}` (ieee)", "bits: {} (fp32)"),
    q(1, "--acc fused --width 2 --c 0x3f800000", "0x3F800001",
      "and `{}` (fused, w = 2)", "bits: {} (fp32)"),
    q(1, "vvp -n /tmp/g/student.vvp", "39",
      "the skeleton fails all {} elements", "result 0 passed, {} failed"),
    q(1, "tcrtl grade --golden /tmp/g --student /tmp/s", "39",
      "the skeleton fails all {} elements", "grade: {} compared (13 x 3), 39 mismatches"),
    q(1, "tcrtl grade --golden /tmp/g --student /tmp/s", "663",
      "and all {} steps", "steps: {} compared, 663 mismatches"),
    // Lab 2: one tile's cycles and D.
    q(2, "--memh /tmp/lab2 --vcd waves/lab2_mesh.vcd", "19",
      "the run takes {} cycles", "{} cycles, 1 tile"),
    q(2, "--memh /tmp/lab2 --vcd waves/lab2_mesh.vcd", "21.1",
      "why is the utilization {}%?", "utilization {}%"),
    q(2, "--pattern iota --json", "19", "the run takes {} cycles", "\"cycles\":{},"),
    q(2, "grep -v '^//' /tmp/lab2/d.hex", "42080000",
      "= 34 (`{}`, the first word of `d.hex`)", "^42080000 42300000"),
    q(2, "grep -v '^//' /tmp/lab2/d.hex", "43200000",
      "= 160 (`{}`, the last word)", "43060000 43200000$"),
    q(2, "tcrtl gemm --m 5 --n 4 --k 4 --pattern iota", "25",
      "3 + 6 + 11 + 5 = {} cycles", "{} cycles, 2 tiles"),
    q(2, "tcrtl gemm --m 8 --n 8 --k 16 --pattern iota", "79",
      "3 + 3 x 16 + 23 + 5 = {} cycles (81.0%)", "{} cycles, 4 tiles"),
    q(2, "tcrtl gemm --m 8 --n 8 --k 16 --pattern iota", "81.0",
      "8 x 8 x 16 reaches {}%", "utilization {}%"),
    // Lab 3: the cycle formula against runs.
    q(3, "for k in 4 8 16 64", "37",
      "the runs: {}, 47, 79, 271 cycles", "8 x 8 x 4 (fp16 x fp16, ieee, w = 1): {} cycles"),
    q(3, "for k in 4 8 16 64", "47",
      "the runs: 37, {}, 79, 271 cycles", "8 x 8 x 8 (fp16 x fp16, ieee, w = 1): {} cycles"),
    q(3, "for k in 4 8 16 64", "79",
      "the runs: 37, 47, {}, 271 cycles", "8 x 8 x 16 (fp16 x fp16, ieee, w = 1): {} cycles"),
    q(3, "for k in 4 8 16 64", "271",
      "the runs: 37, 47, 79, {} cycles", "8 x 8 x 64 (fp16 x fp16, ieee, w = 1): {} cycles"),
    q(3, "--pattern ones --vcd waves/lab3_tiles.vcd", "37",
      "k = 4: t = 4, p = 6, tile 11: 3 + 3 x 6 + 11 + 5 = {}.", "{} cycles, 4 tiles"),
    q(3, "tcrtl gemm --m 8 --n 8 --k 16 --pattern ones --width 4", "37",
      "so the run is the k = 4 one: {} cycles", "{} cycles, 4 tiles"),
    q(3, "tcrtl gemm --m 8 --n 8 --k 16 --pattern ones --width 4", "43.2",
      "so it drops to {}%", "utilization {}%"),
    q(3, "tcrtl gemm --m 16 --n 16 --k 64 --pattern ones --width 4", "271",
      "16 x 16 x 64 w = 4 ({} cycles, ideal 256)", "{} cycles, 16 tiles"),
    q(3, "tcrtl gemm --m 16 --n 16 --k 64 --pattern ones --width 4", "94",
      "e.g. {}% for 16 x 16 x 64", "utilization {}%"),
    // Lab 4: the four modes on c = 1 + 4 x 2^-24, Volta and Ampere on 1 - 2^-24, the grades.
    q(4, "tcrtl dot --format fp16 --acc ieee $ARGS", "0x3F800000",
      "the first four commands give `{}`, `0x3f800002`, `0x3f800000`, `0x3f800002`",
      "bits: {} (fp32)"),
    q(4, "tcrtl dot --format fp16 --acc fused --width 4 $ARGS", "0x3F800002",
      "the first four commands give `0x3f800000`, `{}`, `0x3f800000`, `0x3f800002`",
      "bits: {} (fp32)"),
    q(4, "tcrtl dot --format fp16 --acc nvidia --preset volta $ARGS", "0x3F800000",
      "the first four commands give `0x3f800000`, `0x3f800002`, `{}`, `0x3f800002`",
      "bits: {} (fp32)"),
    q(4, "tcrtl dot --format fp16 --acc nvidia --preset ampere $ARGS", "0x3F800002",
      "the first four commands give `0x3f800000`, `0x3f800002`, `0x3f800000`, `{}`",
      "bits: {} (fp32)"),
    q(4, "tcrtl dot --format fp16 --acc nvidia --preset volta --c 0x3f800000 --a 0x8c00 --b 0x0c00",
      "1", "volta returns exactly {} for `1 - 2^-24`", "value: 1e0 ({})"),
    q(4, "tcrtl dot --format fp16 --acc nvidia --preset ampere --c 0x3f800000 --a 0x8c00 --b 0x0c00",
      "0x3F7FFFFF", "ampere returns `{}`", "bits: {} (fp32)"),
    q(4, "--preset volta --c 0x3f800000 --a 0x8c00 --b 0x0c00 --explain", "2^-23",
      "(`--explain`: `grid lsb {}`", "grid lsb {};"),
    q(4, "--preset volta --c 0x3f800000 --a 0x8c00 --b 0x0c00 --explain", "2^-44",
      "the product `0x100000 x {}`", "= -0x100000 x {} (exp_sum -24"),
    q(4, "--preset volta --c 0x3f800000 --a 0x8c00 --b 0x0c00 --explain", "21",
      "shifts right by {}, `kept 0, dropped 0x100000`",
      "lane 0: shift {}, kept 0, dropped 0x100000"),
    q(4, "tcrtl dot --format fp16 --acc ieee $ARGS --explain", "1",
      "# guard {}, sticky 0: a tie, kept even", "guard {}, sticky 0, round_inc 0"),
    q(4, "--student /tmp/l4/ieee --no-steps", "28",
      "give {}, 45 and 31 mismatching elements of 64", "64 compared (8 x 8), {} mismatches"),
    q(4, "--student /tmp/l4/volta --no-steps", "45",
      "give 28, {} and 31 mismatching elements of 64", "64 compared (8 x 8), {} mismatches"),
    q(4, "--student /tmp/l4/hopper --no-steps", "31",
      "give 28, 45 and {} mismatching elements of 64", "64 compared (8 x 8), {} mismatches"),
    q(4, "--student /tmp/l4/ieee --no-steps", "7",
      "(at most {}, 55 and 5 ulps over all 64", "max error: {} ulps"),
    q(4, "--student /tmp/l4/volta --no-steps", "55",
      "(at most 7, {} and 5 ulps over all 64", "max error: {} ulps"),
    q(4, "--student /tmp/l4/hopper --no-steps", "5",
      "(at most 7, 55 and {} ulps over all 64", "max error: {} ulps"),
    q(4, "--format fp16 --preset hopper", "300",
      "with `--preset hopper` all {} match", "300/{} rows match"),
    q(4, "--format fp16 --preset ampere --show 1", "183/300",
      "`{} rows match (format fp16, output fp32, preset ampere, k = 16, n = 8)`",
      "183/300 rows match (format fp16, output fp32, preset ampere, k = 16, n = 8)"),
    // Lab 5: sparse against dense cycles.
    q(5, "--sparse --m 8 --n 8 --k 64 --json", "143",
      "8 x 8 x 64 sparse takes {} cycles against 271 dense", "\"cycles\":{},"),
    q(5, "--sparse --m 8 --n 8 --k 64 --json", "271",
      "8 x 8 x 64 sparse takes 143 cycles against {} dense", "\"dense_cycles\":{},"),
    q(5, "--sparse --m 8 --n 8 --k 64 --json", "0.53",
      "why is the ratio {} and not 0.5?", "\"cycles_ratio\":{},"),
    q(5, "--sparse --m 8 --n 8 --k 64 --json", "0.5",
      "(`compute_ratio` {}: 128 vs 256 cycles)", "\"compute_ratio\":{},"),
    q(5, "--sparse --m 8 --n 8 --k 64 --json", "128",
      "(`compute_ratio` 0.5: {} vs 256 cycles)", "\"compute_cycles\":{},"),
    q(5, "--sparse --m 8 --n 8 --k 64 --json", "256",
      "(`compute_ratio` 0.5: 128 vs {} cycles)", "\"dense_compute_cycles\":{},"),
    q(5, "--sparse --m 4 --n 4 --k 16 --json", "23",
      "and for 4 x 4 x 16 ({} vs 31)?", "\"cycles\":{},"),
    q(5, "--sparse --m 4 --n 4 --k 16 --json", "31",
      "and for 4 x 4 x 16 (23 vs {})?", "\"dense_cycles\":{},"),
    q(5, "--sparse --m 4 --n 4 --k 16 --json", "0.74",
      "23 vs 31 cycles ({}): one tile", "\"cycles_ratio\":{},"),
    // Lab 6: one TMA load, the GEMM through memory.
    q(6, "tcrtl tma load --tensor t.npy", "1024",
      "# ({} tx bytes, 288 out-of-bounds elements, 0 bank conflicts)", "\"tx_bytes\":{},"),
    q(6, "tcrtl tma load --tensor t.npy", "288",
      "# (1024 tx bytes, {} out-of-bounds elements, 0 bank conflicts)", "\"oob_elements\":{},"),
    q(6, "tcrtl tma load --tensor t.npy", "0",
      "# (1024 tx bytes, 288 out-of-bounds elements, {} bank conflicts)", "\"bank_conflicts\":{},"),
    q(6, "--mem-latency 500 --mem-bandwidth 16 --json", "~9,400",
      "give about {} cycles (swizzled)", "\"cycles\":{},"),
    q(6, "--mem-latency 500 --mem-bandwidth 16 --no-swizzle --json", "~67,000",
      "(swizzled), {} (`--no-swizzle`)", "\"cycles\":{},"),
    q(6, "--mem-latency 500 --mem-bandwidth 16 --stages 2 --json", "~38,700",
      "and {} (`--stages 2`)", "\"cycles\":{},"),
    q(6, "--mem-latency 500 --mem-bandwidth 16 --json", "11",
      "`ceil((500 + 32) / 64) + 2 = {}`", "\"stages\":{},"),
    // Lab 7: FP16 accumulation, the integer MMA, MXFP8 and NVFP4 through the core, one block.
    q(7, "--acc ieee --c 2048 --a $ONES --b $ONES", "0x45020000",
      "commands 1 print `{} (fp32)`", "bits: {} (fp32)"),
    q(7, "--acc ieee --c 2048 --a $ONES --b $ONES", "2080", "`2.08e3 ({})`", "value: 2.08e3 ({})"),
    q(7, "--acc ieee --out-format fp16 --c 2048", "0x6800",
      "`{} (fp16)` `2.048e3 (2048)` with `inexact`",
      "bits: {} (fp16) value: 2.048e3 (2048) flags: inexact"),
    q(7, "--acc all --out-format fp16", "0x6800",
      "the `--acc all` table: `ieee` `{}`", "ieee - rne {} "),
    q(7, "--acc all --out-format fp16", "0x6810", "`fused` and `exact` `{}`", "fused - rne {} "),
    q(7, "--acc all --out-format fp16", "0x6810", "`fused` and `exact` `{}`", "exact - rne {} "),
    q(7, "--acc all --out-format fp16", "8",
      "`volta` ({} steps)", "volta gpu 0x6810 2.08e3 {} none"),
    q(7, "--acc all --out-format fp16", "4",
      "`ampere`, `ada` ({})", "ampere gpu 0x6810 2.08e3 {} none"),
    q(7, "--acc all --out-format fp16", "4",
      "`ampere`, `ada` ({})", "ada gpu 0x6810 2.08e3 {} none"),
    q(7, "--acc all --out-format fp16", "2",
      "`hopper`, `blackwell` ({}) all `0x6810`", "hopper gpu 0x6810 2.08e3 {} none"),
    q(7, "--acc all --out-format fp16", "2",
      "`hopper`, `blackwell` ({}) all `0x6810`", "blackwell gpu 0x6810 2.08e3 {} none"),
    q(7, "for d in ('sw32', 'sw16')", "1.96e-08",
      "fp32 `mean_rel` {}, 3.54e-07, 1.3e-06", "sw32 16 mean_ulp 0.23 mean_rel {} "),
    q(7, "for d in ('sw32', 'sw16')", "3.54e-07",
      "fp32 `mean_rel` 1.96e-08, {}, 1.3e-06", "sw32 256 mean_ulp 4.29 mean_rel {} "),
    q(7, "for d in ('sw32', 'sw16')", "1.3e-06",
      "fp32 `mean_rel` 1.96e-08, 3.54e-07, {}", "sw32 4096 mean_ulp 14.9 mean_rel {} "),
    q(7, "for d in ('sw32', 'sw16')", "0.000174",
      "fp16 {}, 0.00245, 0.0103", "sw16 16 mean_ulp 0.248 mean_rel {} "),
    q(7, "for d in ('sw32', 'sw16')", "0.00245",
      "fp16 0.000174, {}, 0.0103", "sw16 256 mean_ulp 3.68 mean_rel {} "),
    q(7, "for d in ('sw32', 'sw16')", "0.0103",
      "fp16 0.000174, 0.00245, {}", "sw16 4096 mean_ulp 15.3 mean_rel {} "),
    q(7, "for d in ('sw32', 'sw16')", "0.000326",
      "`max_rel` at 4096: {} and 3.85", "sw32 4096 mean_ulp 14.9 mean_rel 1.3e-06 max_rel {}"),
    q(7, "for d in ('sw32', 'sw16')", "3.85",
      "`max_rel` at 4096: 0.000326 and {}", "sw16 4096 mean_ulp 15.3 mean_rel 0.0103 max_rel {}"),
    q(7, "for d in ('sw32', 'sw16')", "1.05",
      "(and {} at k = 256)", "sw16 256 mean_ulp 3.68 mean_rel 0.00245 max_rel {}"),
    q(7, "for d in ('sw32', 'sw16')", "14.9",
      "almost the same `mean_ulp` at k = 4096 ({} and 15.3)", "sw32 4096 mean_ulp {} "),
    q(7, "for d in ('sw32', 'sw16')", "15.3",
      "almost the same `mean_ulp` at k = 4096 (14.9 and {})", "sw16 4096 mean_ulp {} "),
    q(7, "--seed 1 --out-format fp16 --acc nvidia --preset hopper --json", "0",
      "`\"check\":{\"mismatches\":{},\"reference\":\"nvidia_ref_dot\"}`",
      "\"check\":{\"mismatches\":{},"),
    q(7, "--seed 1 --out-format fp16 --acc nvidia --preset hopper --json", "fp16",
      "and `\"out_format\":\"{}\"`", "\"out_format\":\"{}\""),
    q(7, "tcrtl dot --format s8 --format-b u8 --a 127,-128 --b 255,0x10 --c 0x7fffff00",
      "0x80007581", "commands 2 print `{}`",
      "bits: {} value: -2147453567 range: out of int32 range (wrapped)"),
    q(7, "tcrtl dot --format s8 --format-b u8 --a 127,-128 --b 255,0x10 --c 0x7fffff00",
      "-2147453567", "(`{}`, `out of int32 range (wrapped)`)",
      "value: {} range: out of int32 range (wrapped)"),
    q(7, "--a 127,-128 --b 255,0x10 --c 0x7fffff00 --satfinite", "0x7fffffff",
      "and `{}` (`2147483647`, `clamped`)",
      "bits: {} value: 2147483647 range: out of int32 range (clamped)"),
    q(7, "for w in 8 32", "0",
      "the gemms `check against int_ref_dot: {} mismatches`",
      "check against int_ref_dot: {} mismatches"),
    q(7, "for f in ('wrap8', 'wrap32', 'sat8', 'sat32')", "-2147067521",
      "`wrap8 [{} 2147381615]`", "wrap8 [{} 2147381615] wrap32 [-2147067521 2147381615]"),
    q(7, "for f in ('wrap8', 'wrap32', 'sat8', 'sat32')", "2147223551",
      "`sat8 [2147483647 {}]`", "sat8 [2147483647 {}]"),
    q(7, "for f in ('wrap8', 'wrap32', 'sat8', 'sat32')", "2147381615",
      "`sat32 [2147483647 {}]`", "sat32 [2147483647 {}]"),
    q(7, "print('sa', np.load('$l/sa.npy').tolist()",
      "[[120, 120], [119, 120], [119, 119], [120, 120]]", "command 3: scales `sa {}`",
      "sa [[120, 120], [119, 120], [119, 119], [120, 120]] sb"),
    q(7, "--format mxfp8e4m3 --a $l/a.npy", "0",
      "`check against verify::mx_ref and mx_dot fused: {} mismatches`",
      "check against verify::mx_ref and mx_dot fused: {} mismatches"),
    q(7, "x = l('xa.npy') @ l('xbt.npy').t", "-11.66335297",
      "`d[0] [ -1.99389648 {} 2.39159775 -1.54797935]`",
      "d[0] [ -1.99389648 -11.66335297 2.39159775 -1.54797935]"),
    q(7, "x = l('xa.npy') @ l('xbt.npy').t", "-11.40041039",
      "`x[0] [ -1.88596372 {} 2.80160397 -1.5052113 ]`",
      "x[0] [ -1.88596372 -11.40041039 2.80160397 -1.5052113 ]"),
    q(7, "x = l('xa.npy') @ l('xbt.npy').t", "true",
      "`d == qa @ qb` prints `{}`", "d == qa @ qb: {}"),
    q(7, "x = l('xa.npy') @ l('xbt.npy').t", "0.0510",
      "`rms(d - x) / rms(x) = {}`. command 4", "rms(d - x) / rms(x) = {}"),
    q(7, "x = l('xa.npy') @ l('xbt.npy').t", "-1.9924197841744944",
      "the worst quantised element of a is {}, which becomes -1.75 (code `0xfe`, scale 119)",
      "-1.9924197841744944 -> -1.75 0xfe scale 119"),
    q(7, "--to nvfp4 --in $l/nxa.npy", "0x3a7571a9",
      "tensor scales `{} 0.0009362944983877242`", "tensor scale {} 0.0009362944983877242"),
    q(7, "--to nvfp4 --in $l/nxbt.npy", "0x3a9e8bdc",
      "and `{} 0.0012096124701201916`", "tensor scale {} 0.0012096124701201916"),
    q(7, "--format nvfp4 --a $l/na.npy", "0",
      "0.0012096124701201916`, {} mismatches",
      "check against verify::mx_ref and mx_dot fused: {} mismatches"),
    q(7, "x = np.load('$l/nxa.npy') @ np.load('$l/nxbt.npy').t", "2.15297508",
      "`d[0] [-5.25280142 {} 2.11658835 6.21777296]`",
      "d[0] [-5.25280142 2.15297508 2.11658835 6.21777296]"),
    q(7, "x = np.load('$l/nxa.npy') @ np.load('$l/nxbt.npy').t", "0.59936909",
      "`x[0] [-5.58215893 {} 1.73846375 6.45621537]`",
      "x[0] [-5.58215893 0.59936909 1.73846375 6.45621537]"),
    q(7, "x = np.load('$l/nxa.npy') @ np.load('$l/nxbt.npy').t", "0.0954",
      "`rms(d - x) / rms(x) = {}`. command 5", "rms(d - x) / rms(x) = {}"),
    q(7, "--a 6,-0.5,1.5,4 --b 2,3,-1,0.5 --a-scales 0x81", "0x40d00000",
      "command 5: `{} (fp32)`", "bits: {} (fp32)"),
    q(7, "--a 6,-0.5,1.5,4 --b 2,3,-1,0.5 --a-scales 0x81", "6.5",
      "`6.5e0 ({})`", "value: 6.5e0 ({})"),
    q(7, "tcrtl dot --format mxfp4 --acc fused --a $v", "0x4b800000",
      "`--acc fused` returns `{}`", "bits: {} (fp32)"),
    q(7, "tcrtl dot --format mxfp4 --acc exact --a $v", "0x4b800001",
      "`--acc exact` returns `{}`", "bits: {} (fp32)"),
    // Lab 8: energy.
    q(8, "--pattern ones --energy --vcd waves/lab8_ones.vcd", "256",
      "The report prints {} operand bit toggles", "({} operand bit toggles"),
    q(8, "--pattern ones --energy --vcd waves/lab8_ones.vcd", "17.6",
      "and {} pJ of multiplier energy", "multipliers {} pJ"),
    q(8, "tcrtl gemm --m 32 --n 32 --k 32 --format fp16 --energy", "1.792",
      "reports {} pJ per MAC for random operands", "{} pJ/MAC"),
    q(8, "tcrtl gemm --m 32 --n 32 --k 32 --format fp16 --energy --memory tma", "214.969",
      "through the memory path reports {} pJ per MAC", "{} pJ/MAC"),
    q(8, "tcrtl gemm --m 32 --n 32 --k 32 --format fp16 --energy --memory tma", "26624",
      "moves {} bytes to and", "({} bytes x 243.7500"),
    q(8, "tcrtl gemm --m 32 --n 32 --k 32 --format fp16 --energy --memory tma", "7511",
      "cycles instead of {} but", "w = 1): {} cycles"),
    q(8, "--format e4m3 --energy", "0.694",
      "E4M3 operands (command 3) report {} pJ per MAC", "{} pJ/MAC"),
    q(8, "--mem-bandwidth 2", "14092", "Command 4 takes {} cycles", "w = 1): {} cycles"),
    // Lab 9: os against ws, cycles, utilization, operand-store traffic, numerics, pass length.
    q(9, "tcrtl gemm --m 16 --n 16 --k 16 --dataflow os --json", "271",
      "The runs take {} and 269 cycles", "\"cycles\":{},"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 16 --dataflow ws --json", "269",
      "The runs take 271 and {} cycles", "\"cycles\":{},"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 16 --dataflow os --rows 16 --cols 16 --json", "79",
      "on 4 x 4, {} and 65 on 16 x 16", "\"cycles\":{},"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 16 --dataflow ws --rows 16 --cols 16 --json", "65",
      "on 4 x 4, 79 and {} on 16 x 16", "\"cycles\":{},"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 16 --dataflow os --json", "0.945",
      "(utilization {}), `ws` 269", "\"utilization\":{},"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 16 --dataflow ws --json", "0.952",
      "`ws` 269 ({}); 16 x 16", "\"utilization\":{},"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 16 --dataflow os --rows 16 --cols 16 --json", "0.203",
      "16 x 16 `os` 79 ({}),", "\"utilization\":{},"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 16 --dataflow ws --rows 16 --cols 16 --json", "0.246",
      "`ws` 65 ({}). Traffic", "\"utilization\":{},"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 16 --dataflow os --json", "2048",
      "`os` reads A {}, B 2048, C 1024 bytes", "\"a_read_bytes\":{},"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 16 --dataflow os --json", "2048",
      "`os` reads A 2048, B {}, C 1024 bytes", "\"b_read_bytes\":{},"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 16 --dataflow os --json", "1024",
      "B 2048, C {} bytes and writes", "\"c_read_bytes\":{},"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 16 --dataflow os --json", "1024",
      "D {}; `ws` reads B 512", "\"d_write_bytes\":{}}"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 16 --dataflow ws --json", "512",
      "`ws` reads B {} (A, C and D the same)", "\"b_read_bytes\":{},"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 16 --dataflow ws --json", "2048",
      "`os` reads A {}, B 2048, C 1024 bytes", "\"a_read_bytes\":{},"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 16 --dataflow ws --json", "1024",
      "D {}; `ws` reads B 512", "\"d_write_bytes\":{}}"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 16 --dataflow os --rows 16 --cols 16 --json", "512",
      "on 16 x 16 both read A {} and B 512", "\"a_read_bytes\":{},"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 16 --dataflow os --rows 16 --cols 16 --json", "512",
      "on 16 x 16 both read A 512 and B {}", "\"b_read_bytes\":{},"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 16 --dataflow ws --rows 16 --cols 16 --json", "512",
      "on 16 x 16 both read A {} and B 512", "\"a_read_bytes\":{},"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 16 --dataflow ws --rows 16 --cols 16 --json", "512",
      "on 16 x 16 both read A 512 and B {}", "\"b_read_bytes\":{},"),
    q(9, "tcrtl gemm --m 128 --n 128 --k 128 --dataflow os --json", "131087",
      "2: 4 x 4 `os` {}, `ws` 131085", "\"cycles\":{},"),
    q(9, "tcrtl gemm --m 128 --n 128 --k 128 --dataflow ws --json", "131085",
      "`os` 131087, `ws` {}; 16 x 16", "\"cycles\":{},"),
    q(9, "tcrtl gemm --m 128 --n 128 --k 128 --dataflow os --rows 16 --cols 16 --json", "8255",
      "16 x 16 `os` {} (0.992)", "\"cycles\":{},"),
    q(9, "tcrtl gemm --m 128 --n 128 --k 128 --dataflow os --rows 16 --cols 16 --json", "0.992",
      "`os` 8255 ({}), `ws` 8241", "\"utilization\":{},"),
    q(9, "tcrtl gemm --m 128 --n 128 --k 128 --dataflow ws --rows 16 --cols 16 --json", "8241",
      "`ws` {} (0.994)", "\"cycles\":{},"),
    q(9, "tcrtl gemm --m 128 --n 128 --k 128 --dataflow ws --rows 16 --cols 16 --json", "0.994",
      "`ws` 8241 ({}); traffic", "\"utilization\":{},"),
    q(9, "tcrtl gemm --m 128 --n 128 --k 128 --dataflow os --json", "1048576",
      "4 x 4 A {} in both, B 1048576", "\"a_read_bytes\":{},"),
    q(9, "tcrtl gemm --m 128 --n 128 --k 128 --dataflow ws --json", "1048576",
      "4 x 4 A {} in both, B 1048576", "\"a_read_bytes\":{},"),
    q(9, "tcrtl gemm --m 128 --n 128 --k 128 --dataflow os --json", "1048576",
      "B {} (`os`) against 32768 (`ws`)", "\"b_read_bytes\":{},"),
    q(9, "tcrtl gemm --m 128 --n 128 --k 128 --dataflow ws --json", "32768",
      "B 1048576 (`os`) against {} (`ws`)", "\"b_read_bytes\":{},"),
    q(9, "tcrtl gemm --m 128 --n 128 --k 128 --dataflow ws --json", "32768",
      "`ws` reads {} bytes of B against 1048576 in `os`", "\"b_read_bytes\":{},"),
    q(9, "tcrtl gemm --m 128 --n 128 --k 128 --dataflow os --json", "1048576",
      "`ws` reads 32768 bytes of B against {} in `os`", "\"b_read_bytes\":{},"),
    q(9, "tcrtl gemm --m 128 --n 128 --k 128 --dataflow os --rows 16 --cols 16 --json", "262144",
      "on 16 x 16 A {} in both", "\"a_read_bytes\":{},"),
    q(9, "tcrtl gemm --m 128 --n 128 --k 128 --dataflow ws --rows 16 --cols 16 --json", "262144",
      "on 16 x 16 A {} in both", "\"a_read_bytes\":{},"),
    q(9, "tcrtl gemm --m 128 --n 128 --k 128 --dataflow os --rows 16 --cols 16 --json", "262144",
      "B {} against 32768; C and D", "\"b_read_bytes\":{},"),
    q(9, "tcrtl gemm --m 128 --n 128 --k 128 --dataflow ws --rows 16 --cols 16 --json", "32768",
      "262144 against {}; C and D", "\"b_read_bytes\":{},"),
    q(9, "tcrtl gemm --m 128 --n 128 --k 128 --dataflow os --json", "65536",
      "C and D {} each everywhere", "\"c_read_bytes\":{},"),
    q(9, "tcrtl gemm --m 128 --n 128 --k 128 --dataflow ws --rows 16 --cols 16 --json", "65536",
      "C and D {} each everywhere", "\"d_write_bytes\":{}}"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 64 --dataflow os --out /tmp/l9/d_os.npy", "8192",
      "`operand store: A 8192 B {} C 1024 bytes read, D 1024 written` (`os`)", "operand store: A 8192 B {} C"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 64 --dataflow ws --out /tmp/l9/d_ws.npy", "2048",
      "`operand store: A 8192 B {} C 1024 bytes read, D 1024 written` (`ws`)", "operand store: A 8192 B {} C"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 64 --dataflow ws --out /tmp/l9/d_ws.npy", "0",
      "`check against ws_ref(ieee_dot): {} mismatches`", "check against ws_ref(ieee_dot): {} mismatches"),
    q(9, "tcrtl gemm --m 16 --n 16 --k 64 --dataflow os --out /tmp/l9/d_os.npy", "0",
      "run is checked against `ieee_dot`", "check against ieee_dot: {} mismatches"),
    q(9, "import numpy as np", "189",
      "`ws against os: {} of 256 elements differ`", "ws against os: {} of 256"),
    q(9, "import numpy as np", "74",
      "differ, at most {} ulps`", "at most {} ulps"),
    q(9, "for s in 1 2 3 4 5 6 7 8 9 10; do tcrtl gemm --m $s --n 4 --k 64 --dataflow ws | head -1; done", "125",
      "S = 7 gives {} cycles", "gemm 7 x 4 x 64 (fp16 x fp16, ieee, w = 1, ws): {} cycles"),
    q(9, "for s in 1 2 3 4 5 6 7 8 9 10; do tcrtl gemm --m $s --n 4 --k 64 --dataflow ws | head -1; done", "141",
      "S = 8 {}, S = 9", "gemm 8 x 4 x 64 (fp16 x fp16, ieee, w = 1, ws): {} cycles"),
    q(9, "for s in 1 2 3 4 5 6 7 8 9 10; do tcrtl gemm --m $s --n 4 --k 64 --dataflow ws | head -1; done", "157",
      "S = 9 {}, S = 10", "gemm 9 x 4 x 64 (fp16 x fp16, ieee, w = 1, ws): {} cycles"),
    q(9, "for s in 1 2 3 4 5 6 7 8 9 10; do tcrtl gemm --m $s --n 4 --k 64 --dataflow ws | head -1; done", "173",
      "S = 10 {}. Below", "gemm 10 x 4 x 64 (fp16 x fp16, ieee, w = 1, ws): {} cycles"),
    q(9, "for s in 1 2 3 4 5 6 7 8 9 10; do tcrtl gemm --m $s --n 4 --k 64 --dataflow ws | head -1; done", "116",
      "S = 6 takes {} (not 109", "gemm 6 x 4 x 64 (fp16 x fp16, ieee, w = 1, ws): {} cycles"),
    q(9, "for s in 1 2 3 4 5 6 7 8 9 10; do tcrtl gemm --m $s --n 4 --k 64 --dataflow ws | head -1; done", "107",
      "S = 5 {}, S = 4", "gemm 5 x 4 x 64 (fp16 x fp16, ieee, w = 1, ws): {} cycles"),
    q(9, "for s in 1 2 3 4 5 6 7 8 9 10; do tcrtl gemm --m $s --n 4 --k 64 --dataflow ws | head -1; done", "98",
      "S = 4 {}, S = 3", "gemm 4 x 4 x 64 (fp16 x fp16, ieee, w = 1, ws): {} cycles"),
    q(9, "for s in 1 2 3 4 5 6 7 8 9 10; do tcrtl gemm --m $s --n 4 --k 64 --dataflow ws | head -1; done", "90",
      "S = 3 {}, S = 2", "gemm 3 x 4 x 64 (fp16 x fp16, ieee, w = 1, ws): {} cycles"),
    q(9, "for s in 1 2 3 4 5 6 7 8 9 10; do tcrtl gemm --m $s --n 4 --k 64 --dataflow ws | head -1; done", "82",
      "S = 2 {} and S = 1", "gemm 2 x 4 x 64 (fp16 x fp16, ieee, w = 1, ws): {} cycles"),
    q(9, "for s in 1 2 3 4 5 6 7 8 9 10; do tcrtl gemm --m $s --n 4 --k 64 --dataflow ws | head -1; done", "74",
      "S = 1 {} (passes of R = 4", "gemm 1 x 4 x 64 (fp16 x fp16, ieee, w = 1, ws): {} cycles"),
];

/// How a lab reads a signal in its waveform: as the save file shows it.
#[derive(Clone, Copy)]
enum Shown {
    /// Unsigned decimal.
    Dec,
    /// Two's-complement decimal.
    SignedDec,
    /// An FP32 word as a real.
    Real,
    /// Through `tcrtl wave-filter KIND` (the label, or its value before ` (`).
    Filter(&'static str),
}

/// A number a lab reads in the waveform one of its commands wrote.
struct WaveQuote {
    lab: u8,
    /// The waveform, as the lab's commands name it.
    vcd: &'static str,
    /// The signal's full dotted name.
    signal: &'static str,
    /// The cycle (time / 10 ns).
    cycle: usize,
    how: Shown,
    /// The number as the lab writes it.
    number: &'static str,
    /// Where the lab says it, `{}` for the number.
    text: &'static str,
}

#[allow(clippy::too_many_arguments)]
const fn w(
    lab: u8,
    vcd: &'static str,
    signal: &'static str,
    cycle: usize,
    how: Shown,
    number: &'static str,
    text: &'static str,
) -> WaveQuote {
    WaveQuote {
        lab,
        vcd,
        signal,
        cycle,
        how,
        number,
        text,
    }
}

/// Numbers the labs read in their waveforms.
#[rustfmt::skip]
const WAVE_QUOTES: &[WaveQuote] = &[
    // Lab 0: the table of the MAC mesh's first cycles, and question 5's wrap.
    w(0, "waves/mac_mesh.vcd", "tensor_core.seed", 4, Shown::Dec, "156", "| 4 | {} | 31 | 6 | 0 | 93 |"),
    w(0, "waves/mac_mesh.vcd", "tensor_core.seed", 5, Shown::Dec, "781", "| 5 | {} | 156 | 31 | 1 |"),
    w(0, "waves/mac_mesh.vcd", "tensor_core.mesh.pe_0_0.a", 5, Shown::Dec, "156", "| 5 | 781 | {} | 31 | 1 |"),
    w(0, "waves/mac_mesh.vcd", "tensor_core.mesh.pe_0_1.a", 5, Shown::Dec, "31", "| 5 | 781 | 156 | {} | 1 |"),
    w(0, "waves/mac_mesh.vcd", "tensor_core.mesh.pe_0_3.a", 5, Shown::Dec, "1", "| 5 | 781 | 156 | 31 | {} | 468 |"),
    w(0, "waves/mac_mesh.vcd", "tensor_core.mesh.pe_0_0.b", 5, Shown::Dec, "468", "| 5 | 781 | 156 | 31 | 1 | {} |"),
    w(0, "waves/mac_mesh.vcd", "tensor_core.mesh.pe_0_0.prod", 5, Shown::Dec, "1829883", "| 1 | 468 | {} | 76002 |"),
    w(0, "waves/mac_mesh.vcd", "tensor_core.mesh.pe_0_0.acc", 5, Shown::Dec, "76002", "| 468 | 1829883 | {} |"),
    w(0, "waves/mac_mesh.vcd", "tensor_core.mesh.pe_0_0.acc", 4, Shown::Dec, "2994", "| 93 | 73008 | {} |"),
    w(0, "waves/mac_mesh.vcd", "tensor_core.mesh.pe_0_2.a", 6, Shown::Dec, "31", "`pe_0_2.a` in cycle 6 is {}:"),
    w(0, "waves/mac_mesh.vcd", "tensor_core.mesh.pe_0_0.acc", 11, Shown::Dec, "3686888563", "`acc` reads {} in cycle 11"),
    w(0, "waves/mac_mesh.vcd", "tensor_core.mesh.pe_0_0.prod", 11, Shown::Dec, "901506675", "`prod` {}, and cycle 12"),
    w(0, "waves/mac_mesh.vcd", "tensor_core.mesh.pe_0_0.acc", 12, Shown::Dec, "293427942", "mod 2^32 = {}."),
    // Lab 1: the cancellation case through one PE.
    w(1, "waves/pe_fp16_mac.vcd", "pe_harness.pe.acc_0", 4, Shown::Real, "1.5", "cycle 4 (`acc_0 = 3fc00000`)"),
    w(1, "waves/pe_fp16_mac.vcd", "pe_harness.pe.acc", 3, Shown::Real, "1.5", "the rounded sum of that cycle, {}, 0.5, +0"),
    w(1, "waves/pe_fp16_mac.vcd", "pe_harness.pe.acc", 4, Shown::Real, "0.5", "the rounded sum of that cycle, 1.5, {}, +0"),
    w(1, "waves/pe_fp16_mac.vcd", "pe_harness.pe.s1_prod", 3, Shown::Filter("prod"), "1 (+ e=0 sig=0x100000 f=20)",
      "(cycles 3, 4, 5), shown decoded by the `prod` filter (`docs/waves.md`): `{}`"),
    w(1, "waves/pe_fp16_mac.vcd", "pe_harness.pe.s1_prod", 5, Shown::Filter("prod"), "-0.5 (- e=-1 sig=0x100000 f=20)",
      "`-1 (- e=0 sig=0x100000 f=20)`, `{}`: the exact value"),
    // Lab 2: the wavefront.
    w(2, "waves/lab2_mesh.vcd", "tensor_core.mesh.pe_0_0.acc_0", 7, Shown::Real, "1", "its `acc_0` reads {}, 11, 14, 34"),
    w(2, "waves/lab2_mesh.vcd", "tensor_core.mesh.pe_0_0.acc_0", 8, Shown::Real, "11", "its `acc_0` reads 1, {}, 14, 34"),
    w(2, "waves/lab2_mesh.vcd", "tensor_core.mesh.pe_0_0.acc_0", 9, Shown::Real, "14", "its `acc_0` reads 1, 11, {}, 34"),
    w(2, "waves/lab2_mesh.vcd", "tensor_core.mesh.pe_0_0.acc_0", 10, Shown::Real, "34", "its `acc_0` reads 1, 11, 14, {}"),
    w(2, "waves/lab2_mesh.vcd", "tensor_core.mesh.pe_2_1.a_in", 8, Shown::Filter("fp16"), "1.0",
      "`pe_2_1` gets step 0 in cycle 8 (a = 1 of row 2"),
    w(2, "waves/lab2_mesh.vcd", "tensor_core.mesh.pe_2_1.b_in", 8, Shown::Filter("fp16"), "2.0",
      "in cycle 8 (a = 1 of row 2, b = 2 of column 1)"),
    w(2, "waves/lab2_mesh.vcd", "tensor_core.mesh.pe_2_1.a_in", 7, Shown::Filter("fp16"), "0.0",
      "`pe_2_1` gets step 0 in cycle 8"),
    w(2, "waves/lab2_mesh.vcd", "tensor_core.mesh.pe_3_3.a_in", 11, Shown::Filter("fp16"), "5.0",
      "`pe_3_3` starts in cycle 11"),
    w(2, "waves/lab2_mesh.vcd", "tensor_core.mesh.pe_3_3.acc_0", 16, Shown::Real, "160", "its `acc_0` reaches {} = d[3][3]"),
    // Lab 3: the tiles entering pe_0_0, the output tags.
    w(3, "waves/lab3_tiles.vcd", "tensor_core.mesh.pe_0_0.a_ctl", 6, Shown::Filter("ctl"), "n=1 valid",
      "entering at cycles 6, 12, 18, 24: `{}` (hex"),
    w(3, "waves/lab3_tiles.vcd", "tensor_core.mesh.pe_0_0.a_ctl", 12, Shown::Filter("ctl"), "n=1 valid set1",
      "or `{}` (`301`)"),
    w(3, "waves/lab3_tiles.vcd", "tensor_core.mesh.pe_0_0.a_ctl", 5, Shown::Filter("ctl"), "-",
      "entering at cycles 6, 12, 18, 24"),
    // Lab 4: the block FMA's gathered products and accumulator.
    w(4, "waves/lab4_blocks.vcd", "tensor_core.mesh.pe_0_0.gather_1", 9, Shown::Filter("prod"),
      "10 (+ e=3 sig=0x140000 f=20)", "read 1, 10, 3 for the first block (`{}`: 2 x 5"),
    w(4, "waves/lab4_blocks.vcd", "tensor_core.mesh.pe_0_0.gather_0", 9, Shown::Filter("prod"), "1",
      "`gather_2` read {}, 10, 3 for the first block"),
    w(4, "waves/lab4_blocks.vcd", "tensor_core.mesh.pe_0_0.gather_2", 9, Shown::Filter("prod"), "3",
      "read 1, 10, {} for the first block"),
    w(4, "waves/lab4_blocks.vcd", "tensor_core.mesh.pe_0_0.gather_1", 13, Shown::Filter("prod"), "30",
      "then 5, {}, 7 for the second"),
    w(4, "waves/lab4_blocks.vcd", "tensor_core.mesh.pe_0_0.acc_0", 10, Shown::Real, "34",
      "{} (= 1 + 10 + 3 + 20) after the first block"),
    w(4, "waves/lab4_blocks.vcd", "tensor_core.mesh.pe_0_0.acc_0", 15, Shown::Real, "116",
      "{} after the second (34 + 5 + 30 + 7 + 40)"),
    // Lab 7: the NVFP4 block sums, scale multiplier and accumulator of pe_0_0.
    w(7, "waves/lab7_nvfp4.vcd", "tensor_core.mesh.pe_0_0.blk_sum", 7, Shown::Filter("blksum"), "-15.25",
      "grows step by step: {} at 70 ns"),
    w(7, "waves/lab7_nvfp4.vcd", "tensor_core.mesh.pe_0_0.blk_sum", 8, Shown::Filter("blksum"), "-48.25", "{} at 80 ns"),
    w(7, "waves/lab7_nvfp4.vcd", "tensor_core.mesh.pe_0_0.blk_sum", 9, Shown::Filter("blksum"), "-41.75", "{} at 90 ns"),
    w(7, "waves/lab7_nvfp4.vcd", "tensor_core.mesh.pe_0_0.blk_sum", 10, Shown::Filter("blksum"), "0",
      "then reads {} at 100 ns"),
    w(7, "waves/lab7_nvfp4.vcd", "tensor_core.mesh.pe_0_0.blk_sum", 11, Shown::Filter("blksum"), "-14",
      "the second block: {}, -20.25, -29.25 (110 to 130 ns)"),
    w(7, "waves/lab7_nvfp4.vcd", "tensor_core.mesh.pe_0_0.blk_sum", 13, Shown::Filter("blksum"), "-29.25",
      "the second block: -14, -20.25, {} (110 to 130 ns)"),
    w(7, "waves/lab7_nvfp4.vcd", "tensor_core.mesh.pe_0_0.scale_sig", 9, Shown::Dec, "37605464247411900",
      "{} and -59 at 90 ns"),
    w(7, "waves/lab7_nvfp4.vcd", "tensor_core.mesh.pe_0_0.scale_exp", 9, Shown::SignedDec, "-59",
      "37605464247411900 and {} at 90 ns"),
    w(7, "waves/lab7_nvfp4.vcd", "tensor_core.mesh.pe_0_0.scale_sig", 13, Shown::Dec, "18719164425378368",
      "{} and -57 at 130 ns"),
    w(7, "waves/lab7_nvfp4.vcd", "tensor_core.mesh.pe_0_0.scale_exp", 13, Shown::SignedDec, "-57",
      "18719164425378368 and {} at 130 ns"),
    w(7, "waves/lab7_nvfp4.vcd", "tensor_core.mesh.pe_0_0.acc_0", 10, Shown::Real, "-1.908126", "{} at 100 ns"),
    w(7, "waves/lab7_nvfp4.vcd", "tensor_core.mesh.pe_0_0.acc_0", 14, Shown::Real, "-5.252801", "{} at 140 ns (d[0][0])"),
    w(7, "waves/lab7_nvfp4.vcd", "tensor_core.mesh.pe_0_0.a_scale", 6, Shown::Filter("e4m3"), "240.0",
      "`a_scale` and `b_scale` of `pe_0_0` turn {} (code `77`) at 60 ns"),
    // Lab 9: the weight preload down column 0, the first row of A, a partial sum moving down.
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_0_0.w_0", 3, Shown::Filter("fp16"), "0.2563",
      "`pe_0_0.w_0` reads {} in cycle 3"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_0_0.w_0", 2, Shown::Filter("fp16"), "0.0",
      "`pe_0_0.w_0` reads 0.2563 in cycle 3"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_3_0.w_0", 6, Shown::Filter("fp16"), "0.2563",
      "the same weight has reached `pe_3_0.w_0` in cycle 6"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_3_0.w_0", 5, Shown::Filter("fp16"), "0.0",
      "the same weight has reached `pe_3_0.w_0` in cycle 6"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_0_0.wv_0", 3, Shown::Dec, "1",
      "turns on in `pe_0_0`, `pe_1_0`, `pe_2_0`, `pe_3_0` in cycles 3, 4, 5 and 6"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_1_0.wv_0", 3, Shown::Dec, "0",
      "turns on in `pe_0_0`, `pe_1_0`, `pe_2_0`, `pe_3_0` in cycles 3, 4, 5 and 6"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_1_0.wv_0", 4, Shown::Dec, "1",
      "turns on in `pe_0_0`, `pe_1_0`, `pe_2_0`, `pe_3_0` in cycles 3, 4, 5 and 6"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_2_0.wv_0", 5, Shown::Dec, "1",
      "turns on in `pe_0_0`, `pe_1_0`, `pe_2_0`, `pe_3_0` in cycles 3, 4, 5 and 6"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_3_0.wv_0", 5, Shown::Dec, "0",
      "turns on in `pe_0_0`, `pe_1_0`, `pe_2_0`, `pe_3_0` in cycles 3, 4, 5 and 6"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_3_0.wv_0", 6, Shown::Dec, "1",
      "turns on in `pe_0_0`, `pe_1_0`, `pe_2_0`, `pe_3_0` in cycles 3, 4, 5 and 6"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_0_0.w_0", 6, Shown::Filter("fp16"), "-3.672",
      "`pe_0_0.w_0` {} at the top"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_0_0.a_in", 6, Shown::Filter("fp16"), "0.0261",
      "enters `pe_0_0` in cycle 6 (`a_in` {})"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_0_0.a_in", 5, Shown::Filter("fp16"), "0.0",
      "enters `pe_0_0` in cycle 6"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_0_0.w_1", 6, Shown::Filter("fp16"), "0.0",
      "`w_1`, from cycle 7"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_0_0.w_1", 7, Shown::Filter("fp16"), "-0.08057",
      "(`pe_0_0.w_1` {})"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_0_0.psum", 8, Shown::Real, "-0.0958",
      "as `psum` {} in cycle 8"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_0_0.psum_vld", 7, Shown::Dec, "0",
      "as `psum` -0.0958 in cycle 8"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_1_0.psum", 9, Shown::Real, "-2.135",
      "{} in cycle 9"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_1_0.psum_vld", 8, Shown::Dec, "0",
      "-2.135 in cycle 9"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_3_0.psum_vld", 10, Shown::Dec, "0",
      "it leaves `pe_3_0` (its `psum` valid) in cycle 11"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_3_0.psum_vld", 11, Shown::Dec, "1",
      "it leaves `pe_3_0` (its `psum` valid) in cycle 11"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_3_3.psum_vld", 13, Shown::Dec, "0",
      "its partial sum leaves `pe_3_3` in cycle 14"),
    w(9, "waves/mesh_ws.vcd", "tensor_core.mesh.pe_3_3.psum_vld", 14, Shown::Dec, "1",
      "its partial sum leaves `pe_3_3` in cycle 14"),
];

/// What the save file shows for `bits` (a bit string, most significant first) read as `how`.
fn shown(bits: &str, how: Shown) -> String {
    let unsigned = || u128::from_str_radix(bits, 2).ok();
    match how {
        Shown::Dec => unsigned().map_or(bits.to_string(), |v| v.to_string()),
        Shown::SignedDec => unsigned().map_or(bits.to_string(), |v| {
            let shift = 128 - bits.len() as u32;
            (((v << shift) as i128) >> shift).to_string()
        }),
        Shown::Real => {
            unsigned().map_or(bits.to_string(), |v| f32::from_bits(v as u32).to_string())
        }
        Shown::Filter(kind) => {
            let pad = "0".repeat((4 - bits.len() % 4) % 4);
            let padded = format!("{pad}{bits}");
            let hex: String = padded
                .as_bytes()
                .chunks(4)
                .map(|c| {
                    let c = std::str::from_utf8(c).unwrap_or("x");
                    u8::from_str_radix(c, 2)
                        .map_or('x', |d| char::from_digit(u32::from(d), 16).unwrap_or('x'))
                })
                .collect();
            let k =
                tensorcore_rtl::hw::wave_filter::FilterKind::by_name(kind).expect("a filter kind");
            tensorcore_rtl::hw::wave_filter::translate(k, &hex.to_uppercase())
        }
    }
}

/// Checks the lab's [`WAVE_QUOTES`] against the waveforms its commands wrote into `work`.
fn check_wave_quotes(lab: u8, work: &Path, text: &str, failures: &mut Vec<String>) {
    let mut read: Vec<(&str, crate::common::waves::Waves)> = Vec::new();
    for q in WAVE_QUOTES.iter().filter(|q| q.lab == lab) {
        let at = norm(&q.text.replace("{}", q.number));
        if !text.contains(&at) {
            failures.push(format!("lab {lab} no longer says {at:?}"));
        }
        if !read.iter().any(|(v, _)| *v == q.vcd) {
            let path = work.join(q.vcd);
            if !path.is_file() {
                failures.push(format!("lab {lab} writes no {}", q.vcd));
                continue;
            }
            read.push((q.vcd, crate::common::waves::Waves::read(&path)));
        }
        let Some((_, waves)) = read.iter().find(|(v, _)| *v == q.vcd) else {
            continue;
        };
        if !waves.has(q.signal) {
            failures.push(format!("{} has no {}", q.vcd, q.signal));
            continue;
        }
        let label = shown(&waves.bits(q.signal, q.cycle), q.how);
        let value = label.split(" (").next().unwrap_or("");
        if label != q.number && !same_number(q.number, &norm(value)) {
            failures.push(format!(
                "{:?}: {} in cycle {} shows {label:?}, not {}",
                q.text, q.signal, q.cycle, q.number
            ));
        }
    }
}

/// Commands that exit with a nonzero status by design: (lab, command, status).
const FAILS: &[(u8, &str, i32)] = &[
    // The grader exits 1 on mismatches: the skeleton, and modes graded against the exact sum.
    (1, "tcrtl grade --golden /tmp/g --student /tmp/s", 1),
    (5, "tcrtl grade --golden /tmp/l5g --student /tmp/l5s", 1),
    (4, "--student /tmp/l4/ieee --no-steps", 1),
    (4, "--student /tmp/l4/volta --no-steps", 1),
    (4, "--student /tmp/l4/hopper --no-steps", 1),
    // A wrong preset fails the measurements.
    (4, "--format fp16 --preset ampere --show 1", 1),
];

/// Commands the questions and answers ask for in prose, run after the lab's own (lab, command).
const EXTRAS: &[(u8, &str)] = &[
    (2, "tcrtl gemm --m 5 --n 4 --k 4 --pattern iota"),
    (2, "tcrtl gemm --m 8 --n 8 --k 16 --pattern iota"),
    (3, "tcrtl gemm --m 8 --n 8 --k 16 --pattern ones --width 4"),
    (
        3,
        "tcrtl gemm --m 16 --n 16 --k 64 --pattern ones --width 4",
    ),
    (
        4,
        "tcrtl grade --golden /tmp/l4/exact --student /tmp/l4/ieee --no-steps",
    ),
    (
        4,
        "tcrtl grade --golden /tmp/l4/exact --student /tmp/l4/hopper --no-steps",
    ),
    (
        9,
        "for s in 1 2 3 4 5 6 7 8 9 10; do tcrtl gemm --m $s --n 4 --k 64 --dataflow ws | head -1; done",
    ),
];

/// How many save files `docs/course/gtkw/lab<N>_*.gtkw` each lab has (one per question that
/// asks to look at signals, and lab 2's screenshot).
const SAVE_FILES: [usize; 10] = [2, 1, 2, 1, 0, 0, 0, 1, 0, 2];

/// Commands not run: (lab, command, why).
const SKIPS: &[(u8, &str, &str)] = &[(
    7,
    "--a a0,a1,.. --b b0,b1,..",
    "the student task's template, for the student's own values",
)];

/// Commands run only with `TCRTL_COURSE_LONG=1` (lab, command): lab 7's sweeps and the
/// summary that reads them, and lab 9's four 128 x 128 x 128 GEMMs (about 12 s together in
/// the test profile, half of the default run's longest test). `.ci/run` runs them all.
const LONG: &[(u8, &str)] = &[
    (7, "--samples 1000 --out $l/sw32"),
    (7, "--samples 1000 --out $l/sw16 --out-format fp16"),
    (7, "for d in ('sw32', 'sw16')"),
    (9, "--m 128 --n 128 --k 128 --dataflow os --json"),
    (9, "--m 128 --n 128 --k 128 --dataflow ws --json"),
    (9, "--k 128 --dataflow os --rows 16"),
    (9, "--k 128 --dataflow ws --rows 16"),
];

/// Lower case, every run of whitespace one space, trimmed: how text and output are compared
/// (the labs wrap lines anywhere; hex is written in either case).
fn norm(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The ```` ```sh ```` blocks of a lab, as lines.
fn sh_blocks(md: &str) -> Vec<Vec<&str>> {
    let mut blocks = Vec::new();
    let mut cur: Option<Vec<&str>> = None;
    for line in md.lines() {
        match (&mut cur, line.trim()) {
            (None, "```sh") => cur = Some(Vec::new()),
            (Some(_), "```") => blocks.extend(cur.take()),
            (Some(b), _) => b.push(line),
            (None, _) => {}
        }
    }
    assert!(cur.is_none(), "an unclosed ```sh block");
    blocks
}

/// One shell command of a block: its text as written, and the same without comments.
struct ShellCommand {
    text: String,
    code: String,
}

/// Splits a block into its commands: a command goes on over a trailing `\`, an open quote
/// (the labs' multi-line `python3 -c "..."`) and a `for ... done` loop; comment lines and
/// blank lines between commands are dropped.
fn commands(block: &[&str]) -> Vec<ShellCommand> {
    #[derive(Clone, Copy, PartialEq)]
    enum Q {
        Out,
        Single,
        Double,
    }
    let (mut out, mut text, mut code) = (Vec::new(), Vec::<&str>::new(), Vec::<String>::new());
    let (mut state, mut depth) = (Q::Out, 0i32);
    for &line in block {
        let t = line.trim();
        if text.is_empty() && state == Q::Out && (t.is_empty() || t.starts_with('#')) {
            continue;
        }
        let start = state;
        let mut kept = String::new();
        let mut chars = line.chars().peekable();
        let mut prev = ' ';
        while let Some(c) = chars.next() {
            match state {
                Q::Out if c == '#' && (prev == ' ' || prev == '\t' || prev == ';') => break,
                Q::Out if c == '\\' => {
                    kept.push(c);
                    if let Some(n) = chars.next() {
                        kept.push(n);
                    }
                    prev = 'x';
                    continue;
                }
                Q::Out if c == '\'' => state = Q::Single,
                Q::Out if c == '"' => state = Q::Double,
                Q::Single if c == '\'' => state = Q::Out,
                Q::Double if c == '\\' => {
                    kept.push(c);
                    if let Some(n) = chars.next() {
                        kept.push(n);
                    }
                    continue;
                }
                Q::Double if c == '"' => state = Q::Out,
                _ => {}
            }
            kept.push(c);
            prev = c;
        }
        if start == Q::Out {
            let w = kept.trim();
            depth += i32::from(w.starts_with("for "));
            depth -= i32::from(w == "done" || w.ends_with("; done") || w.starts_with("done"));
        }
        text.push(line);
        let more = state != Q::Out || kept.trim_end().ends_with('\\') || depth > 0;
        code.push(kept);
        if !more {
            out.push(ShellCommand {
                text: text.join("\n"),
                code: norm(&code.join("\n").replace("\\\n", " ")),
            });
            text.clear();
            code.clear();
        }
    }
    assert!(text.is_empty(), "a command runs past its block: {text:?}");
    out
}

/// The index of the command `needle` names among `cmds`: the one whose code is exactly it,
/// else the only one that contains it.
fn find(cmds: &[ShellCommand], lab: u8, needle: &str) -> usize {
    let n = norm(needle);
    if let Some(i) = cmds.iter().position(|c| c.code == n) {
        return i;
    }
    let hits: Vec<usize> = (0..cmds.len())
        .filter(|&i| cmds[i].code.contains(&n))
        .collect();
    assert_eq!(
        hits.len(),
        1,
        "lab {lab}: {needle:?} names {} commands, not one",
        hits.len()
    );
    hits[0]
}

/// A fresh clone's layout in a scratch directory: the repository's `data/`, `testbenches/`
/// and `scripts/` linked in, an empty `waves/`; and an empty `tmp/` for the labs' `/tmp/`.
fn clone_dir(lab: u8) -> (PathBuf, PathBuf) {
    let root = scratch("course", &format!("lab{lab}"));
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = root.join("clone");
    std::fs::create_dir_all(work.join("waves")).expect("waves");
    std::fs::create_dir_all(root.join("tmp")).expect("tmp");
    for d in ["data", "testbenches", "scripts"] {
        std::os::unix::fs::symlink(repo.join(d), work.join(d)).expect("link");
    }
    (root, work)
}

/// What one command did: its exit status and its output (stdout and stderr in order).
struct Ran {
    status: i32,
    output: String,
}

/// Runs the lab's commands (and its [`EXTRAS`]) in one `bash` in a fresh [`clone_dir`];
/// `None` for a command skipped. Also returns the scratch directory and the clone in it.
fn run_lab(lab: u8, cmds: &[ShellCommand], long: bool) -> (Vec<Option<Ran>>, PathBuf, PathBuf) {
    let (root, work) = clone_dir(lab);
    let tmp = format!("{}/", root.join("tmp").display());
    let skipped: Vec<usize> = SKIPS
        .iter()
        .filter(|s| s.0 == lab)
        .map(|s| find(cmds, lab, s.1))
        .chain(
            LONG.iter()
                .filter(|l| l.0 == lab && !long)
                .map(|l| find(cmds, lab, l.1)),
        )
        .collect();
    let mut script = String::from("exec 2>&1\ntcrtl() { \"$TCRTL\" \"$@\"; }\ngtkwave() { :; }\n");
    for (i, c) in cmds.iter().enumerate() {
        if skipped.contains(&i) {
            continue;
        }
        script.push_str(&format!(
            "printf '\\n@@@ begin {i}\\n'\n{}\nprintf '\\n@@@ end {i} %d\\n' $?\n",
            c.text.replace("/tmp/", &tmp)
        ));
    }
    let path = root.join("lab.sh");
    std::fs::write(&path, script).expect("script");
    let out = Command::new("bash")
        .arg(&path)
        .current_dir(&work)
        .env("TCRTL", env!("CARGO_BIN_EXE_tcrtl"))
        .output()
        .expect("bash");
    let text = String::from_utf8_lossy(&out.stdout).replace(&tmp, "/tmp/");
    let mut ran: Vec<Option<Ran>> = (0..cmds.len()).map(|_| None).collect();
    let mut rest = text.as_str();
    while let Some(b) = rest.find("\n@@@ begin ") {
        let after = &rest[b + "\n@@@ begin ".len()..];
        let (idx, body) = after.split_once('\n').expect("marker line");
        let i: usize = idx.parse().expect("index");
        let end_tag = format!("\n@@@ end {i} ");
        let e = body
            .find(&end_tag)
            .unwrap_or_else(|| panic!("lab {lab}: command {i} did not finish:\n{}", cmds[i].text));
        let tail = &body[e + end_tag.len()..];
        let (status, next) = tail.split_once('\n').unwrap_or((tail, ""));
        ran[i] = Some(Ran {
            status: status.trim().parse().expect("status"),
            output: body[..e].to_string(),
        });
        rest = next;
    }
    (ran, root, work)
}

/// The names GTKWave gives the signals of a VCD (`scope.name[msb:0]`, `[msb:0]` for vectors).
fn vcd_names(vcd: &str) -> Vec<String> {
    let mut scopes: Vec<&str> = Vec::new();
    let mut names = Vec::new();
    for line in vcd
        .lines()
        .take_while(|l| !l.starts_with("$enddefinitions"))
    {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.first() {
            Some(&"$scope") => scopes.push(w[2]),
            Some(&"$upscope") => {
                scopes.pop();
            }
            Some(&"$var") => {
                let width: u32 = w[2].parse().expect("width");
                let range = if width > 1 {
                    format!("[{}:0]", width - 1)
                } else {
                    String::new()
                };
                names.push(format!("{}.{}{range}", scopes.join("."), w[4]));
            }
            _ => {}
        }
    }
    names
}

/// The lab's save files (`docs/course/gtkw/lab<N>_*.gtkw`), each against the waveform the
/// lab's commands wrote (named on its `open from the repository root` line): every trace it
/// shows is a signal of that waveform, every filter process a `tcrtl wave-filter` kind, every
/// filter file beside it, and no path in it is absolute. Returns how many it checked.
fn check_save_files(lab: u8, work: &Path, failures: &mut Vec<String>) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/course/gtkw");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("docs/course/gtkw")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            let n = p.file_name().unwrap_or_default().to_string_lossy();
            n.starts_with(&format!("lab{lab}_")) && n.ends_with(".gtkw")
        })
        .collect();
    files.sort();
    for f in &files {
        let name = f
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(f).expect("save file");
        let Some(vcd) = text
            .lines()
            .find_map(|l| l.strip_prefix("[*] open from the repository root: gtkwave "))
            .and_then(|l| l.split_whitespace().next())
        else {
            failures.push(format!("{name}: no 'open from the repository root' line"));
            continue;
        };
        let Ok(wave) = std::fs::read_to_string(work.join(vcd)) else {
            failures.push(format!("{name}: lab {lab} writes no {vcd}"));
            continue;
        };
        let signals = vcd_names(&wave);
        let mut traces = 0;
        for line in text.lines() {
            if line.starts_with("[dumpfile]") || line.split_whitespace().any(|w| w.starts_with('/'))
            {
                failures.push(format!("{name}: a path of this machine: {line}"));
            }
            if let Some(kind) = line.strip_prefix("^>").and_then(|l| l.split_once(' ')) {
                let kind = kind.1.strip_prefix("tcrtl wave-filter ").unwrap_or("?");
                if tensorcore_rtl::hw::wave_filter::FilterKind::by_name(kind).is_none() {
                    failures.push(format!("{name}: no filter kind {kind:?}"));
                }
            } else if let Some(file) = line.strip_prefix('^').and_then(|l| l.split_once(' ')) {
                if !dir.join(file.1).is_file() {
                    failures.push(format!("{name}: no filter file {}", file.1));
                }
            } else if !line.is_empty() && !"@[*-".contains(&line[..1]) {
                traces += 1;
                if !signals.iter().any(|s| s == line) {
                    failures.push(format!("{name}: {vcd} has no signal {line}"));
                }
            }
        }
        if traces == 0 {
            failures.push(format!("{name}: shows no signal"));
        }
    }
    files.len()
}

/// The printed numbers that stand where `{}` is in `pattern` (every place the text around it
/// is printed).
fn printed_at(output: &str, pattern: &str) -> Vec<String> {
    let (before, after) = pattern.split_once("{}").expect("a {} in the pattern");
    let number = |c: &char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '/' | '^');
    let mut found = Vec::new();
    if before.is_empty() {
        // The number ends where the text after it starts.
        for (at, _) in output.match_indices(after) {
            let token: String = output[..at].chars().rev().take_while(number).collect();
            found.push(token.chars().rev().collect());
        }
        return found;
    }
    for (at, _) in output.match_indices(before) {
        let start = at + before.len();
        let token: String = output[start..].chars().take_while(number).collect();
        if output[start + token.len()..].starts_with(after) {
            found.push(token);
        }
    }
    found
}

/// True if `printed` is the number the lab quotes as `quoted`: the same text, or the same
/// value to the quoted number's last decimal place (`~`: to its last nonzero digit).
fn same_number(quoted: &str, printed: &str) -> bool {
    let q = norm(quoted);
    if q == printed {
        return true;
    }
    let (approx, digits) = match q.strip_prefix('~') {
        Some(d) => (true, d.replace(',', "")),
        None => (false, q.replace(',', "")),
    };
    let (Ok(qv), Ok(pv)) = (digits.parse::<f64>(), printed.parse::<f64>()) else {
        return false;
    };
    let place = if approx {
        let int = digits.split('.').next().unwrap_or("");
        10f64.powi((int.len() - int.trim_end_matches('0').len()) as i32)
    } else if let Some((_, frac)) = digits.split_once('.') {
        10f64.powi(-(frac.len() as i32))
    } else {
        1.0
    };
    (pv - qv).abs() <= place / 2.0 * (1.0 + 1e-9)
}

/// Runs lab `lab` and checks every command's status and every number [`QUOTES`] lists for it.
fn check_lab(lab: u8) {
    let long = std::env::var("TCRTL_COURSE_LONG").is_ok_and(|v| v == "1");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("docs/course/lab{lab}.md"));
    let md = std::fs::read_to_string(&path).expect("lab text");
    let mut cmds: Vec<ShellCommand> = sh_blocks(&md).iter().flat_map(|b| commands(b)).collect();
    let own = cmds.len();
    for &(_, extra) in EXTRAS.iter().filter(|e| e.0 == lab) {
        cmds.push(ShellCommand {
            text: extra.to_string(),
            code: norm(extra),
        });
    }
    assert!(own > 0, "lab {lab} has no commands");
    let (ran, root, work) = run_lab(lab, &cmds, long);
    let text = norm(&md);
    let mut failures = Vec::new();
    let saves = check_save_files(lab, &work, &mut failures);
    check_wave_quotes(lab, &work, &text, &mut failures);
    assert_eq!(
        saves,
        SAVE_FILES[usize::from(lab)],
        "lab {lab}'s save files in docs/course/gtkw"
    );
    let _ = std::fs::remove_dir_all(&root);
    for (i, c) in cmds.iter().enumerate() {
        let Some(r) = &ran[i] else { continue };
        let want = FAILS
            .iter()
            .filter(|f| f.0 == lab)
            .find(|f| find(&cmds, lab, f.1) == i)
            .map_or(0, |f| f.2);
        if r.status != want {
            failures.push(format!(
                "command exits {} (not {want}):\n{}\n{}",
                r.status, c.text, r.output
            ));
        }
    }
    for quote in QUOTES.iter().filter(|q| q.lab == lab) {
        let i = find(&cmds, lab, quote.cmd);
        let at = norm(
            &quote
                .text
                .replace("{}", quote.number.trim_start_matches('~')),
        );
        if !text.contains(&at) {
            failures.push(format!("lab {lab} no longer says {at:?}"));
        }
        let Some(r) = &ran[i] else { continue };
        let output = norm(&r.output);
        let out = norm(quote.out);
        let ok = if out.contains("{}") {
            let printed = printed_at(&output, &out);
            let ok = printed.iter().any(|p| same_number(quote.number, p));
            if !ok {
                failures.push(format!(
                    "{:?} quotes {} where the output prints {printed:?} ({out:?})",
                    quote.text, quote.number
                ));
            }
            ok
        } else {
            assert!(
                out.contains(&norm(quote.number.trim_start_matches('~')))
                    || out.starts_with('^') && out.contains(&norm(quote.number)),
                "table: {out:?} does not hold {}",
                quote.number
            );
            let literal = out.trim_start_matches('^').trim_end_matches('$');
            let ok = if out.starts_with('^') {
                output.starts_with(literal)
            } else if out.ends_with('$') {
                output.ends_with(literal)
            } else {
                output.contains(literal)
            };
            if !ok {
                failures.push(format!(
                    "{:?}: the output does not print {out:?}",
                    quote.text
                ));
            }
            ok
        };
        if !ok {
            failures.push(format!(
                "  command: {}\n  output: {}",
                cmds[i].text, r.output
            ));
        }
    }
    assert!(failures.is_empty(), "lab {lab}:\n{}", failures.join("\n"));
}

#[test]
fn lab0_runs_as_written() {
    check_lab(0);
}

#[test]
fn lab1_runs_as_written() {
    check_lab(1);
}

#[test]
fn lab2_runs_as_written() {
    check_lab(2);
}

#[test]
fn lab3_runs_as_written() {
    check_lab(3);
}

#[test]
fn lab4_runs_as_written() {
    check_lab(4);
}

#[test]
fn lab5_runs_as_written() {
    check_lab(5);
}

#[test]
fn lab6_runs_as_written() {
    check_lab(6);
}

#[test]
fn lab7_runs_as_written() {
    check_lab(7);
}

#[test]
fn lab8_runs_as_written() {
    check_lab(8);
}

#[test]
fn lab9_runs_as_written() {
    check_lab(9);
}

/// The splitter on the shapes the labs use: continuations, a multi-line quote holding `#` and
/// `for`, a loop, comments.
#[test]
fn commands_are_split_as_bash_reads_them() {
    let block = [
        "# a comment line",
        "tcrtl gemm --m 4 \\",
        "  --n 4   # trailing comment",
        "python3 -c \"",
        "for f in ('a', 'b'):  # not a shell loop",
        "    print(f)\"",
        "for k in 4 8; do",
        "  tcrtl gemm --k $k",
        "done",
        "",
        "X='#not a comment' && echo $X",
    ];
    let c = commands(&block);
    assert_eq!(
        c.len(),
        4,
        "{:?}",
        c.iter().map(|c| &c.code).collect::<Vec<_>>()
    );
    assert_eq!(c[0].code, "tcrtl gemm --m 4 --n 4");
    assert!(c[1].text.ends_with("print(f)\""));
    assert_eq!(c[2].code, "for k in 4 8; do tcrtl gemm --k $k done");
    assert_eq!(c[3].code, "x='#not a comment' && echo $x");
    assert!(same_number("~9,400", "9424") && !same_number("~9,400", "9451"));
    assert!(same_number("0.53", "0.5276") && !same_number("0.53", "0.524"));
    assert!(same_number("0x3F800000", "0x3f800000") && !same_number("19", "190"));
}
