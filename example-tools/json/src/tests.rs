use super::*;

use serde_json::json;
use toolhost_guest::Toolbox;

const STORE: &str = r#"{
  "store": {
    "book": [
      {"category": "reference", "author": "Nigel Rees", "title": "Sayings of the Century", "price": 8.95},
      {"category": "fiction", "author": "Evelyn Waugh", "title": "Sword of Honour", "price": 12.99},
      {"category": "fiction", "author": "Herman Melville", "title": "Moby Dick", "isbn": "0-553-21311-3", "price": 8.99},
      {"category": "fiction", "author": "J. R. R. Tolkien", "title": "The Lord of the Rings", "isbn": "0-395-19395-8", "price": 22.99}
    ],
    "bicycle": {"color": "red", "price": 399}
  },
  "a/b": 1,
  "m~n": 2,
  "": 3
}"#;

fn q(path: &str) -> Value {
    let text = query_document(STORE, path).unwrap_or_else(|e| panic!("{path:?} failed: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn q_err(path: &str) -> String {
    query_document(STORE, path).unwrap_err()
}

fn toolbox() -> Toolbox {
    Toolbox::new().tool("query", query).tool("format", format)
}

// ---------------------------------------------------------------- pointer

#[test]
fn json_pointer_returns_the_single_value() {
    assert_eq!(q("/store/bicycle/color"), json!("red"));
    assert_eq!(q("/store/book/0/price"), json!(8.95));
    assert_eq!(q("/store/book/3/isbn"), json!("0-395-19395-8"));
    assert_eq!(q("/a~1b"), json!(1));
    assert_eq!(q("/m~0n"), json!(2));
    assert_eq!(q("/"), json!(3));
    assert_eq!(q("")["store"]["bicycle"]["price"], json!(399));
    assert_eq!(
        query_document(STORE, "/store/bicycle").unwrap(),
        r#"{"color":"red","price":399}"#
    );
    assert_eq!(query_document("\"x\"", "").unwrap(), "\"x\"");
}

#[test]
fn json_pointer_misses_say_why() {
    assert_eq!(
        q_err("/a/b"),
        "no value at path '/a/b': the document root is an object with no key 'a'"
    );
    assert_eq!(
        q_err("/store/bike/color"),
        "no value at path '/store/bike/color': '/store' is an object with no key 'bike'"
    );
    assert_eq!(
        q_err("/store/book/9"),
        "no value at path '/store/book/9': '/store/book' is an array of length 4, index 9 is past its end"
    );
    assert!(q_err("/store/book/-1").contains("'-1' is not an array index"));
    assert!(q_err("/store/book/01").contains("'01' is not an array index"));
    assert!(q_err("/store/book/-").contains("is not an array index"));
    assert_eq!(
        q_err("/store/bicycle/color/x"),
        "no value at path '/store/bicycle/color/x': '/store/bicycle/color' is a string, which has no members"
    );
    assert!(
        query_document("[1]", "/0/x")
            .unwrap_err()
            .contains("'/0' is a number")
    );
    assert!(
        query_document("null", "/x")
            .unwrap_err()
            .contains("the document root is null")
    );
}

// ---------------------------------------------------------------- JSONPath

#[test]
fn jsonpath_basics() {
    assert_eq!(q("$.store.bicycle.color"), json!(["red"]));
    assert_eq!(q("$['store']['bicycle']['color']"), json!(["red"]));
    assert_eq!(
        q(r#"$["store"]["bicycle"]"#),
        json!([{"color": "red", "price": 399}])
    );
    assert_eq!(q("$.store.book[0].author"), json!(["Nigel Rees"]));
    assert_eq!(q("$.store.book[-1].author"), json!(["J. R. R. Tolkien"]));
    assert_eq!(
        q("$.store.book[*].price"),
        json!([8.95, 12.99, 8.99, 22.99])
    );
    assert_eq!(q("$.store.bicycle.*"), json!(["red", 399]));
    assert_eq!(
        q("$.store.book[1:3].title"),
        json!(["Sword of Honour", "Moby Dick"])
    );
    assert_eq!(
        q("$.store.book[:1].title"),
        json!(["Sayings of the Century"])
    );
    assert_eq!(q("$.store.book[-2:].price"), json!([8.99, 22.99]));
    assert_eq!(q("$.store.book[::2].price"), json!([8.95, 8.99]));
    assert_eq!(q("$.store.book[0,2].price"), json!([8.95, 8.99]));
    assert_eq!(q("$['a/b']"), json!([1]));
    assert_eq!(q("$").as_array().unwrap().len(), 1);
    assert_eq!(q("  $.store.bicycle.price  "), json!([399]));
}

#[test]
fn jsonpath_recursive_descent() {
    assert_eq!(q("$..price"), json!([8.95, 12.99, 8.99, 22.99, 399]));
    assert_eq!(q("$..isbn"), json!(["0-553-21311-3", "0-395-19395-8"]));
    assert_eq!(q("$..book[2].author"), json!(["Herman Melville"]));
    assert_eq!(q("$.store..color"), json!(["red"]));
}

#[test]
fn jsonpath_filters_and_functions() {
    assert_eq!(
        q("$.store.book[?@.price < 10].title"),
        json!(["Sayings of the Century", "Moby Dick"])
    );
    assert_eq!(
        q("$..book[?@.isbn].title"),
        json!(["Moby Dick", "The Lord of the Rings"])
    );
    assert_eq!(
        q("$.store.book[?@.category == 'fiction' && @.price > 20].author"),
        json!(["J. R. R. Tolkien"])
    );
    assert_eq!(
        q("$.store.book[?length(@.title) > 20].price"),
        json!([8.95, 22.99])
    );
    assert_eq!(
        q("$.store.book[?match(@.author, 'H.*')].price"),
        json!([8.99])
    );
    assert_eq!(
        q("$.store.book[?search(@.title, 'Dick')].price"),
        json!([8.99])
    );
    assert_eq!(q("$.store[?count(@.*) == 2].color"), json!(["red"]));
}

#[test]
fn jsonpath_with_no_match_is_an_empty_array() {
    assert_eq!(q("$.nothing"), json!([]));
    assert_eq!(q("$.store.book[99]"), json!([]));
    assert_eq!(q("$..nonexistent"), json!([]));
    assert_eq!(q("$.store.book[?@.price > 1000]"), json!([]));
}

#[test]
fn jsonpath_keeps_key_order() {
    let doc = r#"{"z": 1, "a": {"y": 2, "b": 3}, "m": 4}"#;
    assert_eq!(
        query_document(doc, "$").unwrap(),
        r#"[{"z":1,"a":{"y":2,"b":3},"m":4}]"#
    );
    assert_eq!(
        query_document(doc, "$.*").unwrap(),
        r#"[1,{"y":2,"b":3},4]"#
    );
}

#[test]
fn invalid_paths() {
    let e = q_err("$.store[");
    assert!(
        e.starts_with("invalid JSONPath '$.store[': at position"),
        "{e}"
    );
    let e = q_err("$.store.book[?@.price <]");
    assert!(e.starts_with("invalid JSONPath"), "{e}");
    let e = q_err("$.foo(");
    assert!(e.starts_with("invalid JSONPath"), "{e}");
    let e = q_err("store.book");
    assert!(e.contains("neither a JSON Pointer"), "{e}");
    assert!(
        e.contains("did you mean '$.store.book' or '/store/book'?"),
        "{e}"
    );
    assert!(q_err(".store").contains("did you mean '$.store'?"));
    assert!(q_err("#/store").contains("drop the '#': '/store'"));
    assert!(q_err(" ").contains("use '' for the whole document"));
}

#[test]
fn hostile_paths_are_refused_not_crashed() {
    let deep = format!("$[?{}@{}]", "(".repeat(1000), ")".repeat(1000));
    let e = q_err(&deep);
    assert!(
        e.contains("nests brackets and parentheses too deeply"),
        "{e}"
    );
    let deep = format!("$.a{}", "[?@".repeat(100));
    assert!(q_err(&deep).contains("too deeply"));
    let long = format!("$.{}", "a".repeat(MAX_PATH_LENGTH));
    assert!(q_err(&long).starts_with("the JSONPath is too long"));
    // Brackets inside string literals do not count.
    let quoted = format!("$['{}']", "[".repeat(100));
    assert_eq!(query_document("{}", &quoted).unwrap(), "[]");
    // The deepest accepted nesting parses and runs on a small stack.
    let path = format!(
        "$[?{}@ == 1{}]",
        "(".repeat(MAX_PATH_NESTING - 1),
        ")".repeat(MAX_PATH_NESTING - 1)
    );
    let result = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || query_document("[1, 2, 1]", &path))
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(result.unwrap(), "[1,1]");
}

#[test]
fn invalid_documents_give_line_and_column() {
    let e = query_document("{\n  \"a\": 1,\n  \"b\": }", "$").unwrap_err();
    assert_eq!(e, "invalid JSON at line 3, column 8: expected value");
    let e = query_document("[1, 2", "$").unwrap_err();
    assert!(
        e.starts_with("invalid JSON at line 1, column 5: EOF while parsing a list"),
        "{e}"
    );
    let e = query_document("{} x", "$").unwrap_err();
    assert!(e.contains("trailing characters"), "{e}");
    let e = query_document("{'a': 1}", "$").unwrap_err();
    assert!(
        e.starts_with("invalid JSON at line 1, column 2: key must be a string"),
        "{e}"
    );
    assert_eq!(
        query_document("", "$").unwrap_err(),
        "invalid JSON: the document is empty"
    );
    // A bad path is reported before a bad document.
    assert!(query_document("{", "x").unwrap_err().contains("neither"));
}

#[test]
fn deep_documents_are_refused_not_crashed() {
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let e = query_document(&deep, "$").unwrap_err();
    assert!(
        e.starts_with("the document nests arrays and objects more than 128 levels deep"),
        "{e}"
    );
    let ok = format!("{}{}", "[".repeat(100), "]".repeat(100));
    let all: Value = serde_json::from_str(&query_document(&ok, "$..*").unwrap()).unwrap();
    assert_eq!(all.as_array().unwrap().len(), 99);
}

#[test]
fn huge_results_are_refused() {
    // $..* on a deep document repeats every subtree at every level above it.
    let inner = format!(
        "[{}]",
        vec!["\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\""; 5000].join(",")
    );
    let doc = format!("{}{inner}{}", "[".repeat(120), "]".repeat(120));
    let e = query_document(&doc, "$..*").unwrap_err();
    assert!(e.starts_with("the result is larger than 1 MiB"), "{e}");
}

// ---------------------------------------------------------------- format

const MESSY: &str = r#" { "name" : "Ann",  "tags":[ "a" , "b\"]" ], "empty": {}, "none": [ ],
  "n": 1.50, "big": 12345678901234567890123, "esc": "\u00e9\n", "nested": {"x": [1, {"y": null}]} } "#;

#[test]
fn minify() {
    assert_eq!(
        format_document(MESSY, Mode::Minify, None).unwrap(),
        r#"{"name":"Ann","tags":["a","b\"]"],"empty":{},"none":[],"n":1.50,"big":12345678901234567890123,"esc":"\u00e9\n","nested":{"x":[1,{"y":null}]}}"#
    );
    assert_eq!(format_document(" 42 ", Mode::Minify, None).unwrap(), "42");
    assert_eq!(
        format_document(r#""a b""#, Mode::Minify, None).unwrap(),
        r#""a b""#
    );
}

#[test]
fn pretty() {
    let expected = r#"{
  "name": "Ann",
  "tags": [
    "a",
    "b\"]"
  ],
  "empty": {},
  "none": [],
  "n": 1.50,
  "big": 12345678901234567890123,
  "esc": "\u00e9\n",
  "nested": {
    "x": [
      1,
      {
        "y": null
      }
    ]
  }
}"#;
    assert_eq!(
        format_document(MESSY, Mode::Pretty, None).unwrap(),
        expected
    );
    assert_eq!(
        format_document(MESSY, Mode::Pretty, Some(2)).unwrap(),
        expected
    );
    assert_eq!(
        format_document("[1,[2]]", Mode::Pretty, Some(4)).unwrap(),
        "[\n    1,\n    [\n        2\n    ]\n]"
    );
    assert_eq!(
        format_document("[1,{\"a\":2}]", Mode::Pretty, Some(0)).unwrap(),
        "[\n1,\n{\n\"a\": 2\n}\n]"
    );
    assert_eq!(format_document("{ }", Mode::Pretty, None).unwrap(), "{}");
    assert_eq!(format_document("true", Mode::Pretty, None).unwrap(), "true");
}

#[test]
fn pretty_matches_serde_json_on_ordinary_documents() {
    let expected = serde_json::to_string_pretty(&parse_document(STORE).unwrap()).unwrap();
    assert_eq!(
        format_document(STORE, Mode::Pretty, None).unwrap(),
        expected
    );
    let minified = format_document(STORE, Mode::Minify, None).unwrap();
    assert_eq!(minified, parse_document(STORE).unwrap().to_string());
}

#[test]
fn validate() {
    assert_eq!(
        format_document(r#"{"a":1,"b":2,"c":3}"#, Mode::Validate, None).unwrap(),
        "valid JSON (object with 3 keys)"
    );
    assert_eq!(
        format_document(r#"{"a":1}"#, Mode::Validate, None).unwrap(),
        "valid JSON (object with 1 key)"
    );
    assert_eq!(
        format_document("[1, 2]", Mode::Validate, None).unwrap(),
        "valid JSON (array with 2 items)"
    );
    assert_eq!(
        format_document("[]", Mode::Validate, None).unwrap(),
        "valid JSON (array with 0 items)"
    );
    assert_eq!(
        format_document("\"hi\"", Mode::Validate, None).unwrap(),
        "valid JSON (string)"
    );
    assert_eq!(
        format_document("-1.5e3", Mode::Validate, None).unwrap(),
        "valid JSON (number)"
    );
    assert_eq!(
        format_document("false", Mode::Validate, None).unwrap(),
        "valid JSON (boolean false)"
    );
    assert_eq!(
        format_document(" null ", Mode::Validate, None).unwrap(),
        "valid JSON (null)"
    );
}

#[test]
fn invalid_documents_in_every_mode() {
    for mode in [Mode::Pretty, Mode::Minify, Mode::Validate] {
        let e = format_document("{\"a\": [1, 2,]}", mode, None).unwrap_err();
        assert_eq!(
            e, "invalid JSON at line 1, column 13: trailing comma",
            "{mode:?}"
        );
        let e = format_document("[1] [2]", mode, None).unwrap_err();
        assert!(e.contains("trailing characters"), "{e}");
        let e = format_document("\"unterminated", mode, None).unwrap_err();
        assert!(e.contains("EOF while parsing a string"), "{e}");
        let e = format_document("", mode, None).unwrap_err();
        assert_eq!(e, "invalid JSON: the document is empty");
        let e = format_document("NaN", mode, None).unwrap_err();
        assert!(e.starts_with("invalid JSON at line 1, column 1"), "{e}");
        let e = format_document("\"bad \\x escape\"", mode, None).unwrap_err();
        assert!(e.contains("invalid escape"), "{e}");
        let deep = "[".repeat(200) + &"]".repeat(199);
        let e = format_document(&deep, mode, None).unwrap_err();
        assert!(
            e.starts_with("invalid JSON at line 1, column 399: EOF while parsing a list"),
            "{e}"
        );
    }
}

#[test]
fn deep_documents_can_be_formatted_and_validated() {
    // Validation and reformatting work without recursion: any depth is fine.
    let deep = "[".repeat(10_000) + &"]".repeat(10_000);
    assert_eq!(format_document(&deep, Mode::Minify, None).unwrap(), deep);
    let pretty = format_document(&deep, Mode::Pretty, Some(0)).unwrap();
    assert_eq!(pretty.lines().count(), 19_999);
    assert_eq!(
        format_document(&deep, Mode::Validate, None).unwrap(),
        "valid JSON (array nested more than 128 levels deep)"
    );
    let deep_object = "{\"a\":".repeat(500) + "1" + &"}".repeat(500);
    assert_eq!(
        format_document(&deep_object, Mode::Validate, None).unwrap(),
        "valid JSON (object nested more than 128 levels deep)"
    );
}

#[test]
fn indent_is_checked_and_output_bounded() {
    assert_eq!(
        format_document("[]", Mode::Pretty, Some(9)).unwrap_err(),
        "indent must be from 0 to 8, got 9"
    );
    // Deep nesting with many items multiplies the size when indented.
    let items = vec!["1"; 200_000].join(",");
    let doc = format!("{}{items}{}", "[".repeat(100), "]".repeat(100));
    let e = format_document(&doc, Mode::Pretty, Some(8)).unwrap_err();
    assert!(
        e.starts_with("the result would be larger than 1 MiB"),
        "{e}"
    );
    assert!(format_document(&doc, Mode::Minify, None).is_ok());
}

// ---------------------------------------------------------------- tools

#[test]
fn tools_through_the_toolbox() {
    let t = toolbox();
    let args = json!({"document": STORE, "path": "$.store.book[?@.price < 9].title"});
    assert_eq!(
        t.call("query", &args.to_string()),
        Ok(r#"["Sayings of the Century","Moby Dick"]"#.into())
    );
    let args = json!({"document": "{\"a\":[1,2]}", "path": "/a/1"});
    assert_eq!(t.call("query", &args.to_string()), Ok("2".into()));
    let args = json!({"document": "{\"a\":[1,2]}", "mode": "pretty", "indent": 1});
    assert_eq!(
        t.call("format", &args.to_string()),
        Ok("{\n \"a\": [\n  1,\n  2\n ]\n}".into())
    );
    let args = json!({"document": "[]", "mode": "validate"});
    assert_eq!(
        t.call("format", &args.to_string()),
        Ok("valid JSON (array with 0 items)".into())
    );
    let e = t
        .call("format", r#"{"document": "[]", "mode": "ugly"}"#)
        .unwrap_err();
    assert!(
        e.contains("unknown variant `ugly`, expected one of `pretty`, `minify`, `validate`"),
        "{e}"
    );
    let e = t
        .call(
            "format",
            r#"{"document": "[]", "mode": "pretty", "indent": -1}"#,
        )
        .unwrap_err();
    assert!(e.starts_with("invalid arguments: field 'indent'"), "{e}");

    let info: Value = serde_json::from_str(&t.tool_info()).unwrap();
    assert_eq!(info[0]["function"]["name"], "query");
    assert_eq!(info[1]["function"]["name"], "format");
    let format_params = &info[1]["function"]["parameters"];
    assert_eq!(
        format_params["properties"]["mode"]["enum"],
        json!(["pretty", "minify", "validate"])
    );
    assert_eq!(format_params["properties"]["indent"]["maximum"], 8);
    assert_eq!(format_params["required"], json!(["document", "mode"]));
    assert!(
        info[0]["function"]["description"]
            .as_str()
            .unwrap()
            .contains("JSON Pointer")
    );
}
