//! `cargo xtask`: builds the example tools written in Python, JavaScript
//! and C, with toolchains pinned by the repository and installed into
//! `.toolchains/`, and the Rust examples toolhost does not bundle.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::builder::PossibleValue;
use clap::{Parser, Subcommand, ValueEnum};
use xtask::{
    JsFeature, Language, McpClient, RUST_EXAMPLES, Repo, build_js_component, build_named_example,
    build_python_component, build_qjs_component, build_rust_example, componentize,
    install_mcp_client, install_python_test_env, install_toolchain, regenerate_c_bindings,
    test_sdk,
};
use xtask::{build_wheels, test_wheels};

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "Builds toolhost's example tools: Python, JavaScript, C, and Rust ones not bundled"
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
    /// Installs the pinned MCP client SDKs and agent frameworks that the
    /// tests of `toolhost serve` drive into .toolchains/mcp-<client>/ (all
    /// unless some are named).
    McpClients { clients: Vec<McpClient> },
    /// Installs the pinned tools the Python package's tests run with
    /// (pytest, mypy) into .toolchains/python-package/.
    PythonTestEnv,
    /// Prints the map of the source: what each layer of the library
    /// imports, and the circles among the files of each folder of the
    /// crates (ARCHITECTURE.md; `xtask/tests/layers.rs` checks them).
    Layers,
    /// Builds the example tools into target/example-tools/ (installing
    /// toolchains as needed; all unless some are named):
    /// `example-tools/toolhost.toml` loads the Python, JavaScript and C ones,
    /// `example-tools/fetch.toml` the Rust `fetch`. A Python or JavaScript
    /// example whose sources, SDK, WIT and toolchain have not changed since
    /// its last build is kept.
    BuildExamples { examples: Vec<Examples> },
    /// Builds the wheels a user installs without Rust into target/wheels/:
    /// the Python package `toolhost` (CPython 3.9+, abi3) and the command
    /// `toolhost-cli`, both manylinux_2_28 x86_64 with the bundled tools,
    /// with the pinned maturin and zig (installed into
    /// .toolchains/wheel-tools/).
    Wheels {
        /// Then install each into a fresh virtual environment, away from
        /// the source tree and with no Rust on PATH, and check it there.
        #[arg(long)]
        test: bool,
    },
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
    /// Builds one tool module from source (a test tool in tests/guests-js/
    /// or tests/guests-py/, say), as the integration tests do.
    BuildTool {
        /// What builds it.
        #[arg(long, value_enum)]
        with: Builder,
        /// The JavaScript file, or the folder of the Python module `app.py`.
        source: PathBuf,
        /// Where to write the component.
        output: PathBuf,
        /// ComponentizeJS: the engine features to leave out (default: none).
        #[arg(long, value_enum, num_args = 1..)]
        disable: Vec<JsFeature>,
        /// componentize-py: the WIT folders, resolved together (default: wit/).
        #[arg(long)]
        wit: Vec<PathBuf>,
        /// componentize-py: the world, in full when there are several
        /// packages (default: tool).
        #[arg(long)]
        world: Option<String>,
    },
}

/// What `build-examples` builds.
#[derive(Clone, Copy)]
enum Examples {
    /// The Rust examples toolhost does not bundle ([`RUST_EXAMPLES`]).
    Rust,
    /// One language's example.
    Of(Language),
}

impl ValueEnum for Examples {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            Examples::Rust,
            Examples::Of(Language::Python),
            Examples::Of(Language::JavaScript),
            Examples::Of(Language::C),
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        match self {
            Examples::Rust => Some(
                PossibleValue::new("rust")
                    .help("cargo: the Rust examples toolhost does not bundle (fetch)"),
            ),
            Examples::Of(language) => language.to_possible_value(),
        }
    }
}

/// What builds a tool module for `build-tool`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Builder {
    /// ComponentizeJS (StarlingMonkey).
    Js,
    /// jco's QuickJS backend (componentize-qjs), default options.
    Qjs,
    /// componentize-py.
    Python,
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
        Task::Layers => xtask::layers::map(repo.root())
            .map(|map| print!("{map}"))
            .map_err(anyhow::Error::from),
        Task::PythonTestEnv => install_python_test_env(&repo).map(|dir| {
            println!("Python package test tools: {}", dir.display());
        }),
        Task::BuildExamples { examples } => {
            let all = if examples.is_empty() {
                Examples::value_variants()
            } else {
                &examples[..]
            };
            all.iter().try_for_each(|examples| match examples {
                Examples::Rust => RUST_EXAMPLES.iter().try_for_each(|package| {
                    let component = build_rust_example(&repo, package)?;
                    println!("Rust ({package}): {}", component.display());
                    Ok(())
                }),
                Examples::Of(language) => language.examples().iter().try_for_each(|example| {
                    let component = build_named_example(&repo, *example)?;
                    println!("{language}: {}", component.display());
                    Ok(())
                }),
            })
        }
        Task::Wheels { test } => wheels(&repo, test),
        Task::CBindings => regenerate_c_bindings(&repo).map(|dir| {
            println!("C bindings: {}", dir.display());
        }),
        Task::Componentize { input, output } => componentize_file(&input, &output),
        Task::TestSdk { languages } => each(&languages, |language| {
            print!("{}", test_sdk(&repo, language)?);
            Ok(())
        }),
        Task::BuildTool {
            with,
            source,
            output,
            disable,
            wit,
            world,
        } => {
            // Built each time: a file given here may import others that
            // the record of its inputs does not cover.
            let built = xtask::forget_inputs(&output).and_then(|()| match with {
                Builder::Js => build_js_component(&repo, &source, &output, &disable),
                Builder::Qjs => build_qjs_component(&repo, &source, &output),
                Builder::Python => {
                    let wit = if wit.is_empty() {
                        vec![repo.wit_dir()]
                    } else {
                        wit
                    };
                    let wit: Vec<&Path> = wit.iter().map(PathBuf::as_path).collect();
                    let world = world.as_deref().unwrap_or("tool");
                    build_python_component(&repo, &source, &wit, world, &output)
                }
            });
            built.map(|component| println!("{}", component.display()))
        }
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

/// `cargo xtask wheels [--test]`: builds, then (with `--test`) checks.
fn wheels(repo: &Repo, test: bool) -> anyhow::Result<()> {
    let built = build_wheels(repo)?;
    for wheel in &built {
        println!(
            "{}: {:.1} MiB, built in {:.0} s",
            wheel.path.display(),
            wheel.bytes as f64 / (1024.0 * 1024.0),
            wheel.seconds
        );
    }
    if test {
        for checked in test_wheels(repo, &built)? {
            println!(
                "{}: installed in {:.1} s and checked: {}",
                checked.wheel, checked.install_seconds, checked.seen
            );
        }
    }
    Ok(())
}
