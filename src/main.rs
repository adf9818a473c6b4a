//! `tcrtl`: the command-line front end.
fn main() {
    std::process::exit(tensorcore_rtl_cli_main());
}

fn tensorcore_rtl_cli_main() -> i32 {
    0
}
