//! [`Arguments`]: the arguments of one tool call, one JSON object, kept as
//! the text the model wrote.

use std::fmt;
use std::sync::Arc;

use serde::de::{self, DeserializeOwned, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

use super::error::{ToolError, ToolErrorKind};

/// The arguments of a tool call: JSON text that is one object.
///
/// The text is checked once (that it is JSON, and an object) and then kept
/// as written: a WebAssembly tool receives it byte for byte, so large
/// integers, number formats and key order reach it unchanged. A native tool
/// reads it with [`Arguments::object`] or [`Arguments::parse`].
///
/// ```
/// use toolhost::Arguments;
///
/// let args = Arguments::from_json(r#"{"id": 12345678901234567890123}"#)?;
/// assert_eq!(args.as_str(), r#"{"id": 12345678901234567890123}"#);
/// assert_eq!(Arguments::from_json("  ")?.as_str(), "{}");
/// assert_eq!(
///     Arguments::from_json("[1]").unwrap_err().to_string(),
///     "Error: \"arguments\" JSON must be an object."
/// );
/// # Ok::<(), toolhost::ToolError>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Arguments {
    text: Arc<str>,
}

impl Arguments {
    /// No arguments: `{}`.
    pub fn empty() -> Self {
        Self { text: "{}".into() }
    }

    /// Checks that `text` is one JSON object (blank text means `{}`).
    pub fn from_json(text: &str) -> Result<Self, ToolError> {
        if text.trim().is_empty() {
            return Ok(Self::empty());
        }
        match serde_json::from_str::<Shape>(text) {
            Ok(Shape::Object) => Ok(Self { text: text.into() }),
            Ok(Shape::Other) => Err(invalid("\"arguments\" JSON must be an object.".into())),
            Err(e) => Err(invalid(format!("invalid JSON in arguments: {e}"))),
        }
    }

    /// The arguments of an already parsed object.
    pub fn from_object(object: &Map<String, Value>) -> Self {
        Self {
            text: Value::Object(object.clone()).to_string().into(),
        }
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The shared JSON text.
    pub(crate) fn shared_text(&self) -> Arc<str> {
        Arc::clone(&self.text)
    }

    /// The length of the JSON text in bytes.
    pub fn len(&self) -> usize {
        self.text.len()
    }

    /// Whether the JSON text is empty (never: the least is `{}`).
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The arguments as a JSON object.
    ///
    /// The text was checked to be an object, but building the tree can
    /// still fail (a number out of range, nesting deeper than 128): the
    /// error is then the `invalid JSON in arguments` text.
    pub fn object(&self) -> Result<Map<String, Value>, ToolError> {
        self.parse()
    }

    /// The arguments deserialized into `T`.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, ToolError> {
        serde_json::from_str(&self.text)
            .map_err(|e| invalid(format!("invalid JSON in arguments: {e}")))
    }
}

impl Default for Arguments {
    fn default() -> Self {
        Self::empty()
    }
}

impl fmt::Debug for Arguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Arguments").field(&&*self.text).finish()
    }
}

fn invalid(message: String) -> ToolError {
    ToolError::new(ToolErrorKind::InvalidArguments, message)
}

/// Whether a JSON value is an object, found without building it.
enum Shape {
    Object,
    Other,
}

impl<'de> serde::Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Shape::Object)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Shape::Other)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_unit<E>(self) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_kept_byte_for_byte() {
        let text = r#"{"big":12345678901234567890123,"f":1.10,"e":1e2,"dup":1,"dup":2}"#;
        assert_eq!(Arguments::from_json(text).unwrap().as_str(), text);
    }
    #[test]
    fn text_that_is_not_one_object_is_refused() {
        let e = |text: &str| Arguments::from_json(text).unwrap_err().to_string();
        assert_eq!(e("[1]"), "Error: \"arguments\" JSON must be an object.");
        assert_eq!(e("3"), "Error: \"arguments\" JSON must be an object.");
        assert_eq!(
            e("{bad"),
            "Error: invalid JSON in arguments: key must be a string at line 1 column 2"
        );
        assert_eq!(
            e("{} x"),
            "Error: invalid JSON in arguments: trailing characters at line 1 column 4"
        );
        assert_eq!(Arguments::from_json(" \n").unwrap().as_str(), "{}");
    }
}
