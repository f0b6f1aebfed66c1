//! The integration tests, as one test binary: it links the crate and its
//! dependencies once, instead of once per file. One module per command or
//! area; `support` holds the harness they share (the binary under test,
//! scratch folders, the tools `scripts/test` installs, the `build`
//! fixture).
//!
//! `cargo test --test it MODULE` runs one area, e.g. `cargo test --test it
//! build::`.

mod support;

mod browser;
mod build;
mod cases;
mod claude;
mod corpus;
mod demo_roots;
mod http_endpoint;
mod mcp_proxy;
mod outputs;
mod paper_doc;
mod probe;
mod real_documents;
mod reference;
mod runs;
mod schemas;
mod score;
mod score_properties;
mod w3c_results;
