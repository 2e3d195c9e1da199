package contract

import "log/slog"

// AttrShadow is the key of the attribute that marks a rejection event of an instance in
// shadow mode: the call it names was let through, and only would have been rejected.
const AttrShadow = "shadow"

// ShadowEvent is the event attribute shadow=true, which the rejection events of an
// instance in shadow mode carry.
var ShadowEvent = slog.Bool(AttrShadow, true)

// ShadowAttr is the attribute "shadow" of a layer that has a shadow mode: a boolean, as
// BoolAttr, stored in the field on; default false.
func ShadowAttr[S any](on func(*S) *bool) Attr[S] { return BoolAttr(AttrShadow, on) }

// ShadowInstrument is the Counter prefix+"shadow_rejections", described by description,
// of the calls an instance in shadow mode let through that it would have rejected, read
// from its state, of type S, with of.
func ShadowInstrument[S any](prefix, description string, of func(S) uint64) Instrument {
	return Instrument{Name: prefix + "shadow_rejections", Unit: "{call}", Kind: Counter,
		Description: description, Read: func(state any, _ int) (float64, bool) {
			s, ok := state.(S)
			if !ok {
				return 0, false
			}
			return float64(of(s)), true
		}}
}
