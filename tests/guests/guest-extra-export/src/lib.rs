//! Test guest: exports more than the world (an `init`, as componentize-py adds).

wit_bindgen::generate!({
    inline: r#"
        package test:guest;

        world tool {
            export init: func();
            export tool-info: func() -> string;
            export call: func(name: string, arguments: string) -> result<string, string>;
        }
    "#,
});

struct Module;

impl Guest for Module {
    fn tool_info() -> String {
        r#"[{"type":"function","function":{"name":"echo","description":"Echoes its arguments.","parameters":{"type":"object","properties":{}}}}]"#.to_string()
    }

    fn init() {}

    fn call(name: String, arguments: String) -> Result<String, String> {
        let _ = &name;
        Ok(format!("{name}:{arguments}"))
    }
}

export!(Module);
