package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The output is the same on every run: the example runs on a manual clock.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, want, out.String())
}

// SPEC RG-2, RL-7: geocode and reverse share 5 permits per second; once the burst is
// spent, the 6th call waits 200ms (1s / 5), and so does each one after it.
func TestSixthCallWaits200ms(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Contains(t, out.String(), "   0s  #5 geocode(\"Puerta del Sol, Madrid\")             waited 0s ")
	assert.Contains(t, out.String(), "   0s  #6 reverse(37.3772, -5.9869)                     waited 200ms ")
	assert.Contains(t, out.String(), "600ms  #9 geocode(\"Plaza del Pilar, Zaragoza\")          waited 200ms ")
	assert.Contains(t, out.String(), "R4C-REG-008", "a third function with another configuration may not share the name")
}

const want = `geocode and reverse share the limiter "geocoding": 5 permits per 1s, maxWait 500ms; 5 permits available
   0s  #1 geocode("Plaza Mayor, Madrid")                waited 0s    → 40.4155, -3.7074
   0s  #2 reverse(40.4155, -3.7074)                     waited 0s    → Plaza Mayor, Madrid
   0s  #3 geocode("Plaça de Catalunya, Barcelona")      waited 0s    → 41.3870, 2.1701
   0s  #4 reverse(41.3870, 2.1701)                      waited 0s    → Plaça de Catalunya, Barcelona
   0s  #5 geocode("Puerta del Sol, Madrid")             waited 0s    → 40.4169, -3.7035
the burst is spent: 0 permits available
        event: RateLimiterWaited geocoding at=0s wait=200ms
   0s  #6 reverse(37.3772, -5.9869)                     waited 200ms → Plaza de España, Sevilla
        event: RateLimiterWaited geocoding at=200ms wait=200ms
200ms  #7 geocode("Plaza de España, Sevilla")           waited 200ms → 37.3772, -5.9869
        event: RateLimiterWaited geocoding at=400ms wait=200ms
400ms  #8 reverse(41.6567, -0.8787)                     waited 200ms → Plaza del Pilar, Zaragoza
        event: RateLimiterWaited geocoding at=600ms wait=200ms
600ms  #9 geocode("Plaza del Pilar, Zaragoza")          waited 200ms → 41.6567, -0.8787
after a quiet second (t=1.8s): {Instance:geocoding AvailablePermits:5 Permits:5 Waiting:0 ShadowRejected:0}
wrapping GeocodingAPI.Batch with the name "geocoding" and 50 per 10s:
  R4C-REG-008: rateLimiter = "geocoding": functions that share this name resolve different configurations (the instance's vs GeocodingAPI.Batch's): Permits: 5 vs 50; Period: 1s vs 10s; MaxWait: 500ms vs 0s
`
