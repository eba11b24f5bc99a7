//! ARCHITECTURE.md against the source: the library's layers in order, each
//! importing only the layers below it that its row lists; the helpers
//! beneath them importing nothing of the crate; and the circles among the
//! files of a folder exactly the ones "Circles we still have" lists. Reads
//! source text only (`xtask::layers`), so it runs in seconds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use xtask::Repo;
use xtask::layers::{Architecture, Graph, all_circles, layer_imports};

fn repo() -> Repo {
    Repo::from_manifest_dir()
}

fn page() -> Architecture {
    let text = std::fs::read_to_string(repo().root().join("ARCHITECTURE.md")).unwrap();
    Architecture::read(&text)
}

fn library() -> Graph {
    Graph::read(&repo().root().join("src")).unwrap()
}

/// A layer's name as the table writes it: `sandbox`, `names` (for
/// `names.rs`).
fn short(layer: &str) -> String {
    layer.trim_end_matches(".rs").to_string()
}

/// What each layer imports, by short names.
fn imports() -> BTreeMap<String, BTreeMap<String, String>> {
    layer_imports(&library())
        .into_iter()
        .map(|(layer, to)| {
            let to = to.into_iter().map(|(l, at)| (short(&l), at)).collect();
            (short(&layer), to)
        })
        .collect()
}

/// The folders and helper files of `src/`, by short names.
fn layers_of_src() -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut folders, mut helpers) = (BTreeSet::new(), BTreeSet::new());
    for entry in std::fs::read_dir(repo().root().join("src")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            folders.insert(name);
        } else if name != "lib.rs" && name.ends_with(".rs") {
            helpers.insert(name);
        }
    }
    (folders, helpers)
}

/// The table's rows by short name, in order, each with what it lists of
/// the layers (other words in backticks, such as types, are not layers).
fn rows() -> Vec<(String, BTreeSet<String>)> {
    let (folders, helpers) = layers_of_src();
    let known: BTreeSet<String> = folders
        .iter()
        .cloned()
        .chain(helpers.iter().map(|h| short(h)))
        .collect();
    page()
        .layers
        .into_iter()
        .map(|(layer, listed)| {
            let listed = listed.into_iter().filter(|l| known.contains(l)).collect();
            (layer, listed)
        })
        .collect()
}

#[test]
fn every_folder_of_src_has_a_row_and_the_helpers_theirs() {
    let (folders, helpers) = layers_of_src();
    let page = page();
    let rows: BTreeSet<String> = page.layers.iter().map(|(l, _)| l.clone()).collect();
    let missing: Vec<&String> = folders.iter().filter(|f| !rows.contains(*f)).collect();
    assert!(
        missing.is_empty(),
        "folders of src/ without a row in ARCHITECTURE.md's layer table: {missing:?}"
    );
    assert!(
        rows.contains("helpers"),
        "the layer table has no `helpers` row"
    );
    let extra: Vec<&String> = rows
        .iter()
        .filter(|r| *r != "helpers" && !folders.contains(*r))
        .collect();
    assert!(
        extra.is_empty(),
        "rows for folders src/ does not have: {extra:?}"
    );
    assert_eq!(
        page.helpers, helpers,
        "the `helpers` row lists other files than the helpers of src/"
    );
}

#[test]
fn rows_list_only_layers_below_them() {
    let rows = rows();
    let order: Vec<&String> = rows.iter().map(|(l, _)| l).collect();
    let (_, helpers) = layers_of_src();
    let helpers: BTreeSet<String> = helpers.iter().map(|h| short(h)).collect();
    for (i, (layer, listed)) in rows.iter().enumerate() {
        for name in listed {
            let below = helpers.contains(name) || order[i + 1..].contains(&name);
            assert!(
                below,
                "ARCHITECTURE.md: the row of `{layer}` lists `{name}`, which is not below it \
                 (rows go from the top layer down: {order:?})"
            );
        }
    }
}

#[test]
fn each_layer_imports_exactly_what_its_row_lists() {
    let imports = imports();
    for (layer, listed) in rows() {
        if layer == "helpers" {
            continue;
        }
        let actual = imports.get(&layer).cloned().unwrap_or_default();
        for (name, at) in &actual {
            assert!(
                listed.contains(name),
                "`{layer}` imports `{name}` ({at}), which its row in ARCHITECTURE.md does not \
                 list: import only from the layers below it, and list them"
            );
        }
        for name in &listed {
            assert!(
                actual.contains_key(name),
                "ARCHITECTURE.md's row of `{layer}` lists `{name}`, which it does not import"
            );
        }
    }
}

#[test]
fn helpers_import_nothing_of_the_crate() {
    let imports = imports();
    let (_, helpers) = layers_of_src();
    for helper in helpers {
        let name = short(&helper);
        let actual = imports.get(&name).cloned().unwrap_or_default();
        assert!(
            actual.is_empty(),
            "src/{helper} is a helper and imports {actual:?}: helpers import nothing of the crate"
        );
    }
}

#[test]
fn file_circles_are_exactly_the_listed_ones() {
    let found: BTreeSet<(String, BTreeSet<String>)> =
        all_circles(repo().root()).unwrap().into_iter().collect();
    let listed: BTreeSet<(String, BTreeSet<String>)> = page().circles.into_iter().collect();
    let new: Vec<_> = found.difference(&listed).collect();
    assert!(
        new.is_empty(),
        "files that import each other in a circle ARCHITECTURE.md does not list under \"Circles \
         we still have\": {new:?}. Untie it: move what both need into a file of its own below \
         them (`cargo xtask layers` prints the map)"
    );
    let gone: Vec<_> = listed.difference(&found).collect();
    assert!(
        gone.is_empty(),
        "ARCHITECTURE.md lists circles the source no longer has: {gone:?}; remove their lines"
    );
}

/// Every file below `dir` (of the repository), with its path from the
/// repository's root.
fn files_under(dir: &str) -> Vec<(String, std::path::PathBuf)> {
    let mut files = Vec::new();
    let mut pending = vec![repo().root().join(dir)];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            let at = path.strip_prefix(repo().root()).unwrap_or(Path::new(""));
            let at = at.display().to_string();
            files.push((at, path));
        }
    }
    files
}

#[test]
fn no_module_header_says_what_it_imports() {
    let mut stale = Vec::new();
    for source in xtask::layers::CRATE_SOURCES {
        for (at, path) in files_under(source) {
            let name = path.file_name().unwrap().to_string_lossy();
            if !["mod.rs", "lib.rs", "main.rs"].contains(&name.as_ref()) {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (i, line) in text.lines().enumerate() {
                let says = line.starts_with("//!")
                    && (line.contains("Imports ") || line.contains("imports "));
                if says {
                    stale.push(format!("{at}:{}: {line}", i + 1));
                }
            }
        }
    }
    assert!(
        stale.is_empty(),
        "module headers that say what they import (ARCHITECTURE.md says it, checked by this \
         test; say it there): {stale:#?}"
    );
}

/// Every instance of a component is made in one function
/// (`src/sandbox/instantiate.rs`), so that the store, the captures and the
/// deadline instantiation runs under are set up once for every path.
#[test]
fn the_component_is_instantiated_in_one_place() {
    let mut found = Vec::new();
    for (at, path) in files_under("src") {
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if [".instantiate_async(", ".instantiate("]
                .iter()
                .any(|call| code.contains(call))
            {
                found.push(format!("{at}:{}", i + 1));
            }
        }
    }
    assert_eq!(
        found.len(),
        1,
        "wasmtime's instantiation appears once in src/ (sandbox/instantiate.rs); found {found:?}"
    );
    assert!(
        found[0].starts_with("src/sandbox/instantiate.rs:"),
        "{found:?}"
    );
}
