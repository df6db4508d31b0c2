package lft

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors of the readers and writers, for errors.Is.
var (
	// ErrSyntax marks input that does not follow the format.
	ErrSyntax = errors.New("syntax error")
	// ErrUnknownSwitch marks a table of a switch GUID the fabric does not have.
	ErrUnknownSwitch = errors.New("unknown switch")
	// ErrMissingSwitch marks fabric switches the input has no table for.
	ErrMissingSwitch = errors.New("missing switch")
	// ErrUnknownPort marks a port GUID the fabric does not have.
	ErrUnknownPort = errors.New("unknown port")
	// ErrPortRange marks a port number beyond the switch's port count.
	ErrPortRange = errors.New("port out of range")
	// ErrLIDRange marks a LID beyond the fabric's LID range.
	ErrLIDRange = errors.New("LID out of range")
	// ErrDuplicate marks something given twice (a LID in one table, a
	// switch, a LID pair).
	ErrDuplicate = errors.New("duplicate entry")
	// ErrTruncated marks input that ends inside a table.
	ErrTruncated = errors.New("truncated input")
	// ErrNotPerDest marks SLs that depend on more than the destination
	// where a format can only express per-destination SLs.
	ErrNotPerDest = errors.New("SLs are not per destination")
	// ErrUnwritable marks a routing a format cannot hold (a port beyond
	// the switch's port count, a newline in a description…).
	ErrUnwritable = errors.New("routing cannot be written in this format")
)

// ParseError is an error at one line of one input. Error() reads
// "lft: <file>:<line>: <message>"; Unwrap gives the sentinel (ErrSyntax,
// ErrPortRange…).
type ParseError struct {
	File string
	Line int // 1-based; 0 when the error concerns the whole input
	Msg  string
	Err  error
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("lft: %s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("lft: %s:%d: %s", e.File, e.Line, e.Msg)
}

// Unwrap returns the sentinel error.
func (e *ParseError) Unwrap() error { return e.Err }

func parseErr(file string, line int, sentinel error, format string, args ...any) *ParseError {
	return &ParseError{File: file, Line: line, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

// listed formats up to 10 items and says how many more there are.
func listed(items []string) string {
	const show = 10
	if len(items) <= show {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:show], ", "), len(items)-show)
}
