//! A condition's tool level: what the proxy offers the agent, recorded in
//! every condition file (docs/FORMAT.md). Apart from the proxy so that the
//! records model reads it without the MCP stack.

/// The tool level of a condition, recorded as `all-tools` or
/// `sparql-only`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolLevel {
    /// The server's tools and instructions (minus any withheld), plus submit_csv.
    AllTools,
    /// No server: one neutral SPARQL tool, a preamble, and submit_csv.
    SparqlOnly,
}

impl ToolLevel {
    /// `all-tools` or `sparql-only`.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolLevel::AllTools => "all-tools",
            ToolLevel::SparqlOnly => "sparql-only",
        }
    }
}
