//! `probe`: what an agent would see through the proxy, at each tool level,
//! without calling a model (seed 000, "The profile", "Withholding
//! individual tools").

use std::collections::BTreeSet;

use rmcp::model::Tool;

use crate::error::{Error, Result};

/// Checks `--without-tool` names against the server's tools, before
/// anything runs: a typo would withhold nothing and report with confidence
/// that the tool was worth zero.
///
/// Errors: [`Error::Usage`] naming each unknown name, with the closest
/// real tool name when one is close, and listing the server's tools.
pub fn check_withheld(server: &str, tools: &[Tool], withheld: &[String]) -> Result<()> {
    let names: BTreeSet<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let mut problems = Vec::new();
    for name in withheld {
        if name == super::proxy::SUBMIT_CSV {
            problems.push(format!(
                "'{name}' is injected by the proxy and can never be withheld"
            ));
        } else if !names.contains(name.as_str()) {
            let closest = names
                .iter()
                .map(|n| (strsim::normalized_damerau_levenshtein(name, n), *n))
                .filter(|(score, _)| *score >= 0.6)
                .max_by(|a, b| a.0.total_cmp(&b.0));
            problems.push(match closest {
                Some((_, n)) => format!("'{name}' is not a tool of {server} (did you mean '{n}'?)"),
                None => format!("'{name}' is not a tool of {server}"),
            });
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(Error::Usage(format!(
        "--without-tool: {}. The server's tools: {}.",
        problems.join("; "),
        names.iter().copied().collect::<Vec<_>>().join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(names: &[&str]) -> Vec<Tool> {
        names
            .iter()
            .map(|n| Tool::new(n.to_string(), "", std::sync::Arc::new(Default::default())))
            .collect()
    }

    #[test]
    fn unknown_names_get_a_did_you_mean_and_the_list() {
        let t = tools(&["get_schema", "query", "route_query"]);
        assert!(check_withheld("s", &t, &["get_schema".into()]).is_ok());
        let err = check_withheld("s", &t, &["get_shema".into(), "zzz".into()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--without-tool: 'get_shema' is not a tool of s (did you mean 'get_schema'?); 'zzz' is not a tool of s. The server's tools: get_schema, query, route_query."
        );
        let err = check_withheld("s", &t, &["submit_csv".into()]).unwrap_err();
        assert!(err.to_string().contains("can never be withheld"));
    }
}
