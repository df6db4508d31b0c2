package main

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/nuesm/nuesm/internal/exitstatus"
	"github.com/nuesm/nuesm/internal/vlflag"
	"github.com/nuesm/nuesm/routing"
)

// Exit statuses (exitHelp documents them).
const (
	exitFailure = exitstatus.Failure // anything else: I/O failures, internal errors
	exitUsage   = exitstatus.Usage   // the command line or the configuration
	exitInput   = exitstatus.Input   // an input file unreadable or not what it should be
	exitUnsafe  = exitstatus.Unsafe  // tables unsafe or unroutable, or no safe plan
)

const exitHelp = `Exit status: 0 success; 1 other failures (I/O, internal errors); 2 usage:
unknown command or flag, bad arguments, a setting out of range (--vls
outside 1..15), a bad engine chain or parameter, a bad configuration
file; 3 input: a dump, table set, SL or jobs file unreadable or not what
it should be; 4 unsafe: tables fail verification, no engine of the chain
produced a verified routing, or an update plan is not safe.`

func usageError(err error) error  { return exitstatus.With(exitUsage, err) }
func inputError(err error) error  { return exitstatus.With(exitInput, err) }
func unsafeError(err error) error { return exitstatus.With(exitUnsafe, err) }

// exitCode is the exit status for an error of Execute: a failed engine
// chain is unsafe unless the error carries a status of its own.
func exitCode(err error) int {
	if !exitstatus.Carried(err) && errors.Is(err, routing.ErrChainFailed) {
		return exitUnsafe
	}
	return exitstatus.Code(err)
}

// checkVLs refuses a --vls given out of 1..15 (a usage error).
func checkVLs(fl *pflag.FlagSet) error { return usageError(vlflag.Check(fl, "vls")) }
