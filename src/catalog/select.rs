//! The selector of `docs/CATALOG.md`, "Selectors": a dotted path into a
//! JSON result, each step a member name, optionally followed by `[N]` (the
//! N-th element, from 0) or `[*]` (every element); a path may start with
//! `[*]` or `[N]` for a result that is an array. `results[*].iri` reads
//! every `iri` of `{"results": [{"iri": ...}, ...]}`.

use serde_json::Value;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// A member of an object.
    Member(String),
    /// The element at an index of an array.
    Index(usize),
    /// Every element of an array.
    Each,
}

/// A parsed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    steps: Vec<Step>,
}

impl Path {
    /// Parses `text`.
    ///
    /// Errors: an empty path or step, an unclosed or empty bracket, or an
    /// index that is not a number, worded for the catalog's author.
    pub fn parse(text: &str) -> Result<Path, String> {
        if text.trim().is_empty() {
            return Err("an empty path: name a member, as in results[*].iri".into());
        }
        let mut steps = Vec::new();
        for (i, part) in text.split('.').enumerate() {
            let (name, mut rest) = match part.find('[') {
                Some(at) => part.split_at(at),
                None => (part, ""),
            };
            // Only the first step may be a bare bracket (a result that is
            // an array).
            let bare_first = i == 0 && !rest.is_empty();
            if name.is_empty() && !bare_first {
                return Err(format!("'{text}': an empty step"));
            }
            if !name.is_empty() {
                steps.push(Step::Member(name.to_string()));
            }
            while !rest.is_empty() {
                let Some(close) = rest.find(']') else {
                    return Err(format!("'{text}': a '[' is never closed"));
                };
                let inside = rest.get(1..close).unwrap_or_default();
                steps.push(match inside {
                    "*" => Step::Each,
                    n => {
                        Step::Index(n.parse().map_err(|_| {
                            format!("'{text}': '[{n}]' is neither an index nor [*]")
                        })?)
                    }
                });
                rest = &rest[close + 1..];
                if !rest.is_empty() && !rest.starts_with('[') {
                    return Err(format!(
                        "'{text}': text after ']' must start a new step with '.'"
                    ));
                }
            }
        }
        Ok(Path { steps })
    }

    /// The values the path selects in `value`, in document order; none
    /// where a step finds nothing.
    pub fn select<'v>(&self, value: &'v Value) -> Vec<&'v Value> {
        let mut current = vec![value];
        for step in &self.steps {
            current = current
                .into_iter()
                .flat_map(|v| -> Vec<&'v Value> {
                    match step {
                        Step::Member(name) => v.get(name.as_str()).into_iter().collect(),
                        Step::Index(i) => v.get(*i).into_iter().collect(),
                        Step::Each => v.as_array().map(|a| a.iter().collect()).unwrap_or_default(),
                    }
                })
                .collect();
        }
        current
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_select_members_elements_and_every_element() {
        let v = json!({"results": [{"iri": "a", "n": 1}, {"iri": "b"}], "top": {"x": [5, 6]}});
        let sel = |p: &str| {
            Path::parse(p)
                .unwrap()
                .select(&v)
                .into_iter()
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(sel("results[*].iri"), vec![json!("a"), json!("b")]);
        assert_eq!(sel("results[1].iri"), vec![json!("b")]);
        assert_eq!(sel("results[*].n"), vec![json!(1)]);
        assert_eq!(sel("top.x[0]"), vec![json!(5)]);
        assert_eq!(sel("missing[*]"), Vec::<Value>::new());
        let list = json!([{"id": "p"}, {"id": "q"}]);
        assert_eq!(
            Path::parse("[*].id").unwrap().select(&list),
            vec![&json!("p"), &json!("q")]
        );
    }

    #[test]
    fn bad_paths_say_what_is_wrong() {
        for (path, says) in [
            ("", "empty path"),
            ("a..b", "empty step"),
            ("a[", "never closed"),
            ("a[x]", "neither an index"),
            ("a[0]b", "new step"),
            ("é[*", "never closed"),
        ] {
            let e = Path::parse(path).unwrap_err();
            assert!(e.contains(says), "{path}: {e}");
        }
    }
}
