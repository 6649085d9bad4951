//! `payhub-verify rules`: the rule catalogue as text or JSON. `--id` quotes the rule's
//! sentence in English and in the Chinese original; the JSON carries both (`text`, `zh`).

use crate::Format;
use crate::verify_cmd::coverage::{Judged, judged};
use payhub_model::{Rule, RuleEntry};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct RulesArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Print only this rule (e.g. SCOPE-02), its sentence in English and in the Chinese
    /// original.
    #[arg(long)]
    pub id: Option<String>,
    /// For every rule: the properties that check it, or why none does.
    #[arg(long)]
    pub coverage: bool,
}

impl Default for RulesArgs {
    fn default() -> Self {
        RulesArgs {
            format: Format::Text,
            id: None,
            coverage: false,
        }
    }
}

pub fn run(args: &RulesArgs) -> Result<ExitCode, String> {
    let rules: Vec<Rule> = match &args.id {
        Some(id) => vec![
            Rule::from_id(id)
                .ok_or_else(|| format!("unknown rule id '{id}' (see `payhub-verify rules`)"))?,
        ],
        None => Rule::ALL.to_vec(),
    };
    if args.coverage {
        return coverage(&rules, args.format);
    }
    match args.format {
        Format::Json => {
            let entries: Vec<RuleEntry> = rules.into_iter().map(RuleEntry::from).collect();
            println!("{}", crate::outcome::json(&entries)?);
        }
        Format::Text => {
            let mut section = None;
            for rule in &rules {
                if section != Some(rule.section()) {
                    section = Some(rule.section());
                    let title = rule.section();
                    println!("\n## {} · {}", title.title(), title.title_zh());
                }
                let ac = rule.ac().map(|a| format!(" [{a}]")).unwrap_or_default();
                let who = format!("{:?}", rule.enforcer()).to_lowercase();
                if args.id.is_some() {
                    // One rule: its sentence in both languages, the Chinese authoritative.
                    println!("{:<11} {who}{ac}", rule.id());
                    println!("{:<11} en: {}", "", rule.text());
                    println!("{:<11} zh: {}", "", rule.zh());
                } else {
                    println!("{:<11} {:<8} {}{}", rule.id(), who, rule.text(), ac);
                }
            }
            println!("\n{} rules", rules.len());
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(serde::Serialize)]
struct CoverageEntry {
    id: &'static str,
    /// How it is judged: `whole`, `in_part`, `test_only` (reach checks, unit tests and
    /// scripts), `none`.
    judged: Judged,
    /// The properties that judge it: predicates that can fail.
    properties: Vec<&'static str>,
    /// The reach checks that list it, counted apart.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    reach: Vec<&'static str>,
    /// What its properties leave unjudged (rules judged in part only).
    #[serde(skip_serializing_if = "Option::is_none")]
    in_part: Option<&'static str>,
    /// Why no property judges it (rules no property judges only).
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    /// The tests and scripts that check it instead.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    checked_by: Vec<&'static str>,
}

/// `rules --coverage`: which properties check each rule; the others with a reason; then
/// the counts: judged whole, in part, by reach checks, tests and scripts only.
fn coverage(rules: &[Rule], format: Format) -> Result<ExitCode, String> {
    let entries: Vec<CoverageEntry> = rules
        .iter()
        .map(|&r| {
            let properties: Vec<&'static str> =
                payhub_properties::judging(r).map(|p| p.name).collect();
            let unjudged = properties.is_empty().then(|| r.unjudged()).flatten();
            CoverageEntry {
                id: r.id(),
                judged: judged(r),
                reach: payhub_properties::reaching(r).map(|p| p.name).collect(),
                in_part: r.judged_in_part().filter(|_| !properties.is_empty()),
                reason: properties.is_empty().then(|| {
                    unjudged.map_or(
                        "no reason recorded in the catalogue (model/src/rules/mod.rs)",
                        |u| u.why,
                    )
                }),
                checked_by: unjudged.map(|u| u.checked_by.to_vec()).unwrap_or_default(),
                properties,
            }
        })
        .collect();
    let count = |j: Judged| entries.iter().filter(|e| e.judged == j).count();
    match format {
        Format::Json => println!("{}", crate::outcome::json(&entries)?),
        Format::Text => {
            for e in &entries {
                match e.reason {
                    None => println!("{:<11} checked by {}", e.id, e.properties.join(", ")),
                    Some(reason) => {
                        println!("{:<11} no property: {reason}", e.id);
                        println!("{:<11} checked by {}", "", e.checked_by.join(", "));
                    }
                }
                if let Some(part) = e.in_part {
                    println!("{:<11} in part: not judged: {part}", "");
                }
                if !e.reach.is_empty() {
                    println!("{:<11} reached by {}", "", e.reach.join(", "));
                }
            }
            println!(
                "\n{} rules (one per sentence of the contract the catalogue holds): {} judged whole by properties that can fail, {} in part (what is not judged listed), {} by reach checks, unit tests and scripts only (each with why no property does), {} by nothing; reach checks are never counted as judging",
                entries.len(),
                count(Judged::Whole),
                count(Judged::InPart),
                count(Judged::TestOnly),
                count(Judged::None)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
