// Package resilienceslog logs resilience4go's events with log/slog. Each event
// (policy.Event) is one record, at the level its kind was registered with; its message is
// the kind's name and its one attribute, "event", groups the event's fields (see Listener
// for what a record holds, and Level for each kind's level and how to change it).
//
// Two ways to attach it to a registry. Listener makes one of its event listeners, which
// can sit beside another observer, such as the one that exports OpenTelemetry metrics;
// its records carry context.Background():
//
//	reg, err := resilience.NewRegistry(resilience.WithEventListener(resilienceslog.Listener(logger)))
//
// Observer makes the registry's one observer, whose records carry the context of the
// call that caused each event (so a handler can add its trace and span ids); use it
// when logs are all the observation there is:
//
//	reg, err := resilience.NewRegistry(resilience.WithObserver(resilienceslog.Observer(logger)))
//
// Use one or the other on a registry: with both, each event is logged twice.
package resilienceslog
