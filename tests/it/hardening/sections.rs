//! Custom sections are read with a cap, and only a summary is kept (point 15).

use toolhost::{Limits, WasmModule};
use toolhost_testkit::components::{
    core_module, ok_result, producers_payload, tool_component, with_custom_section,
};

use crate::common::runtime;

fn component_with_producers(count: usize, version_bytes: usize) -> Vec<u8> {
    let core = core_module("t", &ok_result("(i32.const 1024)", "(i32.const 2)"), "");
    let payload = producers_payload(count, version_bytes);
    with_custom_section(tool_component(&core, "utf8", 1), "producers", &payload)
}

#[test]
fn custom_sections_are_summarised_within_bounds() {
    // Many entries, some long, in a section of ordinary size: 32 kept, cut.
    let bytes = component_with_producers(2_000, 20);
    let module = WasmModule::from_bytes(runtime(), "p", &bytes, Limits::default()).unwrap();
    let languages = &module.producers().languages;
    assert_eq!(languages.len(), 32);
    let long = component_with_producers(3, 1_000);
    let module = WasmModule::from_bytes(runtime(), "p", &long, Limits::default()).unwrap();
    assert!(module.producers().languages.iter().all(|l| l.len() <= 128));
    // A 20 MB section is not read at all; the module loads and works.
    let huge = component_with_producers(1_000_000, 12);
    assert!(huge.len() > 20_000_000);
    let module = WasmModule::from_bytes(runtime(), "p", &huge, Limits::default()).unwrap();
    assert!(module.producers().languages.is_empty());
    assert_eq!(module.producers().runtime(), None);
}
