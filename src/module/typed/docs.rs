//! The WIT doc comments a component carries: its `package-docs` custom
//! section (the JSON that `wasm-tools component wit` reads, after one
//! version byte), read for the descriptions of exported functions.

use serde_json::Value;
use wasmparser::{Parser, Payload};

/// The largest `package-docs` section read; a larger one is skipped.
const MAX_SECTION_BYTES: usize = 1024 * 1024;
/// The longest description kept from a doc comment.
const MAX_DOC_CHARS: usize = 4096;

/// The doc comments of a component, as far as it carries them.
#[derive(Debug, Default)]
pub(crate) struct PackageDocs {
    json: Option<Value>,
}

impl PackageDocs {
    /// Reads the component's top-level `package-docs` section; a missing,
    /// oversized or malformed one gives no docs (this never rejects).
    pub(crate) fn of(bytes: &[u8]) -> Self {
        let mut depth = 0usize;
        for payload in Parser::new(0).parse_all(bytes) {
            let Ok(payload) = payload else { break };
            match payload {
                Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
                Payload::End(_) => depth = depth.saturating_sub(1),
                Payload::CustomSection(s)
                    if depth == 0
                        && s.name() == "package-docs"
                        && s.data().len() <= MAX_SECTION_BYTES =>
                {
                    let json = match s.data().split_first() {
                        Some((0 | 1, rest)) => serde_json::from_slice(rest).ok(),
                        _ => None,
                    };
                    return Self { json };
                }
                _ => {}
            }
        }
        Self::default()
    }

    /// The doc comment of function `func`, exported by the world or, with
    /// `interface` (its short name, `text` of `test:plain/text@0.1.0`), by
    /// that interface.
    pub(crate) fn function(&self, interface: Option<(&str, &str)>, func: &str) -> Option<String> {
        let json = self.json.as_ref()?;
        let docs = match interface {
            None => worlds(json).find_map(|w| {
                func_docs(w.get("func_exports"), func).or_else(|| func_docs(w.get("funcs"), func))
            }),
            Some((export, short)) => worlds(json)
                .find_map(|w| {
                    let named = |key: &str| w.get(key).and_then(|m| m.get(export));
                    func_docs(
                        named("interface_exports").and_then(|i| i.get("funcs")),
                        func,
                    )
                    .or_else(|| func_docs(named("interfaces").and_then(|i| i.get("funcs")), func))
                })
                .or_else(|| {
                    let interface = json.get("interfaces")?.get(short)?;
                    func_docs(interface.get("funcs"), func)
                }),
        }?;
        let docs = docs.trim();
        if docs.is_empty() {
            return None;
        }
        Some(docs.chars().take(MAX_DOC_CHARS).collect())
    }
}

fn worlds(json: &Value) -> impl Iterator<Item = &Value> {
    json.get("worlds")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|m| m.values())
}

/// A function's docs in a `funcs` map: a string (the first format) or an
/// object with `docs`.
fn func_docs<'a>(funcs: Option<&'a Value>, func: &str) -> Option<&'a str> {
    match funcs?.get(func)? {
        Value::String(s) => Some(s),
        entry => entry.get("docs")?.as_str(),
    }
}
