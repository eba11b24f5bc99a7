//! `toolhost serve`: the config's tools as an MCP server, over stdio or
//! streamable HTTP (the `toolhost-mcp` crate).

use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use toolhost_mcp::{HttpOptions, Source};

use crate::setup::Setup;

/// The environment variable a bearer token may be given in.
pub const TOKEN_ENV: &str = "TOOLHOST_TOKEN";

/// Serves until the client goes away (stdio) or SIGTERM.
pub fn serve(
    setup: &Setup<'_>,
    http: Option<SocketAddr>,
    token_file: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let loaded = setup.config()?;
    let runtime = setup.runtime(&loaded)?;
    let activate = setup.activate.to_vec();
    let deactivate = setup.deactivate.to_vec();
    let overrides = Box::new(move |manager: &toolhost::ToolManager| {
        for pattern in &activate {
            manager.activate_tool(pattern).context("--activate")?;
        }
        for pattern in &deactivate {
            manager.deactivate_tool(pattern).context("--deactivate")?;
        }
        Ok(())
    });
    // A thread that goes idle starts the work calls left for later (see
    // `Runtime::on_idle`): after the answer is written, not before.
    let idle = runtime.clone();
    let source = Source::new(setup.config.map(Path::to_path_buf), runtime, overrides)
        .with_store_dir(setup.cache_dir.map(|dir| dir.join("oci")));
    let token = token(token_file)?;
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("toolhost-serve")
        .on_thread_park(move || idle.on_idle())
        .build()
        .context("cannot start the server's runtime")?;
    tokio.block_on(async move {
        match http {
            Some(addr) => toolhost_mcp::serve_http(source, HttpOptions { addr, token }).await,
            None => toolhost_mcp::serve_stdio(source).await,
        }
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The bearer token: from `--token-file` (its first line), else from
/// `TOOLHOST_TOKEN`; an empty one is refused.
fn token(file: Option<&Path>) -> anyhow::Result<Option<String>> {
    let token = match file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the token file {}", path.display()))?;
            Some(text.lines().next().unwrap_or("").trim().to_string())
        }
        None => std::env::var(TOKEN_ENV).ok(),
    };
    match token {
        Some(token) if token.is_empty() => {
            anyhow::bail!("the bearer token is empty: put one in --token-file or {TOKEN_ENV}")
        }
        token => Ok(token),
    }
}
