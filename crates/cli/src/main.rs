//! The `toolhost` command: list, describe and call sandboxed WebAssembly
//! tools. A thin layer over the `toolhost` library: arguments (`args.rs`),
//! the config, runtime and modules every command starts from (`setup.rs`),
//! one function per subcommand (`commands.rs`), and how grants and limits
//! are shown (`describe.rs`).

mod args;
mod commands;
mod describe;
mod oci;
mod serve;
mod setup;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    init_logging();
    let args = args::Cli::parse();
    match args::run(args) {
        Ok(code) => code,
        // The reader went away (`toolhost list | head`): nothing to report.
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("toolhost: {}", error_text(&error));
            ExitCode::from(args::EXIT_USAGE)
        }
    }
}

/// An error for stderr. It may quote a tool module (a tool-info panic,
/// say), so each line has its control characters escaped, and lines after
/// the first are indented: none can pass for a line of toolhost's own.
fn error_text(error: &anyhow::Error) -> String {
    format!("{error:#}")
        .lines()
        .map(|line| toolhost::escape_controls(line).into_owned())
        .collect::<Vec<_>>()
        .join("\n  ")
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Logs go to stderr; `TOOLHOST_LOG` (for example `debug`) sets the level.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TOOLHOST_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}
