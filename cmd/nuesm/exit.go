package main

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nuesm/nuesm/internal/vlflag"
	"github.com/nuesm/nuesm/routing"
)

// Exit statuses (exitHelp documents them).
const (
	exitFailure = 1 // anything else: I/O failures, internal errors
	exitUsage   = 2 // the command line or the configuration
	exitInput   = 3 // an input file unreadable or not what it should be
	exitUnsafe  = 4 // tables unsafe or unroutable, or no safe plan
)

const exitHelp = `Exit status: 0 success; 1 other failures (I/O, internal errors); 2 usage:
unknown command or flag, bad arguments, a setting out of range (--vls
outside 1..15), a bad engine chain or parameter, a bad configuration
file; 3 input: a dump, table set, SL or jobs file unreadable or not what
it should be; 4 unsafe: tables fail verification, no engine of the chain
produced a verified routing, or an update plan is not safe.`

// exitError carries an exit status with its error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// withExit marks err (nil stays nil) with an exit status.
func withExit(code int, err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return &exitError{code: code, err: err}
}

func usageError(err error) error  { return withExit(exitUsage, err) }
func inputError(err error) error  { return withExit(exitInput, err) }
func unsafeError(err error) error { return withExit(exitUnsafe, err) }

// cobraUsagePrefixes begin the usage errors cobra returns past
// markUsage's hooks: unknown commands, missing required flags, flags set
// together that exclude each other.
var cobraUsagePrefixes = []string{"unknown command ", "unknown shorthand flag", "required flag(s) ", "if any flags in the group "}

// exitCode is the exit status for an error of Execute.
func exitCode(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, routing.ErrChainFailed):
		return exitUnsafe
	}
	for _, p := range cobraUsagePrefixes {
		if strings.HasPrefix(err.Error(), p) {
			return exitUsage
		}
	}
	return exitFailure
}

// markUsage makes flag errors, argument count errors and --vls out of
// range usage errors in c and every command below it.
func markUsage(c *cobra.Command) {
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, a []string) error { return usageError(args(cmd, a)) }
	}
	for _, sub := range c.Commands() {
		markUsage(sub)
	}
}

// checkVLs refuses a --vls given out of 1..15 (a usage error).
func checkVLs(fl *pflag.FlagSet) error { return usageError(vlflag.Check(fl, "vls")) }
