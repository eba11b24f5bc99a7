//! The bundled example tools, called through the host like a model would.

use serde_json::{Value, json};

use crate::common::{bundled_manager, call};

#[test]
fn calc_evaluates_arithmetic() {
    let m = bundled_manager();
    let cases = [
        ("2 * (3 + 4)", "14"),
        ("-2^2", "-4"),
        ("2^3^2", "512"),
        ("7 % 3 + 0.5", "1.5"),
        ("0.1 + 0.2", "0.30000000000000004"),
        (
            "sqrt(16) + abs(-3) + max(1, 5, 2) + min(4, 2) + round(2.5)",
            "17",
        ),
        ("1.5e3 / 3", "500"),
    ];
    for (expression, expected) in cases {
        assert_eq!(
            call(&m, "calc_evaluate", json!({"expression": expression})),
            expected,
            "{expression}"
        );
    }
}

#[test]
fn calc_errors_are_clear() {
    let m = bundled_manager();
    let err = |e: &str| call(&m, "calc_evaluate", json!({"expression": e}));
    assert!(
        err("1/0").contains("failed: division by zero"),
        "{}",
        err("1/0")
    );
    let syntax = err("2 * * 3");
    assert!(
        syntax.starts_with("Error: tool 'calc_evaluate' failed: syntax error at position "),
        "{syntax}"
    );
    assert!(
        err("nosuch(1)").contains("unknown function"),
        "{}",
        err("nosuch(1)")
    );
    // Deep nesting is refused, not a stack overflow; 255 levels still work.
    let deep = format!("{}1{}", "(".repeat(255), ")".repeat(255));
    assert_eq!(call(&m, "calc_evaluate", json!({"expression": deep})), "1");
    let too_deep = format!("{}1{}", "(".repeat(5000), ")".repeat(5000));
    let out = call(&m, "calc_evaluate", json!({"expression": too_deep}));
    assert!(
        out.starts_with("Error: tool 'calc_evaluate' failed: "),
        "{out}"
    );
}

#[test]
fn text_tools() {
    let m = bundled_manager();
    let counts: Value = serde_json::from_str(&call(
        &m,
        "text_word_count",
        json!({"text": "one two\nthree"}),
    ))
    .unwrap();
    assert_eq!(counts["words"], 3);
    assert_eq!(counts["lines"], 2);
    assert_eq!(counts["characters"], 13);
    let replaced: Value = serde_json::from_str(&call(
        &m,
        "text_replace",
        json!({"text": "a1 b22 c333", "pattern": "[0-9]+", "replacement": "#", "regex": true}),
    ))
    .unwrap();
    assert_eq!(replaced, json!({"text": "a# b# c#", "replacements": 3}));
    assert_eq!(
        call(
            &m,
            "text_case",
            json!({"text": "HTTPServer error_code", "to": "snake"})
        ),
        "http_server_error_code"
    );
    assert_eq!(
        call(
            &m,
            "text_case",
            json!({"text": "hello big world", "to": "kebab"})
        ),
        "hello-big-world"
    );
    let bad = call(
        &m,
        "text_replace",
        json!({"text": "x", "pattern": "(", "replacement": "", "regex": true}),
    );
    assert!(
        bad.starts_with("Error: tool 'text_replace' failed: "),
        "{bad}"
    );
    let bad_case = call(&m, "text_case", json!({"text": "x", "to": "sideways"}));
    assert!(bad_case.contains("field 'to'"), "{bad_case}");
}

#[test]
fn json_tools() {
    let m = bundled_manager();
    let doc =
        r#"{"store": {"book": [{"title": "A", "price": 8.95}, {"title": "B", "price": 12.99}]}}"#;
    assert_eq!(
        call(
            &m,
            "json_query",
            json!({"document": doc, "path": "/store/book/1/title"})
        ),
        "\"B\""
    );
    assert_eq!(
        call(
            &m,
            "json_query",
            json!({"document": doc, "path": "$..price"})
        ),
        "[8.95,12.99]"
    );
    assert_eq!(
        call(
            &m,
            "json_query",
            json!({"document": doc, "path": "$.nothing"})
        ),
        "[]"
    );
    assert_eq!(
        call(
            &m,
            "json_format",
            json!({"document": "{\"a\": [1, 2]}", "mode": "minify"})
        ),
        "{\"a\":[1,2]}"
    );
    assert_eq!(
        call(
            &m,
            "json_format",
            json!({"document": "[1, 2,]", "mode": "validate"})
        ),
        "Error: tool 'json_format' failed: invalid JSON at line 1, column 7: trailing comma"
    );
}

#[test]
fn schemas_are_openai_function_schemas() {
    let m = bundled_manager();
    for schema in m.tool_infos() {
        assert_eq!(schema["type"], "function");
        let f = &schema["function"];
        assert!(f["name"].as_str().unwrap().len() <= 64);
        assert!(!f["description"].as_str().unwrap().is_empty(), "{f}");
        assert_eq!(f["parameters"]["type"], "object", "{f}");
        assert!(f["parameters"]["properties"].is_object(), "{f}");
    }
}
