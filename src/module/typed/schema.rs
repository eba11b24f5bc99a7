//! JSON Schema from WIT types: what a model is told each parameter and
//! result looks like. The shapes are the ones `json_to_val` reads and
//! `val_to_json` writes (docs/other-hosts.md): no `$ref`, every type
//! written out where it is used.

use serde_json::{Map, Value, json};
use wasmtime::component::Type;

/// How deep types may nest before a function is left out (WIT allows
/// deeper; no model needs it, and it bounds the host's recursion).
pub(crate) const MAX_TYPE_DEPTH: usize = 32;
/// How many schema objects one function's types may take before it is
/// left out: types can share parts, and writing each use out could
/// otherwise grow without bound.
pub(crate) const MAX_SCHEMA_NODES: usize = 4096;

/// The most bytes one tool's schema (parameters and output) may take as
/// JSON text; a function whose types would take more is left out.
pub const MAX_TOOL_SCHEMA_BYTES: usize = 256 * 1024;

/// What one schema object costs at most as JSON text, besides the names
/// it holds (`{"type":"integer","minimum":...,"maximum":...}` and the like).
const NODE_BYTES: usize = 128;

/// Why a type cannot be offered as JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unsupported(pub String);

/// Builds schemas under the depth and size bounds, counting their size as
/// they are built (never past the bound: each part is counted before it is
/// made).
pub(crate) struct SchemaBuilder {
    nodes: usize,
    bytes: usize,
    max_bytes: usize,
    /// What `max_bytes` is, in words, for the reason a function is left out.
    bound: String,
}

impl SchemaBuilder {
    /// A builder whose schemas may take at most `max_bytes` of JSON text,
    /// `bound` saying which bound that is.
    pub(crate) fn new(max_bytes: usize, bound: String) -> Self {
        Self {
            nodes: 0,
            bytes: 0,
            max_bytes,
            bound,
        }
    }

    /// The most bytes the schemas built so far take as JSON text.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The schema of a value of `ty`.
    pub(crate) fn schema(&mut self, ty: &Type) -> Result<Value, Unsupported> {
        self.at(ty, 0)
    }

    /// Counts `bytes` more of JSON text, or says the bound is passed.
    fn take(&mut self, bytes: usize) -> Result<(), Unsupported> {
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > self.max_bytes {
            return Err(Unsupported(format!(
                "its schema would take more than {} bytes ({})",
                self.max_bytes, self.bound
            )));
        }
        Ok(())
    }

    /// Counts a text written once (a description).
    pub(crate) fn take_text(&mut self, text: &str) -> Result<(), Unsupported> {
        self.take(text.len() + 3)
    }

    /// Counts names as they are written (quoted, with a separator).
    fn take_names<'a>(&mut self, names: impl Iterator<Item = &'a str>) -> Result<(), Unsupported> {
        let bytes = names.fold(0usize, |sum, n| sum.saturating_add(n.len() + 3));
        self.take(bytes)
    }

    fn at(&mut self, ty: &Type, depth: usize) -> Result<Value, Unsupported> {
        if depth > MAX_TYPE_DEPTH {
            return Err(Unsupported(format!(
                "its types nest more than {MAX_TYPE_DEPTH} deep"
            )));
        }
        self.nodes += 1;
        if self.nodes > MAX_SCHEMA_NODES {
            return Err(Unsupported(format!(
                "its types are too large to describe (more than {MAX_SCHEMA_NODES} schema objects)"
            )));
        }
        self.take(NODE_BYTES)?;
        let d = depth + 1;
        Ok(match ty {
            Type::Bool => json!({"type": "boolean"}),
            Type::S8 => integer(i8::MIN.into(), i8::MAX.into()),
            Type::U8 => integer(0.into(), u8::MAX.into()),
            Type::S16 => integer(i16::MIN.into(), i16::MAX.into()),
            Type::U16 => integer(0.into(), u16::MAX.into()),
            Type::S32 => integer(i32::MIN.into(), i32::MAX.into()),
            Type::U32 => integer(0.into(), u32::MAX.into()),
            Type::S64 => integer(i64::MIN.into(), i64::MAX.into()),
            Type::U64 => integer(0.into(), u64::MAX.into()),
            Type::Float32 | Type::Float64 => float(),
            Type::Char => json!({"type": "string", "minLength": 1, "maxLength": 1}),
            Type::String => json!({"type": "string"}),
            Type::List(list) => json!({"type": "array", "items": self.at(&list.ty(), d)?}),
            Type::FixedLengthList(list) => {
                let n = list.len();
                json!({"type": "array", "items": self.at(&list.ty(), d)?, "minItems": n, "maxItems": n})
            }
            Type::Record(record) => {
                let fields: Vec<(String, Type)> = record
                    .fields()
                    .map(|f| (f.name.to_string(), f.ty))
                    .collect();
                self.object(&fields, d)?
            }
            Type::Tuple(tuple) => {
                let items = tuple
                    .types()
                    .map(|t| self.at(&t, d))
                    .collect::<Result<Vec<_>, _>>()?;
                // No `"items": false`: validators of drafts before 2020-12
                // (Ajv in the MCP TypeScript SDK) read it as "no items at
                // all"; `maxItems` bounds the length for every draft.
                let n = items.len();
                json!({"type": "array", "prefixItems": items, "minItems": n, "maxItems": n})
            }
            Type::Variant(variant) => {
                let cases: Vec<(String, Option<Type>)> = variant
                    .cases()
                    .map(|c| (c.name.to_string(), c.ty))
                    .collect();
                self.tagged(&cases, d)?
            }
            Type::Result(result) => {
                let cases = [
                    ("ok".to_string(), result.ok()),
                    ("err".to_string(), result.err()),
                ];
                self.tagged(&cases, d)?
            }
            Type::Enum(e) => {
                self.take_names(e.names())?;
                json!({"type": "string", "enum": e.names().collect::<Vec<_>>()})
            }
            Type::Flags(flags) => {
                self.take_names(flags.names())?;
                json!({
                "type": "array",
                "items": {"type": "string", "enum": flags.names().collect::<Vec<_>>()},
                "uniqueItems": true,
                })
            }
            Type::Option(option) => {
                let inner = option.ty();
                let some = if matches!(inner, Type::Option(_)) {
                    // An option of an option: `null` is the outer none, so
                    // a present value is wrapped as `{"some": ...}`.
                    self.take(NODE_BYTES)?;
                    let value = self.at(&inner, d)?;
                    json!({"type": "object", "properties": {"some": value},
                           "required": ["some"], "additionalProperties": false})
                } else {
                    self.at(&inner, d)?
                };
                json!({"anyOf": [some, {"type": "null"}]})
            }
            other => return Err(Unsupported(format!("it uses {}", super::not_json(other)))),
        })
    }

    /// An object with one property per `(name, type)`, each required unless
    /// its type is an option.
    pub(crate) fn object(
        &mut self,
        fields: &[(String, Type)],
        depth: usize,
    ) -> Result<Value, Unsupported> {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for (name, ty) in fields {
            // The name, as a property and in `required`.
            self.take(2 * (name.len() + 3))?;
            properties.insert(name.clone(), self.at(ty, depth)?);
            // An optional field may be left out, or given as null.
            if !matches!(ty, Type::Option(_)) {
                required.push(Value::String(name.clone()));
            }
        }
        Ok(json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        }))
    }

    /// One of the tagged objects `{"tag": case}` or `{"tag": case, "value": ...}`.
    fn tagged(
        &mut self,
        cases: &[(String, Option<Type>)],
        depth: usize,
    ) -> Result<Value, Unsupported> {
        let mut one_of = Vec::with_capacity(cases.len());
        for (name, ty) in cases {
            self.take(NODE_BYTES + name.len())?;
            let mut properties = Map::new();
            properties.insert("tag".into(), json!({"const": name}));
            let mut required = vec![json!("tag")];
            if let Some(ty) = ty {
                properties.insert("value".into(), self.at(ty, depth)?);
                required.push(json!("value"));
            }
            one_of.push(json!({
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false,
            }));
        }
        Ok(json!({"oneOf": one_of}))
    }
}

fn integer(minimum: Value, maximum: Value) -> Value {
    json!({"type": "integer", "minimum": minimum, "maximum": maximum})
}

/// A float: any JSON number, or one of the strings JSON has no number for.
fn float() -> Value {
    json!({"anyOf": [
        {"type": "number"},
        {"type": "string", "enum": ["NaN", "Infinity", "-Infinity"]},
    ]})
}
