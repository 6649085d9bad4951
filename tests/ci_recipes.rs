//! The CI recipes of docs/ci.md are valid for their CI systems: each YAML block is checked
//! with `check-jsonschema` against its system's own schema (GitHub's workflow schema,
//! GitLab's `.gitlab-ci.yml` schema), and a mistake planted in each is rejected, so the
//! check can fail. A workflow that publishes JUnit verdicts as a check run grants
//! `checks: write`, and every recipe that installs payhub-verify caches the binary.
//! `.ci/install-linters` installs the checker; without it the test says so and passes,
//! unless `PAYHUB_REQUIRE_LINTERS` is set (as `.ci/run` does).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A YAML recipe of docs/ci.md: the marker before it (`workflow`, `gitlab`, …) and its text.
struct Recipe {
    marker: String,
    yaml: String,
}

impl Recipe {
    fn gitlab(&self) -> bool {
        self.marker == "gitlab"
    }

    fn schema(&self) -> &'static str {
        if self.gitlab() {
            "vendor.gitlab-ci"
        } else {
            "vendor.github-workflows"
        }
    }

    /// The same recipe with one mistake its schema forbids.
    fn planted(&self) -> String {
        let (from, to) = if self.gitlab() {
            ("parallel: 4", "parallel: four")
        } else {
            ("runs-on:", "run-on:")
        };
        assert!(
            self.yaml.contains(from),
            "{}: no `{from}` to plant a mistake in",
            self.marker
        );
        self.yaml.replacen(from, to, 1)
    }
}

fn recipes() -> Vec<Recipe> {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci.md"))
        .expect("docs/ci.md");
    let mut out = Vec::new();
    let mut marker = String::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        if let Some(m) = line
            .strip_prefix("<!-- ")
            .and_then(|l| l.strip_suffix(" -->"))
        {
            marker = m.to_owned();
        } else if line == "```yaml" {
            let yaml: String = lines
                .by_ref()
                .take_while(|l| *l != "```")
                .map(|l| format!("{l}\n"))
                .collect();
            out.push(Recipe {
                marker: std::mem::take(&mut marker),
                yaml,
            });
        } else if !line.trim().is_empty() {
            marker.clear();
        }
    }
    out
}

/// Whether `check-jsonschema` runs here; if it does not, the test is skipped unless
/// `PAYHUB_REQUIRE_LINTERS` is set.
fn linter() -> bool {
    let ok = Command::new("python3")
        .args(["-m", "check_jsonschema", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("PAYHUB_REQUIRE_LINTERS").is_none(),
            "check-jsonschema is required (PAYHUB_REQUIRE_LINTERS) but `python3 -m check_jsonschema` does not run: .ci/install-linters installs it"
        );
        eprintln!("skipped: check-jsonschema is not installed (.ci/install-linters)");
    }
    ok
}

/// `check-jsonschema` on `yaml`: whether it validates, and what it printed.
fn validate(dir: &Path, name: &str, schema: &str, yaml: &str) -> (bool, String) {
    let file: PathBuf = dir.join(format!("{name}.yml"));
    std::fs::write(&file, yaml).unwrap();
    let o = Command::new("python3")
        .args(["-m", "check_jsonschema", "--builtin-schema", schema])
        .arg(&file)
        .output()
        .expect("check-jsonschema runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), said)
}

#[test]
fn every_ci_recipe_is_valid_for_its_ci_system_and_a_planted_mistake_is_not() {
    let recipes = recipes();
    let markers: Vec<&str> = recipes.iter().map(|r| r.marker.as_str()).collect();
    assert!(
        markers.contains(&"workflow") && markers.contains(&"gitlab"),
        "{markers:?}"
    );
    if !linter() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("payhub-ci-recipes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, recipe) in recipes.iter().enumerate() {
        let name = format!("{i}-{}", recipe.marker);
        let (ok, said) = validate(&dir, &name, recipe.schema(), &recipe.yaml);
        assert!(
            ok,
            "recipe {name} of docs/ci.md fails {}:\n{said}",
            recipe.schema()
        );
        let (ok, said) = validate(
            &dir,
            &format!("{name}-planted"),
            recipe.schema(),
            &recipe.planted(),
        );
        assert!(
            !ok,
            "a planted mistake in recipe {name} passes {}:\n{said}",
            recipe.schema()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_junit_check_run_has_its_permission_and_the_installed_binary_is_cached() {
    for recipe in recipes() {
        if recipe.yaml.contains("action-junit-report") {
            assert!(
                recipe.yaml.contains("checks: write"),
                "recipe `{}` publishes JUnit as a check run without `checks: write`",
                recipe.marker
            );
        }
        let installs = recipe
            .yaml
            .lines()
            .filter(|l| {
                l.contains("cargo install") && l.contains("payhub-verify")
                    || l.contains("cargo install --locked --path .")
            })
            .count();
        if installs > 0 {
            let cached = if recipe.gitlab() {
                recipe.yaml.contains("cache:")
                    && recipe.yaml.contains("test -x .cargo/bin/payhub-verify")
            } else {
                recipe.yaml.matches("uses: actions/cache@").count() >= installs
                    && recipe.yaml.matches("cache-hit != 'true'").count() >= installs
            };
            assert!(
                cached,
                "recipe `{}` installs payhub-verify without caching it",
                recipe.marker
            );
        }
    }
}
