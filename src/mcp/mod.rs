//! The MCP layer (seed 000, "The profile", "What gets measured", "How it
//! works"): everything that speaks the Model Context Protocol, through the
//! `rmcp` crate.
//!
//! - [`profile`]: how to reach a server under test (stdio or HTTP).
//! - [`kg_server`]: the demo KG server over the embedded store.
pub mod calllog;
pub mod kg_server;
pub mod probe;
pub mod profile;
pub mod proxy;
pub mod sparql_only;
pub mod upstream;
