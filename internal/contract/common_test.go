package contract_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/sysclock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/fallback"
	"github.com/resilience4go/resilience4go/policy/retry"
)

func TestCommon_ID(t *testing.T) {
	assert.Equal(t, "SearchAPI.Search", (&contract.Common{}).ID("SearchAPI.Search"))
	assert.Equal(t, "geocode", (&contract.Common{Name: "geocode"}).ID("SearchAPI.Search"))
	assert.Equal(t, "direct", (&contract.Common{Name: "geocode", InstanceID: "direct"}).ID("SearchAPI.Search"))
	assert.Equal(t, "direct", (&contract.Common{InstanceID: "direct"}).ID("SearchAPI.Search"))
}

func TestCommon_ClockOrSystem(t *testing.T) {
	assert.True(t, sysclock.Is((&contract.Common{}).ClockOrSystem()))
	m := clock.NewManual()
	assert.Same(t, m, (&contract.Common{Clock: m}).ClockOrSystem())
}

type testPolicySettings struct {
	Size int
	contract.Common
}

func TestCommonOptions(t *testing.T) {
	m := clock.NewManual()
	var got []policy.Event
	s := testPolicySettings{Size: 1}
	contract.Apply(&s, []func(*testPolicySettings){
		contract.Name[testPolicySettings]("shared"),
		contract.UseConfig[testPolicySettings]("slow"),
		contract.WithClock[testPolicySettings](m),
		contract.WithInstanceID[testPolicySettings]("id"),
		nil,
		contract.OnEvent[testPolicySettings](func(e policy.Event) { got = append(got, e) }),
	})
	assert.Equal(t, 1, s.Size)
	assert.Equal(t, "shared", s.Name)
	assert.Equal(t, "slow", s.ConfigName)
	assert.Same(t, m, s.Clock)
	assert.Equal(t, "id", s.InstanceID)

	m.Advance(3 * time.Second)
	ev := s.EventsOf(fallback.Layer, s.ID("fallback"))
	assert.True(t, ev.Observed())
	ev.Publish(policy.Event{Kind: retry.EventAttempt})
	ev.Publish(policy.Event{Kind: retry.EventAttempt, At: time.Second})
	assert.Equal(t, []policy.Event{
		{Kind: retry.EventAttempt, Instance: "id", At: 3 * time.Second},
		{Kind: retry.EventAttempt, Instance: "id", At: time.Second},
	}, got, "the id, and the clock's time when At is zero")

	quiet := (&contract.Common{}).EventsOf(fallback.Layer, "x")
	assert.False(t, quiet.Observed())
	quiet.Publish(policy.Event{Kind: retry.EventAttempt}) // no listener: nothing happens
}
