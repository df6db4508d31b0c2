package ibnetdiscover

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/nuesm/nuesm/internal/ibtest"
)

// TestNotADump: binary, compressed and dump-less text inputs are told
// apart from damaged dumps in one located line.
func TestNotADump(t *testing.T) {
	dump := smallDump(t)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(dump)
	_ = zw.Close()
	random := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	// a NUL past what sniff looks at, found by the line loop
	at := sniffLen + bytes.Index(dump[sniffLen:], []byte("4xEDR"))
	nulInside := append(append(bytes.Clone(dump[:at+2]), 0), dump[at+3:]...)
	nulLine := bytes.Count(dump[:at], []byte{'\n'}) + 1
	nulCol := at + 3 - bytes.LastIndexByte(dump[:at], '\n') - 1
	for _, tc := range []struct {
		name string
		in   []byte
		line int
		want string
	}{
		{"gzip", gz.Bytes(), 1, "not an ibnetdiscover dump: gzip-compressed data, expected text (decompress it first: zcat FILE)"},
		{"xz", []byte("\xfd7zXZ\x00\x00\x04"), 1, "xz-compressed"},
		{"zstd", []byte("\x28\xb5\x2f\xfd\x00"), 1, "zstd-compressed"},
		{"ELF", []byte("\x7fELF\x02\x01\x01\x00\x00\x00"), 1, "not an ibnetdiscover dump: binary data (byte 0x02 at column 5)"},
		{"control byte on line 2", []byte("#\n# \x01\n"), 2, "(byte 0x01 at column 3)"},
		{"random bytes", random, 0, "not an ibnetdiscover dump: binary data"},
		{"NUL in a dump", nulInside, nulLine, "not an ibnetdiscover dump: binary data (byte 0x00 at column " + strconv.Itoa(nulCol) + ")"},
		{"JSON", []byte(`{"nodes": []}` + "\n"), 1, "not an ibnetdiscover dump: no node blocks"},
		{"empty", nil, 1, "not an ibnetdiscover dump: empty input"},
	} {
		_, err := Parse(bytes.NewReader(tc.in), "x.topo")
		var e *Error
		if !errors.Is(err, ErrNotDump) || !errors.As(err, &e) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one ErrNotDump line containing %q", tc.name, err, tc.want)
			continue
		}
		if tc.line > 0 && e.Line != tc.line {
			t.Errorf("%s: at line %d, want %d", tc.name, e.Line, tc.line)
		}
	}
}

func TestReadFileLimited(t *testing.T) {
	dir := t.TempDir()
	dump := smallDump(t)
	path := filepath.Join(dir, "fabric.topo")
	if err := os.WriteFile(path, dump, 0o644); err != nil {
		t.Fatal(err)
	}
	n := int64(len(dump))
	if b, err := ReadFileLimited(path, n); err != nil || !bytes.Equal(b, dump) {
		t.Fatalf("file of exactly the limit: %v", err)
	}
	if res, err := ParseFileLimited(path, n); err != nil || len(res.Fabric.Nodes) != 24 {
		t.Fatalf("ParseFileLimited: %v", err)
	}
	_, err := ReadFileLimited(path, n-1)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "more than the limit of") {
		t.Errorf("file over the limit: %v", err)
	}
	_, err = ReadFileLimited(path, 1<<20)
	if err != nil {
		t.Errorf("1 MiB limit: %v", err)
	}
	if _, err := ReadFileLimited(path+".none", 1<<20); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	link := filepath.Join(dir, "link.topo")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFileLimited(link, n); err != nil {
		t.Errorf("symbolic link to the dump: %v", err)
	}
}

// TestReadFileLimitedRefuses: a named pipe without a writer, /dev/zero
// and a directory are refused at once instead of hanging or growing.
func TestReadFileLimitedRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.topo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	paths := map[string]string{fifo: "a named pipe", dir: "a directory"}
	if _, err := os.Stat("/dev/zero"); err == nil {
		paths["/dev/zero"] = "a character device"
	}
	for path, kind := range paths {
		err := ibtest.Returns(t, "ReadFileLimited("+path+")", func() error {
			_, err := ReadFileLimited(path, 1<<20)
			return err
		})
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), kind) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v, want an ErrNotRegular saying %q", path, err, kind)
		}
	}
}

// endless repeats a comment line for ever.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	const line = "# more of the same\n"
	for i := range p {
		p[i] = line[i%len(line)]
	}
	return len(p), nil
}

func TestLimitReader(t *testing.T) {
	_, err := Parse(LimitReader(endless{}, 1<<20, "stdin"), "stdin")
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "stdin: more, more than the limit of 1 MiB") {
		t.Errorf("endless input: %v", err)
	}
	dump := smallDump(t)
	for _, limit := range []int64{int64(len(dump)), int64(len(dump)) + 1} {
		if _, err := Parse(LimitReader(bytes.NewReader(dump), limit, "d"), "d"); err != nil {
			t.Errorf("dump within the limit %d: %v", limit, err)
		}
	}
	b, err := io.ReadAll(LimitReader(bytes.NewReader(dump), 100, "d"))
	if len(b) != 100 || !errors.Is(err, ErrTooLarge) {
		t.Errorf("reading past the limit: %d bytes, %v", len(b), err)
	}
}

// TestParseFileDirectory: a directory is named as such, once, without a
// line 0 or a doubled "read".
func TestParseFileDirectory(t *testing.T) {
	dir := t.TempDir()
	_, err := ParseFile(dir)
	if want := "ibnetdiscover: " + dir + ": a directory, expected a dump file"; !errors.Is(err, ErrNotRegular) || !strings.HasPrefix(fmt.Sprint(err), want) {
		t.Errorf("ParseFile(dir): %v, want %q", err, want)
	}
	_, err = Parse(errReader{}, "r")
	if err == nil || err.Error() != "ibnetdiscover: read r: input/output error" {
		t.Errorf("a failing reader: %v", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) {
	return 0, &os.PathError{Op: "read", Path: "r", Err: syscall.EIO}
}
