//! A call's results as the answer text: a `string` is the text itself,
//! anything else compact JSON in the shapes of `schema.rs`; a `result`'s
//! `err` is the tool's error.
//!
//! The JSON is written straight from the values into a text that stops at
//! the call's output limit and at its deadline, so turning a result into
//! text never costs more host memory than the answer may have, nor more
//! time than the call has left.

use std::io;
use std::time::Instant;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use wasmtime::component::Val;

use crate::sandbox::TextStopped;

/// The answer of a call that returned `results` (none or one value):
/// `Ok` is the answer text, `Err` the text of the tool's own error; at
/// most `max_bytes` of either (a longer error is cut, saying so), written
/// before `deadline`.
pub(crate) fn answer(
    results: Vec<Val>,
    max_bytes: usize,
    deadline: Instant,
) -> Result<Result<String, String>, TextStopped> {
    let Some(value) = results.into_iter().next() else {
        return Ok(Ok(String::new()));
    };
    match value {
        Val::Result(Ok(payload)) => text(payload.map(|v| *v), max_bytes, deadline).map(Ok),
        Val::Result(Err(payload)) => match text(payload.map(|v| *v), max_bytes, deadline) {
            Ok(error) => Ok(Err(error)),
            Err(TextStopped::PastLimit(cut)) => Ok(Err(format!(
                "{cut}... (cut: more than {max_bytes} bytes, the output limit)"
            ))),
            Err(late) => Err(late),
        },
        other => text(Some(other), max_bytes, deadline).map(Ok),
    }
}

/// A string as itself (already held: the caller checks its size), anything
/// else as compact JSON (nothing: empty).
fn text(value: Option<Val>, max_bytes: usize, deadline: Instant) -> Result<String, TextStopped> {
    match value {
        None => Ok(String::new()),
        Some(Val::String(s)) => Ok(s),
        Some(other) => {
            let mut out = Bounded::new(max_bytes, deadline);
            match serde_json::to_writer(&mut out, &Json(&other)) {
                Ok(()) => Ok(out.into_text()),
                Err(_) => Err(out.stopped()),
            }
        }
    }
}

/// `text` cut at a character boundary to at most `max` bytes.
fn cut(text: &str, max: usize) -> &str {
    &text[..text.floor_char_boundary(max)]
}

/// How many writes pass between two looks at the clock.
const WRITES_PER_CLOCK_CHECK: u32 = 256;

/// A text that refuses to grow past `max_bytes` or past `deadline`.
struct Bounded {
    bytes: Vec<u8>,
    max_bytes: usize,
    deadline: Instant,
    writes: u32,
    late: bool,
}

impl Bounded {
    fn new(max_bytes: usize, deadline: Instant) -> Self {
        Self {
            bytes: Vec::new(),
            max_bytes,
            deadline,
            writes: 0,
            late: false,
        }
    }

    /// The JSON written (serde_json writes UTF-8).
    fn into_text(self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }

    /// Why writing stopped.
    fn stopped(self) -> TextStopped {
        if self.late {
            TextStopped::PastDeadline
        } else {
            let max = self.max_bytes;
            TextStopped::PastLimit(cut(&self.into_text(), max).to_string())
        }
    }
}

impl io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writes = self.writes.wrapping_add(1);
        if self.writes.is_multiple_of(WRITES_PER_CLOCK_CHECK) && Instant::now() >= self.deadline {
            self.late = true;
            return Err(io::Error::other("past the call's deadline"));
        }
        if self.bytes.len() + buf.len() > self.max_bytes {
            let room = self.max_bytes - self.bytes.len();
            self.bytes.extend_from_slice(&buf[..room]);
            return Err(io::Error::other("past the output limit"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A value as JSON, in the shapes of `schema.rs`.
struct Json<'a>(&'a Val);

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Val::Bool(b) => s.serialize_bool(*b),
            Val::S8(n) => s.serialize_i8(*n),
            Val::U8(n) => s.serialize_u8(*n),
            Val::S16(n) => s.serialize_i16(*n),
            Val::U16(n) => s.serialize_u16(*n),
            Val::S32(n) => s.serialize_i32(*n),
            Val::U32(n) => s.serialize_u32(*n),
            Val::S64(n) => s.serialize_i64(*n),
            Val::U64(n) => s.serialize_u64(*n),
            // The shortest decimal that reads back as the same f32, not the
            // f64 the f32 widens to (0.1, not 0.10000000149011612).
            Val::Float32(x) if x.is_finite() => s.serialize_f32(*x),
            Val::Float32(x) => s.serialize_str(non_finite((*x).into())),
            Val::Float64(x) if x.is_finite() => s.serialize_f64(*x),
            Val::Float64(x) => s.serialize_str(non_finite(*x)),
            Val::Char(c) => s.serialize_char(*c),
            Val::String(text) => s.serialize_str(text),
            Val::List(items) | Val::Tuple(items) | Val::FixedLengthList(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&Json(item))?;
                }
                seq.end()
            }
            Val::Record(fields) => {
                let mut map = s.serialize_map(Some(fields.len()))?;
                for (name, value) in fields {
                    map.serialize_entry(name, &Json(value))?;
                }
                map.end()
            }
            Val::Variant(tag, payload) => tagged(s, tag, payload.as_deref()),
            Val::Result(Ok(payload)) => tagged(s, "ok", payload.as_deref()),
            Val::Result(Err(payload)) => tagged(s, "err", payload.as_deref()),
            Val::Enum(name) => s.serialize_str(name),
            Val::Flags(names) => {
                let mut seq = s.serialize_seq(Some(names.len()))?;
                for name in names {
                    seq.serialize_element(name)?;
                }
                seq.end()
            }
            Val::Option(None) => s.serialize_unit(),
            Val::Option(Some(inner)) => match &**inner {
                // An option of an option: the inner value is wrapped, so
                // that `null` stays the outer none.
                inner @ Val::Option(_) => {
                    let mut map = s.serialize_map(Some(1))?;
                    map.serialize_entry("some", &Json(inner))?;
                    map.end()
                }
                inner => Json(inner).serialize(s),
            },
            // Functions with other types are never offered.
            Val::Map(_)
            | Val::Resource(_)
            | Val::Future(_)
            | Val::Stream(_)
            | Val::ErrorContext(_) => s.serialize_unit(),
        }
    }
}

/// `{"tag": tag}` or `{"tag": tag, "value": ...}`.
fn tagged<S: Serializer>(s: S, tag: &str, payload: Option<&Val>) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(Some(1 + usize::from(payload.is_some())))?;
    map.serialize_entry("tag", tag)?;
    if let Some(value) = payload {
        map.serialize_entry("value", &Json(value))?;
    }
    map.end()
}

/// The string JSON has for a float it has no number for.
fn non_finite(x: f64) -> &'static str {
    if x.is_nan() {
        "NaN"
    } else if x > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn later() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    #[test]
    fn values_are_written_in_the_schema_shapes() {
        let value = Val::Record(vec![
            ("f".into(), Val::Float32(0.1)),
            ("n".into(), Val::Float64(f64::NAN)),
            ("u".into(), Val::U64(u64::MAX)),
            ("o".into(), Val::Option(Some(Box::new(Val::Option(None))))),
            ("v".into(), Val::Variant("at".into(), None)),
            ("fl".into(), Val::Flags(vec!["a".into(), "b".into()])),
            ("e".into(), Val::Enum("red".into())),
            ("c".into(), Val::Char('é')),
        ]);
        assert_eq!(
            answer(vec![value], 1000, later()),
            Ok(Ok(r#"{"f":0.1,"n":"NaN","u":18446744073709551615,"o":{"some":null},"v":{"tag":"at"},"fl":["a","b"],"e":"red","c":"é"}"#.into()))
        );
        assert_eq!(
            answer(vec![Val::String("as is".into())], 1000, later()),
            Ok(Ok("as is".into()))
        );
        let err = Val::Result(Err(Some(Box::new(Val::String("no".into())))));
        assert_eq!(answer(vec![err], 1000, later()), Ok(Err("no".into())));
    }

    #[test]
    fn writing_stops_at_the_limit_and_the_deadline() {
        let many = || Val::List(vec![Val::Flags(vec!["abc".into(); 32]); 100_000]);
        match answer(vec![many()], 1000, later()) {
            Err(TextStopped::PastLimit(cut)) => assert_eq!(cut.len(), 1000),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            answer(vec![many()], usize::MAX, Instant::now()),
            Err(TextStopped::PastDeadline)
        );
        let err = Val::Result(Err(Some(Box::new(many()))));
        let Ok(Err(text)) = answer(vec![err], 100, later()) else {
            panic!("an error is cut, not a fault");
        };
        assert!(text.ends_with("... (cut: more than 100 bytes, the output limit)"));
    }
}
