//go:build !cgo

package umad

import "errors"

// Supported says whether this build can open umad devices (cgo).
const Supported = false

// device is unavailable without cgo: the umad file is reached through
// libc so that ibsim's LD_PRELOAD library can serve it.
type device struct{}

var errNoCgo = errors.New("umad: this nuesm was built without cgo (CGO_ENABLED=0), so it cannot send SMPs; build it with cgo or use [opensm] apply = \"sighup\"")

func openDevice(string) (*device, error)                       { return nil, errNoCgo }
func (*device) send(*[MADSize]byte, int) error                 { return errNoCgo }
func (*device) recv(*[MADSize]byte, int) (uint32, bool, error) { return 0, false, errNoCgo }
func (*device) close() error                                   { return nil }
