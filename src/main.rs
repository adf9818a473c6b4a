//! `tcrtl`: the command-line front end (see `src/cli/mod.rs`).

mod cli;

use tensorcore_rtl::io::output;

fn main() {
    output::begin_run();
    let result = cli::out::install_signal_cleanup().and_then(|()| cli::run());
    match result {
        // Every output is committed together, at the very end (exit 0, or 1: a check failed).
        Ok(code) => match output::commit_run() {
            Ok(_) => std::process::exit(code),
            Err(e) => {
                // The command has already said what it wrote: say that it did not all land.
                output::rollback();
                cli::out::error(&format!(
                    "{e}; the outputs reported above are not all in place"
                ));
                std::process::exit(2);
            }
        },
        Err(e) => {
            // A failed run changes nothing: its temporaries and the folders it made are removed.
            output::rollback();
            cli::out::error(&e);
            std::process::exit(2);
        }
    }
}
