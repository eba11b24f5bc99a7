//! The limits' keys are written once: the `limits!` table in
//! `src/policy/limits.rs`, which also generates the constants
//! (`policy::limit_key`) every error text names a key through. No string
//! literal in the library's source (outside that file and its tests) holds
//! a limit key as a whole word, so renaming a key leaves no text behind.
//! Reads source text only (`xtask::layers`), so it runs in a second.

use std::path::Path;

use xtask::Repo;
use xtask::layers::{Graph, string_literals};

/// The file of the table, which alone writes the keys.
const TABLE: &str = "src/policy/limits.rs";

/// Literals that hold a limit key's word but do not name the limit: the
/// file, the literal's text (a part of it) and why.
const NOT_THE_LIMIT: [(&str, &str, &str); 3] = [
    (
        "src/oci/registries.rs",
        "`timeout_ms` must be from 1 to",
        "the `timeout_ms` of a [[registries]] entry",
    ),
    (
        "src/oci/http.rs",
        "(`timeout_ms` of its [[registries]] entry",
        "the `timeout_ms` of a [[registries]] entry",
    ),
    (
        "src/sandbox/fault.rs",
        "fuel allocated for hostcalls has been exhausted",
        "wasmtime's own text, matched to tell its error apart",
    ),
];

fn root() -> std::path::PathBuf {
    Repo::from_manifest_dir().root().to_path_buf()
}

/// The keys of the `limits!` table: the first word of each of its rows.
fn limit_keys() -> Vec<String> {
    let text = std::fs::read_to_string(root().join(TABLE)).unwrap();
    let table = text
        .split_once("\nlimits! {")
        .and_then(|(_, rest)| rest.split_once("\n}"))
        .map(|(table, _)| table)
        .expect("src/policy/limits.rs has its `limits! { ... }` table");
    let rows: Vec<&str> = table
        .lines()
        .map(str::trim)
        .filter(|line| !line.starts_with("//") && line.contains(", max "))
        .collect();
    let keys: Vec<String> = rows
        .iter()
        .filter_map(|row| row.split_once(" = ").map(|(key, _)| key.to_string()))
        .filter(|key| key.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .collect();
    assert_eq!(keys.len(), rows.len(), "every row has a key: {rows:#?}");
    assert!(keys.len() >= 20, "the table has its limits: {keys:?}");
    keys
}

/// Whether `text` holds `word` with no letter, digit or `_` either side.
fn holds_word(text: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

#[test]
fn limit_keys_in_texts_come_from_the_table() {
    let root = root();
    let keys = limit_keys();
    let graph = Graph::read(&root.join("src")).unwrap();
    let mut found = Vec::new();
    let mut excused = vec![0; NOT_THE_LIMIT.len()];
    for module in graph.edges().keys() {
        let file = graph.file(module).expect("a module has its file");
        let at = Path::new("src").join(file).display().to_string();
        if at == TABLE {
            continue;
        }
        let text = std::fs::read_to_string(root.join(&at)).unwrap();
        for (line, literal) in string_literals(&text) {
            let held: Vec<&String> = keys.iter().filter(|k| holds_word(&literal, k)).collect();
            if held.is_empty() {
                continue;
            }
            let excuse = NOT_THE_LIMIT
                .iter()
                .position(|(file, part, _)| at == *file && literal.contains(part));
            match excuse {
                Some(i) => excused[i] += 1,
                None => found.push(format!("{at}:{line}: {held:?} in {literal:?}")),
            }
        }
    }
    assert!(
        found.is_empty(),
        "string literals that spell a limit key; name it through `policy::limit_key::KEY`, \
         which the limits! table generates: {found:#?}"
    );
    for ((file, part, why), count) in NOT_THE_LIMIT.iter().zip(excused) {
        assert_eq!(
            count, 1,
            "NOT_THE_LIMIT's entry for {file} ({why}) should match one literal holding {part:?}"
        );
    }
}

#[test]
fn a_key_is_a_whole_word() {
    assert!(holds_word("(limits.max_tools)", "max_tools"));
    assert!(holds_word("fuel", "fuel"));
    assert!(holds_word("ran out of fuel (limit 5)", "fuel"));
    assert!(!holds_word("tool_info_fuel", "fuel"));
    assert!(!holds_word("max_tools_x", "max_tools"));
    assert!(!holds_word("fueled", "fuel"));
}
