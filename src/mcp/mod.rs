//! The MCP layer (README.md, "Servers under test: profiles, the proxy,
//! probe"): everything that speaks the Model Context Protocol, through the
//! `rmcp` crate.
//!
//! - [`profile`]: how to reach a server under test (stdio or HTTP).
//! - [`upstream`]: the rmcp client connection to it.
//! - [`proxy`]: the MCP server an agent host starts: filtering, submit_csv,
//!   guards, logging.
//! - [`framing`]: the proxy's stdio lines, read before rmcp so a request it
//!   cannot read is answered and recorded.
//! - [`calllog`]: `calls.json` and `metrics.json`, and soft-error detection.
//! - [`sparql_only`]: the server-independent control.
//! - [`probe`]: checks before spending model time.
//! - [`kg_server`]: the demo KG server over the embedded store.

pub mod calllog;
pub mod framing;
pub mod kg_server;
pub mod probe;
pub mod profile;
pub mod proxy;
pub mod sparql_only;
pub mod upstream;

use crate::error::{Error, Result};

/// The tokio runtime every MCP session runs on (rmcp is async; the rest of
/// the crate is not, so each command that speaks MCP builds one and blocks
/// on it).
///
/// Errors: [`Error::Other`] when the runtime cannot be started (no threads
/// or file descriptors left).
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Runtime::new()
        .map_err(|e| Error::Other(format!("cannot start the async runtime: {e}")))
}
