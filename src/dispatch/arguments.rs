//! A call's `arguments` in every form OpenAI gives them (JSON text, an
//! object, null, absent), checked against the tool's size limit before any
//! of it is parsed.

use serde_json::Value;

use super::json::Json;
use crate::tool::{Arguments, ToolError, ToolErrorKind};

/// The arguments of a call of `tool`: at most `limit` bytes of JSON text
/// (checked first), then one object.
pub(super) fn read_arguments(
    arguments: Option<Json<'_>>,
    tool: &str,
    limit: Option<u64>,
) -> Result<Arguments, ToolError> {
    let fits = |len: usize| match limit {
        Some(max) if len as u64 > max => Err(ToolError::arguments_too_large(tool, len, max)),
        _ => Ok(()),
    };
    let Some(json) = arguments else {
        return Ok(Arguments::empty());
    };
    match (json, json.type_name()) {
        (_, "null") => Ok(Arguments::empty()),
        (Json::Tree(Value::Object(object)), _) => {
            let arguments = Arguments::from_object(object);
            fits(arguments.len())?;
            Ok(arguments)
        }
        (Json::Raw(raw), "object") => {
            fits(raw.get().len())?;
            Arguments::from_json(raw.get())
        }
        (_, "string") => {
            let text = json.string().unwrap_or_default();
            fits(text.len())?;
            Arguments::from_json(&text)
        }
        (_, other) => Err(ToolError::new(
            ToolErrorKind::InvalidArguments,
            format!("\"arguments\" must be a JSON string or object, got {other}."),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use serde_json::value::{RawValue, to_raw_value};

    /// Reads `value` as a tree and as raw text; both must agree.
    fn read(value: &Value, limit: Option<u64>) -> Result<String, String> {
        let raw: Box<RawValue> = to_raw_value(value).unwrap();
        let tree = read_arguments(Some(Json::Tree(value)), "t", limit);
        let text = read_arguments(Some(Json::Raw(&raw)), "t", limit);
        let show = |r: Result<Arguments, ToolError>| {
            r.map(|a| a.as_str().to_string()).map_err(|e| e.to_string())
        };
        let (tree, text) = (show(tree), show(text));
        assert_eq!(tree, text);
        tree
    }

    #[test]
    fn arguments_in_every_accepted_form() {
        assert_eq!(read(&json!("{\"a\": 1}"), None).unwrap(), "{\"a\": 1}");
        assert_eq!(read(&json!({"a": 2}), None).unwrap(), "{\"a\":2}");
        assert_eq!(read(&Value::Null, None).unwrap(), "{}");
        assert_eq!(read(&json!("  "), None).unwrap(), "{}");
        assert_eq!(read_arguments(None, "t", None).unwrap().as_str(), "{}");
    }

    #[test]
    fn raw_objects_are_kept_byte_for_byte() {
        let text = r#"{"big":12345678901234567890123,"f":1.10,"e":1e2,"dup":1,"dup":2}"#;
        let raw: Box<RawValue> = serde_json::from_str(text).unwrap();
        let read = read_arguments(Some(Json::Raw(&raw)), "t", None).unwrap();
        assert_eq!(read.as_str(), text);
    }

    #[test]
    fn bad_arguments_get_the_dispatch_errors() {
        let e = |v: Value| read(&v, None).unwrap_err();
        assert_eq!(
            e(json!("[1]")),
            "Error: \"arguments\" JSON must be an object."
        );
        assert_eq!(
            e(json!(5)),
            "Error: \"arguments\" must be a JSON string or object, got number."
        );
        assert_eq!(
            e(json!([1])),
            "Error: \"arguments\" must be a JSON string or object, got array."
        );
        assert_eq!(
            e(json!("{bad")),
            "Error: invalid JSON in arguments: key must be a string at line 1 column 2"
        );
    }

    #[test]
    fn sizes_are_checked_before_parsing() {
        let big = json!({"a": "x".repeat(100)});
        assert_eq!(
            read(&big, Some(50)).unwrap_err(),
            "Error: tool 't' was given 108 bytes of arguments, more than its limit of 50 bytes."
        );
        // Too big and not even JSON: the size is what is reported.
        let text = json!("{".repeat(100));
        assert!(
            read(&text, Some(50))
                .unwrap_err()
                .contains("was given 100 bytes")
        );
    }
}
