//! Test guest for primed instances (instances made ahead in which the host
//! calls `call` once with an empty tool name before their one real call):
//! `call` counts and prints its calls, and an empty name spends fuel; the
//! tools tell what an instance saw before the call. The tests give it a
//! `producers` section naming an interpreter, so that toolhost primes its
//! instances.

use std::sync::atomic::{AtomicU64, Ordering};

/// `call` calls in this instance so far.
static CALLS: AtomicU64 = AtomicU64::new(0);

/// Rounds of work a call with an empty tool name does, spending fuel.
const PRIMING_ROUNDS: u64 = 200_000;

struct Module;

/// Work the compiler cannot remove: `rounds` rounds of a little arithmetic.
fn spend(rounds: u64) -> u64 {
    let mut x = 1u64;
    for i in 0..rounds {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
    }
    x
}

/// The `rounds` of `{"rounds": N}`.
fn rounds_of(arguments: &str) -> Option<u64> {
    let (_, value) = arguments.split_once(':')?;
    value.trim().trim_end_matches('}').trim().parse().ok()
}

impl toolhost_guest::RawModule for Module {
    fn tool_info() -> String {
        let no_arguments = r#"{"type":"object","properties":{},"additionalProperties":false}"#;
        let spend_arguments = r#"{"type":"object","properties":{"rounds":{"type":"integer","minimum":0}},"required":["rounds"],"additionalProperties":false}"#;
        format!(
            r#"[{{"type":"function","function":{{"name":"calls_before","description":"How many calls this instance had before this one.","parameters":{no_arguments}}}}},{{"type":"function","function":{{"name":"spend","description":"Spends fuel: `rounds` rounds of arithmetic.","parameters":{spend_arguments}}}}}]"#
        )
    }

    fn call(name: String, arguments: String) -> Result<String, String> {
        let before = CALLS.fetch_add(1, Ordering::SeqCst);
        println!("call of '{name}' (stdout)");
        eprintln!("call of '{name}' (stderr)");
        match name.as_str() {
            "" => {
                std::hint::black_box(spend(PRIMING_ROUNDS));
                Err("no tool has an empty name".into())
            }
            "calls_before" => Ok(before.to_string()),
            "spend" => {
                let rounds = rounds_of(&arguments)
                    .ok_or_else(|| format!("spend: bad arguments {arguments}"))?;
                spend(rounds);
                Ok(format!("spent {rounds} rounds"))
            }
            other => Err(format!("no tool {other}")),
        }
    }
}

toolhost_guest::export_raw!(Module);
