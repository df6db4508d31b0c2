package main

import (
	"errors"

	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/internal/exitstatus"
	"github.com/nuesm/nuesm/routing"
)

// exitHelp documents the exit statuses (nuesm's: internal/exitstatus).
const exitHelp = `Exit status: 0 success; 1 other failures (I/O, internal errors); 2 usage:
unknown command or flag, bad arguments, no or several fabric sources,
a flag value out of range or not understood (--vls outside 1..15,
--load outside (0, 1], an unknown engine, traffic or policy, a bad
--gen-param); 3 input: a dump, table set (--lfts), roles file or sweep
point file unreadable or not what it should be; 4 unsafe: tables fail
verification, no engine of the chain produced tables, or the simulated
tables deadlock.`

// usageError marks err (nil stays nil) as a usage error.
func usageError(err error) error { return exitstatus.UsageError(err) }

// inputError marks err as an input file's fault, so that a
// flitsim.ErrConfig it wraps from the file is not taken for a flag.
func inputError(err error) error { return exitstatus.With(exitstatus.Input, err) }

// unsafeError marks err as unsafe tables.
func unsafeError(err error) error { return exitstatus.With(exitstatus.Unsafe, err) }

// exitCode is the exit status for an error of Execute. flitsim.ErrConfig
// marks a configuration value the simulator refuses; the command line is
// where those values come from, so it is a usage error unless the error
// carries a status of its own. A failed engine chain is unsafe, as in
// nuesm.
func exitCode(err error) int {
	if !exitstatus.Carried(err) {
		switch {
		case errors.Is(err, flitsim.ErrConfig):
			return exitstatus.Usage
		case errors.Is(err, routing.ErrChainFailed), errors.Is(err, flitsim.ErrDeadlock):
			return exitstatus.Unsafe
		}
	}
	return exitstatus.Code(err)
}
