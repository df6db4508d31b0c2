package ibnetdiscover

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every *Error wraps one of them (or a fabric sentinel
// such as fabric.ErrDuplicateLID, fabric.ErrDuplicateGUID,
// fabric.ErrPortRange, fabric.ErrLIDRange, fabric.ErrLMC), so callers can
// branch with errors.Is.
var (
	// ErrSyntax marks a line inside a node block that does not fit the
	// grammar (truncated line, bad number or GUID, missing quotes…).
	ErrSyntax = errors.New("syntax error")
	// ErrLink marks a cable whose two descriptions disagree: listed from
	// one end only, cabled to two different peers, a different peer port,
	// peer LID, peer port GUID, peer kind or external port number.
	ErrLink = errors.New("inconsistent link")
	// ErrUnknownNode marks a port cabled to a node that has no node block.
	ErrUnknownNode = errors.New("link to a node without a node block")
	// ErrNoNodes marks input without a single node block; it comes with
	// ErrNotDump.
	ErrNoNodes = errors.New("no node blocks")
	// ErrNotDump marks input that is no ibnetdiscover dump at all: binary
	// or compressed data, or text without a node block.
	ErrNotDump = errors.New("not an ibnetdiscover dump")
	// ErrTruncated marks a dump that ends early: inside a node block, in
	// the middle of a line, or before the node blocks of the nodes its
	// cables lead to. It comes with the sentinels of what that broke.
	ErrTruncated = errors.New("truncated dump")
	// ErrTooLarge marks input beyond the size limit of ReadFileLimited,
	// ReadDumpFile or LimitReader.
	ErrTooLarge = errors.New("dump exceeds the size limit")
	// ErrNotRegular marks a path that ReadFileLimited refuses (a named
	// pipe, a device, a directory or a socket) or ReadDumpFile refuses
	// (the same but a named pipe).
	ErrNotRegular = errors.New("not a regular file")
	// ErrIBSim marks a fabric that ibsim cannot present as it is (see
	// ForIBSim).
	ErrIBSim = errors.New("not representable in ibsim")
)

// Error is one problem of a dump, located at a line. Msg reads
// "<what>, expected <what>" where the grammar says what was expected.
type Error struct {
	File string // file name as given to Parse
	Line int    // 1-based line number
	Msg  string
	Err  error // sentinel (or fabric problem) wrapped by the error; may be nil
}

// Error formats "ibnetdiscover: <file>:<line>: <msg>".
func (e *Error) Error() string {
	return fmt.Sprintf("ibnetdiscover: %s:%d: %s", e.File, e.Line, e.Msg)
}

// Unwrap returns the wrapped sentinel.
func (e *Error) Unwrap() error { return e.Err }

// ErrorList is several problems found in one dump, ordered by line. Parse
// returns one when the link and validation checks find more than one
// problem; errors.As(err, &e) with e of type *Error yields the first.
type ErrorList []*Error

// maxListed caps how many problems ErrorList.Error prints.
const maxListed = 10

// Error prints the first problems, one per line.
func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i == maxListed {
			fmt.Fprintf(&b, "\n… and %d more problem(s)", len(l)-maxListed)
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap lets errors.Is and errors.As see every problem.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// WarningKind classifies warnings.
type WarningKind uint8

// Warning kinds.
const (
	// Skipped is a line that is not part of the format (stderr output of
	// the diagnostics mixed into the dump, stray text between node blocks);
	// it was ignored.
	Skipped WarningKind = iota + 1
	// LinkWarning is a legal but suspicious cable reported by
	// fabric.Warnings: the two ends report different widths or speeds, or
	// both ends are on one node (loopback).
	LinkWarning
)

// Warning is something legal but suspicious, located at a line; Other is
// the line of the cable's other end (0 if none).
type Warning struct {
	Kind  WarningKind
	File  string
	Line  int
	Other int
	Msg   string
}

// String formats the warning like an error message, with the other end's
// position when there is one.
func (w Warning) String() string {
	if w.Other > 0 {
		return fmt.Sprintf("ibnetdiscover: %s:%d: %s (other end at %s:%d)", w.File, w.Line, w.Msg, w.File, w.Other)
	}
	return fmt.Sprintf("ibnetdiscover: %s:%d: %s", w.File, w.Line, w.Msg)
}
