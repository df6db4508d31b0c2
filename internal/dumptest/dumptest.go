// Package dumptest holds the fixture of the command tests that hand a
// command a dump path it must refuse at once: a bounded dump read never
// blocks on a pipe nor reads a device without end.
package dumptest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/nuesm/nuesm/ibnetdiscover"
)

// Unreadable returns paths a dump reader must refuse at once, each with
// the sentinel error its refusal wraps: a named pipe nothing writes to,
// in a temporary folder of t (ibnetdiscover.ErrNotDump), and /dev/zero
// where it exists (ibnetdiscover.ErrNotRegular). It skips t where named
// pipes cannot be made. The caller owns the map and may add to it.
func Unreadable(t testing.TB) map[string]error {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "fifo.topo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	dumps := map[string]error{fifo: ibnetdiscover.ErrNotDump}
	if _, err := os.Stat("/dev/zero"); err == nil {
		dumps["/dev/zero"] = ibnetdiscover.ErrNotRegular
	}
	return dumps
}
