package main

import (
	"errors"

	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/internal/exitstatus"
)

// exitHelp documents the exit statuses (nuesm's 0, 1 and 2).
const exitHelp = `Exit status: 0 success; 1 other failures: an input unreadable, tables
that fail verification, a deadlock, I/O and internal errors; 2 usage:
unknown command or flag, bad arguments, no or several fabric sources,
a flag value out of range or not understood (--vls outside 1..15,
--load outside (0, 1], an unknown engine, traffic or policy, a bad
--gen-param).`

// usageError marks err (nil stays nil) as a usage error.
func usageError(err error) error { return exitstatus.UsageError(err) }

// failure marks err as a failure other than usage, so that a
// flitsim.ErrConfig it wraps from an input file is not taken for a flag.
func failure(err error) error { return exitstatus.With(exitstatus.Failure, err) }

// exitCode is the exit status for an error of Execute. flitsim.ErrConfig
// marks a configuration value the simulator refuses; the command line is
// where those values come from, so it is a usage error unless the error
// carries a status of its own.
func exitCode(err error) int {
	if !exitstatus.Carried(err) && errors.Is(err, flitsim.ErrConfig) {
		return exitstatus.Usage
	}
	return exitstatus.Code(err)
}
