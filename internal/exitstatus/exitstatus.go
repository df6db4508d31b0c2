// Package exitstatus carries a command's exit status with its error, so
// that nuesm and flitsim sort their errors the same way: a usage error
// (status 2), an unreadable input (3), unsafe tables (4), other failures
// (1).
package exitstatus

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// The statuses every command shares.
const (
	Failure = 1 // anything the error does not classify: I/O, internal errors
	Usage   = 2 // the command line: unknown command or flag, bad arguments or settings
	Input   = 3 // an input file unreadable or not what it should be
	Unsafe  = 4 // tables unsafe or unroutable, or no safe plan
)

// Error is an error with the exit status it ends the command with.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// With marks err (nil stays nil) with status code, unless err carries a
// status already.
func With(code int, err error) error {
	if err == nil || Carried(err) {
		return err
	}
	return &Error{Code: code, Err: err}
}

// UsageError marks err as a usage error.
func UsageError(err error) error { return With(Usage, err) }

// Carried reports whether err (or an error it wraps) carries a status.
func Carried(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// cobraUsagePrefixes begin the usage errors cobra returns past
// MarkUsage's hooks: unknown commands, missing required flags, flags set
// together that exclude each other.
var cobraUsagePrefixes = []string{"unknown command ", "unknown shorthand flag", "required flag(s) ", "if any flags in the group "}

// Code is the exit status for an error of a command's Execute: 0 for
// nil, the status it carries, Usage for cobra's own usage errors, and
// Failure otherwise.
func Code(err error) int {
	var e *Error
	switch {
	case err == nil:
		return 0
	case errors.As(err, &e):
		return e.Code
	}
	for _, p := range cobraUsagePrefixes {
		if strings.HasPrefix(err.Error(), p) {
			return Usage
		}
	}
	return Failure
}

// MarkUsage makes flag errors and argument count errors usage errors in
// c and every command below it (call it once the tree is built).
func MarkUsage(c *cobra.Command) {
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return UsageError(err) })
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, a []string) error {
			err := args(cmd, a)
			if err != nil && !strings.HasPrefix(err.Error(), "unknown command") {
				// cobra's "accepts 2 arg(s), received 1" says not which.
				err = fmt.Errorf("%w (usage: %s)", err, cmd.UseLine())
			}
			return UsageError(err)
		}
	}
	for _, sub := range c.Commands() {
		MarkUsage(sub)
	}
}
