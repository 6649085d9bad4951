//! Did you mean …? The closest known word to a near miss, for every name a script or a
//! command line takes (statements, servers, endpoints; the CLI's presets and policies).

/// The closest of `candidates` to `word` if it is close enough to be a typo (Jaro-Winkler
/// similarity above 0.8), else `None`.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// The route (`METHOD /path`) of `routes` a request line nearly is: the same method, and a
/// path at most a quarter of its characters away (Levenshtein).
pub(crate) fn closest_route<'a>(asked: &str, routes: &[&'a str]) -> Option<&'a str> {
    let (method, path) = asked.split_once(' ')?;
    routes
        .iter()
        .filter_map(|r| {
            let (m, p) = r.split_once(' ')?;
            (m == method).then(|| (strsim::normalized_levenshtein(path, p), *r))
        })
        .filter(|(score, _)| *score >= 0.75)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, r)| r)
}

/// ` (did you mean 'x'?)` for a near miss, else nothing.
pub(crate) fn hint<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let near = closest(word, candidates);
    near.map(|c| format!(" (did you mean '{c}'?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_is_named_and_a_stranger_is_not() {
        assert_eq!(
            closest("upstrem:", ["upstream:", "net:"]),
            Some("upstream:")
        );
        assert_eq!(closest("wiat", ["wait", "tick"]), Some("wait"));
        assert_eq!(closest("zzz", ["wait", "tick"]), None);
    }
}
