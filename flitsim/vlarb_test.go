package flitsim

import "testing"

// drive lets an arbiter choose among ready VLs for k flits of packets of
// pkt flits each and counts the flits per VL.
func drive(a *arbiter, ready uint32, k, pkt int) map[uint8]int {
	var st arbState
	sent := map[uint8]int{}
	for i := 0; i < k; i++ {
		c, ok := a.pick(&st, ready)
		if !ok {
			break
		}
		sent[c.vl]++
		a.commit(&st, c, sent[c.vl]%pkt == 0, ready)
	}
	return sent
}

func TestVLArbitration(t *testing.T) {
	// Round-robin: equal shares.
	rr := newArbiter(Config{PacketFlits: 4, FlitBytes: 64})
	if got := drive(rr, 0b1011, 300, 4); got[0] != 100 || got[1] != 100 || got[3] != 100 {
		t.Errorf("round-robin shares %v", got)
	}
	// Weights (64-byte units = flits here): 3:1 within the low table.
	w := newArbiter(Config{PacketFlits: 4, FlitBytes: 64, VLArb: &VLArbitration{Low: []VLWeight{{VL: 0, Weight: 3}, {VL: 1, Weight: 1}}, HighLimit: 255}})
	if got := drive(w, 0b11, 400, 4); got[0] != 300 || got[1] != 100 {
		t.Errorf("weighted shares %v, want 300:100", got)
	}
	// A VL that is not ready gives its turn away.
	if got := drive(w, 0b10, 50, 4); got[1] != 50 {
		t.Errorf("only VL1 ready: %v", got)
	}
	// Unlimited high priority starves the low table.
	hi := &VLArbitration{High: []VLWeight{{VL: 0, Weight: 1}}, Low: []VLWeight{{VL: 1, Weight: 1}}, HighLimit: 255}
	if got := drive(newArbiter(Config{PacketFlits: 4, FlitBytes: 64, VLArb: hi}), 0b11, 200, 4); got[1] != 0 {
		t.Errorf("unlimited high priority: %v", got)
	}
	// Limit 1 (4 KiB = 64 flits of 64 bytes): then one low packet.
	hi.HighLimit = 1
	if got := drive(newArbiter(Config{PacketFlits: 4, FlitBytes: 64, VLArb: hi}), 0b11, 680, 4); got[0] != 640 || got[1] != 40 {
		t.Errorf("high limit 64 flits, 4-flit packets: %v, want 640:40", got)
	}
	// Limit 0: one high packet, then one low packet.
	hi.HighLimit = 0
	if got := drive(newArbiter(Config{PacketFlits: 4, FlitBytes: 64, VLArb: hi}), 0b11, 400, 4); got[0] != 200 || got[1] != 200 {
		t.Errorf("high limit 0: %v, want 200:200", got)
	}
}
