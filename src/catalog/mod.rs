//! The catalog (`docs/CATALOG.md`): deterministic tool calls against one
//! MCP server, each checked against typed expectations, with no agent and
//! no model. [`mod@format`] holds `catalog.json` as types, [`checks`] the checks
//! and statuses on a tool reply, [`validate`] the
//! offline rules a catalog keeps, [`select`] the paths that find values
//! and candidates in a tool's result; [`run`] runs it, [`report`] and
//! [`robustness`] describe a run, [`compare`] compares two, and
//! [`published`] finds and loads runs and comparisons for `build`.

pub mod checks;
pub mod compare;
pub mod format;
pub mod published;
pub mod report;
pub mod robustness;
pub mod run;
pub mod select;
pub mod validate;
pub mod verify;
