//! `pull`, `lock`, `push` and `verify`: OCI modules and their provenance.

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use toolhost::config::OciOutcome;
use toolhost::escape_controls;
use toolhost::oci::OciReference;
use toolhost::trust::SigningKey;

use crate::exit::{EXIT_TOOL_ERROR, EXIT_USAGE};
use crate::setup::Setup;

/// `reference` with the manifest digest it resolved to, written once: a
/// reference pinned by digest already ends with it.
fn pinned_reference(reference: &str, digest: &str) -> String {
    if reference.ends_with(&format!("@{digest}")) {
        reference.to_string()
    } else {
        format!("{reference}@{digest}")
    }
}

fn report(outcomes: &[OciOutcome], done: &str) -> ExitCode {
    let mut failed = 0;
    for outcome in outcomes {
        match &outcome.result {
            Ok(pin) => println!(
                "{:16} {done:8} {} ({} bytes; {})",
                outcome.module,
                pinned_reference(&outcome.reference, &pin.digest),
                pin.size,
                pin.verified
            ),
            Err(e) => {
                failed += 1;
                println!(
                    "{:16} failed   {}",
                    outcome.module,
                    escape_controls(&e.to_string())
                );
            }
        }
    }
    if outcomes.is_empty() {
        println!("no OCI modules in the config");
    }
    if failed > 0 {
        ExitCode::from(EXIT_USAGE)
    } else {
        ExitCode::SUCCESS
    }
}

pub fn pull(setup: &Setup<'_>) -> anyhow::Result<ExitCode> {
    let loaded = setup.config()?;
    let outcomes = loaded.pull_modules();
    let code = report(&outcomes, "pulled");
    if let Some(store) = loaded.pull_store() {
        println!("kept in {}", store.dir().display());
    }
    Ok(code)
}

pub fn lock(setup: &Setup<'_>, update: bool, modules: &[String]) -> anyhow::Result<ExitCode> {
    let loaded = setup.config()?;
    let update_all = update && modules.is_empty();
    let outcomes = loaded
        .lock_modules(modules, update_all)
        .map_err(anyhow::Error::msg)?;
    let code = report(&outcomes, "locked");
    let path = loaded.lock_path().unwrap_or_default();
    if code == ExitCode::SUCCESS {
        println!("wrote {}", path.display());
    } else {
        println!("{} left unchanged: a module failed", path.display());
    }
    Ok(code)
}

pub fn push(
    setup: &Setup<'_>,
    file: &Path,
    reference: &str,
    sign_key: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let loaded = setup.config()?;
    let reference: OciReference = reference.parse().map_err(anyhow::Error::msg)?;
    if reference.digest().is_some() {
        bail!(
            "push to a tag (REGISTRY/REPOSITORY:TAG), not a digest: the digest is what pushing makes"
        );
    }
    let key = sign_key
        .map(SigningKey::read)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let limit = loaded.config.limits.max_component_bytes;
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .with_context(|| format!("cannot read {}", file.display()))?
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", file.display()))?;
    if bytes.len() as u64 > limit {
        bail!(
            "{} is larger than max_component_bytes ({limit})",
            file.display()
        );
    }
    if !bytes.starts_with(b"\0asm") {
        bail!("{} is not a WebAssembly file", file.display());
    }
    let pushed = loaded
        .with_oci(|context| context.push(&bytes, &reference, key.as_ref()))
        .map_err(anyhow::Error::msg)?
        .map_err(anyhow::Error::new)?;
    println!("{}", pushed.digest);
    eprintln!(
        "toolhost: pushed {} bytes to {reference} ({}@{})",
        pushed.size,
        reference.repository_name(),
        pushed.digest
    );
    if let Some(tag) = &pushed.signature_tag {
        eprintln!(
            "toolhost: signed: cosign signature at {}:{tag}",
            reference.repository_name()
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn verify(setup: &Setup<'_>, reference: &str) -> anyhow::Result<ExitCode> {
    let loaded = setup.config()?;
    let reference: OciReference = reference.parse().map_err(anyhow::Error::msg)?;
    let text = reference.to_string();
    let outcome = loaded
        .with_oci(|context| {
            let (digest, evidence) = context.inspect(&reference)?;
            let verdicts: Vec<(String, Result<String, String>)> = context
                .trust
                .covering(&text)
                .into_iter()
                .map(|rule| {
                    let verdict = rule
                        .verify(&digest, &evidence)
                        .map(|v| v.how)
                        .map_err(|e| e.to_string());
                    (rule.describe(), verdict)
                })
                .collect();
            Ok::<_, toolhost::oci::OciError>((digest, verdicts))
        })
        .map_err(anyhow::Error::msg)?;
    let (digest, verdicts) = outcome.map_err(anyhow::Error::new)?;
    println!("reference {text}");
    println!("digest    {digest}");
    if verdicts.is_empty() {
        println!(
            "rules     none covers it (a module with it loads only when its digest is pinned)"
        );
        return Ok(ExitCode::SUCCESS);
    }
    let mut in_force_failed = false;
    for (i, (rule, verdict)) in verdicts.iter().enumerate() {
        let marker = if i == 0 { " (in force)" } else { "" };
        match verdict {
            Ok(how) => println!("rule      {rule}{marker}: verified: {how}"),
            Err(why) => {
                in_force_failed |= i == 0;
                println!(
                    "rule      {rule}{marker}: NOT verified: {}",
                    escape_controls(why)
                );
            }
        }
    }
    Ok(if in_force_failed {
        ExitCode::from(EXIT_TOOL_ERROR)
    } else {
        ExitCode::SUCCESS
    })
}
