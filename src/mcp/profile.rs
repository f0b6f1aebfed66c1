//! Profiles: a small TOML file naming only how to reach the server under
//! test (README.md, "Servers under test: profiles, the proxy, probe").
//! Nothing about tools is configured: the proxy discovers the tool list
//! from the server itself.
//!
//! ```toml
//! name = "mcp-proto-okn"
//!
//! [upstream]
//! transport = "http"
//! url = "https://apps.okn.us/okn-mcp/mcp"
//! # headers = { Authorization = "Bearer ..." }   # sent, never recorded
//! # public_headers = ["Accept"]   # not secrets: recorded, never redacted
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
//! # env = { KEY = "value", DEFAULT_REGION = "New Mexico" }
//! # public_env = ["DEFAULT_REGION"]   # not secrets: recorded, never redacted
//! # pass_env = ["GITHUB_TOKEN"]   # inherited credentials it may have: redacted
//! ```
//!
//! A stdio server inherits this process's environment but for the
//! variables that hold credentials (`crate::mcp::runner_env`), which it
//! gets only when `env` sets them or `pass_env` names them.
//!
//! Unknown keys and missing fields are errors naming the file and key (and
//! the line, read from the key's [`Spanned`] place). A leading `~` in
//! `command`, `args` and `cwd` is the home folder where the server is
//! started; records name the profile as written ([`Profile::record`]).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::toml_file::{Spanned, SpannedTable, TomlFile};

/// A parsed profile.
#[derive(Clone, PartialEq, Eq)]
pub struct Profile {
    /// The server's name: it appears in condition folder names and reports.
    pub name: String,
    /// How to reach it.
    pub upstream: Upstream,
    /// The file it came from.
    pub path: PathBuf,
    /// A stdio server's command and arguments as the file writes them
    /// (`~` not expanded), for records ([`Profile::record`]); empty for
    /// HTTP.
    written: Vec<String>,
    /// The environment variables (stdio) or headers (HTTP) the profile
    /// declares public (`public_env`, `public_headers`): not credentials,
    /// so recorded with their values and never redacted (issue 24, item
    /// 27).
    public: std::collections::BTreeSet<String>,
    /// The variables of the runner's environment that hold credentials
    /// and that a stdio server still inherits (`pass_env`; issue 24, item
    /// 27): their values are secrets of the profile ([`Profile::secrets`]).
    pass_env: std::collections::BTreeSet<String>,
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
        /// they may carry credentials (README.md, "Servers under test":
        /// header values are sent and never written anywhere).
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
/// everything but header values and environment values, the profile as
/// written rather than as this machine resolved it (issue 24, item 28).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProfileRecord {
    /// The server's name.
    pub name: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// For stdio: the command line as the profile writes it (`~` kept, an
    /// absolute path under the home folder written from `~`, another
    /// absolute path made relative to the profile's folder); for http: the URL,
    /// credentials hidden ([`redact_url`]). A header or environment value
    /// in it is redacted ([`Profile::secrets`]).
    pub target: String,
    /// Header names sent (values omitted).
    pub header_names: Vec<String>,
    /// Environment variable names set (values omitted).
    pub env_names: Vec<String>,
    /// The environment variables (stdio) or headers (HTTP) the profile
    /// declares public (`public_env`, `public_headers`), with their values:
    /// not credentials, so recorded, and never redacted (issue 24, item
    /// 27). Absent when none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub public: BTreeMap<String, String>,
}

/// What the server under test resolves to, as a condition's identity and
/// each `episode.json` record it (`docs/FORMAT.md`, "`conditions/NAME.json`";
/// issue 24, item 11): the transport, and the command, its arguments and
/// working folder (stdio) or the URL (http; credentials in it hidden,
/// [`redact_url`]); for the sparql-only control, its endpoint (the URL, or
/// the digest of its RDF data). Never a header or environment value but
/// those the profile declares public ([`ServerTarget::public`]). A
/// path is kept as the profile gives it (the home folder written `~`), so
/// a copied checkout resumes and another server does not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServerTarget {
    /// `stdio` or `http` (a profile), or `sparql-only` (the control).
    pub transport: String,
    /// The program that starts a stdio server, as the profile names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Its working folder, as the profile names it (relative: to the
    /// profile's folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The MCP endpoint (http), or the control's SPARQL URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The control's RDF data: its identity (`sha256:...`, the digest
    /// ground-truth fingerprints use).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// The environment variables or headers the profile declares public,
    /// with their values ([`ProfileRecord::public`]): they set how the
    /// server runs. Absent when none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub public: BTreeMap<String, String>,
}

impl Profile {
    /// What this profile resolves to ([`ServerTarget`]): no header or
    /// environment value.
    ///
    /// Paths are written as [`ProfileRecord::target`] writes them (issue
    /// 24, item 28): under the home folder from `~`, any other absolute
    /// path relative to the profile's folder, so the identity names no
    /// folder of this machine; and a secret value of the profile in them is
    /// redacted ([`Profile::secrets`]).
    pub fn target(&self) -> ServerTarget {
        // A value of the profile written into an argument is redacted here
        // as in the record (issue 24, item 27).
        let target = match &self.upstream {
            Upstream::Stdio {
                command, args, cwd, ..
            } => {
                let home = std::env::var("HOME").unwrap_or_default();
                let folder = self.folder();
                let word = |w: &str| written_word(w, &home, &folder);
                ServerTarget {
                    transport: "stdio".into(),
                    command: Some(word(command)),
                    args: args.iter().map(|a| word(a)).collect(),
                    cwd: cwd.as_ref().map(|c| word(&c.to_string_lossy())),
                    url: None,
                    data: None,
                    public: self.public_values(),
                }
            }
            Upstream::Http { url, .. } => ServerTarget {
                transport: "http".into(),
                command: None,
                args: Vec::new(),
                cwd: None,
                url: Some(redact_url(url)),
                data: None,
                public: self.public_values(),
            },
        };
        self.redactor().record(target)
    }

    /// Reads and checks a profile file.
    ///
    /// Errors (each naming the file, the key, and the line where TOML gives
    /// one): unreadable file, TOML syntax, unknown key, missing field, wrong
    /// type, unknown transport.
    pub fn load(path: &Path) -> Result<Profile> {
        let file = TomlFile::read(path)?;
        let top: SpannedTable = file.parse()?;
        for key in top.keys() {
            if key.get_ref() != "name" && key.get_ref() != "upstream" {
                return Err(file.error_at(
                    key,
                    format!("unknown key '{key}' (a profile has 'name' and an [upstream] table)"),
                ));
            }
        }
        let name = server_name(&file, &top)?;
        let (upstream, written, public) = Upstream::load(&file, &top)?;
        let pass_env = match &upstream {
            Upstream::Stdio { env, .. } => Upstream::pass_env(&file, env)?,
            Upstream::Http { .. } => Default::default(),
        };
        Ok(Profile {
            name,
            upstream,
            path: path.to_path_buf(),
            written,
            public,
            pass_env,
        })
    }

    /// The values a profile sets that may be credentials, each with its
    /// name, in name order (issue 24, item 27; `crate::mcp::redact`):
    /// every environment value (stdio) and header value (HTTP) but those
    /// the profile declares public; of a header value `SCHEME CREDENTIALS`
    /// (`Bearer abc...`), the credentials alone too, and of a `Cookie`
    /// header each cookie's value; and what the URL carries ([`url_secrets`]):
    /// its password (and a user with no password, which [`redact_url`]
    /// hides as a token), the `Authorization: Basic ...` value an HTTP
    /// client derives from them and sends, and the values of query and
    /// path parameters whose names say they are credentials (`api_key`,
    /// `token`, `jsessionid`, ...). An environment value is never split: it
    /// is one value, spaces and all. The values this process's environment
    /// gives the variables `pass_env` names are secrets too.
    pub fn secrets(&self) -> Vec<(String, String)> {
        let mut found: Vec<(String, String)> = Vec::new();
        match &self.upstream {
            Upstream::Stdio { env, .. } => {
                for (name, value) in env {
                    if !self.public.contains(name) {
                        found.push((name.clone(), value.clone()));
                    }
                }
                for name in &self.pass_env {
                    if let Some(value) = std::env::var_os(name) {
                        found.push((name.clone(), value.to_string_lossy().into_owned()));
                    }
                }
            }
            Upstream::Http { url, headers } => {
                for (name, value) in headers {
                    if self.public.contains(name) {
                        continue;
                    }
                    found.push((name.clone(), value.clone()));
                    if let Some((scheme, credentials)) = value.trim().split_once(' ')
                        && scheme.chars().all(|c| c.is_ascii_alphabetic())
                    {
                        found.push((name.clone(), credentials.trim().to_string()));
                    }
                    if name.eq_ignore_ascii_case("cookie") {
                        for pair in value.split(';') {
                            if let Some((_, cookie)) = pair.split_once('=') {
                                found.push((name.clone(), cookie.trim().to_string()));
                            }
                        }
                    }
                }
                found.extend(url_secrets(url));
            }
        }
        found
    }

    /// The values of the environment variables or headers the profile
    /// declares public, by name.
    fn public_values(&self) -> BTreeMap<String, String> {
        let values = match &self.upstream {
            Upstream::Stdio { env, .. } => env,
            Upstream::Http { headers, .. } => headers,
        };
        values
            .iter()
            .filter(|(name, _)| self.public.contains(*name))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect()
    }

    /// The redactor of this profile's header and environment values
    /// ([`Profile::secrets`]) and of the credentials in this process's
    /// own environment ([`super::runner_env::runner_secrets`]; issue 24,
    /// item 27).
    pub fn redactor(&self) -> super::redact::Redactor {
        let mut secrets = self.secrets();
        secrets.extend(super::runner_env::runner_secrets());
        super::redact::Redactor::new(&secrets)
    }

    /// Whether a stdio server keeps the variable `name` of this process's
    /// environment although it holds credentials: the profile's `env`
    /// sets it, or `pass_env` names it (issue 24, item 27).
    pub fn keeps_env(&self, name: &str) -> bool {
        match &self.upstream {
            Upstream::Stdio { env, .. } => env.contains_key(name) || self.pass_env.contains(name),
            Upstream::Http { .. } => false,
        }
    }

    /// The shareable description of this profile (no header or env values;
    /// `docs/FORMAT.md`, "conditions/NAME.json"): the profile as written,
    /// never this machine's home folder or an absolute path of it
    /// ([`ProfileRecord::target`]; issue 24, item 28).
    pub fn record(&self) -> ProfileRecord {
        let redactor = self.redactor();
        match &self.upstream {
            Upstream::Stdio { env, .. } => ProfileRecord {
                name: self.name.clone(),
                transport: "stdio".into(),
                target: redactor.text(&self.written_target()).into_owned(),
                header_names: Vec::new(),
                env_names: env.keys().cloned().collect(),
                public: self.public_values(),
            },
            Upstream::Http { url, headers } => ProfileRecord {
                name: self.name.clone(),
                transport: "http".into(),
                target: redactor.text(&redact_url(url)).into_owned(),
                header_names: headers.keys().cloned().collect(),
                env_names: Vec::new(),
                public: self.public_values(),
            },
        }
    }

    /// A stdio profile's program as written, with no path of this machine
    /// in it (the first word of [`ProfileRecord::target`]), for messages
    /// that are recorded (`startup_error`); the URL of an HTTP profile,
    /// credentials hidden.
    pub fn program_as_written(&self) -> String {
        match &self.upstream {
            Upstream::Http { url, .. } => redact_url(url),
            Upstream::Stdio { .. } => self
                .written_target()
                .split(' ')
                .next()
                .unwrap_or_default()
                .to_string(),
        }
    }

    /// The folder the profile file is in (absolute).
    fn folder(&self) -> std::path::PathBuf {
        crate::fsutil::absolute(&self.path)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    }

    /// A stdio profile's command line as written, with no path of this
    /// machine in it ([`ProfileRecord::target`]).
    fn written_target(&self) -> String {
        let home = std::env::var("HOME").unwrap_or_default();
        let folder = self.folder();
        self.written
            .iter()
            .map(|word| written_word(word, &home, &folder))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// One word of a recorded command line ([`ProfileRecord::target`]): an
/// absolute path (the whole word, after `=` in `--flag=/path`, or the path
/// of a `file:` URL, `file:///path` or `file:/path`) under `home` is
/// written from `~`, any other made relative to `folder`, the profile's
/// (as a relative `cwd` is read).
fn written_word(word: &str, home: &str, folder: &Path) -> String {
    let (flag, value) = match word.split_once('=') {
        Some((flag, value)) if !word.starts_with('/') && is_path(value) => {
            (&word[..flag.len() + 1], value)
        }
        _ => ("", word),
    };
    let (scheme, path) = file_url(value).unwrap_or(("", value));
    if !path.starts_with('/') {
        return word.to_string();
    }
    format!("{flag}{scheme}{}", written_path(path, home, folder))
}

/// Whether `text` is an absolute path or a `file:` URL of one.
fn is_path(text: &str) -> bool {
    text.starts_with('/') || file_url(text).is_some()
}

/// A `file:` URL's scheme as written (`file://`, `file:`, in any case) and
/// its absolute path, when `text` is one.
fn file_url(text: &str) -> Option<(&str, &str)> {
    let scheme = text.get(..5)?;
    if !scheme.eq_ignore_ascii_case("file:") {
        return None;
    }
    let rest = &text[5..];
    let slashes = if rest.starts_with("///") { 2 } else { 0 };
    let path = &rest[slashes..];
    path.starts_with('/').then(|| (&text[..5 + slashes], path))
}

/// An absolute `path`, under `home` from `~`, any other relative to
/// `folder`.
fn written_path(path: &str, home: &str, folder: &Path) -> String {
    let home = home.trim_end_matches('/');
    match path.strip_prefix(home) {
        Some(rest) if !home.is_empty() && (rest.is_empty() || rest.starts_with('/')) => {
            format!("~{rest}")
        }
        _ => {
            let parts = crate::fsutil::relative(folder, Path::new(path));
            if parts.is_empty() {
                ".".to_string()
            } else {
                parts.join("/")
            }
        }
    }
}

/// `name`: a non-empty string that can name a folder.
fn server_name(file: &TomlFile, top: &SpannedTable) -> Result<String> {
    let Some((key, value)) = top.get_key_value("name") else {
        return Err(
            file.error("missing key 'name' (the server's name, used in condition folder names)")
        );
    };
    let name = match value.get_ref() {
        toml::Value::String(s) if !s.trim().is_empty() => s.trim().to_string(),
        _ => return Err(file.error_at(key, "'name' must be a non-empty string")),
    };
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        || name.starts_with(['.', '-'])
    {
        return Err(file.error_at(
            key,
            format!(
                "'name' = \"{name}\" must use only letters, digits, '-', '_' and '.', and start with a letter or digit (it names folders)"
            ),
        ));
    }
    Ok(name)
}

/// The `[upstream]` table's keys, each with where it was written.
#[derive(Deserialize)]
struct UpstreamKeys {
    upstream: SpannedTable,
}

/// The `[upstream]` table being checked: its keys, and where the table
/// itself was named (the line for what is missing from it).
struct UpstreamTable<'a> {
    file: &'a TomlFile,
    header: &'a Spanned<String>,
    keys: SpannedTable,
}

impl Upstream {
    /// Reads `[upstream]`: `transport`, then the keys that transport takes;
    /// with a stdio server's command and arguments as written, and the
    /// names the profile declares public.
    fn load(
        file: &TomlFile,
        top: &SpannedTable,
    ) -> Result<(Upstream, Vec<String>, std::collections::BTreeSet<String>)> {
        let Some((header, value)) = top.get_key_value("upstream") else {
            return Err(file.error("missing table [upstream] (transport = \"stdio\" or \"http\")"));
        };
        if !value.get_ref().is_table() {
            return Err(file.error_at(header, "'upstream' must be a table: [upstream]"));
        }
        // The table's own keys, with their lines: toml::Value keeps none.
        let table = UpstreamTable {
            file,
            header,
            keys: file.parse::<UpstreamKeys>()?.upstream,
        };
        let transport = table.transport()?;
        let allowed: &[&str] = match transport.as_str() {
            "stdio" => &[
                "transport",
                "command",
                "args",
                "cwd",
                "env",
                "public_env",
                "pass_env",
            ],
            _ => &["transport", "url", "headers", "public_headers"],
        };
        for key in table.keys.keys() {
            if !allowed.contains(&key.get_ref().as_str()) {
                return Err(file.error_at(
                    key,
                    format!(
                        "unknown key '{key}' in [upstream] for transport \"{transport}\" (expected {})",
                        allowed[1..].join(", ")
                    ),
                ));
            }
        }
        let (upstream, written) = match transport.as_str() {
            "stdio" => table.stdio()?,
            _ => (table.http()?, Vec::new()),
        };
        let public = match &upstream {
            Upstream::Stdio { env, .. } => table.public("public_env", "env", env)?,
            Upstream::Http { headers, .. } => table.public("public_headers", "headers", headers)?,
        };
        Ok((upstream, written, public))
    }
}

impl Upstream {
    /// `pass_env` of a stdio `[upstream]`: the names of variables of the
    /// runner's environment that hold credentials and that the server
    /// still inherits (issue 24, item 27; `crate::mcp::runner_env`).
    ///
    /// Errors: not a list of names; a name `env` sets too (it would be
    /// set, not passed).
    fn pass_env(
        file: &TomlFile,
        env: &BTreeMap<String, String>,
    ) -> Result<std::collections::BTreeSet<String>> {
        let keys = file.parse::<UpstreamKeys>()?.upstream;
        let Some((key, value)) = keys.get_key_value("pass_env") else {
            return Ok(Default::default());
        };
        let not_names = || {
            file.error_at(
                key,
                "'pass_env' in [upstream] must be a list of environment variable names",
            )
        };
        let names = match value.get_ref() {
            toml::Value::Array(items) => items
                .iter()
                .map(|v| match v.as_str() {
                    Some(n) if !n.is_empty() && !n.contains('=') => Ok(n.to_string()),
                    _ => Err(not_names()),
                })
                .collect::<Result<std::collections::BTreeSet<String>>>()?,
            _ => return Err(not_names()),
        };
        if let Some(both) = names.iter().find(|n| env.contains_key(*n)) {
            return Err(file.error_at(
                key,
                format!(
                    "'pass_env' names '{both}', which 'env' in [upstream] sets too: take it out of one of them"
                ),
            ));
        }
        Ok(names)
    }
}

impl UpstreamTable<'_> {
    /// An error at the line of `key` in the table (or of the table when
    /// the key is absent).
    fn error_at(&self, key: &str, message: impl Into<String>) -> Error {
        match self.keys.get_key_value(key) {
            Some((key, _)) => self.file.error_at(key, message),
            None => self.file.error_at(self.header, message),
        }
    }

    /// `transport`: `stdio` or `http`.
    fn transport(&self) -> Result<String> {
        match self.keys.get("transport").map(Spanned::get_ref) {
            Some(toml::Value::String(s)) if s == "stdio" || s == "http" => Ok(s.clone()),
            Some(toml::Value::String(other)) => Err(self.error_at(
                "transport",
                format!("unknown transport \"{other}\" (expected \"stdio\" or \"http\")"),
            )),
            Some(_) => Err(self.error_at("transport", "'transport' must be \"stdio\" or \"http\"")),
            None => Err(self.error_at(
                "transport",
                "missing key 'transport' in [upstream] (\"stdio\" or \"http\")",
            )),
        }
    }

    /// An optional string.
    fn string(&self, key: &str) -> Result<Option<String>> {
        match self.keys.get(key).map(Spanned::get_ref) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.error_at(key, format!("'{key}' in [upstream] must be a string"))),
        }
    }

    /// An optional table of strings (empty when absent).
    fn map(&self, key: &str) -> Result<BTreeMap<String, String>> {
        match self.keys.get(key).map(Spanned::get_ref) {
            None => Ok(BTreeMap::new()),
            Some(toml::Value::Table(t)) => {
                t.iter()
                    .map(|(k, v)| match v {
                        toml::Value::String(s) => Ok((k.clone(), s.clone())),
                        _ => Err(self
                            .error_at(key, format!("'{key}.{k}' in [upstream] must be a string"))),
                    })
                    .collect()
            }
            Some(_) => Err(self.error_at(
                key,
                format!("'{key}' in [upstream] must be a table of strings"),
            )),
        }
    }

    /// `key` (`public_env` or `public_headers`): a list of names that
    /// `set` (the table `set_key`, `env` or `headers`) gives values, the
    /// ones that are no credentials (issue 24, item 27).
    ///
    /// Errors: not a list of strings; a name `set` does not hold.
    fn public(
        &self,
        key: &str,
        set_key: &str,
        set: &BTreeMap<String, String>,
    ) -> Result<std::collections::BTreeSet<String>> {
        let not_names = || {
            self.error_at(
                key,
                format!("'{key}' in [upstream] must be a list of names from '{set_key}'"),
            )
        };
        let names = match self.keys.get(key).map(Spanned::get_ref) {
            None => return Ok(Default::default()),
            Some(toml::Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_string).ok_or_else(not_names))
                .collect::<Result<std::collections::BTreeSet<String>>>()?,
            Some(_) => return Err(not_names()),
        };
        if let Some(missing) = names.iter().find(|n| !set.contains_key(*n)) {
            return Err(self.error_at(
                key,
                format!(
                    "'{key}' names '{missing}', which '{set_key}' in [upstream] does not set: add it to '{set_key}', or take it out of '{key}'"
                ),
            ));
        }
        Ok(names)
    }

    /// A stdio upstream: `command` (required), `args`, `cwd`, `env`, with a
    /// leading `~` expanded; and the command and arguments as written.
    fn stdio(&self) -> Result<(Upstream, Vec<String>)> {
        let command = match self.string("command")? {
            Some(c) if !c.trim().is_empty() => c,
            Some(_) => {
                return Err(self.error_at(
                    "command",
                    "'command' in [upstream] is empty: name the program that starts the server",
                ));
            }
            None => {
                return Err(self.error_at(
                    "command",
                    "missing key 'command' in [upstream] (the program that starts the server)",
                ));
            }
        };
        let not_strings =
            || self.error_at("args", "'args' in [upstream] must be a list of strings");
        let args = match self.keys.get("args").map(Spanned::get_ref) {
            None => Vec::new(),
            Some(toml::Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_string).ok_or_else(not_strings))
                .collect::<Result<Vec<_>>>()?,
            Some(_) => return Err(not_strings()),
        };
        let written = std::iter::once(command.clone())
            .chain(args.iter().cloned())
            .collect();
        let upstream = Upstream::Stdio {
            command: expand_home(&command),
            args: args.iter().map(|a| expand_home(a)).collect(),
            cwd: self.string("cwd")?.map(|c| PathBuf::from(expand_home(&c))),
            env: self.map("env")?,
        };
        Ok((upstream, written))
    }

    /// An HTTP upstream: `url` (required, http or https) and `headers`.
    fn http(&self) -> Result<Upstream> {
        let url = self.string("url")?.ok_or_else(|| {
            self.error_at(
                "url",
                "missing key 'url' in [upstream] (the server's MCP endpoint)",
            )
        })?;
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(self.error_at(
                "url",
                format!("'url' = \"{url}\" must start with http:// or https://"),
            ));
        }
        Ok(Upstream::Http {
            url,
            headers: self.map("headers")?,
        })
    }
}

/// `url` with credentials hidden: a password in the authority (a user
/// alone, as a token is written, entirely), every query-string value and
/// every `;name=value` path parameter's value become `***` (for messages
/// and records; the real URL is only ever sent).
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
            // `;name=value` path parameters (a `jsessionid`) are hidden
            // like query-string values.
            let mut segments = path.split(';');
            let mut shown = segments.next().unwrap_or_default().to_string();
            for segment in segments {
                shown.push(';');
                match segment.split_once('=') {
                    Some((key, _)) => shown.push_str(&format!("{key}=***")),
                    None => shown.push_str(segment),
                }
            }
            format!("{scheme}://{authority}{shown}")
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

/// Words in a URL parameter's name that say its value is a credential.
const CREDENTIAL_WORDS: [&str; 8] = [
    "key",
    "token",
    "secret",
    "pass",
    "auth",
    "sig",
    "session",
    "credential",
];

/// The credentials `url` carries (issue 24, item 27), each with a name:
/// the password of its authority (`URL-password`), or a user with no
/// password (`URL-user`, written as a token is); the `Authorization:
/// Basic base64(user:password)` value an HTTP client derives from them and
/// sends, and its base64 alone (`URL-Authorization`); and the values of
/// query and `;` path parameters whose names hold a `CREDENTIAL_WORDS`
/// word (`URL-api_key`). Each as written and percent-decoded.
pub fn url_secrets(url: &str) -> Vec<(String, String)> {
    use base64::Engine;
    let mut found: Vec<(String, String)> = Vec::new();
    let Some((_, rest)) = url.split_once("://") else {
        return found;
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let mut add = |name: &str, value: &str| {
        for value in [value.to_string(), percent_decoded(value)] {
            if !value.is_empty() && !found.iter().any(|(_, v)| *v == value) {
                found.push((name.to_string(), value));
            }
        }
    };
    if let Some((userinfo, _)) = authority.rsplit_once('@') {
        let (user, password) = match userinfo.split_once(':') {
            Some((user, password)) => (user, Some(password)),
            None => (userinfo, None),
        };
        match password {
            Some(password) => add("URL-password", password),
            None => add("URL-user", user),
        }
        let basic = base64::engine::general_purpose::STANDARD.encode(format!(
            "{}:{}",
            percent_decoded(user),
            percent_decoded(password.unwrap_or_default())
        ));
        add("URL-Authorization", &format!("Basic {basic}"));
        add("URL-Authorization", &basic);
    }
    for parameter in tail.split(['?', '&', ';', '#']).skip(1) {
        if let Some((name, value)) = parameter.split_once('=') {
            let lower = name.to_ascii_lowercase();
            if CREDENTIAL_WORDS.iter().any(|w| lower.contains(w)) {
                add(&format!("URL-{name}"), value);
            }
        }
    }
    found
}

/// `text` with its `%XX` escapes decoded (as an HTTP client reads a URL's
/// user and password); invalid escapes and bytes that are not UTF-8 kept.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
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

    /// Issue 24, item 28: `~` was expanded into the record, and an absolute
    /// command path recorded. The record is the profile as written, with
    /// no home folder and no absolute path of this machine in it.
    #[test]
    fn the_record_is_the_profile_as_written() {
        let home = std::env::var("HOME").unwrap();
        let p = load(&format!(
            "name = \"demo\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"~/bin/x\"\nargs = [\"--dir\", \"~/kg\", \"{home}/data\", \"--out={home}\", \"plain\"]\n"
        ))
        .unwrap();
        assert_eq!(p.record().target, "~/bin/x --dir ~/kg ~/data --out=~ plain");
        let p = load(
            "name = \"demo\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"/opt/venv/bin/server\"\nargs = [\"--data\", \"/srv/kg\"]\n",
        )
        .unwrap();
        let record = p.record().target;
        let words: Vec<&str> = record.split(' ').collect();
        assert_eq!(words.len(), 3, "{record}");
        assert!(
            words[0].starts_with("../") && words[0].ends_with("/opt/venv/bin/server"),
            "{record}"
        );
        assert!(
            words[2].starts_with("../") && words[2].ends_with("/srv/kg"),
            "{record}"
        );
        assert_eq!(p.program_as_written(), words[0]);
    }

    #[test]
    fn headers_never_reach_a_record_or_debug_output() {
        let p = load("name = \"remote\"\n[upstream]\ntransport = \"http\"\nurl = \"https://example.org/mcp\"\nheaders = { Authorization = \"Bearer s3cret\" }\n").unwrap();
        let record = serde_json::to_string(&p.record()).unwrap();
        assert!(!record.contains("s3cret"), "{record}");
        assert!(record.contains("Authorization"), "{record}");
        assert!(!format!("{p:?}").contains("s3cret"));
    }

    /// A startup error quotes the URL it could not reach: the password and
    /// API key in it must not reach metrics.json.
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
                "5: unknown key 'header' in [upstream] for transport \"http\" (expected url, headers, public_headers)",
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
            (
                "name = \"x\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"c\"\nenv = { A = \"1\" }\npublic_env = [\"B\"]\n",
                "6: 'public_env' names 'B', which 'env' in [upstream] does not set",
            ),
            (
                "name = \"x\"\n[upstream]\ntransport = \"http\"\nurl = \"http://a\"\npublic_headers = \"Accept\"\n",
                "5: 'public_headers' in [upstream] must be a list of names from 'headers'",
            ),
            (
                "name = \"x\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"c\"\nenv = { A_TOKEN = \"123456789\" }\npass_env = [\"A_TOKEN\"]\n",
                "6: 'pass_env' names 'A_TOKEN', which 'env' in [upstream] sets too",
            ),
            (
                "name = \"x\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"c\"\npass_env = \"A_TOKEN\"\n",
                "5: 'pass_env' in [upstream] must be a list of environment variable names",
            ),
            (
                "name = \"x\"\n[upstream]\ntransport = \"http\"\nurl = \"http://a\"\npass_env = [\"A\"]\n",
                "5: unknown key 'pass_env' in [upstream] for transport \"http\"",
            ),
        ];
        for (text, want) in cases {
            let got = load(text).unwrap_err().to_string();
            assert!(
                got.starts_with(want),
                "{text:?}\n  want {want}\n  got  {got}"
            );
        }
    }

    /// Issue 24, item 27: every environment value was redacted, a public
    /// one (`DEFAULT_REGION = "New Mexico"`) in the agent's answer too, and
    /// a value with a space lost its last word everywhere as if it were
    /// `SCHEME CREDENTIALS`. A value named in `public_env` is no secret,
    /// and is recorded; an environment value is never split; a header value
    /// is, and a URL's password, the `Basic` credential derived from it and
    /// a credential-like query or path parameter are secrets too.
    #[test]
    fn what_a_profile_holds_secret_and_what_it_declares_public() {
        let p = load("name = \"x\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"c\"\nenv = { DEFAULT_REGION = \"New Mexico\", RUST_LOG = \"okn warning\", TOKEN = \"sk-live-123456\" }\npublic_env = [\"DEFAULT_REGION\"]\n").unwrap();
        assert_eq!(
            p.secrets(),
            [
                ("RUST_LOG".to_string(), "okn warning".to_string()),
                ("TOKEN".to_string(), "sk-live-123456".to_string())
            ]
        );
        let record = p.record();
        assert_eq!(
            record.public.into_iter().collect::<Vec<_>>(),
            [("DEFAULT_REGION".to_string(), "New Mexico".to_string())]
        );
        assert_eq!(record.env_names, ["DEFAULT_REGION", "RUST_LOG", "TOKEN"]);
        assert_eq!(p.target().public.len(), 1);
        let r = p.redactor();
        assert_eq!(
            r.text("New Mexico, a warning, okn warning, SK-LIVE-123456"),
            "New Mexico, a warning, [redacted: RUST_LOG], [redacted: TOKEN]"
        );

        let p = load("name = \"x\"\n[upstream]\ntransport = \"http\"\nurl = \"http://admin:s3cr3t%2Dpass@127.0.0.1:1/mcp;jsessionid=SESS-99887766?api_key=KEY-123456&x=123456789\"\nheaders = { Authorization = \"Bearer tkn-9f8e7d6c\", Cookie = \"session=cookie-val-abcdef; other=zzzzzz-123\", Accept = \"application/json\" }\npublic_headers = [\"Accept\"]\n").unwrap();
        let secrets: Vec<String> = p.secrets().into_iter().map(|(_, v)| v).collect();
        use base64::Engine;
        let basic = base64::engine::general_purpose::STANDARD.encode("admin:s3cr3t-pass");
        for want in [
            "Bearer tkn-9f8e7d6c",
            "tkn-9f8e7d6c",
            "cookie-val-abcdef",
            "zzzzzz-123",
            "s3cr3t%2Dpass",
            "s3cr3t-pass",
            &format!("Basic {basic}"),
            &basic,
            "SESS-99887766",
            "KEY-123456",
        ] {
            assert!(secrets.iter().any(|s| s == want), "{want}: {secrets:?}");
        }
        assert!(
            !secrets
                .iter()
                .any(|s| s == "application/json" || s == "123456789")
        );
        assert_eq!(
            p.record().target,
            "http://admin:***@127.0.0.1:1/mcp;jsessionid=***?api_key=***&x=***"
        );
    }

    /// Issue 24, item 28: a `file:` URL under the home folder in an
    /// argument was recorded as written by the machine; its path is folded
    /// like any other.
    #[test]
    fn a_file_url_is_recorded_without_the_machines_paths() {
        let home = std::env::var("HOME").unwrap();
        let p = load(&format!(
            "name = \"demo\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"x\"\nargs = [\"file://{home}/data\", \"--kg=FILE:{home}/kg.ttl\", \"file:///srv/kg\", \"http://h/x\"]\n"
        ))
        .unwrap();
        let record = p.record().target;
        let words: Vec<&str> = record.split(' ').collect();
        assert_eq!(
            words[1..3],
            ["file://~/data", "--kg=FILE:~/kg.ttl"],
            "{record}"
        );
        assert!(
            words[3].starts_with("file://../") && words[3].ends_with("/srv/kg"),
            "{record}"
        );
        assert_eq!(words[4], "http://h/x");
    }
}
