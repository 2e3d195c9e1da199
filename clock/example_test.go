package clock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/resilience4go/resilience4go/clock"
)

func ExampleNewManual() {
	clk := clock.NewManual()
	fmt.Println(clk.Now())

	clk.AfterFunc(100*time.Millisecond, func() { fmt.Println("permit back at", clk.Now()) })
	fmt.Println("pending:", clk.PendingTasks())

	// Sleep advances the clock instead of blocking (SPEC CL-2).
	_ = clk.Sleep(context.Background(), 250*time.Millisecond)
	fmt.Println(clk.Now(), "pending:", clk.PendingTasks())
	// Output:
	// 0s
	// pending: 1
	// permit back at 100ms
	// 250ms pending: 0
}

func ExampleManual_Advance() {
	clk := clock.NewManual()
	clk.AfterFunc(3*time.Second, func() { fmt.Println("third at", clk.Now()) })
	clk.AfterFunc(time.Second, func() {
		fmt.Println("first at", clk.Now())
		clk.AfterFunc(time.Second, func() { fmt.Println("second at", clk.Now()) })
	})

	clk.Advance(2 * time.Second)
	fmt.Println("now", clk.Now(), "pending:", clk.PendingTasks())
	clk.Advance(time.Second)
	// Output:
	// first at 1s
	// second at 2s
	// now 2s pending: 1
	// third at 3s
}
