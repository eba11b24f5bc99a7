//! How the command shows what a module may reach and its limits
//! (environment values never).

use serde_json::{Value, json};
use toolhost::{Access, DirMode, Limits};

/// One line per granted capability, or `nothing` when none is.
pub fn access_lines(access: &Access) -> Vec<String> {
    let mut lines = Vec::new();
    for dir in &access.dirs {
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
    for name in access.env_set_in_config() {
        lines.push(format!("env {name} (value set in the config)"));
    }
    for name in &access.inherited {
        lines.push(format!(
            "env {name} (inherited from toolhost's environment)"
        ));
    }
    for endpoint in &access.endpoints {
        lines.push(format!("network: outbound TCP to {endpoint}"));
    }
    if access.symlinks {
        lines.push("symlinks: may create links inside its read-write directories".into());
    }
    if lines.is_empty() {
        lines.push("nothing (no files, environment, network or stdin)".into());
    }
    lines
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

/// What a module may reach, as JSON for `list --json --verbose`, with
/// variable names only.
pub fn access_json(access: &Access) -> Value {
    let dirs: Vec<Value> = access
        .dirs
        .iter()
        .map(|d| json!({"host": d.host, "guest": d.guest, "mode": d.mode}))
        .collect();
    let endpoints: Vec<String> = access.endpoints.iter().map(ToString::to_string).collect();
    json!({
        "dirs": dirs,
        "env": access.env_set_in_config().collect::<Vec<_>>(),
        "env_inherit": access.inherited,
        "network": {"allow": endpoints},
        "symlinks": access.symlinks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_values_are_never_shown() {
        let access = Access {
            env: [
                ("UNITS".to_string(), "metric".to_string()),
                ("API_KEY".to_string(), "s3cret".to_string()),
            ]
            .into(),
            inherited: vec!["API_KEY".into()],
            ..Access::default()
        };
        let text = format!("{:?} {}", access_lines(&access), access_json(&access));
        assert!(
            !text.contains("metric") && !text.contains("s3cret"),
            "{text}"
        );
        assert!(text.contains("env UNITS (value set in the config)"));
        assert!(text.contains("env API_KEY (inherited"));
        assert_eq!(
            access_lines(&Access::default()),
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
