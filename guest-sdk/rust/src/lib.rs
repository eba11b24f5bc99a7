//! Write [toolhost](https://example.invalid/toolhost) tool modules in Rust.
//!
//! A tool module is one WebAssembly component that implements the
//! `toolhost:tool` world (`wit/tool.wit`): it exports `tool-info` (the OpenAI
//! function-calling schemas of its tools) and `call(name, arguments)`.
//! This crate writes both exports for you:
//!
//! - each tool is a plain function taking one argument struct that derives
//!   [`serde::Deserialize`] and [`schemars::JsonSchema`];
//! - its `parameters` schema is derived from that struct, its description is
//!   the struct's doc comment (or `#[schemars(description = "...")]`);
//! - arguments that do not match the struct are answered with a precise error
//!   (which field, what was expected) before your function runs;
//! - [`export_tools!`] exports the module.
//!
//! ```no_run
//! use toolhost_guest::{export_tools, JsonSchema};
//! use serde::Deserialize;
//!
//! /// Greets someone by name.
//! #[derive(Deserialize, JsonSchema)]
//! struct Greet {
//!     /// Who to greet.
//!     name: String,
//! }
//!
//! fn greet(args: Greet) -> Result<String, String> {
//!     Ok(format!("Hello, {}!", args.name))
//! }
//!
//! export_tools!(greet);
//! ```
//!
//! Build it with `cargo build --release --target wasm32-wasip2`; the `.wasm`
//! file in `target/wasm32-wasip2/release/` is the component.

mod output;
mod toolbox;

pub use output::{IntoOutput, Json};
pub use schemars::{self, JsonSchema};
pub use serde;
pub use serde_json;
pub use toolbox::{Hints, NoArgs, Toolbox};

/// The raw `toolhost:tool` contract, for modules that write `tool-info` and
/// `call` themselves (JSON text in, JSON text out). Export with [`export_raw!`].
pub use bindings::Guest as RawModule;

/// Bindings generated from `wit/tool.wit`; used by the export macros.
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../../wit/tool.wit",
        world: "tool",
        pub_export_macro: true,
        export_macro_name: "__export_tool_world",
        default_bindings_module: "toolhost_guest::bindings",
    });
}

/// Exports a module whose tools are the named functions.
///
/// Each name is a function `fn(Args) -> Result<R, E>` where `Args:
/// DeserializeOwned + JsonSchema`, `R:` [`IntoOutput`] and `E: Display`. The
/// tool's name is the function's name. Use [`export_toolbox!`] to choose names
/// or descriptions yourself.
///
/// ```no_run
/// # use serde::Deserialize;
/// # use toolhost_guest::JsonSchema;
/// /// Evaluates an expression.
/// #[derive(Deserialize, JsonSchema)]
/// struct Evaluate { expression: String }
///
/// fn evaluate(args: Evaluate) -> Result<String, String> { Ok(args.expression) }
///
/// fn shout(args: Evaluate) -> Result<String, String> { Ok(args.expression.to_uppercase()) }
///
/// toolhost_guest::export_tools!(evaluate, shout);
/// ```
#[macro_export]
macro_rules! export_tools {
    ($($tool:ident),+ $(,)?) => {
        fn __toolhost_toolbox() -> $crate::Toolbox {
            $crate::Toolbox::new()$(.tool(stringify!($tool), $tool))+
        }
        $crate::export_toolbox!(__toolhost_toolbox);
    };
}

/// Exports a module from a function that builds its [`Toolbox`].
///
/// ```no_run
/// # use serde::Deserialize;
/// # use toolhost_guest::JsonSchema;
/// #[derive(Deserialize, JsonSchema)]
/// struct Add { a: f64, b: f64 }
///
/// fn add(args: Add) -> Result<String, String> { Ok((args.a + args.b).to_string()) }
///
/// fn toolbox() -> toolhost_guest::Toolbox {
///     toolhost_guest::Toolbox::new()
///         .tool("add", add)
///         .describe("Adds two numbers.")
/// }
/// toolhost_guest::export_toolbox!(toolbox);
/// ```
#[macro_export]
macro_rules! export_toolbox {
    ($build:path) => {
        struct __ToolhostModule;

        impl $crate::bindings::Guest for __ToolhostModule {
            fn tool_info() -> ::std::string::String {
                $build().tool_info()
            }

            fn call(
                name: ::std::string::String,
                arguments: ::std::string::String,
            ) -> ::std::result::Result<::std::string::String, ::std::string::String> {
                $build().call(&name, &arguments)
            }
        }

        $crate::export_raw!(__ToolhostModule);
    };
}

/// Exports a type that implements [`RawModule`] directly.
///
/// ```no_run
/// struct Ping;
///
/// impl toolhost_guest::RawModule for Ping {
///     fn tool_info() -> String {
///         r#"[{"type":"function","function":{"name":"ping","description":"Answers pong."}}]"#.into()
///     }
///
///     fn call(name: String, _arguments: String) -> Result<String, String> {
///         match name.as_str() {
///             "ping" => Ok("pong".into()),
///             other => Err(format!("no tool '{other}'")),
///         }
///     }
/// }
///
/// toolhost_guest::export_raw!(Ping);
/// ```
#[macro_export]
macro_rules! export_raw {
    ($module:ident) => {
        $crate::bindings::__export_tool_world!($module with_types_in $crate::bindings);
    };
}
