package flitsim

import "errors"

// Sentinel errors, for errors.Is.
var (
	// ErrConfig marks an invalid Config, Traffic or RunOptions value.
	ErrConfig = errors.New("invalid configuration")
	// ErrUnroutable marks a routing that does not deliver some pair of
	// terminals (no LFT entry, a loop, a port that leads nowhere) or uses
	// more VLs than simulated.
	ErrUnroutable = errors.New("routing does not deliver")
	// ErrDeadlock is wrapped by every *DeadlockError.
	ErrDeadlock = errors.New("deadlock")
)
