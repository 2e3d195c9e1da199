package recording

import (
	"strconv"

	"github.com/resilience4go/resilience4go/policy/observe"
)

var resultNames = [...]string{
	observe.ResultAdmitted:  "admitted",
	observe.ResultRejected:  "rejected",
	observe.ResultSucceeded: "succeeded",
	observe.ResultFailed:    "failed",
	observe.ResultIgnored:   "ignored",
	observe.ResultTimedOut:  "timed_out",
	observe.ResultAborted:   "aborted",
}

// ResultName returns the name metrics spell r with, e.g. "admitted" or "timed_out" (the
// outcome values resilienceotel documents); "Result(n)" for a value that is no result.
func ResultName(r observe.Result) string {
	if int(r) < len(resultNames) && r > 0 {
		return resultNames[r]
	}
	return "Result(" + strconv.Itoa(int(r)) + ")"
}
