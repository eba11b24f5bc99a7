//! Bench guest: the smallest useful tool, `echo`, which returns its text.
//! The benchmarks compare it with the same tool in native Rust and in
//! plain Python.

use serde::Deserialize;
use toolhost_guest::JsonSchema;

/// Returns the text it is given.
#[derive(Deserialize, JsonSchema)]
struct Echo {
    /// The text to return.
    text: String,
}

fn echo(args: Echo) -> Result<String, String> {
    Ok(args.text)
}

toolhost_guest::export_tools!(echo);
