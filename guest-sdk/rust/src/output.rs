//! Turning a tool function's `Ok` value into the text the model reads.

use serde::Serialize;

/// A value a tool can return: it becomes the `ok` text of `call`.
///
/// Strings are returned as they are; [`serde_json::Value`] and [`Json`] are
/// returned as compact JSON text.
pub trait IntoOutput {
    /// The text for the model, or an error text if the value cannot be encoded.
    fn into_output(self) -> Result<String, String>;
}

impl IntoOutput for String {
    fn into_output(self) -> Result<String, String> {
        Ok(self)
    }
}

impl IntoOutput for &str {
    fn into_output(self) -> Result<String, String> {
        Ok(self.to_owned())
    }
}

impl IntoOutput for serde_json::Value {
    fn into_output(self) -> Result<String, String> {
        Ok(self.to_string())
    }
}

/// Wraps any [`Serialize`] value so that a tool returns it as JSON text.
///
/// ```
/// use toolhost_guest::{IntoOutput, Json};
/// #[derive(serde::Serialize)]
/// struct Counts { words: usize }
/// assert_eq!(Json(Counts { words: 3 }).into_output().unwrap(), r#"{"words":3}"#);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoOutput for Json<T> {
    fn into_output(self) -> Result<String, String> {
        serde_json::to_string(&self.0).map_err(|e| format!("cannot encode the result as JSON: {e}"))
    }
}
