//! Reading an OpenAI tool call: its name and its arguments, or the seed's error.

use serde_json::{Map, Value};

use crate::error::json_type_name;
use crate::{ToolError, ToolErrorKind};

/// A tool call taken apart: `{"id","type":"function","function":{"name","arguments"}}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedCall<'a> {
    /// The call's `id`, if it has a string one.
    pub id: Option<&'a str>,
    /// `function.name`.
    pub name: &'a str,
    /// `function.arguments`, as given (text, object, null or absent).
    pub arguments: Option<&'a Value>,
}

/// Takes a tool call apart, with the seed's errors for malformed ones.
pub fn parse_tool_call(tool_call: &Value) -> Result<ParsedCall<'_>, ToolError> {
    let malformed = |m: String| ToolError::new(ToolErrorKind::MalformedCall, m);
    let Value::Object(call) = tool_call else {
        return Err(malformed(format!(
            "tool_call must be an object, got {}.",
            json_type_name(tool_call)
        )));
    };
    let Some(Value::Object(function)) = call.get("function") else {
        return Err(malformed("tool_call missing \"function\" object.".into()));
    };
    let name = match function.get("name") {
        Some(Value::String(name)) if !name.is_empty() => name,
        _ => return Err(malformed("tool_call missing \"function.name\".".into())),
    };
    Ok(ParsedCall {
        id: call.get("id").and_then(Value::as_str),
        name,
        arguments: function.get("arguments"),
    })
}

/// Turns `arguments` into an object: JSON text, an object, null or blank text (`{}`).
pub fn parse_arguments(arguments: Option<&Value>) -> Result<Map<String, Value>, ToolError> {
    let invalid = |m: String| ToolError::new(ToolErrorKind::InvalidArguments, m);
    match arguments {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(map)) => Ok(map.clone()),
        Some(Value::String(text)) if text.trim().is_empty() => Ok(Map::new()),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err(invalid("\"arguments\" JSON must be an object.".into())),
            Err(e) => Err(invalid(format!("invalid JSON in arguments: {e}"))),
        },
        Some(other) => Err(invalid(format!(
            "\"arguments\" must be a JSON string or object, got {}.",
            json_type_name(other)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(v: Value) -> String {
        parse_tool_call(&v).unwrap_err().to_string()
    }

    #[test]
    fn malformed_calls_get_the_seed_errors() {
        assert_eq!(
            err(json!([1])),
            "Error: tool_call must be an object, got array."
        );
        assert_eq!(
            err(json!("x")),
            "Error: tool_call must be an object, got string."
        );
        assert_eq!(
            err(json!({"id": "1"})),
            "Error: tool_call missing \"function\" object."
        );
        assert_eq!(
            err(json!({"function": "f"})),
            "Error: tool_call missing \"function\" object."
        );
        assert_eq!(
            err(json!({"function": {}})),
            "Error: tool_call missing \"function.name\"."
        );
        assert_eq!(
            err(json!({"function": {"name": 3}})),
            "Error: tool_call missing \"function.name\"."
        );
    }

    #[test]
    fn arguments_in_every_accepted_form() {
        let text = json!("{\"a\": 1}");
        assert_eq!(parse_arguments(Some(&text)).unwrap()["a"], 1);
        assert_eq!(parse_arguments(Some(&json!({"a": 2}))).unwrap()["a"], 2);
        assert!(parse_arguments(Some(&Value::Null)).unwrap().is_empty());
        assert!(parse_arguments(Some(&json!("  "))).unwrap().is_empty());
        assert!(parse_arguments(None).unwrap().is_empty());
    }

    #[test]
    fn bad_arguments_get_the_seed_errors() {
        let e = |v: Value| parse_arguments(Some(&v)).unwrap_err().to_string();
        assert_eq!(
            e(json!("[1]")),
            "Error: \"arguments\" JSON must be an object."
        );
        assert_eq!(
            e(json!(5)),
            "Error: \"arguments\" must be a JSON string or object, got number."
        );
        assert_eq!(
            e(json!("{bad")),
            "Error: invalid JSON in arguments: key must be a string at line 1 column 2"
        );
    }
}
