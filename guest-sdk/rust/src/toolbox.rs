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

/// What a tool's `annotations` tell MCP clients about its behaviour (see
/// [`Toolbox::hints`]). A hint left at `None` is not given; clients then
/// assume the worst (a tool that may write, destroy and reach the outside).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    /// `readOnlyHint`: the tool changes nothing outside itself.
    pub read_only: Option<bool>,
    /// `destructiveHint`: a tool that writes may delete or overwrite.
    pub destructive: Option<bool>,
    /// `idempotentHint`: calling again with the same arguments changes nothing more.
    pub idempotent: Option<bool>,
    /// `openWorldHint`: the tool reaches things outside the host (the network).
    pub open_world: Option<bool>,
}

impl Hints {
    /// The hints of a pure function, as most tools are: read-only,
    /// idempotent and closed-world.
    pub fn pure() -> Self {
        Self {
            read_only: Some(true),
            destructive: Some(false),
            idempotent: Some(true),
            open_world: Some(false),
        }
    }

    /// The `annotations` object of `tool-info`.
    fn to_json(self) -> Value {
        let pairs = [
            ("readOnlyHint", self.read_only),
            ("destructiveHint", self.destructive),
            ("idempotentHint", self.idempotent),
            ("openWorldHint", self.open_world),
        ];
        let given = pairs
            .into_iter()
            .filter_map(|(key, hint)| Some((key.to_owned(), Value::Bool(hint?))));
        Value::Object(given.collect())
    }
}

struct ToolDef {
    name: String,
    /// Set by [`Toolbox::describe`]; otherwise the schema's description.
    description: Option<String>,
    /// Set by [`Toolbox::title`].
    title: Option<String>,
    /// Set by [`Toolbox::hints`].
    hints: Option<Hints>,
    /// Set by [`Toolbox::returns`]: derives the `outputSchema`.
    output: Option<fn() -> Value>,
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
            title: None,
            hints: None,
            output: None,
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

    /// Sets a human-readable title of the tool added last (`title`, shown by
    /// MCP clients; models see the name and description).
    pub fn title(mut self, title: &str) -> Self {
        if let Some(last) = self.tools.last_mut() {
            last.title = Some(title.to_owned());
        }
        self
    }

    /// Sets the behaviour hints of the tool added last (`annotations`, read
    /// by MCP clients, for example to skip asking before a read-only call).
    pub fn hints(mut self, hints: Hints) -> Self {
        if let Some(last) = self.tools.last_mut() {
            last.hints = Some(hints);
        }
        self
    }

    /// Declares that the tool added last returns JSON shaped as `T`
    /// (normally the `T` of the [`Json<T>`](crate::Json) it returns): its
    /// schema becomes the tool's `outputSchema`, and MCP clients get the
    /// result as structured content too. `T` must serialize to an object.
    pub fn returns<T: JsonSchema>(mut self) -> Self {
        if let Some(last) = self.tools.last_mut() {
            last.output = Some(output_schema_for::<T>);
        }
        self
    }

    /// The `tool-info` export: a JSON array of OpenAI function schemas.
    pub fn tool_info(&self) -> String {
        let infos: Vec<Value> = self.tools.iter().map(ToolDef::info).collect();
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

impl ToolDef {
    /// This tool's entry in `tool-info`.
    fn info(&self) -> Value {
        let (derived, parameters) = (self.schema)();
        let mut function = Map::new();
        function.insert("name".into(), json!(self.name));
        let description = self.description.clone().unwrap_or(derived);
        function.insert("description".into(), json!(description));
        function.insert("parameters".into(), parameters);
        if let Some(title) = &self.title {
            function.insert("title".into(), json!(title));
        }
        if let Some(hints) = self.hints {
            function.insert("annotations".into(), hints.to_json());
        }
        if let Some(output) = self.output {
            function.insert("outputSchema".into(), output());
        }
        json!({"type": "function", "function": function})
    }
}

/// `T`'s JSON schema, self-contained (subschemas inlined, no `$schema`),
/// with doc comments unwrapped.
fn schema_for<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    unwrap_descriptions(&mut schema);
    schema
}

/// The `outputSchema` of a tool that returns `T`.
fn output_schema_for<T: JsonSchema>() -> Value {
    let mut schema = schema_for::<T>();
    if let Value::Object(map) = &mut schema {
        map.remove("title");
    }
    schema
}

/// Derives (description, parameters) from `A`'s JSON schema.
fn parameters_for<A: JsonSchema>() -> (String, Value) {
    let mut parameters = schema_for::<A>();
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

    /// Sum of two numbers.
    #[derive(serde::Serialize, JsonSchema)]
    struct Sum {
        /// The sum.
        sum: f64,
    }

    #[test]
    fn title_hints_and_output_schema_are_in_tool_info() {
        let t = toolbox()
            .title("Add")
            .hints(Hints {
                read_only: Some(true),
                ..Hints::default()
            })
            .returns::<Sum>()
            .tool("plain", add);
        let info: Value = serde_json::from_str(&t.tool_info()).unwrap();
        let f = &info[0]["function"];
        assert_eq!(f["title"], "Add");
        assert_eq!(f["annotations"], json!({"readOnlyHint": true}));
        assert_eq!(f["outputSchema"]["type"], "object");
        assert_eq!(f["outputSchema"]["required"], json!(["sum"]));
        assert!(f["outputSchema"].get("title").is_none());
        let plain = info[1]["function"].as_object().unwrap();
        for key in ["title", "annotations", "outputSchema"] {
            assert!(!plain.contains_key(key), "{key}");
        }
        assert_eq!(
            Hints::pure().to_json(),
            json!({"readOnlyHint": true, "destructiveHint": false,
                   "idempotentHint": true, "openWorldHint": false})
        );
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
