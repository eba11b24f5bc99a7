//! [`Json`]: a JSON value either already parsed (a `serde_json::Value`) or
//! still raw text, read one level at a time.
//!
//! Calls that arrive as text (the command's `dispatch`, a server's request)
//! are read this way: only the parts a call needs are looked at, and its
//! arguments stay text, so no tree is ever built of what a model wrote.
//! Both forms go through the same code, so they answer alike.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::tool::json_type_name;

/// A JSON value: a parsed tree, or raw text not parsed yet.
#[derive(Debug, Clone, Copy)]
pub enum Json<'a> {
    /// An already parsed value.
    Tree(&'a Value),
    /// JSON text, parsed only as far as it is read.
    Raw(&'a RawValue),
}

/// The members of a JSON object (the last of a repeated key wins).
pub(crate) enum Object<'a> {
    Tree(&'a serde_json::Map<String, Value>),
    Raw(BTreeMap<Cow<'a, str>, &'a RawValue>),
}

impl<'a> From<&'a Value> for Json<'a> {
    fn from(value: &'a Value) -> Self {
        Json::Tree(value)
    }
}

impl<'a> From<&'a RawValue> for Json<'a> {
    fn from(raw: &'a RawValue) -> Self {
        Json::Raw(raw)
    }
}

impl<'a> Json<'a> {
    /// The JSON type, as error texts name it (`object`, `array`, ...).
    pub fn type_name(self) -> &'static str {
        match self {
            Json::Tree(value) => json_type_name(value),
            Json::Raw(raw) => match raw.get().trim_start().as_bytes().first() {
                Some(b'{') => "object",
                Some(b'[') => "array",
                Some(b'"') => "string",
                Some(b't' | b'f') => "boolean",
                Some(b'n') => "null",
                _ => "number",
            },
        }
    }

    /// Whether this is `null`.
    pub fn is_null(self) -> bool {
        self.type_name() == "null"
    }

    /// The members, if this is an object.
    pub(crate) fn object(self) -> Option<Object<'a>> {
        match self {
            Json::Tree(Value::Object(map)) => Some(Object::Tree(map)),
            Json::Tree(_) => None,
            Json::Raw(raw) if self.type_name() == "object" => {
                serde_json::from_str(raw.get()).ok().map(Object::Raw)
            }
            Json::Raw(_) => None,
        }
    }

    /// The elements, if this is an array.
    pub(crate) fn array(self) -> Option<Vec<Json<'a>>> {
        match self {
            Json::Tree(Value::Array(items)) => Some(items.iter().map(Json::Tree).collect()),
            Json::Tree(_) => None,
            Json::Raw(raw) if self.type_name() == "array" => {
                let items: Vec<&'a RawValue> = serde_json::from_str(raw.get()).ok()?;
                Some(items.into_iter().map(Json::Raw).collect())
            }
            Json::Raw(_) => None,
        }
    }

    /// The text, if this is a string.
    pub(crate) fn string(self) -> Option<Cow<'a, str>> {
        match self {
            Json::Tree(Value::String(text)) => Some(Cow::Borrowed(text)),
            Json::Tree(_) => None,
            Json::Raw(raw) if self.type_name() == "string" => serde_json::from_str(raw.get()).ok(),
            Json::Raw(_) => None,
        }
    }
}

impl<'a> Object<'a> {
    /// The member `key`, if there is one.
    pub(crate) fn get(&self, key: &str) -> Option<Json<'a>> {
        match self {
            Object::Tree(map) => map.get(key).map(Json::Tree),
            Object::Raw(members) => members.get(key).copied().map(Json::Raw),
        }
    }

    /// Whether there is a member `key`.
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn raw(text: &str) -> Box<RawValue> {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn both_forms_read_alike() {
        let text = r#"{"a": [1, "x", null], "b": "t\u00e9", "a2": {"k": true}, "b": "last"}"#;
        let tree: Value = serde_json::from_str(text).unwrap();
        let parsed = raw(text);
        for json in [Json::Tree(&tree), Json::Raw(&parsed)] {
            assert_eq!(json.type_name(), "object");
            let object = json.object().unwrap();
            let items = object.get("a").unwrap().array().unwrap();
            let types: Vec<&str> = items.iter().map(|i| i.type_name()).collect();
            assert_eq!(types, ["number", "string", "null"]);
            assert_eq!(items[1].string().as_deref(), Some("x"));
            assert!(items[2].is_null());
            assert_eq!(object.get("b").unwrap().string().as_deref(), Some("last"));
            assert_eq!(object.get("a2").unwrap().type_name(), "object");
            assert!(!object.contains("zzz"));
        }
        assert_eq!(Json::Raw(&raw("true")).type_name(), "boolean");
        assert_eq!(Json::Raw(&raw("-1.5")).type_name(), "number");
        assert!(Json::Tree(&json!([1])).object().is_none());
    }
}
