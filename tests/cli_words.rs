//! Every output speaks the contract, not Rust: no type or variant name
//! (`Declined(AuthenticationFailed)`, `OrderNoReuse`, `ClientParams::after_503`) in any
//! format of any command, over planted bugs (a platform mutant and a client
//! anti-pattern), the scenario and findings scripts, recorded traffic and a sandbox
//! session. The formats are read from each command's `--help`, so a new format is
//! covered when it is added.

mod common;
use common::{bin, code, run, stdout};
use std::io::{BufRead, Read, Write};

/// Words an output may hold that look like Rust names: product and font names, and the
/// contract's own reference code (`AbortSignal.timeout(20_000)`, `Number(raw)`, `NaN`),
/// quoted.
const ALLOWED: &[&str] = &[
    "PayHub",
    "GitHub",
    "DejaVu",
    "PingFang",
    "YaHei",
    "JUnit",
    "JavaScript",
    "AbortSignal",
    "Number",
    "NaN",
];

/// The first Rust-looking names in `text`: a CamelCase word of two or more humps
/// (`ActionRequired`), a path (`Branch::S4Conflict`), or a capitalised word called like
/// a tuple variant (`Declined(`, `Some(`).
fn rust_names(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_alphanumeric() && bytes[i] != b'_' {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            i += 1;
        }
        let word = &text[start..i];
        let after = &text[i..];
        let first_upper = word.as_bytes()[0].is_ascii_uppercase();
        let humps = word
            .as_bytes()
            .windows(2)
            .filter(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
            .count();
        let camel = first_upper && humps >= 1 && !word.contains('_');
        let path = first_upper && after.starts_with("::") && word.len() > 1;
        let tuple = first_upper
            && word.len() > 2
            && word[1..].bytes().all(|b| b.is_ascii_lowercase())
            && after.starts_with('(');
        if (camel || path || tuple) && !ALLOWED.contains(&word) {
            let context: String = text[start.saturating_sub(40)..].chars().take(100).collect();
            found.push(format!("{word:?} in …{context}…"));
            if found.len() == 5 {
                break;
            }
        }
    }
    found
}

/// `text` without its `<script>` and `<style>` elements (a page's code is not output).
fn visible(text: &str) -> String {
    let mut rest = text;
    let mut kept = String::new();
    loop {
        let next = ["<script", "<style"]
            .iter()
            .filter_map(|tag| rest.find(tag).map(|at| (at, tag)))
            .min();
        let Some((at, tag)) = next else {
            kept.push_str(rest);
            return kept;
        };
        kept.push_str(&rest[..at]);
        let close = format!("</{}>", &tag[1..]);
        rest = rest[at..]
            .find(&close)
            .map_or("", |end| &rest[at + end + close.len()..]);
    }
}

/// The values of `--format` a command's help lists.
fn formats(command: &[&str]) -> Vec<String> {
    let mut args = command.to_vec();
    args.push("--help");
    let help = stdout(&run(&args));
    let section = help
        .split("--format <FORMAT>")
        .nth(1)
        .unwrap_or_else(|| panic!("{command:?} has no --format"));
    let section = section.split("[default:").next().unwrap_or(section);
    let listed: Vec<String> = section
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|l| l.split(':').next().unwrap().trim().to_owned())
        .collect();
    if !listed.is_empty() {
        return listed;
    }
    // The short help form: "[possible values: text, json]".
    help.split("--format <FORMAT>")
        .nth(1)
        .and_then(|s| s.split("[possible values: ").nth(1))
        .and_then(|s| s.split(']').next())
        .map(|s| s.split(", ").map(str::to_owned).collect())
        .unwrap_or_else(|| panic!("{command:?}'s --format lists no values"))
}

/// Runs `args` with every `--format` value and checks each output.
fn every_format(args: &[&str], skip: &[&str], problems: &mut Vec<String>) {
    let command: Vec<&str> = args
        .iter()
        .copied()
        .take_while(|a| !a.starts_with('-'))
        .collect();
    let command = &command[..command.len().min(1)];
    let fs = formats(command);
    assert!(fs.len() >= 2, "{command:?}: formats {fs:?}");
    for f in fs.iter().filter(|f| !skip.contains(&f.as_str())) {
        let mut all = args.to_vec();
        all.extend(["--format", f]);
        let o = run(&all);
        assert!(
            matches!(code(&o), 0 | 1),
            "{all:?} exit {}: {}",
            code(&o),
            common::stderr(&o)
        );
        let text = visible(&format!("{}{}", stdout(&o), common::stderr(&o)));
        assert!(!text.trim().is_empty(), "{all:?} printed nothing");
        for name in rust_names(&text) {
            problems.push(format!("{}: {name}", all.join(" ")));
        }
    }
}

/// A sandbox stopped when the test ends, passed or failed.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_scanner_finds_rust_names_and_passes_the_contracts_words() {
    for leak in [
        "att_001: Declined(AuthenticationFailed)",
        "att_001: ActionRequired",
        "reaches the branch point OrderNoReuse, where",
        "parameter: ClientParams::after_503",
        "clock: Some(Manual)",
    ] {
        assert!(!rust_names(leak).is_empty(), "missed {leak:?}");
    }
    for fine in [
        "att_001: declined: authentication_failed",
        "POST /v1/payments  Idempotency-Key: K → 409 idempotency_conflict",
        "PayHub S4 (a used merchant_order_no under a new key); Retry-After: 2",
        "VIOLATED at-most-one-charge-per-scope [EFFECT-01]: Payment pay_demo_001",
    ] {
        assert!(
            rust_names(fine).is_empty(),
            "{fine:?}: {:?}",
            rust_names(fine)
        );
    }
}

#[test]
fn the_model_s_commands_speak_the_contract_in_every_format() {
    let mut problems = Vec::new();
    // A platform mutant's and a client anti-pattern's counterexamples.
    let out = std::env::temp_dir().join(format!("payhub-words-{}", std::process::id()));
    let out = out.to_str().unwrap();
    every_format(
        &[
            "verify",
            "--mutant",
            "cancel_accepted_without_payment",
            "--preset",
            "cancel",
            "--out",
            out,
        ],
        &[],
        &mut problems,
    );
    for file in ["report.md", "report.json", "report.html"] {
        let text = std::fs::read_to_string(format!("{out}/{file}")).unwrap();
        for name in rust_names(&visible(&text)) {
            problems.push(format!("verify's {file}: {name}"));
        }
    }
    every_format(&["check", "--preset", "cancel"], &[], &mut problems);
    every_format(
        &[
            "simulate",
            "--seeds",
            "0..20",
            "--policy",
            "new_key_after_timeout",
        ],
        &[],
        &mut problems,
    );
    every_format(&["replay", "--seed", "3"], &[], &mut problems);
    // A platform mutant's counterexample is no script (a script runs the reference
    // platform): `mutants` refuses that format for it, clearly.
    every_format(
        &["mutants", "--show", "card_in_fingerprint"],
        &["script"],
        &mut problems,
    );
    every_format(
        &["mutants", "--show", "new_key_after_timeout"],
        &[],
        &mut problems,
    );
    let scripts: Vec<String> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".pha"))
        .collect();
    assert!(scripts.len() >= 30, "{} scripts", scripts.len());
    let mut args = vec!["run"];
    args.extend(scripts.iter().map(String::as_str));
    every_format(&args, &[], &mut problems);
    every_format(&["assumptions"], &[], &mut problems);
    every_format(&["rules"], &[], &mut problems);
    every_format(&["rules", "--coverage"], &[], &mut problems);
    assert!(
        problems.is_empty(),
        "Rust names in output:\n{}",
        problems.join("\n")
    );
}

#[test]
fn recorded_traffic_and_the_sandbox_speak_the_contract_in_every_format() {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    let mut problems = Vec::new();
    for har in [
        "client-new-key-after-unknown.har",
        "platform-two-payments.har",
        "chrome.har",
    ] {
        let path = format!("{fixtures}/har/{har}");
        every_format(&["check-log", &path], &[], &mut problems);
    }
    let events = stdout(&run(&["replay", "--seed", "3", "--format", "events"]));
    let events = common::temp("words-events.jsonl", &events);
    every_format(&["judge", events.to_str().unwrap()], &[], &mut problems);

    // A sandbox session: its banner and every export after a few exchanges.
    let mut child = Killed(
        bin()
            .args(["serve", "--addr", "127.0.0.1:0", "--clock", "manual"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut out = std::io::BufReader::new(child.0.stdout.take().unwrap());
    let mut banner = String::new();
    while !banner.contains("control endpoints") {
        if out.read_line(&mut banner).unwrap() == 0 {
            break;
        }
    }
    std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    let addr = banner
        .lines()
        .next()
        .and_then(|l| l.split("http://").nth(1))
        .unwrap()
        .to_owned();
    for name in rust_names(&banner) {
        problems.push(format!("serve's banner: {name}"));
    }
    assert!(banner.contains("clock: manual,"), "{banner}");
    let exchange = |request: String| {
        let mut stream = std::net::TcpStream::connect(&addr).unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(30)))
            .unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    };
    let post = |key: &str, order: &str, card: &str| {
        let body = format!(
            r#"{{"merchant_order_no":"{order}","amount":100,"currency":"CNY","card":"{card}"}}"#
        );
        exchange(format!(
            "POST /v1/payments HTTP/1.0\r\nHost: localhost\r\nAuthorization: Bearer ak_1\r\n\
             Idempotency-Key: {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ))
    };
    for (key, order, card) in [
        ("k1", "O1", "A"),
        ("k2", "O2", "B"),
        ("k3", "O3", "C"),
        ("k4", "O1", "A"),
    ] {
        let answer = post(key, order, card);
        assert!(answer.starts_with("HTTP/1."), "{answer}");
    }
    for path in [
        "/__sandbox/verdict",
        "/__sandbox/verdict?format=markdown",
        "/__sandbox/page.json",
        "/__sandbox/",
        "/__sandbox/events",
        "/__sandbox/har",
        "/__sandbox/script",
    ] {
        let answer = exchange(format!("GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n"));
        assert!(
            answer.starts_with("HTTP/1.0 200") || answer.starts_with("HTTP/1.1 200"),
            "{path}: {answer}"
        );
        for name in rust_names(&visible(&answer)) {
            problems.push(format!("GET {path}: {name}"));
        }
    }
    drop(child);
    assert!(
        problems.is_empty(),
        "Rust names in output:\n{}",
        problems.join("\n")
    );
}
