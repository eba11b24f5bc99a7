//! Test guest: tool `check`, whose `outputSchema` is within the bounds
//! toolhost accepts at load (900 subschemas: an `allOf` of item checks),
//! and whose answer holds an array of 60,000 integers: checking one answer
//! takes the host far longer than the module's time limit in the tests.
//! Tool `small` answers `{"items": [1]}`, checked in no time.

struct Module;

/// The schema's `allOf` entries and the answer's items.
const ENTRIES: usize = 900;
const ITEMS: usize = 60_000;

impl toolhost_guest::RawModule for Module {
    fn tool_info() -> String {
        let entries = vec![r#"{"items":{"type":"integer","minimum":0}}"#; ENTRIES].join(",");
        // MCP wants an object at the top: the array is its `items`.
        let schema = format!(
            r#"{{"type":"object","properties":{{"items":{{"type":"array","allOf":[{entries}]}}}}}}"#
        );
        format!(
            r#"[{{"type":"function","function":{{"name":"check","outputSchema":{schema}}}}},
               {{"type":"function","function":{{"name":"small","outputSchema":{schema}}}}}]"#
        )
    }

    fn call(name: String, _arguments: String) -> Result<String, String> {
        if name == "small" {
            return Ok(r#"{"items":[1]}"#.into());
        }
        let items: Vec<String> = (0..ITEMS).map(|i| i.to_string()).collect();
        Ok(format!(r#"{{"items":[{}]}}"#, items.join(",")))
    }
}

toolhost_guest::export_raw!(Module);
