//! The MCP layer (seed 000, "The profile", "What gets measured", "How it
//! works"): everything that speaks the Model Context Protocol, through the
//! `rmcp` crate.
//!
//! - [`profile`]: how to reach a server under test (stdio or HTTP).
//! - [`upstream`]: the rmcp client connection to it.
//! - [`proxy`]: the MCP server an agent host starts: filtering, submit_csv,
//!   guards, logging.
//! - [`calllog`]: `calls.json` and `metrics.json`, and soft-error detection.
//! - [`sparql_only`]: the server-independent control.
//! - [`probe`]: checks before spending model time.
//! - [`kg_server`]: the demo KG server over the embedded store.

pub mod calllog;
pub mod kg_server;
pub mod probe;
pub mod profile;
pub mod proxy;
pub mod sparql_only;
pub mod upstream;
