//! `inspect` names the language runtime of a component (here: none, for C).

use xtask::{Language, Repo, build_example};

#[test]
fn the_language_runtime_is_recognised() {
    let repo = Repo::at(toolhost_testkit::workspace_root());
    let built = |language| {
        build_example(&repo, language).unwrap_or_else(|e| {
            panic!("building the {language} example failed: {e:#} (`cargo xtask build-examples c` builds it by hand)")
        })
    };
    // `inspect` shows it with the size, compile time and imports (none for C).
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .arg("inspect")
        .arg(built(Language::C))
        .output()
        .expect("toolhost runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("runtime:      not recognisable (the component names no language)\n"),
        "{text}"
    );
    assert!(text.contains("imports:\n  (none)\n"), "{text}");
    assert!(text.contains("compile time: "), "{text}");
    let size = std::fs::metadata(built(Language::C)).expect("built").len();
    assert!(
        text.contains(&format!("size:         {size} bytes\n")),
        "{text}"
    );
}
