// Package umad sends directed-route subnet management packets (SMPs)
// through the kernel's user MAD interface (/dev/infiniband/umadN, the ABI
// of <rdma/ib_user_mad.h>): SubnGet and SubnSet of one attribute over a
// directed route, with an M_Key, a timeout and retries. The device is
// reached through libc's open, ioctl, write, poll, read and close (cgo),
// so that ibsim's LD_PRELOAD library serves the same code path as the
// kernel does.
//
// The MAD layout is IBA vol 1 §13.4.3 (common MAD header) and §14.2.1.2
// (directed-route SMP).
package umad

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sizes of the packet parts (IBA vol 1 §14.2.1.2).
const (
	MADSize  = 256 // a whole SMP
	DataSize = 64  // the SMP data field
	MaxHops  = 63  // the initial path holds hops 1..63
)

// Management class, methods and attributes used here.
const (
	ClassDirectRoute = 0x81
	MethodGet        = 0x01
	MethodSet        = 0x02
	MethodGetResp    = 0x81

	AttrNodeInfo           = 0x0011
	AttrPortInfo           = 0x0015
	AttrLinearForwardTable = 0x0019
)

// Field offsets of a directed-route SMP.
const (
	offBaseVersion  = 0
	offClass        = 1
	offClassVersion = 2
	offMethod       = 3
	offStatus       = 4 // D bit (direction) and 15-bit status
	offHopPointer   = 6
	offHopCount     = 7
	offTID          = 8
	offAttrID       = 16
	offAttrMod      = 20
	offMKey         = 24
	offDrSLID       = 32
	offDrDLID       = 34
	offData         = 64
	offInitialPath  = 128
	offReturnPath   = 192
	permissiveLID   = 0xffff
	directionBit    = 0x8000
)

// Path is a directed route: the output port at each hop, hop 1 first. An
// empty path addresses the local node.
type Path []uint8

// ParsePath reads a route as the diags print it: "0,p1,p2,…" (the leading
// 0 is the local port slot of the initial path and carries no hop).
func ParsePath(s string) (Path, error) {
	f := strings.Split(strings.TrimSpace(s), ",")
	if len(f) == 0 || f[0] != "0" {
		return nil, fmt.Errorf("directed route %q: expected \"0\" or \"0,port,…\"", s)
	}
	if len(f)-1 > MaxHops {
		return nil, fmt.Errorf("directed route %q: %d hops, at most %d", s, len(f)-1, MaxHops)
	}
	p := make(Path, 0, len(f)-1)
	for _, x := range f[1:] {
		n, err := strconv.ParseUint(strings.TrimSpace(x), 10, 8)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("directed route %q: hop %q is not a port number 1..255", s, x)
		}
		p = append(p, uint8(n))
	}
	return p, nil
}

// String prints the route as ParsePath reads it.
func (p Path) String() string {
	var b strings.Builder
	b.WriteString("0")
	for _, h := range p {
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(int(h)))
	}
	return b.String()
}

// Request is one SMP to send.
type Request struct {
	Method  uint8 // MethodGet or MethodSet
	AttrID  uint16
	AttrMod uint32
	MKey    uint64
	Path    Path
	Data    [DataSize]byte // sent with a Set; zero with a Get
}

// Encode writes the request as a directed-route SMP with transaction id
// tid: hop pointer 0, hop count len(Path), permissive DrSLID and DrDLID
// (the route runs from the requester to the target and back).
func (r *Request) Encode(tid uint64) ([MADSize]byte, error) {
	var b [MADSize]byte
	if r.Method != MethodGet && r.Method != MethodSet {
		return b, fmt.Errorf("SMP method 0x%02x: expected Get (0x01) or Set (0x02)", r.Method)
	}
	if len(r.Path) > MaxHops {
		return b, fmt.Errorf("directed route of %d hops, at most %d", len(r.Path), MaxHops)
	}
	b[offBaseVersion] = 1
	b[offClass] = ClassDirectRoute
	b[offClassVersion] = 1
	b[offMethod] = r.Method
	b[offHopPointer] = 0
	b[offHopCount] = uint8(len(r.Path))
	binary.BigEndian.PutUint64(b[offTID:], tid)
	binary.BigEndian.PutUint16(b[offAttrID:], r.AttrID)
	binary.BigEndian.PutUint32(b[offAttrMod:], r.AttrMod)
	binary.BigEndian.PutUint64(b[offMKey:], r.MKey)
	binary.BigEndian.PutUint16(b[offDrSLID:], permissiveLID)
	binary.BigEndian.PutUint16(b[offDrDLID:], permissiveLID)
	if r.Method == MethodSet {
		copy(b[offData:], r.Data[:])
	}
	copy(b[offInitialPath+1:], r.Path)
	return b, nil
}

// Response is a decoded GetResp.
type Response struct {
	TID     uint64
	AttrID  uint16
	AttrMod uint32
	Status  uint16 // the MAD status (0: success)
	Data    [DataSize]byte
}

// ErrStatus is wrapped by responses whose MAD status is not success.
var ErrStatus = errors.New("SMP answered with an error status")

// Decode reads a directed-route GetResp.
func Decode(b []byte) (Response, error) {
	var r Response
	if len(b) < MADSize {
		return r, fmt.Errorf("SMP of %d bytes, expected %d", len(b), MADSize)
	}
	if b[offBaseVersion] != 1 || b[offClass] != ClassDirectRoute {
		return r, fmt.Errorf("not a directed-route SMP (base version %d, class 0x%02x)", b[offBaseVersion], b[offClass])
	}
	if b[offMethod] != MethodGetResp {
		return r, fmt.Errorf("SMP method 0x%02x, expected GetResp (0x81)", b[offMethod])
	}
	st := binary.BigEndian.Uint16(b[offStatus:])
	if st&directionBit == 0 {
		return r, errors.New("SMP GetResp without the direction bit (a request, not a response)")
	}
	r.TID = binary.BigEndian.Uint64(b[offTID:])
	r.AttrID = binary.BigEndian.Uint16(b[offAttrID:])
	r.AttrMod = binary.BigEndian.Uint32(b[offAttrMod:])
	r.Status = st &^ directionBit
	copy(r.Data[:], b[offData:offData+DataSize])
	return r, nil
}

// Err describes a non-success status (IBA vol 1 §13.4.7), nil on success.
func (r *Response) Err() error {
	if r.Status == 0 {
		return nil
	}
	var what []string
	if r.Status&0x1 != 0 {
		what = append(what, "busy")
	}
	if r.Status&0x2 != 0 {
		what = append(what, "redirect required")
	}
	switch (r.Status >> 2) & 0x7 {
	case 1:
		what = append(what, "bad version")
	case 2:
		what = append(what, "method not supported")
	case 3:
		what = append(what, "method/attribute not supported")
	case 7:
		what = append(what, "invalid attribute or modifier value")
	}
	return fmt.Errorf("%w 0x%04x (%s)", ErrStatus, r.Status, strings.Join(what, ", "))
}

// NodeInfo is the part of a NodeInfo attribute's data that nuesm reads
// (IBA vol 1 §14.2.5.3).
type NodeInfo struct {
	NumPorts     int
	NodeGUID     uint64
	PortGUID     uint64 // of the port the SMP entered by
	LocalPortNum int    // the port the SMP entered by
}

// ParseNodeInfo reads a NodeInfo attribute's data.
func ParseNodeInfo(data [DataSize]byte) NodeInfo {
	return NodeInfo{
		NumPorts:     int(data[3]),
		NodeGUID:     binary.BigEndian.Uint64(data[12:]),
		PortGUID:     binary.BigEndian.Uint64(data[20:]),
		LocalPortNum: int(data[36]),
	}
}
