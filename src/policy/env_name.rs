//! The one check of an environment variable's name, shared by the grants
//! that name variables (`env`, `env_inherit`, `config_inherit` and an HTTP
//! secret header's `env`).

/// Refuses a name that cannot be an environment variable's.
pub(super) fn check_env_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.contains('=') || name.contains('\0') {
        return Err(format!("'{name}' is not a valid environment variable name"));
    }
    Ok(())
}
