package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestInfoWarnsWithoutLIDs: a dump taken before a subnet manager ran
// (every LID 0) gets a warning; one with LIDs none.
func TestInfoWarnsWithoutLIDs(t *testing.T) {
	dir := t.TempDir()
	withLIDs := filepath.Join(dir, "ring.topo")
	if _, _, err := run(t, "gen", "ring", "--switches", "3", "-o", withLIDs); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(withLIDs)
	if err != nil {
		t.Fatal(err)
	}
	noLIDs := filepath.Join(dir, "nolid.topo")
	if err := os.WriteFile(noLIDs, regexp.MustCompile(`lid [0-9]+`).ReplaceAll(b, []byte("lid 0")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "info", noLIDs)
	if err != nil || !strings.Contains(out, "WARNING: no endpoint has a LID") {
		t.Fatalf("no LIDs: %v\n%s", err, out)
	}
	out, _, err = run(t, "info", withLIDs)
	if err != nil || strings.Contains(out, "WARNING") {
		t.Fatalf("with LIDs: %v\n%s", err, out)
	}
}

// TestDirectoryAsDump: a directory given as the dump is named as such,
// without the reader's noise ("adir:0: read: read adir: …").
func TestDirectoryAsDump(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"info", dir}, {"route", dir, "-o", filepath.Join(dir, "o")}} {
		_, _, err := run(t, args...)
		if err == nil || err.Error() != dir+" is a directory, expected an ibnetdiscover dump" || exitCode(err) != exitInput {
			t.Errorf("%v: %v", args, err)
		}
	}
}
