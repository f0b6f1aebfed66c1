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
//! - [`calllog`]: `calls.json` and `metrics.json`, and query detection.
//! - [`soft_error`]: failures hidden in successful replies.
//! - [`level`]: a condition's tool level.
//! - [`sparql_only`]: the server-independent control.
//! - [`probe`]: checks before spending model time.
//! - [`redact`]: a profile's header and environment values, replaced in
//!   everything written.
//! - [`server_report`]: what an HTTP server's reply headers say of its
//!   build.
//! - [`kg_server`]: the demo KG server over the embedded store.
//!
//! Without the `harness` feature (Cargo.toml) only [`calllog`], [`level`],
//! [`profile`], [`redact`] and [`soft_error`] are compiled: what the records of a runs root name.

pub mod calllog;
#[cfg(feature = "harness")]
pub mod framing;
#[cfg(feature = "harness")]
pub mod kg_server;
pub mod level;
#[cfg(feature = "harness")]
pub mod probe;
pub mod profile;
#[cfg(feature = "harness")]
pub mod proxy;
pub mod redact;
pub mod runner_env;
#[cfg(feature = "harness")]
pub mod server_report;
pub mod soft_error;
#[cfg(feature = "harness")]
pub mod sparql_only;
#[cfg(feature = "harness")]
pub mod upstream;

#[cfg(feature = "harness")]
use crate::error::{Error, Result};

#[cfg(feature = "harness")]
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
