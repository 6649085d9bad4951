//! What-if scripts: scenarios written in the contract's own notation, run in the world.
//!
//! A script is a text file of one statement per line (grammar: `docs/scripts.md`):
//!
//! ```text
//! # S7: replay with a different card after a timeout
//! use platform=reference max_attempts=3
//! A: POST /v1/payments  Idempotency-Key: K  {"merchant_order_no":"ORDER-001","amount":10000,"currency":"USD","card":"A"}
//! upstream: approve
//! net: drop response
//! A: POST /v1/payments  Idempotency-Key: K  {"merchant_order_no":"ORDER-001","amount":10000,"currency":"USD","card":"B"}
//! expect: 200 status=succeeded
//! expect ledger: charges(card=B) = 0
//! ```
//!
//! [`parse`] reads a file into a [`Script`] (its [`crate::WorldConfig`] and statements)
//! or fails with one `file:line:column: what is wrong`, before anything runs. [`run`]
//! compiles each statement to world [`crate::Choice`]s and applies them with
//! [`crate::World::apply`], so traces, properties and replays are the world's own; a
//! [`crate::driver::Check`] (every *always* property) runs after every step, and the
//! script's own expectations at their lines. [`Report`] renders the run as text, JSON
//! or Mermaid. [`script_from_tape`] writes any tape as a script that `run` reproduces
//! choice for choice: the round trip from a counterexample back to a file a reviewer
//! can read, edit and run again.
//!
//! Files: [`ast`] what a script is, `cursor` and `request` the lexing of a line and of a
//! request line, `parse` the parser (`parse_settings` settings, `parse_step` steps,
//! `parse_expect` expectations), `run` the runner (`run/net` the merchant network,
//! `run/upstream` the upstream link), `expect` expectations, `report` the renderings,
//! `export` the round trip, `label` the world's choice labels read back.

pub mod ast;
mod command;
mod cursor;
mod expect;
mod export;
mod label;
mod parse;
mod parse_expect;
mod parse_settings;
mod parse_step;
mod report;
mod request;
mod run;
mod suggest;

pub use ast::{Script, Server, Statement};
pub use export::{script_from_tape, script_from_tape_filed};
pub(crate) use label::{parse_label, render_send};
pub use parse::parse;
pub use parse_settings::{DURATION_MAX, parse_duration};
pub use report::{Exchange, ExpectResult, Report};
pub use run::run;
pub use suggest::closest;

use serde::Serialize;

/// A malformed script: where, and what is wrong. Nothing ran.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScriptError {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub message: String,
}

impl ScriptError {
    pub fn new(file: &str, line: u32, column: u32, message: impl Into<String>) -> ScriptError {
        ScriptError {
            file: file.to_owned(),
            line,
            column,
            message: message.into(),
        }
    }
}

/// `file:line:column: what is wrong`.
impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

impl std::error::Error for ScriptError {}
