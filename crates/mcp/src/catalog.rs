//! [`Catalog`]: the active tools as MCP describes them, in pages, with what
//! is needed to give a result as structured content.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::Value;
use toolhost::{ToolInfo, ToolManager};

/// The active tools of one set of loaded modules, as MCP lists them.
pub(crate) struct Catalog {
    /// In registration order (the config's order of modules, then each
    /// module's order of tools): the same on every server with the same
    /// config.
    tools: Vec<Tool>,
    /// A check of each tool's answers against its `outputSchema`, where it
    /// declared one.
    outputs: HashMap<String, OutputCheck>,
}

/// How a tool's answers are checked against its `outputSchema`.
#[derive(Clone)]
pub(crate) struct OutputCheck {
    pub validator: Arc<jsonschema::Validator>,
    /// The tool's time limit, which the call and the check share.
    pub time_limit: Duration,
}

/// The time a check may take for a tool without a time limit of its own.
const DEFAULT_CHECK_TIME: Duration = Duration::from_secs(10);

impl Catalog {
    /// The active tools of `manager`.
    pub(crate) fn of(manager: &ToolManager) -> Self {
        let mut tools = Vec::new();
        let mut outputs = HashMap::new();
        for registered in manager.registered() {
            let info = &registered.info;
            if !manager.check_tool_status(&info.name) {
                continue;
            }
            if let Some(schema) = info.output_schema() {
                match jsonschema::validator_for(&Value::Object(schema.clone())) {
                    Ok(validator) => {
                        let check = OutputCheck {
                            validator: Arc::new(validator),
                            time_limit: registered
                                .provider
                                .time_limit()
                                .unwrap_or(DEFAULT_CHECK_TIME),
                        };
                        outputs.insert(info.name.clone(), check);
                    }
                    Err(e) => tracing::warn!(
                        tool = %toolhost::escape_controls(&info.name),
                        "its outputSchema is not a valid JSON schema, so its results are given as text only: {e}"
                    ),
                }
            }
            tools.push(mcp_tool(info));
        }
        Self { tools, outputs }
    }

    /// Up to `size` tools from `start` on, and where the next page starts.
    pub(crate) fn page(&self, start: usize, size: usize) -> (Vec<Tool>, Option<usize>) {
        let end = start.saturating_add(size).min(self.tools.len());
        let page = self.tools.get(start..end).unwrap_or_default().to_vec();
        let next = (end < self.tools.len()).then_some(end);
        (page, next)
    }

    /// How many tools there are.
    pub(crate) fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the catalog lists the same tools, described the same way.
    pub(crate) fn same_tools(&self, other: &Catalog) -> bool {
        self.tools == other.tools
    }

    /// How tool `name`'s answers are checked, if it declared an `outputSchema`.
    pub(crate) fn output_check(&self, name: &str) -> Option<OutputCheck> {
        self.outputs.get(name).cloned()
    }
}

impl OutputCheck {
    /// `text` as structured content, if it is JSON that matches the schema.
    /// Takes as long as the schema and the answer make it: run it where it
    /// may block.
    pub(crate) fn structured(&self, text: &str) -> Option<Value> {
        let value: Value = serde_json::from_str(text).ok()?;
        self.validator.is_valid(&value).then_some(value)
    }
}

/// How MCP describes a tool: its exposed name, description and parameters,
/// and the `title`, `annotations` and `outputSchema` its `tool-info` gave.
fn mcp_tool(info: &ToolInfo) -> Tool {
    let input: JsonObject = match &info.parameters {
        Value::Object(schema) => schema.clone(),
        _ => JsonObject::new(),
    };
    let mut tool = Tool::new(info.name.clone(), info.description.clone(), Arc::new(input));
    tool.title = info.title().map(str::to_string);
    tool.output_schema = info.output_schema().map(|schema| Arc::new(schema.clone()));
    tool.annotations = info.annotations().and_then(annotations);
    if info.description.is_empty() {
        tool.description = None;
    }
    tool
}

/// The annotations of a `tool-info` entry, if they are well formed (the
/// hints are booleans; anything else is left out).
fn annotations(given: &serde_json::Map<String, Value>) -> Option<ToolAnnotations> {
    serde_json::from_value(Value::Object(given.clone())).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolhost::{Arguments, ToolError};

    struct Declared(Vec<Value>);

    impl toolhost::Tool for Declared {
        fn infos(&self) -> Vec<ToolInfo> {
            self.0
                .iter()
                .map(|s| ToolInfo::from_schema(s).unwrap())
                .collect()
        }
        fn call(&self, _: &str, _: &Arguments) -> Result<String, ToolError> {
            Ok(String::new())
        }
    }

    fn catalog(schemas: Vec<Value>) -> Catalog {
        let mut manager = ToolManager::new();
        manager.register(Declared(schemas)).unwrap();
        Catalog::of(&manager)
    }

    #[test]
    fn tools_carry_their_mcp_keys() {
        let c = catalog(vec![json!({"type": "function", "function": {
            "name": "m_add", "description": "Adds.", "title": "Add",
            "annotations": {"readOnlyHint": true, "idempotentHint": true},
            "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]},
            "parameters": {"type": "object", "properties": {"a": {"type": "number"}}}}})]);
        let (tools, next) = c.page(0, 10);
        assert_eq!(next, None);
        let tool = serde_json::to_value(&tools[0]).unwrap();
        assert_eq!(tool["name"], "m_add");
        assert_eq!(tool["title"], "Add");
        assert_eq!(
            tool["annotations"],
            json!({"readOnlyHint": true, "idempotentHint": true})
        );
        assert_eq!(tool["inputSchema"]["properties"]["a"]["type"], "number");
        assert_eq!(tool["outputSchema"]["required"], json!(["sum"]));
        let check = c.output_check("m_add").expect("a check");
        assert_eq!(check.structured(r#"{"sum": 3}"#), Some(json!({"sum": 3})));
        assert_eq!(check.structured(r#"{"total": 3}"#), None);
        assert_eq!(check.structured("3"), None);
    }

    #[test]
    fn pages_follow_each_other() {
        let schemas = (0..5)
            .map(|i| json!({"type": "function", "function": {"name": format!("m_t{i}")}}))
            .collect();
        let c = catalog(schemas);
        let (first, next) = c.page(0, 2);
        assert_eq!(first.len(), 2);
        assert_eq!(next, Some(2));
        let (last, next) = c.page(4, 2);
        assert_eq!(last[0].name, "m_t4");
        assert_eq!(next, None);
        assert!(c.page(9, 2).0.is_empty());
    }

    #[test]
    fn recursive_refs_and_backtracking_patterns_check_in_bounded_time() {
        let check = |schema: Value, answer: &str| {
            let c = catalog(vec![json!({"type": "function", "function": {
                "name": "m_t", "outputSchema": schema}})]);
            c.output_check("m_t").expect("a check").structured(answer)
        };
        // A schema that refers to itself, and an answer nested 100 deep.
        let recursive = json!({"type": "object", "properties": {"next": {"$ref": "#"}}});
        let mut nested = json!({});
        for _ in 0..100 {
            nested = json!({"next": nested});
        }
        assert!(check(recursive, &nested.to_string()).is_some());
        // A pattern that backtracks exponentially in a naive engine.
        let pattern = json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}});
        let answer = json!({"s": format!("{}!", "a".repeat(40))}).to_string();
        assert!(check(pattern, &answer).is_none());
    }
}
