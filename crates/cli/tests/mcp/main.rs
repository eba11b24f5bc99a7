//! `toolhost serve` driven by MCP clients this project did not write: the
//! official Python SDK (`mcp`, over stdio and HTTP, at protocol versions
//! 2025-11-25 and 2026-07-28) and the official TypeScript SDK. The SDKs
//! are pinned beside these tests (`python/`, `typescript/`) and installed
//! into `.toolchains/mcp-<client>/` on first use (`cargo xtask mcp-clients`).

mod fixture;
mod python;
mod server;
mod typescript;
