//! A call's results as the answer text: a `string` is the text itself,
//! anything else compact JSON in the shapes of `schema.rs`; a `result`'s
//! `err` is the tool's error.

use serde_json::{Map, Number, Value, json};
use wasmtime::component::Val;

/// The answer of a call that returned `results` (none or one value):
/// `Ok` is the answer text, `Err` the text of the tool's own error.
pub(crate) fn answer(results: Vec<Val>) -> Result<String, String> {
    let Some(value) = results.into_iter().next() else {
        return Ok(String::new());
    };
    match value {
        Val::Result(Ok(payload)) => Ok(payload.map_or_else(String::new, |v| text(*v))),
        Val::Result(Err(payload)) => Err(payload.map_or_else(String::new, |v| text(*v))),
        other => Ok(text(other)),
    }
}

/// A string as itself, anything else as compact JSON.
fn text(value: Val) -> String {
    match value {
        Val::String(s) => s,
        other => to_json(other).to_string(),
    }
}

/// `value` as JSON.
pub(crate) fn to_json(value: Val) -> Value {
    match value {
        Val::Bool(b) => Value::Bool(b),
        Val::S8(n) => n.into(),
        Val::U8(n) => n.into(),
        Val::S16(n) => n.into(),
        Val::U16(n) => n.into(),
        Val::S32(n) => n.into(),
        Val::U32(n) => n.into(),
        Val::S64(n) => n.into(),
        Val::U64(n) => n.into(),
        // The shortest decimal that reads back as the same f32, not the
        // f64 the f32 widens to (0.1, not 0.10000000149011612).
        Val::Float32(x) => float(x.to_string().parse().unwrap_or(x.into())),
        Val::Float64(x) => float(x),
        Val::Char(c) => Value::String(c.to_string()),
        Val::String(s) => Value::String(s),
        Val::List(items) | Val::Tuple(items) | Val::FixedLengthList(items) => {
            Value::Array(items.into_iter().map(to_json).collect())
        }
        Val::Record(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(name, v)| (name, to_json(v)))
                .collect::<Map<_, _>>(),
        ),
        Val::Variant(tag, payload) => tagged(tag, payload),
        Val::Result(Ok(payload)) => tagged("ok".into(), payload),
        Val::Result(Err(payload)) => tagged("err".into(), payload),
        Val::Enum(name) => Value::String(name),
        Val::Flags(names) => Value::Array(names.into_iter().map(Value::String).collect()),
        Val::Option(None) => Value::Null,
        Val::Option(Some(inner)) => match *inner {
            // An option of an option: the inner value is wrapped, so that
            // `null` stays the outer none.
            inner @ Val::Option(_) => json!({"some": to_json(inner)}),
            inner => to_json(inner),
        },
        // Functions with other types are never offered.
        Val::Map(_) | Val::Resource(_) | Val::Future(_) | Val::Stream(_) | Val::ErrorContext(_) => {
            Value::Null
        }
    }
}

fn tagged(tag: String, payload: Option<Box<Val>>) -> Value {
    let mut object = Map::new();
    object.insert("tag".into(), Value::String(tag));
    if let Some(v) = payload {
        object.insert("value".into(), to_json(*v));
    }
    Value::Object(object)
}

/// A float as a JSON number, or the string JSON has for it.
fn float(x: f64) -> Value {
    match Number::from_f64(x) {
        Some(n) => Value::Number(n),
        None if x.is_nan() => Value::String("NaN".into()),
        None if x > 0.0 => Value::String("Infinity".into()),
        None => Value::String("-Infinity".into()),
    }
}
