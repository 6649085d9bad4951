//! `payhub-verify merge SHARD.json…`: the `check-log --shard I/N --format json` outputs of N
//! machines joined into what `check-log --format json` gives for the whole log. The log's
//! own entries are shard 0's, so counts add up; each property's verdict is the least of
//! the shards' ([`super::parts::pick`]); the exit code and closing line are computed again.
//! Shards of different logs or flags, or one missing or given twice, are refused (exit 2).

use super::Closing;
use super::parts::{SKIPS_LISTED, pick};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// The shards' outputs (`check-log --shard I/N --format json`), every I of one N.
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
}

/// The largest shard output read: 256 MiB (at most 50 skipped entries and one witness
/// per property are listed, so a shard's output is small whatever its log).
const SHARD_MAX: usize = 256 << 20;

pub fn run(args: &MergeArgs) -> Result<ExitCode, String> {
    let mut shards = Vec::new();
    for path in &args.shards {
        let bytes = crate::input::read_all(path, SHARD_MAX)?;
        let v: Value = serde_json::from_slice(&bytes)
            .map_err(|e| format!("{}:{}: not check-log's JSON: {e}", path.display(), e.line()))?;
        shards.push((path.display().to_string(), v));
    }
    let merged = merge(&shards)?;
    let worst = merged["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["exit"].as_u64())
        .fold(0u8, |w, e| super::rank(w, e as u8));
    println!(
        "{}",
        serde_json::to_string_pretty(&merged).map_err(|e| e.to_string())?
    );
    Ok(ExitCode::from(worst))
}

/// The shards' `{"files": […]}` joined.
pub fn merge(shards: &[(String, Value)]) -> Result<Value, String> {
    let files = |(name, v): &(String, Value)| {
        v["files"]
            .as_array()
            .cloned()
            .ok_or_else(|| format!("{name}: not check-log's JSON: no \"files\""))
    };
    let all: Vec<Vec<Value>> = shards.iter().map(files).collect::<Result<_, _>>()?;
    let count = all.first().map_or(0, Vec::len);
    let mut merged = Vec::new();
    for k in 0..count {
        let mut parts = Vec::new();
        for (i, f) in all.iter().enumerate() {
            let file = f
                .get(k)
                .ok_or_else(|| format!("{}: judged fewer files than the others", shards[i].0))?;
            parts.push((shards[i].0.as_str(), file));
        }
        merged.push(merge_file(&parts)?);
    }
    Ok(json!({ "files": merged }))
}

/// One file's shards, each the same file judged for one shard.
fn merge_file(parts: &[(&str, &Value)]) -> Result<Value, String> {
    let (first_name, first) = parts[0];
    let of = first["shard"]["of"]
        .as_u64()
        .ok_or_else(|| format!("{first_name}: not a shard's output (check-log --shard I/N)"))?;
    let mut seen = vec![false; of as usize];
    for (name, p) in parts {
        let index = p["shard"]["index"].as_u64().unwrap_or(u64::MAX);
        if p["shard"]["of"].as_u64() != Some(of) || index >= of {
            return Err(format!("{name}: not a shard of {of}"));
        }
        if std::mem::replace(&mut seen[index as usize], true) {
            return Err(format!("{name}: shard {index}/{of} given twice"));
        }
        // The log read, by its bytes (a shard stopped at --memory-max read less of it).
        let stopped = |p: &Value| !p["stopped"].is_null();
        if p["shard"]["log"] != first["shard"]["log"] && !stopped(p) && !stopped(first) {
            return Err(format!(
                "{name}: a shard of another log than {first_name} (its bytes differ)"
            ));
        }
        for same in ["file", "format", "assumptions"] {
            if p[same] != first[same] {
                return Err(format!(
                    "{name}: its {same} differs from {first_name}'s: shards of different logs or flags"
                ));
            }
        }
    }
    if let Some(missing) = seen.iter().position(|s| !s) {
        return Err(format!("shard {missing}/{of} is missing"));
    }
    let sum = |field: &str| {
        parts
            .iter()
            .filter_map(|(_, p)| p[field].as_u64())
            .sum::<u64>()
    };
    let mut skipped: Vec<Value> = parts
        .iter()
        .flat_map(|(_, p)| p["skipped"].as_array().cloned().unwrap_or_default())
        .collect();
    skipped.sort_by_key(|s| {
        let label = s["entry"].as_str().unwrap_or_default();
        let n: u64 = label
            .rsplit(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        n
    });
    skipped.truncate(SKIPS_LISTED);
    let stopped = parts
        .iter()
        .find_map(|(_, p)| p["stopped"].as_str().map(str::to_owned));
    let properties = merge_properties(parts)?;
    let judged = properties
        .iter()
        .filter(|p| p["status"] != "cannot_judge")
        .count();
    let violated = properties.iter().find(|p| p["status"] == "violated");
    let rules = |p: &Value| {
        p["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let closing = Closing {
        violated: violated.map(|p| {
            (
                p["name"].as_str().unwrap_or_default(),
                rules(p),
                p["detail"].as_str().unwrap_or_default(),
            )
        }),
        stopped: stopped.as_deref(),
        sharded: false,
        judged_entries: sum("judged"),
        skipped: sum("unreadable"),
        judged,
        cannot: properties.len() - judged,
        vacuous: properties.iter().filter(|p| p["vacuous"] == true).count(),
    };
    Ok(json!({
        "file": first["file"],
        "format": first["format"],
        "entries": sum("entries"),
        "judged": sum("judged"),
        "not_the_api": sum("not_the_api"),
        "unreadable": sum("unreadable"),
        "skipped": skipped,
        "assumptions": first["assumptions"],
        "refused_for_authentication": sum("refused_for_authentication"),
        "exit": closing.exit(),
        "shard": null,
        "stopped": stopped,
        "verdict": closing.line(),
        "properties": properties,
    }))
}

/// Each property's verdict: the least of the shards that judged a partition (a shard
/// with none of the log's merchants gives what an empty log gives, which no partition
/// of the log would).
fn merge_properties(parts: &[(&str, &Value)]) -> Result<Vec<Value>, String> {
    let judging: Vec<&Value> = parts
        .iter()
        .filter(|(_, p)| p["shard"]["partitions"].as_u64() > Some(0))
        .map(|(_, p)| *p)
        .collect();
    let from = if judging.is_empty() {
        vec![parts[0].1]
    } else {
        judging
    };
    let lists: Vec<&Vec<Value>> = from
        .iter()
        .map(|p| {
            p["properties"]
                .as_array()
                .ok_or("a shard without properties")
        })
        .collect::<Result<_, _>>()?;
    let n = lists[0].len();
    if lists.iter().any(|l| l.len() != n) {
        return Err("the shards judged different properties (different flags?)".into());
    }
    Ok((0..n)
        .map(|i| {
            let candidates: Vec<Value> = lists.iter().map(|l| l[i].clone()).collect();
            let least = pick(&candidates).unwrap_or(0);
            candidates[least].clone()
        })
        .collect())
}
