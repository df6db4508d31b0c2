package cdg

// IncrementalUpdates counts the incremental verifications of State.Verify.
var IncrementalUpdates = &incrementalUpdates
