//! The documentation is checked against the code: README.md stays one page
//! with the two commands CI runs, every TOML block of README.md and `docs/`
//! is a config, every block copied from a file (`<!-- from: PATH -->`, or
//! `PATH#Lx-Ly` for lines x to y) equals it, every relative
//! link resolves, and the tables of limits, settings (`[pool]`, `[serve]`,
//! `[sessions]`) and error texts are what the code gives (the texts of faults are checked in `src/module/fault_text.rs`,
//! where `Fault` is; those of dispatch here).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::json;
use toolhost::Tool;
use toolhost::config::Config;
use toolhost::config::ServeConfig;
use toolhost::{
    Bounds, Limits, Mode, PoolConfig, Runtime, SessionLimits, SettingSpec, ToolController,
    ToolManager, WasmModule, bundled_module,
};
use toolhost_testkit::{guest, workspace_root};

/// README.md's most lines: one page a newcomer reads.
const README_MAX_LINES: usize = 300;

/// Marks the TOML block after it as not a toolhost config (a Cargo.toml).
const NOT_A_CONFIG: &str = "<!-- not a config -->";

/// Marks the block after it as a copy of a file of the repository.
const FROM: &str = "<!-- from: ";

/// A fenced code block of a Markdown page.
struct Block {
    /// The page and the line its fence opens on, for messages.
    at: String,
    /// The info string's first word (`toml`, `rust`, ...).
    lang: String,
    /// The last non-blank line before the fence.
    marker: String,
    text: String,
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// README.md and every page of `docs/`.
fn pages() -> Vec<PathBuf> {
    let root = workspace_root();
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|entry| entry.expect("a docs/ entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    assert!(docs.len() >= 10, "docs/ has its pages: {docs:?}");
    pages.extend(docs);
    pages
}

/// The pages whose relative links must resolve.
fn linked_pages() -> Vec<PathBuf> {
    let root = workspace_root();
    let mut pages = pages();
    for page in [
        "ARCHITECTURE.md",
        "SECURITY.md",
        "BENCHMARKS.md",
        "crates/python/README.md",
    ] {
        pages.push(root.join(page));
    }
    pages
}

fn name(page: &Path) -> String {
    page.strip_prefix(workspace_root())
        .unwrap_or(page)
        .display()
        .to_string()
}

/// The fenced code blocks of `page`.
fn blocks(page: &Path) -> Vec<Block> {
    let text = read(page);
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    let mut marker = String::new();
    for (number, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        match open.take() {
            Some(block) if trimmed.starts_with("```") => blocks.push(block),
            Some(mut block) => {
                block.text.push_str(line);
                block.text.push('\n');
                open = Some(block);
            }
            None if trimmed.starts_with("```") => {
                let lang = trimmed.trim_start_matches('`').split([',', ' ']).next();
                open = Some(Block {
                    at: format!("{}:{}", name(page), number + 1),
                    lang: lang.unwrap_or_default().to_string(),
                    marker: marker.clone(),
                    text: String::new(),
                });
            }
            None if !trimmed.is_empty() => marker = trimmed.to_string(),
            None => {}
        }
    }
    assert!(
        open.is_none(),
        "{}: a code block is never closed",
        name(page)
    );
    blocks
}

/// `text` without its fenced code blocks and inline code spans.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            let spans: Vec<&str> = line.split('`').collect();
            for (i, part) in spans.iter().enumerate() {
                if i % 2 == 0 {
                    out.push_str(part);
                }
            }
            out.push('\n');
        }
    }
    out
}

/// The anchors GitHub gives `page`'s headings.
fn anchors(page: &str) -> HashSet<String> {
    let mut fenced = false;
    let mut anchors = HashSet::new();
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let heading = line.trim_start_matches('#').trim();
        let anchor: String = heading
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        anchors.insert(anchor);
    }
    anchors
}

#[test]
fn readme_is_one_page_with_the_commands_ci_runs() {
    let readme = read(&workspace_root().join("README.md"));
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, more than {README_MAX_LINES}: move reference material to a page of docs/"
    );
    let ci = read(&workspace_root().join(".ci/run"));
    for (marker, command) in [
        (
            "<!-- ci: main -->",
            r#"cargo run -- call calc_evaluate '{"expression": "2 * (3 + 4)"}'"#,
        ),
        (
            "<!-- ci: tests -->",
            "cargo test --workspace --no-fail-fast",
        ),
    ] {
        let block = format!("{marker}\n```sh\n{command}\n```\n");
        assert!(readme.contains(&block), "README.md keeps {block}");
        assert!(ci.contains(command), ".ci/run runs {command}");
    }
}

#[test]
fn every_toml_block_is_a_config() {
    let mut checked = 0;
    for page in pages() {
        for block in blocks(&page) {
            if block.lang != "toml" || block.marker == NOT_A_CONFIG {
                continue;
            }
            if let Err(e) = Config::from_toml(&block.text) {
                panic!(
                    "{}: this TOML block is not a toolhost config: {e}\n(mark a block that is not one with {NOT_A_CONFIG})",
                    block.at
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 6, "only {checked} config blocks were found");
}

/// Lines `lines` (`X-LY`, from 1, both included) of `file`, each ending in
/// a newline.
fn excerpt(file: &str, lines: &str) -> Option<String> {
    let (first, last) = lines.split_once("-L")?;
    let (first, last): (usize, usize) = (first.parse().ok()?, last.parse().ok()?);
    let all: Vec<&str> = file.lines().collect();
    let wanted = all.get(first.checked_sub(1)?..last)?;
    Some(wanted.iter().map(|line| format!("{line}\n")).collect())
}

#[test]
fn blocks_copied_from_files_equal_them() {
    let mut checked = 0;
    for page in pages() {
        for block in blocks(&page) {
            let Some(path) = block.marker.strip_prefix(FROM) else {
                continue;
            };
            let source = path.trim_end_matches("-->").trim();
            let (path, lines) = match source.split_once("#L") {
                Some((path, lines)) => (path, Some(lines)),
                None => (source, None),
            };
            let file = read(&workspace_root().join(path));
            let copied = match lines {
                None => file,
                Some(lines) => excerpt(&file, lines)
                    .unwrap_or_else(|| panic!("{}: {source} names no lines of the file", block.at)),
            };
            assert!(
                block.text == copied,
                "{}: the block is said to be a copy of {source}, and is not: copy it into the block again",
                block.at
            );
            checked += 1;
        }
    }
    assert!(checked >= 6, "only {checked} copied blocks were found");
}

#[test]
fn every_python_and_rust_block_of_the_pages_is_checked() {
    for page in pages() {
        let library = name(&page) == "docs/library.md";
        for block in blocks(&page) {
            let copied = block.marker.starts_with(FROM);
            match block.lang.as_str() {
                "python" => assert!(
                    copied,
                    "{}: a Python block must be a copy of a file the package's tests run ({FROM}PATH -->)",
                    block.at
                ),
                // docs/library.md's are doctests (src/lib.rs).
                "rust" | "" if !library && !copied => panic!(
                    "{}: a Rust block outside docs/library.md must be a copy of a file ({FROM}PATH -->)",
                    block.at
                ),
                _ => {}
            }
        }
    }
}

#[test]
fn every_relative_link_resolves() {
    let link = |text: &str| -> Vec<String> {
        let mut links = Vec::new();
        let mut rest = text;
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            if let Some(end) = rest.find(')') {
                links.push(rest[..end].to_string());
            }
        }
        links
    };
    let mut checked = 0;
    let mut broken = Vec::new();
    for page in linked_pages() {
        let text = read(&page);
        let dir = page.parent().expect("a page is in a folder");
        for target in link(&prose(&text)) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() {
                page.clone()
            } else {
                dir.join(path)
            };
            checked += 1;
            if !file.exists() {
                broken.push(format!("{}: {target} (no such file)", name(&page)));
                continue;
            }
            let markdown = file.extension().is_some_and(|e| e == "md");
            if let Some(anchor) = anchor.filter(|_| markdown)
                && !anchors(&read(&file)).contains(anchor)
            {
                broken.push(format!("{}: {target} (no such heading)", name(&page)));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links that go nowhere:\n{}",
        broken.join("\n")
    );
    assert!(checked >= 30, "only {checked} relative links were found");
}

/// The rows of the sandbox page's limits table: key, applies to, default,
/// most accepted.
fn limit_rows() -> Vec<(String, String, u64, u64)> {
    let page = read(&workspace_root().join("docs/sandbox.md"));
    let start = page
        .find("| key | applies to | default | most accepted | bounds |")
        .expect("docs/sandbox.md has the limits table");
    page[start..]
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
fn the_limits_table_matches_the_code() {
    let rows = limit_rows();
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

/// The type column the reference's table gives `spec`: `integer 1..10000
/// (default 256)`, `boolean (default `true`)`; for other types only the end,
/// `(default `"auto"`)`, is the table's own.
fn type_cell(spec: &SettingSpec) -> String {
    let default = spec.default_value();
    let range = match spec.bounds() {
        Bounds::Any => String::new(),
        bounds => format!(" {bounds}"),
    };
    match default {
        toml::Value::Integer(n) => format!("integer{range} (default {n})"),
        toml::Value::Boolean(b) => format!("boolean (default `{b}`)"),
        other => format!("(default `{other}`)"),
    }
}

/// The rows of docs/config.md's table whose key starts with `section.`:
/// the key without it, and the type column.
fn setting_rows(section: &str) -> Vec<(String, String)> {
    let page = read(&workspace_root().join("docs/config.md"));
    let prefix = format!("| `{section}.");
    page.lines()
        .filter(|line| line.starts_with(&prefix))
        .map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let key = cells[1].trim_matches('`').trim_start_matches(&prefix[3..]);
            (key.to_string(), cells[2].to_string())
        })
        .collect()
}

/// The one TOML block of `page` with a `[section]` table, parsed.
fn settings_block(page: &str, section: &str) -> toml::Table {
    let header = format!("[{section}]");
    let found: Vec<Block> = blocks(&workspace_root().join(page))
        .into_iter()
        .filter(|b| b.lang == "toml" && b.text.lines().any(|l| l.trim() == header))
        .collect();
    assert_eq!(found.len(), 1, "{page} has one TOML block with {header}");
    let config: toml::Table =
        toml::from_str(&found[0].text).unwrap_or_else(|e| panic!("{}: not TOML: {e}", found[0].at));
    match config.get(section) {
        Some(toml::Value::Table(table)) => table.clone(),
        _ => panic!("{}: {header} is not a table", found[0].at),
    }
}

/// The `[pool]`, `[serve]` and `[sessions]` tables (`settings!` in the
/// code) are what the reference says: docs/config.md's rows for `pool.*`
/// and `sessions.*` give each key's range and default, and the TOML
/// examples of those sections (docs/config.md, docs/mcp.md) set every key
/// to its default.
#[test]
fn the_settings_tables_match_the_code() {
    let sections = [
        (
            "docs/config.md",
            PoolConfig::SECTION,
            PoolConfig::specs(),
            true,
        ),
        (
            "docs/mcp.md",
            ServeConfig::SECTION,
            ServeConfig::specs(),
            false,
        ),
        (
            "docs/config.md",
            SessionLimits::SECTION,
            SessionLimits::specs(),
            true,
        ),
    ];
    for (page, section, specs, tabled) in sections {
        assert!(specs.len() >= 2, "[{section}] has its keys");
        let keys: Vec<&str> = specs.iter().map(|s| s.key()).collect();
        if tabled {
            let rows = setting_rows(section);
            let row_keys: Vec<&str> = rows.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(
                row_keys, keys,
                "docs/config.md's `{section}.*` rows, in order"
            );
            for ((key, cell), spec) in rows.iter().zip(&specs) {
                let expected = type_cell(spec);
                assert!(
                    cell == &expected
                        || (!expected.starts_with(['i', 'b']) && cell.ends_with(&expected)),
                    "docs/config.md's row for `{section}.{key}` says {cell:?}; the code: {expected:?}"
                );
            }
        }
        let example = settings_block(page, section);
        let mut written: Vec<&str> = example.keys().map(String::as_str).collect();
        let mut all = keys.clone();
        written.sort_unstable();
        all.sort_unstable();
        assert_eq!(
            written, all,
            "{page}'s [{section}] example states every key once"
        );
        for spec in &specs {
            assert_eq!(
                example.get(spec.key()),
                Some(spec.default_value()),
                "{page}'s [{section}] example: `{}` is not its default",
                spec.key()
            );
        }
    }
}

/// The `Error:` texts of the sandbox page's row for `cause`.
fn error_texts(cause: &str) -> Vec<String> {
    let page = read(&workspace_root().join("docs/sandbox.md"));
    let texts = crate::error_table::error_texts(&page, cause);
    texts.into_iter().map(str::to_string).collect()
}

#[test]
fn the_error_texts_of_dispatch_are_what_the_page_says() {
    let runtime = Runtime::new().unwrap();
    let mut manager = ToolManager::new();
    for name in ["calc", "json"] {
        let bytes = bundled_module(name).unwrap();
        let module = WasmModule::from_bytes(&runtime, name, bytes, Limits::default()).unwrap();
        manager.register(module).unwrap();
    }
    let call = |name: &str, arguments: serde_json::Value| {
        manager.call(&json!({"id": "1", "type": "function",
            "function": {"name": name, "arguments": arguments}}))
    };
    // Only calc_evaluate and json_query active, as the page's example has it.
    let rules = [
        (Mode::Activate, "calc_evaluate"),
        (Mode::Activate, "json_query"),
    ];
    manager.set_controller(ToolController::new(Mode::Deactivate, rules).unwrap());
    assert_eq!(
        error_texts("an unknown tool")[0],
        call("evaluate", json!("{}"))
    );
    manager.set_controller(
        ToolController::new(Mode::Activate, [(Mode::Deactivate, "calc_evaluate")]).unwrap(),
    );
    assert_eq!(
        error_texts("a deactivated tool"),
        [call("calc_evaluate", json!("{}"))]
    );
    manager.set_controller(ToolController::new(Mode::Activate, []).unwrap());
    let malformed = [
        manager.call(&json!([])),
        manager.call(&json!({"id": "1"})),
        manager.call(&json!({"id": "1", "function": {}})),
    ];
    assert_eq!(error_texts("a malformed call"), malformed);
    let bad = error_texts("bad arguments");
    assert_eq!(bad.len(), 3);
    assert!(
        call("calc_evaluate", json!("{")).starts_with(bad[0].trim_end_matches("<parser message>")),
        "{}",
        bad[0]
    );
    assert_eq!(bad[1], call("calc_evaluate", json!("[1]")));
    assert_eq!(bad[2], call("calc_evaluate", json!(5)));
}

/// README.md's tool in five minutes (tests/guests/guest-greet, the block's
/// file) answers as README.md says, and so does a call with a wrong
/// argument.
#[test]
fn the_readme_tool_answers_as_the_readme_says() {
    let readme = read(&workspace_root().join("README.md"));
    let runtime = Runtime::new().unwrap();
    let bytes = std::fs::read(guest("guest-greet")).unwrap();
    let greet = WasmModule::from_bytes(&runtime, "greet", &bytes, Limits::default()).unwrap();
    let ada = toolhost::Arguments::from_json(r#"{"name": "Ada"}"#).unwrap();
    let answer = greet.call("greet_greet", &ada).unwrap();
    assert_eq!(answer, "Hello, Ada!");
    assert!(readme.contains(&format!("'{{\"name\": \"Ada\"}}'        # {answer}")));
    let five = toolhost::Arguments::from_json(r#"{"name": 5}"#).unwrap();
    let error = greet.call("greet_greet", &five).unwrap_err().to_string();
    let shown = format!("$ toolhost call greet_greet '{{\"name\": 5}}'\n{error}\n");
    assert!(readme.contains(&shown), "README.md shows {shown}");
}

/// The page's text for a call its batch had no time to start is the one a
/// batch gives (for another tool and timeout than the page's example: the
/// default, 300000 ms, would take minutes to reach).
#[test]
fn the_error_text_of_a_batch_past_its_time_is_what_the_page_says() {
    let [page_text] = &error_texts("`batch_timeout_ms`")[..] else {
        panic!("one text in the row of batch_timeout_ms");
    };
    let mut manager = crate::common::hostile_manager();
    manager.set_max_parallel(1);
    manager.set_batch_timeout(std::time::Duration::from_millis(300));
    let calls: Vec<serde_json::Value> = (0..8)
        .map(|i| crate::common::tool_call(&format!("c{i}"), "h_sleep", json!("{\"ms\": 200}")))
        .collect();
    let replies = manager.call_many(&calls);
    let late = replies
        .iter()
        .map(|reply| reply["content"].as_str().unwrap_or_default())
        .find(|text| text.contains("was not run"))
        .expect("a call was not started in time");
    let expected = page_text
        .replace("calc_evaluate", "h_sleep")
        .replace(&Limits::default().batch_timeout_ms.to_string(), "300");
    assert_eq!(late, expected);
}
