//! `okn-benchmark`: measure how well an agent answers questions through an
//! MCP server over SPARQL knowledge graphs, and publish the study.
//!
//! The library is the whole product; the binary (`src/main.rs`) is the
//! command-line definition plus glue ([`cli`]). The map of the code, where
//! each rule lives and the invariants: `ARCHITECTURE.md`. Scoring
//! contract: `docs/SCORING.md`; file formats: `docs/FORMAT.md`.
//!
//! - [`render`]: everything published (exporters over the view model).
//! - [`report`]: loading runs roots and studies into the view model,
//!   aggregation, and every report table as a grid.
//! - [`runs`]: recording and judging episodes (`run`, `rescore`, `freeze`).
//! - [`agent`]: agent hosts (`claude -p`, the scripted agent, the stand-in
//!   model).
//! - [`layout`]: where everything lives in a runs root.
//! - [`format`](mod@format): how numbers and verdicts are worded.
//! - [`corpus`]: `.rq` records, tiers from file names, selection, git corpora.
//! - [`table`]: the one `Table { columns, rows }` type and CSV.
//! - [`sparql`]: endpoints (embedded Oxigraph store, SPARQL 1.1 Protocol).
//! - [`score`]: denotation scoring.
//! - [`reference`](mod@reference): ground truth from answer keys, with fingerprints.
//! - [`selfcheck`]: the scorer against transformed copies of ground truth.
//! - [`mcp`]: profiles, the proxy, the sparql-only control, the demo KG
//!   server, probe.
//! - [`suggest`]: "did you mean" for misspelt names.
//! - [`toml_file`]: reading TOML with errors at file and line.

/// `println!` that never panics: a closed stdout (`okn-benchmark ... | head
/// -1`) is not an error of the command, and `run` goes on recording when
/// its terminal goes away.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// `print!` that never panics (see `outln!`).
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

/// `eprintln!` that never panics on a closed stderr (see `outln!`).
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        // Control and bidirectional characters quoted from a record or a
        // flag are shown, never sent raw (`text::for_terminal`).
        let text = format!($($arg)*);
        let _ = writeln!(std::io::stderr(), "{}", $crate::text::for_terminal(&text));
    }};
}

pub mod agent;
pub mod catalog;
pub mod cli;
#[cfg(feature = "harness")]
pub mod config;
pub mod corpus;
pub mod error;
pub mod expectations;
pub mod format;
pub mod fsutil;
pub mod fuzzing;
#[cfg(feature = "harness")]
pub mod http;
pub mod interrupt;
pub mod layout;
pub mod mcp;
pub mod reference;
pub mod render;
pub mod report;
pub mod runs;
pub mod score;
pub mod selfcheck;
pub mod sparql;
pub mod suggest;
pub mod table;
pub mod text;
pub mod toml_file;

pub use error::{Error, Result};

#[cfg(test)]
mod architecture;
#[cfg(test)]
mod testing;
