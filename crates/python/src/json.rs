//! Python objects to and from JSON, at the GIL boundary.
//!
//! Python objects become JSON *text*, written without recursion: a
//! self-referential dict, a `model_dump()` that returns its own object or
//! nesting 10,000 deep is a clear error, never a crashed interpreter. An
//! `int` keeps every digit, a `float` its shortest form, and NaN and the
//! infinities, which JSON has no form for, are refused.

use std::collections::HashSet;
use std::fmt::Write as _;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;

/// The deepest nesting of dicts and lists converted.
pub const MAX_DEPTH: usize = 512;
/// The most `model_dump()` calls in a row for one value (a model whose
/// dump is another model, and so on).
const MAX_DUMPS: usize = 16;

/// `object` as JSON text, or why it is not JSON (a set, a non-string key,
/// NaN, a reference cycle, nesting past [`MAX_DEPTH`]...). Pydantic models
/// (the OpenAI SDK's tool calls and messages) are read through their
/// `model_dump()`.
pub fn to_json_text(object: &Bound<'_, PyAny>) -> Result<String, String> {
    let mut writer = Writer::default();
    writer.value(object)?;
    Ok(writer.out)
}

/// `object` as a JSON value (see [`to_json_text`]); for settings and
/// schemas, where a number's exact text does not matter.
pub fn to_json(object: &Bound<'_, PyAny>) -> Result<Value, String> {
    let text = to_json_text(object)?;
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// A JSON value as Python objects (dicts, lists, str, int, float, bool, None).
pub fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(pythonize::pythonize(py, value)?)
}

/// A container being written: its remaining items, and where it is.
struct Open<'py> {
    items: std::vec::IntoIter<(Option<Bound<'py, PyAny>>, Bound<'py, PyAny>)>,
    close: char,
    /// Items written so far.
    written: usize,
    /// Its address, while it is on the path (for the cycle check).
    address: usize,
}

/// Writes JSON text, keeping the path from the top to the value being
/// written.
#[derive(Default)]
struct Writer {
    out: String,
    /// The path to the current value, for errors: `["a"][0]`.
    path: Vec<String>,
}

impl Writer {
    fn value(&mut self, top: &Bound<'_, PyAny>) -> Result<(), String> {
        let mut open: Vec<Open<'_>> = Vec::new();
        let mut on_path: HashSet<usize> = HashSet::new();
        let mut next = Some(top.clone());
        loop {
            if let Some(value) = next.take() {
                let value = self.dumped(value, &on_path)?;
                if let Some(container) = self.scalar_or_open(&value)? {
                    if open.len() >= MAX_DEPTH {
                        return Err(self.at(&format!(
                            "nesting deeper than {MAX_DEPTH} dicts and lists is not converted to JSON"
                        )));
                    }
                    if !on_path.insert(container.address) {
                        return Err(self.at(
                            "a reference cycle: this dict or list holds itself, and JSON cannot",
                        ));
                    }
                    open.push(container);
                }
            }
            let Some(top) = open.last_mut() else {
                return Ok(());
            };
            match top.items.next() {
                Some((key, item)) => {
                    if top.written > 0 {
                        self.out.push(',');
                        self.path.pop();
                    }
                    let index = top.written;
                    top.written += 1;
                    match key {
                        Some(key) => {
                            let key = key_text(&key).map_err(|e| self.at(&e))?;
                            self.out.push_str(&key);
                            self.out.push(':');
                            self.path.push(format!("[{key}]"));
                        }
                        None => self.path.push(format!("[{index}]")),
                    }
                    next = Some(item);
                }
                None => {
                    let done = open.pop().expect("an open container");
                    if done.written > 0 {
                        self.path.pop();
                    }
                    on_path.remove(&done.address);
                    self.out.push(done.close);
                }
            }
        }
    }

    /// `value`, or what its `model_dump()` gives for an object JSON has
    /// no form for.
    fn dumped<'py>(
        &self,
        mut value: Bound<'py, PyAny>,
        on_path: &HashSet<usize>,
    ) -> Result<Bound<'py, PyAny>, String> {
        for _ in 0..MAX_DUMPS {
            if is_plain(&value) || !value.hasattr("model_dump").unwrap_or(false) {
                return Ok(value);
            }
            let dumped = value
                .call_method0("model_dump")
                .map_err(|e| self.at(&format!("model_dump() failed: {e}")))?;
            if dumped.is(&value) || on_path.contains(&address(&dumped)) {
                return Err(self.at(
                    "a reference cycle: model_dump() returned the object itself, or one that holds it",
                ));
            }
            value = dumped;
        }
        Err(self.at(&format!(
            "model_dump() gave another model {MAX_DUMPS} times in a row"
        )))
    }

    /// Writes a scalar, or writes the opening of a container and returns it.
    fn scalar_or_open<'py>(
        &mut self,
        value: &Bound<'py, PyAny>,
    ) -> Result<Option<Open<'py>>, String> {
        if value.is_none() {
            self.out.push_str("null");
        } else if let Ok(flag) = value.cast::<PyBool>() {
            self.out
                .push_str(if flag.is_true() { "true" } else { "false" });
        } else if value.is_instance_of::<PyInt>() {
            self.out
                .push_str(&int_text(value).map_err(|e| self.at(&e))?);
        } else if let Ok(float) = value.cast::<PyFloat>() {
            let number = float.value();
            let Some(json) = serde_json::Number::from_f64(number) else {
                return Err(self.at(&format!(
                    "{} is not JSON: JSON has no NaN or infinity (send a string, or null, if the tool accepts one)",
                    if number.is_nan() { "NaN".to_string() } else { number.to_string() }
                )));
            };
            let _ = write!(self.out, "{json}");
        } else if let Ok(text) = value.cast::<PyString>() {
            self.out
                .push_str(&string_text(text).map_err(|e| self.at(&e))?);
        } else if let Ok(dict) = value.cast::<PyDict>() {
            self.out.push('{');
            let items: Vec<_> = dict.iter().map(|(k, v)| (Some(k), v)).collect();
            return Ok(Some(Open {
                items: items.into_iter(),
                close: '}',
                written: 0,
                address: address(value),
            }));
        } else if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
            self.out.push('[');
            let items: Vec<_> = value
                .try_iter()
                .map_err(|e| self.at(&e.to_string()))?
                .map(|item| item.map(|item| (None, item)))
                .collect::<PyResult<_>>()
                .map_err(|e| self.at(&e.to_string()))?;
            return Ok(Some(Open {
                items: items.into_iter(),
                close: ']',
                written: 0,
                address: address(value),
            }));
        } else {
            let kind = value
                .get_type()
                .name()
                .map_or_else(|_| "this object".to_string(), |n| format!("a {n}"));
            return Err(self.at(&format!(
                "{kind} is not JSON: use dicts, lists, str, int, float, bool and None"
            )));
        }
        Ok(None)
    }

    /// `problem`, saying where it is when it is not at the top.
    fn at(&self, problem: &str) -> String {
        if self.path.is_empty() {
            problem.to_string()
        } else {
            format!("at {}: {problem}", self.path.concat())
        }
    }
}

/// Whether `object` is a dict, list or str, which JSON reads directly.
fn is_plain(object: &Bound<'_, PyAny>) -> bool {
    object.is_instance_of::<PyDict>()
        || object.is_instance_of::<PyList>()
        || object.is_instance_of::<PyString>()
}

fn address(object: &Bound<'_, PyAny>) -> usize {
    object.as_ptr() as usize
}

/// Every digit of an `int` (or of a subclass's value, like an `IntEnum`).
fn int_text(value: &Bound<'_, PyAny>) -> Result<String, String> {
    if let Ok(small) = value.extract::<i64>() {
        return Ok(small.to_string());
    }
    value
        .py()
        .get_type::<PyInt>()
        .call_method1("__repr__", (value,))
        .and_then(|text| text.extract::<String>())
        .map_err(|e| format!("cannot read the int: {e}"))
}

/// A dict key as a JSON string literal: JSON's keys are strings.
fn key_text(key: &Bound<'_, PyAny>) -> Result<String, String> {
    let Ok(text) = key.cast::<PyString>() else {
        let kind = key
            .get_type()
            .name()
            .map_or_else(|_| "?".to_string(), |n| n.to_string());
        return Err(format!(
            "a dict key of type {kind} is not JSON: keys must be str"
        ));
    };
    string_text(text)
}

/// A JSON string literal for `text`.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
}

/// A `str` as a JSON string literal; a lone surrogate (which UTF-8 cannot
/// hold, and JSON text can as an escape) is written as its `\uXXXX` escape.
fn string_text(text: &Bound<'_, PyString>) -> Result<String, String> {
    if let Ok(text) = text.to_cow() {
        return Ok(quoted(&text));
    }
    let units = text
        .call_method1("encode", ("utf-16-le", "surrogatepass"))
        .and_then(|bytes| bytes.extract::<Vec<u8>>())
        .map_err(|e| format!("cannot read the str: {e}"))?;
    let units = units
        .chunks_exact(2)
        .map(|pair| u16::from_le_bytes([pair[0], pair[1]]));
    let mut out = String::from("\"");
    for unit in char::decode_utf16(units) {
        match unit {
            Ok(c) => {
                let escaped = quoted(c.encode_utf8(&mut [0; 4]));
                out.push_str(&escaped[1..escaped.len() - 1]);
            }
            Err(lone) => {
                let _ = write!(out, "\\u{:04x}", lone.unpaired_surrogate());
            }
        }
    }
    out.push('"');
    Ok(out)
}

/// A JSON value handed back to Python when a future completes.
pub struct JsonOut(pub Value);

impl<'py> IntoPyObject<'py> for JsonOut {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Self::Output> {
        to_python(py, &self.0)
    }
}
