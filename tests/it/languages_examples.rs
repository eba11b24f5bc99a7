//! The example tools written in Python, JavaScript and C: built from source
//! with their pinned toolchains (`cargo xtask build-examples`), loaded
//! through the manager and called like a model would.
//!
//! The toolchains are installed into `.toolchains/` on first use; what the
//! machine must have (Python 3.9+, Node.js 18+) is said by the failure
//! message when it is missing.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{Value, json};
use toolhost::config::LoadedConfig;
use toolhost::{Limits, ToolManager, WasmModule};
use xtask::{Language, Repo, build_example};

use crate::common::{caching_runtime, call};

/// Builds `language`'s example once per test run; its component's path.
/// Other tests wanting the same language wait for that build; different
/// languages build in parallel.
fn built(language: Language) -> PathBuf {
    static BUILT: [OnceLock<Result<PathBuf, String>>; 3] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let slot = Language::ALL
        .iter()
        .position(|l| *l == language)
        .expect("listed");
    let result = BUILT[slot].get_or_init(|| {
        build_example(&Repo::at(env!("CARGO_MANIFEST_DIR")), language).map_err(|e| format!("{e:#}"))
    });
    result.clone().unwrap_or_else(|e| {
        panic!(
            "building the {language} example failed: {e}\n\
             (`cargo xtask build-examples {}` builds it by hand; see guest-sdk/{}/README.md)",
            language.dir_name(),
            language.dir_name()
        )
    })
}

/// A manager with `language`'s example module, loaded with default limits.
fn manager(language: Language) -> ToolManager {
    let path = built(language);
    let module = WasmModule::from_file(caching_runtime(), &path, None, Limits::default())
        .unwrap_or_else(|e| panic!("{} loads: {e}", path.display()));
    let mut manager = ToolManager::new();
    manager.register(module).expect("registers");
    manager
}

fn parameters_of(manager: &ToolManager, name: &str) -> Value {
    let info = manager
        .tool_infos()
        .into_iter()
        .find(|i| i["function"]["name"] == name)
        .unwrap_or_else(|| panic!("{name} is listed"));
    info["function"]["parameters"].clone()
}

fn number(text: &str) -> f64 {
    text.parse()
        .unwrap_or_else(|_| panic!("{text:?} is a number"))
}

#[test]
fn python_stats_module() {
    let m = manager(Language::Python);
    assert_eq!(
        m.names(),
        [
            "stats_mean",
            "stats_median",
            "stats_stdev",
            "stats_percentiles",
            "stats_summary"
        ]
    );
    let data = json!([2, 4, 4, 4, 5, 5, 7, 9]);
    assert_eq!(
        number(&call(&m, "stats_mean", json!({"numbers": data}))),
        5.0
    );
    assert_eq!(
        number(&call(&m, "stats_median", json!({"numbers": [3, 1, 2]}))),
        2.0
    );
    assert_eq!(
        number(&call(&m, "stats_median", json!({"numbers": data}))),
        4.5
    );
    let population = call(
        &m,
        "stats_stdev",
        json!({"numbers": data, "kind": "population"}),
    );
    assert_eq!(number(&population), 2.0);
    let sample = number(&call(&m, "stats_stdev", json!({"numbers": data})));
    assert!((sample - 2.138_089_935_299_395).abs() < 1e-12, "{sample}");
    let p: Value = serde_json::from_str(&call(
        &m,
        "stats_percentiles",
        json!({"numbers": [1, 2, 3, 4], "percents": [0, 25, 50, 100]}),
    ))
    .expect("JSON");
    assert_eq!(p, json!({"0": 1.0, "25": 1.75, "50": 2.5, "100": 4.0}));
    let s: Value =
        serde_json::from_str(&call(&m, "stats_summary", json!({"numbers": [1.5]}))).expect("JSON");
    assert_eq!(s["count"], 1);
    assert_eq!(s["stdev"], 0.0);

    // Failing calls come back as error strings, each naming what was wrong.
    assert_eq!(
        call(&m, "stats_mean", json!({"numbers": []})),
        "Error: tool 'stats_mean' failed: need at least 1 number, got 0"
    );
    assert_eq!(
        call(&m, "stats_stdev", json!({"numbers": [1]})),
        "Error: tool 'stats_stdev' failed: need at least 2 numbers, got 1"
    );
    assert_eq!(
        call(&m, "stats_mean", json!({"numbers": [1, "two"]})),
        "Error: tool 'stats_mean' failed: invalid arguments: field 'numbers[1]': expected a number, got string \"two\""
    );
    assert_eq!(
        call(&m, "stats_mean", json!({})),
        "Error: tool 'stats_mean' failed: invalid arguments: missing field 'numbers'"
    );
    assert_eq!(
        call(&m, "stats_mean", json!({"numbers": [1], "extra": true})),
        "Error: tool 'stats_mean' failed: invalid arguments: unknown field 'extra' (expected: numbers)"
    );
    assert_eq!(
        call(
            &m,
            "stats_stdev",
            json!({"numbers": [1, 2], "kind": "both"})
        ),
        "Error: tool 'stats_stdev' failed: invalid arguments: field 'kind': expected one of \"sample\", \"population\", got string \"both\""
    );
    assert_eq!(
        call(
            &m,
            "stats_percentiles",
            json!({"numbers": [1], "percents": [101]})
        ),
        "Error: tool 'stats_percentiles' failed: percent 101 is out of range: give percents from 0 to 100"
    );

    // The schema comes from the type hints and docstrings.
    assert_eq!(
        parameters_of(&m, "stats_stdev"),
        json!({
            "type": "object",
            "properties": {
                "numbers": {"type": "array", "items": {"type": "number"},
                            "description": "The numbers (at least two for a sample)."},
                "kind": {"enum": ["sample", "population"],
                         "description": "'sample' (n - 1 in the denominator) or 'population' (n).",
                         "default": "sample"}
            },
            "required": ["numbers"],
            "additionalProperties": false
        })
    );
}

#[test]
fn javascript_url_module() {
    let m = manager(Language::JavaScript);
    assert_eq!(
        m.names(),
        [
            "url_parse",
            "url_resolve",
            "url_set_params",
            "url_encode",
            "url_decode"
        ]
    );
    let parsed: Value = serde_json::from_str(&call(
        &m,
        "url_parse",
        json!({"url": "HTTPS://Example.COM:8443/a/../b?x=1&x=2&y=%20z#top"}),
    ))
    .expect("JSON");
    assert_eq!(
        parsed["href"],
        "https://example.com:8443/b?x=1&x=2&y=%20z#top"
    );
    assert_eq!(parsed["hostname"], "example.com");
    assert_eq!(parsed["port"], 8443);
    assert_eq!(parsed["pathname"], "/b");
    assert_eq!(parsed["params"], json!({"x": ["1", "2"], "y": [" z"]}));
    assert_eq!(parsed["fragment"], "top");
    assert_eq!(
        call(
            &m,
            "url_resolve",
            json!({"base": "https://a.example/x/y/z", "reference": "../img/a.png"})
        ),
        "https://a.example/x/img/a.png"
    );
    assert_eq!(
        call(
            &m,
            "url_set_params",
            json!({"url": "https://a.example/?q=1&r=2", "params": {"q": "two words", "r": null, "n": 3}})
        ),
        "https://a.example/?q=two+words&n=3"
    );
    assert_eq!(
        call(&m, "url_encode", json!({"text": "a b&c/é"})),
        "a%20b%26c%2F%C3%A9"
    );
    assert_eq!(
        call(&m, "url_decode", json!({"text": "a%20b%26c%2F%C3%A9"})),
        "a b&c/é"
    );

    assert_eq!(
        call(&m, "url_parse", json!({"url": "not a url"})),
        "Error: tool 'url_parse' failed: 'not a url' is not a valid URL: give an absolute URL such as https://example.com/path"
    );
    assert_eq!(
        call(&m, "url_decode", json!({"text": "%E0%A4%A"})),
        "Error: tool 'url_decode' failed: '%E0%A4%A' is not valid percent-encoding (each % must start %XX of valid UTF-8)"
    );
    assert_eq!(
        call(&m, "url_parse", json!({"url": 7})),
        "Error: tool 'url_parse' failed: invalid arguments: field 'url': expected a string, got number 7"
    );
    assert_eq!(
        call(&m, "url_resolve", json!({"base": "https://a.example/"})),
        "Error: tool 'url_resolve' failed: invalid arguments: missing field 'reference'"
    );
    assert_eq!(
        call(
            &m,
            "url_set_params",
            json!({"url": "https://a.example/", "params": {"a": [1]}})
        ),
        "Error: tool 'url_set_params' failed: invalid arguments: field 'params.a': expected a string or a number or a boolean or null, got an array"
    );
    assert_eq!(
        parameters_of(&m, "url_parse"),
        json!({"type": "object", "properties": {"url": {"type": "string", "description": "An absolute URL."}},
               "required": ["url"], "additionalProperties": false})
    );
}

#[test]
fn c_hash_module() {
    let m = manager(Language::C);
    assert_eq!(m.names(), ["hash_crc32", "hash_fnv1a", "hash_sha256"]);
    let sha = |text: &str| call(&m, "hash_sha256", json!({ "text": text }));
    assert_eq!(
        sha(""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(
        sha("abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    );
    // The UTF-8 bytes of the text: "é" is c3 a9.
    assert_eq!(
        sha("é"),
        "4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c"
    );
    assert_eq!(
        call(&m, "hash_crc32", json!({"text": "123456789"})),
        "cbf43926"
    );
    assert_eq!(
        call(&m, "hash_fnv1a", json!({"text": ""})),
        "cbf29ce484222325"
    );
    assert_eq!(
        call(&m, "hash_fnv1a", json!({"text": "a"})),
        "af63dc4c8601ec8c"
    );
    assert_eq!(
        call(&m, "hash_fnv1a", json!({"text": "a", "bits": 32})),
        "e40c292c"
    );

    // 550,000 bytes of text with escapes, NULs and non-ASCII characters
    // (950,000 bytes of JSON arguments, under the 1 MiB limit).
    let big: String = "a\u{0}é😀\"\\\n".repeat(50_000);
    assert_eq!(big.len(), 550_000);
    assert_eq!(sha(&big), sha256_hex(big.as_bytes()));

    assert_eq!(
        call(&m, "hash_sha256", json!({"text": 5})),
        "Error: tool 'hash_sha256' failed: invalid arguments: field 'text': expected a string, got 5"
    );
    assert_eq!(
        call(&m, "hash_crc32", json!({})),
        "Error: tool 'hash_crc32' failed: invalid arguments: missing field 'text'"
    );
    assert_eq!(
        call(&m, "hash_crc32", json!({"text": "a", "txt": "b"})),
        "Error: tool 'hash_crc32' failed: invalid arguments: unknown field 'txt' (expected: text)"
    );
    assert_eq!(
        call(&m, "hash_fnv1a", json!({"text": "a", "bits": 16})),
        "Error: tool 'hash_fnv1a' failed: invalid arguments: field 'bits': expected 32 or 64, got 16"
    );
    assert_eq!(
        call(&m, "hash_fnv1a", json!({"text": "a", "bits": 32.5})),
        "Error: tool 'hash_fnv1a' failed: invalid arguments: field 'bits': expected an integer, got 32.5"
    );
    assert_eq!(
        parameters_of(&m, "hash_sha256")["required"],
        json!(["text"])
    );
}

/// SHA-256 by the host's own crate, to check the C module against.
fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Runs `language`'s SDK tests natively; their report.
fn sdk_tests(language: Language) -> String {
    xtask::test_sdk(&Repo::at(env!("CARGO_MANIFEST_DIR")), language)
        .unwrap_or_else(|e| panic!("{e:#}"))
}

#[test]
fn python_sdk_passes_its_own_tests() {
    let report = sdk_tests(Language::Python);
    assert!(report.contains("\nOK"), "{report}");
    let ran: u32 = report
        .lines()
        .find_map(|l| l.strip_prefix("Ran ")?.split(' ').next()?.parse().ok())
        .unwrap_or(0);
    assert!(ran >= 6, "{report}");
}

#[test]
fn javascript_sdk_passes_its_own_tests() {
    let report = sdk_tests(Language::JavaScript);
    assert!(report.contains("# fail 0"), "{report}");
    assert!(!report.contains("# pass 0"), "{report}");
}

#[test]
fn c_sdk_passes_its_own_tests() {
    let report = sdk_tests(Language::C);
    let last = report.lines().last().unwrap_or_default();
    assert!(last.ends_with(" passed, 0 failed"), "{report}");
    let passed: u32 = last
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(passed > 500, "{last}");
}

#[test]
fn one_config_loads_the_examples_of_every_language() {
    for language in Language::ALL {
        built(language);
    }
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("example-tools/toolhost.toml");
    let loaded = LoadedConfig::discover(Some(&config)).expect("config reads");
    let m = loaded
        .build_manager(caching_runtime())
        .expect("every module loads");
    for name in [
        "calc_evaluate",
        "text_word_count",
        "json_query",
        "stats_mean",
        "url_parse",
        "hash_sha256",
    ] {
        assert!(
            m.names().iter().any(|n| n == name),
            "{name} in {:?}",
            m.names()
        );
    }
    assert_eq!(
        call(&m, "calc_evaluate", json!({"expression": "6 * 7"})),
        "42"
    );
    assert_eq!(
        call(&m, "stats_median", json!({"numbers": [3, 1, 2]})),
        "2.0"
    );
    assert_eq!(
        call(&m, "hash_crc32", json!({"text": "123456789"})),
        "cbf43926"
    );
}

#[test]
fn the_language_runtime_is_recognised() {
    let runtime_of = |language| {
        let bytes = std::fs::read(built(language)).expect("built");
        toolhost::Producers::of(&bytes).runtime()
    };
    let python = runtime_of(Language::Python).expect("recognised");
    assert!(
        python.starts_with("Python 3.")
            && python.ends_with(" (CPython, packed by componentize-py)"),
        "{python}"
    );
    assert_eq!(
        runtime_of(Language::JavaScript).as_deref(),
        Some("JavaScript (SpiderMonkey/StarlingMonkey, packed by ComponentizeJS 0.23.0)")
    );
    // zig strips the producers section: nothing to tell.
    assert_eq!(runtime_of(Language::C), None);
}
