//! Test guest: tool-info declares the same tool twice.

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
        r#"[{"type":"function","function":{"name":"twice"}},{"type":"function","function":{"name":"twice"}}]"#.to_string()
    }

    fn call(name: String, arguments: String) -> Result<String, String> {
        let _ = &name;
        Ok(arguments)
    }
}

export!(Module);
