//! The repository config file, `okn-benchmark.toml`, found in the current
//! folder or the nearest one above it (as cargo finds `Cargo.toml`).
//!
//! ```toml
//! [reference]
//! endpoint = "demo/kg"   # a data path (relative to this file) or a SPARQL URL
//! ```
//!
//! Unknown keys are errors naming the file and key, so a typo never silently
//! falls back to a default.
//! It is read through [`TomlFile`], as every TOML file of the crate is.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::toml_file::TomlFile;

/// The config file's name.
pub const CONFIG_FILE: &str = "okn-benchmark.toml";

/// What `okn-benchmark.toml` may hold.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Defaults for `reference` (and every command that needs ground truth).
    #[serde(default)]
    pub reference: ReferenceConfig,
    /// The `sparql-only` control's endpoint and graph naming.
    #[serde(default)]
    pub sparql_only: SparqlOnlyConfig,
    /// Corpora's default trajectory expectations, read (and refused when
    /// they do not fit) by `crate::expectations::defaults`.
    #[serde(default)]
    pub expectations: Option<toml::Value>,
}

/// The `[sparql_only]` table. The control queries `endpoint` (default: the
/// `[reference]` endpoint, so it sees the data ground truth came from).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SparqlOnlyConfig {
    /// A data path (relative to this file) or SPARQL URL.
    pub endpoint: Option<String>,
    /// Shortname → graph IRI, with `{shortname}` where the name goes.
    pub graph_template: Option<String>,
    /// The valid shortnames (needed for a SPARQL URL; for RDF data they are
    /// the named graphs that fit the template).
    pub shortnames: Option<Vec<String>>,
}

/// The `[reference]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceConfig {
    /// Default endpoint: a path to RDF data (relative to the config file's
    /// folder) or an `http(s)://` SPARQL URL.
    pub endpoint: Option<String>,
}

/// A config file that was found, with where it was found.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    /// The file.
    pub path: PathBuf,
    /// Its folder: relative paths in it are resolved against this.
    pub dir: PathBuf,
    /// Its contents.
    pub config: Config,
}

/// Finds and reads the nearest `okn-benchmark.toml` at or above `start`.
///
/// Returns `Ok(None)` when there is none. Errors: unreadable file, or TOML
/// that does not match [`Config`] (the message names the key and line).
pub fn find(start: &Path) -> Result<Option<LoadedConfig>> {
    let start = if start.is_absolute() {
        start.to_path_buf()
    } else {
        let cwd =
            std::env::current_dir().map_err(|e| Error::io(start, "find the current folder", e))?;
        if start == Path::new(".") || start.as_os_str().is_empty() {
            cwd
        } else {
            cwd.join(start)
        }
    };
    for dir in start.ancestors() {
        let path = dir.join(CONFIG_FILE);
        if path.is_file() {
            let config: Config = TomlFile::read(&path)?.parse()?;
            return Ok(Some(LoadedConfig {
                dir: dir.to_path_buf(),
                path,
                config,
            }));
        }
    }
    Ok(None)
}

/// The endpoint a command should use: `explicit` (`--endpoint`, relative to
/// the current folder) if given, else `[reference] endpoint` from the
/// nearest config file (relative to that file's folder).
///
/// Errors: neither is set (the message says how to set one), or the
/// endpoint does not resolve ([`crate::sparql::EndpointSpec::resolve`]).
pub fn endpoint_spec(explicit: Option<&str>) -> Result<crate::sparql::EndpointSpec> {
    if let Some(value) = explicit {
        return crate::sparql::EndpointSpec::resolve(value, Path::new(""));
    }
    configured_endpoint()?.ok_or_else(|| {
        Error::Usage(format!(
            "no SPARQL endpoint: pass --endpoint URL|PATH, or set it once in {CONFIG_FILE}:\n  [reference]\n  endpoint = \"path/to/rdf-data\"   # or \"https://.../sparql\""
        ))
    })
}

/// `[reference] endpoint` of the nearest config file (relative to that
/// file's folder), or `None` when no config file sets one.
///
/// Errors: an unreadable config file, or an endpoint that does not resolve
/// ([`crate::sparql::EndpointSpec::resolve`]; the message names the file).
pub fn configured_endpoint() -> Result<Option<crate::sparql::EndpointSpec>> {
    let found = find(Path::new("."))?;
    let Some((found, value)) = found
        .as_ref()
        .and_then(|f| f.config.reference.endpoint.as_deref().map(|e| (f, e)))
    else {
        return Ok(None);
    };
    let base = relative_to_cwd(&found.dir);
    crate::sparql::EndpointSpec::resolve(value, &base)
        .map(Some)
        .map_err(|e| match e {
            Error::File {
                path,
                message,
                source,
            } => Error::File {
                path,
                message: format!("{message} (endpoint set in {})", found.path.display()),
                source,
            },
            other => other,
        })
}

/// The `sparql-only` control's endpoint, template and shortnames: flags
/// first, then `[sparql_only]`, then `[reference] endpoint`.
///
/// Errors: as [`endpoint_spec`], and an unreadable config file.
pub fn sparql_only_settings(
    explicit_endpoint: Option<&str>,
    explicit_template: Option<&str>,
    explicit_shortnames: &[String],
) -> Result<(crate::sparql::EndpointSpec, String, Vec<String>)> {
    let found = find(Path::new("."))?;
    let section = found
        .as_ref()
        .map(|f| f.config.sparql_only.clone())
        .unwrap_or_default();
    let spec = match (explicit_endpoint, &section.endpoint, &found) {
        (Some(value), _, _) => crate::sparql::EndpointSpec::resolve(value, Path::new(""))?,
        (None, Some(value), Some(found)) => {
            crate::sparql::EndpointSpec::resolve(value, &relative_to_cwd(&found.dir))?
        }
        _ => endpoint_spec(None)?,
    };
    let template = explicit_template
        .map(str::to_string)
        .or(section.graph_template)
        .unwrap_or_else(|| crate::mcp::sparql_only::DEFAULT_GRAPH_TEMPLATE.to_string());
    let shortnames = if explicit_shortnames.is_empty() {
        section.shortnames.unwrap_or_default()
    } else {
        explicit_shortnames.to_vec()
    };
    Ok((spec, template, shortnames))
}

/// `dir` relative to the current folder when it is inside it (so recorded
/// paths stay relative), else `dir` itself.
fn relative_to_cwd(dir: &Path) -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| dir.strip_prefix(&cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| dir.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_nearest_config_and_rejects_unknown_keys() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a/b");
        std::fs::create_dir_all(&nested).unwrap();
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "[reference]\nendpoint = \"demo/kg\"\n",
        )
        .unwrap();
        let found = find(&nested).unwrap().unwrap();
        assert_eq!(found.dir, dir.path());
        assert_eq!(found.config.reference.endpoint.as_deref(), Some("demo/kg"));

        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "[reference]\nendpont = \"x\"\n",
        )
        .unwrap();
        let err = find(&nested).unwrap_err().to_string();
        assert!(err.contains("okn-benchmark.toml:2"), "{err}");
        assert!(err.contains("endpont"), "{err}");
    }
}
