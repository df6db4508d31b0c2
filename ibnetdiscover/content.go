package ibnetdiscover

import (
	"crypto/sha256"
	"sort"
	"strings"
)

// ContentHash hashes a dump without its lines starting with '#' (the
// header ibnetdiscover dates) and whatever the order of its node blocks
// (ibnetdiscover's order follows its scan, which a changed cable moves):
// two dumps hash the same when they say the same, descriptions included.
func ContentHash(b []byte) [32]byte {
	var blocks []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			blocks = append(blocks, cur.String())
			cur.Reset()
		}
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case line[0] != '#':
			cur.WriteString(line)
			cur.WriteByte('\n')
		}
	}
	flush()
	sort.Strings(blocks)
	h := sha256.New()
	for _, bl := range blocks {
		h.Write([]byte(bl))
		h.Write([]byte{0})
	}
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s
}
