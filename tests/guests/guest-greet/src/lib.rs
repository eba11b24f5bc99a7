use serde::Deserialize;
use toolhost_guest::JsonSchema;

/// Greets someone by name.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Greet {
    /// Who to greet.
    name: String,
}

fn greet(args: Greet) -> Result<String, String> {
    Ok(format!("Hello, {}!", args.name))
}

toolhost_guest::export_tools!(greet);
