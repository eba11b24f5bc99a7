//! The README's limits table matches the code.

use toolhost::Limits;

/// The rows of the README's limits table: key, applies to, default, most accepted.
fn readme_limit_rows() -> Vec<(String, String, u64, u64)> {
    let readme = include_str!("../../README.md");
    let start = readme
        .find("| key | applies to | default | most accepted | bounds |")
        .expect("the README has the limits table");
    readme[start..]
        .lines()
        .skip(2)
        .take_while(|line| line.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let number = |cell: &str| {
                cell.parse::<u64>()
                    .unwrap_or_else(|_| panic!("not a number: {cell} in {line}"))
            };
            (
                cells[1].trim_matches('`').to_string(),
                cells[2].to_string(),
                number(cells[3]),
                number(cells[4]),
            )
        })
        .collect()
}

#[test]
fn readme_limits_table_matches_the_code() {
    let rows = readme_limit_rows();
    assert_eq!(rows.len(), Limits::SPECS.len(), "one row per limit");
    for (row, spec) in rows.iter().zip(Limits::SPECS) {
        assert_eq!(
            row,
            &(
                spec.key.to_string(),
                spec.applies.as_str().to_string(),
                spec.default,
                spec.max
            )
        );
    }
}

/// The layers ARCHITECTURE.md's table names, each with the layers it says
/// the folder imports.
fn architecture_layers() -> Vec<(String, Vec<String>)> {
    let text = include_str!("../../ARCHITECTURE.md");
    let section = text
        .split("## The layers of the library")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("ARCHITECTURE.md has the layers section");
    section
        .lines()
        .filter(|line| line.starts_with("| `") && line.contains("/` |"))
        .map(|line| {
            let cells: Vec<&str> = line.split(" | ").collect();
            let folder = cells[0].trim_start_matches("| `").trim_end_matches("/`");
            let imports = cells.last().expect("an imports cell");
            // Only the backticked names outside parentheses are layers.
            let mut depth = 0;
            let mut kept = String::new();
            for c in imports.chars() {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ if depth == 0 => kept.push(c),
                    _ => {}
                }
            }
            let layers = kept
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect();
            (folder.to_string(), layers)
        })
        .collect()
}

/// Every `crate::LAYER` a folder's files name.
fn imported_layers(folder: &std::path::Path) -> std::collections::BTreeSet<String> {
    let mut found = std::collections::BTreeSet::new();
    let mut pending = vec![folder.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            // Code only: a doc comment may link to any layer.
            let code: String = text
                .lines()
                .filter(|line| !line.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            for part in code.split("crate::").skip(1) {
                let name: String = part
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                found.insert(name);
            }
        }
    }
    found
}

#[test]
fn architecture_says_who_imports_whom() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let layers = architecture_layers();
    let names: Vec<&str> = layers.iter().map(|(folder, _)| folder.as_str()).collect();
    for dir in std::fs::read_dir(&root).unwrap().flatten() {
        if dir.path().is_dir() {
            let name = dir.file_name().to_string_lossy().into_owned();
            assert!(
                names.contains(&name.as_str()),
                "src/{name}/ is not in ARCHITECTURE.md's table"
            );
        }
    }
    // The helpers beneath every layer.
    let beneath = ["names", "parallel", "escape"];
    let mut wrong = Vec::new();
    for (folder, allowed) in &layers {
        for used in imported_layers(&root.join(folder)) {
            let fine = used == *folder
                || beneath.contains(&used.as_str())
                || allowed.contains(&used)
                || !names.contains(&used.as_str());
            if !fine {
                wrong.push(format!("src/{folder}/ imports crate::{used}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "ARCHITECTURE.md does not list these imports: {wrong:?}"
    );
}
