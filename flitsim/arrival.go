package flitsim

import (
	"math"
	"math/rand/v2"
)

// interArrival draws the gaps between message arrivals at one source for
// a mean rate of rate messages per cycle.
type interArrival struct {
	kind  Arrival
	rate  float64 // messages per cycle
	logq  float64 // Bernoulli: ln(1-rate)
	scale float64 // Weibull scale
	shape float64 // Weibull shape
}

func newInterArrival(kind Arrival, rate, shape float64) interArrival {
	a := interArrival{kind: kind, rate: rate, shape: shape}
	switch kind {
	case Bernoulli:
		if rate < 1 {
			a.logq = math.Log1p(-rate)
		}
	case Weibull:
		a.scale = 1 / rate / math.Gamma(1+1/shape)
	}
	return a
}

// gap returns the time to the next arrival, in cycles. Bernoulli gaps are
// whole cycles >= 1 (geometric); the others are continuous.
func (a *interArrival) gap(rng *rand.Rand) float64 {
	switch a.kind {
	case Exponential:
		return rng.ExpFloat64() / a.rate
	case Weibull:
		return a.scale * math.Pow(-math.Log1p(-rng.Float64()), 1/a.shape)
	}
	if a.rate >= 1 {
		return 1
	}
	return 1 + math.Floor(math.Log1p(-rng.Float64())/a.logq)
}

// first returns the time of the first arrival: for Bernoulli the first
// success among cycles 0, 1, …, otherwise one gap after time 0.
func (a *interArrival) first(rng *rand.Rand) float64 {
	if a.kind == Bernoulli {
		return a.gap(rng) - 1
	}
	return a.gap(rng)
}
