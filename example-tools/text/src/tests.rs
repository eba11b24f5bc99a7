use super::*;

use toolhost_guest::Toolbox;
use toolhost_guest::serde_json::{self, Value, json};

fn toolbox() -> Toolbox {
    Toolbox::new()
        .tool("word_count", word_count)
        .tool("replace", replace)
        .tool("case", case)
}

fn call(tool: &str, arguments: Value) -> Result<Value, String> {
    toolbox()
        .call(tool, &arguments.to_string())
        .map(|text| serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

fn rep(text: &str, pattern: &str, replacement: &str) -> Replace {
    Replace {
        text: text.into(),
        pattern: pattern.into(),
        replacement: replacement.into(),
        regex: false,
        case_insensitive: false,
        max_replacements: None,
    }
}

fn regex(text: &str, pattern: &str, replacement: &str) -> Replace {
    Replace {
        regex: true,
        ..rep(text, pattern, replacement)
    }
}

fn done(args: Replace) -> (String, usize) {
    let r = replace_text(&args).unwrap_or_else(|e| panic!("{args:?} failed: {e}"));
    (r.text, r.replacements)
}

fn failed(args: Replace) -> String {
    replace_text(&args).unwrap_err()
}

// ---------------------------------------------------------------- word_count

#[test]
fn counts_lines_like_the_spec() {
    assert_eq!(count("").lines, 0);
    assert_eq!(count("a").lines, 1);
    assert_eq!(count("a\n").lines, 1);
    assert_eq!(count("a\nb").lines, 2);
    assert_eq!(count("a\nb\n").lines, 2);
    assert_eq!(count("\n").lines, 1);
    assert_eq!(count("\n\n").lines, 2);
    assert_eq!(count("a\r\nb\r\n").lines, 2);
}

#[test]
fn counts_words_characters_and_bytes() {
    assert_eq!(
        count("Hello, wörld!\nSecond  line\there"),
        Counts {
            words: 5,
            lines: 2,
            characters: 31,
            bytes: 32,
        }
    );
    assert_eq!(
        count(""),
        Counts {
            words: 0,
            lines: 0,
            characters: 0,
            bytes: 0
        }
    );
    assert_eq!(count("   \n\t ").words, 0);
    // Unicode whitespace separates words too (no-break space, ideographic space).
    assert_eq!(count("a\u{a0}b\u{3000}c").words, 3);
    // Characters are scalar values: an emoji with a skin tone is two.
    let c = count("👍🏽");
    assert_eq!((c.characters, c.bytes), (2, 8));
}

#[test]
fn word_count_tool_returns_json() {
    let out = call("word_count", json!({"text": "one two\nthree"})).unwrap();
    assert_eq!(
        out,
        json!({"words": 3, "lines": 2, "characters": 13, "bytes": 13})
    );
    assert_eq!(
        toolbox().call("word_count", r#"{"text":"a b"}"#).unwrap(),
        r#"{"words":2,"lines":1,"characters":3,"bytes":3}"#
    );
}

// ---------------------------------------------------------------- replace

#[test]
fn literal_replacement() {
    assert_eq!(done(rep("a.b.c", ".", "-")), ("a-b-c".into(), 2));
    assert_eq!(done(rep("aaaa", "aa", "b")), ("bb".into(), 2));
    assert_eq!(done(rep("abc", "x", "y")), ("abc".into(), 0));
    assert_eq!(done(rep("price: $5", "$5", "$1")), ("price: $1".into(), 1));
    assert_eq!(done(rep("a(b)c", "(b)", "")), ("ac".into(), 1));
    assert_eq!(done(rep("naïve café", "é", "e")), ("naïve cafe".into(), 1));
    assert_eq!(done(rep("", "a", "b")), ("".into(), 0));
}

#[test]
fn literal_case_insensitive() {
    let args = Replace {
        case_insensitive: true,
        ..rep("Cat cat CAT .*", "cat", "dog")
    };
    assert_eq!(done(args), ("dog dog dog .*".into(), 3));
    // Regex metacharacters in a literal pattern are literal; $ in the
    // replacement is literal.
    let args = Replace {
        case_insensitive: true,
        ..rep("A.B a.b axb", "a.b", "$0")
    };
    assert_eq!(done(args), ("$0 $0 axb".into(), 2));
    // Unicode case folding.
    let args = Replace {
        case_insensitive: true,
        ..rep("STRASSE Straße ΣΊΣΥΦΟΣ", "σίσυφοσ", "x")
    };
    assert_eq!(done(args).1, 1);
}

#[test]
fn max_replacements_limits_from_the_start() {
    let args = Replace {
        max_replacements: Some(2),
        ..rep("a a a a", "a", "b")
    };
    assert_eq!(done(args), ("b b a a".into(), 2));
    let args = Replace {
        max_replacements: Some(1),
        ..regex("x1 y2 z3", r"(\w)(\d)", "$2$1")
    };
    assert_eq!(done(args), ("1x y2 z3".into(), 1));
    let args = Replace {
        max_replacements: Some(100),
        ..rep("aa", "a", "b")
    };
    assert_eq!(done(args), ("bb".into(), 2));
    let args = Replace {
        max_replacements: Some(0),
        ..rep("aa", "a", "b")
    };
    assert!(failed(args).contains("max_replacements must be at least 1"));
}

#[test]
fn regex_replacement_with_groups() {
    assert_eq!(
        done(regex("2024-01-15", r"(\d+)-(\d+)-(\d+)", "$3/$2/$1")),
        ("15/01/2024".into(), 1)
    );
    assert_eq!(
        done(regex(
            "John Smith",
            r"(?P<first>\w+) (?P<last>\w+)",
            "${last}, $first"
        )),
        ("Smith, John".into(), 1)
    );
    assert_eq!(done(regex("a1b22c333", r"\d+", "#")), ("a#b#c#".into(), 3));
    assert_eq!(done(regex("ab", "(a)", "${1}x")), ("axb".into(), 1));
    assert_eq!(done(regex("cost", "cost", "$$5")), ("$5".into(), 1));
    assert_eq!(done(regex("a", "a", "$")), ("$".into(), 1));
    assert_eq!(done(regex("a", "a", "${")), ("${".into(), 1));
    assert_eq!(done(regex("a b", r"\s+", "")), ("ab".into(), 1));
    let args = Replace {
        case_insensitive: true,
        ..regex("Foo FOO foo", "^foo", "bar")
    };
    assert_eq!(done(args), ("bar FOO foo".into(), 1));
    assert_eq!(
        done(regex("line1\nline2", "(?m)^", "> ")),
        ("> line1\n> line2".into(), 2)
    );
}

#[test]
fn regex_empty_matches() {
    assert_eq!(done(regex("abc", "x*", "-")), ("-a-b-c-".into(), 4));
    assert_eq!(done(regex("", "x*", "-")), ("-".into(), 1));
    assert_eq!(done(regex("é", "x?", "-")).0, "-é-");
}

#[test]
fn unknown_group_references_are_errors() {
    let e = failed(regex("ab", "(a)(b)", "$3"));
    assert_eq!(
        e,
        "the replacement refers to group $3, but the pattern has 2 capture groups"
    );
    let e = failed(regex("ab", "(a)", "$1x"));
    assert!(
        e.contains("no group named '1x'") && e.contains("write ${1}x"),
        "{e}"
    );
    let e = failed(regex("ab", "(?P<n>a)", "${m}"));
    assert!(e.contains("no group named 'm'"), "{e}");
    let e = failed(regex("ab", "a", "$1"));
    assert!(e.contains("the pattern has 0 capture groups"), "{e}");
    let e = failed(regex("ab", "(a)", "${2}"));
    assert!(
        e.contains("group ${2}, but the pattern has 1 capture group"),
        "{e}"
    );
    // $0 (the whole match) always exists.
    assert_eq!(done(regex("ab", "a", "[$0]")), ("[a]b".into(), 1));
}

#[test]
fn invalid_regex_reports_regex_message() {
    let e = failed(regex("x", "(abc", "y"));
    assert!(
        e.starts_with("invalid regular expression: regex parse error"),
        "{e}"
    );
    assert!(e.contains("unclosed group"), "{e}");
    let e = failed(regex("x", "a(?=b)", "y"));
    assert!(e.contains("look-around"), "{e}");
    let e = failed(regex("x", r"(a)\1", "y"));
    assert!(e.contains("backreferences"), "{e}");
}

#[test]
fn oversized_regex_is_refused() {
    let e = failed(regex("x", r"\w{1000}{1000}", "y"));
    assert!(e.starts_with("the pattern is too complex"), "{e}");
    let e = failed(regex("x", "(((((((((a{100}){100}){100})))))))", "y"));
    assert!(e.contains("too complex") || e.contains("invalid"), "{e}");
}

#[test]
fn empty_pattern_is_an_error() {
    assert!(failed(rep("abc", "", "x")).starts_with("the pattern is empty"));
    assert!(failed(regex("abc", "", "x")).starts_with("the pattern is empty"));
}

#[test]
fn output_size_is_bounded() {
    let text = "a".repeat(1 << 19);
    let big = "b".repeat(64);
    let e = failed(rep(&text, "a", &big));
    assert!(
        e.starts_with("the result would be larger than 1 MiB"),
        "{e}"
    );
    let e = failed(regex(&text, "x*", &big));
    assert!(
        e.starts_with("the result would be larger than 1 MiB"),
        "{e}"
    );
    // The same replacement limited to a few matches is fine.
    let args = Replace {
        max_replacements: Some(3),
        ..rep(&text, "a", &big)
    };
    assert_eq!(done(args).1, 3);
}

#[test]
fn replace_tool_and_argument_errors() {
    let out = call(
        "replace",
        json!({"text": "a-b-c", "pattern": "-", "replacement": "+"}),
    );
    assert_eq!(out, Ok(json!({"text": "a+b+c", "replacements": 2})));
    let out = call(
        "replace",
        json!({"text": "v1.2", "pattern": "(\\d+)\\.(\\d+)", "replacement": "$2.$1", "regex": true}),
    );
    assert_eq!(out, Ok(json!({"text": "v2.1", "replacements": 1})));
    let e = call(
        "replace",
        json!({"text": "a", "pattern": "a", "replacement": "b", "max_replacements": -1}),
    )
    .unwrap_err();
    assert!(
        e.starts_with("invalid arguments: field 'max_replacements'"),
        "{e}"
    );
    let e = call("replace", json!({"text": "a", "pattern": "a"})).unwrap_err();
    assert!(e.contains("missing field `replacement`"), "{e}");
    let e = call(
        "replace",
        json!({"text": "a", "pattern": "a", "replacement": "b", "regexp": true}),
    )
    .unwrap_err();
    assert!(e.contains("unknown field `regexp`"), "{e}");
}

// ---------------------------------------------------------------- case

#[test]
fn upper_lower_title() {
    assert_eq!(convert_case("Hello wörld", Case::Upper), "HELLO WÖRLD");
    assert_eq!(convert_case("Straße", Case::Upper), "STRASSE");
    assert_eq!(convert_case("Hello WÖRLD", Case::Lower), "hello wörld");
    assert_eq!(
        convert_case("the QUICK brown-fox's tale", Case::Title),
        "The Quick Brown-Fox's Tale"
    );
    assert_eq!(convert_case("don't stop", Case::Title), "Don't Stop");
    assert_eq!(convert_case("3rd place", Case::Title), "3rd Place");
    assert_eq!(
        convert_case("  two  spaces ", Case::Title),
        "  Two  Spaces "
    );
    assert_eq!(convert_case("", Case::Title), "");
}

#[test]
fn word_splitting() {
    assert_eq!(
        split_words("HTTPServer error_code"),
        ["HTTP", "Server", "error", "code"]
    );
    assert_eq!(
        split_words("getHTTPResponseCode"),
        ["get", "HTTP", "Response", "Code"]
    );
    assert_eq!(split_words("version2Update"), ["version2", "Update"]);
    assert_eq!(split_words("HTML5Parser"), ["HTML5", "Parser"]);
    assert_eq!(split_words("kebab-case--words"), ["kebab", "case", "words"]);
    assert_eq!(split_words("  Hello,   World! "), ["Hello", "World"]);
    assert_eq!(split_words("don't"), ["dont"]);
    assert_eq!(split_words("ÉcoleNormale"), ["École", "Normale"]);
    assert_eq!(split_words("ABC"), ["ABC"]);
    assert!(split_words("--- ...").is_empty());
}

#[test]
fn naming_conventions() {
    let text = "HTTPServer error_code";
    assert_eq!(convert_case(text, Case::Snake), "http_server_error_code");
    assert_eq!(convert_case(text, Case::Kebab), "http-server-error-code");
    assert_eq!(convert_case(text, Case::Camel), "httpServerErrorCode");
    assert_eq!(convert_case(text, Case::Pascal), "HttpServerErrorCode");
    assert_eq!(convert_case("hello world", Case::Pascal), "HelloWorld");
    assert_eq!(convert_case("Hello World", Case::Camel), "helloWorld");
    assert_eq!(convert_case("user-id", Case::Snake), "user_id");
    assert_eq!(convert_case("userId", Case::Kebab), "user-id");
    assert_eq!(convert_case("user_ID", Case::Camel), "userId");
    assert_eq!(convert_case("çava bien", Case::Pascal), "ÇavaBien");
    assert_eq!(convert_case("...", Case::Snake), "");
    assert_eq!(convert_case("", Case::Camel), "");
}

#[test]
fn case_tool_and_schema() {
    assert_eq!(
        toolbox().call("case", r#"{"text":"Hello World","to":"snake"}"#),
        Ok("hello_world".into())
    );
    let e = toolbox()
        .call("case", r#"{"text":"x","to":"screaming"}"#)
        .unwrap_err();
    assert!(
        e.starts_with("invalid arguments: field 'to': unknown variant `screaming`"),
        "{e}"
    );
    assert!(
        e.contains("`upper`, `lower`, `title`, `snake`, `kebab`, `camel`, `pascal`"),
        "{e}"
    );

    let info: Value = serde_json::from_str(&toolbox().tool_info()).unwrap();
    let names: Vec<&str> = info
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["word_count", "replace", "case"]);
    let to = &info[2]["function"]["parameters"]["properties"]["to"];
    assert_eq!(
        to["enum"],
        json!([
            "upper", "lower", "title", "snake", "kebab", "camel", "pascal"
        ]),
        "{to}"
    );
    let replace_params = &info[1]["function"]["parameters"];
    assert_eq!(
        replace_params["required"],
        json!(["text", "pattern", "replacement"])
    );
    assert_eq!(replace_params["properties"]["regex"]["default"], false);
    for tool in info.as_array().unwrap() {
        let description = tool["function"]["description"].as_str().unwrap();
        assert!(description.len() > 40, "{description}");
    }
}
