//! Components written in WebAssembly text, for attacks that Rust cannot
//! express: many globals or instances, pathological functions, strings in
//! other encodings. Each implements the `toolhost:tool` world with one core
//! module whose `call` is given as WAT.

/// A core module's text: memory, a bump `realloc`, `tool-info` answering
/// the one tool `name`, and `call` with `call_body` as its body.
///
/// `call_body` is the body of `(func (param $np i32) (param $nl i32)
/// (param $ap i32) (param $al i32) (result i32))`; it must leave the address
/// of the result area (see [`OK_RESULT`]) on the stack. `$alloc` (bytes →
/// address) is available to it, and `extra` is added to the module as is.
pub fn core_module(name: &str, call_body: &str, extra: &str) -> String {
    core_module_with_tools(&[name], call_body, extra)
}

/// [`core_module`] declaring every tool of `names` (all run `call_body`).
pub fn core_module_with_tools(names: &[&str], call_body: &str, extra: &str) -> String {
    let schemas: Vec<String> = names
        .iter()
        .map(|name| {
            format!(
                r#"{{"type":"function","function":{{"name":"{name}","description":"A test tool.","parameters":{{"type":"object","properties":{{}}}}}}}}"#
            )
        })
        .collect();
    core_module_with_info(&format!("[{}]", schemas.join(",")), call_body, extra)
}

/// [`core_module`] whose `tool-info` answers `info` (JSON text) as it is.
pub fn core_module_with_info(info: &str, call_body: &str, extra: &str) -> String {
    let escaped = info.replace('\\', "\\\\").replace('"', "\\\"");
    format!(
        r#"(module
  (memory (export "memory") {pages})
  (global $bump (mut i32) (i32.const {heap}))
  (func $alloc (param $size i32) (result i32)
    (local $at i32) (local $end i32)
    (local.set $at (i32.and (i32.add (global.get $bump) (i32.const 7)) (i32.const -8)))
    (local.set $end (i32.add (local.get $at) (local.get $size)))
    (block $fits
      (br_if $fits (i32.le_u (local.get $end) (i32.mul (memory.size) (i32.const 65536))))
      (drop (memory.grow (i32.add (i32.shr_u (i32.sub (local.get $end) (i32.mul (memory.size) (i32.const 65536))) (i32.const 16)) (i32.const 1))))
    )
    (global.set $bump (local.get $end))
    (local.get $at))
  (func (export "realloc") (param i32 i32 i32 i32) (result i32)
    (call $alloc (local.get 3)))
  (data (i32.const 1024) "{escaped}")
  (func (export "tool-info") (result i32)
    (i32.store (i32.const 0) (i32.const 1024))
    (i32.store (i32.const 4) (i32.const {len}))
    (i32.const 0))
  (func (export "call") (param $np i32) (param $nl i32) (param $ap i32) (param $al i32) (result i32)
    {call_body})
  {extra}
)"#,
        len = info.len(),
        // The tool-info text sits at 1024; the heap starts after it.
        heap = (1024 + info.len()).div_ceil(65536) * 65536,
        pages = (1024 + info.len()).div_ceil(65536),
    )
}

/// A `call` body answering `ok` with the `len` bytes at `ptr` (two WAT
/// expressions leaving i32 values).
pub fn ok_result(ptr: &str, len: &str) -> String {
    format!(
        "(i32.store8 (i32.const 16) (i32.const 0)) (i32.store (i32.const 20) {ptr}) \
         (i32.store (i32.const 24) {len}) (i32.const 16)"
    )
}

/// The result area `call` bodies answer through: a tag byte at 16 (0 `ok`,
/// 1 `err`), the string's address at 20 and its length at 24.
pub const OK_RESULT: u32 = 16;

/// A component whose core module is `core` (see [`core_module`]), lifting
/// strings with `encoding` (`utf8`, `utf16` or `latin1+utf16`), and
/// instantiating the module `copies` times (only the first is used).
pub fn tool_component(core: &str, encoding: &str, copies: usize) -> Vec<u8> {
    let extra_instances: String = (1..copies)
        .map(|i| format!("  (core instance $extra{i} (instantiate $m))\n"))
        .collect();
    let text = format!(
        r#"(component
  (core module $m {core_inner})
  (core instance $i (instantiate $m))
{extra_instances}
  (func (export "tool-info") (result string)
    (canon lift (core func $i "tool-info") (memory (core memory $i "memory")) (realloc (core func $i "realloc")) string-encoding={encoding}))
  (func (export "call") (param "name" string) (param "arguments" string) (result (result string (error string)))
    (canon lift (core func $i "call") (memory (core memory $i "memory")) (realloc (core func $i "realloc")) string-encoding={encoding}))
)"#,
        core_inner = core
            .trim()
            .strip_prefix("(module")
            .and_then(|rest| rest.strip_suffix(')'))
            .expect("a (module ...)"),
    );
    wat::parse_str(&text).unwrap_or_else(|e| panic!("the test component is valid WAT: {e}"))
}

/// `bytes` with a custom section `name` holding `payload` appended.
pub fn with_custom_section(mut bytes: Vec<u8>, name: &str, payload: &[u8]) -> Vec<u8> {
    let mut content = leb128(name.len());
    content.extend_from_slice(name.as_bytes());
    content.extend_from_slice(payload);
    bytes.push(0);
    bytes.extend(leb128(content.len()));
    bytes.extend(content);
    bytes
}

/// A `producers` section's payload naming `count` languages `lang-N`, each
/// with a version of `version_bytes` bytes.
pub fn producers_payload(count: usize, version_bytes: usize) -> Vec<u8> {
    let string = |text: &str| {
        let mut out = leb128(text.len());
        out.extend_from_slice(text.as_bytes());
        out
    };
    let version = "v".repeat(version_bytes);
    let mut payload = leb128(1);
    payload.extend(string("language"));
    payload.extend(leb128(count));
    for i in 0..count {
        payload.extend(string(&format!("lang-{i}")));
        payload.extend(string(&version));
    }
    payload
}

/// A `producers` section's payload with one field, `field` (`language`,
/// `processed-by`, `sdk`), naming `values` as (name, version).
pub fn producers_field(field: &str, values: &[(&str, &str)]) -> Vec<u8> {
    let string = |text: &str| {
        let mut out = leb128(text.len());
        out.extend_from_slice(text.as_bytes());
        out
    };
    let mut payload = leb128(1);
    payload.extend(string(field));
    payload.extend(leb128(values.len()));
    for (name, version) in values {
        payload.extend(string(name));
        payload.extend(string(version));
    }
    payload
}

/// `value` as unsigned LEB128.
fn leb128(mut value: usize) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

/// A function keeping `locals` i64 locals live across a loop, which makes
/// register allocation slow (seconds for a few thousand), as WAT to add to
/// a core module.
pub fn slow_to_compile(locals: usize) -> String {
    let declare: String = (0..locals).map(|i| format!("(local $l{i} i64)")).collect();
    let init: String = (0..locals)
        .map(|i| format!("(local.set $l{i} (i64.add (local.get $x) (i64.const {i})))"))
        .collect();
    let update: String = (0..locals)
        .map(|i| {
            let next = (i + 1) % locals;
            format!("(local.set $l{i} (i64.mul (local.get $l{i}) (local.get $l{next})))")
        })
        .collect();
    let sum: String = (1..locals)
        .map(|i| format!("(local.set $l0 (i64.xor (local.get $l0) (local.get $l{i})))"))
        .collect();
    format!(
        "(func $slow (param $x i64) (result i64) {declare} {init} \
         (loop $again {update} (br_if $again (i64.ne (local.get $l1) (i64.const 0)))) \
         {sum} (local.get $l0))"
    )
}

/// A global whose initializer adds `terms` constants (extended constant
/// expressions), which takes compiling gigabytes of memory when large.
pub fn costly_global(terms: usize) -> String {
    let mut expr = String::from("(i32.const 1)");
    expr.reserve(terms * 24);
    for _ in 1..terms {
        expr.push_str(" (i32.const 1) i32.add");
    }
    format!("(global $costly i32 {expr})")
}
