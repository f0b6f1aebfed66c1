//! The runner's own credentials, kept from the server under test (issue 24,
//! item 27; `docs/FORMAT.md`, "Credentials"). A stdio server is a third
//! party's program: it is started with this process's environment, but
//! without the variables of it that hold credentials (the agent host's API
//! key, a cloud token, a password), unless its profile sets one in `env`
//! or passes it through by name in `pass_env`. And the values of those
//! variables are redacted in everything written ([`runner_secrets`]), so a
//! credential that reaches a record by any other path (an agent host that
//! quotes its own environment, a server that finds a key some other way)
//! still shows as `[redacted: NAME]`.
//!
//! A variable holds credentials ([`holds_credentials`]) when:
//!
//! - it is one of the agent hosts' key variables ([`HOST_KEY_VARIABLES`]);
//! - one of its name's word parts (split at every character that is not a
//!   letter or digit, and where a lower-case letter meets an upper-case
//!   one: `API_KEY`, `apiKey`, `db.password`), compared without regard to
//!   case, is a [`CREDENTIAL_PARTS`] word or its plural (`KEY`, `TOKENS`),
//!   or ends with one (`ACCESSTOKEN`, `CLIENTSECRET`, `DBPASSWORD`,
//!   `OAUTH`), but for `KEY`, which a part may end with only after
//!   `API`, `ACCESS`, `SECRET`, `PRIVATE` or `AUTH` (`APIKEY`): `MONKEY`,
//!   `HOTKEY`, `KEYBOARD`, `KEYMAP`, `TOKENIZERS_PARALLELISM`, `AUTHOR` and
//!   `PWD` hold none;
//! - its value is a URL that carries a credential ([`url_credentials`]: a
//!   user or password in its authority, or a query parameter whose name
//!   holds credentials by the same rule), as `DATABASE_URL` may;
//! - or [`CREDENTIAL_ENV_VARIABLE`] names it (how `run` tells the proxy,
//!   which the agent host starts, the variable `--api-key-env` names).

use std::collections::BTreeSet;

/// The agent hosts' key variables: always credentials, whatever the rules
/// of names say.
pub const HOST_KEY_VARIABLES: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "CODEX_API_KEY",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AZURE_OPENAI_API_KEY",
];

/// The word parts of a variable's name that say it holds credentials.
pub const CREDENTIAL_PARTS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
    "AUTHORIZATION",
    "COOKIE",
];

/// What may come before `KEY` in one word part of a credential's name
/// (`APIKEY`, `ACCESSKEY`): other words ending in `KEY` are no credentials.
const KEY_PREFIXES: &[&str] = &["API", "ACCESS", "SECRET", "PRIVATE", "AUTH"];

/// The variable that names more variables holding credentials, separated
/// by commas or white space: `OKN_BENCHMARK_CREDENTIAL_ENV=MY_KEY,OTHER`.
/// `run --api-key-env NAME` (where it exists) sets it for the agent host,
/// which passes it to the proxy it starts.
pub const CREDENTIAL_ENV_VARIABLE: &str = "OKN_BENCHMARK_CREDENTIAL_ENV";

/// The fewest characters a value of the runner's environment must have to
/// be redacted: fewer (`1`, `true`, `en_US`) would blank out ordinary text.
pub const MIN_RUNNER_SECRET_CHARS: usize = 8;

/// The word parts of `name`, upper-cased: split at every character that is
/// not a letter or digit, and between a lower-case letter and an
/// upper-case one.
fn parts(name: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            found.push(std::mem::take(&mut current));
            previous_lower = false;
            continue;
        }
        if previous_lower && c.is_uppercase() {
            found.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_lowercase();
        current.extend(c.to_uppercase());
    }
    found.push(current);
    found.retain(|p| !p.is_empty());
    found
}

/// Whether one upper-cased word part says its variable holds credentials.
fn credential_part(part: &str) -> bool {
    let singular = part.strip_suffix('S').unwrap_or(part);
    CREDENTIAL_PARTS.iter().any(|word| {
        [part, singular].iter().any(|p| {
            if *p == *word {
                return true;
            }
            let Some(before) = p.strip_suffix(word) else {
                return false;
            };
            *word != "KEY" || KEY_PREFIXES.iter().any(|k| before.ends_with(k))
        })
    })
}

/// Whether the variable `name`, whose value is `value`, holds credentials
/// (the rules of this module's documentation), `also` naming more such
/// variables ([`CREDENTIAL_ENV_VARIABLE`]).
pub fn holds_credentials(name: &str, value: &str, also: &BTreeSet<String>) -> bool {
    if name == CREDENTIAL_ENV_VARIABLE {
        // It names credentials, and holds none.
        return false;
    }
    HOST_KEY_VARIABLES.contains(&name)
        || also.contains(name)
        || parts(name).iter().any(|p| credential_part(p))
        || !url_credentials(value).is_empty()
}

/// The credentials `value` carries when it is a URL (`scheme://...`): the
/// user and password of its authority (`postgres://user:pass@host/db`),
/// and the values of its query and `;` path parameters whose names hold
/// credentials ([`CREDENTIAL_PARTS`], `?api_key=...`); none for other
/// values. Percent escapes are left as written.
pub fn url_credentials(value: &str) -> Vec<String> {
    let mut found = Vec::new();
    let Some((scheme, rest)) = value.trim().split_once("://") else {
        return found;
    };
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        return found;
    }
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    if let Some((userinfo, _)) = authority.rsplit_once('@') {
        found.extend(
            userinfo
                .split(':')
                .filter(|p| !p.is_empty())
                .map(str::to_string),
        );
    }
    for parameter in tail.split(['?', '&', ';', '#']).skip(1) {
        if let Some((name, value)) = parameter.split_once('=')
            && !value.is_empty()
            && parts(name).iter().any(|p| credential_part(p))
        {
            found.push(value.to_string());
        }
    }
    found
}

/// The names [`CREDENTIAL_ENV_VARIABLE`] lists in this process's
/// environment (none when it is unset).
fn named_credentials() -> BTreeSet<String> {
    std::env::var(CREDENTIAL_ENV_VARIABLE)
        .unwrap_or_default()
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect()
}

/// The variables of this process's environment that hold credentials
/// ([`holds_credentials`]), with their values (lossy UTF-8: a value that
/// is not UTF-8 is still withheld by name), in name order.
pub fn credential_variables() -> Vec<(String, String)> {
    let also = named_credentials();
    let mut found: Vec<(String, String)> = std::env::vars_os()
        .map(|(n, v)| {
            (
                n.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .filter(|(n, v)| holds_credentials(n, v, &also))
        .collect();
    found.sort();
    found
}

/// The names of this process's environment a stdio server under test
/// must not inherit: every variable that holds credentials
/// ([`credential_variables`]) but those `kept` (the profile's `env` sets
/// it, or `pass_env` names it).
pub fn withheld(kept: impl Fn(&str) -> bool) -> Vec<std::ffi::OsString> {
    let also = named_credentials();
    std::env::vars_os()
        .filter(|(n, v)| {
            let (name, value) = (n.to_string_lossy(), v.to_string_lossy());
            !kept(&name) && holds_credentials(&name, &value, &also)
        })
        .map(|(n, _)| n)
        .collect()
}

/// The values of this process's environment that hold credentials, each
/// with its variable's name, to be redacted in everything written: those
/// of at least [`MIN_RUNNER_SECRET_CHARS`] characters (after trimming),
/// and the credentials a URL value carries.
pub fn runner_secrets() -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (name, value) in credential_variables() {
        if value.trim().chars().count() >= MIN_RUNNER_SECRET_CHARS {
            found.push((name.clone(), value.trim().to_string()));
        }
        for part in url_credentials(&value) {
            if part.chars().count() >= MIN_RUNNER_SECRET_CHARS {
                found.push((name.clone(), part));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 24, item 27: which names hold credentials, and the false
    /// friends that do not.
    #[test]
    fn names_that_hold_credentials_and_names_that_do_not() {
        let none = BTreeSet::new();
        for name in [
            "ANTHROPIC_API_KEY",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "DB_PASSWORD",
            "MYSQL_PWD_PASSWD",
            "npm_config__auth",
            "apiKey",
            "APIKEY",
            "HF_TOKENS",
            "SLACK_CLIENTSECRET",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "SESSION_COOKIE",
            "X_AUTHORIZATION",
            "SSH_AUTH_SOCK",
            "my.secret",
        ] {
            assert!(holds_credentials(name, "x", &none), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "PWD",
            "OLDPWD",
            "KEYBOARD_LAYOUT",
            "XKB_KEYMAP",
            "MONKEY",
            "HOTKEY_MODE",
            "TOKENIZERS_PARALLELISM",
            "AUTHOR_NAME",
            "XAUTHORITY",
            "DEFAULT_REGION",
        ] {
            assert!(!holds_credentials(name, "x", &none), "{name}");
        }
        assert!(holds_credentials(
            "DATABASE_URL",
            "postgres://u:hunter22@db/x",
            &none
        ));
        assert!(!holds_credentials(
            "HOMEPAGE",
            "https://example.org/",
            &none
        ));
        assert!(holds_credentials(
            "SERVICE_ENDPOINT",
            "https://example.org/x?api_key=abcdefgh12",
            &none
        ));
        assert_eq!(
            url_credentials("https://example.org/x?api_key=abcdefgh12&page=2"),
            ["abcdefgh12"]
        );
        assert_eq!(
            url_credentials("postgres://u:hunter22@db/x"),
            ["u", "hunter22"]
        );
        let also: BTreeSet<String> = ["MY_VENDOR".to_string()].into();
        assert!(holds_credentials("MY_VENDOR", "x", &also));
        assert!(!holds_credentials(
            CREDENTIAL_ENV_VARIABLE,
            "MY_VENDOR",
            &also
        ));
    }
}
