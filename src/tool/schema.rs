//! [`ToolInfo`]: one tool's OpenAI function-calling schema.

use serde_json::{Map, Value, json};

/// Keys of a `tool-info` function that MCP clients read and OpenAI's API
/// does not accept, so [`ToolInfo::to_openai`] leaves them out.
pub(crate) const MCP_ONLY_KEYS: [&str; 3] = ["title", "annotations", "outputSchema"];

/// The most an `outputSchema` may be, at load: every answer of the tool is
/// checked against it by the MCP server, so its size bounds that work.
/// Serialized size in bytes, nesting of objects and arrays, and JSON
/// objects in it (each a schema or a group of them).
pub const OUTPUT_SCHEMA_BOUNDS: OutputSchemaBounds = OutputSchemaBounds {
    bytes: 64 * 1024,
    depth: 32,
    subschemas: 2048,
};

/// The bounds on an `outputSchema`: see [`OUTPUT_SCHEMA_BOUNDS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputSchemaBounds {
    /// Its size as compact JSON, in bytes.
    pub bytes: usize,
    /// How deep objects and arrays nest in it.
    pub depth: usize,
    /// How many JSON objects it has.
    pub subschemas: usize,
}

/// One tool's schema: what a model is told about it.
///
/// Serializes to the OpenAI shape
/// `{"type":"function","function":{"name","description","parameters"}}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// The name a model calls the tool by.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// A JSON schema of type `object` for the arguments.
    pub parameters: Value,
    /// Other keys of the `function` object (such as `"strict": true`), kept as given.
    pub extra: Map<String, Value>,
}

impl ToolInfo {
    /// A tool info; `parameters` must be an object schema.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
            extra: Map::new(),
        }
    }

    /// The schema every tool without parameters gets: `{"type":"object","properties":{}}`.
    pub fn empty_parameters() -> Value {
        json!({"type": "object", "properties": {}})
    }

    /// The OpenAI tool schema, ready to send in an API request: name,
    /// description, parameters and the other keys `tool-info` gave (such as
    /// `strict`), except those only MCP clients read (`title`, `annotations`,
    /// `outputSchema`).
    pub fn to_openai(&self) -> Value {
        let mut function = Map::new();
        function.insert("name".into(), json!(self.name));
        function.insert("description".into(), json!(self.description));
        function.insert("parameters".into(), self.parameters.clone());
        for (key, value) in &self.extra {
            if !MCP_ONLY_KEYS.contains(&key.as_str()) {
                function.entry(key.clone()).or_insert_with(|| value.clone());
            }
        }
        json!({"type": "function", "function": function})
    }

    /// A human-readable title (`title` in `tool-info`), for MCP clients.
    pub fn title(&self) -> Option<&str> {
        self.extra.get("title").and_then(Value::as_str)
    }

    /// Hints on the tool's behaviour (`annotations` in `tool-info`:
    /// `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`),
    /// for MCP clients.
    pub fn annotations(&self) -> Option<&Map<String, Value>> {
        self.extra.get("annotations").and_then(Value::as_object)
    }

    /// The JSON schema of the tool's result (`outputSchema` in `tool-info`),
    /// for MCP clients: a result that is JSON matching it is also given as
    /// structured content.
    pub fn output_schema(&self) -> Option<&Map<String, Value>> {
        self.extra.get("outputSchema").and_then(Value::as_object)
    }

    /// Parses one entry of a `tool-info` array: the OpenAI shape, or the
    /// bare `{"name","description","parameters"}` object.
    ///
    /// A missing `parameters` becomes [`ToolInfo::empty_parameters`]; the
    /// error says which field is wrong.
    pub fn from_schema(schema: &Value) -> Result<Self, String> {
        let Value::Object(outer) = schema else {
            return Err(format!(
                "each tool schema must be a JSON object, got {}",
                super::error::json_type_name(schema)
            ));
        };
        let function = match outer.get("function") {
            Some(Value::Object(f)) => f,
            Some(other) => {
                return Err(format!(
                    "\"function\" must be an object, got {}",
                    super::error::json_type_name(other)
                ));
            }
            None if outer.contains_key("name") => outer,
            None => return Err("tool schema has no \"function\" object".into()),
        };
        if let Some(t) = outer.get("type").filter(|_| outer.contains_key("function"))
            && t != "function"
        {
            return Err(format!(
                "tool schema \"type\" must be \"function\", got {t}"
            ));
        }
        Self::from_function(function)
    }

    fn from_function(function: &Map<String, Value>) -> Result<Self, String> {
        let name = match function.get("name") {
            Some(Value::String(n)) => n.clone(),
            Some(_) => return Err("\"function.name\" must be a string".into()),
            None => return Err("tool schema has no \"function.name\"".into()),
        };
        let description = match function.get("description") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(d)) => d.clone(),
            Some(_) => return Err(format!("tool '{name}': \"description\" must be a string")),
        };
        let parameters = match function.get("parameters") {
            None | Some(Value::Null) => Self::empty_parameters(),
            Some(p) => {
                check_parameters(p).map_err(|e| format!("tool '{name}': {e}"))?;
                p.clone()
            }
        };
        if let Some(schema) = function.get("outputSchema") {
            check_output_schema(schema).map_err(|e| format!("tool '{name}': {e}"))?;
        }
        let extra = function
            .iter()
            .filter(|(key, _)| !matches!(key.as_str(), "name" | "description" | "parameters"))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        Ok(Self {
            extra,
            ..Self::new(name, description, parameters)
        })
    }
}

/// Checks `schema` against [`OUTPUT_SCHEMA_BOUNDS`], walking it without
/// recursion; the error names the bound.
fn check_output_schema(schema: &Value) -> Result<(), String> {
    let bounds = OUTPUT_SCHEMA_BOUNDS;
    let why = "(the MCP server checks every answer against it)";
    let bytes = serde_json::to_string(schema).map_or(usize::MAX, |s| s.len());
    if bytes > bounds.bytes {
        return Err(format!(
            "its outputSchema is {bytes} bytes, more than the {} bytes toolhost accepts {why}",
            bounds.bytes
        ));
    }
    let (mut objects, mut deepest) = (0usize, 0usize);
    let mut stack = vec![(schema, 1usize)];
    while let Some((value, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Object(map) => {
                objects += 1;
                Box::new(map.values())
            }
            Value::Array(items) => Box::new(items.iter()),
            _ => continue,
        };
        deepest = deepest.max(depth);
        stack.extend(children.map(|child| (child, depth + 1)));
    }
    if deepest > bounds.depth {
        return Err(format!(
            "its outputSchema nests {deepest} levels deep, more than the {} toolhost accepts {why}",
            bounds.depth
        ));
    }
    if objects > bounds.subschemas {
        return Err(format!(
            "its outputSchema has {objects} subschemas (JSON objects), more than the {} toolhost accepts {why}",
            bounds.subschemas
        ));
    }
    Ok(())
}

/// Checks that `parameters` is a JSON schema for an object.
fn check_parameters(parameters: &Value) -> Result<(), String> {
    let Value::Object(map) = parameters else {
        return Err(format!(
            "\"parameters\" must be a JSON schema object, got {}",
            super::error::json_type_name(parameters)
        ));
    };
    match map.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => {
            return Err(format!(
                "\"parameters\" must have \"type\": \"object\", got {other}"
            ));
        }
        None => return Err("\"parameters\" must have \"type\": \"object\"".into()),
    }
    if let Some(p) = map.get("properties")
        && !p.is_object()
    {
        return Err("\"parameters.properties\" must be an object".into());
    }
    if let Some(r) = map.get("required") {
        let ok = r.as_array().is_some_and(|a| a.iter().all(Value::is_string));
        if !ok {
            return Err("\"parameters.required\" must be an array of strings".into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_openai_shape_and_defaults_parameters() {
        let info =
            ToolInfo::from_schema(&json!({"type":"function","function":{"name":"ping"}})).unwrap();
        assert_eq!(info.name, "ping");
        assert_eq!(info.description, "");
        assert_eq!(info.parameters, ToolInfo::empty_parameters());
        assert_eq!(info.to_openai()["function"]["parameters"]["type"], "object");
    }

    #[test]
    fn keeps_other_function_keys() {
        let schema = json!({"type":"function","function":{"name":"a","strict":true,"parameters":{"type":"object","properties":{},"additionalProperties":false}}});
        let info = ToolInfo::from_schema(&schema).unwrap();
        assert_eq!(info.extra.get("strict"), Some(&json!(true)));
        assert_eq!(info.to_openai()["function"]["strict"], true);
        assert_eq!(info.to_openai()["function"]["name"], "a");
    }

    #[test]
    fn mcp_keys_are_kept_but_not_sent_to_openai() {
        let schema = json!({"type":"function","function":{"name":"a","title":"A tool",
            "annotations":{"readOnlyHint":true},"outputSchema":{"type":"object"}}});
        let info = ToolInfo::from_schema(&schema).unwrap();
        assert_eq!(info.title(), Some("A tool"));
        assert_eq!(info.annotations().unwrap()["readOnlyHint"], true);
        assert_eq!(info.output_schema().unwrap()["type"], "object");
        let openai = info.to_openai();
        for key in MCP_ONLY_KEYS {
            assert!(openai["function"].get(key).is_none(), "{key}");
        }
    }

    #[test]
    fn rejects_bad_schemas_with_the_field() {
        let e = ToolInfo::from_schema(&json!([1])).unwrap_err();
        assert!(e.contains("got array"), "{e}");
        let e = ToolInfo::from_schema(
            &json!({"type":"function","function":{"name":"a","parameters":{"type":"string"}}}),
        )
        .unwrap_err();
        assert!(e.contains("\"type\": \"object\""), "{e}");
        let e =
            ToolInfo::from_schema(&json!({"type":"function","function":{"name":5}})).unwrap_err();
        assert!(e.contains("must be a string"), "{e}");
        let e = ToolInfo::from_schema(&json!({"type":"tool","function":{"name":"a"}})).unwrap_err();
        assert!(e.contains("must be \"function\""), "{e}");
    }

    #[test]
    fn output_schemas_past_the_bounds_are_refused_by_name() {
        let tool = |schema: Value| {
            ToolInfo::from_schema(
                &json!({"type":"function","function":{"name":"t","outputSchema":schema}}),
            )
        };
        let entry = json!({"items": {"type": "integer", "minimum": 0}});
        let entries = |n: usize| json!({"type": "array", "allOf": vec![entry.clone(); n]});
        // 900 entries: within every bound (1,801 objects, 37 KiB).
        tool(entries(900)).unwrap();
        let huge = tool(entries(40_000)).unwrap_err();
        assert!(
            huge.contains("tool 't': its outputSchema is")
                && huge.contains("more than the 65536 bytes"),
            "{huge}"
        );
        let many = tool(entries(1100)).unwrap_err();
        assert!(
            many.contains("2201 subschemas") && many.contains("more than the 2048"),
            "{many}"
        );
        let mut deep = json!({"type": "integer"});
        for _ in 0..40 {
            deep = json!({"not": deep});
        }
        let deep = tool(deep).unwrap_err();
        assert!(
            deep.contains("nests 41 levels deep, more than the 32"),
            "{deep}"
        );
    }
}
