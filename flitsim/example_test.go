package flitsim_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// A load sweep is a loop over Run calls on one shared Network; the runs
// are independent, so they go on a worker pool, and the results do not
// depend on the number of workers.
func ExampleNetwork_Run_sweep() {
	tp, _ := topo.FatTree(4, 2, 0)
	g, _ := fabric.Compile(tp.Fabric)
	e, _ := routing.Lookup("ftree")
	r, _ := e.Route(context.Background(), g, routing.Options{})
	net, err := flitsim.NewNetwork(g, r, flitsim.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	loads := []float64{0.2, 0.4, 0.6}
	results := make([]*flitsim.Result, len(loads))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				results[i], _ = net.Run(context.Background(),
					flitsim.Traffic{Pattern: flitsim.Uniform, Load: loads[i]},
					flitsim.RunOptions{Seed: 1, Warmup: 500, Measure: 5000})
			}
		}()
	}
	for i := range loads {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	b, _ := net.Bound(flitsim.Traffic{Pattern: flitsim.Uniform}, 1)
	fmt.Printf("bound %.2f\n", b.Saturation)
	for i, res := range results {
		fmt.Printf("load %.1f: accepted %.2f\n", loads[i], res.AcceptedFraction)
	}
	// Output:
	// bound 1.00
	// load 0.2: accepted 0.20
	// load 0.4: accepted 0.39
	// load 0.6: accepted 0.59
}
