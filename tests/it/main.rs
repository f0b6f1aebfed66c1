//! The integration tests, as one test binary: it links the crate and its
//! dependencies once, instead of once per file. One module per command or
//! area; `support` holds the harness they share (the binary under test,
//! scratch folders, the tools `scripts/test` installs, the `build`
//! fixture).
//!
//! `cargo test --test it MODULE` runs one area, e.g. `cargo test --test it
//! build::`.
//!
//! Conventions:
//! - A command-line test is written with [`support::Test`]: the arguments,
//!   the files to write first, and what stdout, stderr and the exit status
//!   must be; a mismatch fails with a diff.
//! - A test that guards one fixed defect goes in its area's `regression`
//!   module, named after what it guards, with a one-line comment saying
//!   what broke. One defect, one test.
//! - Outputs whose every byte matters are snapshot-tested in [`outputs`].
//! - Data the repository does not hold is reached through
//!   [`support::shared`], the one place a test may be skipped.

mod support;

mod agents;
mod browser;
mod build;
mod cases;
mod catalog;
mod census;
mod chain;
mod claude;
mod corpus;
mod credentials;
mod demo_roots;
mod fuzzing;
mod glance;
mod hosts;
mod http_endpoint;
mod mcp_proxy;
mod openai_agent;
mod outputs;
mod paper_doc;
mod probe;
mod probe_agent;
mod publishing;
mod readme_examples;
mod real_documents;
mod records;
mod reference;
mod run_guards;
mod runs;
mod schemas;
mod score;
mod score_model;
mod score_oracle;
mod score_properties;
mod standin_wire;
mod sweep;
mod trajectory;
mod trajectory_faults;
mod trajectory_gate;
mod views;
mod w3c_results;
mod workflows;
