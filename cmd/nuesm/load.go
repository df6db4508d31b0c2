package main

import (
	"fmt"
	"io"
	"os"

	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/defaults"
	"github.com/nuesm/nuesm/lft"
)

// fabricArg returns the dump a command names: args[0], or "" for the
// embedded default (--default).
func fabricArg(args []string, useDefault bool) (string, error) {
	switch {
	case useDefault && len(args) > 0:
		return "", usageError(fmt.Errorf("give a FILE or --default, not both"))
	case useDefault:
		return "", nil
	case len(args) == 0:
		return "", usageError(fmt.Errorf("no fabric: give a FILE (an ibnetdiscover dump) or --default"))
	}
	if st, err := os.Stat(args[0]); err == nil && st.IsDir() {
		return "", inputError(fmt.Errorf("%s is a directory, expected an ibnetdiscover dump", args[0]))
	}
	return args[0], nil
}

// fabricFlagHint is how diff, plan and export name a fabric.
const fabricFlagHint = "give --fabric FILE or --default"

// setFabric returns the fabric.topo beside the table set at path, which
// role names in errors (TABLES, NEW): a path that does not exist is an
// input error naming it, a set without fabric.topo a usage error with
// hint, how to name the fabric instead.
func setFabric(role, path, hint string) (string, error) {
	if _, err := os.Stat(path); err != nil {
		return "", inputError(fmt.Errorf("%s: %w", role, err))
	}
	p, ok := lft.FabricPath(path)
	if !ok {
		return "", usageError(fmt.Errorf("no fabric: %s (%s has no %s beside it: %s)", hint, role, lft.FabricFile, path))
	}
	return p, nil
}

// loadGraph loads the fabric to route (a file within
// defaults.MaxDumpBytes, or the embedded default; ibnetdiscover.Load),
// saying on w when endpoints got LIDs.
func loadGraph(w io.Writer, args []string, useDefault bool) (*ibnetdiscover.Loaded, error) {
	path, err := fabricArg(args, useDefault)
	if err != nil {
		return nil, err
	}
	var l *ibnetdiscover.Loaded
	if path == "" {
		l, err = defaults.Load()
	} else {
		var limit int64
		if limit, err = defaults.MaxDumpBytes(); err != nil {
			return nil, usageError(err)
		}
		l, err = ibnetdiscover.LoadFileLimited(path, limit)
	}
	if err != nil {
		return nil, inputError(err)
	}
	if l.AssignedLIDs > 0 {
		fmt.Fprintf(w, "note: %s: %d endpoints had no LID (lid 0); assigned LIDs in port GUID order\n", l.File, l.AssignedLIDs)
	}
	return l, nil
}
