package routing

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

var (
	regMu    sync.RWMutex
	registry = map[string]func() Engine{}
)

// Register makes an engine available by name. Engine packages call it from
// init; registering a name twice panics (a programming error).
func Register(name string, factory func() Engine) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("routing: engine registered twice: " + name)
	}
	registry[name] = factory
}

// Lookup returns a new engine by name.
func Lookup(name string) (Engine, error) {
	regMu.RLock()
	f, ok := registry[name]
	regMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("routing: unknown engine %q, expected one of %s", name, strings.Join(Names(), ", "))
	}
	return f(), nil
}

// Names lists the registered engines, sorted.
func Names() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ParseChain builds the engines of a chain spec, "nue,dfsssp,updn" or
// with parameters "nue:partition=locality,updn"; see NewChain.
func ParseChain(spec string) ([]Engine, error) { return NewChain(spec, nil) }
