package exitstatus

import (
	"errors"
	"fmt"
	"testing"
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
