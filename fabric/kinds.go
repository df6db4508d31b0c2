package fabric

import "fmt"

// NodeKind is the InfiniBand node type.
type NodeKind uint8

// Node kinds, as ibnetdiscover prints them.
const (
	Switch NodeKind = iota + 1
	CA
	Router
)

// String returns the ibnetdiscover keyword of the kind.
func (k NodeKind) String() string {
	switch k {
	case Switch:
		return "Switch"
	case CA:
		return "Ca"
	case Router:
		return "Rt"
	}
	return fmt.Sprintf("NodeKind(%d)", uint8(k))
}

// Prefix is the letter ibnetdiscover puts before a node GUID in a node id
// ("S-", "H-", "R-").
func (k NodeKind) Prefix() byte {
	switch k {
	case Switch:
		return 'S'
	case CA:
		return 'H'
	case Router:
		return 'R'
	}
	return '?'
}

// IsEndpoint reports whether nodes of this kind own a LID per port
// (CAs and routers), as opposed to switches, whose ports share port 0's LID.
func (k NodeKind) IsEndpoint() bool { return k == CA || k == Router }

// Width is the active link width of a port. The zero value is unknown ("??").
type Width uint8

// Link widths.
const (
	WidthUnknown Width = iota
	Width1x
	Width2x
	Width4x
	Width8x
	Width12x
)

var widthNames = [...]string{"??", "1x", "2x", "4x", "8x", "12x"}
var widthLanes = [...]int{0, 1, 2, 4, 8, 12}

func (w Width) String() string {
	if int(w) < len(widthNames) {
		return widthNames[w]
	}
	return fmt.Sprintf("Width(%d)", uint8(w))
}

// Lanes returns the number of lanes (0 when unknown).
func (w Width) Lanes() int {
	if int(w) < len(widthLanes) {
		return widthLanes[w]
	}
	return 0
}

// ParseWidth parses "1x", "2x", "4x", "8x", "12x" or "??".
func ParseWidth(s string) (Width, bool) {
	for i, n := range widthNames {
		if n == s {
			return Width(i), true
		}
	}
	return WidthUnknown, false
}

// Speed is the active link speed of a port. The zero value is unknown ("???").
type Speed uint8

// Link speeds, oldest first.
const (
	SpeedUnknown Speed = iota
	SDR
	DDR
	QDR
	FDR10
	FDR
	EDR
	HDR
	NDR
	XDR
)

var speedNames = [...]string{"???", "SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR"}

// Per-lane data rate in Gb/s after encoding overhead (used for bandwidth
// estimates only).
var speedGbps = [...]float64{0, 2, 4, 8, 10, 13.64, 25, 50, 100, 200}

func (s Speed) String() string {
	if int(s) < len(speedNames) {
		return speedNames[s]
	}
	return fmt.Sprintf("Speed(%d)", uint8(s))
}

// LaneGbps returns the per-lane data rate in Gb/s (0 when unknown).
func (s Speed) LaneGbps() float64 {
	if int(s) < len(speedGbps) {
		return speedGbps[s]
	}
	return 0
}

// ParseSpeed parses the speed names ibnetdiscover prints ("SDR" … "XDR", "???").
func ParseSpeed(s string) (Speed, bool) {
	for i, n := range speedNames {
		if n == s {
			return Speed(i), true
		}
	}
	return SpeedUnknown, false
}
