//! The OpenAI message shapes: a tool call taken apart, the tool calls of an
//! assistant message, and the tool message that answers a call.

use serde_json::{Value, json};

use crate::tool::{ToolError, ToolErrorKind, json_type_name};

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

/// Takes a tool call apart; a malformed one is an error (`tool_call must be
/// an object`, `tool_call missing "function" object.`, ...).
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

/// The `{"role":"tool","tool_call_id","content"}` message that answers a call.
pub fn tool_message(tool_call_id: &str, content: &str) -> Value {
    json!({"role": "tool", "tool_call_id": tool_call_id, "content": content})
}

/// The tool calls in `input`: an array of calls, an assistant message with
/// `tool_calls`, or a single call (a one-element batch).
pub fn tool_calls_of(input: &Value) -> Result<Vec<Value>, String> {
    match input {
        Value::Array(calls) => Ok(calls.clone()),
        Value::Object(map) if map.contains_key("tool_calls") => match &map["tool_calls"] {
            Value::Array(calls) => Ok(calls.clone()),
            Value::Null => Ok(Vec::new()),
            other => Err(format!(
                "\"tool_calls\" must be an array, got {}",
                json_type_name(other)
            )),
        },
        Value::Object(map) if map.contains_key("function") => Ok(vec![input.clone()]),
        Value::Object(_) => Err(
            "expected a tool call (with \"function\"), an assistant message (with \"tool_calls\") or an array of tool calls".into(),
        ),
        other => Err(format!(
            "expected a tool call, an assistant message or an array of tool calls, got {}",
            json_type_name(other)
        )),
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
    fn malformed_calls_get_their_errors() {
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
    fn batches_come_in_three_shapes() {
        let call = json!({"id": "1", "function": {"name": "a"}});
        assert_eq!(tool_calls_of(&json!([call.clone()])).unwrap().len(), 1);
        assert_eq!(
            tool_calls_of(
                &json!({"role": "assistant", "tool_calls": [call.clone(), call.clone()]})
            )
            .unwrap()
            .len(),
            2
        );
        assert_eq!(tool_calls_of(&call).unwrap().len(), 1);
        assert!(
            tool_calls_of(&json!({"role": "assistant", "tool_calls": 3}))
                .unwrap_err()
                .contains("got number")
        );
        assert!(tool_calls_of(&json!(3)).is_err());
    }
}
