//! The subcommands. Each returns the exit code, or an error for exit 2.

use std::io::{IsTerminal, Read, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use toolhost::config::{LoadedConfig, ModuleEntry};
use toolhost::{
    Compiled, ModuleSource, Runtime, Tool, WasmModule, bundled_module, escape_controls, openai,
};

use crate::describe::{access_json, access_lines, limit_lines};
use crate::exit::{EXIT_USAGE, exit_for};
use crate::setup::{Setup, runtime_builder, warn_failures};

/// The most bytes `dispatch` reads from stdin.
const MAX_STDIN_BYTES: u64 = 64 * 1024 * 1024;

fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()?;
    Ok(())
}

/// A tool's answer for stdout: as it is for a pipe or a file; on a terminal,
/// each line with its control characters escaped, so that an answer cannot
/// move the cursor or rewrite what is already on the screen.
fn for_terminal(text: &str) -> String {
    if !std::io::stdout().is_terminal() {
        return text.to_string();
    }
    text.split('\n')
        .map(|line| escape_controls(line).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn list(setup: &Setup<'_>, as_json: bool, verbose: bool) -> anyhow::Result<ExitCode> {
    let served = setup.serve()?;
    let manager = &served.manager;
    let modules: Vec<(&ModuleEntry, &WasmModule)> = served
        .report
        .modules
        .iter()
        .map(|m| (&m.entry, &m.module))
        .collect();
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
        let output = if verbose {
            let modules: Vec<Value> = modules
                .iter()
                .map(|(entry, module)| {
                    json!({
                        "name": module.name(),
                        "source": entry.describe_source(),
                        "grants": access_json(module.access()),
                        "limits": module.limits(),
                        "warm": module.warm().map(|w| json!({"max_calls": w.max_calls})),
                        "sessions": module.sessions().map(|n| json!({"max_calls": n})),
                        "left_out": left_out_json(module),
                    })
                })
                .collect();
            json!({"tools": rows, "modules": modules})
        } else {
            Value::Array(rows)
        };
        print(&serde_json::to_string_pretty(&output)?)?;
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
        let summary = escape_controls(summary);
        print(&format!("{:width$}  {status:8}  {summary}", tool.info.name))?;
    }
    if verbose {
        for (entry, module) in &modules {
            print("")?;
            print(&format!(
                "module {} ({})",
                module.name(),
                entry.describe_source()
            ))?;
            print_section("granted", &access_lines(module.access()))?;
            print_section(
                "limits (* = not the default)",
                &limit_lines(module.limits()),
            )?;
            print_section("instances", &[instance_line(module)])?;
            if !module.left_out().is_empty() {
                print_section("left out (not tools)", &left_out_lines(module))?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The exported functions a component written for another host does not
/// offer as tools, each with why.
pub fn left_out_lines(module: &WasmModule) -> Vec<String> {
    module
        .left_out()
        .iter()
        .map(|l| escape_controls(&format!("{}: {}", l.function, l.reason)).into_owned())
        .collect()
}

fn left_out_json(module: &WasmModule) -> Value {
    module
        .left_out()
        .iter()
        .map(|l| json!({"function": l.function, "reason": l.reason}))
        .collect()
}

/// How a module's calls get their instances.
fn instance_line(module: &WasmModule) -> String {
    let mut line = match module.warm() {
        Some(warm) => format!(
            "warm: each instance serves up to {} calls (state is kept between calls)",
            warm.max_calls
        ),
        None => "a fresh instance for every call".to_string(),
    };
    if let Some(max_calls) = module.sessions() {
        line.push_str(&format!(
            "; sessions: a call in a session runs in that session's own instance (up to {max_calls} calls each)"
        ));
    }
    line
}

fn print_section(title: &str, lines: &[String]) -> anyhow::Result<()> {
    print(&format!("  {title}:"))?;
    for line in lines {
        print(&format!("    {line}"))?;
    }
    Ok(())
}

pub fn schemas(setup: &Setup<'_>) -> anyhow::Result<ExitCode> {
    let manager = setup.serve()?.manager;
    print(&serde_json::to_string_pretty(&manager.tool_infos())?)?;
    Ok(ExitCode::SUCCESS)
}

pub fn call(setup: &Setup<'_>, name: &str, arguments: Option<&str>) -> anyhow::Result<ExitCode> {
    let manager = setup.serve()?.manager;
    let arguments = arguments.map(|a| Value::String(a.to_string()));
    match manager.call_tool(name, arguments.as_ref()) {
        Ok(result) => {
            print(&for_terminal(&result))?;
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            print(&for_terminal(&error.to_string()))?;
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
    // Read only as far as needed: no tree is built of the input, and each
    // call's arguments reach its tool as the text they are.
    let raw: &RawValue = serde_json::from_str(&input)
        .context("stdin is not JSON: give a tool call, an assistant message with tool_calls, or an array of tool calls")?;
    let manager = setup.serve()?.manager;
    let single = openai::is_one_call(raw);
    let answers = manager
        .call_message_json_answers(raw.get())
        .map_err(|e| anyhow::anyhow!("{}", e.message()))?;
    let failed = answers.iter().any(|a| a.error().is_some());
    let messages: Vec<Value> = answers.into_iter().map(|a| a.into_message()).collect();
    let output = if single {
        messages[0].clone()
    } else {
        Value::Array(messages)
    };
    print(&serde_json::to_string_pretty(&output)?)?;
    Ok(exit_for(failed))
}

pub fn compile(setup: &Setup<'_>) -> anyhow::Result<ExitCode> {
    let loaded = setup.config()?;
    let runtime = setup.runtime(&loaded)?;
    let Some(cache) = runtime.cache() else {
        bail!(
            "the compile cache is off (--no-cache or [cache] enabled = false) or unavailable \
             (see the warning above); nothing to fill"
        );
    };
    let started = std::time::Instant::now();
    let report = loaded.load_report(&runtime, &[]);
    warn_failures(&report);
    let modules: Vec<&WasmModule> = report.modules.iter().map(|m| &m.module).collect();
    for module in &modules {
        let how = match module.compiled() {
            Compiled::Fresh => "compiled",
            Compiled::Cached => "cached",
        };
        print(&format!(
            "{:16} {how:8} {:8.1} ms  {} bytes",
            module.name(),
            module.compile_time().as_secs_f64() * 1000.0,
            module.size()
        ))?;
    }
    print(&format!(
        "{} modules in {:.1} s; cache: {}",
        modules.len(),
        started.elapsed().as_secs_f64(),
        cache.dir().display()
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// Loads every module and says which loaded and which did not, and why;
/// exit 2 if any did not (for CI and deploy checks).
pub fn check(setup: &Setup<'_>) -> anyhow::Result<ExitCode> {
    let loaded = setup.config()?;
    let runtime = setup.runtime(&loaded)?;
    let mut report = loaded.load_report(&runtime, &[]);
    let manager = loaded.manager_for_report(&mut report);
    for module in &report.modules {
        let tools = module.module.infos().len();
        print(&format!("ok      {} ({tools} tools)", module.module.name()))?;
    }
    for failure in &report.failures {
        print(&format!(
            "failed  {}",
            escape_controls(&failure.to_string())
        ))?;
    }
    print(&format!(
        "{} of {} modules loaded, {} tools",
        report.modules.len(),
        report.modules.len() + report.failures.len(),
        manager.names().len()
    ))?;
    Ok(if report.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_USAGE)
    })
}

pub fn inspect(setup: &Setup<'_>, file: &Path) -> anyhow::Result<ExitCode> {
    // Always compile here: the compile time is part of what inspect reports.
    let loaded = match setup.config {
        Some(path) => LoadedConfig::discover(Some(path))?,
        None => LoadedConfig::default(),
    };
    let runtime = runtime_builder(&loaded)?
        .build()
        .context("cannot start the WebAssembly runtime")?;
    let (module, note) = inspected_module(setup, &runtime, file)?;
    print(&format!("module:       {}", module.name()))?;
    print(&format!("file:         {}", file.display()))?;
    print(&format!("size:         {} bytes", module.size()))?;
    let runtime_line = module
        .producers()
        .runtime()
        .unwrap_or_else(|| "not recognisable (the component names no language)".into());
    print(&format!("runtime:      {}", escape_controls(&runtime_line)))?;
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
    print("granted:")?;
    match note {
        Some(note) => print(&format!("  nothing: {note}"))?,
        None => {
            for line in access_lines(module.access()) {
                print(&format!("  {line}"))?;
            }
        }
    }
    print("limits (* = not the default):")?;
    for line in limit_lines(module.limits()) {
        print(&format!("  {line}"))?;
    }
    let kind = if module.typed_exports() {
        "each exported function (written for another host, typed from its WIT)"
    } else {
        "tool-info and call (the toolhost:tool world)"
    };
    print(&format!("tools from:   {kind}"))?;
    print("tools:")?;
    for info in module.infos() {
        let local = module.local_name(&info.name).unwrap_or(&info.name);
        print(&format!("  {} (local name '{local}')", info.name))?;
        for line in info.description.lines() {
            print(&format!("    {}", escape_controls(line)))?;
        }
        print(&format!("    parameters: {}", info.parameters))?;
        if let Some(output) = info.output_schema() {
            print(&format!(
                "    outputSchema: {}",
                Value::Object(output.clone())
            ))?;
        }
    }
    if !module.left_out().is_empty() {
        print("left out (not tools):")?;
        for line in left_out_lines(&module) {
            print(&format!("  {line}"))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Loads what `inspect` shows: with `--config`, the config's module for
/// `file` (by path or name) with its grants and limits; otherwise the file
/// (or a bundled module) with default limits and nothing granted, and a note
/// saying why nothing is granted.
fn inspected_module(
    setup: &Setup<'_>,
    runtime: &Runtime,
    file: &Path,
) -> anyhow::Result<(WasmModule, Option<String>)> {
    let mut loaded = match setup.config {
        Some(path) => LoadedConfig::discover(Some(path))?,
        None => LoadedConfig::default(),
    };
    loaded.store_dir = setup.cache_dir.map(|dir| dir.join("oci"));
    if let Some(entry) = config_entry(&loaded, file) {
        let module = loaded.load_entry(runtime, &entry)?;
        return Ok((module, None));
    }
    let note = match setup.config {
        Some(config) => format!("it is not a module of {}", config.display()),
        None => "give --config FILE to see what a config grants it".to_string(),
    };
    let source = if file.exists() {
        ModuleSource::File(file.to_path_buf())
    } else if bundled_module(&file.to_string_lossy()).is_some() {
        ModuleSource::Bundled(file.to_string_lossy().into_owned())
    } else {
        bail!(
            "{} is neither a file nor a module of the config (or a bundled module)",
            file.display()
        )
    };
    let module = source.load(runtime, None, loaded.config.limits)?;
    Ok((module, Some(note)))
}

/// The config's entry for `file`: the same file, or a module of that name.
fn config_entry(loaded: &LoadedConfig, file: &Path) -> Option<ModuleEntry> {
    let wanted = file.canonicalize().ok();
    let base = loaded.base_dir();
    loaded.module_entries().into_iter().find(|entry| {
        let same_file = match (&entry.path, &wanted) {
            (Some(path), Some(wanted)) => {
                base.join(path).canonicalize().ok().as_ref() == Some(wanted)
            }
            _ => false,
        };
        same_file || entry.module_name().ok().as_deref() == file.to_str()
    })
}
