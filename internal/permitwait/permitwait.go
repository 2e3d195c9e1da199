// Package permitwait gives the client adapters (resiliencehttp, resiliencegrpc) the
// composition spec that makes a composition's retry wait, after an attempt that the
// composition's own rate limiter refused, until that limiter's next permit, whatever the
// retry's waitForPermit setting says (a configuration key or a Reload included), for that
// composition only. Users set the same per retry with retry.WaitForPermit(true) or the key
// retry.waitForPermit; only the adapters need it for a retry the user configured.
package permitwait

// Spec returns that spec, a resilience.Spec: it is no layer (it takes no place in the
// order, may be given twice), and a composition without a retry or without a rate limiter
// ignores it. Package resilience sets it in its init, so it is set wherever
// resilience.Spec is known.
var Spec func() any
