package cdg

// IncrementalUpdates counts the incremental verifications of State.Verify.
var IncrementalUpdates = &incrementalUpdates

// MemosTaken counts the verifications that took RepairBase's counts.
var MemosTaken = &memosTaken
