//! The set of tools one module exports, and the two exports built from it.

use std::fmt::Display;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::output::IntoOutput;

type Runner = Box<dyn Fn(&str) -> Result<String, String>>;

/// The arguments of a tool that takes none: `{}`.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

struct ToolDef {
    name: String,
    /// Set by [`Toolbox::describe`]; otherwise the schema's description.
    description: Option<String>,
    /// Derives (description, parameters); only `tool-info` needs them.
    schema: fn() -> (String, Value),
    run: Runner,
}

/// The tools of one module: what `tool-info` describes and `call` runs.
#[derive(Default)]
pub struct Toolbox {
    tools: Vec<ToolDef>,
}

impl Toolbox {
    /// An empty toolbox.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds tool `name`, run by `run`.
    ///
    /// The `parameters` schema is derived from `A`; the description is `A`'s
    /// doc comment (change it with [`Toolbox::describe`]). Arguments that do
    /// not deserialize into `A` are answered with an error naming the field.
    pub fn tool<A, R, E, F>(mut self, name: &str, run: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + 'static,
        R: IntoOutput,
        E: Display,
        F: Fn(A) -> Result<R, E> + 'static,
    {
        let runner: Runner = Box::new(move |arguments: &str| {
            let args: A = parse_arguments(arguments).map_err(|e| e.explain(parameters_for::<A>))?;
            run(args).map_err(|e| e.to_string())?.into_output()
        });
        self.tools.push(ToolDef {
            name: name.to_owned(),
            description: None,
            schema: parameters_for::<A>,
            run: runner,
        });
        self
    }

    /// Sets the description of the tool added last.
    pub fn describe(mut self, description: &str) -> Self {
        if let Some(last) = self.tools.last_mut() {
            last.description = Some(description.to_owned());
        }
        self
    }

    /// The `tool-info` export: a JSON array of OpenAI function schemas.
    pub fn tool_info(&self) -> String {
        let infos: Vec<Value> = self
            .tools
            .iter()
            .map(|t| {
                let (derived, parameters) = (t.schema)();
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description.clone().unwrap_or(derived),
                        "parameters": parameters,
                    }
                })
            })
            .collect();
        Value::Array(infos).to_string()
    }

    /// The `call` export: runs tool `name` with `arguments` (JSON text).
    pub fn call(&self, name: &str, arguments: &str) -> Result<String, String> {
        match self.tools.iter().find(|t| t.name == name) {
            Some(tool) => (tool.run)(arguments),
            None => {
                let known: Vec<&str> = self.tools.iter().map(|t| t.name.as_str()).collect();
                Err(format!(
                    "this module has no tool '{name}' (it has: {})",
                    known.join(", ")
                ))
            }
        }
    }
}

/// Derives (description, parameters) from `A`'s JSON schema.
fn parameters_for<A: JsonSchema>() -> (String, Value) {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let schema = generator.into_root_schema_for::<A>();
    let mut parameters = schema.to_value();
    unwrap_descriptions(&mut parameters);
    let mut description = String::new();
    if let Value::Object(map) = &mut parameters {
        map.remove("title");
        if let Some(Value::String(d)) = map.remove("description") {
            description = d;
        }
        if !map.contains_key("properties") && map.get("type") == Some(&json!("object")) {
            map.insert("properties".into(), Value::Object(Map::new()));
        }
    }
    (description, parameters)
}

/// Joins the hard-wrapped lines of doc comments in every `description`:
/// single newlines become spaces, blank lines stay paragraph breaks.
fn unwrap_descriptions(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                match child {
                    Value::String(text) if key == "description" => *text = unwrap_lines(text),
                    _ => unwrap_descriptions(child),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(unwrap_descriptions),
        _ => {}
    }
}

fn unwrap_lines(text: &str) -> String {
    text.split("\n\n")
        .map(|paragraph| {
            paragraph
                .split('\n')
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Arguments that did not deserialize: where, and what serde said.
struct ArgumentError {
    /// The field's path (`to`, `items[0].name`), or `.` for the whole object.
    path: String,
    message: String,
}

impl ArgumentError {
    /// The error text; for a top-level field, with the schema it must match
    /// (serde's own words can be as terse as "expected value").
    fn explain(self, schema: fn() -> (String, Value)) -> String {
        if self.path == "." {
            return format!("invalid arguments: {}", self.message);
        }
        let mut text = format!("invalid arguments: field '{}': {}", self.path, self.message);
        let (_, parameters) = schema();
        if let Some(Value::Object(field)) =
            parameters.get("properties").and_then(|p| p.get(&self.path))
        {
            let mut field = field.clone();
            field.remove("description");
            text.push_str(&format!(
                "; '{}' must match {}",
                self.path,
                Value::Object(field)
            ));
        }
        text
    }
}

/// Deserializes `arguments` into `A`, with an error that names the field.
fn parse_arguments<A: DeserializeOwned>(arguments: &str) -> Result<A, ArgumentError> {
    let text = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    let mut deserializer = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        // "at line 1 column 9" points into text the model never saw as lines.
        let message = match inner.rsplit_once(" at line ") {
            Some((message, _position)) => message.to_string(),
            None => inner,
        };
        ArgumentError { path, message }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adds two numbers.
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Add {
        /// The first number.
        a: f64,
        /// The second number.
        b: f64,
    }

    fn add(args: Add) -> Result<String, String> {
        Ok((args.a + args.b).to_string())
    }

    fn toolbox() -> Toolbox {
        Toolbox::new().tool("add", add)
    }

    #[test]
    fn tool_info_is_openai_shaped() {
        let info: Value = serde_json::from_str(&toolbox().tool_info()).unwrap();
        let f = &info[0]["function"];
        assert_eq!(info[0]["type"], "function");
        assert_eq!(f["name"], "add");
        assert_eq!(f["description"], "Adds two numbers.");
        assert_eq!(f["parameters"]["type"], "object");
        assert_eq!(f["parameters"]["properties"]["a"]["type"], "number");
        assert_eq!(f["parameters"]["required"], json!(["a", "b"]));
        assert!(f["parameters"].get("title").is_none());
        assert!(f["parameters"].get("$schema").is_none());
    }

    /// Line one
    /// continues here.
    ///
    /// Second paragraph.
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Wrapped {
        /// A field whose
        /// doc wraps.
        x: u8,
    }

    #[test]
    fn wrapped_doc_comments_are_joined() {
        let t = Toolbox::new().tool("w", |_: Wrapped| Ok::<_, String>("ok"));
        let info: Value = serde_json::from_str(&t.tool_info()).unwrap();
        let f = &info[0]["function"];
        assert_eq!(
            f["description"],
            "Line one continues here.\n\nSecond paragraph."
        );
        assert_eq!(
            f["parameters"]["properties"]["x"]["description"],
            "A field whose doc wraps."
        );
    }

    #[test]
    fn describe_overrides_doc_comment() {
        let t = toolbox().describe("Sum.");
        let info: Value = serde_json::from_str(&t.tool_info()).unwrap();
        assert_eq!(info[0]["function"]["description"], "Sum.");
    }

    #[test]
    fn call_runs_the_function() {
        assert_eq!(
            toolbox().call("add", r#"{"a": 1, "b": 2.5}"#),
            Ok("3.5".into())
        );
    }

    #[test]
    fn wrong_type_names_the_field() {
        let err = toolbox().call("add", r#"{"a": "x", "b": 2}"#).unwrap_err();
        assert_eq!(
            err,
            "invalid arguments: field 'a': invalid type: string \"x\", expected f64; \
             'a' must match {\"type\":\"number\",\"format\":\"double\"}"
        );
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Case {
        Upper,
        Lower,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Convert {
        to: Case,
    }

    #[test]
    fn terse_serde_errors_get_the_fields_schema() {
        let t = Toolbox::new().tool("convert", |_: Convert| Ok::<_, String>("ok"));
        let err = t.call("convert", r#"{"to": 5}"#).unwrap_err();
        assert_eq!(
            err,
            "invalid arguments: field 'to': expected value; 'to' must match {\"type\":\"string\",\"enum\":[\"upper\",\"lower\"]}"
        );
    }

    #[test]
    fn missing_and_unknown_fields_are_reported() {
        let err = toolbox().call("add", r#"{"a": 1}"#).unwrap_err();
        assert!(err.contains("missing field `b`"), "{err}");
        let err = toolbox()
            .call("add", r#"{"a": 1, "b": 2, "c": 3}"#)
            .unwrap_err();
        assert!(err.contains("unknown field `c`"), "{err}");
    }

    #[test]
    fn unknown_tool_lists_known_ones() {
        let err = toolbox().call("sub", "{}").unwrap_err();
        assert_eq!(err, "this module has no tool 'sub' (it has: add)");
    }

    #[test]
    fn no_args_accepts_empty_and_blank() {
        let t = Toolbox::new().tool("ping", |_: NoArgs| Ok::<_, String>("pong"));
        assert_eq!(t.call("ping", ""), Ok("pong".into()));
        assert_eq!(t.call("ping", "{}"), Ok("pong".into()));
        let info: Value = serde_json::from_str(&t.tool_info()).unwrap();
        assert_eq!(info[0]["function"]["parameters"]["properties"], json!({}));
    }
}
