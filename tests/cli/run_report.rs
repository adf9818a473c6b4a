//! The `tcrtl gemm --json` report per dataflow: a weight-stationary run carries none of the
//! output-stationary memory port's keys (A-panel reuse, swizzle, shift-window waits, overlap
//! cycles), an output-stationary run carries them all, and each kind of problem has its own
//! keys (the report is the library's `gemm::RunReport`).

use crate::common::cli::tcrtl;
use serde_json::Value;

/// The memory keys only the output-stationary port has.
const OS_ONLY: [&str; 4] = [
    "a_panel_reuse",
    "swizzle",
    "window_wait_cycles",
    "overlap_cycles",
];

fn json(args: &[&str]) -> Value {
    let mut v = vec!["gemm", "--json"];
    v.extend_from_slice(args);
    let out = tcrtl(&v);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

#[test]
fn ws_reports_have_no_os_only_memory_key() {
    let problems: [&[&str]; 3] = [
        &["--m", "6", "--n", "5", "--k", "24"],
        &["--m", "6", "--n", "5", "--k", "24", "--sparse"],
        &["--m", "6", "--n", "5", "--k", "24", "--format", "s8"],
    ];
    for p in problems {
        for memory in ["ideal", "tma"] {
            let with =
                |dataflow: &str| json(&[p, &["--dataflow", dataflow, "--memory", memory]].concat());
            let (ws, os) = (with("ws"), with("os"));
            assert_eq!(ws["dataflow"], "ws");
            let (wm, om) = (&ws["memory"], &os["memory"]);
            assert_eq!(wm["path"], memory, "{p:?}");
            assert_eq!(om["path"], memory, "{p:?}");
            for key in OS_ONLY {
                assert!(wm.get(key).is_none(), "{p:?} {memory}: ws has {key}: {wm}");
                assert!(ws.get(key).is_none(), "{p:?} {memory}: ws has {key}: {ws}");
            }
            if memory == "tma" {
                for key in OS_ONLY {
                    assert!(om.get(key).is_some(), "{p:?}: os lacks {key}: {om}");
                }
                assert!(wm["weight_stages"].as_u64() > Some(0), "{wm}");
                assert!(om.get("weight_stages").is_none(), "{om}");
                for key in ["bytes_loaded", "bytes_stored", "stages", "params"] {
                    assert!(wm.get(key).is_some(), "{p:?}: ws lacks {key}: {wm}");
                }
            } else {
                assert_eq!(wm["stall_cycles"], 0);
                assert_eq!(om["window_wait_cycles"], 0);
            }
        }
    }
}

#[test]
fn each_kind_of_problem_has_its_own_keys() {
    let float = json(&["--m", "4", "--n", "4", "--k", "8"]);
    let int = json(&["--m", "4", "--n", "4", "--k", "8", "--format", "s8"]);
    for key in ["preset", "gpu", "instr", "seed"] {
        assert!(float.get(key).is_some(), "float lacks {key}: {float}");
    }
    assert!(float.get("overflow").is_none() && float.get("block").is_none());
    assert_eq!(int["overflow"], "wrap");
    assert_eq!(int["out_format"], "int32");
    assert_eq!(int["seed"], 1);
    for key in ["preset", "gpu", "instr", "block", "sparse"] {
        assert!(int.get(key).is_none(), "int has {key}: {int}");
    }
    for j in [&float, &int] {
        for key in [
            "mac_slots_used",
            "mac_slots_offered",
            "flags",
            "memory",
            "check",
        ] {
            assert!(j.get(key).is_some(), "{key}: {j}");
        }
    }
}
