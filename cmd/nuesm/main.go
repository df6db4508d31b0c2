// Command nuesm is the nuesm routing engine's command-line interface:
// generate fabrics, inspect dumps, route, verify, plan updates, serve and
// run the seed papers' studies. Subcommands are thin: flags in, package
// calls out.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "nuesm:", err)
		os.Exit(exitCode(err))
	}
}
