//! "Did you mean": the closest known name to a misspelt one, for error
//! messages that name what was expected.

/// How alike two names must be (normalized Damerau-Levenshtein similarity,
/// 0 to 1) for one to be offered as the other.
pub const MIN_SIMILARITY: f64 = 0.6;

/// The candidate most like `name`, if any is at least [`MIN_SIMILARITY`]
/// alike; of equally alike candidates, the last one.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::normalized_damerau_levenshtein(name, c), c))
        .filter(|(score, _)| *score >= MIN_SIMILARITY)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// ` (did you mean 'NAME'?)` with the [`closest`] candidate, or the empty
/// string when none is close: ready to append to a message.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(name, candidates).map_or_else(String::new, |c| format!(" (did you mean '{c}'?)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_close_name_is_offered_and_a_far_one_is_not() {
        let names = ["get_schema", "query", "route_query"];
        assert_eq!(closest("get_shema", names), Some("get_schema"));
        assert_eq!(did_you_mean("zzz", names), "");
        assert_eq!(did_you_mean("qeury", names), " (did you mean 'query'?)");
    }
}
