package umad

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// TestEncodeLayout checks a SubnSet(LinearForwardingTable) against the
// directed-route SMP format of IBA vol 1 §14.2.1.2, byte by byte.
func TestEncodeLayout(t *testing.T) {
	var data [DataSize]byte
	for i := range data {
		data[i] = uint8(i + 1)
	}
	r := Request{Method: MethodSet, AttrID: AttrLinearForwardTable, AttrMod: 3, MKey: 0x0102030405060708, Path: Path{1, 17, 4}, Data: data}
	b, err := r.Encode(0xa1b2c3d4)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]byte{
		0: 1,       // BaseVersion
		1: 0x81,    // MgmtClass: directed-route SMP
		2: 1,       // ClassVersion
		3: 0x02,    // Method: Set, R bit clear
		4: 0, 5: 0, // D bit 0 (outbound), status 0
		6:   0,                                  // HopPointer
		7:   3,                                  // HopCount
		128: 0, 129: 1, 130: 17, 131: 4, 132: 0, // InitialPath[1..3]
	}
	for off, v := range want {
		if b[off] != v {
			t.Errorf("byte %d = 0x%02x, want 0x%02x", off, b[off], v)
		}
	}
	if got := binary.BigEndian.Uint64(b[8:]); got != 0xa1b2c3d4 {
		t.Errorf("TransactionID 0x%x", got)
	}
	if got := binary.BigEndian.Uint16(b[16:]); got != 0x0019 {
		t.Errorf("AttributeID 0x%04x", got)
	}
	if got := binary.BigEndian.Uint32(b[20:]); got != 3 {
		t.Errorf("AttributeModifier %d, want the block 3", got)
	}
	if got := binary.BigEndian.Uint64(b[24:]); got != 0x0102030405060708 {
		t.Errorf("M_Key 0x%x", got)
	}
	if binary.BigEndian.Uint16(b[32:]) != 0xffff || binary.BigEndian.Uint16(b[34:]) != 0xffff {
		t.Errorf("DrSLID/DrDLID %x, want permissive", b[32:36])
	}
	for i := 36; i < 64; i++ {
		if b[i] != 0 {
			t.Errorf("reserved byte %d = 0x%02x", i, b[i])
		}
	}
	if [DataSize]byte(b[64:128]) != data {
		t.Errorf("SMP data %x", b[64:128])
	}
	for i := 192; i < 256; i++ {
		if b[i] != 0 {
			t.Errorf("ReturnPath byte %d = 0x%02x", i, b[i])
		}
	}
	// A Get carries no data.
	r.Method = MethodGet
	g, _ := r.Encode(1)
	if g[3] != 0x01 || [DataSize]byte(g[64:128]) != [DataSize]byte{} {
		t.Errorf("Get: method 0x%02x, data %x", g[3], g[64:128])
	}
	r.Method = 0x81
	if _, err := r.Encode(1); err == nil {
		t.Error("a GetResp request encoded without an error")
	}
	r.Method, r.Path = MethodGet, make(Path, 64)
	if _, err := r.Encode(1); err == nil {
		t.Error("a 64-hop route encoded without an error")
	}
}

func TestDecode(t *testing.T) {
	req := Request{Method: MethodGet, AttrID: AttrLinearForwardTable, AttrMod: 7, Path: Path{2}}
	b, _ := req.Encode(42)
	b[3] = MethodGetResp
	binary.BigEndian.PutUint16(b[4:], 0x8000) // D bit, status 0
	b[70] = 9
	r, err := Decode(b[:])
	if err != nil {
		t.Fatal(err)
	}
	if r.TID != 42 || r.AttrID != 0x19 || r.AttrMod != 7 || r.Status != 0 || r.Data[6] != 9 || r.Err() != nil {
		t.Errorf("decoded %+v", r)
	}
	binary.BigEndian.PutUint16(b[4:], 0x8000|0x1c) // invalid value
	r, _ = Decode(b[:])
	if err := r.Err(); !errors.Is(err, ErrStatus) || !strings.Contains(err.Error(), "invalid attribute") {
		t.Errorf("status 0x1c: %v", err)
	}
	for name, mut := range map[string]func(*[MADSize]byte){
		"short":      nil,
		"class":      func(b *[MADSize]byte) { b[1] = 0x01 },
		"method":     func(b *[MADSize]byte) { b[3] = MethodSet },
		"no D bit":   func(b *[MADSize]byte) { b[4] = 0 },
		"base ver 2": func(b *[MADSize]byte) { b[0] = 2 },
	} {
		c := b
		in := c[:]
		if mut == nil {
			in = c[:100]
		} else {
			binary.BigEndian.PutUint16(c[4:], 0x8000)
			mut(&c)
		}
		if _, err := Decode(in); err == nil {
			t.Errorf("%s: decoded without an error", name)
		}
	}
}

func TestParsePath(t *testing.T) {
	for in, want := range map[string]string{"0": "0", "0,1": "0,1", " 0,1,18,3 ": "0,1,18,3"} {
		p, err := ParsePath(in)
		if err != nil || p.String() != want {
			t.Errorf("ParsePath(%q) = %v, %v; want %s", in, p, err, want)
		}
	}
	for _, in := range []string{"", "1,2", "0,0", "0,256", "0,x", "0," + strings.Repeat("1,", 63) + "1"} {
		if _, err := ParsePath(in); err == nil {
			t.Errorf("ParsePath(%q) without an error", in)
		}
	}
}

// TestParseNodeInfo reads the fields at their IBA vol 1 §14.2.5.3 offsets.
func TestParseNodeInfo(t *testing.T) {
	var d [DataSize]byte
	d[3] = 36
	binary.BigEndian.PutUint64(d[12:], 0x0002c90300001234)
	binary.BigEndian.PutUint64(d[20:], 0x0002c90300005678)
	d[36] = 7
	want := NodeInfo{NumPorts: 36, NodeGUID: 0x0002c90300001234, PortGUID: 0x0002c90300005678, LocalPortNum: 7}
	if got := ParseNodeInfo(d); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
