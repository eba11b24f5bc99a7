//! What a component says about how it was made: the language runtime it
//! carries, when that is recognisable.
//!
//! Read from the component's (and its nested core modules') `producers`
//! custom sections and module names; nothing is executed. Stripped
//! components say nothing, and then neither does this.

use std::collections::BTreeSet;

use wasmparser::{KnownCustom, Name, Parser, Payload};

/// The largest `producers` section read; a larger one is skipped (real ones
/// are a few hundred bytes).
const MAX_PRODUCERS_SECTION: usize = 64 * 1024;
/// The most entries kept in each set, and the longest entry.
const MAX_ENTRIES: usize = 32;
const MAX_ENTRY_BYTES: usize = 128;

/// How a component was made, as far as its custom sections tell: a small
/// summary (at most 32 entries of 128 bytes in each set), whatever the
/// sections hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Producers {
    /// `language` fields (`JavaScript`, `Rust`, `C11`, ...).
    pub languages: BTreeSet<String>,
    /// `processed-by` fields with their versions (`ComponentizeJS 0.23.0`).
    pub tools: BTreeSet<String>,
    /// Names of the nested core modules that have one (`libpython3.14.so`).
    pub module_names: BTreeSet<String>,
}

impl Producers {
    /// Reads the producers of `bytes`, a component or core module. Malformed
    /// sections are skipped: this only describes, it never rejects.
    pub fn of(bytes: &[u8]) -> Producers {
        let mut producers = Producers::default();
        for payload in Parser::new(0).parse_all(bytes) {
            let Ok(Payload::CustomSection(section)) = payload else {
                if payload.is_err() {
                    break;
                }
                continue;
            };
            match section.as_known() {
                KnownCustom::Producers(reader) if section.data().len() <= MAX_PRODUCERS_SECTION => {
                    producers.add_fields(reader)
                }
                KnownCustom::Name(reader) => producers.add_module_name(reader),
                _ => {}
            }
        }
        producers
    }

    fn add_fields(&mut self, reader: wasmparser::ProducersSectionReader<'_>) {
        for field in reader.into_iter().flatten() {
            let target = match field.name {
                "language" => &mut self.languages,
                "processed-by" => &mut self.tools,
                _ => continue,
            };
            for value in field.values.into_iter().flatten() {
                let text = if value.version.is_empty() {
                    value.name.to_string()
                } else {
                    format!("{} {}", value.name, value.version)
                };
                keep(target, text);
            }
        }
    }

    /// The module's own name: the first subsection of a name section, when
    /// it is there (the function names after it are never read).
    fn add_module_name(&mut self, reader: wasmparser::NameSectionReader<'_>) {
        if let Some(Ok(Name::Module { name, .. })) = reader.into_iter().next() {
            keep(&mut self.module_names, name.to_string());
        }
    }

    /// The language runtime the component carries, in words, when it is
    /// recognisable: CPython from componentize-py, SpiderMonkey from
    /// ComponentizeJS; otherwise the languages its producers name, if any.
    pub fn runtime(&self) -> Option<String> {
        if let Some(python) = self.python_version() {
            return Some(format!(
                "Python {python} (CPython, packed by componentize-py)"
            ));
        }
        if let Some(tool) = self.componentize_js() {
            return Some(format!(
                "JavaScript (SpiderMonkey/StarlingMonkey, packed by {tool})"
            ));
        }
        if self.languages.is_empty() {
            return None;
        }
        let languages: Vec<&str> = self.languages.iter().map(String::as_str).collect();
        Some(format!(
            "not recognised; its producers name {}",
            languages.join(", ")
        ))
    }

    /// Whether the component carries an interpreter that sets itself up on
    /// its first export call after instantiation (CPython from
    /// componentize-py, SpiderMonkey from ComponentizeJS): its instances
    /// made ahead of calls are primed (`[pool]` in docs/config.md).
    pub fn interpreter_sets_up_on_first_call(&self) -> bool {
        self.python_version().is_some() || self.componentize_js().is_some()
    }

    /// Whether the component carries CPython packed by componentize-py
    /// (which exports the initialization hook `exports#init`).
    pub(crate) fn componentize_py(&self) -> bool {
        self.python_version().is_some()
    }

    fn componentize_js(&self) -> Option<&String> {
        self.tools.iter().find(|t| t.starts_with("ComponentizeJS"))
    }

    /// `3.14` when a nested module is `libpython3.14.so`.
    fn python_version(&self) -> Option<&str> {
        self.module_names.iter().find_map(|name| {
            name.strip_prefix("libpython")?
                .strip_suffix(".so")
                .filter(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
        })
    }
}

/// Adds `text` (cut to [`MAX_ENTRY_BYTES`]) to `set` unless it is full.
fn keep(set: &mut BTreeSet<String>, mut text: String) {
    if set.len() >= MAX_ENTRIES {
        return;
    }
    if text.len() > MAX_ENTRY_BYTES {
        let mut end = MAX_ENTRY_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    set.insert(text);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_or_empty_input_names_nothing() {
        for bytes in [
            &b""[..],
            b"\0asm",
            b"\0asm\x0d\0\x01\0\xff\xff",
            b"not wasm at all",
        ] {
            assert_eq!(Producers::of(bytes).runtime(), None);
        }
    }

    #[test]
    fn runtimes_are_recognised_from_their_marks() {
        let python = Producers {
            module_names: ["libc.so", "libpython3.14.so"].map(String::from).into(),
            ..Producers::default()
        };
        assert_eq!(
            python.runtime().as_deref(),
            Some("Python 3.14 (CPython, packed by componentize-py)")
        );
        let js = Producers {
            tools: ["ComponentizeJS 0.23.0", "wit-component 0.259.0"]
                .map(String::from)
                .into(),
            languages: ["JavaScript".to_string()].into(),
            ..Producers::default()
        };
        assert_eq!(
            js.runtime().as_deref(),
            Some("JavaScript (SpiderMonkey/StarlingMonkey, packed by ComponentizeJS 0.23.0)")
        );
        let rust = Producers {
            languages: ["Rust".to_string(), "C11".to_string()].into(),
            ..Producers::default()
        };
        assert_eq!(
            rust.runtime().as_deref(),
            Some("not recognised; its producers name C11, Rust")
        );
    }
}
