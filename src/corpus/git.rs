//! Corpora in git repositories: `git+https://HOST/OWNER/REPO[@REF][#SUBDIR]`
//! (and `git+file://` for local repositories), shallow-fetched once into a
//! cache folder and reused (README.md, "The corpus").
//!
//! The cache is `$OKN_BENCHMARK_CACHE_DIR/corpora/` when that is set, else
//! `$XDG_CACHE_HOME/okn-benchmark/corpora/`, else
//! `~/.cache/okn-benchmark/corpora/`. Each URL-and-ref pair has its own
//! folder; a checkout is made in a temporary folder and renamed into place,
//! so an interrupted fetch never leaves a half-filled cache entry. The
//! resolved commit is reported, so a result stays tied to the exact
//! questions that produced it.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// A parsed `git+...` corpus spec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GitSpec {
    /// The repository URL, without `git+`, `@REF` or `#SUBDIR`.
    pub url: String,
    /// The ref (branch, tag or commit) after `@`, if given.
    pub reference: Option<String>,
    /// The subfolder after `#`, if given.
    pub subdir: Option<String>,
}

/// A git corpus resolved to a checkout.
#[derive(Debug, Clone, Serialize)]
pub struct GitSource {
    /// The spec as given on the command line.
    pub spec: String,
    /// Its parts.
    pub parsed: GitSpec,
    /// The commit checked out (40 hex digits).
    pub commit: String,
    /// The corpus folder inside the checkout (the subfolder, if any).
    pub checkout: PathBuf,
    /// True when the checkout came from the cache rather than a fetch.
    pub reused: bool,
}

/// True when `spec` names a git corpus rather than a folder.
pub fn is_git_spec(spec: &str) -> bool {
    spec.starts_with("git+")
}

/// Splits `git+URL[@REF][#SUBDIR]`.
///
/// The ref is taken from the last path segment only, so `user@host` in the
/// authority is never mistaken for one. Errors: [`Error::Usage`] when the
/// spec is not `git+https://`, `git+http://`, `git+ssh://` or `git+file://`.
pub fn parse_spec(spec: &str) -> Result<GitSpec> {
    let rest = spec
        .strip_prefix("git+")
        .ok_or_else(|| Error::Usage(format!("'{spec}' is not a git+ URL")))?;
    let (rest, subdir) = match rest.split_once('#') {
        Some((r, s)) => (
            r,
            Some(s.trim_matches('/').to_string()).filter(|s| !s.is_empty()),
        ),
        None => (rest, None),
    };
    let scheme_ok = ["https://", "http://", "ssh://", "file://"]
        .iter()
        .any(|s| rest.starts_with(s));
    if !scheme_ok {
        return Err(Error::Usage(format!(
            "'{spec}': a git corpus is git+https://HOST/OWNER/REPO[@REF][#SUBDIR] (or git+file:// for a local repository)"
        )));
    }
    let last_slash = rest.rfind('/').unwrap_or(0);
    let (url, reference) = match rest[last_slash..].rfind('@') {
        Some(at) => {
            let at = last_slash + at;
            (
                &rest[..at],
                Some(rest[at + 1..].to_string()).filter(|r| !r.is_empty()),
            )
        }
        None => (rest, None),
    };
    if let Some(subdir) = &subdir
        && subdir.split('/').any(|p| p == "..")
    {
        return Err(Error::Usage(format!(
            "'{spec}': the subfolder after # must stay inside the repository"
        )));
    }
    Ok(GitSpec {
        url: url.to_string(),
        reference,
        subdir,
    })
}

/// The corpora cache folder (see the module docs for the lookup order).
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("OKN_BENCHMARK_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("corpora");
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"));
    base.join("okn-benchmark").join("corpora")
}

/// Resolves a git corpus spec to a local checkout, fetching it (depth 1)
/// when the cache does not hold it yet, or when `refresh` asks for the
/// ref's current commit (a branch is otherwise pinned to the commit first
/// fetched, so a study keeps its questions).
///
/// Errors: a malformed spec; `git` missing or failing (its message is
/// passed on); a `#SUBDIR` that is not in the repository.
pub fn resolve(spec: &str, refresh: bool) -> Result<GitSource> {
    let parsed = parse_spec(spec)?;
    let cache = cache_dir();
    let key = {
        let mut h = Sha256::new();
        h.update(parsed.url.as_bytes());
        h.update(b"\0");
        h.update(parsed.reference.as_deref().unwrap_or("HEAD").as_bytes());
        let digest = h.finalize();
        digest[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let name = parsed
        .url
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or("repo")
        .trim_end_matches(".git")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect::<String>();
    let folder = cache.join(format!("{name}-{key}"));
    let reused = folder.join(".git").is_dir() && !refresh;
    if !reused {
        std::fs::create_dir_all(&cache).map_err(|e| Error::io(&cache, "create cache folder", e))?;
        let tmp = tempfile::Builder::new()
            .prefix(".fetch-")
            .tempdir_in(&cache)
            .map_err(|e| Error::io(&cache, "create cache folder", e))?;
        let work = tmp.path();
        git(work, &["init", "--quiet"])?;
        let reference = parsed.reference.as_deref().unwrap_or("HEAD");
        git(
            work,
            &["fetch", "--quiet", "--depth", "1", &parsed.url, reference],
        )
        .map_err(|e| Error::Other(format!("cannot fetch corpus {spec}: {e}")))?;
        git(work, &["checkout", "--quiet", "--detach", "FETCH_HEAD"])?;
        let tmp_path = tmp.keep();
        if folder.exists() {
            // --refresh: move the old checkout aside, then drop it.
            let old = cache.join(format!(".old-{name}-{key}-{}", std::process::id()));
            std::fs::rename(&folder, &old)
                .map_err(|e| Error::io(&folder, "replace cache entry", e))?;
            let _ = std::fs::remove_dir_all(&old);
        }
        if let Err(e) = std::fs::rename(&tmp_path, &folder) {
            let _ = std::fs::remove_dir_all(&tmp_path);
            if !folder.join(".git").is_dir() {
                return Err(Error::io(&folder, "create cache entry", e));
            }
        }
    }
    let commit = git(&folder, &["rev-parse", "HEAD"])?.trim().to_string();
    let checkout = match &parsed.subdir {
        Some(sub) => folder.join(sub),
        None => folder.clone(),
    };
    if !checkout.is_dir() {
        return Err(Error::Usage(format!(
            "{spec}: the repository at commit {commit} has no folder '{}'",
            parsed.subdir.as_deref().unwrap_or("")
        )));
    }
    Ok(GitSource {
        spec: spec.to_string(),
        parsed,
        commit,
        checkout,
        reused,
    })
}

fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| Error::Other(format!("cannot run git (is it installed?): {e}")))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let message = stderr
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        return Err(Error::Other(format!("git {}: {message}", args[0])));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_split_into_url_ref_and_subdir() {
        let s = parse_spec("git+https://github.com/user/repo@v2#benchmarks-b/set1").unwrap();
        assert_eq!(s.url, "https://github.com/user/repo");
        assert_eq!(s.reference.as_deref(), Some("v2"));
        assert_eq!(s.subdir.as_deref(), Some("benchmarks-b/set1"));
        let s = parse_spec("git+https://github.com/user/repo").unwrap();
        assert_eq!((s.reference, s.subdir), (None, None));
        let s = parse_spec("git+ssh://git@host/o/r.git@main").unwrap();
        assert_eq!(s.url, "ssh://git@host/o/r.git");
        assert_eq!(s.reference.as_deref(), Some("main"));
        assert!(parse_spec("git+ftp://x/y").is_err());
        assert!(parse_spec("git+file:///r#../up").is_err());
    }
}
