package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"

	// Package resilience imports every built-in policy, whose packages register their
	// descriptors and event kinds in init.
	_ "github.com/resilience4go/resilience4go/resilience"
)

// modulePath is the import path of the module whose packages are documented.
const modulePath = "github.com/resilience4go/resilience4go"

// policyDoc is what the site shows of one policy, the value of its name (the last
// element of its package's path) in docs/data/policies.json.
type policyDoc struct {
	Layer      string      `json:"layer"`      // the configuration segment
	Package    string      `json:"package"`    // the import path
	Attributes []attribute `json:"attributes"` // in the table's order
	Events     []event     `json:"events"`     // in the order they are registered
	Metrics    []metric    `json:"metrics"`    // the instruments
	Errors     []sentinel  `json:"errors"`     // the exported error variables
	Codes      []codeRef   `json:"codes"`      // the R4C codes its sources name
}

// attribute is one configuration attribute.
type attribute struct {
	Name    string   `json:"name"`             // e.g. "maxWait"
	Key     string   `json:"key"`              // "<layer>.<attr>", after defaults., configs.<name>. or instances.<id>.
	Option  string   `json:"option"`           // the option function, e.g. "MaxWait"
	Default string   `json:"default"`          // as a configuration would spell it; "none" when it has none
	Values  []string `json:"values,omitempty"` // an enumeration's spellings
}

// event is one kind of event.
type event struct {
	Name      string   `json:"name"`            // as its kind was registered
	Layer     string   `json:"layer"`           // "" for a kind any layer publishes
	Level     string   `json:"level"`           // the slog level, or "by event" when it depends on the event
	SpanEvent string   `json:"span_event"`      // "" when it makes none
	Attrs     []string `json:"attrs,omitempty"` // the keys of its own attributes
	Doc       string   `json:"doc"`             // its variable's doc comment, without the name
}

// metric is one instrument.
type metric struct {
	Name        string   `json:"name"`
	Kind        string   `json:"kind"`
	Unit        string   `json:"unit"`
	Description string   `json:"description"`
	SeriesKey   string   `json:"series_key,omitempty"`
	Series      []string `json:"series,omitempty"`
}

// sentinel is an exported error variable.
type sentinel struct {
	Name string `json:"name"` // e.g. "ErrFull"
	Doc  string `json:"doc"`  // its doc comment
}

// codeRef is an R4C code a policy's sources name, with its meaning.
type codeRef struct {
	Code    string `json:"code"`
	Meaning string `json:"meaning"`
}

// policies returns the documentation of every registered policy kind, by name.
func policies(root string, codes []code) (map[string]policyDoc, error) {
	out := map[string]policyDoc{}
	events := eventKinds()
	registry, err := readPackage(root, "resilience") // the kinds of event a registry publishes about any layer
	if err != nil {
		return nil, err
	}
	for _, k := range contract.All() {
		name := path.Base(k.Package())
		dir := strings.TrimPrefix(strings.TrimPrefix(k.Package(), modulePath), "/")
		attrs, err := attributes(k)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		src, err := readPackage(root, dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		d := policyDoc{Layer: string(k.Layer()), Package: k.Package(), Attributes: attrs,
			Metrics: metrics(k.Measures()), Errors: src.sentinels(), Codes: src.codesNamed(codes)}
		for _, e := range events {
			if e.Layer == string(k.Layer()) || e.Layer == "" {
				e.Doc = src.eventDoc(e.Name)
				if e.Doc == "" && e.Layer != "" { // registered by a package below the policy's, e.g. its backend contract
					if e.Doc, err = subpackageEventDoc(root, dir, e.Name); err != nil {
						return nil, fmt.Errorf("%s: %w", name, err)
					}
				}
				switch {
				case e.Layer != "":
				case e.Name == policy.ConfigChanged.String():
					e.Doc = configChangedDoc
				default:
					e.Doc = registry.eventDoc(e.Name)
				}
				d.Events = append(d.Events, e)
			}
		}
		out[name] = d
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no policy kind is registered")
	}
	return out, nil
}

// subpackageEventDoc returns the doc of the variable that registers the event kind name
// in a package below dir (relative to root), or "" when none does.
func subpackageEventDoc(root, dir, name string) (string, error) {
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if !e.IsDir() || skipDirs[e.Name()] {
			continue
		}
		sub, err := readPackage(root, path.Join(dir, e.Name()))
		if err != nil {
			return "", err
		}
		if doc := sub.eventDoc(name); doc != "" {
			return doc, nil
		}
	}
	return "", nil
}

// configChangedDoc is what the event any layer publishes means.
const configChangedDoc = "a registry's Reload changed the configuration of a running instance of this layer (see the guide on configuration and live reload)."

// eventKinds returns every registered kind of event, in the order they were registered.
func eventKinds() []event {
	var out []event
	for k := policy.EventKind(1); ; k++ {
		info := k.Info()
		if info.Name == "" {
			return out
		}
		level := info.Level.String()
		if info.LevelOf != nil {
			level = "by event"
		}
		e := event{Name: info.Name, Layer: string(info.Layer), Level: level, SpanEvent: info.SpanEvent}
		for _, a := range info.Attrs {
			e.Attrs = append(e.Attrs, a.Key)
		}
		out = append(out, e)
	}
}

// metrics returns the instruments m declares; none for nil.
func metrics(m *contract.Metrics) []metric {
	if m == nil {
		return nil
	}
	kinds := map[contract.InstrumentKind]string{contract.Counter: "counter", contract.UpDown: "up-down counter",
		contract.Gauge: "gauge", contract.Histogram: "histogram"}
	out := make([]metric, 0, len(m.Instruments))
	for _, in := range m.Instruments {
		out = append(out, metric{Name: in.Name, Kind: kinds[in.Kind], Unit: in.Unit,
			Description: in.Description, SeriesKey: in.Key, Series: in.Values})
	}
	return out
}

// encodeJSON returns v as indented JSON, with a final newline (map keys sorted).
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
