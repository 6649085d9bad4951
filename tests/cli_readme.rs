//! The README's examples and the CI workflow of docs/ci.md, run as a user copies them:
//! every ```sh block of the README preceded by `<!-- runnable -->`, and every `run:` step
//! of the workflow, with the built `payhub-verify` first on `PATH`, in a scratch folder
//! holding links to the repository's `docs/`, `scenarios/` and `tests/`; each bounded in
//! time (a block that hangs fails, its child processes killed).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BOUND: Duration = Duration::from_secs(300);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A scratch folder with the repository's folders the examples name.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("payhub-readme-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for d in ["docs", "scenarios", "tests"] {
        std::os::unix::fs::symlink(repo().join(d), dir.join(d)).unwrap();
    }
    dir
}

/// Runs `script` with bash (-e, pipefail) in `dir`, bounded; panics with its output if
/// it fails or overruns. The output goes to files beside `dir`, never to a pipe nobody
/// reads while the block runs (a full pipe would stop the block).
fn run_block(dir: &Path, script: &str, env: &[(&str, String)]) {
    let out_path = dir.with_extension("stdout");
    let err_path = dir.with_extension("stderr");
    let bin = Path::new(env!("CARGO_BIN_EXE_payhub-verify"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(format!("set -eo pipefail\n{script}"))
        .current_dir(dir)
        .env("PATH", path)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap());
    for (k, v) in env {
        cmd.env(k, v);
    }
    // Its own process group, so that a hung block's background sandbox is killed too.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().unwrap();
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
            let (stdout, stderr) = (read(&out_path), read(&err_path));
            let _ = std::fs::remove_file(&out_path);
            let _ = std::fs::remove_file(&err_path);
            assert!(
                status.success(),
                "block failed ({status}):\n{script}\nstdout:\n{stdout}\nstderr:\n{stderr}"
            );
            return;
        }
        if started.elapsed() > BOUND {
            let _ = Command::new("kill")
                .args(["-9", &format!("-{}", child.id())])
                .status();
            panic!("block ran past {BOUND:?}:\n{script}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The README's ```sh blocks marked `<!-- runnable -->` on the line before.
fn runnable_blocks(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < lines.len() {
        if lines[i].trim() == "<!-- runnable -->" {
            assert_eq!(
                lines[i + 1].trim(),
                "```sh",
                "a runnable marker must precede ```sh"
            );
            let mut block = String::new();
            let mut j = i + 2;
            while lines[j].trim() != "```" {
                block.push_str(lines[j]);
                block.push('\n');
                j += 1;
            }
            out.push(block);
            i = j;
        }
        i += 1;
    }
    out
}

#[test]
fn the_readme_runnable_blocks_succeed_as_copied() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let blocks = runnable_blocks(&readme);
    // One per use at least: rules, integration, recorded traffic, a platform, CI, scripts.
    assert!(blocks.len() >= 6, "{} runnable blocks", blocks.len());
    let dir = scratch("readme");
    for block in &blocks {
        run_block(&dir, block, &[]);
    }
    // The integration example's judge exits 0 on the contract-following client.
    assert!(dir.join("events.jsonl").exists());
    assert!(dir.join("reports/check.xml").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_readme_fits_on_a_few_screens_and_names_the_contract() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(
        readme.len() <= 20 * 1024,
        "README is {} bytes",
        readme.len()
    );
    assert!(readme.contains("Idempotency, retries and status queries"));
    assert!(readme.contains("v1.0.0"));
    assert!(readme.contains("cargo install --locked --path ."));
    assert!(!readme.contains("shared/"));
}

/// The `run:` steps of the workflow in docs/ci.md, per job, in order.
fn workflow_steps(text: &str) -> Vec<(String, Vec<String>)> {
    let start = text.find("<!-- workflow -->").expect("workflow marker");
    let yaml = &text[start..];
    let yaml = &yaml[yaml.find("```yaml").unwrap() + 7..];
    let yaml = &yaml[..yaml.find("```").unwrap()];
    let mut jobs: Vec<(String, Vec<String>)> = Vec::new();
    let lines: Vec<&str> = yaml.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        let indent = l.len() - l.trim_start().len();
        if indent == 2 && l.trim_end().ends_with(':') && !l.trim().starts_with('-') {
            jobs.push((l.trim().trim_end_matches(':').to_owned(), Vec::new()));
        }
        if l.trim() == "run: |" {
            let mut body = String::new();
            let mut j = i + 1;
            while j < lines.len() {
                let m = lines[j];
                let mi = m.len() - m.trim_start().len();
                if !m.trim().is_empty() && mi <= indent {
                    break;
                }
                let line = m.get(indent + 2..).unwrap_or("").to_owned();
                if !line.trim_start().starts_with("cargo install") {
                    body.push_str(&line);
                    body.push('\n');
                }
                j += 1;
            }
            jobs.last_mut().unwrap().1.push(body);
            i = j;
            continue;
        }
        i += 1;
    }
    jobs
}

#[test]
fn the_ci_workflow_runs_locally() {
    let doc = std::fs::read_to_string(repo().join("docs/ci.md")).unwrap();
    let jobs = workflow_steps(&doc);
    let names: Vec<&str> = jobs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["integration", "sweep"]);
    for (job, steps) in &jobs {
        let shards: Vec<String> = if job == "sweep" {
            (0..4).map(|s| s.to_string()).collect()
        } else {
            vec![String::new()]
        };
        for shard in shards {
            let dir = scratch(&format!("ci-{job}-{shard}"));
            let github_env = dir.join("github-env");
            std::fs::write(&github_env, "").unwrap();
            for step in steps {
                // $GITHUB_ENV's lines are exported to the next steps, as the runner does.
                let exported = std::fs::read_to_string(&github_env).unwrap();
                let prelude: String = exported.lines().map(|l| format!("export {l}\n")).collect();
                let body = step.replace("${{ matrix.shard }}", &shard);
                run_block(
                    &dir,
                    &format!("{prelude}{body}"),
                    &[("GITHUB_ENV", github_env.display().to_string())],
                );
            }
            let reports: Vec<PathBuf> = std::fs::read_dir(dir.join("reports"))
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "xml"))
                .collect();
            assert!(!reports.is_empty(), "{job}: no JUnit report");
            for r in reports {
                let xml = std::fs::read_to_string(&r).unwrap();
                let doc = roxmltree::Document::parse(&xml).unwrap();
                assert_eq!(doc.root_element().attribute("failures"), Some("0"));
                assert!(
                    doc.descendants()
                        .filter(|n| n.has_tag_name("testcase"))
                        .count()
                        > 10
                );
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

/// Every folder of the four crates' sources under `dir`, as `dir/...` paths (test folders
/// left out).
fn source_folders(dir: &Path, rel: &str, out: &mut Vec<String>) {
    out.push(rel.to_owned());
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        if path.is_dir() && !name.starts_with("tests") {
            source_folders(&path, &format!("{rel}/{name}"), out);
        }
    }
}

#[test]
fn the_architecture_drawing_has_one_box_per_source_folder() {
    let doc = std::fs::read_to_string(repo().join("docs/architecture.md")).unwrap();
    let boxes: std::collections::BTreeSet<&str> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("│ "))
        .flat_map(|l| l.split("│ │ "))
        .map(|cell| cell.trim_end_matches('│').trim())
        .filter(|cell| cell.ends_with("src") || cell.contains("src/"))
        .collect();
    let mut folders = Vec::new();
    for root in ["model/src", "sim/src", "properties/src", "src"] {
        source_folders(&repo().join(root), root, &mut folders);
    }
    let missing: Vec<&String> = folders
        .iter()
        .filter(|f| !boxes.contains(f.as_str()))
        .collect();
    assert!(missing.is_empty(), "folders with no box: {missing:?}");
    let gone: Vec<&&str> = boxes
        .iter()
        .filter(|b| !folders.iter().any(|f| f == *b))
        .collect();
    assert!(gone.is_empty(), "boxes of no folder: {gone:?}");
}
