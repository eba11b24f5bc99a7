//! The import graph of toolhost's crates, read from their source text: which
//! file imports which (`use` trees and inline `crate::`, `super::` and
//! `self::` paths; comments, strings and `#[cfg(test)]` items left out), the
//! library's layers as ARCHITECTURE.md's table orders them, and the circles
//! among the files of each folder. `cargo xtask layers` prints it, and
//! `xtask/tests/layers.rs` checks it against ARCHITECTURE.md. Nothing here
//! links toolhost or wasmtime, so the check runs in seconds.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// A module's path from its crate's root: `[]` for `lib.rs` or `main.rs`,
/// `["sandbox", "call"]` for `src/sandbox/call.rs`.
pub type ModPath = Vec<String>;

/// The files of one crate and what each imports.
#[derive(Debug, Default)]
pub struct Graph {
    /// Every module that is a file, with its path relative to `src`.
    files: BTreeMap<ModPath, PathBuf>,
    /// The modules that have a folder of their own.
    folders: BTreeSet<ModPath>,
    /// For each file, the files it imports and the line of the first import.
    edges: BTreeMap<ModPath, BTreeMap<ModPath, usize>>,
}

/// One import as written: the line and the path's segments.
type Written = (usize, Vec<String>);

impl Graph {
    /// Reads every `.rs` file under `src` (a crate's source folder).
    pub fn read(src: &Path) -> io::Result<Graph> {
        let mut graph = Graph::default();
        let mut texts = BTreeMap::new();
        let mut pending = vec![src.to_path_buf()];
        while let Some(dir) = pending.pop() {
            for entry in fs::read_dir(&dir)? {
                let path = entry?.path();
                if path.is_dir() {
                    pending.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let relative = path.strip_prefix(src).unwrap_or(&path).to_path_buf();
                    let module = module_of(&relative);
                    if relative.file_name().is_some_and(|n| n == "mod.rs") {
                        graph.folders.insert(module.clone());
                    }
                    texts.insert(module.clone(), fs::read_to_string(&path)?);
                    graph.files.insert(module, relative);
                }
            }
        }
        // A folder beside its file (`http_server.rs` and `http_server/`).
        for relative in graph.files.values() {
            if relative.components().count() > 1 {
                let parent = module_of(relative.parent().unwrap_or(Path::new("")));
                if graph.files.contains_key(&parent) {
                    graph.folders.insert(parent);
                }
            }
        }
        graph.folders.insert(Vec::new());
        let mut test_only = BTreeSet::new();
        let mut written = BTreeMap::new();
        let mut reexports = BTreeMap::new();
        for (module, text) in &texts {
            let code = code_of(text);
            for name in test_only_children(text) {
                let mut child = module.clone();
                child.push(name);
                test_only.insert(child);
            }
            let (uses, rest) = use_statements(&code);
            let mut paths: Vec<Written> = Vec::new();
            for (line, tree, public) in &uses {
                for path in expand_tree(tree) {
                    if *public && let Some(name) = exported_name(&path) {
                        reexports
                            .entry(module.clone())
                            .or_insert_with(BTreeMap::new)
                            .insert(name, path.clone());
                    }
                    paths.push((*line, path));
                }
            }
            paths.extend(inline_paths(&rest));
            written.insert(module.clone(), paths);
        }
        // Files compiled only for tests (`#[cfg(test)] mod tests;`) and
        // everything under them are left out.
        let is_test_only = |m: &ModPath| test_only.iter().any(|t| m.starts_with(t));
        graph.files.retain(|m, _| !is_test_only(m));
        for (module, paths) in &written {
            if is_test_only(module) {
                continue;
            }
            let mut targets = BTreeMap::new();
            for (line, path) in paths {
                if let Some(target) = graph.resolve(module, path, &reexports)
                    && target != *module
                {
                    targets.entry(target).or_insert(*line);
                }
            }
            graph.edges.insert(module.clone(), targets);
        }
        Ok(graph)
    }

    /// The file `path`, written in `from`, names, if it is one of this
    /// crate's (a name re-exported by a folder's `mod.rs` is followed to
    /// the file it comes from, one hop).
    fn resolve(
        &self,
        from: &ModPath,
        path: &[String],
        reexports: &BTreeMap<ModPath, BTreeMap<String, Vec<String>>>,
    ) -> Option<ModPath> {
        let absolute = self.absolute(from, path)?;
        let known = (0..=absolute.len())
            .rev()
            .map(|n| absolute[..n].to_vec())
            .find(|m| self.files.contains_key(m))?;
        let next = absolute.get(known.len());
        if let Some(name) = next
            && let Some(through) = reexports.get(&known).and_then(|r| r.get(name))
            && let Some(absolute) = self.absolute(&known, through)
            && let Some(target) = (0..=absolute.len())
                .rev()
                .map(|n| absolute[..n].to_vec())
                .find(|m| self.files.contains_key(m) && *m != known)
        {
            return Some(target);
        }
        Some(known)
    }

    /// `path` from the crate's root, or `None` for another crate's.
    fn absolute(&self, from: &ModPath, path: &[String]) -> Option<ModPath> {
        let (first, rest) = path.split_first()?;
        let mut base = match first.as_str() {
            "crate" => Vec::new(),
            "self" => from.clone(),
            "super" => from[..from.len().checked_sub(1)?].to_vec(),
            name => {
                let mut child = from.clone();
                child.push(name.to_string());
                if self.files.contains_key(&child) {
                    child
                } else {
                    return None;
                }
            }
        };
        let mut segments = rest.iter().peekable();
        while segments.peek().is_some_and(|s| *s == "super") {
            segments.next();
            base.pop()?;
        }
        base.extend(segments.filter(|s| *s != "self").cloned());
        Some(base)
    }

    /// What each file imports: the file and the line of its first import.
    pub fn edges(&self) -> &BTreeMap<ModPath, BTreeMap<ModPath, usize>> {
        &self.edges
    }

    /// The file of `module`, relative to the crate's `src`.
    pub fn file(&self, module: &ModPath) -> Option<&Path> {
        self.files.get(module).map(PathBuf::as_path)
    }

    /// The child of `folder` that `module` is or is in.
    fn child_of(folder: &ModPath, module: &ModPath) -> Option<ModPath> {
        (module.len() > folder.len() && module.starts_with(folder))
            .then(|| module[..=folder.len()].to_vec())
    }

    /// What the children of `folder` import of each other: from each child
    /// (a file, or a folder with everything in it), the other children.
    pub fn child_edges(&self, folder: &ModPath) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
        let mut edges: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
        for module in self.files.keys() {
            if let Some(child) = Self::child_of(folder, module) {
                edges.entry(child).or_default();
            }
        }
        for (from, targets) in &self.edges {
            let Some(a) = Self::child_of(folder, from) else {
                continue;
            };
            for to in targets.keys() {
                if let Some(b) = Self::child_of(folder, to)
                    && a != b
                {
                    edges.entry(a.clone()).or_default().insert(b);
                }
            }
        }
        edges
    }

    /// Every folder of the crate (its root, `[]`, first).
    pub fn folders(&self) -> impl Iterator<Item = &ModPath> {
        self.folders.iter()
    }

    /// Whether `module` has a folder.
    pub fn is_folder(&self, module: &ModPath) -> bool {
        self.folders.contains(module)
    }

    /// The circles among the children of `folder`: each a set of two or
    /// more children that import each other, directly or through the others.
    pub fn circles_in(&self, folder: &ModPath) -> Vec<BTreeSet<ModPath>> {
        let edges = self.child_edges(folder);
        let reach = |start: &ModPath| {
            let mut seen = BTreeSet::new();
            let mut todo = vec![start.clone()];
            while let Some(node) = todo.pop() {
                for next in edges.get(&node).into_iter().flatten() {
                    if seen.insert(next.clone()) {
                        todo.push(next.clone());
                    }
                }
            }
            seen
        };
        let reachable: BTreeMap<&ModPath, BTreeSet<ModPath>> =
            edges.keys().map(|n| (n, reach(n))).collect();
        let mut circles: Vec<BTreeSet<ModPath>> = Vec::new();
        for (node, from_node) in &reachable {
            let circle: BTreeSet<ModPath> = from_node
                .iter()
                .filter(|other| reachable.get(other).is_some_and(|r| r.contains(*node)))
                .cloned()
                .collect();
            if circle.len() > 1 && !circles.contains(&circle) {
                circles.push(circle);
            }
        }
        circles
    }

    /// A child of `folder` as ARCHITECTURE.md names it: `call.rs`, `http/`.
    pub fn child_name(&self, child: &ModPath) -> String {
        let last = child.last().map(String::as_str).unwrap_or_default();
        if self.is_folder(child) {
            format!("{last}/")
        } else {
            format!("{last}.rs")
        }
    }
}

/// The module of a file path relative to `src`.
fn module_of(relative: &Path) -> ModPath {
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.strip_suffix(".rs").unwrap_or(&last).to_string();
        let crate_root = parts.is_empty() && (stem == "lib" || stem == "main");
        if stem != "mod" && !crate_root {
            parts.push(stem);
        }
    }
    parts
}

/// The names of the children `text` declares for tests only
/// (`#[cfg(test)] mod tests;`).
fn test_only_children(text: &str) -> Vec<String> {
    let code = code_of_keeping_cfg_test(text);
    let mut names = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        rest = &rest[at + "#[cfg(test)]".len()..];
        let item = rest.trim_start();
        let item = item.strip_prefix("pub ").unwrap_or(item).trim_start();
        if let Some(after) = item.strip_prefix("mod ") {
            let name: String = after
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let following = after.trim_start()[name.len()..].trim_start();
            if following.starts_with(';') {
                names.push(name);
            }
        }
    }
    names
}

/// `text` with comments and string and character literals blanked (lines
/// kept), and every `#[cfg(test)]` item and `pub(in ...)` blanked too.
pub fn code_of(text: &str) -> String {
    let code = code_of_keeping_cfg_test(text);
    let code = blank_cfg_test_items(&code);
    blank_restricted_visibility(&code)
}

/// The string literals of `text` outside comments and `#[cfg(test)]`
/// items: each one's line (from 1) and its text as written (escapes and
/// line continuations kept).
pub fn string_literals(text: &str) -> Vec<(usize, String)> {
    let (code, literals) = scan(text);
    let outside_tests: Vec<char> = blank_cfg_test_items(&code).chars().collect();
    let code: Vec<char> = code.chars().collect();
    let chars: Vec<char> = text.chars().collect();
    literals
        .into_iter()
        .filter(|span| {
            // The code just before a literal (at least its item's
            // `#[cfg(test)]`) is blanked with the item.
            let before = code[..span.start].iter().rposition(|c| !c.is_whitespace());
            before.is_none_or(|at| !outside_tests[at].is_whitespace())
        })
        .map(|span| {
            let line = 1 + chars[..span.start].iter().filter(|&&c| c == '\n').count();
            (line, chars[span].iter().collect())
        })
        .collect()
}

/// `text` with comments and literals blanked, newlines kept.
fn code_of_keeping_cfg_test(text: &str) -> String {
    scan(text).0
}

/// `text` with comments and literals blanked (one character for one, so
/// positions are kept), and the spans (in characters) of its string
/// literals' contents.
fn scan(text: &str) -> (String, Vec<Range<usize>>) {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut literals = Vec::new();
    let mut i = 0;
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if let Some(hashes) = raw_string_start(&chars, i) {
            // r"..", r#".."#, br#".."#: up to `"` and as many `#`.
            let open = chars[i..].iter().position(|&c| c == '"').unwrap_or(0) + i;
            for &c in &chars[i..=open] {
                blank(&mut out, c);
            }
            i = open + 1;
            let start = i;
            while i < chars.len() {
                let closes =
                    chars[i] == '"' && (0..hashes).all(|k| chars.get(i + 1 + k) == Some(&'#'));
                if closes {
                    literals.push(start..i);
                    for _ in 0..=hashes {
                        out.push(' ');
                    }
                    i += 1 + hashes;
                    break;
                }
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '"' || (c == '\'' && is_char_literal(&chars, i)) {
            let start = i + 1;
            i = blank_quoted(&chars, i, &mut out);
            if c == '"' {
                literals.push(start..i.saturating_sub(1).max(start));
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    (out, literals)
}

/// Blanks the string or character literal whose opening quote is at `i`
/// (escapes included) into `out`; the index after its closing quote.
fn blank_quoted(chars: &[char], mut i: usize, out: &mut String) -> usize {
    let quote = chars[i];
    out.push(' ');
    i += 1;
    while i < chars.len() && chars[i] != quote {
        if chars[i] == '\\' {
            out.push(' ');
            i += 1;
        }
        if let Some(&c) = chars.get(i) {
            out.push(if c == '\n' { '\n' } else { ' ' });
            i += 1;
        }
    }
    out.push(' ');
    i + 1
}

/// The number of `#` of a raw string literal starting at `i`, if one does.
fn raw_string_start(chars: &[char], i: usize) -> Option<usize> {
    let before_ok = i == 0 || !is_ident(chars[i - 1]);
    if !before_ok {
        return None;
    }
    let mut j = i;
    if chars.get(j) == Some(&'b') {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|&&c| c == '#').count();
    (chars.get(j + hashes) == Some(&'"')).then_some(hashes)
}

/// Whether the `'` at `i` opens a character literal (not a lifetime).
fn is_char_literal(chars: &[char], i: usize) -> bool {
    matches!(
        (chars.get(i + 1), chars.get(i + 2)),
        (Some('\\'), _) | (Some(_), Some('\''))
    )
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `code` with each `#[cfg(test)]` item (up to its `;` or its closing
/// brace) blanked.
fn blank_cfg_test_items(code: &str) -> String {
    let mut out: Vec<char> = code.chars().collect();
    let text: String = out.iter().collect();
    let mut from = 0;
    while let Some(found) = text[from..].find("#[cfg(test)]") {
        let start_byte = from + found;
        let start = text[..start_byte].chars().count();
        let mut i = start;
        let mut depth = 0usize;
        while i < out.len() {
            let c = out[i];
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        out[i] = ' ';
                        break;
                    }
                }
                ';' if depth == 0 => {
                    out[i] = ' ';
                    break;
                }
                _ => {}
            }
            if c != '\n' {
                out[i] = ' ';
            }
            i += 1;
        }
        from = start_byte + "#[cfg(test)]".len();
    }
    out.into_iter().collect()
}

/// `code` with `pub(in path)` visibilities blanked: they name a module but
/// import nothing.
fn blank_restricted_visibility(code: &str) -> String {
    let mut out = code.to_string();
    while let Some(at) = out.find("pub(in ") {
        let end = out[at..].find(')').map_or(out.len(), |e| at + e + 1);
        out.replace_range(at..end, &" ".repeat(end - at));
    }
    out
}

/// The `use` statements of `code` (line, tree text, whether re-exported),
/// and the code with them blanked.
fn use_statements(code: &str) -> (Vec<(usize, String, bool)>, String) {
    let mut uses = Vec::new();
    let mut rest = code.to_string();
    let bytes = code.as_bytes();
    let mut search = 0;
    while let Some(found) = code[search..].find("use") {
        let at = search + found;
        search = at + 3;
        let before_ok = at == 0 || !is_ident(bytes[at - 1] as char);
        let after_ok = bytes.get(at + 3).is_some_and(|b| b.is_ascii_whitespace());
        if !before_ok || !after_ok {
            continue;
        }
        let Some(end) = code[at..].find(';').map(|e| at + e) else {
            break;
        };
        let tree: String = alias_free(&code[at + 3..end]).split_whitespace().collect();
        let line = code[..at].matches('\n').count() + 1;
        let head = code[..at].trim_end();
        let public = ["pub", "pub(crate)", "pub(super)", "pub(self)"]
            .iter()
            .any(|v| head.ends_with(v));
        uses.push((line, tree, public));
        rest.replace_range(at..=end, &" ".repeat(end + 1 - at));
        search = end;
    }
    (uses, rest)
}

/// Every path a `use` tree names: `crate::a::{b, c::{d, self}}` gives
/// `crate::a::b`, `crate::a::c::d` and `crate::a::c`; `as` names and `*`
/// are dropped (a glob names its module).
pub fn expand_tree(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim_start_matches("::");
    let mut paths = Vec::new();
    expand_into(tree, &mut Vec::new(), &mut paths);
    paths
}

fn expand_into(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    for part in split_top_level(tree) {
        let depth = prefix.len();
        match part.find('{') {
            Some(open) => {
                let head = part[..open].trim_end_matches("::");
                prefix.extend(segments(head));
                let inner = &part[open + 1..part.rfind('}').unwrap_or(part.len())];
                expand_into(inner, prefix, out);
            }
            None => {
                let mut path = prefix.clone();
                path.extend(
                    segments(part)
                        .into_iter()
                        .filter(|s| s != "*" && s != "self"),
                );
                if !path.is_empty() {
                    out.push(path);
                }
            }
        }
        prefix.truncate(depth);
    }
}

/// `tree` split at its top-level commas.
fn split_top_level(tree: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in tree.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&tree[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&tree[start..]);
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}

/// A `use` statement's text with `as name` removed, whitespace kept.
pub fn alias_free(statement: &str) -> String {
    let mut out = String::new();
    let mut words = statement.split_whitespace().peekable();
    while let Some(word) = words.next() {
        if word == "as" {
            // Skip the alias, keep what follows it (`,` or `}`).
            if let Some(alias) = words.next() {
                let tail: String = alias.chars().skip_while(|c| is_ident(*c)).collect();
                out.push_str(&tail);
            }
            continue;
        }
        out.push(' ');
        out.push_str(word);
    }
    out
}

fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The name a re-exported path is known by in its module (its last
/// segment), unless it is a glob or `self`.
fn exported_name(path: &[String]) -> Option<String> {
    path.last().filter(|s| *s != "self").cloned()
}

/// The `crate::`, `super::` and `self::` paths written outside `use`
/// statements (`crate::escape::escape_controls(...)`).
pub fn inline_paths(code: &str) -> Vec<Written> {
    let chars: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '\n' {
            line += 1;
        }
        let boundary = i == 0 || (!is_ident(chars[i - 1]) && chars[i - 1] != ':');
        let starts = boundary
            && ["crate::", "super::", "self::"]
                .iter()
                .any(|p| chars[i..].iter().take(p.len()).copied().eq(p.chars()));
        if starts {
            let mut j = i;
            let mut path = String::new();
            while j < chars.len() && (is_ident(chars[j]) || chars[j] == ':') {
                path.push(chars[j]);
                j += 1;
            }
            found.push((line, segments(&path)));
            i = j;
            continue;
        }
        i += 1;
    }
    found
}

/// What ARCHITECTURE.md says of the library's layers and of the circles.
#[derive(Debug, Default)]
pub struct Architecture {
    /// The layer table's rows in order (highest first): the folder (or
    /// `helpers`), and the layers its imports cell names.
    pub layers: Vec<(String, BTreeSet<String>)>,
    /// The helper files the `helpers` row lists (`names.rs`, ...).
    pub helpers: BTreeSet<String>,
    /// "Circles we still have": the folder (`src/sandbox/`) and its files.
    pub circles: Vec<(String, BTreeSet<String>)>,
}

impl Architecture {
    /// Reads `text`, ARCHITECTURE.md.
    pub fn read(text: &str) -> Architecture {
        let mut page = Architecture::default();
        let mut in_table = false;
        let mut in_circles = false;
        for line in text.lines() {
            if line.starts_with("## ") {
                in_circles = line.trim() == "## Circles we still have";
                in_table = false;
                continue;
            }
            if line.starts_with("| folder | owns | imports |") {
                in_table = true;
                continue;
            }
            if in_table {
                if !line.starts_with('|') {
                    in_table = false;
                    continue;
                }
                let cells: Vec<&str> = line.split('|').map(str::trim).collect();
                if cells.len() < 4 || cells[1].starts_with("---") {
                    continue;
                }
                let layer = cells[1].trim_matches('`').trim_end_matches('/').to_string();
                if layer == "helpers" {
                    page.helpers = backticked(cells[2]).into_iter().collect();
                }
                let imports = backticked(&outside_parentheses(cells[3]))
                    .into_iter()
                    .map(|s| s.trim_end_matches('/').trim_end_matches(".rs").to_string())
                    .collect();
                page.layers.push((layer, imports));
            }
            if in_circles && let Some(item) = line.strip_prefix("- ") {
                let listed = item.split(" — ").next().unwrap_or(item);
                let mut names = backticked(listed).into_iter();
                if let Some(folder) = names.next() {
                    page.circles.push((folder, names.collect()));
                }
            }
        }
        page
    }
}

/// `text` without what is in parentheses (explanations, which may name
/// types or files).
fn outside_parentheses(text: &str) -> String {
    let mut depth = 0usize;
    text.chars()
        .filter(|&c| {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect()
}

/// The `backticked` words of `text`.
fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The crates whose files are checked for circles: their `src` folders, as
/// ARCHITECTURE.md names them.
pub const CRATE_SOURCES: [&str; 5] = [
    "src",
    "crates/cli/src",
    "crates/mcp/src",
    "crates/python/src",
    "crates/testkit/src",
];

/// A folder of a crate as ARCHITECTURE.md names it: `src/sandbox/`.
pub fn folder_name(source: &str, folder: &ModPath) -> String {
    let mut name = format!("{source}/");
    for part in folder {
        name.push_str(part);
        name.push('/');
    }
    name
}

/// Every circle among the files of every folder of the crates in
/// [`CRATE_SOURCES`] under `repo`: the folder and the files (or folders)
/// in the circle.
pub fn all_circles(repo: &Path) -> io::Result<Vec<(String, BTreeSet<String>)>> {
    let mut circles = Vec::new();
    for source in CRATE_SOURCES {
        let graph = Graph::read(&repo.join(source))?;
        for folder in graph.folders() {
            for circle in graph.circles_in(folder) {
                let names = circle.iter().map(|c| graph.child_name(c)).collect();
                circles.push((folder_name(source, folder), names));
            }
        }
    }
    Ok(circles)
}

/// Which layer (top folder or helper file of `src/`) `module` is in.
pub fn layer_of(graph: &Graph, module: &ModPath) -> Option<String> {
    let first = module.first()?.clone();
    Some(if graph.is_folder(&vec![first.clone()]) {
        first
    } else {
        format!("{first}.rs")
    })
}

/// What each layer of the library imports of the others, with one place
/// (file and line) per import.
pub fn layer_imports(graph: &Graph) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut layers: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (from, targets) in graph.edges() {
        let Some(a) = layer_of(graph, from) else {
            continue;
        };
        let entry = layers.entry(a.clone()).or_default();
        for (to, line) in targets {
            if let Some(b) = layer_of(graph, to)
                && a != b
            {
                let file = graph.file(from).map(|p| p.display().to_string());
                entry
                    .entry(b)
                    .or_insert_with(|| format!("src/{}:{line}", file.unwrap_or_default()));
            }
        }
    }
    layers
}

/// The map `cargo xtask layers` prints: per layer of the library what it
/// imports, then per folder of every crate its circles.
pub fn map(repo: &Path) -> io::Result<String> {
    let graph = Graph::read(&repo.join("src"))?;
    let mut out = String::from("The library's layers (src/), each with what it imports:\n");
    for (layer, imports) in layer_imports(&graph) {
        let names: Vec<&str> = imports.keys().map(String::as_str).collect();
        let names = if names.is_empty() {
            "nothing of the crate".to_string()
        } else {
            names.join(", ")
        };
        let _ = writeln!(out, "  {layer:<14} {names}");
    }
    out.push_str("\nCircles among the files of a folder:\n");
    let circles = all_circles(repo)?;
    if circles.is_empty() {
        out.push_str("  none\n");
    }
    for (folder, files) in circles {
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        let _ = writeln!(out, "  {folder}: {}", files.join(", "));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(tree: &str) -> Vec<String> {
        expand_tree(tree)
            .into_iter()
            .map(|p| p.join("::"))
            .collect()
    }

    #[test]
    fn use_trees_nest_over_lines() {
        let code = code_of(
            "use crate::{\n    a::{b, c::{d,\n self}},\n    e as f,\n};\npub(crate) use g::*;\n",
        );
        let (uses, rest) = use_statements(&code);
        assert_eq!(uses.len(), 2);
        assert_eq!(uses[0].0, 1);
        assert_eq!(
            paths(&uses[0].1),
            ["crate::a::b", "crate::a::c::d", "crate::a::c", "crate::e"]
        );
        assert!(uses[1].2, "pub(crate) use is a re-export");
        assert_eq!(paths(&uses[1].1), ["g"]);
        assert_eq!(rest.trim(), "pub(crate)");
    }

    #[test]
    fn aliases_are_dropped_before_whitespace_is() {
        let tree = alias_free("crate::{a::B as C, d as e}");
        let joined: String = tree.split_whitespace().collect();
        assert_eq!(paths(&joined), ["crate::a::B", "crate::d"]);
        let tree = alias_free("crate::x as y");
        assert_eq!(paths(tree.trim()), ["crate::x"]);
    }

    #[test]
    fn comments_strings_and_test_items_name_nothing() {
        let text = r##"
// use crate::config::A;
/* use crate::config::B; /* nested */ */
fn f() -> &'static str { let c = '"'; "crate::config::C" }
const R: &str = r#"use crate::config::D;"#;
pub(in crate::sandbox) fn g() {}
#[cfg(test)]
mod tests { use crate::config::E; }
#[cfg(test)]
use crate::config::F;
fn h<'a>(x: &'a str) -> &'a str { super::super::x::y(x) }
"##;
        let code = code_of(text);
        let (uses, rest) = use_statements(&code);
        assert!(uses.is_empty(), "{uses:?}");
        let inline: Vec<String> = inline_paths(&rest)
            .into_iter()
            .map(|(line, p)| format!("{line}:{}", p.join("::")))
            .collect();
        assert_eq!(inline, ["11:super::super::x::y"]);
    }

    #[test]
    fn string_literals_are_found_outside_comments_and_tests() {
        let text = r##"
// "a comment"
fn f() -> &'static str { let c = '"'; "one \" two" }
const R: &str = r#"raw "quoted""#;
const E: &str = "";
#[cfg(test)]
mod tests { const T: &str = "test only"; }
fn g() { h(b"bytes", "multi
line") }
"##;
        let found = string_literals(text);
        assert_eq!(
            found,
            [
                (3, r#"one \" two"#.to_string()),
                (4, r#"raw "quoted""#.to_string()),
                (5, String::new()),
                (8, "bytes".to_string()),
                (8, "multi\nline".to_string()),
            ]
        );
    }

    #[test]
    fn test_only_child_files_are_found() {
        assert_eq!(
            test_only_children("mod a;\n#[cfg(test)]\nmod tests;\n#[cfg(test)]\nmod inline {}\n"),
            ["tests"]
        );
    }

    #[test]
    fn the_page_is_read() {
        let page = Architecture::read(
            "## The layers\n\n| folder | owns | imports |\n|---|---|---|\n| `config/` | x | `module`, `names` (why) |\n| helpers | `names.rs`, `escape.rs` | nothing of the crate |\n\n## Circles we still have\n\n- `src/policy/`: `access.rs`, `grants.rs` — `DirMode`\n\n## Next\n- `not/`: `a.rs`\n",
        );
        assert_eq!(page.layers.len(), 2);
        assert_eq!(page.layers[0].0, "config");
        assert_eq!(
            page.layers[0].1,
            ["module", "names"].map(String::from).into()
        );
        assert!(page.layers[1].1.is_empty());
        assert_eq!(
            page.helpers,
            ["escape.rs", "names.rs"].map(String::from).into()
        );
        assert_eq!(page.circles.len(), 1);
        assert_eq!(
            page.circles[0].1,
            ["access.rs", "grants.rs"].map(String::from).into()
        );
    }
}
