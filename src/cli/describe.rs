//! How the CLI shows a module's grants and limits (environment values never).

use serde_json::{Value, json};
use toolhost::{DirMode, Grants, Limits};

/// One line per granted capability, or `nothing` when none is.
pub fn grant_lines(grants: &Grants) -> Vec<String> {
    let mut lines = Vec::new();
    for dir in &grants.dirs {
        let mode = match dir.mode {
            DirMode::Ro => "read-only",
            DirMode::Rw => "read-write",
        };
        lines.push(format!(
            "directory {} -> {} ({mode})",
            dir.guest,
            dir.host.display()
        ));
    }
    for name in env_names(grants, false) {
        lines.push(format!("env {name} (value set in the config)"));
    }
    for name in env_names(grants, true) {
        lines.push(format!(
            "env {name} (inherited from toolhost's environment)"
        ));
    }
    for endpoint in &grants.network.allow {
        lines.push(format!("network: outbound TCP to {endpoint}"));
    }
    if grants.symlinks {
        lines.push("symlinks: may create links inside its read-write directories".into());
    }
    if lines.is_empty() {
        lines.push("nothing (no files, environment, network or stdin)".into());
    }
    lines
}

/// Names of the environment variables granted, set in the config or inherited.
fn env_names(grants: &Grants, inherited: bool) -> Vec<&str> {
    if inherited {
        return grants.env_inherit.iter().map(String::as_str).collect();
    }
    grants
        .env
        .keys()
        .filter(|k| !grants.env_inherit.contains(k))
        .map(String::as_str)
        .collect()
}

/// `key = value` per limit, marked `*` where it differs from the default.
pub fn limit_lines(limits: &Limits) -> Vec<String> {
    let defaults = Limits::default().values();
    limits
        .values()
        .iter()
        .zip(defaults)
        .map(|((key, value), (_, default))| {
            let mark = if *value == default { "" } else { " *" };
            format!("{key} = {value}{mark}")
        })
        .collect()
}

/// Grants as JSON for `list --json --verbose`, with variable names only.
pub fn grants_json(grants: &Grants) -> Value {
    let dirs: Vec<Value> = grants
        .dirs
        .iter()
        .map(|d| json!({"host": d.host, "guest": d.guest, "mode": d.mode}))
        .collect();
    json!({
        "dirs": dirs,
        "env": env_names(grants, false),
        "env_inherit": env_names(grants, true),
        "network": {"allow": grants.network.allow},
        "symlinks": grants.symlinks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_values_are_never_shown() {
        let grants = Grants {
            env: [
                ("UNITS".to_string(), "metric".to_string()),
                ("API_KEY".to_string(), "s3cret".to_string()),
            ]
            .into(),
            env_inherit: vec!["API_KEY".into()],
            ..Grants::default()
        };
        let text = format!("{:?} {}", grant_lines(&grants), grants_json(&grants));
        assert!(
            !text.contains("metric") && !text.contains("s3cret"),
            "{text}"
        );
        assert!(text.contains("env UNITS (value set in the config)"));
        assert!(text.contains("env API_KEY (inherited"));
        assert_eq!(
            grant_lines(&Grants::default()),
            ["nothing (no files, environment, network or stdin)"]
        );
    }

    #[test]
    fn changed_limits_are_marked() {
        let limits = Limits {
            fuel: 5,
            ..Limits::default()
        };
        let lines = limit_lines(&limits);
        assert_eq!(lines[0], "fuel = 5 *");
        assert_eq!(lines[1], "timeout_ms = 10000");
    }
}
