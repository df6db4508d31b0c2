package cdg

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nuesm/nuesm/fabric"
)

// ErrCycle is wrapped by every CycleError.
var ErrCycle = errors.New("channel dependency cycle")

// maxListed caps how many channels a CycleError prints.
const maxListed = 10

// CycleError reports a cycle in a channel dependency graph: the virtual
// channels in cycle order (the last depends on the first).
type CycleError struct {
	Channels []int32 // channel ids
	VLs      []uint8 // VL of each channel on the cycle
	Names    []string
}

// newCycleError describes a cycle of virtual-channel vertices (c*V + vl).
func newCycleError(g *fabric.Graph, verts []int32, V int) *CycleError {
	e := &CycleError{}
	for _, v := range verts {
		c, vl := v/int32(V), uint8(int(v)%V)
		e.Channels = append(e.Channels, c)
		e.VLs = append(e.VLs, vl)
		e.Names = append(e.Names, fmt.Sprintf("VL%d %s", vl, g.ChannelName(c)))
	}
	return e
}

// Error lists the first channels of the cycle and its length.
func (e *CycleError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cdg: dependency cycle of %d channels: ", len(e.Channels))
	for i, n := range e.Names {
		if i == maxListed {
			fmt.Fprintf(&b, " => … (%d more)", len(e.Names)-maxListed)
			break
		}
		if i > 0 {
			b.WriteString(" => ")
		}
		b.WriteString(n)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrCycle) true.
func (e *CycleError) Is(target error) bool { return target == ErrCycle }

// Long returns the whole cycle, one channel per line.
func (e *CycleError) Long() string {
	return strings.Join(e.Names, "\n")
}
