//! How the command shows what a module may reach and its limits
//! (environment values never).

use serde_json::{Value, json};
use toolhost::http::{HttpAccess, TlsRoots};
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
    for name in access.config_set_in_config() {
        lines.push(format!(
            "config {name} (wasi:config value set in the config)"
        ));
    }
    for name in &access.config_inherited {
        lines.push(format!(
            "config {name} (wasi:config value inherited from toolhost's environment)"
        ));
    }
    for endpoint in &access.endpoints {
        lines.push(format!("network: outbound TCP to {endpoint}"));
    }
    if access.symlinks {
        lines.push("symlinks: may create links inside its read-write directories".into());
    }
    lines.extend(http_lines(&access.http));
    if lines.is_empty() {
        lines.push("nothing (no files, environment, network or stdin)".into());
    }
    lines
}

/// The HTTP grant: each allowed origin and prefix, the methods, the roots
/// and the names (never the values) of the secret headers.
fn http_lines(http: &HttpAccess) -> Vec<String> {
    let mut lines = Vec::new();
    for allow in http.allow() {
        lines.push(format!("http: requests to {allow}"));
    }
    if http.is_empty() {
        return lines;
    }
    let methods = http.methods().map_or("any".to_string(), |m| m.join(", "));
    lines.push(format!("http: methods {methods}"));
    let roots = match http.roots() {
        TlsRoots::Bundled => "bundled (Mozilla's)",
        TlsRoots::Platform => "the platform's",
    };
    match http.ca_file() {
        Some(path) => lines.push(format!("http: TLS roots {roots} and {}", path.display())),
        None => lines.push(format!("http: TLS roots {roots}")),
    }
    for secret in http.secret_headers() {
        lines.push(format!(
            "http: header {} set by the host on requests to {} (value from env {}, never shown)",
            secret.name, secret.origin, secret.env
        ));
    }
    lines
}

/// The HTTP grant as JSON, header names only.
fn http_json(http: &HttpAccess) -> Value {
    let allow: Vec<Value> = http
        .allow()
        .iter()
        .map(|a| {
            json!({
                "origin": a.origin.to_string(),
                "path_prefix": a.path_prefix,
                "allow_private": a.allow_private,
            })
        })
        .collect();
    let headers: Vec<Value> = http
        .secret_headers()
        .iter()
        .map(|s| json!({"origin": s.origin.to_string(), "name": s.name, "env": s.env}))
        .collect();
    json!({
        "allow": allow,
        "methods": http.methods(),
        "roots": http.roots(),
        "ca_file": http.ca_file(),
        "secret_headers": headers,
    })
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
        "http": http_json(&access.http),
        "config": access.config_set_in_config().collect::<Vec<_>>(),
        "config_inherit": access.config_inherited,
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
            config: [
                ("region".to_string(), "eu-west".to_string()),
                ("DB_URL".to_string(), "postgres://hidden".to_string()),
            ]
            .into(),
            config_inherited: vec!["DB_URL".into()],
            ..Access::default()
        };
        let text = format!("{:?} {}", access_lines(&access), access_json(&access));
        assert!(
            !text.contains("metric")
                && !text.contains("s3cret")
                && !text.contains("eu-west")
                && !text.contains("hidden"),
            "{text}"
        );
        assert!(text.contains("env UNITS (value set in the config)"));
        assert!(text.contains("env API_KEY (inherited"));
        assert!(text.contains("config region (wasi:config value set in the config)"));
        assert!(text.contains("config DB_URL (wasi:config value inherited"));
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
