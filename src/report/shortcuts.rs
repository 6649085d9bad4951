//! The search's shortcuts in the report: the cross-check `verify` runs on the small
//! presets (`payhub_properties::checker::shortcuts`), and its summary line.

use crate::verify_cmd::report::Shortcuts;

impl Shortcuts {
    /// One line for the summary.
    pub fn line(&self) -> String {
        let compared = self.check.compared.iter();
        let subjects: std::collections::BTreeSet<&str> =
            compared.clone().map(|c| c.subject.as_str()).collect();
        let mismatch = self.check.mismatches().next();
        match (self.planted, mismatch) {
            (Some(planted), Some(m)) => format!(
                "search shortcuts: FAILED with the unsound shortcut {planted} planted: {} judged otherwise on {}: {}",
                m.shortcut,
                m.subject,
                m.differs.as_deref().unwrap_or_default()
            ),
            (Some(planted), None) => format!(
                "search shortcuts: the unsound shortcut {planted} planted judged alike on {} presets: not caught",
                subjects.len()
            ),
            (None, Some(m)) => format!(
                "search shortcuts: FAILED: {} judged otherwise than the plain breadth-first search on {}: {}",
                m.shortcut,
                m.subject,
                m.differs.as_deref().unwrap_or_default()
            ),
            (None, None) => {
                let mut shortcuts: Vec<&str> = Vec::new();
                for c in compared.filter(|c| c.shortcut != "stateright") {
                    if !shortcuts.contains(&c.shortcut) {
                        shortcuts.push(c.shortcut);
                    }
                }
                let planted = &self.check.planted_caught;
                let caught = planted.iter().filter(|(_, c)| *c).count();
                format!(
                    "search shortcuts: {} judge as the plain breadth-first search on {} presets (planted bugs included), its counts and verdicts those of stateright's own checker; {caught} of {} planted unsound shortcuts caught",
                    shortcuts.join(", "),
                    subjects.len(),
                    planted.len()
                )
            }
        }
    }
}
