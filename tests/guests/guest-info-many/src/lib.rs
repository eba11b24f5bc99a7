//! Test guest: tool-info declares 5000 tools.

wit_bindgen::generate!({
    inline: r#"
        package test:guest;

        world tool {

            export tool-info: func() -> string;
            export call: func(name: string, arguments: string) -> result<string, string>;
        }
    "#,
});

struct Module;

impl Guest for Module {
    fn tool_info() -> String {
        let one = r#"{"type":"function","function":{"name":"t"}}"#;
        let tools: Vec<String> = (0..5000)
            .map(|i| one.replace("\"t\"", &format!("\"t{i}\"")))
            .collect();
        format!("[{}]", tools.join(","))
    }

    fn call(name: String, arguments: String) -> Result<String, String> {
        let _ = &name;
        Ok(arguments)
    }
}

export!(Module);
