//! The error tables of docs/sandbox.md ("What the model reads"), as the
//! tests that check them against the code read them: `src/module/fault_text.rs`
//! (the texts of faults, where `Fault` is) and `tests/it/docs.rs` (those of
//! dispatch).

/// Each row of the error tables of `page`: its first cell (the limit or
/// the cause) and the `Error:` texts among the code spans of its second.
pub fn error_rows(page: &str) -> Vec<(&str, Vec<&str>)> {
    let tables = page
        .find("## What the model reads")
        .expect("docs/sandbox.md has its error tables");
    page[tables..]
        .lines()
        .filter(|line| line.starts_with("| "))
        .filter_map(|row| {
            let mut cells = row.splitn(3, '|').skip(1);
            let (cause, rest) = (cells.next()?.trim(), cells.next()?);
            let texts = rest.split('`').skip(1).step_by(2);
            Some((cause, texts.filter(|t| t.starts_with("Error:")).collect()))
        })
        .collect()
}

/// The `Error:` texts of the row of `page`'s error tables whose first cell
/// is `cause`.
pub fn error_texts<'a>(page: &'a str, cause: &str) -> Vec<&'a str> {
    error_rows(page)
        .into_iter()
        .find(|(c, _)| *c == cause)
        .unwrap_or_else(|| panic!("docs/sandbox.md has a row for {cause}"))
        .1
}
