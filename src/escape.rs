//! [`escape_controls`]: module-supplied text made safe to show on a
//! terminal or write to a log.

use std::borrow::Cow;

/// `text` with every control or invisible formatting character written as a
/// Rust escape (`\r`, `\n`, `\u{1b}`, `\u{202e}`, ...), so that text from a
/// tool module (a description, a result, a line it printed) cannot move the
/// cursor, retitle a terminal, hide lines or pass for a line of toolhost's.
/// Text without such characters is returned as it is.
///
/// ```
/// use toolhost::escape_controls;
///
/// assert_eq!(escape_controls("plain text"), "plain text");
/// assert_eq!(escape_controls("a\rb\u{1b}]0;title\u{7}"), r"a\rb\u{1b}]0;title\u{7}");
/// ```
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if needs_escape(c) {
            escaped.extend(c.escape_debug());
        } else {
            escaped.push(c);
        }
    }
    Cow::Owned(escaped)
}

/// Whether `c` is escaped: controls, and what Rust's `escape_debug` would
/// escape other than quotes and backslashes (invisible formatting such as
/// bidirectional overrides, unassigned code points).
fn needs_escape(c: char) -> bool {
    c.is_control() || (!matches!(c, '\\' | '"' | '\'') && c.escape_debug().len() > 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_invisible_formatting_are_escaped() {
        assert!(matches!(escape_controls("héllo, 世界"), Cow::Borrowed(_)));
        assert_eq!(escape_controls("tab\there"), r"tab\there");
        assert_eq!(
            escape_controls("x\u{202e}y\u{200b}z"),
            r"x\u{202e}y\u{200b}z"
        );
        assert_eq!(escape_controls("a\u{9b}b\u{7f}"), r"a\u{9b}b\u{7f}");
        assert_eq!(escape_controls(r#"quo"te\ "#), r#"quo"te\ "#);
    }
}
