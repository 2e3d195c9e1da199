package codegen

import (
	"strconv"
	"strings"

	"github.com/samber/lo"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"

	// The policy packages register their configuration attributes, which the catalog's
	// are checked with.
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	_ "github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	_ "github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	_ "github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/fallback"
	_ "github.com/resilience4go/resilience4go/policy/fallback"
	"github.com/resilience4go/resilience4go/policy/hedge"
	_ "github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/policy/retry"
	_ "github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	_ "github.com/resilience4go/resilience4go/policy/timeout"
	_ "github.com/resilience4go/resilience4go/ratelimit"
)

// valueKind is how an attribute's value is read and written as Go.
type valueKind int

const (
	durationValue   valueKind = iota // policy.ParseDuration syntax, written as e.g. 200 * time.Millisecond
	intValue                         // a decimal whole number
	floatValue                       // a decimal number
	boolValue                        // true or false
	stringValue                      // any text; written as a Go string
	windowTypeValue                  // COUNT_BASED or TIME_BASED
	algorithmValue                   // aimd, gradient2 or vegas
	errorsValue                      // error variables, separated by commas
	methodValue                      // a fallback function or method
	layersValue                      // layer names, separated by commas
)

// option is one attribute of a directive and the option function it becomes.
type option struct {
	attr string    // e.g. "maxWait"
	fn   string    // the option function of the policy's package, e.g. "MaxWait"
	kind valueKind // how the value is read and written
}

// policyDef is one directive: the policy it declares and how its attributes become
// options in the generated code.
type policyDef struct {
	name    string       // the directive's name, e.g. "ratelimiter"
	layer   policy.Layer // "" for order
	pkgPath string       // the import path of the policy's package
	pkgName string       // its package name
	options []option
}

const module = "github.com/resilience4go/resilience4go"

// common is what every policy directive has: a shared name, a configuration to use, and
// whether the policy is enabled.
var common = []option{
	{"name", "Name", stringValue},
	{"config", "UseConfig", stringValue},
	{"enabled", "Enabled", boolValue},
}

// catalog is every directive. Each policy's attributes are its configuration attributes
// (the last segments of its configuration keys), plus the error lists that only code can
// give; the test of the catalog checks it against the policies' own tables.
var catalog = []policyDef{
	{"ratelimiter", ratelimit.Layer, module + "/ratelimit", "ratelimit", []option{
		{"permits", "Permits", intValue},
		{"period", "Period", durationValue},
		{"maxWait", "MaxWait", durationValue},
	}},
	{"retry", retry.Layer, module + "/policy/retry", "retry", []option{
		{"maxAttempts", "MaxAttempts", intValue},
		{"delay", "Delay", durationValue},
		{"multiplier", "Multiplier", floatValue},
		{"maxDelay", "MaxDelay", durationValue},
		{"jitter", "Jitter", floatValue},
		{"waitForPermit", "WaitForPermit", boolValue},
		{"retryOn", "RetryOn", errorsValue},
		{"abortOn", "AbortOn", errorsValue},
	}},
	{"circuitbreaker", circuitbreaker.Layer, module + "/policy/circuitbreaker", "circuitbreaker", []option{
		{"failureRateThreshold", "FailureRateThreshold", floatValue},
		{"slidingWindowSize", "SlidingWindowSize", intValue},
		{"slidingWindowType", "SlidingWindowType", windowTypeValue},
		{"minimumCalls", "MinimumCalls", intValue},
		{"waitInOpen", "WaitInOpen", durationValue},
		{"permittedInHalfOpen", "PermittedInHalfOpen", intValue},
		{"maxWaitInHalfOpen", "MaxWaitInHalfOpen", durationValue},
		{"slowCallThreshold", "SlowCallThreshold", durationValue},
		{"slowCallRateThreshold", "SlowCallRateThreshold", floatValue},
		{"recordOn", "RecordOn", errorsValue},
		{"ignoreOn", "IgnoreOn", errorsValue},
	}},
	{"bulkhead", bulkhead.Layer, module + "/policy/bulkhead", "bulkhead", []option{
		{"maxConcurrent", "MaxConcurrent", intValue},
		{"maxWait", "MaxWait", durationValue},
	}},
	{"timeout", timeout.Layer, module + "/policy/timeout", "timeout", []option{
		{"duration", "Duration", durationValue},
	}},
	{"fallback", fallback.Layer, module + "/policy/fallback", "fallback", []option{
		{"method", "", methodValue},
		{"handleOn", "HandleOn", errorsValue},
		{"ignoreOn", "IgnoreOn", errorsValue},
	}},
	{"hedge", hedge.Layer, module + "/policy/hedge", "hedge", []option{
		{"delay", "Delay", durationValue},
		{"maxAttempts", "MaxAttempts", intValue},
		{"budgetPercent", "BudgetPercent", floatValue},
		{"budgetWindow", "BudgetWindow", durationValue},
		{"budgetMinPerSecond", "BudgetMinPerSecond", floatValue},
		{"budgetEnabled", "Budget", boolValue},
		{"hedgeOn", "HedgeOn", errorsValue},
		{"abortOn", "AbortOn", errorsValue},
	}},
	{"adaptivelimit", adaptivelimit.Layer, module + "/policy/adaptivelimit", "adaptivelimit", []option{
		{"algorithm", "UseAlgorithm", algorithmValue},
		{"initialLimit", "InitialLimit", intValue},
		{"minLimit", "MinLimit", intValue},
		{"maxLimit", "MaxLimit", intValue},
		{"maxWait", "MaxWait", durationValue},
		{"backoffRatio", "BackoffRatio", floatValue},
		{"latencyThreshold", "LatencyThreshold", durationValue},
		{"tolerance", "Tolerance", floatValue},
		{"smoothing", "Smoothing", floatValue},
		{"baselineWindow", "BaselineWindow", intValue},
		{"dropOn", "DropOn", errorsValue},
		{"ignoreOn", "IgnoreOn", errorsValue},
	}},
	{"order", "", "", "", []option{
		{"layers", "", layersValue},
	}},
}

// noneDirective, on a method, leaves the interface's directives off it.
const noneDirective = "none"

// lookupDirective returns the directive named name, in any case: "ratelimiter" and
// "rateLimiter" (the configuration segment) are one directive.
func lookupDirective(name string) (*policyDef, bool) {
	for i := range catalog {
		if strings.EqualFold(catalog[i].name, name) {
			return &catalog[i], true
		}
	}
	return nil, false
}

// directiveNames returns the names of every directive, in catalog order.
func directiveNames() []string {
	return append(lo.Map(catalog, func(p policyDef, _ int) string { return p.name }), noneDirective)
}

// allOptions returns the directive's attributes: its own, then the common ones (which
// order has none of).
func (p *policyDef) allOptions() []option {
	if p.layer == "" {
		return p.options
	}
	return append(append([]option(nil), p.options...), common...)
}

// option returns the directive's attribute named attr.
func (p *policyDef) option(attr string) (option, bool) {
	return lo.Find(p.allOptions(), func(o option) bool { return o.attr == attr })
}

// isConfig reports whether an attribute of this kind is also a configuration attribute,
// checked by the policy's own table.
func (k valueKind) isConfig() bool {
	switch k {
	case durationValue, intValue, floatValue, boolValue, windowTypeValue, algorithmValue:
		return true
	}
	return false
}

// layerByName returns the layer named name in an order: a layer's name (e.g.
// "circuitBreaker") or its directive's, in any case.
func layerByName(name string) (policy.Layer, bool) {
	for _, p := range catalog {
		if p.layer != "" && (strings.EqualFold(string(p.layer), name) || strings.EqualFold(p.name, name)) {
			return p.layer, true
		}
	}
	return "", false
}

// layerRef returns the Go expression of layer l's constant in the generated code, e.g.
// timeout.Layer, importing its policy's package with im.
func layerRef(im *imports, l policy.Layer) string {
	for _, p := range catalog {
		if p.layer == l {
			return im.use(p.pkgPath, p.pkgName) + ".Layer"
		}
	}
	return strconv.Quote(string(l))
}
