//! Filled by later issues.
