//! The subcommands. Each returns the exit code, or an error for exit 2.

use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use toolhost::config::LoadedConfig;
use toolhost::{Limits, Runtime, Tool, ToolManager, WasmModule};

use super::EXIT_TOOL_ERROR;

/// The most bytes `dispatch` reads from stdin.
const MAX_STDIN_BYTES: u64 = 64 * 1024 * 1024;

/// What every command that serves tools starts from: the config and the
/// operator's overrides from the command line.
pub struct Setup<'a> {
    pub config: Option<&'a Path>,
    pub activate: &'a [String],
    pub deactivate: &'a [String],
    pub compile_cache: bool,
}

impl Setup<'_> {
    /// The runtime: with the compile cache unless it is turned off or cannot
    /// be set up (then every run compiles anew, with a warning).
    fn runtime(&self) -> anyhow::Result<Runtime> {
        if self.compile_cache {
            match Runtime::with_compile_cache() {
                Ok(runtime) => return Ok(runtime),
                Err(e) => tracing::warn!("compile cache unavailable, compiling every time: {e:#}"),
            }
        }
        Runtime::new().context("cannot start the WebAssembly runtime")
    }
}

fn manager(setup: &Setup<'_>) -> anyhow::Result<ToolManager> {
    let loaded = LoadedConfig::discover(setup.config)?;
    let runtime = setup.runtime()?;
    let manager = loaded.build_manager(&runtime)?;
    for pattern in setup.activate {
        manager.activate_tool(pattern).context("--activate")?;
    }
    for pattern in setup.deactivate {
        manager.deactivate_tool(pattern).context("--deactivate")?;
    }
    Ok(manager)
}

fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()?;
    Ok(())
}

fn exit_for(failed: bool) -> ExitCode {
    if failed {
        ExitCode::from(EXIT_TOOL_ERROR)
    } else {
        ExitCode::SUCCESS
    }
}

pub fn list(setup: &Setup<'_>, as_json: bool) -> anyhow::Result<ExitCode> {
    let manager = manager(setup)?;
    if as_json {
        let rows: Vec<Value> = manager
            .registered()
            .map(|t| {
                json!({
                    "name": t.info.name,
                    "active": manager.check_tool_status(&t.info.name),
                    "description": t.info.description,
                })
            })
            .collect();
        print(&serde_json::to_string_pretty(&rows)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let width = manager
        .registered()
        .map(|t| t.info.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    print(&format!("{:width$}  {:8}  DESCRIPTION", "NAME", "STATUS"))?;
    for tool in manager.registered() {
        let status = if manager.check_tool_status(&tool.info.name) {
            "active"
        } else {
            "inactive"
        };
        let summary = tool.info.description.lines().next().unwrap_or("");
        print(&format!("{:width$}  {status:8}  {summary}", tool.info.name))?;
    }
    Ok(ExitCode::SUCCESS)
}

pub fn schemas(setup: &Setup<'_>) -> anyhow::Result<ExitCode> {
    let manager = manager(setup)?;
    print(&serde_json::to_string_pretty(&manager.tool_infos())?)?;
    Ok(ExitCode::SUCCESS)
}

pub fn call(setup: &Setup<'_>, name: &str, arguments: Option<&str>) -> anyhow::Result<ExitCode> {
    let manager = manager(setup)?;
    let arguments = arguments.map(|a| Value::String(a.to_string()));
    match manager.call_tool(name, arguments.as_ref()) {
        Ok(result) => {
            print(&result)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            print(&error.to_string())?;
            Ok(exit_for(true))
        }
    }
}

pub fn dispatch(setup: &Setup<'_>) -> anyhow::Result<ExitCode> {
    let mut input = String::new();
    std::io::stdin()
        .take(MAX_STDIN_BYTES + 1)
        .read_to_string(&mut input)
        .context("cannot read stdin")?;
    if input.len() as u64 > MAX_STDIN_BYTES {
        bail!("stdin is larger than {MAX_STDIN_BYTES} bytes");
    }
    let value: Value = serde_json::from_str(&input)
        .context("stdin is not JSON: give a tool call, an assistant message with tool_calls, or an array of tool calls")?;
    let manager = manager(setup)?;
    let single = value.get("function").is_some() && value.get("tool_calls").is_none();
    let messages = manager
        .call_message(&value)
        .map_err(|e| anyhow::anyhow!("{}", e.message()))?;
    let failed = messages.iter().any(|m| {
        m["content"]
            .as_str()
            .is_some_and(|c| c.starts_with("Error: "))
    });
    let output = if single {
        messages[0].clone()
    } else {
        Value::Array(messages)
    };
    print(&serde_json::to_string_pretty(&output)?)?;
    Ok(exit_for(failed))
}

pub fn inspect(setup: &Setup<'_>, file: &Path) -> anyhow::Result<ExitCode> {
    let limits = match setup.config {
        Some(path) => toolhost::config::Config::from_file(path)?.limits,
        None => Limits::default(),
    };
    // Always compile here: the compile time is part of what inspect reports.
    let runtime = Runtime::new().context("cannot start the WebAssembly runtime")?;
    let module = WasmModule::from_file(&runtime, file, None, limits)?;
    print(&format!("module:       {}", module.name()))?;
    print(&format!("file:         {}", file.display()))?;
    print(&format!("size:         {} bytes", module.size()))?;
    print(&format!(
        "compile time: {:.1} ms",
        module.compile_time().as_secs_f64() * 1000.0
    ))?;
    print("imports:")?;
    if module.imports().is_empty() {
        print("  (none)")?;
    }
    for import in module.imports() {
        print(&format!("  {import}"))?;
    }
    print("tools:")?;
    for info in module.infos() {
        let local = module.local_name(&info.name).unwrap_or(&info.name);
        print(&format!("  {} (local name '{local}')", info.name))?;
        for line in info.description.lines() {
            print(&format!("    {line}"))?;
        }
        print(&format!("    parameters: {}", info.parameters))?;
    }
    Ok(ExitCode::SUCCESS)
}
