//! `payhub-verify rules`: the rule catalogue as text or JSON.

use crate::Format;
use payhub_model::{Rule, RuleEntry};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct RulesArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Print only this rule (e.g. SCOPE-02).
    #[arg(long)]
    pub id: Option<String>,
}

impl Default for RulesArgs {
    fn default() -> Self {
        RulesArgs {
            format: Format::Text,
            id: None,
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
    match args.format {
        Format::Json => {
            let entries: Vec<RuleEntry> = rules.into_iter().map(RuleEntry::from).collect();
            let json = serde_json::to_string_pretty(&entries).map_err(|e| e.to_string())?;
            println!("{json}");
        }
        Format::Text => {
            let mut section = None;
            for rule in &rules {
                if section != Some(rule.section()) {
                    section = Some(rule.section());
                    println!("\n## {}", rule.section().title());
                }
                let ac = rule.ac().map(|a| format!(" [{a}]")).unwrap_or_default();
                let who = format!("{:?}", rule.enforcer()).to_lowercase();
                println!("{:<11} {:<8} {}{}", rule.id(), who, rule.text(), ac);
            }
            println!("\n{} rules", rules.len());
        }
    }
    Ok(ExitCode::SUCCESS)
}
