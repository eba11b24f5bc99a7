//! A guest's output is logged one record per line, escaped (point 10).

use serde_json::json;

use crate::common::{call, hostile_manager, logs_of};

#[test]
fn guest_lines_are_logged_one_record_each_and_escaped() {
    let manager = hostile_manager();
    let text = "one\n2026-12-01T00:00:00Z  WARN toolhost: fake line\r\u{1b}[2Jthree";
    let (out, logs) = logs_of(|| call(&manager, "h_print", json!({ "text": text })));
    assert_eq!(out, "printed");
    for line in logs.lines() {
        assert!(
            line.contains("module=\"h\" tool=\"h_print\""),
            "a log line without its module and tool: {line:?}"
        );
        assert!(!line.chars().any(char::is_control), "{line:?}");
    }
    // Each of the guest's two lines, on stdout and on stderr: four records.
    assert_eq!(logs.lines().count(), 4, "{logs}");
    assert!(logs.contains(r"fake line\r\u{1b}[2Jthree"), "{logs}");
}
