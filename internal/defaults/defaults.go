// Package defaults embeds the default fabric that `make run` works on: the
// 2-level fat tree (Clos) of 36-port switches from nuesm's own generator
// (648 hosts, 54 switches), as an ibnetdiscover dump. Regenerate it with
// `make default-fabric`; a test keeps it equal to the generator's output.
package defaults

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/nuesm/nuesm/ibnetdiscover"
)

// Name is the name the embedded dump is known by in messages.
const Name = "default.topo"

// Generator is how the embedded dump was made (topo kind and parameters).
const Generator = "clos2 --radix 36"

//go:embed default.topo
var dump string

// Dump returns the embedded dump's text.
func Dump() string { return dump }

// Fabric parses the embedded dump.
func Fabric() (*ibnetdiscover.Result, error) {
	res, err := ibnetdiscover.Parse(strings.NewReader(dump), Name)
	if err != nil {
		return nil, fmt.Errorf("defaults: embedded fabric: %w", err)
	}
	return res, nil
}

// Load loads the embedded dump for routing (ibnetdiscover.Load).
func Load() (*ibnetdiscover.Loaded, error) {
	l, err := ibnetdiscover.Load([]byte(dump), Name)
	if err != nil {
		return nil, fmt.Errorf("defaults: embedded fabric: %w", err)
	}
	return l, nil
}
