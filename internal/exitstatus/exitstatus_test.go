package exitstatus

import (
	"errors"
	"fmt"
	"testing"

	"github.com/spf13/cobra"
)

func TestCode(t *testing.T) {
	plain := errors.New("disk full")
	usage := UsageError(plain)
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{plain, Failure},
		{usage, Usage},
		{fmt.Errorf("context: %w", usage), Usage},
		{With(4, usage), Usage}, // the first status marked stays
		{With(3, plain), 3},
		{errors.New(`unknown command "x" for "nuesm"`), Usage},
		{errors.New(`required flag(s) "out" not set`), Usage},
	} {
		if got := Code(c.err); got != c.want {
			t.Errorf("Code(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	if UsageError(nil) != nil || Carried(plain) || !Carried(usage) || !errors.Is(usage, plain) {
		t.Error("nil is marked, or a mark hides the error it wraps")
	}
}

// TestArgCountNamesUsage: a wrong number of arguments is a usage error
// that shows the command's use line (cobra's own message says only how
// many it wanted); an unknown subcommand keeps cobra's message.
func TestArgCountNamesUsage(t *testing.T) {
	root := &cobra.Command{Use: "tool", Args: cobra.NoArgs, RunE: func(*cobra.Command, []string) error { return nil }}
	sub := &cobra.Command{Use: "diff OLD NEW", Args: cobra.ExactArgs(2), RunE: func(*cobra.Command, []string) error { return nil }}
	root.AddCommand(sub)
	root.SilenceErrors, root.SilenceUsage = true, true
	MarkUsage(root)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", "a"}, "accepts 2 arg(s), received 1 (usage: tool diff OLD NEW [flags])"},
		{[]string{"nosuch"}, `unknown command "nosuch" for "tool"`},
	} {
		root.SetArgs(c.args)
		err := root.Execute()
		if Code(err) != Usage || err.Error() != c.want {
			t.Errorf("%v: exit %d, %v; want %d, %q", c.args, Code(err), err, Usage, c.want)
		}
	}
	root.SetArgs([]string{"diff", "a", "b"})
	if err := root.Execute(); err != nil {
		t.Errorf("two arguments: %v", err)
	}
}
