//! The OpenAI message shapes: a tool call taken apart, the tool calls of an
//! assistant message, and the tool message that answers a call.

use std::borrow::Cow;

use serde_json::{Value, json};

use super::json::Json;
use crate::tool::{ToolError, ToolErrorKind};

/// A tool call taken apart: `{"id","type":"function","function":{"name","arguments"}}`.
#[derive(Debug, Clone)]
pub struct ParsedCall<'a> {
    /// The call's `id`, if it has a string one.
    pub id: Option<Cow<'a, str>>,
    /// `function.name`.
    pub name: Cow<'a, str>,
    /// `function.arguments`, as given (text, object, null or absent).
    pub arguments: Option<Json<'a>>,
}

/// Takes a tool call apart; a malformed one is an error (`tool_call must be
/// an object`, `tool_call missing "function" object.`, ...).
pub fn parse_tool_call<'a>(tool_call: impl Into<Json<'a>>) -> Result<ParsedCall<'a>, ToolError> {
    let tool_call = tool_call.into();
    let malformed = |m: String| ToolError::new(ToolErrorKind::MalformedCall, m);
    let Some(call) = tool_call.object() else {
        return Err(malformed(format!(
            "tool_call must be an object, got {}.",
            tool_call.type_name()
        )));
    };
    let Some(function) = call.get("function").and_then(Json::object) else {
        return Err(malformed("tool_call missing \"function\" object.".into()));
    };
    let name = match function.get("name").and_then(Json::string) {
        Some(name) if !name.is_empty() => name,
        _ => return Err(malformed("tool_call missing \"function.name\".".into())),
    };
    Ok(ParsedCall {
        id: call.get("id").and_then(Json::string),
        name,
        arguments: function.get("arguments"),
    })
}

/// The id of a call that may be malformed: its string `id`, if it has one.
pub(crate) fn call_id<'a>(tool_call: Json<'a>) -> Option<Cow<'a, str>> {
    tool_call.object()?.get("id")?.string()
}

/// The `{"role":"tool","tool_call_id","content"}` message that answers a call.
pub fn tool_message(tool_call_id: &str, content: &str) -> Value {
    json!({"role": "tool", "tool_call_id": tool_call_id, "content": content})
}

/// The tool message that answers one call of a batch, with whether the
/// call failed as the dispatch knows it (not as the text reads: a tool may
/// answer a text that starts with `Error: `).
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    message: Value,
    error: Option<ToolErrorKind>,
}

impl Answer {
    /// The message answering call `tool_call_id` with `result`'s text: the
    /// tool's answer, or the `Error: ...` text of what went wrong.
    pub(crate) fn new(tool_call_id: &str, result: Result<String, ToolError>) -> Self {
        match result {
            Ok(text) => Self {
                message: tool_message(tool_call_id, &text),
                error: None,
            },
            Err(error) => Self {
                message: tool_message(tool_call_id, &error.to_string()),
                error: Some(error.kind()),
            },
        }
    }

    /// The `{"role":"tool","tool_call_id","content"}` message.
    pub fn message(&self) -> &Value {
        &self.message
    }

    /// The message, taken out.
    pub fn into_message(self) -> Value {
        self.message
    }

    /// What kind of error the call ended in, or `None` if the tool answered.
    pub fn error(&self) -> Option<ToolErrorKind> {
        self.error
    }
}

/// Whether `input` is a single tool call (an object with `function` and no
/// `tool_calls`), which is answered with one message rather than an array.
pub fn is_one_call<'a>(input: impl Into<Json<'a>>) -> bool {
    input
        .into()
        .object()
        .is_some_and(|o| o.contains("function") && !o.contains("tool_calls"))
}

/// The tool calls in `input`: an array of calls, an assistant message with
/// `tool_calls`, or a single call (a one-element batch).
pub fn tool_calls_of<'a>(input: impl Into<Json<'a>>) -> Result<Vec<Json<'a>>, String> {
    let input = input.into();
    if let Some(calls) = input.array() {
        return Ok(calls);
    }
    let Some(object) = input.object() else {
        return Err(format!(
            "expected a tool call, an assistant message or an array of tool calls, got {}",
            input.type_name()
        ));
    };
    match object.get("tool_calls") {
        Some(calls) if calls.is_null() => Ok(Vec::new()),
        Some(calls) => calls.array().ok_or_else(|| {
            format!(
                "\"tool_calls\" must be an array, got {}",
                calls.type_name()
            )
        }),
        None if object.contains("function") => Ok(vec![input]),
        None => Err(
            "expected a tool call (with \"function\"), an assistant message (with \"tool_calls\") or an array of tool calls".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(v: Value) -> String {
        let from_tree = parse_tool_call(&v).unwrap_err().to_string();
        let raw = serde_json::value::to_raw_value(&v).unwrap();
        let from_raw = parse_tool_call(&*raw).unwrap_err().to_string();
        assert_eq!(from_tree, from_raw);
        from_tree
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
        let raw =
            serde_json::value::to_raw_value(&json!({"tool_calls": [call.clone(), 1]})).unwrap();
        assert_eq!(tool_calls_of(&*raw).unwrap().len(), 2);
        assert!(
            tool_calls_of(&json!({"tool_calls": null}))
                .unwrap()
                .is_empty()
        );
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
