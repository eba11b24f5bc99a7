//! Test guest: tool `check`, whose `outputSchema` has 40,000 subschemas
//! (an `allOf` of item checks), and whose answer is an array of 60,000
//! integers (as `items`): each answer would cost the host seconds to check.

struct Module;

/// The schema's `allOf` entries and the answer's items.
const ENTRIES: usize = 40_000;
const ITEMS: usize = 60_000;

impl toolhost_guest::RawModule for Module {
    fn tool_info() -> String {
        // Under a mebibyte in all, as tool-info's own limit wants.
        let entries = vec![r#"{"items":{"minimum":0}}"#; ENTRIES].join(",");
        format!(
            r#"[{{"type":"function","function":{{"name":"check","outputSchema":{{"type":"object","properties":{{"items":{{"type":"array","allOf":[{entries}]}}}}}}}}}}]"#
        )
    }

    fn call(_name: String, _arguments: String) -> Result<String, String> {
        let items: Vec<String> = (0..ITEMS).map(|i| i.to_string()).collect();
        Ok(format!(r#"{{"items":[{}]}}"#, items.join(",")))
    }
}

toolhost_guest::export_raw!(Module);
