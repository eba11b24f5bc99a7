//! The command line's arguments (clap).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Run LLM tools compiled to WebAssembly components, each call in a fresh sandbox.
///
/// Without --config, toolhost reads ./toolhost.toml if it exists, else it
/// serves the bundled example tools (calc, text, json).
#[derive(Debug, Parser)]
#[command(name = "toolhost", version, about, long_about = None)]
pub struct Cli {
    /// The config file (default: ./toolhost.toml, else the bundled tools).
    #[arg(long, short = 'c', global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Activate tools matching PATTERN ahead of every config rule (repeatable).
    #[arg(long, global = true, value_name = "PATTERN")]
    pub activate: Vec<String>,

    /// Compile every component anew instead of using the on-disk compile cache.
    #[arg(long, global = true)]
    pub no_cache: bool,

    /// Where compiled components are kept (default: $XDG_CACHE_HOME/toolhost,
    /// else ~/.cache/toolhost). Must be a directory only you can write.
    #[arg(long, global = true, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Deactivate tools matching PATTERN ahead of every config rule (repeatable;
    /// applied after --activate, so it wins for a name given to both).
    #[arg(long, global = true, value_name = "PATTERN")]
    pub deactivate: Vec<String>,

    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every tool: exposed name, active or not, description.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Also show each module's grants and limits (never environment values).
        #[arg(long, short = 'v')]
        verbose: bool,
    },
    /// Print the JSON array of active tool schemas (what an application sends to a model).
    Schemas,
    /// Call one tool and print its result (exit 1 if the result is an error).
    Call {
        /// The exposed tool name, e.g. calc_evaluate.
        name: String,
        /// The arguments as a JSON object (default: {}).
        arguments: Option<String>,
    },
    /// Read an OpenAI tool call, an assistant message with tool_calls, or an
    /// array of tool calls from stdin; print the tool message(s) as JSON.
    Dispatch,
    /// Compile every module of the config into the compile cache ahead of
    /// time (in parallel), and say which were compiled and which were cached.
    Compile,
    /// Load every module and say which loaded and which did not, and why;
    /// exit 2 if any did not (for CI and deploy checks).
    Check,
    /// Serve the tools over the Model Context Protocol: on stdio (as MCP
    /// clients launch servers), or with --http ADDR as streamable HTTP at
    /// /mcp. Reloads when the config or a module changes, and on SIGHUP.
    Serve {
        /// Serve streamable HTTP on this address (for example
        /// 127.0.0.1:8080) instead of stdio.
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
        /// A file whose first line is the bearer token HTTP clients must
        /// send (default: the TOOLHOST_TOKEN variable; required when ADDR is
        /// not a loopback address).
        #[arg(long, value_name = "FILE", requires = "http")]
        token_file: Option<PathBuf>,
    },
    /// Show a component's tools, WASI imports, size and compile time; with
    /// --config, also what the config grants it and its limits.
    Inspect {
        /// The component file, or the name of a module in the config (or a
        /// bundled module).
        file: PathBuf,
    },
    /// Fetch every OCI module of the config into the pull store ahead of
    /// time (verifying signatures where a [[trust]] rule applies), so that
    /// later loads need no registry (for images and air-gapped nodes).
    Pull,
    /// Resolve every OCI module's tag to its manifest digest (verifying
    /// signatures where a rule applies) and write toolhost.lock beside the
    /// config; modules already locked keep their digest.
    Lock {
        /// Re-resolve the MODULEs named (every OCI module if none is named).
        #[arg(long)]
        update: bool,
        /// Modules to re-resolve (with --update).
        #[arg(requires = "update", value_name = "MODULE")]
        modules: Vec<String>,
    },
    /// Push a component to an OCI registry in the layout `wkg oci push`
    /// writes, optionally with a cosign signature; prints its digest.
    Push {
        /// The component file.
        file: PathBuf,
        /// Where: REGISTRY/REPOSITORY:TAG.
        reference: String,
        /// Sign it with this private key (PKCS#8 PEM: ECDSA P-256/P-384 or
        /// Ed25519), as cosign's legacy format (tag sha256-<hex>.sig).
        #[arg(long, value_name = "KEY.pem")]
        sign_key: Option<PathBuf>,
    },
    /// Print a reference's manifest digest and, for each [[trust]] rule of
    /// the config covering it, the verdict (exit 1 if the rule in force
    /// finds no valid signature).
    Verify {
        /// REGISTRY/REPOSITORY:TAG or REGISTRY/REPOSITORY@sha256:HEX.
        reference: String,
    },
    /// Compile one component from stdin to stdout (run by toolhost itself,
    /// in a child process, so that compile limits hold).
    #[command(hide = true)]
    CompileWorker {
        /// The wasm stack size and the address-space limit, in bytes.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
}
