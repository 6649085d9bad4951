//! `payhub-verify assumptions`: every assumption the model takes where the contract is
//! silent, allows several behaviours or can be read two ways (`model/ASSUMPTIONS.md`).

use crate::Format;
use payhub_model::Assumption;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct AssumptionsArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Print only this assumption (e.g. A-WEBHOOK-BLACKOUT).
    #[arg(long)]
    pub id: Option<String>,
}

#[derive(serde::Serialize)]
struct Entry {
    id: &'static str,
    gap: payhub_model::Gap,
    contract: &'static str,
    assumed: &'static str,
    parameter: Option<&'static str>,
}

pub fn run(args: &AssumptionsArgs) -> Result<ExitCode, String> {
    let chosen: Vec<Assumption> = match &args.id {
        Some(id) => vec![
            *Assumption::ALL
                .iter()
                .find(|a| a.id().eq_ignore_ascii_case(id))
                .ok_or_else(|| {
                    crate::usage::unknown("assumption", id, Assumption::ALL.iter().map(|a| a.id()))
                })?,
        ],
        None => Assumption::ALL.to_vec(),
    };
    let entries: Vec<Entry> = chosen
        .iter()
        .map(|a| Entry {
            id: a.id(),
            gap: a.gap(),
            contract: a.contract(),
            assumed: a.taken(),
            parameter: a.parameter(),
        })
        .collect();
    match args.format {
        Format::Json => println!("{}", crate::outcome::json(&entries)?),
        Format::Text => {
            for e in &entries {
                println!("{} ({})", e.id, e.gap.as_str());
                println!("    the contract: {}", e.contract);
                println!("    assumed:      {}", e.assumed);
                if let Some(p) = e.parameter {
                    println!("    parameter:    {p}");
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
