//! Text from a module cannot drive the terminal (hardening point 10):
//! descriptions, results and errors are shown with control characters
//! escaped.

use std::process::Command;

use toolhost_testkit::components::{core_module_with_info, ok_result, tool_component};

/// A description that would clear the screen, retitle the terminal and
/// overwrite the status column, and a result with a carriage return.
const INFO: &str = r#"[{"type":"function","function":{"name":"t","description":"looks fine\rX\u001b[2J\u001b]0;owned\u0007\u202e","parameters":{"type":"object","properties":{}}}}]"#;

fn run(dir: &std::path::Path, args: &[&str]) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("toolhost runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_no_controls(text: &str) {
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "raw control characters in {text:?}"
    );
    assert!(!text.contains('\u{202e}'), "{text:?}");
}

#[test]
fn module_text_is_escaped_on_the_terminal_and_in_errors() {
    let dir = tempfile::tempdir().unwrap();
    // The answer is the description's bytes at 1024 (the tool-info text).
    let core = core_module_with_info(INFO, &ok_result("(i32.const 1024)", "(i32.const 40)"), "");
    std::fs::write(
        dir.path().join("evil.wasm"),
        tool_component(&core, "utf8", 1),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("toolhost.toml"),
        "[cache]\nenabled = false\n[[modules]]\npath = \"evil.wasm\"\n",
    )
    .unwrap();

    let (list, _) = run(dir.path(), &["list"]);
    assert_no_controls(&list);
    assert!(
        list.contains(r"looks fine\rX\u{1b}[2J\u{1b}]0;owned\u{7}\u{202e}"),
        "{list}"
    );
    let (inspect, _) = run(dir.path(), &["inspect", "evil.wasm"]);
    assert_no_controls(&inspect);
    assert!(inspect.contains(r"    looks fine\rX\u{1b}[2J"), "{inspect}");

    // A load error quoting the module is escaped on stderr too.
    let bad = r#"[{"type":"function","function":{"name":"x\u001b[2J"}}]"#;
    let core = core_module_with_info(bad, &ok_result("(i32.const 0)", "(i32.const 0)"), "");
    std::fs::write(
        dir.path().join("evil.wasm"),
        tool_component(&core, "utf8", 1),
    )
    .unwrap();
    let (_, stderr) = run(dir.path(), &["list"]);
    assert_no_controls(&stderr);
    assert!(stderr.contains(r"x\u{1b}[2J"), "{stderr}");
}
