//go:build unix

package ibnetdiscover

import (
	"os"
	"syscall"
)

// openNonBlocking opens path for reading without waiting for a writer
// when it is a named pipe; reads of a regular file are not affected.
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
