// Package vlflag checks the --vls flag of the command-line tools: the VL
// limit is the core safety setting, so a value given outside 1..15 is an
// error and never silently a default.
package vlflag

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/nuesm/nuesm/lft"
)

// Check returns an error for each integer flag of names that was given
// with a value outside 1..lft.MaxVLs; flags not given are not checked.
func Check(fl *pflag.FlagSet, names ...string) error {
	for _, name := range names {
		f := fl.Lookup(name)
		if f == nil || !f.Changed {
			continue
		}
		n, err := fl.GetInt(name)
		if err != nil {
			continue // not an integer flag
		}
		if n < 1 || n > lft.MaxVLs {
			return fmt.Errorf("--%s %d, expected 1..%d (data VLs the switches offer)", name, n, lft.MaxVLs)
		}
	}
	return nil
}
