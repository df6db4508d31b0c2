package slurm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Bounds on what one query reads. squeue prints one line of well under
// 200 bytes per running job; slurmrestd's v0.0.38 answer takes a few KB
// per job and lists the jobs of every state.
const (
	DefaultSqueueMaxBytes = 16 << 20
	DefaultRESTMaxBytes   = 256 << 20
)

// ErrTooLarge is wrapped by the error of a query whose answer exceeds its
// size limit (Squeue.MaxBytes, REST.MaxBytes).
var ErrTooLarge = errors.New("answer exceeds the size limit")

// tooLarge is the error for an answer of source beyond limit bytes.
func tooLarge(source string, limit int64) error {
	return fmt.Errorf("%s: answer larger than %s, the limit: %w", source, formatBytes(limit), ErrTooLarge)
}

// formatBytes prints n as "16 MiB", "1.5 KiB", "12 bytes".
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	v, i := float64(n), 0
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	s := fmt.Sprintf("%.1f", v)
	if s[len(s)-2:] == ".0" {
		s = s[:len(s)-2]
	}
	return s + " " + [...]string{"", "KiB", "MiB", "GiB", "TiB"}[i]
}

// cappedBuffer keeps up to limit bytes. The first write beyond the limit
// calls over once and fails, which ends the copy from the program's pipe.
type cappedBuffer struct {
	buf      bytes.Buffer
	limit    int64
	over     func()
	exceeded bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.exceeded {
		return 0, ErrTooLarge
	}
	if int64(c.buf.Len())+int64(len(p)) > c.limit {
		c.exceeded = true
		if c.over != nil {
			c.over()
		}
		return 0, ErrTooLarge
	}
	return c.buf.Write(p)
}

// readLimited reads r to its end, failing once more than limit bytes come.
func readLimited(r io.Reader, limit int64) ([]byte, bool, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if int64(len(b)) > limit {
		return nil, true, err
	}
	return b, false, err
}
