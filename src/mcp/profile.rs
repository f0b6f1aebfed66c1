//! Profiles: a small TOML file naming only how to reach the server under
//! test (seed 000, "The profile"). Nothing about tools is configured: the
//! proxy discovers the tool list from the server itself.
//!
//! ```toml
//! name = "mcp-proto-okn"
//!
//! [upstream]
//! transport = "http"
//! url = "https://apps.okn.us/okn-mcp/mcp"
//! # headers = { Authorization = "Bearer ..." }   # sent, never recorded
//! ```
//!
//! ```toml
//! name = "mcp-proto-okn"
//!
//! [upstream]
//! transport = "stdio"
//! command = "uv"
//! args = ["run", "--directory", "~/GitRepositories/mcp-proto-okn", "mcp-proto-okn-unified"]
//! # cwd = "..."
//! # env = { KEY = "value" }
//! ```
//!
//! Unknown keys and missing fields are errors naming the file and key. A
//! leading `~` in `command`, `args` and `cwd` is the home folder.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A parsed profile.
#[derive(Clone, PartialEq, Eq)]
pub struct Profile {
    /// The server's name: it appears in condition folder names and reports.
    pub name: String,
    /// How to reach it.
    pub upstream: Upstream,
    /// The file it came from.
    pub path: PathBuf,
}

/// How the proxy reaches the server under test.
#[derive(Clone, PartialEq, Eq)]
pub enum Upstream {
    /// A child process speaking MCP over stdio.
    Stdio {
        /// The program (`~` expanded).
        command: String,
        /// Its arguments (`~` expanded).
        args: Vec<String>,
        /// Working folder (`~` expanded).
        cwd: Option<PathBuf>,
        /// Extra environment variables.
        env: BTreeMap<String, String>,
    },
    /// A streamable-HTTP MCP endpoint.
    Http {
        /// The MCP endpoint URL.
        url: String,
        /// Extra request headers, e.g. `Authorization`. Used, never recorded:
        /// they may carry credentials (../shared/DESIGN.md, "Credentials never land on
        /// disk").
        headers: BTreeMap<String, String>,
    },
}

/// Redacts header values so that `{:?}` can never leak a credential.
impl fmt::Debug for Upstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Upstream::Stdio {
                command,
                args,
                cwd,
                env,
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("cwd", cwd)
                .field("env_keys", &env.keys().collect::<Vec<_>>())
                .finish(),
            Upstream::Http { url, headers } => f
                .debug_struct("Http")
                .field("url", url)
                .field("header_names", &headers.keys().collect::<Vec<_>>())
                .finish(),
        }
    }
}

impl fmt::Debug for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Profile")
            .field("name", &self.name)
            .field("upstream", &self.upstream)
            .field("path", &self.path)
            .finish()
    }
}

/// What a profile contributes to shareable records (condition files, logs):
/// everything but header values and environment values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProfileRecord {
    /// The server's name.
    pub name: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// For stdio: the command line; for http: the URL.
    pub target: String,
    /// Header names sent (values omitted).
    pub header_names: Vec<String>,
    /// Environment variable names set (values omitted).
    pub env_names: Vec<String>,
}

impl Profile {
    /// Reads and checks a profile file.
    ///
    /// Errors (each naming the file, the key, and the line where TOML gives
    /// one): unreadable file, TOML syntax, unknown key, missing field, wrong
    /// type, unknown transport.
    pub fn load(path: &Path) -> Result<Profile> {
        let text = crate::error::read_text(path)?;
        let table: toml::Table = toml::from_str(&text).map_err(|e| {
            let line = e
                .span()
                .map(|s| 1 + text[..s.start.min(text.len())].matches('\n').count() as u64);
            match line {
                Some(line) => Error::at_line(path, line, e.message().to_string()),
                None => Error::file(path, e.message().to_string()),
            }
        })?;
        let at = |key: &str| line_of_key(&text, key);
        let err = |key: &str, message: String| match at(key) {
            Some(line) => Error::at_line(path, line, message),
            None => Error::file(path, message),
        };

        for key in table.keys() {
            if key != "name" && key != "upstream" {
                return Err(err(
                    key,
                    format!("unknown key '{key}' (a profile has 'name' and an [upstream] table)"),
                ));
            }
        }
        let name = match table.get("name") {
            Some(toml::Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
            Some(_) => return Err(err("name", "'name' must be a non-empty string".into())),
            None => {
                return Err(Error::file(
                    path,
                    "missing key 'name' (the server's name, used in condition folder names)",
                ));
            }
        };
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            || name.starts_with(['.', '-'])
        {
            return Err(err(
                "name",
                format!(
                    "'name' = \"{name}\" must use only letters, digits, '-', '_' and '.', and start with a letter or digit (it names folders)"
                ),
            ));
        }
        let upstream = match table.get("upstream") {
            Some(toml::Value::Table(t)) => t,
            Some(_) => {
                return Err(err(
                    "upstream",
                    "'upstream' must be a table: [upstream]".into(),
                ));
            }
            None => {
                return Err(Error::file(
                    path,
                    "missing table [upstream] (transport = \"stdio\" or \"http\")",
                ));
            }
        };
        let transport = match upstream.get("transport") {
            Some(toml::Value::String(s)) => s.as_str(),
            Some(_) => {
                return Err(err(
                    "transport",
                    "'transport' must be \"stdio\" or \"http\"".into(),
                ));
            }
            None => {
                return Err(err(
                    "upstream",
                    "missing key 'transport' in [upstream] (\"stdio\" or \"http\")".into(),
                ));
            }
        };
        let allowed: &[&str] = match transport {
            "stdio" => &["transport", "command", "args", "cwd", "env"],
            "http" => &["transport", "url", "headers"],
            other => {
                return Err(err(
                    "transport",
                    format!("unknown transport \"{other}\" (expected \"stdio\" or \"http\")"),
                ));
            }
        };
        for key in upstream.keys() {
            if !allowed.contains(&key.as_str()) {
                return Err(err(
                    key,
                    format!(
                        "unknown key '{key}' in [upstream] for transport \"{transport}\" (expected {})",
                        allowed[1..].join(", ")
                    ),
                ));
            }
        }
        let string = |key: &str| -> Result<Option<String>> {
            match upstream.get(key) {
                None => Ok(None),
                Some(toml::Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(err(key, format!("'{key}' in [upstream] must be a string"))),
            }
        };
        let map = |key: &str| -> Result<BTreeMap<String, String>> {
            match upstream.get(key) {
                None => Ok(BTreeMap::new()),
                Some(toml::Value::Table(t)) => t
                    .iter()
                    .map(|(k, v)| match v {
                        toml::Value::String(s) => Ok((k.clone(), s.clone())),
                        _ => Err(err(
                            key,
                            format!("'{key}.{k}' in [upstream] must be a string"),
                        )),
                    })
                    .collect(),
                Some(_) => Err(err(
                    key,
                    format!("'{key}' in [upstream] must be a table of strings"),
                )),
            }
        };
        let upstream = match transport {
            "stdio" => {
                let command = match string("command")? {
                    Some(c) if !c.trim().is_empty() => c,
                    Some(_) => {
                        return Err(err(
                            "command",
                            "'command' in [upstream] is empty: name the program that starts the server".into(),
                        ));
                    }
                    None => {
                        return Err(err(
                            "upstream",
                            "missing key 'command' in [upstream] (the program that starts the server)".into(),
                        ));
                    }
                };
                let args = match upstream.get("args") {
                    None => Vec::new(),
                    Some(toml::Value::Array(items)) => items
                        .iter()
                        .map(|v| match v {
                            toml::Value::String(s) => Ok(expand_home(s)),
                            _ => Err(err(
                                "args",
                                "'args' in [upstream] must be a list of strings".into(),
                            )),
                        })
                        .collect::<Result<Vec<_>>>()?,
                    Some(_) => {
                        return Err(err(
                            "args",
                            "'args' in [upstream] must be a list of strings".into(),
                        ));
                    }
                };
                Upstream::Stdio {
                    command: expand_home(&command),
                    args,
                    cwd: string("cwd")?.map(|c| PathBuf::from(expand_home(&c))),
                    env: map("env")?,
                }
            }
            _ => {
                let url = string("url")?.ok_or_else(|| {
                    err(
                        "upstream",
                        "missing key 'url' in [upstream] (the server's MCP endpoint)".into(),
                    )
                })?;
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(err(
                        "url",
                        format!("'url' = \"{url}\" must start with http:// or https://"),
                    ));
                }
                Upstream::Http {
                    url,
                    headers: map("headers")?,
                }
            }
        };
        Ok(Profile {
            name,
            upstream,
            path: path.to_path_buf(),
        })
    }

    /// The shareable description of this profile (no header or env values).
    pub fn record(&self) -> ProfileRecord {
        match &self.upstream {
            Upstream::Stdio {
                command, args, env, ..
            } => ProfileRecord {
                name: self.name.clone(),
                transport: "stdio".into(),
                target: std::iter::once(command.as_str())
                    .chain(args.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" "),
                header_names: Vec::new(),
                env_names: env.keys().cloned().collect(),
            },
            Upstream::Http { url, headers } => ProfileRecord {
                name: self.name.clone(),
                transport: "http".into(),
                target: redact_url(url),
                header_names: headers.keys().cloned().collect(),
                env_names: Vec::new(),
            },
        }
    }
}

/// `url` with credentials hidden: a password in the authority and every
/// query-string value become `***` (for messages and records; the real URL
/// is only ever sent).
pub fn redact_url(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let mut out = match base.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = match rest.find('/') {
                Some(i) => (&rest[..i], &rest[i..]),
                None => (rest, ""),
            };
            let authority = match authority.rsplit_once('@') {
                Some((user, host)) => match user.split_once(':') {
                    Some((name, _)) => format!("{name}:***@{host}"),
                    None => format!("***@{host}"),
                },
                None => authority.to_string(),
            };
            format!("{scheme}://{authority}{path}")
        }
        None => base.to_string(),
    };
    if let Some(query) = query {
        let hidden: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, _)) => format!("{key}=***"),
                None => pair.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&hidden.join("&"));
    }
    out
}

/// `~` or `~/...` at the start of `text` becomes the home folder.
pub fn expand_home(text: &str) -> String {
    let home = std::env::var("HOME").unwrap_or_default();
    if home.is_empty() {
        return text.to_string();
    }
    if text == "~" {
        return home;
    }
    match text.strip_prefix("~/") {
        Some(rest) => format!("{}/{rest}", home.trim_end_matches('/')),
        None => text.to_string(),
    }
}

/// The 1-based line where `key` is first assigned (`key =` or `[key]`).
fn line_of_key(text: &str, key: &str) -> Option<u64> {
    text.lines().enumerate().find_map(|(i, line)| {
        let line = line.trim_start();
        let assigns = line
            .strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with('=') || rest.starts_with('.'));
        let table = line.trim_end() == format!("[{key}]");
        (assigns || table).then_some(i as u64 + 1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Profile> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        std::fs::write(&path, text).unwrap();
        Profile::load(&path).map_err(|e| match e {
            Error::AtLine { line, message, .. } => Error::Other(format!("{line}: {message}")),
            Error::File { message, .. } => Error::Other(message),
            other => other,
        })
    }

    #[test]
    fn stdio_profiles_expand_home() {
        // SAFETY-free: tests in this module only read HOME.
        let home = std::env::var("HOME").unwrap();
        let p = load("name = \"demo\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"~/bin/x\"\nargs = [\"--dir\", \"~/kg\", \"plain\"]\ncwd = \"~\"\nenv = { A = \"1\" }\n").unwrap();
        assert_eq!(p.name, "demo");
        let Upstream::Stdio {
            command,
            args,
            cwd,
            env,
        } = &p.upstream
        else {
            panic!()
        };
        assert_eq!(command, &format!("{home}/bin/x"));
        assert_eq!(
            args,
            &[
                "--dir".to_string(),
                format!("{home}/kg"),
                "plain".to_string()
            ]
        );
        assert_eq!(cwd.as_deref(), Some(Path::new(&home)));
        assert_eq!(env.get("A").map(String::as_str), Some("1"));
        assert_eq!(p.record().env_names, ["A"]);
    }

    #[test]
    fn headers_never_reach_a_record_or_debug_output() {
        let p = load("name = \"remote\"\n[upstream]\ntransport = \"http\"\nurl = \"https://example.org/mcp\"\nheaders = { Authorization = \"Bearer s3cret\" }\n").unwrap();
        let record = serde_json::to_string(&p.record()).unwrap();
        assert!(!record.contains("s3cret"), "{record}");
        assert!(record.contains("Authorization"), "{record}");
        assert!(!format!("{p:?}").contains("s3cret"));
    }

    /// Review finding: a startup error echoed a URL with its password and
    /// API key into metrics.json.
    #[test]
    fn urls_are_recorded_without_credentials() {
        assert_eq!(
            redact_url("http://admin:PASSW0RD@127.0.0.1:18809/mcp?api_key=QSECRET&v=1"),
            "http://admin:***@127.0.0.1:18809/mcp?api_key=***&v=***"
        );
        assert_eq!(
            redact_url("https://apps.okn.us/okn-mcp/mcp"),
            "https://apps.okn.us/okn-mcp/mcp"
        );
        assert_eq!(redact_url("http://token@host/x"), "http://***@host/x");
    }

    #[test]
    fn unknown_keys_and_missing_fields_are_named() {
        let cases = [
            (
                "name = \"x\"\nnmae = 1\n[upstream]\ntransport = \"http\"\nurl = \"http://a\"\n",
                "2: unknown key 'nmae'",
            ),
            (
                "name = \"x\"\n[upstream]\ntransport = \"http\"\nurl = \"http://a\"\nheader = {}\n",
                "5: unknown key 'header' in [upstream] for transport \"http\" (expected url, headers)",
            ),
            (
                "name = \"x\"\n[upstream]\ntransport = \"stdio\"\n",
                "2: missing key 'command' in [upstream]",
            ),
            (
                "name = \"x\"\n[upstream]\ntransport = \"ws\"\n",
                "3: unknown transport \"ws\"",
            ),
            (
                "[upstream]\ntransport = \"http\"\nurl = \"http://a\"\n",
                "missing key 'name'",
            ),
            ("name = \"x\"\n", "missing table [upstream]"),
            (
                "name = \"a b\"\n[upstream]\ntransport = \"http\"\nurl = \"http://a\"\n",
                "1: 'name' = \"a b\" must use only",
            ),
            (
                "name = \"x\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"c\"\nargs = \"--x\"\n",
                "5: 'args' in [upstream] must be a list of strings",
            ),
            ("name = \"x\"\n[upstream\n", "2: "),
        ];
        for (text, want) in cases {
            let got = load(text).unwrap_err().to_string();
            assert!(
                got.starts_with(want),
                "{text:?}\n  want {want}\n  got  {got}"
            );
        }
    }
}
