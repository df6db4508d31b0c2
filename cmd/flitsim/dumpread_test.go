package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/defaults"
	"github.com/nuesm/nuesm/internal/dumptest"
	"github.com/nuesm/nuesm/internal/ibtest"
)

// TestDumpReadsBounded: run and sweep refuse /dev/zero, a named pipe
// nothing writes to and a dump over NUESM_MAX_DUMP_BYTES at once.
func TestDumpReadsBounded(t *testing.T) {
	dumps := dumptest.Unreadable(t)
	dir := t.TempDir()
	dump := filepath.Join(dir, "default.topo")
	if err := os.WriteFile(dump, []byte(defaults.Dump()), 0o644); err != nil {
		t.Fatal(err)
	}
	dumps[dump] = ibnetdiscover.ErrTooLarge
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
