//! Merchant integrations (issue: the contract's reference client and its anti-patterns).
//! Being built; see the module's own files.
