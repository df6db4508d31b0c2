package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/defaults"
	"github.com/nuesm/nuesm/internal/ibtest"
)

// TestDumpReadsBounded: run and sweep refuse /dev/zero, a named pipe
// nothing writes to and a dump over NUESM_MAX_DUMP_BYTES at once.
func TestDumpReadsBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.topo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	dump := filepath.Join(dir, "default.topo")
	if err := os.WriteFile(dump, []byte(defaults.Dump()), 0o644); err != nil {
		t.Fatal(err)
	}
	dumps := map[string]error{fifo: ibnetdiscover.ErrNotDump, dump: ibnetdiscover.ErrTooLarge}
	if _, err := os.Stat("/dev/zero"); err == nil {
		dumps["/dev/zero"] = ibnetdiscover.ErrNotRegular
	}
	t.Setenv(defaults.EnvMaxDumpBytes, "1000")
	for _, sub := range []string{"run", "sweep"} {
		for path, want := range dumps {
			args := []string{sub, path, "--engine", "minhop"}
			if sub == "sweep" {
				args = append(args, "-o", filepath.Join(dir, "sweep"))
			}
			err := ibtest.Returns(t, "flitsim "+strings.Join(args, " "), func() error {
				_, _, err := run(t, args...)
				return err
			})
			if !errors.Is(err, want) || !strings.Contains(err.Error(), path) {
				t.Errorf("flitsim %s: %v, want %v", strings.Join(args, " "), err, want)
			}
		}
	}
}
