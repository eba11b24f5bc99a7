//! Components written for other hosts: every exported function is a tool
//! typed from its WIT (tests/guests/guest-plain), its arguments checked
//! before the instance runs, its results given back as text.

use std::sync::OnceLock;

use serde_json::{Value, json};
use toolhost::{Arguments, Grants, Limits, LoadErrorKind, Tool, ToolManager, WasmModule};
use toolhost_testkit::components::with_custom_section;

use crate::common::{guest, load_guest, runtime};

/// guest-plain as module `plain`, with nothing granted.
fn plain() -> WasmModule {
    static MODULE: OnceLock<WasmModule> = OnceLock::new();
    MODULE
        .get_or_init(|| load_guest("guest-plain", "plain", Limits::default()).expect("loads"))
        .clone()
}

fn call(module: &WasmModule, tool: &str, arguments: Value) -> String {
    let arguments = Arguments::from_json(&arguments.to_string()).expect("an object");
    match module.call(tool, &arguments) {
        Ok(text) => text,
        Err(e) => e.to_string(),
    }
}

fn info(module: &WasmModule, tool: &str) -> toolhost::ToolInfo {
    module
        .infos()
        .into_iter()
        .find(|i| i.name == tool)
        .unwrap_or_else(|| panic!("no tool {tool}"))
}

#[test]
fn every_exported_function_is_a_tool_named_by_the_rule() {
    let module = plain();
    let mut names: Vec<String> = module.infos().into_iter().map(|i| i.name).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "plain_big",
            "plain_classify",
            "plain_compound",
            "plain_config-get",
            "plain_config-keys",
            "plain_counter_zero",
            "plain_echo",
            "plain_fails-typed",
            "plain_fallible",
            "plain_next-color",
            "plain_nothing",
            "plain_read-file",
            "plain_scalars",
            "plain_spin",
            "plain_text_echo",
            "plain_text_reverse",
        ]
    );
    assert!(module.typed_exports());
    assert_eq!(module.local_name("plain_text_echo"), Some("text_echo"));
    // The world's `echo` and the interface's `echo` are two tools.
    assert_eq!(call(&module, "plain_echo", json!({"text": "hi"})), "hi");
    assert_eq!(
        call(&module, "plain_text_echo", json!({"s": "hi"})),
        "text:hi"
    );
    assert_eq!(
        call(&module, "plain_text_reverse", json!({"s": "abé"})),
        "éba"
    );
    assert_eq!(call(&module, "plain_counter_zero", json!({})), "0");
}

#[test]
fn functions_with_resources_are_left_out_and_named() {
    let left: Vec<(String, String)> = plain()
        .left_out()
        .iter()
        .map(|l| (l.function.clone(), l.reason.clone()))
        .collect();
    assert_eq!(
        left,
        [
            (
                "test:plain/counter@0.1.0#[constructor]tally".to_string(),
                "it is a resource's constructor or method".to_string()
            ),
            (
                "test:plain/counter@0.1.0#[method]tally.get".to_string(),
                "it is a resource's constructor or method".to_string()
            ),
            (
                "test:plain/counter@0.1.0#read".to_string(),
                "it uses a resource (`borrow<...>`)".to_string()
            ),
        ]
    );
}

#[test]
fn scalar_schemas_carry_each_types_range() {
    let params = info(&plain(), "plain_scalars").parameters;
    let range = |p: &str| {
        (
            params["properties"][p]["minimum"].clone(),
            params["properties"][p]["maximum"].clone(),
        )
    };
    assert_eq!(range("i8v"), (json!(-128), json!(127)));
    assert_eq!(range("u16v"), (json!(0), json!(65535)));
    assert_eq!(range("i64v"), (json!(i64::MIN), json!(i64::MAX)));
    assert_eq!(range("u64v"), (json!(0), json!(u64::MAX)));
    assert_eq!(params["properties"]["b"], json!({"type": "boolean"}));
    assert_eq!(
        params["properties"]["c"],
        json!({"type": "string", "minLength": 1, "maxLength": 1})
    );
    assert_eq!(params["required"].as_array().unwrap().len(), 13);
    assert_eq!(params["additionalProperties"], json!(false));
    assert!(!params.to_string().contains("$ref"));
}

#[test]
fn compound_schemas_are_written_out() {
    let params = info(&plain(), "plain_compound").parameters;
    let c = &params["properties"]["c"];
    assert_eq!(c["type"], "object");
    let fields = &c["properties"];
    // A record: an object whose fields are required unless optional.
    assert_eq!(fields["sh"]["required"], json!(["name", "points"]));
    assert_eq!(
        fields["sh"]["properties"]["label"],
        json!({"anyOf": [{"type": "string"}, {"type": "null"}]})
    );
    assert_eq!(
        fields["col"],
        json!({"type": "string", "enum": ["red", "green", "dark-blue"]})
    );
    assert_eq!(
        fields["f"],
        json!({"type": "array", "items": {"type": "string", "enum": ["read", "write", "exec"]}, "uniqueItems": true})
    );
    assert_eq!(fields["t"]["prefixItems"].as_array().unwrap().len(), 3);
    assert_eq!(fields["t"]["maxItems"], json!(3));
    assert_eq!(fields["t"]["minItems"], json!(3));
    let cases: Vec<&str> = fields["v"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["properties"]["tag"]["const"].as_str().unwrap())
        .collect();
    assert_eq!(cases, ["nothing", "int", "text", "at", "many"]);
    assert_eq!(fields["v"]["oneOf"][0]["required"], json!(["tag"]));
    assert_eq!(fields["v"]["oneOf"][1]["required"], json!(["tag", "value"]));
    assert_eq!(
        fields["bytes"],
        json!({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 255}})
    );
    // A record result is an object: it has an output schema for MCP.
    let compound = info(&plain(), "plain_compound");
    assert_eq!(compound.output_schema().unwrap()["type"], "object");
    assert!(info(&plain(), "plain_echo").output_schema().is_none());
    assert!(!params.to_string().contains("$ref"));
}

fn scalars() -> Value {
    json!({
        "b": true, "i8v": -128, "u8v": 255, "i16v": -32768, "u16v": 65535,
        "i32v": i32::MIN, "u32v": u32::MAX, "i64v": i64::MIN, "u64v": u64::MAX,
        "f32v": 0.1, "f64v": -2.5e300, "c": "é", "s": "tab\there",
    })
}

#[test]
fn scalars_round_trip_exactly() {
    let module = plain();
    let answer: Value = serde_json::from_str(&call(&module, "plain_scalars", scalars())).unwrap();
    assert_eq!(answer, scalars());
    // 64-bit integers beyond 2^53 keep every digit.
    let text = call(&module, "plain_scalars", scalars());
    assert!(text.contains("\"u64v\":18446744073709551615"), "{text}");
    assert!(text.contains("\"i64v\":-9223372036854775808"), "{text}");
    // NaN and the infinities, as JSON says them.
    let mut special = scalars();
    special["f32v"] = json!("Infinity");
    special["f64v"] = json!("NaN");
    let answer: Value = serde_json::from_str(&call(&module, "plain_scalars", special)).unwrap();
    assert_eq!(answer["f32v"], "Infinity");
    assert_eq!(answer["f64v"], "NaN");
    assert_eq!(
        call(&module, "plain_classify", json!({"x": "-Infinity"})),
        "-inf"
    );
    assert_eq!(call(&module, "plain_classify", json!({"x": 3})), "finite 3");
    // An integral float is an integer when a double holds it exactly.
    let mut integral = scalars();
    integral["i32v"] = json!(7.0);
    let answer: Value = serde_json::from_str(&call(&module, "plain_scalars", integral)).unwrap();
    assert_eq!(answer["i32v"], 7);
}

fn compound() -> Value {
    json!({
        "p": {"x": -1, "y": 2},
        "sh": {"name": "tri", "points": [{"x": 0, "y": 0}, {"x": 3, "y": 4}], "label": "a"},
        "col": "dark-blue",
        "f": ["read", "exec"],
        "v": {"tag": "many", "value": [{"tag": "flag", "value": true}, {"tag": "num", "value": "NaN"}]},
        "o": u64::MAX,
        "oo": {"some": "inner"},
        "t": [255, "two", false],
        "bytes": [0, 1, 254, 255],
        "r": {"tag": "err", "value": "bad"},
        "nested": [[{"name": "n", "points": [], "label": null}], []],
    })
}

#[test]
fn compound_values_round_trip_at_every_depth() {
    let module = plain();
    let round = |c: Value| -> Value {
        let text = call(&module, "plain_compound", json!({"c": c}));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
    };
    assert_eq!(round(compound()), compound());
    // Every variant case, with and without a value; options absent, null,
    // and some(none).
    for (v, oo) in [
        (json!({"tag": "nothing"}), json!(null)),
        (
            json!({"tag": "int", "value": i64::MIN}),
            json!({"some": null}),
        ),
        (json!({"tag": "text", "value": ""}), json!({"some": "x"})),
        (json!({"tag": "at", "value": {"x": 1, "y": 1}}), json!(null)),
    ] {
        let mut c = compound();
        c["v"] = v.clone();
        c["oo"] = oo.clone();
        c["r"] = json!({"tag": "ok", "value": 9});
        let back = round(c);
        assert_eq!((back["v"].clone(), back["oo"].clone()), (v, oo));
        assert_eq!(back["r"], json!({"tag": "ok", "value": 9}));
    }
    // Flags come back in their declared order.
    let mut flags = compound();
    flags["f"] = json!(["exec", "write", "read"]);
    assert_eq!(round(flags)["f"], json!(["read", "write", "exec"]));
    let mut absent = compound();
    absent.as_object_mut().unwrap().remove("o");
    absent["sh"].as_object_mut().unwrap().remove("label");
    let back = round(absent);
    assert_eq!(back["o"], Value::Null);
    assert_eq!(back["sh"]["label"], Value::Null);
}

/// Each wrong shape, and the error naming the field, what it must be and
/// what was given.
#[test]
fn wrong_arguments_are_refused_before_the_instance_runs() {
    let module = plain();
    let with = |path: &[&str], value: Value| -> String {
        let mut c = compound();
        let mut at = &mut c;
        for key in &path[..path.len() - 1] {
            at = &mut at[*key];
        }
        at[path[path.len() - 1]] = value;
        call(&module, "plain_compound", json!({"c": c}))
    };
    let cases: Vec<(String, &str)> = vec![
        (
            with(&["p", "x"], json!("1")),
            "field 'c.p.x': expected an integer from -2147483648 to 2147483647 (s32), got string \"1\"",
        ),
        (
            with(&["p", "x"], json!(2147483648u64)),
            "field 'c.p.x': expected an integer from -2147483648 to 2147483647 (s32), got integer 2147483648",
        ),
        (
            with(&["p", "x"], json!(1.5)),
            "field 'c.p.x': expected an integer from -2147483648 to 2147483647 (s32), got number 1.5",
        ),
        (
            with(&["o"], json!(-1)),
            "field 'c.o': expected an integer from 0 to 18446744073709551615 (u64), got integer -1",
        ),
        (
            with(&["o"], json!(18446744073709551616.0)),
            "field 'c.o': expected an integer from 0 to 18446744073709551615 (u64), got number 1.8446744073709552e+19",
        ),
        (
            with(&["sh", "name"], json!(5)),
            "field 'c.sh.name': expected a string, got integer 5",
        ),
        (
            with(&["sh", "points"], json!({})),
            "field 'c.sh.points': expected an array, got object {}",
        ),
        (
            with(&["sh", "points"], json!([{"x": 1}])),
            "field 'c.sh.points[0].y' is missing: expected an integer from -2147483648 to 2147483647 (s32)",
        ),
        (
            with(&["sh", "extra"], json!(1)),
            "field 'c.sh': 'extra' is not one of its fields (name, points, label)",
        ),
        (
            with(&["col"], json!("blue")),
            "field 'c.col': expected one of the strings red, green, dark-blue, got string \"blue\"",
        ),
        (
            with(&["f"], json!(["read", "read"])),
            "field 'c.f': expected an array of distinct strings from read, write, exec, got an array of 2 items",
        ),
        (
            with(&["f"], json!(["all"])),
            "field 'c.f': expected an array of distinct strings from read, write, exec, got an array of 1 items",
        ),
        (
            with(&["v"], json!({"tag": "float"})),
            "field 'c.v': expected an object {\"tag\": ...} with tag one of nothing, int, text, at, many, got object {\"tag\":\"float\"}",
        ),
        (
            with(&["v"], json!({"tag": "int"})),
            "field 'c.v.value' is missing: case 'int' carries an integer from -9223372036854775808 to 9223372036854775807 (s64)",
        ),
        (
            with(&["v"], json!({"tag": "nothing", "value": 1})),
            "field 'c.v': case 'nothing' carries no value",
        ),
        (
            with(&["v"], json!({"tag": "nothing", "other": 1})),
            "field 'c.v': 'other' is not a key of a tagged value (tag, value)",
        ),
        (
            with(
                &["v"],
                json!({"tag": "many", "value": [{"tag": "num", "value": "nan"}]}),
            ),
            "field 'c.v.value[0].value': expected a number (or \"NaN\", \"Infinity\", \"-Infinity\"), got string \"nan\"",
        ),
        (
            with(&["oo"], json!("x")),
            "field 'c.oo': expected null or null or a string, got string \"x\"",
        ),
        (
            with(&["t"], json!([1, "a"])),
            "field 'c.t': expected an array of 3 items, got an array of 2 items",
        ),
        (
            with(&["t"], json!([256, "a", true])),
            "field 'c.t[0]': expected an integer from 0 to 255 (u8), got integer 256",
        ),
        (
            with(&["bytes"], json!([0, -1])),
            "field 'c.bytes[1]': expected an integer from 0 to 255 (u8), got integer -1",
        ),
        (
            with(&["r"], json!({"tag": "maybe"})),
            "field 'c.r': expected an object {\"tag\": \"ok\" or \"err\", \"value\": ...}, got object {\"tag\":\"maybe\"}",
        ),
        (
            with(&["nested"], json!([[{"name": "n"}]])),
            "field 'c.nested[0][0].points' is missing: expected an array",
        ),
        (
            call(&module, "plain_compound", json!({})),
            "field 'c' is missing: expected an object with fields p, sh, col, f, v, o, oo, t, bytes, r, nested",
        ),
        (
            call(&module, "plain_echo", json!({"text": "a", "more": 1})),
            "'more' is not a parameter of this tool (its parameters: text)",
        ),
        (
            call(&module, "plain_nothing", json!({"x": 1})),
            "'x' is not a parameter of this tool (it takes none)",
        ),
        (
            call(&module, "plain_scalars", {
                let mut s = scalars();
                s["c"] = json!("ab");
                s
            }),
            "field 'c': expected a string of one character, got string \"ab\"",
        ),
        (
            call(&module, "plain_scalars", {
                let mut s = scalars();
                s["b"] = json!(1);
                s
            }),
            "field 'b': expected a boolean, got integer 1",
        ),
        (
            call(&module, "plain_scalars", {
                let mut s = scalars();
                s["f32v"] = json!(1e39);
                s
            }),
            "field 'f32v': 1e+39 is out of range for a 32-bit float (f32)",
        ),
        (
            call(&module, "plain_scalars", {
                let mut s = scalars();
                s["i64v"] = json!(9007199254740994.0);
                s
            }),
            "field 'i64v': expected an integer from -9223372036854775808 to 9223372036854775807 (s64), got number 9007199254740994.0 (a number with a fraction or exponent this large is not exact: write the integer's digits)",
        ),
        (
            // 9007199254740993.0 reads as this double: it cannot be taken
            // as either integer.
            call(&module, "plain_scalars", {
                let mut s = scalars();
                s["u64v"] = serde_json::from_str("9007199254740993.0").unwrap();
                s
            }),
            "field 'u64v': expected an integer from 0 to 18446744073709551615 (u64), got number 9007199254740992.0 (a number with a fraction or exponent this large is not exact: write the integer's digits)",
        ),
    ];
    for (got, want) in cases {
        let tool = if got.contains("plain_compound") {
            "plain_compound"
        } else if got.contains("plain_echo") {
            "plain_echo"
        } else if got.contains("plain_nothing") {
            "plain_nothing"
        } else {
            "plain_scalars"
        };
        assert_eq!(
            got,
            format!("Error: tool '{tool}' was given invalid arguments: {want}")
        );
    }
}

#[test]
fn results_become_text() {
    let module = plain();
    assert_eq!(
        call(
            &module,
            "plain_fallible",
            json!({"ok": true, "text": "fine"})
        ),
        "fine"
    );
    assert_eq!(
        call(
            &module,
            "plain_fallible",
            json!({"ok": false, "text": "broke"})
        ),
        "Error: tool 'plain_fallible' failed: broke"
    );
    assert_eq!(
        call(&module, "plain_fails-typed", json!({})),
        "Error: tool 'plain_fails-typed' failed: {\"x\":1,\"y\":-2}"
    );
    assert_eq!(call(&module, "plain_nothing", json!({})), "");
    assert_eq!(
        call(&module, "plain_next-color", json!({"c": "dark-blue"})),
        "\"red\""
    );
    assert_eq!(call(&module, "plain_config-keys", json!({})), "[]");
    assert_eq!(
        call(&module, "plain_config-get", json!({"key": "a"})),
        "null"
    );
    // A `result<list<u8>, string>`'s ok: the bytes as a JSON array.
    assert!(
        call(
            &module,
            "plain_read-file",
            json!({"path": "/nope", "limit": 3})
        )
        .starts_with("Error: tool 'plain_read-file' failed: cannot read /nope")
    );
}

#[test]
fn limits_hold_for_typed_calls() {
    let limits = Limits {
        fuel: 50_000_000,
        memory_mib: 16,
        max_output_bytes: 1000,
        ..Limits::default()
    };
    let module = load_guest("guest-plain", "tight", limits).unwrap();
    assert_eq!(
        call(&module, "tight_spin", json!({})),
        "Error: tool 'tight_spin' ran out of fuel (limit 50000000)."
    );
    assert_eq!(
        call(&module, "tight_big", json!({"mib": 32})),
        "Error: tool 'tight_big' exceeded its memory limit of 16 MiB."
    );
    let long = "x".repeat(2000);
    assert_eq!(
        call(&module, "tight_echo", json!({"text": long})),
        "Error: tool 'tight_echo' returned 2000 bytes, more than its output limit of 1000 bytes."
    );
    // The host's copy of a result counts against the memory limit, each
    // list element at the size of a host value (a megabyte of bytes is
    // more than 16 MiB of values).
    assert_eq!(
        call(&module, "tight_big", json!({"mib": 1})),
        "Error: tool 'tight_big' passed the host more than 16777216 bytes at once (its memory limit)."
    );
    // The module goes on serving.
    assert_eq!(call(&module, "tight_echo", json!({"text": "ok"})), "ok");
}

#[test]
fn wasi_config_answers_from_the_grants_only() {
    // SAFETY: set only here, before the grants read it.
    unsafe { std::env::set_var("TOOLHOST_TEST_CONFIG_DB", "postgres://db") };
    let grants = Grants {
        config: [("region".to_string(), "eu".to_string())].into(),
        config_inherit: vec!["TOOLHOST_TEST_CONFIG_DB".into()],
        ..Grants::default()
    };
    let access = grants.resolve(std::path::Path::new(".")).unwrap();
    let module = plain().with_access(access);
    assert_eq!(
        call(&module, "plain_config-get", json!({"key": "region"})),
        "\"eu\""
    );
    assert_eq!(
        call(
            &module,
            "plain_config-get",
            json!({"key": "TOOLHOST_TEST_CONFIG_DB"})
        ),
        "\"postgres://db\""
    );
    assert_eq!(
        call(&module, "plain_config-get", json!({"key": "HOME"})),
        "null"
    );
    assert_eq!(
        call(&module, "plain_config-keys", json!({})),
        r#"["TOOLHOST_TEST_CONFIG_DB","region"]"#
    );
    let unset = Grants {
        config_inherit: vec!["TOOLHOST_TEST_SURELY_UNSET".into()],
        ..Grants::default()
    };
    assert_eq!(
        unset.resolve(std::path::Path::new(".")).unwrap_err(),
        "grants.config_inherit: 'TOOLHOST_TEST_SURELY_UNSET' is not set (or not UTF-8) in toolhost's environment"
    );
}

/// guest-plain with a `package-docs` section (the one `wasm-tools component
/// wit` reads: a version byte, then JSON) holding `docs`, loaded as `p`.
fn documented(version: u8, docs: &[u8]) -> WasmModule {
    let bytes = std::fs::read(guest("guest-plain")).unwrap();
    let mut payload = vec![version];
    payload.extend(docs);
    let bytes = with_custom_section(bytes, "package-docs", &payload);
    WasmModule::from_bytes(runtime(), "p", &bytes, Limits::default()).unwrap()
}

#[test]
fn descriptions_come_from_the_components_doc_comments() {
    let bytes = std::fs::read(guest("guest-plain")).unwrap();
    let undocumented = WasmModule::from_bytes(runtime(), "p", &bytes, Limits::default()).unwrap();
    assert_eq!(
        info(&undocumented, "p_echo").description,
        "Calls `echo`, a function the component exports (it carries no doc comment for it)."
    );
    assert_eq!(
        info(&undocumented, "p_text_reverse").description,
        "Calls `reverse` of interface test:plain/text@0.1.0."
    );
    let docs = json!({
        "worlds": {"root": {"func_exports": {"echo": {"docs": "Returns `text` unchanged."}}}},
        "interfaces": {"text": {"funcs": {"reverse": {"docs": "Reverses `s` by characters."}}}},
    });
    let module = documented(1, docs.to_string().as_bytes());
    assert_eq!(
        info(&module, "p_echo").description,
        "Returns `text` unchanged."
    );
    assert_eq!(
        info(&module, "p_text_reverse").description,
        "Reverses `s` by characters."
    );
    // The first format: docs as plain strings under `funcs`.
    let v0 = json!({"worlds": {"root": {"funcs": {"nothing": "Does nothing."}}}});
    let module = documented(0, v0.to_string().as_bytes());
    assert_eq!(info(&module, "p_nothing").description, "Does nothing.");
    // A malformed section describes nothing and rejects nothing.
    let module = documented(1, b"{not json");
    assert!(
        info(&module, "p_echo")
            .description
            .starts_with("Calls `echo`")
    );
    // Nor does an unknown version.
    let module = documented(9, docs.to_string().as_bytes());
    assert!(
        info(&module, "p_echo")
            .description
            .starts_with("Calls `echo`")
    );
}

/// A component whose core function `f` returns 7, lifted as `func() -> u32`
/// and exported as `exports` says (WAT).
fn component_exporting(exports: &str) -> Vec<u8> {
    let text = format!(
        r#"(component
            (core module $m (func (export "f") (result i32) i32.const 7))
            (core instance $i (instantiate $m))
            (func $f (result u32) (canon lift (core func $i "f")))
            (instance $util (export "f" (func $f)))
            {exports}
        )"#
    );
    wat::parse_str(&text).expect("valid WAT")
}

#[test]
fn names_that_collide_or_are_too_long_are_load_errors() {
    let load = |bytes: &[u8], name: &str| {
        WasmModule::from_bytes(runtime(), name, bytes, Limits::default())
    };
    let two = component_exporting(
        r#"(export "a:x/util@1.0.0" (instance $util)) (export "b:y/util" (instance $util))"#,
    );
    let e = load(&two, "m").unwrap_err();
    assert_eq!(e.kind, LoadErrorKind::WrongWorld);
    assert!(
        e.reason.starts_with(
            "functions `a:x/util@1.0.0#f` and `b:y/util#f` would both be tool 'm_util_f'"
        ),
        "{e}"
    );
    let long = "a".repeat(61);
    let one = component_exporting(&format!(r#"(export "{long}" (func $f))"#));
    let e = load(&one, "mod").unwrap_err();
    assert!(
        e.reason.starts_with(&format!(
            "function `{long}` would be tool 'mod_{long}', which is not a valid tool name: exposed name"
        )),
        "{e}"
    );
    assert!(e.reason.contains("the limit is 64"), "{e}");
    // The same component under a shorter module name loads, and its
    // function answers.
    let short =
        component_exporting(r#"(export "seven" (func $f)) (export "i:j/util" (instance $util))"#);
    let module = load(&short, "m").unwrap();
    assert_eq!(call(&module, "m_seven", json!({})), "7");
    assert_eq!(call(&module, "m_util_f", json!({})), "7");
}

#[test]
fn a_component_exporting_nothing_usable_says_what_it_exports() {
    let bytes = component_exporting(r#"(export "lib" (core module $m))"#);
    let e = WasmModule::from_bytes(runtime(), "m", &bytes, Limits::default()).unwrap_err();
    assert_eq!(e.kind, LoadErrorKind::WrongWorld);
    assert!(
        e.reason.starts_with(
            "it exports no function toolhost can serve as a tool (it exports: lib (a core module))"
        ),
        "{e}"
    );
}

#[test]
fn typed_tools_work_through_the_manager_and_warm() {
    let mut manager = ToolManager::new();
    manager.register(plain()).unwrap();
    let message = json!({"id": "1", "type": "function",
        "function": {"name": "plain_echo", "arguments": "{\"text\":\"via manager\"}"}});
    assert_eq!(manager.call(&message), "via manager");
    let wrong = json!({"id": "2", "type": "function",
        "function": {"name": "plain_echo", "arguments": "{\"text\":1}"}});
    assert_eq!(
        manager.call(&wrong),
        "Error: tool 'plain_echo' was given invalid arguments: field 'text': expected a string, got integer 1"
    );
    assert!(
        manager
            .tool_infos()
            .iter()
            .any(|s| s["function"]["name"] == "plain_text_reverse")
    );
    let warm = plain().with_warm(toolhost::Warm { max_calls: 10 });
    for i in 0..3 {
        assert_eq!(
            call(&warm, "plain_echo", json!({"text": i.to_string()})),
            i.to_string()
        );
    }
}

/// An invalid-argument error is capped like an answer: at most
/// `max_output_bytes`, cut at a character boundary, saying so.
#[test]
fn an_invalid_argument_error_is_capped_at_the_output_limit() {
    let limits = Limits {
        max_output_bytes: 100,
        ..Limits::default()
    };
    let module = load_guest("guest-plain", "plain", limits).expect("loads");
    let answer = call(&module, "plain_scalars", json!({"b": "é".repeat(500)}));
    assert!(answer.len() <= 100, "{} bytes: {answer}", answer.len());
    assert!(
        answer.starts_with("Error: tool 'plain_scalars' was given invalid arguments: ")
            && answer.ends_with(" [cut at 100 bytes: max_output_bytes]"),
        "{answer}"
    );
}

/// A core module for hostile components: one page of memory (more as
/// given), a bump allocator `realloc` and the functions in `funcs` (WAT).
fn core_with_memory(pages: u32, funcs: &str) -> String {
    format!(
        r#"(core module $m
            (memory (export "memory") {pages})
            (global $bump (mut i32) (i32.const 1024))
            (func (export "realloc") (param i32 i32 i32 i32) (result i32)
              (local $p i32)
              (local.set $p (global.get $bump))
              (global.set $bump (i32.add (local.get $p) (local.get 3)))
              (local.get $p))
            {funcs})
          (core instance $i (instantiate $m))"#
    )
}

/// The options of a lifted function that reads and writes memory.
const WITH_MEMORY: &str =
    r#"(memory (core memory $i "memory")) (realloc (core func $i "realloc"))"#;

fn load_wat(name: &str, text: &str, limits: Limits) -> Result<WasmModule, toolhost::LoadError> {
    let bytes = wat::parse_str(text).expect("valid WAT");
    WasmModule::from_bytes(runtime(), name, &bytes, limits)
}

/// `f(n) -> list<fl>`, `fl` a flags type of 32 one-letter-ish names, all
/// set: the host's copy of each element is 32 strings.
fn flags_lister() -> String {
    let names: String = (0..32)
        .map(|i| {
            format!(
                " \"{}{}\"",
                (b'a' + (i % 26) as u8) as char,
                "z".repeat(i / 26)
            )
        })
        .collect();
    let core = core_with_memory(
        8,
        r#"(func (export "f") (param $n i32) (result i32)
             (i32.store (i32.const 0) (i32.const 16))
             (i32.store (i32.const 4) (local.get $n))
             (memory.fill (i32.const 16) (i32.const 255) (i32.mul (local.get $n) (i32.const 4)))
             (i32.const 0))"#,
    );
    format!(
        r#"(component {core}
            (type $fl (flags{names}))
            (export $fle "fl" (type $fl))
            (func $f (param "n" u32) (result (list $fle)) (canon lift (core func $i "f") {WITH_MEMORY}))
            (export "f" (func $f)))"#
    )
}

/// A result's host copy is bounded by the call's memory limit as it is
/// made (each flag name at what its copy costs), and its text by the
/// output limit as it is written: a component cannot make the host hold
/// hundreds of MiB for a 400 KB answer.
#[test]
fn results_cost_the_host_no_more_than_the_calls_limits() {
    let limits = Limits {
        memory_mib: 8,
        max_output_bytes: 1000,
        ..Limits::default()
    };
    let module = load_wat("fl", &flags_lister(), limits).expect("loads");
    let one = call(&module, "fl_f", json!({"n": 1}));
    let all: Vec<Value> = serde_json::from_str::<Vec<Vec<Value>>>(&one).expect(&one)[0].clone();
    assert_eq!(all.len(), 32, "{one}");
    assert_eq!(
        call(&module, "fl_f", json!({"n": 1000})),
        "Error: tool 'fl_f' answered, more than its output limit of 1000 bytes."
    );
    assert_eq!(
        call(&module, "fl_f", json!({"n": 100_000})),
        "Error: tool 'fl_f' passed the host more than 8388608 bytes at once (its memory limit)."
    );
    assert_eq!(call(&module, "fl_f", json!({"n": 0})), "[]");
}

/// `g(x: list<r>) -> u32` (the list's length), `r` a record of `fields`
/// optional bytes.
fn wide_records(fields: usize) -> String {
    let fields: String = (0..fields)
        .map(|i| format!(" (field \"f{i}\" (option u8))"))
        .collect();
    let core = core_with_memory(
        16,
        r#"(func (export "g") (param i32 i32) (result i32) (local.get 1))"#,
    );
    format!(
        r#"(component {core}
            (type $r (record{fields}))
            (export $re "r" (type $r))
            (func $g (param "x" (list $re)) (result u32) (canon lift (core func $i "g") {WITH_MEMORY}))
            (export "g" (func $g)))"#
    )
}

/// Converting arguments takes host memory in proportion to their bytes
/// (64 times, plus 1 MiB) and never past `memory_mib`: 9 KB of empty
/// objects for records of 800 optional fields are refused before they
/// become 250 MiB of values, naming the bound.
#[test]
fn arguments_cost_the_host_memory_in_proportion_to_their_bytes() {
    let text = wide_records(800);
    let module = load_wat("w", &text, Limits::default()).expect("loads");
    assert_eq!(call(&module, "w_g", json!({"x": [{}, {"f7": 1}]})), "2");
    let many = json!({"x": vec![json!({}); 3000]});
    assert_eq!(many.to_string().len(), 9007);
    let answer = call(&module, "w_g", many);
    assert!(
        answer.starts_with(
            "Error: tool 'w_g' was given invalid arguments: as component values they would take more than "
        ) && answer.ends_with(
            "bytes of host memory, the most allowed for arguments of this size (64 times their bytes, plus 1 MiB; at most memory_mib); send fewer or smaller values"
        ),
        "{answer}"
    );
    let small = Limits {
        memory_mib: 1,
        ..Limits::default()
    };
    let module = load_wat("w", &text, small).expect("loads");
    assert_eq!(
        call(&module, "w_g", json!({"x": vec![json!({}); 40]})),
        "Error: tool 'w_g' was given invalid arguments: as component values they would take more than 1048576 bytes of host memory, the most the call's memory_mib allows; send fewer or smaller values"
    );
}

/// `count` functions `f0`... each taking a record of `fields` bytes, and
/// `ok()`.
fn many_wide_functions(count: usize, fields: usize) -> String {
    let fields: String = (0..fields)
        .map(|i| format!(" (field \"f{i}\" u8)"))
        .collect();
    let core = core_with_memory(
        1,
        r#"(func (export "f") (param i32) (result i32) (i32.const 7))
           (func (export "ok") (result i32) (i32.const 7))"#,
    );
    let funcs: String = (0..count)
        .map(|n| {
            format!(
                r#"(func $f{n} (param "r" $re) (result u32) (canon lift (core func $i "f") {WITH_MEMORY}))
                   (export "f{n}" (func $f{n}))"#
            )
        })
        .collect();
    format!(
        r#"(component {core}
            (type $r (record{fields}))
            (export $re "r" (type $r))
            (func $ok (result u32) (canon lift (core func $i "ok")))
            (export "ok" (func $ok))
            {funcs})"#
    )
}

/// Schemas are bounded while they are built: one tool's at 256 KiB (an
/// enum of ten 99,000-character names is left out, not written out 300
/// times), one module's at `max_tool_info_bytes`, and `max_tools` is
/// checked before any is built.
#[test]
fn schemas_are_bounded_per_tool_and_per_module_as_they_are_built() {
    let names: String = (0..10)
        .map(|i| format!(" \"{}-{}\"", "a".repeat(99_000), (b'a' + i) as char))
        .collect();
    let fields: String = (0..300).map(|i| format!(" (field \"f{i}\" $ee)")).collect();
    let core = core_with_memory(
        1,
        r#"(func (export "f") (param i32) (result i32) (i32.const 7))
           (func (export "ok") (result i32) (i32.const 7))"#,
    );
    let text = format!(
        r#"(component {core}
            (type $e (enum{names}))
            (export $ee "e" (type $e))
            (type $r (record{fields}))
            (export $re "r" (type $r))
            (func $big (param "r" $re) (result u32) (canon lift (core func $i "f") {WITH_MEMORY}))
            (export "big" (func $big))
            (func $ok (result u32) (canon lift (core func $i "ok")))
            (export "ok" (func $ok)))"#
    );
    let module = load_wat("e", &text, Limits::default()).expect("loads");
    assert_eq!(call(&module, "e_ok", json!({})), "7");
    let left: Vec<_> = module.left_out().to_vec();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].function, "big");
    assert_eq!(
        left[0].reason,
        "its schema would take more than 262144 bytes (the most one tool's schema may take)"
    );

    let text = many_wide_functions(200, 1500);
    let few = Limits {
        max_tools: 100,
        ..Limits::default()
    };
    let e = load_wat("m", &text, few).unwrap_err();
    assert_eq!(e.kind, LoadErrorKind::InvalidToolInfo);
    assert_eq!(
        e.reason,
        "it exports 201 functions, more than the limit of 100 tools (limits.max_tools)"
    );
    let module = load_wat("m", &text, Limits::default()).expect("loads");
    let served = module.infos().len();
    assert!((2..10).contains(&served), "{served} tools");
    let left = module.left_out();
    assert_eq!(served + left.len(), 201);
    assert!(
        left.iter().all(|l| l.reason.starts_with("its schema would take more than ")
            && l.reason.ends_with(
                "(what is left of limits.max_tool_info_bytes = 1048576, which bounds the schemas of all of one module's tools)"
            )),
        "{:?}",
        &left[..2]
    );
    let bytes: usize = module
        .infos()
        .iter()
        .map(|i| i.to_openai().to_string().len())
        .sum();
    assert!(bytes <= 1024 * 1024, "{bytes} bytes of schemas");
}
