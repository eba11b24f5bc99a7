//! `text`: a toolhost tool module with three tools: `word_count`, `replace`
//! and `case`.
//!
//! The logic lives in plain functions ([`count`], [`replace_text`],
//! [`convert_case`]); the tool functions only adapt arguments and results.

use std::fmt::Write as _;

use regex::{Regex, RegexBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_guest::{Hints, Json, Toolbox};

/// The largest compiled regular expression accepted, in bytes (regex's
/// `size_limit`); also the cache limit of its lazy DFA.
pub const REGEX_SIZE_LIMIT: usize = 1 << 21;

/// The largest text `replace` produces, in bytes.
pub const MAX_OUTPUT_BYTES: usize = 1 << 20;

// ---------------------------------------------------------------- word_count

/// Counts the words, lines, characters and bytes of a text. Words are runs
/// of non-whitespace; lines are counted like `wc -l` plus a last line
/// without a newline ("" has 0 lines, "a" and "a\n" have 1, "a\nb" has 2);
/// characters are Unicode scalar values; bytes are UTF-8 bytes.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WordCount {
    /// The text to count.
    pub text: String,
}

/// What [`count`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Counts {
    /// Runs of non-whitespace characters.
    pub words: usize,
    /// Lines, the last one with or without a final newline.
    pub lines: usize,
    /// Unicode scalar values.
    pub characters: usize,
    /// UTF-8 bytes.
    pub bytes: usize,
}

/// Counts words, lines, characters and bytes of `text`.
pub fn count(text: &str) -> Counts {
    let newlines = text.bytes().filter(|&b| b == b'\n').count();
    let unterminated = usize::from(!text.is_empty() && !text.ends_with('\n'));
    Counts {
        words: text.split_whitespace().count(),
        lines: newlines + unterminated,
        characters: text.chars().count(),
        bytes: text.len(),
    }
}

/// The `word_count` tool: `{"words", "lines", "characters", "bytes"}`.
pub fn word_count(args: WordCount) -> Result<Json<Counts>, String> {
    Ok(Json(count(&args.text)))
}

// ---------------------------------------------------------------- replace

/// Replaces occurrences of a pattern in a text and reports how many were
/// replaced. By default the pattern is literal text; with "regex": true it
/// is a regular expression (Rust regex syntax: no look-around or
/// backreferences) and the replacement may use $1, ${1}, $name or ${name}
/// for capture groups and $$ for a literal $ (write ${1}x, not $1x, when
/// text follows a group). Returns {"text": the new text, "replacements": n}.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Replace {
    /// The text to change.
    pub text: String,
    /// What to look for: literal text, or a regular expression if "regex" is true. Must not be empty.
    pub pattern: String,
    /// What to put instead (may be empty to delete the matches).
    pub replacement: String,
    /// Treat "pattern" as a regular expression (default false: literal text).
    #[serde(default)]
    pub regex: bool,
    /// Match regardless of letter case (default false).
    #[serde(default)]
    pub case_insensitive: bool,
    /// Replace at most this many matches, from the start (default: all).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_replacements: Option<u64>,
}

/// The result of [`replace_text`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Replaced {
    /// The text after replacement.
    pub text: String,
    /// How many matches were replaced.
    pub replacements: usize,
}

/// Replaces matches of `args.pattern` in `args.text`; see [`Replace`].
pub fn replace_text(args: &Replace) -> Result<Replaced, String> {
    if args.pattern.is_empty() {
        return Err(
            "the pattern is empty: give the text (or regular expression) to look for".into(),
        );
    }
    let limit = match args.max_replacements {
        Some(0) => {
            return Err(
                "max_replacements must be at least 1 (omit it to replace every match)".into(),
            );
        }
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
        None => usize::MAX,
    };
    if !args.regex && !args.case_insensitive {
        return replace_literal(&args.text, &args.pattern, &args.replacement, limit);
    }
    let source = if args.regex {
        args.pattern.clone()
    } else {
        regex::escape(&args.pattern)
    };
    let re = RegexBuilder::new(&source)
        .case_insensitive(args.case_insensitive)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(limit) => format!(
                "the pattern is too complex: it compiles to more than {limit} bytes; simplify it (e.g. smaller repetition counts)"
            ),
            e if args.regex => format!("invalid regular expression: {e}"),
            e => format!("cannot search for this text: {e}"),
        })?;
    if args.regex {
        check_group_references(&re, &args.replacement)?;
    }
    replace_regex(&re, &args.text, &args.replacement, args.regex, limit)
}

fn too_large() -> String {
    format!(
        "the result would be larger than {} MiB; replace fewer matches (max_replacements) or use a shorter replacement",
        MAX_OUTPUT_BYTES >> 20
    )
}

fn replace_literal(
    text: &str,
    pattern: &str,
    replacement: &str,
    limit: usize,
) -> Result<Replaced, String> {
    let mut out = String::new();
    let mut last = 0;
    let mut replacements = 0;
    for (start, matched) in text.match_indices(pattern).take(limit) {
        out.push_str(&text[last..start]);
        out.push_str(replacement);
        last = start + matched.len();
        replacements += 1;
        if out.len() > MAX_OUTPUT_BYTES {
            return Err(too_large());
        }
    }
    out.push_str(&text[last..]);
    if out.len() > MAX_OUTPUT_BYTES {
        return Err(too_large());
    }
    Ok(Replaced {
        text: out,
        replacements,
    })
}

fn replace_regex(
    re: &Regex,
    text: &str,
    replacement: &str,
    expand: bool,
    limit: usize,
) -> Result<Replaced, String> {
    let mut out = String::new();
    let mut last = 0;
    let mut replacements = 0;
    for caps in re.captures_iter(text).take(limit) {
        let whole = caps.get(0).map_or(0..0, |m| m.range());
        out.push_str(&text[last..whole.start]);
        if expand {
            caps.expand(replacement, &mut out);
        } else {
            out.push_str(replacement);
        }
        last = whole.end;
        replacements += 1;
        if out.len() > MAX_OUTPUT_BYTES {
            return Err(too_large());
        }
    }
    out.push_str(&text[last..]);
    if out.len() > MAX_OUTPUT_BYTES {
        return Err(too_large());
    }
    Ok(Replaced {
        text: out,
        replacements,
    })
}

/// Checks that every `$group` in `replacement` names a group of `re`; the
/// regex crate would silently insert "" for a missing one. Follows regex's
/// own rules: `$$` is a literal `$`, `${name}` takes any text up to `}`,
/// `$name` takes the longest run of `[0-9A-Za-z_]`, and a `$` followed by
/// none of these is literal.
fn check_group_references(re: &Regex, replacement: &str) -> Result<(), String> {
    let groups = re.captures_len() - 1;
    let mut rest = replacement;
    while let Some(at) = rest.find('$') {
        rest = &rest[at + 1..];
        let (name, braced) = if let Some(r) = rest.strip_prefix('$') {
            rest = r;
            continue;
        } else if let Some(r) = rest.strip_prefix('{') {
            match r.find('}') {
                Some(end) => {
                    rest = &r[end + 1..];
                    (&r[..end], true)
                }
                None => continue, // regex treats an unclosed ${ literally
            }
        } else {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let name = &rest[..end];
            rest = &rest[end..];
            (name, false)
        };
        if name.is_empty() {
            continue;
        }
        let shown = if braced {
            format!("${{{name}}}")
        } else {
            format!("${name}")
        };
        if let Ok(index) = name.parse::<usize>() {
            if index > groups {
                return Err(format!(
                    "the replacement refers to group {shown}, but the pattern has {}",
                    plural(groups, "capture group", "capture groups")
                ));
            }
        } else if re.capture_names().flatten().all(|n| n != name) {
            let mut message = format!(
                "the replacement refers to group {shown}, but the pattern has no group named '{name}'"
            );
            let digits = name.chars().take_while(char::is_ascii_digit).count();
            if digits > 0 && !braced {
                let _ = write!(
                    message,
                    "; to put text right after group {0}, write ${{{0}}}{1}",
                    &name[..digits],
                    &name[digits..]
                );
            }
            message.push_str("; write $$ for a literal $");
            return Err(message);
        }
    }
    Ok(())
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

/// The `replace` tool: `{"text", "replacements"}`.
pub fn replace(args: Replace) -> Result<Json<Replaced>, String> {
    replace_text(&args).map(Json)
}

// ---------------------------------------------------------------- case

/// A letter case or naming convention for [`convert_case`].
///
/// The variants have no doc comments on purpose: with them, the schema
/// would be a `oneOf` list instead of a plain `enum` of names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum Case {
    Upper,  // "HELLO WORLD"
    Lower,  // "hello world"
    Title,  // "Hello World"
    Snake,  // "hello_world"
    Kebab,  // "hello-world"
    Camel,  // "helloWorld"
    Pascal, // "HelloWorld"
}

/// Converts a text to another letter case or naming convention. "upper",
/// "lower" and "title" (first letter of each word capitalized, the rest
/// lowercase) keep spaces and punctuation. "snake" (hello_world), "kebab"
/// (hello-world), "camel" (helloWorld) and "pascal" (HelloWorld) split the
/// text into words at spaces, punctuation, underscores, hyphens and
/// lower-to-upper boundaries ("HTTPServer error_code" -> snake
/// "http_server_error_code"), drop apostrophes, and join the words.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseArgs {
    /// The text to convert.
    pub text: String,
    /// The target: "upper", "lower", "title", "snake", "kebab", "camel" or "pascal".
    pub to: Case,
}

/// Converts `text` to `case`.
pub fn convert_case(text: &str, case: Case) -> String {
    match case {
        Case::Upper => text.to_uppercase(),
        Case::Lower => text.to_lowercase(),
        Case::Title => title_case(text),
        Case::Snake => join_words(text, "_", false, false),
        Case::Kebab => join_words(text, "-", false, false),
        Case::Camel => join_words(text, "", true, false),
        Case::Pascal => join_words(text, "", true, true),
    }
}

fn is_apostrophe(c: char) -> bool {
    c == '\'' || c == '’'
}

/// Capitalizes the first letter or digit of each word and lowercases the
/// rest; a word starts after any character that is neither alphanumeric nor
/// an apostrophe ("don't" stays one word).
fn title_case(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_word = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if in_word {
                out.extend(c.to_lowercase());
            } else {
                out.extend(c.to_uppercase());
            }
            in_word = true;
        } else {
            in_word = in_word && is_apostrophe(c);
            out.push(c);
        }
    }
    out
}

/// Splits `text` into words: runs of letters and digits, separated by any
/// other character (apostrophes are dropped without splitting), and split
/// inside a run at "aB" (lower or digit, then upper) and "ABc" (the last
/// upper of an acronym starts the next word).
pub fn split_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current: Vec<char> = Vec::new();
    let chars: Vec<char> = text.chars().filter(|&c| !is_apostrophe(c)).collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                words.push(current.drain(..).collect());
            }
            continue;
        }
        if let Some(&prev) = current.last() {
            let next_is_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let boundary = c.is_uppercase()
                && ((prev.is_lowercase() || prev.is_numeric())
                    || (prev.is_uppercase() && next_is_lower));
            if boundary {
                words.push(current.drain(..).collect());
            }
        }
        current.push(c);
    }
    if !current.is_empty() {
        words.push(current.into_iter().collect());
    }
    words
}

fn join_words(text: &str, separator: &str, capitalize: bool, first_too: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, word) in split_words(text).iter().enumerate() {
        if i > 0 {
            out.push_str(separator);
        }
        let lower = word.to_lowercase();
        if capitalize && (i > 0 || first_too) {
            let mut chars = lower.chars();
            if let Some(first) = chars.next() {
                out.extend(first.to_uppercase());
                out.push_str(chars.as_str());
            }
        } else {
            out.push_str(&lower);
        }
    }
    out
}

/// The `case` tool: the converted text.
pub fn case(args: CaseArgs) -> Result<String, String> {
    Ok(convert_case(&args.text, args.to))
}

/// The module's tools. All three are pure functions of their arguments; the
/// two that return JSON declare its shape, so MCP clients also get it as
/// structured content.
pub fn toolbox() -> Toolbox {
    Toolbox::new()
        .tool("word_count", word_count)
        .title("Count words")
        .hints(Hints::pure())
        .returns::<Counts>()
        .tool("replace", replace)
        .title("Find and replace")
        .hints(Hints::pure())
        .returns::<Replaced>()
        .tool("case", case)
        .title("Change letter case")
        .hints(Hints::pure())
}

toolhost_guest::export_toolbox!(toolbox);

#[cfg(test)]
mod tests;
