//! `toolhost serve` driven by MCP clients this project did not write: the
//! official Python SDK (`mcp`, over stdio and HTTP, at protocol versions
//! 2025-11-25 and 2026-07-28) and the official TypeScript SDK, and agents
//! built with the OpenAI Agents SDK, LangChain and pydantic-ai on a
//! scripted model (`frameworks`). They are pinned beside these tests
//! (`python/`, `typescript/`, `frameworks/`) and installed into
//! `.toolchains/mcp-<client>/` on first use (`cargo xtask mcp-clients`).
//! The official conformance suite runs against the HTTP server
//! (`conformance/`, with its baseline of scenarios that do not apply).
//! Raw JSON-RPC and HTTP requests check what an SDK would not send:
//! malformed and oversized input, bounds, reloads, draining, and the
//! Tasks extension, which neither SDK speaks yet (`tasks.rs`).

mod arguments;
mod conformance;
mod fixture;
mod frameworks;
mod http;
mod oci;
mod python;
mod raw;
mod server;
mod sessions;
mod stdio;
mod tasks;
mod typescript;
