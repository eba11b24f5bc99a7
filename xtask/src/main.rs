//! `cargo xtask`: builds the example tools written in Python, JavaScript
//! and C, with toolchains pinned by the repository and installed into
//! `.toolchains/`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use xtask::{
    Language, McpClient, Repo, build_example, componentize, install_mcp_client,
    install_python_test_env, install_toolchain, regenerate_c_bindings, test_sdk,
};

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "Builds toolhost's Python, JavaScript and C example tools"
)]
struct Cli {
    /// Install the toolchains here instead of .toolchains/.
    #[arg(long, global = true, value_name = "DIR")]
    toolchains: Option<PathBuf>,
    #[command(subcommand)]
    command: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Installs the pinned toolchains into .toolchains/ (all languages
    /// unless some are named).
    Toolchains { languages: Vec<Language> },
    /// Installs the pinned MCP client SDKs that the tests of `toolhost
    /// serve` drive into .toolchains/mcp-<client>/ (all unless some are
    /// named).
    McpClients { clients: Vec<McpClient> },
    /// Installs the pinned tools the Python package's tests run with
    /// (pytest, mypy) into .toolchains/python-package/.
    PythonTestEnv,
    /// Builds the example tools into target/example-tools/ (installing
    /// toolchains as needed); `example-tools/toolhost.toml` loads them.
    BuildExamples { languages: Vec<Language> },
    /// Regenerates guest-sdk/c/bindings/ from wit/ with wit-bindgen-cli.
    CBindings,
    /// Makes a component of a core module built with the C SDK (what
    /// `wasm-tools component new` does).
    Componentize {
        /// The core module (`zig cc ... -o tool.core.wasm`).
        input: PathBuf,
        /// Where to write the component.
        output: PathBuf,
    },
    /// Runs the SDKs' own tests (guest-sdk/<lang>/tests/) natively, with
    /// the pinned toolchains (all languages unless some are named).
    TestSdk { languages: Vec<Language> },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut repo = Repo::from_manifest_dir();
    if let Some(dir) = &cli.toolchains {
        repo = repo.with_toolchains(dir);
    }
    let result = match cli.command {
        Task::Toolchains { languages } => each(&languages, |language| {
            let dir = install_toolchain(&repo, language)?;
            println!("{language}: {}", dir.display());
            Ok(())
        }),
        Task::McpClients { clients } => {
            let all = if clients.is_empty() {
                &McpClient::ALL[..]
            } else {
                &clients[..]
            };
            all.iter().try_for_each(|&client| {
                let dir = install_mcp_client(&repo, client)?;
                println!("{client} MCP client: {}", dir.display());
                Ok(())
            })
        }
        Task::PythonTestEnv => install_python_test_env(&repo).map(|dir| {
            println!("Python package test tools: {}", dir.display());
        }),
        Task::BuildExamples { languages } => each(&languages, |language| {
            let component = build_example(&repo, language)?;
            println!("{language}: {}", component.display());
            Ok(())
        }),
        Task::CBindings => regenerate_c_bindings(&repo).map(|dir| {
            println!("C bindings: {}", dir.display());
        }),
        Task::Componentize { input, output } => componentize_file(&input, &output),
        Task::TestSdk { languages } => each(&languages, |language| {
            print!("{}", test_sdk(&repo, language)?);
            Ok(())
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `task` for each language named, or every language if none is.
fn each(
    languages: &[Language],
    mut task: impl FnMut(Language) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let all = if languages.is_empty() {
        &Language::ALL[..]
    } else {
        languages
    };
    for &language in all {
        task(language)?;
    }
    Ok(())
}

/// `input` (a core module) as a component in `output`.
fn componentize_file(input: &Path, output: &Path) -> anyhow::Result<()> {
    let core = fs::read(input).with_context(|| format!("cannot read {}", input.display()))?;
    let component = componentize(&core)?;
    fs::write(output, &component).with_context(|| format!("cannot write {}", output.display()))?;
    println!("{} ({} bytes)", output.display(), component.len());
    Ok(())
}
