package main

import (
	"fmt"
	"io"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
)

// loadGraph parses the fabric (a file or the embedded default), gives LIDs
// to endpoints that have none (saying so on w), and compiles it.
func loadGraph(w io.Writer, args []string, useDefault bool) (*ibnetdiscover.Result, *fabric.Graph, error) {
	res, err := loadFabric(args, useDefault)
	if err != nil {
		return nil, nil, err
	}
	f := res.Fabric
	missing := 0
	for _, r := range f.Endpoints() {
		if f.Port(r).LID == 0 {
			missing++
		}
	}
	if missing > 0 {
		if err := f.AssignLIDs(0); err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(w, "note: %s: %d endpoints had no LID (lid 0); assigned LIDs in port GUID order\n", res.File, missing)
	}
	g, err := fabric.Compile(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", res.File, err)
	}
	return res, g, nil
}
