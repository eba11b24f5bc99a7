//! `json`: a toolhost tool module with two tools: `query` (JSON Pointer and
//! JSONPath) and `format` (pretty-print, minify, validate).
//!
//! JSONPath is RFC 9535, implemented by the `serde_json_path` crate. Objects
//! keep the document's key order (serde_json's `preserve_order`).
//! Formatting works on the text itself, so numbers, string escapes and
//! duplicate keys come out exactly as they went in.

// The doc comments of the argument types are the tool's descriptions for
// the model (its JSON schema), written for it, not for rustdoc.
#![allow(rustdoc::broken_intra_doc_links)]

use std::io;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json_path::JsonPath;

/// The largest result either tool returns, in bytes.
pub const MAX_OUTPUT_BYTES: usize = 1 << 20;

/// The longest JSONPath accepted, in characters.
pub const MAX_PATH_LENGTH: usize = 4096;

/// The deepest nesting of brackets and parentheses accepted in a JSONPath
/// (the JSONPath parser is recursive).
pub const MAX_PATH_NESTING: usize = 32;

/// The deepest nesting of arrays and objects in a document (serde_json's
/// recursion limit).
pub const MAX_DOCUMENT_DEPTH: usize = 128;

// ---------------------------------------------------------------- parsing

/// Parses `document`, with an error that gives the line and column.
pub fn parse_document(document: &str) -> Result<Value, String> {
    serde_json::from_str(document).map_err(|e| describe_parse_error(document, &e))
}

/// "invalid JSON at line L, column C: message", from a serde_json error.
fn describe_parse_error(document: &str, error: &serde_json::Error) -> String {
    if document.trim().is_empty() {
        return "invalid JSON: the document is empty".into();
    }
    let (line, column) = (error.line(), error.column());
    let full = error.to_string();
    let suffix = format!(" at line {line} column {column}");
    let message = full.strip_suffix(&suffix).unwrap_or(&full);
    if message.starts_with("recursion limit exceeded") {
        return format!(
            "the document nests arrays and objects more than {MAX_DOCUMENT_DEPTH} levels deep (at line {line}, column {column}); this tool handles at most {MAX_DOCUMENT_DEPTH}"
        );
    }
    format!("invalid JSON at line {line}, column {column}: {message}")
}

/// Serializes `value` compactly, refusing results over [`MAX_OUTPUT_BYTES`].
fn to_limited_json<T: Serialize + ?Sized>(value: &T) -> Result<String, String> {
    let mut out = LimitedWriter::default();
    match serde_json::to_writer(&mut out, value) {
        Ok(()) => String::from_utf8(out.buf).map_err(|e| format!("internal error: {e}")),
        Err(_) if out.overflowed => Err(too_large()),
        Err(e) => Err(format!("cannot encode the result: {e}")),
    }
}

fn too_large() -> String {
    format!(
        "the result is larger than {} MiB; ask for a smaller part of the document",
        MAX_OUTPUT_BYTES >> 20
    )
}

/// A buffer that refuses to grow past [`MAX_OUTPUT_BYTES`].
#[derive(Default)]
struct LimitedWriter {
    buf: Vec<u8>,
    overflowed: bool,
}

impl io::Write for LimitedWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.buf.len() + bytes.len() > MAX_OUTPUT_BYTES {
            self.overflowed = true;
            return Err(io::Error::other("output limit reached"));
        }
        self.buf.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

// ---------------------------------------------------------------- query

/// Picks values out of a JSON document. The path is either a JSON Pointer
/// (RFC 6901: "" for the whole document, "/a/0/b"; escape "/" in a key as
/// "~1" and "~" as "~0"), which returns the one value there, or a JSONPath
/// (RFC 9535, starting with "$"), which returns a JSON array of every match
/// ([] when nothing matches). JSONPath: $ (root), .name or ['name'],
/// [0] (negative counts from the end), [*] or .*, ..name (at any depth),
/// [start:end:step] slices, [a,b] unions, and filters like
/// [?@.price < 10 && @.tags[0] == 'x'] with functions length(), count(),
/// match(), search() and value(). Object keys keep the document's order.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Query {
    /// The JSON document, as text.
    pub document: String,
    /// A JSON Pointer ("/store/book/0/title", "" for the whole document) or a JSONPath ("$.store.book[*].title", "$..price").
    pub path: String,
}

/// A parsed `path` argument of `query`.
#[derive(Debug)]
pub enum PathKind {
    /// A JSON Pointer (RFC 6901).
    Pointer(String),
    /// A JSONPath query (RFC 9535).
    JsonPath(JsonPath),
}

/// Parses the `path` argument: a JSON Pointer or a JSONPath.
pub fn parse_path(path: &str) -> Result<PathKind, String> {
    if path.is_empty() || path.starts_with('/') {
        return Ok(PathKind::Pointer(path.to_owned()));
    }
    let trimmed = path.trim();
    if trimmed.starts_with('$') {
        check_path_limits(trimmed)?;
        return JsonPath::parse(trimmed)
            .map(PathKind::JsonPath)
            .map_err(|e| format!("invalid JSONPath '{trimmed}': {e}"));
    }
    let hint = if let Some(pointer) = trimmed.strip_prefix('#') {
        format!(" (for a URI fragment, drop the '#': '{pointer}')")
    } else if trimmed.starts_with(['.', '[']) {
        format!(" (did you mean '${trimmed}'?)")
    } else if trimmed.is_empty() {
        " (use '' for the whole document)".into()
    } else {
        format!(
            " (did you mean '$.{trimmed}' or '/{}'?)",
            trimmed.replace('.', "/")
        )
    };
    Err(format!(
        "the path '{path}' is neither a JSON Pointer (starting with '/', or '' for the whole document) nor a JSONPath (starting with '$'){hint}"
    ))
}

/// Refuses JSONPaths that are too long or too deeply nested for the
/// (recursive) JSONPath parser.
fn check_path_limits(path: &str) -> Result<(), String> {
    let length = path.chars().count();
    if length > MAX_PATH_LENGTH {
        return Err(format!(
            "the JSONPath is too long: {length} characters (the limit is {MAX_PATH_LENGTH})"
        ));
    }
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in path.chars().enumerate() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '[' | '(' => {
                depth += 1;
                if depth > MAX_PATH_NESTING {
                    return Err(format!(
                        "the JSONPath nests brackets and parentheses too deeply at position {} (the limit is {MAX_PATH_NESTING})",
                        i + 1
                    ));
                }
            }
            ']' | ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Runs `path` on `document` and returns the result as JSON text: the one
/// value for a JSON Pointer, an array of all matches for a JSONPath.
pub fn query_document(document: &str, path: &str) -> Result<String, String> {
    // Check the path first: it is short, and its errors are the likelier.
    let path = parse_path(path)?;
    let root = parse_document(document)?;
    match path {
        PathKind::Pointer(pointer) => match root.pointer(&pointer) {
            Some(value) => to_limited_json(value),
            None => Err(format!(
                "no value at path '{pointer}': {}",
                pointer_miss(&root, &pointer)
            )),
        },
        PathKind::JsonPath(path) => to_limited_json(&path.query(&root).all()),
    }
}

/// Says why `pointer` finds nothing in `root`.
fn pointer_miss(root: &Value, pointer: &str) -> String {
    let mut current = root;
    let mut walked = String::new();
    // `parse_path` only passes pointers that are "" or start with '/'.
    for raw in pointer.split('/').skip(1) {
        let key = raw.replace("~1", "/").replace("~0", "~");
        let here = if walked.is_empty() {
            "the document root".to_owned()
        } else {
            format!("'{walked}'")
        };
        let next = match current {
            Value::Object(map) => match map.get(&key) {
                Some(v) => v,
                None => return format!("{here} is an object with no key '{key}'"),
            },
            Value::Array(items) => {
                let valid = key == "0" || (!key.starts_with(['0', '+']) && !key.is_empty());
                match key.parse::<usize>() {
                    Ok(index) if valid => match items.get(index) {
                        Some(v) => v,
                        None => {
                            return format!(
                                "{here} is an array of length {}, index {index} is past its end",
                                items.len()
                            );
                        }
                    },
                    _ => {
                        return format!(
                            "{here} is an array, and '{key}' is not an array index (0, 1, 2, ...; no negative numbers or leading zeros)"
                        );
                    }
                }
            }
            other => {
                return format!("{here} is {}, which has no members", describe_kind(other).0);
            }
        };
        walked.push('/');
        walked.push_str(raw);
        current = next;
    }
    "the path does not match".into()
}

/// ("an object", "object with N keys")-style descriptions of a value.
fn describe_kind(value: &Value) -> (&'static str, String) {
    match value {
        Value::Object(map) => (
            "an object",
            format!("object with {}", plural(map.len(), "key")),
        ),
        Value::Array(items) => (
            "an array",
            format!("array with {}", plural(items.len(), "item")),
        ),
        Value::String(_) => ("a string", "string".into()),
        Value::Number(_) => ("a number", "number".into()),
        Value::Bool(b) => ("a boolean", format!("boolean {b}")),
        Value::Null => ("null", "null".into()),
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The `query` tool.
pub fn query(args: Query) -> Result<String, String> {
    query_document(&args.document, &args.path)
}

// ---------------------------------------------------------------- format

/// What `format` does with the document.
///
/// The variants have no doc comments on purpose: with them, the schema
/// would be a `oneOf` list instead of a plain `enum` of names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum Mode {
    Pretty,
    Minify,
    Validate,
}

/// Pretty-prints, minifies or validates a JSON document. "pretty" indents
/// nested arrays and objects ("indent" spaces per level, default 2);
/// "minify" removes all whitespace outside strings; "validate" says what the
/// document is, e.g. "valid JSON (object with 3 keys)". Invalid JSON is an
/// error giving the line and column. Key order, numbers and string escapes
/// are kept exactly as written.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Format {
    /// The JSON document, as text.
    pub document: String,
    /// "pretty", "minify" or "validate".
    pub mode: Mode,
    /// Spaces per nesting level for "pretty", 0 to 8 (default 2).
    #[serde(default)]
    #[schemars(range(max = 8))]
    pub indent: Option<u8>,
}

/// Formats `document` according to `mode`; see [`Format`].
pub fn format_document(document: &str, mode: Mode, indent: Option<u8>) -> Result<String, String> {
    let indent = indent.unwrap_or(2);
    if indent > 8 {
        return Err(format!("indent must be from 0 to 8, got {indent}"));
    }
    let value = validate_document(document)?;
    match mode {
        Mode::Validate => Ok(match value {
            Some(value) => format!("valid JSON ({})", describe_kind(&value).1),
            None => {
                let kind = if document.trim_start().starts_with('{') {
                    "object"
                } else {
                    "array"
                };
                format!("valid JSON ({kind} nested more than {MAX_DOCUMENT_DEPTH} levels deep)")
            }
        }),
        Mode::Pretty | Mode::Minify => {
            let indent = (mode == Mode::Pretty).then(|| " ".repeat(usize::from(indent)));
            reformat(document, indent.as_deref())
        }
    }
}

/// Checks that `document` is valid JSON. Returns its value, or `None` for a
/// valid document nested too deeply to build a value from (checked without
/// recursion).
fn validate_document(document: &str) -> Result<Option<Value>, String> {
    match serde_json::from_str::<Value>(document) {
        Ok(value) => Ok(Some(value)),
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
            serde_json::from_str::<serde::de::IgnoredAny>(document)
                .map_err(|e| describe_parse_error(document, &e))?;
            Ok(None)
        }
        Err(e) => Err(describe_parse_error(document, &e)),
    }
}

/// Re-lays out valid JSON text: with `indent`, one member or item per line
/// (empty `{}` and `[]` stay on one line) and ": " after keys; without, no
/// whitespace at all. Tokens are copied as they are.
fn reformat(document: &str, indent: Option<&str>) -> Result<String, String> {
    let bytes = document.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(document.len());
    let mut depth = 0usize;
    let mut i = 0;
    let newline = |out: &mut Vec<u8>, depth: usize| {
        if let Some(unit) = indent {
            out.push(b'\n');
            for _ in 0..depth {
                out.extend_from_slice(unit.as_bytes());
            }
        }
    };
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => {}
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                let end = (i + 1).min(bytes.len());
                out.extend_from_slice(&bytes[start..end]);
            }
            b'{' | b'[' => {
                let close = if b == b'{' { b'}' } else { b']' };
                let next = bytes[i + 1..]
                    .iter()
                    .position(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
                    .map(|p| i + 1 + p);
                if let Some(n) = next.filter(|&n| bytes[n] == close) {
                    out.extend_from_slice(&[b, close]);
                    i = n;
                } else {
                    out.push(b);
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(b);
            }
            b',' => {
                out.push(b);
                newline(&mut out, depth);
            }
            b':' => {
                out.push(b);
                if indent.is_some() {
                    out.push(b' ');
                }
            }
            _ => out.push(b),
        }
        if out.len() > MAX_OUTPUT_BYTES {
            return Err(format!(
                "the result would be larger than {} MiB; use a smaller indent or mode \"minify\"",
                MAX_OUTPUT_BYTES >> 20
            ));
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|e| format!("internal error: {e}"))
}

/// The `format` tool.
pub fn format(args: Format) -> Result<String, String> {
    format_document(&args.document, args.mode, args.indent)
}

toolhost_guest::export_tools!(query, format);

#[cfg(test)]
mod tests;
