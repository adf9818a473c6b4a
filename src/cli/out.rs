//! The process around the subcommands: standard output that cannot panic, one-line errors,
//! and cleanup of a run's uncommitted outputs on failure and on SIGINT/SIGTERM.
//!
//! - Every line a subcommand prints goes through [`line()`] (the `outln!` macro): a write error
//!   (`> /dev/full`) becomes a one-line error with exit code 2; a closed pipe (`| head`) ends
//!   the process quietly by SIGPIPE, as `ls | head` does.
//! - SIGINT and SIGTERM before the run's commit remove its temporaries and the folders it
//!   made (every target keeps its old content); during the commit they wait for it to finish.
//!   Then the process ends by the same signal ([`install_signal_cleanup`]).

use signal_hook::consts::{SIGINT, SIGPIPE, SIGTERM};
use signal_hook::low_level::emulate_default_handler;
use std::io::Write;
use tensorcore_rtl::io::output;

/// Writes one line to standard output (see the module documentation).
pub fn line(text: impl std::fmt::Display) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => closed_pipe(),
        Err(e) => Err(format!("cannot write to standard output: {e}")),
    }
}

/// Writes text that clap rendered (help, version) to standard output.
pub fn help(text: impl std::fmt::Display) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match write!(out, "{text}").and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => closed_pipe(),
        Err(e) => Err(format!("cannot write to standard output: {e}")),
    }
}

/// The reader of standard output has gone: end quietly, as the default SIGPIPE action would.
fn closed_pipe() -> ! {
    let _ = emulate_default_handler(SIGPIPE);
    std::process::exit(2)
}

/// Prints `error: MESSAGE` on standard error (ignoring a failing standard error).
pub fn error(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "error: {message}");
}

/// Starts a thread that, on SIGINT or SIGTERM, removes the run's uncommitted outputs and
/// ends the process by that signal.
pub fn install_signal_cleanup() -> Result<(), String> {
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
        .map_err(|e| format!("cannot install signal handlers: {e}"))?;
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            let _guard = output::clean_up_for_exit();
            let _ = emulate_default_handler(sig);
            std::process::exit(128 + sig);
        }
    });
    Ok(())
}
