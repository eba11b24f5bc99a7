//! The arguments of a `tools/call` as the client wrote them.
//!
//! rmcp parses a request's arguments into a JSON value, which loses what
//! JSON text can say and a value cannot (integers past 64 bits, `1.10`,
//! `1e2`, `-0`, repeated keys, key order) and refuses valid JSON outright
//! (`1e400`, a lone surrogate escape). So before rmcp reads a message, the
//! arguments' text is taken out of it (left as `{}`) and handed to the call
//! beside the message: on HTTP in the request's extensions, on stdio by
//! request id ([`stdio`]). The tool then receives the text byte for byte,
//! as from the command line and the library.

pub(crate) mod stdio;

use std::sync::Arc;

use rmcp::model::RequestId;
use serde::Deserialize;
use serde_json::value::RawValue;

/// The arguments text of one `tools/call`, as the client sent it: one JSON
/// object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawArguments(pub Arc<str>);

/// A `tools/call` message with its arguments taken out.
#[derive(Debug)]
pub(crate) struct TakenArguments {
    /// The message with `{}` where the arguments were.
    pub message: Vec<u8>,
    /// The arguments' text.
    pub arguments: RawArguments,
    /// The request's id, if it has one rmcp would accept.
    pub id: Option<RequestId>,
}

/// What of a JSON-RPC message is read here; the rest is rmcp's to read.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    params: Option<Params<'a>>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
}

/// The UTF-8 byte order mark, which rmcp skips at the start of a message.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// If `message` is a `tools/call` whose arguments are a JSON object, the
/// message without them and their text; otherwise (any other message, or
/// one that is not JSON) `None`, and rmcp reads it as it is.
pub(crate) fn take_arguments(message: &[u8]) -> Option<TakenArguments> {
    let json = message.strip_prefix(BOM).unwrap_or(message);
    let envelope: Envelope<'_> = serde_json::from_slice(json).ok()?;
    if envelope.method.as_deref() != Some("tools/call") {
        return None;
    }
    let raw = envelope.params?.arguments?;
    let text = raw.get();
    if !text.starts_with('{') {
        return None;
    }
    // `text` borrows from `message`: where it starts there.
    let start = (text.as_ptr() as usize).checked_sub(message.as_ptr() as usize)?;
    let end = start.checked_add(text.len())?;
    let (before, after) = (message.get(..start)?, message.get(end..)?);
    let mut rest = Vec::with_capacity(before.len() + 2 + after.len());
    rest.extend_from_slice(before);
    rest.extend_from_slice(b"{}");
    rest.extend_from_slice(after);
    let id = envelope
        .id
        .and_then(|id| serde_json::from_str::<RequestId>(id.get()).ok());
    Some(TakenArguments {
        message: rest,
        arguments: RawArguments(text.into()),
        id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_gives_up_its_arguments_text_as_written() {
        let arguments = r#"{ "n" : 12345678901234567890123, "f": 1.10, "e": 1e400, "d": 1, "d": 2, "s": "\ud800" }"#;
        let message = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"x","arguments":{arguments},"_meta":{{}}}}}}"#
        );
        let taken = take_arguments(message.as_bytes()).expect("a call");
        assert_eq!(&*taken.arguments.0, arguments);
        assert_eq!(
            String::from_utf8(taken.message).unwrap(),
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{},"_meta":{}}}"#
        );
        assert_eq!(taken.id, Some(RequestId::Number(7)));
    }

    #[test]
    fn other_messages_are_left_to_rmcp() {
        for message in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{},"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"#,
            "not json",
            "",
        ] {
            assert!(take_arguments(message.as_bytes()).is_none(), "{message}");
        }
    }

    #[test]
    fn an_escaped_method_name_and_a_byte_order_mark_are_read_as_rmcp_reads_them() {
        let message = "\u{feff}{\"id\":\"a\",\"method\":\"tools\\/call\",\"params\":{\"arguments\":{\"a\":1}}}";
        let taken = take_arguments(message.as_bytes()).expect("a call");
        assert_eq!(&*taken.arguments.0, r#"{"a":1}"#);
        assert_eq!(taken.id, Some(RequestId::String("a".into())));
        assert!(
            String::from_utf8(taken.message)
                .unwrap()
                .ends_with(r#""arguments":{}}}"#)
        );
    }
}
