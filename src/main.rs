//! `tcrtl`: the command-line front end (see `src/cli/mod.rs`).

mod cli;

fn main() {
    match cli::run() {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
