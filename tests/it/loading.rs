//! Loading: every bad component is a load error that names the module and the problem.

use toolhost::{Limits, LoadErrorKind, Tool, WasmModule};

use crate::common::{guest, load_guest, runtime};

fn load_error(package: &str) -> toolhost::LoadError {
    let limits = Limits {
        tool_info_timeout_ms: 1_000,
        tool_info_fuel: 500_000_000,
        ..Limits::default()
    };
    load_guest(package, "bad", limits).expect_err("must not load")
}

#[test]
fn tool_info_that_traps() {
    let e = load_error("guest-info-trap");
    assert_eq!(e.kind, LoadErrorKind::ToolInfoFailed);
    assert_eq!(
        e.to_string(),
        "cannot load module 'bad': tool-info panicked: tool-info exploded"
    );
}

#[test]
fn tool_info_that_spins() {
    let e = load_error("guest-info-spin");
    assert_eq!(e.kind, LoadErrorKind::ToolInfoFailed);
    assert!(
        e.reason == "tool-info ran out of fuel (limit 500000000, limits.tool_info_fuel)"
            || e.reason
                == "tool-info exceeded its time limit of 1000 ms (limits.tool_info_timeout_ms)",
        "{e}"
    );
}

#[test]
fn tool_info_with_bad_json_or_names() {
    let e = load_error("guest-info-bad-json");
    assert_eq!(e.kind, LoadErrorKind::InvalidToolInfo);
    assert!(
        e.reason
            .starts_with("tool-info did not return valid JSON: expected ident at line 1 column 2"),
        "{e}"
    );
    let e = load_error("guest-info-bad-name");
    assert!(
        e.reason
            .starts_with("tool #0: tool name 'bad name' contains ' '"),
        "{e}"
    );
    let e = load_error("guest-info-duplicate");
    assert_eq!(e.reason, "tool 'twice' is declared twice");
    let e = load_error("guest-info-many");
    assert_eq!(
        e.reason,
        "tool-info declares 5000 tools, more than the limit of 1024 (limits.max_tools)"
    );
}

#[test]
fn imports_the_host_does_not_provide() {
    let e = load_error("guest-unknown-import");
    assert_eq!(e.kind, LoadErrorKind::MissingImport);
    assert!(e.reason.contains("test:guest/vault"), "{e}");
    assert!(
        e.reason
            .contains("toolhost provides the WASI 0.2 interfaces cli, clocks"),
        "{e}"
    );
}

#[test]
fn components_of_another_world() {
    // A component of another world serves its exported functions.
    let other = load_guest("guest-wrong-world", "other", Limits::default()).unwrap();
    let args = toolhost::Arguments::empty();
    assert_eq!(other.call("other_run", &args).unwrap(), "42");
    // One that exports `tool-info` or `call` is held to the toolhost:tool world.
    let e = load_error("guest-wrong-signature");
    assert_eq!(e.kind, LoadErrorKind::WrongWorld);
    assert!(
        e.reason
            .contains("export `tool-info` is not `func() -> string`"),
        "{e}"
    );
}

#[test]
fn extra_exports_are_ignored() {
    let module = load_guest("guest-extra-export", "extra", Limits::default()).unwrap();
    let infos = module.infos();
    assert_eq!(infos[0].name, "extra_echo");
    assert_eq!(
        infos[0].parameters,
        serde_json::json!({"type": "object", "properties": {}})
    );
    let args = toolhost::Arguments::from_object(&serde_json::from_str(r#"{"x": 1}"#).unwrap());
    assert_eq!(module.call("extra_echo", &args).unwrap(), r#"echo:{"x":1}"#);
}

#[test]
fn bytes_that_are_not_a_component() {
    let rt = runtime();
    let load =
        |bytes: &[u8]| WasmModule::from_bytes(rt, "junk", bytes, Limits::default()).unwrap_err();
    let e = load(b"");
    assert_eq!(e.kind, LoadErrorKind::NotAComponent);
    assert!(e.reason.contains("empty"));
    assert!(
        load(b"(component)")
            .reason
            .contains("does not start with the `\\0asm` header")
    );
    // The 8-byte header alone is a valid, empty component: of the wrong world.
    assert_eq!(load(&bytes_of_header()).kind, LoadErrorKind::WrongWorld);
    let core = b"\0asm\x01\0\0\0";
    assert!(
        load(core)
            .reason
            .contains("core WebAssembly module, not a component")
    );
    let random: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    assert_eq!(load(&random).kind, LoadErrorKind::NotAComponent);
    // A real component, truncated.
    let bytes = std::fs::read(guest("guest-hostile")).unwrap();
    for cut in [9, 100, bytes.len() / 2, bytes.len() - 1] {
        let e = load(&bytes[..cut]);
        assert_eq!(e.kind, LoadErrorKind::Compile, "cut at {cut}: {e}");
        assert!(
            e.to_string()
                .starts_with("cannot load module 'junk': it is not a valid component: "),
            "{e}"
        );
    }
}

#[test]
fn names_and_files() {
    let rt = runtime();
    let path = guest("guest-hostile");
    let e = WasmModule::from_file(rt, &path, Some("Bad_Name"), Limits::default()).unwrap_err();
    assert_eq!(e.kind, LoadErrorKind::InvalidName);
    let e = WasmModule::from_file(rt, "/no/such/file.wasm".as_ref(), None, Limits::default())
        .unwrap_err();
    assert_eq!(e.kind, LoadErrorKind::Io);
    assert!(
        e.to_string()
            .starts_with("cannot load module 'file': cannot read /no/such/file.wasm"),
        "{e}"
    );
    // The default name is the file stem, with '_' turned into '-'.
    let m = WasmModule::from_file(rt, &path, None, Limits::default()).unwrap();
    assert_eq!(m.name(), "guest-hostile");
    assert!(
        m.infos()
            .iter()
            .all(|i| i.name.starts_with("guest-hostile_"))
    );
    // Exposed names longer than 64 characters are refused.
    let long = "m".repeat(60);
    let e = WasmModule::from_file(rt, &path, Some(&long), Limits::default()).unwrap_err();
    assert!(e.reason.contains("the limit is 64"), "{e}");
}

#[test]
fn imports_are_reported() {
    let m = load_guest("guest-hostile", "h", Limits::default()).unwrap();
    assert!(
        m.imports()
            .iter()
            .any(|i| i.starts_with("wasi:cli/stderr@0.2")),
        "{:?}",
        m.imports()
    );
    assert!(m.size() > 1000);
}

fn bytes_of_header() -> Vec<u8> {
    b"\0asm\x0d\0\x01\0".to_vec()
}
