package ibnetdiscover

import (
	"bytes"
	"fmt"

	"github.com/nuesm/nuesm/fabric"
)

// Loaded is a dump made ready for routing: parsed, every endpoint with a
// LID, compiled. Every entry point that routes a dump (nuesm route,
// serve, plan, diff, verify, flitsim) loads it with Load or LoadFile.
type Loaded struct {
	*Result               // the parse: Fabric (LIDs assigned), Warnings, File
	Graph   *fabric.Graph // the compiled fabric
	Text    []byte        // the dump as read, for publishing beside the tables
	// AssignedLIDs counts the endpoints that had no LID in the dump (LID
	// 0, as ibnetdiscover prints a fabric no subnet manager has
	// configured) and got one from fabric.AssignLIDs, in port GUID order.
	AssignedLIDs int
}

// Load parses the dump text (name is used in messages), gives LIDs to the
// endpoints that have none and compiles the fabric. Errors name the dump,
// with the line where there is one.
func Load(text []byte, name string) (*Loaded, error) {
	res, err := Parse(bytes.NewReader(text), name)
	if err != nil {
		return nil, err
	}
	l := &Loaded{Result: res, Text: text}
	f := res.Fabric
	for _, r := range f.Endpoints() {
		if f.Port(r).LID == 0 {
			l.AssignedLIDs++
		}
	}
	if l.AssignedLIDs > 0 {
		if err := f.AssignLIDs(0); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if l.Graph, err = fabric.Compile(f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return l, nil
}

// LoadFile reads and loads the dump at path within DefaultMaxBytes (see
// LoadFileLimited).
func LoadFile(path string) (*Loaded, error) { return LoadFileLimited(path, DefaultMaxBytes) }

// LoadFileLimited reads the dump at path with ReadDumpFile, at most limit
// bytes, and loads it (see Load).
func LoadFileLimited(path string, limit int64) (*Loaded, error) {
	text, err := ReadDumpFile(path, limit)
	if err != nil {
		return nil, err
	}
	return Load(text, path)
}
