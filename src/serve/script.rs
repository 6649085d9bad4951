//! The session as a what-if script: its tape written by `script_from_tape`, which
//! `payhub-verify run` replays choice for choice in the simulated world.
//!
//! The script's world is the sandbox's, minus what a script cannot say: the business
//! orders the sandbox read off the wire (`business.rs`). The export replays the tape to
//! find the verdict `run` will give, expects its first violation (so the script passes
//! while the behaviour is there), and says in a comment which verdicts the session had
//! that the script's world cannot reproduce.

use super::sandbox::Sandbox;
use crate::judge_cmd::verdicts;
use payhub_sim::World;
use payhub_sim::driver::Violation;

/// The session's script.
pub fn export(sandbox: &Sandbox) -> Result<String, String> {
    let config = sandbox.config();
    let tape = sandbox.tape();
    let mut no_check = |_: &World| -> Option<Violation> { None };
    let (replayed, _) = payhub_sim::driver::replay(config, tape, &mut no_check, None)
        .map_err(|(i, e)| format!("the session does not replay at step {}: {e}", i + 1))?;
    let script_verdicts = verdicts(&replayed.facts);
    let session_verdicts = verdicts(&sandbox.world().facts);
    let violation = script_verdicts
        .iter()
        .find(|v| v.status == crate::judge_cmd::Status::Violated)
        .map(|v| v.name);
    let about = format!(
        "A payhub-verify serve session: {} choices, {} events, ending at {}",
        tape.len(),
        sandbox.trace().stream.len(),
        sandbox.world_now()
    );
    let text = payhub_sim::script::script_from_tape(config, tape, violation, &about)?;
    let differ: Vec<String> = session_verdicts
        .iter()
        .zip(&script_verdicts)
        .filter(|(s, r)| s.status != r.status)
        .map(|(s, r)| {
            format!(
                "{} ({} in the session, {} here)",
                s.name, s.status, r.status
            )
        })
        .collect();
    if differ.is_empty() {
        return Ok(text);
    }
    let (title, rest) = text.split_once('\n').unwrap_or((&text, ""));
    Ok(format!(
        "{title}\n# The session filed creates under business orders its wire witnessed (a new order number for an order whose result was unknown), which a script cannot express; verdicts that differ: {}.\n{rest}",
        differ.join("; ")
    ))
}
