//! What a server under test reached over streamable HTTP says of its build
//! beyond its MCP `serverInfo` (`docs/FORMAT.md`, "`conditions/NAME.json`",
//! `settings.server_info`; issue 24, item 31): the response headers of its
//! reply to `initialize` that name the software or a build, version,
//! commit or revision, as a deployment may (`Server`, `X-Powered-By`,
//! `X-Build-Id`, `X-Commit-Sha`, ...).
//!
//! rmcp's transport keeps the reply's headers to itself, so they are asked
//! for by one `initialize` request of our own, with the profile's headers,
//! and the session it opened is closed (`DELETE`). Nothing a credential
//! could be in is kept: no cookie, authorization, token, key or session
//! header, and no value that holds a header value the profile sends.

use std::collections::BTreeMap;
use std::time::Duration;

/// Headers whose name says they carry a secret or a session: never kept.
pub const SECRET_NAMES: [&str; 7] = [
    "cookie", "auth", "token", "key", "secret", "session", "password",
];

/// Words that, in a header's name, say it names a build.
pub const BUILD_WORDS: [&str; 6] = ["build", "commit", "revision", "version", "release", "sha"];

/// Whether a response header is one that names the software or its build:
/// `server`, `x-powered-by`, or a name holding one of [`BUILD_WORDS`];
/// never one of the protocol's own (`mcp-*`) nor one whose name says it
/// holds a secret ([`SECRET_NAMES`]).
pub fn names_a_build(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    if name.starts_with("mcp-") || SECRET_NAMES.iter().any(|s| name.contains(s)) {
        return false;
    }
    name == "server" || name == "x-powered-by" || BUILD_WORDS.iter().any(|w| name.contains(w))
}

/// The `initialize` request sent: the same client name and version the
/// proxy's rmcp client announces.
fn initialize_body() -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "okn-benchmark", "version": env!("CARGO_PKG_VERSION")},
        },
    })
    .to_string()
}

/// The response headers of the server at `url` (a streamable-HTTP MCP
/// endpoint) to an `initialize` request sent with `headers` (the
/// profile's), that name its software or build ([`names_a_build`]), by
/// lowercase name, each value at most 200 characters; a value holding one
/// of `headers`' values is left out. Within `timeout`.
///
/// Errors: the request could not be sent or answered (a one-line reason):
/// the caller records no headers then, and says so.
pub fn build_headers(
    url: &str,
    headers: &BTreeMap<String, String>,
    timeout: Duration,
) -> Result<BTreeMap<String, String>, String> {
    super::upstream::install_crypto_provider();
    let agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .max_redirects(0)
        .user_agent(concat!("okn-benchmark/", env!("CARGO_PKG_VERSION")))
        .build()
        .new_agent();
    let mut request = agent
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let response = request
        .send(initialize_body())
        .map_err(|e| format!("{}: {e}", super::profile::redact_url(url)))?;
    let secrets: Vec<&str> = headers
        .values()
        .map(String::as_str)
        .filter(|v| !v.is_empty())
        .collect();
    let mut found = BTreeMap::new();
    for (name, value) in response.headers() {
        let Ok(value) = value.to_str() else { continue };
        if names_a_build(name.as_str()) && !secrets.iter().any(|s| value.contains(s)) {
            // Cut only once redacted (`ServerInfo::redacted`): a cut
            // could leave the start of a value (issue 24, item 27).
            found.insert(
                name.as_str().to_ascii_lowercase(),
                value.trim().chars().take(64 * 1024).collect(),
            );
        }
    }
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    drop(response);
    // The session this request opened is the server's to keep otherwise.
    if let Some(session) = session {
        let mut close = agent.delete(url).header("mcp-session-id", session.as_str());
        for (name, value) in headers {
            close = close.header(name.as_str(), value.as_str());
        }
        let _ = close.call();
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_headers_that_name_a_build_and_no_secret_are_kept() {
        for name in [
            "Server",
            "X-Powered-By",
            "X-Build-Id",
            "x-commit-sha",
            "X-App-Version",
            "X-Git-Revision",
        ] {
            assert!(names_a_build(name), "{name}");
        }
        for name in [
            "mcp-session-id",
            "mcp-protocol-version",
            "set-cookie",
            "x-auth-version",
            "x-api-key-version",
            "content-type",
            "date",
        ] {
            assert!(!names_a_build(name), "{name}");
        }
    }
}
