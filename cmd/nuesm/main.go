// Command nuesm is the nuesm routing engine's command-line interface:
// generate fabrics, inspect dumps, and (as the project grows) route, verify,
// plan updates and serve. Subcommands are thin: flags in, package calls out.
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
