//! The naming rules for modules and tools.
//!
//! A module name matches `[a-z][a-z0-9-]*`; a tool name from `tool-info`
//! matches `[A-Za-z0-9_-]+`; a tool is exposed as `<module>_<tool>`, at most
//! [`MAX_EXPOSED_NAME_LEN`] characters. Because module names have no
//! underscore, the first underscore of an exposed name always splits the
//! module from the tool, so no module can claim another module's names.

use std::path::Path;

/// The longest exposed tool name OpenAI accepts.
pub const MAX_EXPOSED_NAME_LEN: usize = 64;

/// Checks a module name; the error says what is wrong.
pub fn check_module_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    match chars.next() {
        None => return Err("module name is empty".into()),
        Some(c) if !c.is_ascii_lowercase() => {
            return Err(format!(
                "module name '{name}' must start with a lowercase letter a-z (name the module in the config: `name = \"...\"`)"
            ));
        }
        Some(_) => {}
    }
    if let Some(bad) = chars.find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Err(format!(
            "module name '{name}' contains '{bad}'; use only a-z, 0-9 and '-' (no '_': it separates module from tool)"
        ));
    }
    Ok(())
}

/// Checks a module-local tool name; the error says what is wrong.
pub fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("tool name is empty".into());
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(format!(
            "tool name '{}' contains {:?}; use only A-Z, a-z, 0-9, '_' and '-'",
            name.escape_debug(),
            bad
        ));
    }
    Ok(())
}

/// Checks an exposed name, the name a model calls a tool by: the
/// characters of a tool name, and at most [`MAX_EXPOSED_NAME_LEN`] of them.
pub fn check_exposed_name(name: &str) -> Result<(), String> {
    check_tool_name(name)?;
    if name.len() > MAX_EXPOSED_NAME_LEN {
        return Err(format!(
            "exposed name '{name}' is {} characters long; the limit is {MAX_EXPOSED_NAME_LEN}",
            name.len()
        ));
    }
    Ok(())
}

/// The exposed name of tool `tool` of module `module`, checked.
pub fn exposed_name(module: &str, tool: &str) -> Result<String, String> {
    let name = format!("{module}_{tool}");
    check_exposed_name(&name)?;
    Ok(name)
}

/// Splits an exposed name into (module, tool) at the first underscore.
pub fn split_exposed(name: &str) -> Option<(&str, &str)> {
    name.split_once('_')
}

/// The module name for the component file at `path`: its stem,
/// lowercased, with every character other than `a-z`, `0-9` and `-` (such
/// as `_` or `.`) turned into `-`.
///
/// The result may still be invalid (empty, or starting with a digit); then
/// the operator names the module in the config.
pub fn module_name_for_file(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy())
        .unwrap_or_default();
    module_name_from(&stem)
}

/// `text` lowercased, with every character other than `a-z`, `0-9` and `-`
/// turned into `-` (as [`module_name_for_file`] does with a file's stem).
pub fn module_name_from(text: &str) -> String {
    text.chars()
        .map(|c| c.to_ascii_lowercase())
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names() {
        assert!(check_module_name("math").is_ok());
        assert!(check_module_name("web-search2").is_ok());
        assert!(check_module_name("").is_err());
        assert!(check_module_name("2math").is_err());
        assert!(check_module_name("my_math").unwrap_err().contains("'_'"));
        assert!(check_module_name("Math").is_err());
    }

    #[test]
    fn tool_names() {
        assert!(check_tool_name("word_count").is_ok());
        assert!(check_tool_name("A-b_9").is_ok());
        assert!(check_tool_name("").is_err());
        assert!(check_tool_name("a b").is_err());
        assert!(check_tool_name("a.b").is_err());
        assert!(check_tool_name("é").is_err());
    }

    #[test]
    fn exposed_names_split_at_first_underscore() {
        assert_eq!(
            exposed_name("text", "word_count").unwrap(),
            "text_word_count"
        );
        assert_eq!(
            split_exposed("text_word_count"),
            Some(("text", "word_count"))
        );
        let long = "x".repeat(60);
        assert!(
            exposed_name("calc", &long)
                .unwrap_err()
                .contains("limit is 64")
        );
        assert!(exposed_name("calc", &"x".repeat(59)).is_ok());
    }

    #[test]
    fn stems_become_module_names() {
        let name = |p: &str| module_name_for_file(Path::new(p));
        assert_eq!(name("dir/My_Tools.wasm"), "my-tools");
        assert_eq!(name("calc-v2.0.wasm"), "calc-v2-0");
        assert_eq!(name("wé.wasm"), "w-");
    }
}
