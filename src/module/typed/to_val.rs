//! JSON arguments to component values, checked against the function's
//! types before any instance runs: the shapes of `schema.rs`, converted
//! exactly (64-bit integers kept whole, no float where an integer is due).

use std::collections::HashSet;

use serde_json::{Map, Number, Value};
use wasmtime::component::{Type, Val};

use crate::policy::limit_key;

/// A wrong argument: the field's path (`p.points[2].x`), what it must be
/// and what was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WrongArgument(pub String);

/// How much host memory the values of a call's arguments may take: at most
/// [`ARGUMENT_EXPANSION`] times the arguments' bytes plus
/// [`ARGUMENT_FLOOR_BYTES`], and at most the call's `memory_mib`.
pub(crate) fn argument_budget(argument_bytes: usize, memory_bytes: u64) -> Budget {
    let proportional = argument_bytes
        .saturating_mul(ARGUMENT_EXPANSION)
        .saturating_add(ARGUMENT_FLOOR_BYTES);
    let memory = usize::try_from(memory_bytes).unwrap_or(usize::MAX);
    Budget {
        left: proportional.min(memory),
        total: proportional.min(memory),
        by_memory: memory < proportional,
    }
}

/// Host bytes the values may take per byte of arguments.
pub(crate) const ARGUMENT_EXPANSION: usize = 64;
/// Host bytes the values may take whatever the arguments' size (an empty
/// object for a record of many optional fields is a few bytes).
pub(crate) const ARGUMENT_FLOOR_BYTES: usize = 1024 * 1024;

/// The host memory left for a call's argument values, charged before each
/// allocation.
#[derive(Debug)]
pub(crate) struct Budget {
    left: usize,
    total: usize,
    by_memory: bool,
}

impl Budget {
    /// Takes `bytes`, or says that the arguments are too large to convert.
    fn take(&mut self, bytes: usize) -> Result<(), WrongArgument> {
        match self.left.checked_sub(bytes) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => {
                let memory = limit_key::memory_mib;
                let most = if self.by_memory {
                    format!("the call's {memory} allows")
                } else {
                    format!(
                        "allowed for arguments of this size (64 times their bytes, plus 1 MiB; \
                         at most {memory})"
                    )
                };
                Err(WrongArgument(format!(
                    "as component values they would take more than {} bytes of host memory, the \
                     most {most}; send fewer or smaller values",
                    self.total
                )))
            }
        }
    }

    /// Takes room for `n` values of type `T` (a vector's buffer).
    fn take_many<T>(&mut self, n: usize) -> Result<(), WrongArgument> {
        self.take(n.saturating_mul(std::mem::size_of::<T>()))
    }
}

/// Where a value is in the arguments (`p.points[2].x`), written out only
/// for an error.
#[derive(Clone, Copy)]
enum Path<'a> {
    Field(Option<&'a Path<'a>>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Path::Field(None, name) => f.write_str(name),
            Path::Field(Some(parent), name) => write!(f, "{parent}.{name}"),
            Path::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

/// The values of a call's parameters, from its JSON object of arguments,
/// taking their host memory from `budget`.
pub(crate) fn arguments(
    params: &[(String, Type)],
    object: &Map<String, Value>,
    budget: &mut Budget,
) -> Result<Vec<Val>, WrongArgument> {
    if let Some(unknown) = object.keys().find(|k| !params.iter().any(|(n, _)| n == *k)) {
        let names: Vec<&str> = params.iter().map(|(n, _)| n.as_str()).collect();
        let list = if names.is_empty() {
            "it takes none".to_string()
        } else {
            format!("its parameters: {}", listed(names.into_iter()))
        };
        return Err(WrongArgument(format!(
            "'{}' is not a parameter of this tool ({list})",
            short(unknown)
        )));
    }
    budget.take_many::<Val>(params.len())?;
    params
        .iter()
        .map(|(name, ty)| field(&Path::Field(None, name), ty, object.get(name), budget))
        .collect()
}

/// A field of an object (a parameter or a record's field): absent is
/// `none` for an option, and an error for anything else.
fn field(
    path: &Path<'_>,
    ty: &Type,
    value: Option<&Value>,
    budget: &mut Budget,
) -> Result<Val, WrongArgument> {
    match value {
        Some(value) => to_val(path, ty, value, budget),
        None if matches!(ty, Type::Option(_)) => Ok(Val::Option(None)),
        None => Err(WrongArgument(format!(
            "field '{path}' is missing: expected {}",
            expected(ty)
        ))),
    }
}

/// `value` as a value of `ty`; `path` names it in errors. The caller has
/// taken the room of the value itself; what it holds is taken here.
fn to_val(
    path: &Path<'_>,
    ty: &Type,
    value: &Value,
    budget: &mut Budget,
) -> Result<Val, WrongArgument> {
    let wrong = || {
        WrongArgument(format!(
            "field '{path}': expected {}, got {}",
            expected(ty),
            given(value)
        ))
    };
    Ok(match ty {
        Type::Bool => Val::Bool(value.as_bool().ok_or_else(wrong)?),
        Type::S8 => Val::S8(
            int(value)
                .and_then(|n| i8::try_from(n).ok())
                .ok_or_else(wrong)?,
        ),
        Type::U8 => Val::U8(
            int(value)
                .and_then(|n| u8::try_from(n).ok())
                .ok_or_else(wrong)?,
        ),
        Type::S16 => Val::S16(
            int(value)
                .and_then(|n| i16::try_from(n).ok())
                .ok_or_else(wrong)?,
        ),
        Type::U16 => Val::U16(
            int(value)
                .and_then(|n| u16::try_from(n).ok())
                .ok_or_else(wrong)?,
        ),
        Type::S32 => Val::S32(
            int(value)
                .and_then(|n| i32::try_from(n).ok())
                .ok_or_else(wrong)?,
        ),
        Type::U32 => Val::U32(
            int(value)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(wrong)?,
        ),
        Type::S64 => Val::S64(
            int(value)
                .and_then(|n| i64::try_from(n).ok())
                .ok_or_else(wrong)?,
        ),
        Type::U64 => Val::U64(
            int(value)
                .and_then(|n| u64::try_from(n).ok())
                .ok_or_else(wrong)?,
        ),
        Type::Float32 => {
            let x = float(value).ok_or_else(wrong)?;
            if x.is_finite() && (x as f32).is_infinite() {
                return Err(WrongArgument(format!(
                    "field '{path}': {value} is out of range for a 32-bit float (f32)"
                )));
            }
            Val::Float32(x as f32)
        }
        Type::Float64 => Val::Float64(float(value).ok_or_else(wrong)?),
        Type::Char => {
            let s = value.as_str().ok_or_else(wrong)?;
            let mut chars = s.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Val::Char(c),
                _ => return Err(wrong()),
            }
        }
        Type::String => {
            let text = value.as_str().ok_or_else(wrong)?;
            budget.take(text.len())?;
            Val::String(text.to_string())
        }
        Type::List(list) => {
            let items = value.as_array().ok_or_else(wrong)?;
            let inner = list.ty();
            Val::List(elements(path, &inner, items, budget)?)
        }
        Type::FixedLengthList(list) => {
            let items = value.as_array().ok_or_else(wrong)?;
            if items.len() != list.len() as usize {
                return Err(wrong());
            }
            Val::FixedLengthList(elements(path, &list.ty(), items, budget)?)
        }
        Type::Record(record) => {
            let object = value.as_object().ok_or_else(wrong)?;
            let known = record
                .fields()
                .filter(|f| object.contains_key(f.name))
                .count();
            if known < object.len() {
                let unknown = object
                    .keys()
                    .find(|k| !record.fields().any(|f| f.name == k.as_str()))
                    .map_or_else(String::new, |k| short(k));
                return Err(WrongArgument(format!(
                    "field '{path}': '{unknown}' is not one of its fields ({})",
                    listed(record.fields().map(|f| f.name))
                )));
            }
            budget.take_many::<(String, Val)>(record.fields().len())?;
            let fields = record
                .fields()
                .map(|f| {
                    budget.take(f.name.len())?;
                    let at = Path::Field(Some(path), f.name);
                    let value = field(&at, &f.ty, object.get(f.name), budget)?;
                    Ok((f.name.to_string(), value))
                })
                .collect::<Result<Vec<_>, WrongArgument>>()?;
            Val::Record(fields)
        }
        Type::Tuple(tuple) => {
            let items = value.as_array().ok_or_else(wrong)?;
            if items.len() != tuple.types().len() {
                return Err(wrong());
            }
            budget.take_many::<Val>(items.len())?;
            let values = tuple
                .types()
                .zip(items)
                .enumerate()
                .map(|(i, (t, v))| to_val(&Path::Index(path, i), &t, v, budget))
                .collect::<Result<Vec<_>, _>>()?;
            Val::Tuple(values)
        }
        Type::Variant(variant) => {
            let cases: Vec<(&str, Option<Type>)> =
                variant.cases().map(|c| (c.name, c.ty)).collect();
            let (tag, payload) = tagged(path, &cases, value, ty, budget)?;
            Val::Variant(tag, payload)
        }
        Type::Result(result) => {
            let cases = [("ok", result.ok()), ("err", result.err())];
            let (tag, payload) = tagged(path, &cases, value, ty, budget)?;
            Val::Result(if tag == "ok" {
                Ok(payload)
            } else {
                Err(payload)
            })
        }
        Type::Enum(e) => {
            let name = value.as_str().ok_or_else(wrong)?;
            if !e.names().any(|n| n == name) {
                return Err(wrong());
            }
            budget.take(name.len())?;
            Val::Enum(name.to_string())
        }
        Type::Flags(flags) => {
            let items = value.as_array().ok_or_else(wrong)?;
            if items.len() > flags.names().len() {
                return Err(wrong());
            }
            budget.take_many::<(&str, String)>(items.len())?;
            let mut seen = HashSet::new();
            let mut names = Vec::with_capacity(items.len());
            for item in items {
                let name = item.as_str().ok_or_else(wrong)?;
                if !flags.names().any(|n| n == name) || !seen.insert(name) {
                    return Err(wrong());
                }
                budget.take(name.len())?;
                names.push(name.to_string());
            }
            Val::Flags(names)
        }
        Type::Option(option) => {
            let inner = option.ty();
            match value {
                Value::Null => Val::Option(None),
                _ if matches!(inner, Type::Option(_)) => {
                    let object = value.as_object().filter(|o| o.len() == 1);
                    let some = object.and_then(|o| o.get("some")).ok_or_else(wrong)?;
                    let at = Path::Field(Some(path), "some");
                    budget.take_many::<Val>(1)?;
                    Val::Option(Some(Box::new(to_val(&at, &inner, some, budget)?)))
                }
                _ => {
                    budget.take_many::<Val>(1)?;
                    Val::Option(Some(Box::new(to_val(path, &inner, value, budget)?)))
                }
            }
        }
        // Functions with other types are never offered.
        other => {
            return Err(WrongArgument(format!(
                "field '{path}': {} cannot be given as JSON",
                super::not_json(other)
            )));
        }
    })
}

fn elements(
    path: &Path<'_>,
    ty: &Type,
    items: &[Value],
    budget: &mut Budget,
) -> Result<Vec<Val>, WrongArgument> {
    budget.take_many::<Val>(items.len())?;
    items
        .iter()
        .enumerate()
        .map(|(i, v)| to_val(&Path::Index(path, i), ty, v, budget))
        .collect()
}

/// The case and payload of a tagged object `{"tag": ..., "value": ...}`.
fn tagged(
    path: &Path<'_>,
    cases: &[(&str, Option<Type>)],
    value: &Value,
    ty: &Type,
    budget: &mut Budget,
) -> Result<(String, Option<Box<Val>>), WrongArgument> {
    let wrong = || {
        WrongArgument(format!(
            "field '{path}': expected {}, got {}",
            expected(ty),
            given(value)
        ))
    };
    let object = value.as_object().ok_or_else(wrong)?;
    let tag = object
        .get("tag")
        .and_then(Value::as_str)
        .ok_or_else(wrong)?;
    let Some((name, payload_ty)) = cases.iter().find(|(n, _)| *n == tag) else {
        return Err(wrong());
    };
    if let Some(extra) = object.keys().find(|k| *k != "tag" && *k != "value") {
        return Err(WrongArgument(format!(
            "field '{path}': '{}' is not a key of a tagged value (tag, value)",
            short(extra)
        )));
    }
    budget.take(name.len())?;
    let payload = match (payload_ty, object.get("value")) {
        (Some(t), Some(v)) => {
            budget.take_many::<Val>(1)?;
            let at = Path::Field(Some(path), "value");
            Some(Box::new(to_val(&at, t, v, budget)?))
        }
        (Some(t), None) => {
            return Err(WrongArgument(format!(
                "field '{path}.value' is missing: case '{name}' carries {}",
                expected(t)
            )));
        }
        (None, None) => None,
        (None, Some(_)) => {
            return Err(WrongArgument(format!(
                "field '{path}': case '{name}' carries no value"
            )));
        }
    };
    Ok((name.to_string(), payload))
}

/// Floats at or past this magnitude stand for more than one integer (a
/// double's neighbours are 2 apart there: `9007199254740993.0` reads as
/// `9007199254740992.0`), so none of them is taken as an integer.
const EXACT_FLOATS_BELOW: f64 = 9_007_199_254_740_992.0; // 2^53
/// 2^64: past it, a float is out of every integer type's range anyway.
const U64_END: f64 = 18_446_744_073_709_551_616.0;

/// An integer, exactly: a JSON integer, or a float with no fraction below
/// 2^53 (where a double is exactly one integer).
fn int(value: &Value) -> Option<i128> {
    let Value::Number(n) = value else {
        return None;
    };
    if let Some(i) = n.as_i64() {
        return Some(i.into());
    }
    if let Some(u) = n.as_u64() {
        return Some(u.into());
    }
    let x = n.as_f64()?;
    (x.fract() == 0.0 && x.abs() < EXACT_FLOATS_BELOW).then_some(x as i128)
}

/// A float: a JSON number, or "NaN", "Infinity" or "-Infinity".
fn float(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// What a value of `ty` must be, in words.
pub(crate) fn expected(ty: &Type) -> String {
    match ty {
        Type::Bool => "a boolean".into(),
        Type::S8 => range("s8", i8::MIN.into(), i8::MAX.into()),
        Type::U8 => range("u8", 0, u8::MAX.into()),
        Type::S16 => range("s16", i16::MIN.into(), i16::MAX.into()),
        Type::U16 => range("u16", 0, u16::MAX.into()),
        Type::S32 => range("s32", i32::MIN.into(), i32::MAX.into()),
        Type::U32 => range("u32", 0, u32::MAX.into()),
        Type::S64 => range("s64", i64::MIN.into(), i64::MAX.into()),
        Type::U64 => range("u64", 0, u64::MAX.into()),
        Type::Float32 | Type::Float64 => {
            "a number (or \"NaN\", \"Infinity\", \"-Infinity\")".into()
        }
        Type::Char => "a string of one character".into(),
        Type::String => "a string".into(),
        Type::List(_) => "an array".into(),
        Type::FixedLengthList(l) => format!("an array of {} items", l.len()),
        Type::Record(r) => {
            format!(
                "an object with fields {}",
                listed(r.fields().map(|f| f.name))
            )
        }
        Type::Tuple(t) => format!("an array of {} items", t.types().len()),
        Type::Variant(v) => {
            format!(
                "an object {{\"tag\": ...}} with tag one of {}",
                listed(v.cases().map(|c| c.name))
            )
        }
        Type::Result(_) => "an object {\"tag\": \"ok\" or \"err\", \"value\": ...}".into(),
        Type::Enum(e) => {
            format!("one of the strings {}", listed(e.names()))
        }
        Type::Flags(f) => {
            format!("an array of distinct strings from {}", listed(f.names()))
        }
        Type::Option(o) => format!("null or {}", expected(&o.ty())),
        other => super::not_json(other).into(),
    }
}

/// The most names an error lists (of fields, cases, flags).
const NAMES_LISTED: usize = 32;

/// `names` as an error lists them: the first [`NAMES_LISTED`], each cut to
/// 60 characters, then how many more; bounded whatever the type.
fn listed<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let mut text = String::new();
    let mut more = 0usize;
    for (i, name) in names.enumerate() {
        if i >= NAMES_LISTED {
            more += 1;
            continue;
        }
        if i > 0 {
            text.push_str(", ");
        }
        text.push_str(&short(name));
    }
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    text
}

fn range(name: &str, min: i128, max: i128) -> String {
    format!("an integer from {min} to {max} ({name})")
}

/// What was given, in words: its JSON type and (shortened) text.
fn given(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "null".into(),
        Value::Bool(_) => "boolean",
        Value::Number(n) if is_integer(n) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(a) => return format!("an array of {} items", a.len()),
        Value::Object(_) => "object",
    };
    let inexact = match value {
        Value::Number(n) if !is_integer(n) => n
            .as_f64()
            .is_some_and(|x| (EXACT_FLOATS_BELOW..U64_END).contains(&x.abs())),
        _ => false,
    };
    let hint = if inexact {
        " (a number with a fraction or exponent this large is not exact: write the integer's digits)"
    } else {
        ""
    };
    format!("{kind} {}{hint}", short(&value.to_string()))
}

fn is_integer(n: &Number) -> bool {
    n.is_i64() || n.is_u64()
}

/// `text` cut to 60 characters for an error.
fn short(text: &str) -> String {
    const MAX: usize = 60;
    match text.char_indices().nth(MAX) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_names_are_bounded_in_number_and_length() {
        assert_eq!(listed(["a", "b"].into_iter()), "a, b");
        let long = "x".repeat(99_000);
        let names: Vec<&str> = (0..2_000).map(|_| long.as_str()).collect();
        let text = listed(names.into_iter());
        assert!(
            text.ends_with(" and 1968 more"),
            "{}",
            &text[text.len() - 20..]
        );
        assert!(text.len() < 32 * 70, "{} bytes", text.len());
    }
}
