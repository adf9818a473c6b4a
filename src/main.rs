//! `tcrtl`: the command-line front end (see `src/cli/mod.rs`).

mod cli;

use tensorcore_rtl::io::output;

fn main() {
    output::begin_run();
    let result = cli::out::install_signal_cleanup().and_then(|()| cli::run());
    match result {
        Ok(code) => {
            output::end_run();
            std::process::exit(code)
        }
        Err(e) => {
            // A failed run leaves nothing new behind: partial files and the files it created.
            output::rollback();
            cli::out::error(&e);
            std::process::exit(2);
        }
    }
}
