//! The `toolhost` command: list, describe and call sandboxed WebAssembly
//! tools. A thin layer over the `toolhost` library: arguments (`args.rs`),
//! exit codes (`exit.rs`),
//! the config, runtime and modules every command starts from (`setup.rs`),
//! one function per subcommand (`commands.rs`), and how grants and limits
//! are shown (`describe.rs`).

mod args;
mod commands;
mod describe;
mod exit;
mod oci;
mod serve;
mod setup;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    init_logging();
    let args = args::Cli::parse();
    match run(args) {
        Ok(code) => code,
        // The reader went away (`toolhost list | head`): nothing to report.
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("toolhost: {}", error_text(&error));
            ExitCode::from(exit::EXIT_USAGE)
        }
    }
}

/// Runs the parsed command; `Err` is a usage or config error (exit 2).
fn run(cli: args::Cli) -> anyhow::Result<ExitCode> {
    let setup = setup::Setup {
        config: cli.config.as_deref(),
        activate: &cli.activate,
        deactivate: &cli.deactivate,
        compile_cache: !cli.no_cache,
        cache_dir: cli.cache_dir.as_deref(),
    };
    match &cli.command {
        args::Command::List { json, verbose } => commands::list(&setup, *json, *verbose),
        args::Command::Schemas => commands::schemas(&setup),
        args::Command::Call { name, arguments } => {
            commands::call(&setup, name, arguments.as_deref())
        }
        args::Command::Dispatch => commands::dispatch(&setup),
        args::Command::Compile => commands::compile(&setup),
        args::Command::Check => commands::check(&setup),
        args::Command::Serve { http, token_file } => {
            serve::serve(&setup, *http, token_file.as_deref())
        }
        args::Command::Inspect { file } => commands::inspect(&setup, file),
        args::Command::Pull => oci::pull(&setup),
        args::Command::Lock { update, modules } => oci::lock(&setup, *update, modules),
        args::Command::Push {
            file,
            reference,
            sign_key,
        } => oci::push(&setup, file, reference, sign_key.as_deref()),
        args::Command::Verify { reference } => oci::verify(&setup, reference),
        args::Command::CompileWorker { args } => Ok(toolhost::serve_compile_worker(args.clone())),
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
